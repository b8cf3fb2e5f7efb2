"""A cache safe to share (robid.symbolic.cache): concurrent processes derive a new robot once, the others wait and
load it; every entry's content hashes are checked at load, and a corrupt entry is derived again with a note,
never a traceback. Torques are checked against the hand-written Lagrangian closed form of the planar 2R arm."""

import errno
import json
import logging
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from oracles.closed_forms import PLANAR_2R, planar_2r_torque

import robid
from robid.symbolic import cache, cache_lock

TERMS = ("rigid",)
WAITING = "waiting for another process deriving cache entry"

# One process loading the robot; prints whether it derived, how long the load took and the torques at seeded
# states. With ready/go files it starts only when the test says go (all processes at once), and holds the lock
# HOLD_S s longer while it derives, so that the others certainly arrive while it does.
LOAD = """
import json, logging, os, sys, time
from pathlib import Path

logging.basicConfig(level=logging.INFO, format="robid: %(message)s", stream=sys.stderr)
import numpy as np

import robid
from robid.symbolic import derive

HOLD = float(os.environ.get("HOLD_S", "0"))
derived = []
_derive = derive._derive_and_write


def counted(*args):
    derived.append(time.perf_counter())
    time.sleep(HOLD)
    return _derive(*args)


derive._derive_and_write = counted
robot_file, *sync = sys.argv[1:]
if sync:
    Path(sync[0]).touch()
    while not Path(sync[1]).exists():
        time.sleep(0.002)
t0 = time.perf_counter()
robot = robid.load_robot(robot_file, terms=("rigid",))
rng = np.random.default_rng(0)
q, qd, qdd = (rng.uniform(-3, 3, (20, 2)) for _ in range(3))
tau = robot.inverse_dynamics(q, qd, qdd)
y = robot.regressor(q, qd, qdd)
print(json.dumps({"derived": len(derived), "seconds": time.perf_counter() - t0, "tau": tau.tolist(),
                  "y_tau": (y @ robot.parameters).tolist(), "c": robot._backend is not None}))
"""


def seeded_states():
    rng = np.random.default_rng(0)
    return tuple(rng.uniform(-3, 3, (20, 2)) for _ in range(3))


def closed_form():
    return planar_2r_torque(*seeded_states())


def env_for(cache_dir: Path, **extra) -> dict:
    env = dict(os.environ, ROBID_CACHE_DIR=str(cache_dir), OPENBLAS_NUM_THREADS="1")
    env.update(extra)
    return env


