"""Evaluation backends of the generated regressors: the numpy module (always) and the optional C library.

A call of fewer than :data:`C_MIN_SAMPLES` samples runs the numpy code, a larger one the library built for this
processor (``model_c-native-<cpu>.so``), else the portable one (``model_c-portable-<machine>.so``), each compiled
from the cache entry's ``model_c.c`` when it is first needed and checked against its record (robid.symbolic.cbuild,
robid.symbolic.cache.compiled_library). Compiling takes 1-10 s, which a model that is only checked or exported on
a few short batches never wins back (the numpy code takes 0.5 ms for 100 samples of a 6-axis robot, 1 ms for 1000;
docs/model.md). A caller that evaluates the regressor many times on small batches -- the excitation optimiser,
the closed-loop integrator -- asks for the library on every call (``BaseParameters.for_many_calls``). The choice
depends on the call and its caller alone, never on what ran before or on the cache, so the same call gives the
same numbers in any process (the two backends differ in rounding). ``ROBID_BACKEND=numpy`` forces the numpy code
for every call, ``ROBID_BACKEND=c`` the library for every call, ``ROBID_BACKEND=portable`` the portable library
for every call. A library that does not load falls back to the next with a note, the last to numpy. Both
backends take (N, dof) arrays and return (N, dof, columns).
"""

from __future__ import annotations

import ctypes
import logging
import math
import os
from pathlib import Path

import numpy as np

_log = logging.getLogger(__name__)

#: samples from which a call runs the C library (module docstring)
C_MIN_SAMPLES = 1000


class CRegressors:
    """ctypes wrapper of a compiled library: ``regressor`` and ``base_regressor`` (robid.symbolic.ccode
    ``c_function``: batched over samples, every output entry written). ``path`` is the library loaded,
    ``native`` whether it was built for this processor."""

    def __init__(self, path: Path, dof: int, n_standard: int, n_base: int, native: bool = False):
        lib = ctypes.CDLL(str(path))
        self._fns = {}
        for name, width in (("regressor", n_standard), ("base_regressor", n_base)):
            fn = getattr(lib, name)
            # raw addresses: the arrays are checked here (float64, C-contiguous) rather than by ctypes' ndpointer,
            # whose conversion was most of the cost of a call of a few samples (the closed-loop integrator's)
            fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_long, ctypes.c_void_p]
            fn.restype = None
            self._fns[name] = (fn, width)
        self._lib = lib
        self.dof = dof
        self.path = Path(path)
        self.native = native

    def evaluate(self, name: str, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, out=None) -> np.ndarray:
        """``out``: an optional C-contiguous float64 (N, dof, columns) buffer to reuse (no new allocation; one
        aligned to 64 bytes, as returned here, is written fastest)."""
        fn, width = self._fns[name]
        q, qd, qdd = (np.ascontiguousarray(a, dtype=np.float64) for a in (q, qd, qdd))
        if not (q.ndim == 2 and q.shape[1] == self.dof and q.shape == qd.shape == qdd.shape):
            raise ValueError(f"{self.path.name}: states must be (N, {self.dof}) each, got {q.shape}, {qd.shape}, "
                             f"{qdd.shape}")
        shape = (q.shape[0], self.dof, width)
        usable = (
            out is not None
            and out.shape == shape
            and out.dtype == np.float64
            and out.flags["C_CONTIGUOUS"]
            and out.flags["ALIGNED"]
        )
        y = out if usable else aligned_empty(shape)  # the C code writes every entry
        fn(q.ctypes.data, qd.ctypes.data, qdd.ctypes.data, q.shape[0], y.ctypes.data)
        if out is not None and not usable:
            out[...] = y
            return out
        return y


def aligned_empty(shape, alignment: int = 64) -> np.ndarray:
    """An uninitialised C-contiguous float64 array whose first entry is ``alignment``-byte aligned: the batched
    library writes each group of ROBID_W entries of a row as one aligned vector (non-temporal for large outputs)
    when the output is aligned to its vectors (64 bytes covers 8 lanes), through a buffer otherwise."""
    size = math.prod(shape)
    raw = np.empty(size + alignment // 8, dtype=np.float64)
    skip = (-raw.ctypes.data % alignment) // 8
    return raw[skip : skip + size].reshape(shape)


class CompiledBackend:
    """The C library of a cache entry, loaded -- and built if it is not there yet -- at the first call that needs
    it (module docstring): :meth:`for_samples` for a call, :meth:`library` to load it now. ``choice`` is
    ``ROBID_BACKEND`` ("", "c" or "portable")."""

    def __init__(self, folder: Path, dof: int, n_standard: int, n_base: int, choice: str = ""):
        self._entry = (Path(folder), dof, n_standard, n_base)
        self._choice = choice
        self._library: CRegressors | None = None
        self._loaded = False

    def library(self) -> CRegressors | None:
        """The loaded library (built on first use), or None: the numpy code (no compiler, a failed build)."""
        if not self._loaded:
            self._library = _load_library(*self._entry, portable_only=self._choice == "portable")
            self._loaded = True
        return self._library

    def for_samples(self, n: int, many_calls: bool = False) -> CRegressors | None:
        """The library for a call of ``n`` samples (from a caller that makes many calls), or None: that call runs
        the numpy code."""
        return self.library() if self._choice or many_calls or n >= C_MIN_SAMPLES else None


def compiled_backend(folder: Path, dof: int, n_standard: int, n_base: int) -> CompiledBackend | None:
    """The C backend of the cache entry ``folder``, nothing built or loaded yet; None: the numpy code for every
    call (``ROBID_BACKEND=numpy``, or an entry without C source)."""
    choice = os.environ.get("ROBID_BACKEND", "").strip().lower()
    if choice == "numpy" or not (Path(folder) / "model_c.c").exists():
        return None
    return CompiledBackend(folder, dof, n_standard, n_base, choice if choice in ("c", "portable") else "")


def _load_library(folder: Path, dof: int, n_standard: int, n_base: int, portable_only: bool) -> CRegressors | None:
    """The compiled regressors of the valid cache entry ``folder``: this processor's library, else (or with
    ``portable_only``) the portable one, each built when first reached; None: the numpy code."""
    from robid.symbolic.cache import compiled_library

    for kind in ("portable",) if portable_only else ("native", "portable"):
        path = compiled_library(folder, folder.name, kind)  # the portable one is built only when reached
        if path is None:
            continue
        try:
            return CRegressors(path, dof, n_standard, n_base, native=kind == "native")
        except (OSError, AttributeError) as e:  # not loadable here, or a function missing
            following = "the portable library" if kind == "native" and not portable_only else "the numpy code"
            _log.warning(f"{path}: C library not usable ({e}); using {following}")
    return None
