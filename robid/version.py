"""robid's version, a leaf every module may import (the package root loads its API lazily; importing it from
inside the library would close an import circle through it)."""

__version__ = "0.1.0"
