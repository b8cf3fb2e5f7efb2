"""The virtual robot's single-state rigid-body dynamics compiled: ``scalar_chain.c`` next to this module is
:class:`robid.simulation.single_state.ScalarChain` written in C, the same operations in the same order.

The integrator evaluates M(q) and h(q, qd) tens of thousands of times per simulated run; in plain Python that was
the largest single cost of robid's test suite (a third of the virtual robot's right-hand side, py-spy 2026-11-29).
Built with IEEE double arithmetic and no fused multiply-adds (``-ffp-contract=off``), the C gives the Python
chain's numbers to the bit (tests/test_simulation_compiled_chain.py, on random chains): a simulated run is the
same with or without a compiler.

The library is compiled on first use into the cache folder (``$ROBID_CACHE_DIR/simulation/``, named by the hash
of the source, the flags and the architecture) with a record of its sha256 written after it, under the cache's
lock (robid.symbolic.cache_lock), and loaded only when it matches the record. No compiler, a failed build, a
read-only cache or ``ROBID_BACKEND=numpy``: the Python chain serves (same numbers, slower).
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import json
import logging
import os
import platform
from pathlib import Path

import numpy as np

from robid.errors import RobidInputError

_log = logging.getLogger(__name__)

SOURCE = Path(__file__).with_name("scalar_chain.c")
#: IEEE arithmetic, no contraction into fused multiply-adds: the Python chain's rounding, operation for operation
FLAGS = ("-O2", "-ffp-contract=off", "-fPIC", "-shared")
#: doubles per joint in the packed parameters (scalar_chain.c)
FIELDS = 47
_DOUBLE_P = ctypes.POINTER(ctypes.c_double)


def pack(items) -> tuple[np.ndarray, np.ndarray]:
    """(revolute flags (n,) int32, parameters (n, FIELDS)) of ScalarChain.items, in scalar_chain.c's layout."""
    rev = np.array([1 if it[0] else 0 for it in items], dtype=np.int32)
    par = np.array([[*u, off, *rc, *rk, *rk2, *pc, *rcu, m, *h, *io]
                    for _, u, off, rc, rk, rk2, pc, rcu, m, h, io in items], dtype=float).reshape(len(items), FIELDS)
    return rev, np.ascontiguousarray(par)


class CompiledChain:
    """M(q) and h = C(q, qd) qd + g(q) of ONE state through the compiled chain (module docstring); the interface of
    ScalarChain.mass_matrix_and_bias, with numpy arrays out."""

    def __init__(self, function, items, minus_g):
        self._function = function
        self.n = len(items)
        self._rev, self._par = pack(items)
        self._minus_g = np.array(minus_g, dtype=float)
        self._work = np.empty(18 * self.n)
        self._state = np.empty(2 * self.n)
        n = self.n
        self._fixed = (ctypes.c_int(n), self._rev.ctypes.data, self._par.ctypes.data, self._minus_g.ctypes.data,
                       self._state.ctypes.data, self._state.ctypes.data + 8 * n)

    def mass_matrix_and_bias(self, q, qd) -> tuple[np.ndarray, np.ndarray]:
        n = self.n
        self._state[:n] = q
        self._state[n:] = qd
        mass, bias = np.empty((n, n)), np.empty(n)
        self._function(*self._fixed, mass.ctypes.data, bias.ctypes.data, self._work.ctypes.data)
        return mass, bias


def compiled_chain(items, minus_g) -> CompiledChain | None:
    """The compiled chain of ScalarChain ``items`` and gravity ``minus_g``, or None: the Python chain serves."""
    function = _library_function()
    return None if function is None else CompiledChain(function, items, minus_g)


@functools.lru_cache(maxsize=1)
def _library_function():
    """robid_chain_mass_matrix_and_bias of the library (built on first use), or None (module docstring)."""
    if os.environ.get("ROBID_BACKEND", "").strip().lower() == "numpy":
        return None
    try:
        path = _library_path()
    except (OSError, RobidInputError) as e:  # a read-only or full cache, a lock not obtained in time
        _log.info(f"virtual robot: no compiled chain ({e}); the Python chain serves")
        return None
    if path is None:
        return None
    try:
        function = ctypes.CDLL(str(path)).robid_chain_mass_matrix_and_bias
    except (OSError, AttributeError) as e:
        _log.warning(f"{path}: not usable ({e}); the virtual robot runs its Python chain")
        return None
    function.restype = None
    function.argtypes = [ctypes.c_int, *[ctypes.c_void_p] * 8]
    return function


def _library_path() -> Path | None:
    """The checked library, built under the cache lock when missing or not matching its record; None: no build."""
    from robid.symbolic import cbuild
    from robid.symbolic.cache_lock import cache_dir, entry_lock
    from robid.symbolic.cache_temporaries import remove_stale_temporaries, temporary_name

    source = SOURCE.read_bytes()
    tag = hashlib.sha256(source + repr((FLAGS, platform.machine())).encode()).hexdigest()[:16]
    folder = cache_dir() / "simulation"
    so, record = folder / f"scalar_chain-{tag}.so", folder / f"scalar_chain-{tag}.json"
    if _matches(so, record, cbuild.sha256):
        return so
    if cbuild.compiler() is None:
        return None
    with entry_lock(f"simulation-scalar_chain-{tag}"):
        if _matches(so, record, cbuild.sha256):  # built meanwhile by a process that held the lock
            return so
        folder.mkdir(parents=True, exist_ok=True)
        remove_stale_temporaries(folder)  # a killed build's files
        stem = temporary_name(f"scalar_chain-{tag}")
        tmp_c, tmp_so, tmp_record = folder / f"{stem}.c", folder / f"{stem}.so", folder / f"{stem}.json"
        try:
            tmp_c.write_bytes(source)
            if not cbuild.build(tmp_c, tmp_so, FLAGS):
                _log.info("virtual robot: the compiled chain did not build; the Python chain serves")
                return None
            tmp_record.write_text(json.dumps({"sha256": cbuild.sha256(tmp_so), "flags": list(FLAGS)}))
            os.replace(tmp_so, so)
            os.replace(tmp_record, record)  # the record last: a library without one is not loaded
        finally:
            for tmp in (tmp_c, tmp_so, tmp_record):
                tmp.unlink(missing_ok=True)
    return so


def _matches(so: Path, record: Path, sha256) -> bool:
    try:
        return json.loads(record.read_text()).get("sha256") == sha256(so)
    except (OSError, ValueError, AttributeError):
        return False
