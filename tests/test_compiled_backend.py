"""The compiled backend (robid.symbolic.ccode, cbuild; robid.dynamics.compiled).

Every built-in robot, every program the C library provides (standard and base regressor): the batched library built
for this processor, the portable library (built on request; on three robots, PORTABLE_ROBOTS says why) and the plain
per-sample C loop compiled from the same file (``-DROBID_SCALAR_ONLY``) agree with the generated numpy code to
rounding. The numpy code evaluates sin/cos with libm and the program with numpy's arithmetic; the batched library
with its own vector sin/cos and vector arithmetic (and FMA contraction where the processor has it), so the
comparison is between independent evaluations of the same equations (the numpy code itself is checked against a
Lagrangian oracle in test_symbolic_core.py). States include the blocks' tail (n not a multiple of the vector width),
outputs large enough for the non-temporal stores, angles beyond the vector sin/cos range (libm lanes) and reused
buffers full of NaN (every entry is written), aligned to 64 bytes (rows stored straight into them when the row
length is a multiple of the vector width) and misaligned (through the buffer), and the 2- and 8-lane forms of the
generated code built on this processor (``-DROBID_W``).

The native library is keyed by the processor: another processor's library is never loaded, a library (native or
portable) that does not match its record is built again, ``ROBID_NATIVE=0`` and ``ROBID_BACKEND=portable`` select
the portable one, which is otherwise never compiled where the native one works.
"""

from __future__ import annotations

import ctypes
import math
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import robid
from robid.dynamics.compiled import C_MIN_SAMPLES, CRegressors, aligned_empty
from robid.errors import RobidInputError
from robid.symbolic import cbuild
from robid.symbolic.cache import compiled_library

ROBOTS = sorted(p.stem for p in (Path(robid.__file__).parent / "model" / "robots").glob("*.yaml"))
PROGRAMS = ("regressor", "base_regressor")
#: robots whose portable library (the compiler's default target: 2 lanes on x86-64) is also built and compared:
#: a 6-axis robot with drives and friction, the closed chain, an elastic robot. The portable library is the same
#: source as the native one built for another target; the per-robot content is checked on every robot by the
#: native and scalar forms, and the 2-lane form of the source by test_the_two_and_eight_lane_forms_... (each
#: portable build takes 2-7 s of the suite)
PORTABLE_ROBOTS = ("ur10e", "kr180_pa", "kr90_elastic")
STREAM_BYTES = 4 << 20  # ROBID_STREAM_BYTES of the generated prelude

needs_cc = pytest.mark.skipif(cbuild.compiler() is None, reason="no C compiler: the numpy backend is used")


def _states(n: int, dof: int, seed: int, far: bool = False):
    rng = np.random.default_rng(seed)
    q = rng.uniform(-math.pi, math.pi, (n, dof))
    qd = rng.uniform(-3.0, 3.0, (n, dof))
    qdd = rng.uniform(-10.0, 10.0, (n, dof))
    qd[rng.random((n, dof)) < 0.05] = 0.0  # sign(0) = 0 in every backend
    if far:  # some angles where the vector sin/cos hands over to libm (|q| > 1e5), and multiples of pi/2
        q[::3, 0] += 2e5 * math.pi
        q[1::7, -1] = math.pi / 2 * rng.integers(-8, 8, q[1::7, -1].shape)
    return q, qd, qdd


def _numpy(robot, program: str):
    return getattr(robot._module, program)


def _nan_buffers(shape):
    """Two NaN-filled outputs: one aligned to 64 bytes, one 8 bytes off (aligned to a double only)."""
    aligned = aligned_empty(shape)
    aligned.fill(np.nan)
    raw = np.full(int(np.prod(shape)) + 8, np.nan)
    skip = (-raw.ctypes.data % 64) // 8 + 1
    misaligned = raw[skip : skip + aligned.size].reshape(shape)
    assert aligned.ctypes.data % 64 == 0 and misaligned.ctypes.data % 32 == 8
    return {"aligned": aligned, "misaligned": misaligned}


def _agree(libraries, robot, label, n, states):
    """Every library, both programs, aligned and misaligned NaN-filled outputs, against the numpy code."""
    dof, widths = robot.dof, (len(robot.parameter_names), len(robot.base_parameters().names))
    for program, width in zip(PROGRAMS, widths, strict=True):
        expected = _numpy(robot, program)(*states)
        for lib_label, lib in libraries.items():
            for kind, out in _nan_buffers((n, dof, width)).items():
                got = lib.evaluate(program, *states, out=out)
                assert got is out
                try:
                    _close(got, expected)
                except AssertionError as e:
                    raise AssertionError(f"{label} {program} {lib_label} n={n} {kind} output: {e}") from None