def run_load(robot_file: Path, cache_dir: Path, **extra) -> tuple[dict, str]:
    out = subprocess.run(
        [sys.executable, "-c", LOAD, str(robot_file)],
        env=env_for(cache_dir, **extra),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    return json.loads(out.stdout), out.stderr


def assert_correct(result: dict) -> None:
    ref = closed_form()
    for name in ("tau", "y_tau"):
        assert np.abs(np.array(result[name]) - ref).max() <= 1e-9 * np.abs(ref).max()


def only_the_entry(cache_dir: Path, key: str) -> None:
    """No lock file, no temporary or moved-aside folder left behind; the entry itself valid."""
    assert sorted(p.name for p in cache_dir.iterdir()) == [key]
    meta, problem = cache.check_entry(cache_dir / key)
    assert problem is None and meta is not None


@pytest.fixture(scope="module")
def robot_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("robot") / "planar2r.yaml"
    path.write_text(PLANAR_2R)
    return path


@pytest.fixture(scope="module")
def key(robot_file) -> str:
    return cache.model_key(robid.load_robot(robot_file).model, TERMS)


@pytest.fixture(scope="module")
def template(tmp_path_factory, robot_file, key) -> Path:
    """A cache holding the robot's entry, derived once for this module; tests corrupt copies of it."""
    cache_dir = tmp_path_factory.mktemp("template") / "cache"
    result, _ = run_load(robot_file, cache_dir)
    assert result["derived"] == 1
    assert_correct(result)
    only_the_entry(cache_dir, key)
    return cache_dir


def copy_of(template: Path, tmp_path: Path) -> Path:
    cache_dir = tmp_path / "cache"
    shutil.copytree(template, cache_dir)
    return cache_dir


# ---- one derivation across processes --------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["flock", "file"])
def test_three_processes_derive_once_and_get_the_same_model(tmp_path, robot_file, key, mode):
    cache_dir = tmp_path / "cache"
    go = tmp_path / "go"
    ready = [tmp_path / f"ready{i}" for i in range(3)]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", LOAD, str(robot_file), str(r), str(go)],
            env=env_for(cache_dir, ROBID_CACHE_LOCK=mode, HOLD_S="1.0"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for r in ready
    ]
    try:
        deadline = time.monotonic() + 120
        while not all(r.exists() for r in ready) and time.monotonic() < deadline:
            time.sleep(0.01)
        go.touch()
        outputs = [p.communicate(timeout=300) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    for p, (_, err) in zip(procs, outputs, strict=True):
        assert p.returncode == 0, err
        assert "Traceback" not in err
    results = [json.loads(out) for out, _ in outputs]
    assert sum(r["derived"] for r in results) == 1
    # the deriver never waits; each of the others prints one line while it waits, then loads what was written
    waits = sorted((r["derived"], err.count(WAITING)) for r, (_, err) in zip(results, outputs, strict=True))
    assert waits == [(0, 1), (0, 1), (1, 0)]
    deriver = next(r for r in results if r["derived"])
    assert all(r["tau"] == deriver["tau"] and r["y_tau"] == deriver["y_tau"] for r in results)
    assert_correct(deriver)
    only_the_entry(cache_dir, key)


def test_a_lock_held_too_long_is_a_clear_error(tmp_path, robot_file, key, monkeypatch):
    cache_dir = tmp_path / "cache"
    monkeypatch.setenv("ROBID_CACHE_DIR", str(cache_dir))
    with cache.entry_lock(key):
        out = subprocess.run(
            [sys.executable, "-m", "robid", "model", str(robot_file), "--terms", "rigid"],
            env=env_for(cache_dir, ROBID_CACHE_LOCK_TIMEOUT="0.5"),
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr
    assert out.stderr.count(WAITING) == 1
    lock = cache_dir / (key + ".lock")
    assert re.search(
        rf"robid: error: {re.escape(str(lock))}: waited 0\.\d s for another process deriving cache entry", out.stderr
    )
    assert not (cache_dir / key).exists()


def test_flock_waiters_take_turns_and_leave_no_lock_file(tmp_path, monkeypatch):
    monkeypatch.setenv("ROBID_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("ROBID_CACHE_LOCK", "flock")
    inside, overlaps = [], []

    def worker():
        with cache.entry_lock("k"):
            inside.append(1)
            overlaps.append(len(inside))
            time.sleep(0.05)
            inside.pop()

    threads = [threading.Thread(target=worker) for _ in range(4)]  # separate open files: flock excludes threads too
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert overlaps == [1, 1, 1, 1]
    assert list(tmp_path.iterdir()) == []


def test_a_file_system_without_flock_falls_back_to_lock_files(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("ROBID_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("ROBID_CACHE_LOCK", "flock")

    def no_flock(fd, op):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(cache_lock.fcntl, "flock", no_flock)
    with caplog.at_level(logging.INFO, logger="robid"), cache.entry_lock("k", timeout=5):
        assert (tmp_path / "k.xlock").exists() and not (tmp_path / "k.lock").exists()
    assert "no flock on this file system (No locks available); using lock files" in caplog.text
    assert list(tmp_path.iterdir()) == []


def test_lock_file_of_a_dead_process_is_taken_over(tmp_path, monkeypatch):
    monkeypatch.setenv("ROBID_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("ROBID_CACHE_LOCK", "file")
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (tmp_path / "k.xlock").write_text(f"{socket.gethostname()} {dead.pid} 0\n")
    with cache.entry_lock("k", timeout=5):  # not the 60 s of a stale lock: its holder is known dead
        assert str(os.getpid()) in (tmp_path / "k.xlock").read_text()
    assert list(tmp_path.iterdir()) == []


def test_lock_file_not_refreshed_is_stale(tmp_path, monkeypatch):
    monkeypatch.setenv("ROBID_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("ROBID_CACHE_LOCK", "file")
    monkeypatch.setenv("ROBID_CACHE_STALE_LOCK", "0.3")
    (tmp_path / "k.xlock").write_text("another-host 4242 0\n")  # a holder on another machine that died
    t0 = time.monotonic()
    with cache.entry_lock("k", timeout=10):
        pass
    assert time.monotonic() - t0 >= 0.3
    assert list(tmp_path.iterdir()) == []


def test_a_refreshed_lock_file_is_not_stale(tmp_path, monkeypatch):
    """The holder's heartbeat keeps its lock across several stale periods; the waiter times out instead."""
    monkeypatch.setenv("ROBID_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("ROBID_CACHE_LOCK", "file")
    monkeypatch.setenv("ROBID_CACHE_STALE_LOCK", "0.4")
    with cache.entry_lock("k"), pytest.raises(cache.CacheLockTimeout, match=r"waited 1\.\d s"):
        with cache.entry_lock("k", timeout=1.5):
            pass
    assert list(tmp_path.iterdir()) == []


# ---- corrupt entries -------------------------------------------------------------------------------------------------
def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _flip_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def _edit_meta(path: Path) -> None:
    meta = json.loads(path.read_text())
    meta["parameter_names"][0] = "m_X"  # still valid JSON
    path.write_text(json.dumps(meta))


def _strip_hashes(path: Path) -> None:  # an entry written by robid before the content hashes
    meta = json.loads(path.read_text())
    del meta["files"], meta["meta_sha256"]
    path.write_text(json.dumps(meta))


CORRUPTIONS = {
    "model.py cut short": ("model.py", _truncate, "model.py does not match its content hash"),
    "exact.py missing": ("exact.py", Path.unlink, "exact.py missing"),
    "meta.json cut short": ("meta.json", _truncate, "meta.json is not valid JSON"),
    "meta.json missing": ("meta.json", Path.unlink, "meta.json missing"),
    "meta.json edited": ("meta.json", _edit_meta, "meta.json does not match its content hash"),
    "meta.json without hashes": ("meta.json", _strip_hashes, "written by an earlier robid, without content hashes"),
    "model_c.c flipped byte": ("model_c.c", _flip_byte, "model_c.c does not match its content hash"),
}


@pytest.mark.parametrize("case", list(CORRUPTIONS))
def test_a_corrupt_entry_is_derived_again_with_a_note(tmp_path, template, robot_file, key, case, monkeypatch):
    name, corrupt, what = CORRUPTIONS[case]
    cache_dir = copy_of(template, tmp_path)
    target = cache_dir / key / name
    if not target.exists():
        pytest.skip(f"{name} not in the entry (no C compiler)")
    corrupt(target)
    result, err = run_load(robot_file, cache_dir)
    state = "stale" if "earlier robid" in what else "corrupt"
    assert f"cache entry {key} is {state} ({what}): deriving it again" in err
    assert result["derived"] == 1
    assert_correct(result)
    only_the_entry(cache_dir, key)
    if name == "model_c.c":
        assert result["c"]  # the source derived again has a C backend (built at the first large call) ...
        monkeypatch.setenv("ROBID_CACHE_DIR", str(cache_dir))
        library = robid.load_robot(robot_file, terms=("rigid",))._c  # ... which compiles it and loads it
        assert library is not None and library.path.parent == cache_dir / key


def test_lookup_checks_every_hash_in_process(tmp_path, template, key, monkeypatch):
    cache_dir = copy_of(template, tmp_path)
    monkeypatch.setenv("ROBID_CACHE_DIR", str(cache_dir))
    path, meta = cache.lookup(key)
    assert set(meta["files"]) >= {"model.py", "exact.py"}
    (path / "exact.py").write_text((path / "exact.py").read_text() + "\n")
    assert cache.lookup(key) is None  # no note, nothing removed: only the locked lookup discards
    assert (path / "exact.py").exists()
    assert cache.lookup(key, discard_corrupt=True) is None
    assert list(cache_dir.iterdir()) == []


def test_model_command_on_a_corrupt_cache_exits_0_with_the_note(tmp_path, template, robot_file, key):
    cache_dir = copy_of(template, tmp_path)
    command = [sys.executable, "-m", "robid", "model", str(robot_file), "--terms", "rigid"]
    clean = subprocess.run(command, env=env_for(cache_dir), capture_output=True, text=True, timeout=300)
    assert clean.returncode == 0, clean.stderr
    _truncate(cache_dir / key / "model.py")
    out = subprocess.run(command, env=env_for(cache_dir), capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    assert f"robid: cache entry {key} is corrupt (model.py does not match its content hash): deriving it again" in (
        out.stderr
    )
    assert out.stdout == clean.stdout
    only_the_entry(cache_dir, key)
