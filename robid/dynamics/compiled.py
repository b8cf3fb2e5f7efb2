"""Evaluation backends of the generated regressors: the numpy module (always) and the optional C library.

``ROBID_BACKEND=numpy`` forces the numpy code; otherwise the C library of the cache entry is used when it
exists (robid.symbolic.ccode; its content hash is checked with the entry's, robid.symbolic.cache) and loads;
a library that does not load falls back to numpy with a note. Both take (N, dof) arrays and return (N, dof, columns).
"""

from __future__ import annotations

import ctypes
import logging
import os
from pathlib import Path

import numpy as np

_log = logging.getLogger(__name__)

_PTR = np.ctypeslib.ndpointer(dtype=np.float64, flags="C_CONTIGUOUS")


class CRegressors:
    """ctypes wrapper of ``model_c.so``: ``regressor`` and ``base_regressor``."""

    def __init__(self, path: Path, dof: int, n_standard: int, n_base: int):
        lib = ctypes.CDLL(str(path))
        self._fns = {}
        for name, width in (("regressor", n_standard), ("base_regressor", n_base)):
            fn = getattr(lib, name)
            fn.argtypes = [_PTR, _PTR, _PTR, ctypes.c_long, _PTR]
            fn.restype = None
            self._fns[name] = (fn, width)
        self._lib = lib
        self.dof = dof

    def evaluate(self, name: str, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, out=None) -> np.ndarray:
        """``out``: an optional C-contiguous float64 (N, dof, columns) buffer to reuse (no new allocation)."""
        fn, width = self._fns[name]
        q, qd, qdd = (np.ascontiguousarray(a, dtype=np.float64) for a in (q, qd, qdd))
        shape = (q.shape[0], self.dof, width)
        usable = (
            out is not None and out.shape == shape and out.dtype == np.float64 and out.flags["C_CONTIGUOUS"]
        )
        y = out if usable else np.empty(shape)  # the C code writes every entry
        fn(q, qd, qdd, q.shape[0], y)
        if out is not None and not usable:
            out[...] = y
            return out
        return y


def load_c_backend(folder: Path, dof: int, n_standard: int, n_base: int) -> CRegressors | None:
    path = folder / "model_c.so"
    if os.environ.get("ROBID_BACKEND", "").lower() == "numpy" or not path.exists():
        return None
    try:
        return CRegressors(path, dof, n_standard, n_base)
    except (OSError, AttributeError) as e:  # not loadable here, or a function missing: the numpy code serves

        _log.warning(f"{path}: C library not usable ({e}); using the numpy code")
        return None