def _close(actual, expected):
    """Rounding: the entries are sums of products of O(1..100) magnitudes; 1e-13 relative to the entry, 1e-12
    absolute (a cancelling sum)."""
    np.testing.assert_allclose(actual, expected, rtol=1e-13, atol=1e-12)


@pytest.fixture(scope="module")
def built_in():
    """name -> loaded robot (derived once into the test run's cache)."""
    return {}


def _robot(built_in, name):
    if name not in built_in:
        r = robid.load_robot(name)
        r.base_parameters()
        built_in[name] = r
    return built_in[name]


def _scalar_library(folder: Path, tmp_path: Path) -> Path:
    so = tmp_path / "scalar.so"
    cc = cbuild.compiler()
    subprocess.run(
        [cc, *cbuild.PORTABLE_FLAGS, "-DROBID_SCALAR_ONLY", "-o", str(so), str(folder / "model_c.c"), "-lm"],
        check=True,
        capture_output=True,
    )
    return so


@needs_cc
@pytest.mark.parametrize("name", ROBOTS)
def test_every_compiled_form_agrees_with_the_numpy_code(built_in, name, tmp_path):
    robot = _robot(built_in, name)
    assert robot._c is not None, "a C compiler is present but the robot has no compiled backend"
    folder = robot._c.path.parent
    source = (folder / "model_c.c").read_text()
    for program in PROGRAMS:  # the batched form exists for every program (no silent scalar fallback)
        assert f"static void {program}_block(" in source
    assert robot._c.native == (cbuild.native_stem() is not None)
    dof, widths = robot.dof, (len(robot.parameter_names), len(robot.base_parameters().names))
    libraries = {"loaded": robot._c, "scalar": CRegressors(_scalar_library(folder, tmp_path), dof, *widths)}
    if name in PORTABLE_ROBOTS:
        libraries["portable"] = CRegressors(compiled_library(folder, folder.name, "portable"), dof, *widths)
    stream_n = STREAM_BYTES // (8 * dof * min(widths)) + 3  # the smaller program also streams
    for n, far in ((1, False), (7, True), (37, True), (stream_n, True)):
        _agree(libraries, robot, name, n, _states(n, dof, seed=n, far=far))


@needs_cc
@pytest.mark.parametrize("name", ["tx200_3axis", "zollo_2dof_elastic"])
def test_the_two_and_eight_lane_forms_agree_with_the_numpy_code(built_in, name, tmp_path):
    """The generated code for 2 lanes (SSE2) and 8 lanes (AVX-512) built on this processor (``-DROBID_W``): the
    transpose of 2 x 2 and 8 x 8 entries, rows of 132 and 56 entries (a multiple of 4 or of 8: stored straight
    into an aligned output) and of 81 and 26 (the last group of a row entry by entry, through the buffer)."""
    robot = _robot(built_in, name)
    folder = robot._c.path.parent
    dof, widths = robot.dof, (len(robot.parameter_names), len(robot.base_parameters().names))
    assert {dof * w for w in widths} == {"tx200_3axis": {132, 81}, "zollo_2dof_elastic": {56, 26}}[name]
    builds = {
        w: subprocess.Popen(
            [
                cbuild.compiler(),
                *cbuild.NATIVE_FLAGS,
                f"-DROBID_W={w}",
                "-Wno-psabi",
                "-o",
                str(tmp_path / f"w{w}.so"),
                str(folder / "model_c.c"),
                "-lm",
            ],
        )
        for w in (2, 8)
    }
    for w, build in builds.items():  # the two compilers run at once
        assert build.wait(timeout=900) == 0, f"-DROBID_W={w} does not compile"
    libraries = {f"{w} lanes": CRegressors(tmp_path / f"w{w}.so", dof, *widths) for w in builds}
    stream_n = STREAM_BYTES // (8 * dof * min(widths)) + 3
    for n, far in ((1, False), (7, True), (19, True), (stream_n, True)):
        _agree(libraries, robot, name, n, _states(n, dof, seed=n, far=far))


