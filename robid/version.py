"""robid's version (a leaf: the package's ``robid.__version__``, the report's footer, exported models and the
campaign's fingerprints read it without importing the package's public surface)."""

__version__ = "0.1.0"