def test_aligned_outputs():
    for shape in ((1, 1, 1), (3, 6, 54), (1000, 2, 13)):
        a = aligned_empty(shape)
        assert a.shape == shape and a.dtype == np.float64 and a.flags["C_CONTIGUOUS"] and a.ctypes.data % 64 == 0


@needs_cc
@pytest.mark.parametrize("caller", ["any", "many calls"])
def test_the_public_regressors_use_the_library_for_large_calls_and_callers_that_make_many(built_in, caller):
    """A call of C_MIN_SAMPLES samples or more runs the library, a smaller one the numpy code, whatever ran before;
    a caller that makes many calls (for_many_calls: the optimiser, the integrator) runs the library on every call.
    Each result is the chosen backend's to the bit (the two differ in rounding, so the choice is visible)."""
    library = _robot(built_in, "puma560")._c
    robot = robid.load_robot("puma560")
    base = robot.base_parameters()
    publics = [(base.for_many_calls().regressor, "base_regressor")] if caller == "many calls" else [
        (robot.regressor, "regressor"), (base.regressor, "base_regressor")]
    for public, program in publics:
        for k, n in enumerate((C_MIN_SAMPLES - 1, C_MIN_SAMPLES, 1, 7, C_MIN_SAMPLES + 5, 2)):
            q, qd, qdd = _states(n, robot.dof, seed=k)
            chosen = "library" if caller == "many calls" or n >= C_MIN_SAMPLES else "numpy"
            expected = (library.evaluate(program, q, qd, qdd) if chosen == "library"
                        else _numpy(robot, program)(q, qd, qdd))
            got = public(q, qd, qdd)
            assert np.array_equal(got, expected), (program, k, n, chosen)
            _close(got, _numpy(robot, program)(q, qd, qdd))


@needs_cc
def test_a_model_is_derived_without_compiling_and_built_at_its_first_large_call(tmp_path, monkeypatch):
    """Deriving writes the C source only: a model evaluated on a few small batches never waits for the compiler
    (1-10 s); the first call of C_MIN_SAMPLES samples builds this processor's library, once."""
    monkeypatch.setenv("ROBID_CACHE_DIR", str(tmp_path))
    builds = []
    real_build = cbuild.build
    monkeypatch.setattr(cbuild, "build", lambda *a: builds.append(a) or real_build(*a))
    robot = robid.load_robot("do_2r_elastic", terms=("rigid",))
    q, qd, qdd = _states(C_MIN_SAMPLES - 1, robot.dof, seed=4)
    for _ in range(3):
        robot.regressor(q, qd, qdd), robot.base_parameters().regressor(q, qd, qdd)
    (folder,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert (folder / "model_c.c").exists() and not list(folder.glob("*.so")) and builds == []
    q, qd, qdd = _states(C_MIN_SAMPLES, robot.dof, seed=4)
    robot.regressor(q, qd, qdd)
    robot.base_parameters().regressor(q, qd, qdd)
    robid.load_robot("do_2r_elastic", terms=("rigid",)).regressor(q, qd, qdd)  # found: not built again
    assert len(builds) == 1 and len(list(folder.glob("*.so"))) == 1


def test_the_processor_identity_covers_every_feature_flag():
    info = "vendor_id : AuthenticAMD\ncpu family : 25\nmodel : 1\nmodel name : EPYC\nflags : sse2 avx2 fma avx\n"
    a = cbuild.identity_from(info, "/usr/bin/cc", "cc 12.2\nmore", "x86_64")
    assert a == cbuild.identity_from(info.replace("avx2 fma", "fma avx2"), "/usr/bin/cc", "cc 12.2", "x86_64")
    assert a != cbuild.identity_from(info.replace(" avx2", ""), "/usr/bin/cc", "cc 12.2", "x86_64")
    assert a != cbuild.identity_from(info, "/usr/bin/cc", "cc 13.1", "x86_64")
    assert a != cbuild.identity_from(info.replace("model : 1", "model : 17"), "/usr/bin/cc", "cc 12.2", "x86_64")
    assert cbuild.identity_from("processor : 0\n", "/usr/bin/cc", "cc", "x86_64") is None  # no flags: no native


@pytest.fixture
def private_entry(built_in, tmp_path, monkeypatch):
    """A copy of a small robot's cache entry, with this processor's library and without the portable one that
    test_every_compiled_form_agrees_with_the_numpy_code builds, in a cache of its own."""
    robot = _robot(built_in, "do_2r_elastic")
    if robot._c is None:
        pytest.skip("no C compiler")
    folder = robot._c.path.parent
    cache = tmp_path / "cache"
    shutil.copytree(folder, cache / folder.name, ignore=shutil.ignore_patterns(f"{cbuild.portable_stem()}.*"))
    monkeypatch.setenv("ROBID_CACHE_DIR", str(cache))
    return cache / folder.name


def _fresh_load(name="do_2r_elastic"):
    """The robot loaded anew, its library built if missing and loaded by a call of C_MIN_SAMPLES samples."""
    r = robid.load_robot(name)
    r.base_parameters()
    q, qd, qdd = _states(C_MIN_SAMPLES, r.dof, seed=5)
    _close(r.regressor(q, qd, qdd), r._module.regressor(q, qd, qdd))
    return r


@needs_cc
def test_another_processors_library_is_never_loaded(private_entry, monkeypatch):
    if cbuild.native_stem() is None:
        pytest.skip("no native build on this machine")
    own = cbuild.native_stem()
    monkeypatch.setattr(cbuild, "cpu_key", lambda: "0123456789abcdef")  # as seen from another processor
    r = _fresh_load()
    assert r._c.native and r._c.path.name == "model_c-native-0123456789abcdef.so"
    assert (private_entry / f"{own}.so").exists()  # the first processor's library is left alone
    assert cbuild.checked_native(private_entry)[0] == r._c.path


@needs_cc
@pytest.mark.parametrize("kind", ["native", "portable"])
def test_a_library_that_does_not_match_its_record_is_built_again(private_entry, monkeypatch, caplog, kind):
    """A library built on first use (not among the entry's hashed files) is checked against its own record; the
    entry's source ``model_c.c`` and the library built with the entry are hashed with it (test_cache_safety.py)."""
    if kind == "native" and cbuild.native_stem() is None:
        pytest.skip("no native build on this machine")
    monkeypatch.setattr(cbuild, "cpu_key", lambda: "fedcba9876543210")
    if kind == "portable":
        monkeypatch.setenv("ROBID_BACKEND", "portable")
    name = cbuild.library_stem(kind)
    _fresh_load()  # builds it
    so = private_entry / f"{name}.so"
    data = bytearray(so.read_bytes())
    data[len(data) // 2] ^= 0xFF
    (private_entry / "changed").write_bytes(bytes(data))
    (private_entry / "changed").replace(so)  # a new file: the library loaded in this process stays mapped intact
    assert cbuild.checked_library(private_entry, kind)[1] == f"{name}.so does not match the hash in {name}.json"
    r = _fresh_load()
    assert f"{kind} library {name}.so does not match the hash in {name}.json: building it again" in caplog.text
    assert r._c.native == (kind == "native") and cbuild.checked_library(private_entry, kind)[0] == r._c.path


@needs_cc
@pytest.mark.parametrize("env", [("ROBID_NATIVE", "0"), ("ROBID_BACKEND", "portable")])
def test_the_portable_library_on_request(private_entry, monkeypatch, env):
    monkeypatch.setenv(*env)
    r = _fresh_load()
    assert not r._c.native and r._c.path.name == f"{cbuild.portable_stem()}.so"


@needs_cc
def test_the_portable_library_is_not_compiled_where_the_native_one_works(private_entry, monkeypatch):
    """The portable library is built only when the native one cannot be had: a load on a processor with a native
    library compiles nothing else; one where the native build fails falls back to a portable library built then."""
    if cbuild.native_stem() is None:
        pytest.skip("no native build on this machine")
    monkeypatch.setattr(cbuild, "cpu_key", lambda: "00112233445566aa")  # a processor without a library yet
    r = _fresh_load()
    assert r._c.native
    assert sorted(p.name for p in private_entry.glob("*portable*")) == []
    real_build = cbuild.build

    def native_fails(c_path, so_path, flags):
        return False if "-march=native" in flags else real_build(c_path, so_path, flags)

    monkeypatch.setattr(cbuild, "cpu_key", lambda: "00112233445566bb")  # another processor, whose build fails
    monkeypatch.setattr(cbuild, "build", native_fails)
    r = _fresh_load()
    assert not r._c.native and r._c.path.name == f"{cbuild.portable_stem()}.so"
    assert cbuild.checked_library(private_entry, "portable")[0] == r._c.path


@needs_cc
def test_the_numpy_code_on_request(private_entry, monkeypatch):
    monkeypatch.setenv("ROBID_BACKEND", "numpy")
    assert _fresh_load()._c is None


def test_vector_sine_and_cosine_are_within_an_ulp(tmp_path):
    """The prelude's robid_vsincos against mpmath (120-bit) on |x| < 7 and next to multiples of pi/2: at most 1 ulp
    (fdlibm's kernels), libm beyond 1e5, NaN for non-finite angles."""
    if cbuild.compiler() is None:
        pytest.skip("no C compiler")
    mpmath = pytest.importorskip("mpmath")
    from robid.symbolic.ccode_prelude import PRELUDE as _PRELUDE

    src = tmp_path / "sc.c"
    src.write_text(
        _PRELUDE
        + "void sc(const double *x, long n, double *s, double *c) {\n"
        + "    for (long k = 0; k + ROBID_W <= n; k += ROBID_W) {\n"
        + "        robid_sc r = robid_vsincos(robid_load(x + k, 1, 0));\n"
        + "        for (int l = 0; l < ROBID_W; ++l) { s[k + l] = r.s[l]; c[k + l] = r.c[l]; }\n"
        + "    }\n}\n"
    )
    rng = np.random.default_rng(0)
    near = np.arange(-40, 41) * (math.pi / 2)
    x = np.concatenate([rng.uniform(-7, 7, 4000), near, np.nextafter(near, np.inf), rng.uniform(-1e-8, 1e-8, 40)])
    special = np.array([0.0, -0.0, 2e5, -3e7, np.inf, -np.inf, np.nan, 5e-324])
    for flags in (cbuild.PORTABLE_FLAGS, cbuild.NATIVE_FLAGS):
        so = tmp_path / "sc.so"
        subprocess.run([cbuild.compiler(), *flags, "-o", str(so), str(src), "-lm"], check=True, capture_output=True)
        lib = ctypes.CDLL(str(so))
        ptr = np.ctypeslib.ndpointer(dtype=np.float64, flags="C_CONTIGUOUS")
        lib.sc.argtypes = [ptr, ctypes.c_long, ptr, ptr]
        xs = np.concatenate([x, special])
        xs = np.concatenate([xs, np.zeros(-len(xs) % 8)])
        s, c = np.empty_like(xs), np.empty_like(xs)
        lib.sc(xs, len(xs), s, c)
        mpmath.mp.prec = 120
        for k in range(len(x)):
            ref_s, ref_c = float(mpmath.sin(mpmath.mpf(x[k]))), float(mpmath.cos(mpmath.mpf(x[k])))
            assert abs(s[k] - ref_s) <= np.spacing(abs(ref_s)), (flags, x[k], s[k], ref_s)
            assert abs(c[k] - ref_c) <= np.spacing(abs(ref_c)), (flags, x[k], c[k], ref_c)
        tail = slice(len(x), len(x) + len(special))
        finite = np.isfinite(special)
        np.testing.assert_array_equal(s[tail][finite], np.sin(special[finite]))  # libm lanes, and exact 0 / tiny
        np.testing.assert_array_equal(c[tail][finite], np.cos(special[finite]))
        assert np.isnan(s[tail][~finite]).all() and np.isnan(c[tail][~finite]).all()
        so.unlink()


@pytest.mark.parametrize("name", ["ur10e", "kr_heavy", "kr180_pa", "do_2r_elastic"])
def test_the_torques_for_many_calls_are_the_inverse_dynamics(name):
    """Robot.inverse_dynamics_for_many_calls (the design's torque limits): the base regressor times the nominal base
    values equals the generated inverse dynamics (an independent program: the recursion with the nominal values)
    to rounding -- with a compensator, on a closed chain, and through the inverse dynamics in the elastic layout."""
    robot = robid.load_robot(name, terms=("rigid", "rotor", "viscous", "coulomb", "stiffness", "damping")
                             if name == "do_2r_elastic" else None)
    for n in (1, 40, C_MIN_SAMPLES + 3):
        q, qd, qdd = _states(n, robot.dof, seed=n)
        if robot.motor_joints:
            with pytest.raises(RobidInputError):  # the elastic layout needs motor states: the same refusal
                robot.inverse_dynamics(q, qd, qdd)
            with pytest.raises(RobidInputError):
                robot.inverse_dynamics_for_many_calls(q, qd, qdd)
            continue
        expected = robot.inverse_dynamics(q, qd, qdd)
        got = robot.inverse_dynamics_for_many_calls(q, qd, qdd)
        assert got.shape == expected.shape == (n, robot.dof)
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12 * np.abs(expected).max())
