"""Fuzzing robid's readers: mutated measurement CSVs, mapping, robot (YAML and URDF), RESULT, TRAJ, campaign,
fleet and excitation SPEC files, each read by the function every command reads it with. The contract (issue 30,
docs/security.md): a reader returns, or raises :class:`robid.RobidInputError` with a one-line message (the command
line prints it as ``robid: error: ...`` with exit status 2); anything else is a traceback, a bug.

Used by tests/test_fuzz_readers.py (hypothesis drives the choices: a fast, derandomised subset) and by
benchmarks/bench_fuzz.py (10 000 inputs from a seeded generator, with peak memory). Mutations, each chosen at
random and applied one to three times to a valid seed file of the kind:

* structural (YAML/JSON kinds): a value anywhere in the parsed document replaced by a hostile one -- wrong types,
  NaN, 1e308, -0, huge integers, empty and hostile strings, lists and mappings where scalars go, nesting 10 to
  5000 deep -- or a key removed or added;
* textual: bytes deleted, duplicated, truncated, swapped, replaced by invalid UTF-8, NUL, control characters,
  U+2028; an alias bomb appended (YAML);
* cells (CSV): a cell replaced by ``nan``, ``1e400``, ``""``, text, a quote, a decimal comma; a row shortened or
  lengthened; the header changed.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable
from pathlib import Path

import numpy as np
import yaml

from robid.errors import RobidInputError

DATA = Path(__file__).parent / "data"

HOSTILE_STRINGS = ("", " ", "\x00", "\u2028", "*/", '"""', "\\", "\n", "é", "a" * 10_000, "90deg", "1e999",
                   "nan", "-", "../../etc/passwd", "/dev/zero", "robid_campaign", "0x10", "~", "&a", "*a")
HOSTILE_NUMBERS = (0, -1, 1, 2**63, -(2**70), 1e308, -1e308, 5e-324, -0.0, math.nan, math.inf, -math.inf, 0.5, 3,
                   1e9, True, False, None)


def _csv_seed() -> bytes:
    t = np.arange(60) * 0.01
    q = np.column_stack([0.5 * np.sin(2 * np.pi * t), 0.3 * np.cos(2 * np.pi * t)])
    tau = np.column_stack([2.0 * np.sin(2 * np.pi * t + 0.3), np.cos(2 * np.pi * t)])
    rows = "\n".join(",".join(f"{v:.6g}" for v in row) for row in np.column_stack([t, q, tau]))
    return ("t,q1,q2,tau1,tau2\n" + rows + "\n").encode()


MAPPING_SEED = """robid_mapping: 1
format: csv
header: false
time: {column: 1, unit: s}
positions: {columns: [2, 3], unit: deg, offset: [0, "-90deg"]}
torques: {columns: [4, 5], unit: Nm}
allow_constant: [q2]
"""

SPEC_SEED = """harmonics: 5
period: 4
rest_to_rest: true
criterion: cond
seed: 1
limits: {position: [[-2, 2], [-2, 2]], velocity: [2, 2], acceleration: [10, 10]}
"""

CAMPAIGN_SEED = """robid_campaign: 1
name: fuzz
robot: do_2r_elastic
trajectories:
  ident: {spec: {harmonics: 5, period: 4, seed: 1}}
export:
  - {trajectory: ident, format: csv, periods: 1}
measurements:
  ident: {simulate: {trajectory: ident, periods: 2, noise: realistic, seed: 3}}
processing: {min_speed: 0.1}
identification: {measurements: [ident], method: wls}
report: {title: fuzz}
"""

FLEET_SEED = ("""robid_fleet: 1
name: fuzz
robots:
  - serial: R-1
    robot: do_2r_elastic
    installation: cell 1
    identifications:
      - date: "2025-01-10"
        campaign:
""" + "".join(f"          {line}\n" for line in CAMPAIGN_SEED.splitlines()))


def _trajectory_seed() -> bytes:
    from robid.excitation.constraints import JointLimitSet
    from robid.excitation.fourier import FourierTrajectory
    from robid.excitation.trajectory_file import TrajectoryFile, trajectory_to_dict

    rng = np.random.default_rng(0)
    traj = FourierTrajectory(4.0, np.zeros(2), 0.1 * rng.standard_normal((2, 3)), 0.1 * rng.standard_normal((2, 3)),
                             4, ("P1", "P2")).project_rest()
    limits = JointLimitSet.create(2, [[-2, 2], [-2, 2]], [2, 2], [10, 10])
    doc = trajectory_to_dict(TrajectoryFile(traj, limits, 0.05, (), {"robot": "planar_2r", "seed": 1}))
    return json.dumps(doc, indent=1).encode()


def _result_seed() -> bytes:
    """A RESULT.json of the planar arm (identified once, from a noiseless simulated run)."""
    import tempfile

    import robid
    from robid.identification import run_identification

    robot = robid.load_robot(DATA / "planar_2r.yaml", terms=("rigid", "viscous"))
    t = np.arange(0, 8, 0.01)
    q = np.column_stack([0.8 * np.sin(2 * np.pi * t / 4), 0.6 * np.sin(4 * np.pi * t / 4 + 1)])
    qd = np.gradient(q, t, axis=0)
    qdd = np.gradient(qd, t, axis=0)
    tau = robot.inverse_dynamics(q, qd, qdd)
    with tempfile.TemporaryDirectory() as folder:
        run = Path(folder) / "run.csv"
        np.savetxt(run, np.column_stack([t, q, tau]), delimiter=",", header="t,q1,q2,tau1,tau2", comments="")
        return run_identification(robot, [run]).record.to_json().encode()


def seeds() -> dict[str, tuple[str, bytes]]:
    """kind -> (file suffix, a valid file of that kind)."""
    return {
        "csv": (".csv", _csv_seed()),
        "mapping": (".yaml", MAPPING_SEED.encode()),
        "robot": (".yaml", (DATA / "rrr_mdh.yaml").read_bytes()),
        "urdf": (".urdf", (DATA / "rpr_prismatic.urdf").read_bytes()),
        "result": (".json", _result_seed()),
        "trajectory": (".json", _trajectory_seed()),
        "campaign": (".yaml", CAMPAIGN_SEED.encode()),
        "fleet": (".yaml", FLEET_SEED.encode()),
        "spec": (".yaml", SPEC_SEED.encode()),
    }


# ------------------------------------------------------------------------------------------ the readers
def _read_spec(path: Path):
    from robid.excitation.spec import spec_from_dict
    from robid.io.files import read_yaml

    return spec_from_dict(read_yaml(path), str(path))


def _read_mapped(path: Path):
    """A mapping applied to a headerless CSV beside it (its reader and the table reader together)."""
    from robid.io.measurement_file import read_measurement

    table = path.with_name("mapped.csv")
    if not table.exists():
        t = np.arange(40) * 0.01
        table.write_text("\n".join(f"{x:.3f},{10 * np.sin(x):.4f},{-80 + x:.4f},{x:.4f},{2 * x:.4f}" for x in t))
    return read_measurement(table, mapping=path, dof=2)


def readers() -> dict[str, Callable[[Path], object]]:
    import robid
    from robid.campaign import read_campaign
    from robid.excitation.trajectory_file import load_trajectory
    from robid.fleet.spec import read_fleet
    from robid.io.measurement_file import read_measurement
    from robid.io.result_file import read_result
    from robid.model.loader import read_robot

    planar = robid.load_robot(DATA / "planar_2r.yaml").model
    return {
        "csv": lambda p: read_measurement(p, planar),
        "mapping": _read_mapped,
        "robot": read_robot,
        "urdf": read_robot,
        "result": read_result,
        "trajectory": load_trajectory,
        "campaign": read_campaign,
        "fleet": read_fleet,
        "spec": _read_spec,
    }


def outcome(reader: Callable[[Path], object], path: Path) -> str:
    """"ok" or "refused" (RobidInputError with a one-line message); any other exception propagates (a bug), and
    so does a refusal whose message spans lines."""
    try:
        reader(path)
    except RobidInputError as exc:
        message = str(exc)
        if "\n" in message or "\r" in message or not message.strip():
            raise AssertionError(f"{path}: refusal is not one line: {message!r}") from None
        return "refused"
    return "ok"


# ------------------------------------------------------------------------------------------ mutations
def _random_value(rnd: random.Random, depth: int = 0):
    choice = rnd.randrange(9 if depth < 3 else 6)
    if choice < 2:
        return rnd.choice(HOSTILE_NUMBERS)
    if choice < 4:
        return rnd.choice(HOSTILE_STRINGS)
    if choice == 4:
        return rnd.uniform(-1e6, 1e6)
    if choice == 5:
        return rnd.randint(-5, 10)
    if choice == 6:
        return [_random_value(rnd, depth + 1) for _ in range(rnd.randrange(5))]
    if choice == 7:
        return {rnd.choice(("a", "name", "robid", "joints", "", "1")): _random_value(rnd, depth + 1)
                for _ in range(rnd.randrange(4))}
    value = []
    for _ in range(rnd.choice((10, 150, 5000))):  # deep nesting
        value = [value]
    return value


def _paths(data, prefix=()):
    """Every (path, container) in a parsed document, iteratively."""
    out, stack = [], [(data, prefix)]
    while stack:
        node, path = stack.pop()
        out.append(path)
        if isinstance(node, dict):
            stack.extend((v, (*path, k)) for k, v in node.items())
        elif isinstance(node, list) and len(node) < 200:
            stack.extend((v, (*path, k)) for k, v in enumerate(node))
    return out


def _structural(rnd: random.Random, data):
    paths = _paths(data)
    path = rnd.choice(paths)
    if not path:
        return _random_value(rnd)
    parent = data
    for key in path[:-1]:
        parent = parent[key]
    action = rnd.randrange(4)
    if action == 0 and isinstance(parent, dict):
        del parent[path[-1]]
    elif action == 1 and isinstance(parent, dict):
        parent[rnd.choice(HOSTILE_STRINGS[:12]) or "x"] = _random_value(rnd)
    else:
        parent[path[-1]] = _random_value(rnd)
    return data


BOMB = "\nzz0: &b0 [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"zz{i + 1}: &b{i + 1} [{', '.join([f'*b{i}'] * 9)}]\n" for i in range(7))


def _textual(rnd: random.Random, raw: bytes, suffix: str) -> bytes:
    n = len(raw)
    i, j = sorted((rnd.randrange(n + 1), rnd.randrange(n + 1)))
    action = rnd.randrange(8)
    if action == 0:
        return raw[:i] + raw[j:]
    if action == 1:
        return raw[:j] + raw[i:j] + raw[j:]
    if action == 2:
        return raw[:i]
    if action == 3:
        return raw[:i] + bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 8))) + raw[i:]
    if action == 4:
        return raw[:i] + rnd.choice((b"\xff\xfe", b"\x00", b"\xc3", "\u2028".encode(), b"\r", b"\x1b[2J")) + raw[i:]
    if action == 5 and suffix == ".yaml":
        return raw + BOMB.encode() + rnd.choice((b"", b"name: *b7\n", b"report: {title: *b7}\n"))
    if action == 6:
        lines = raw.split(b"\n")
        rnd.shuffle(lines)
        return b"\n".join(lines)
    return raw[:i] + raw[i:j] * rnd.randrange(2, 5) + raw[j:]


def _cells(rnd: random.Random, raw: bytes) -> bytes:
    lines = raw.decode().split("\n")
    k = rnd.randrange(len(lines))
    cells = lines[k].split(",")
    action = rnd.randrange(4)
    if action == 0:
        cells[rnd.randrange(len(cells))] = rnd.choice(("nan", "1e400", "", "abc", '"1,5"', '"', "1,5", "-inf", "0x1",
                                                        " 1 ", "1e-400", "9" * 400))
    elif action == 1:
        cells = cells[: rnd.randrange(len(cells) + 1)]
    elif action == 2:
        cells += [rnd.choice(("1", "x", ""))] * rnd.randrange(1, 4)
    else:
        cells = [rnd.choice(("t", "q1", "q2", "tau1", "tau2", "qd1", "i1", "theta1", "x")) for _ in cells]
    lines[k] = ",".join(cells)
    return "\n".join(lines).encode()


def mutate(rnd: random.Random, kind: str, suffix: str, raw: bytes) -> bytes:
    """One to three mutations (module docstring) of the valid file ``raw`` of ``kind``."""
    for _ in range(rnd.randint(1, 3)):
        mode = rnd.randrange(3)
        if mode == 0 and suffix in (".yaml", ".json") and b"&b0" not in raw:  # a bomb is not expanded here
            try:
                data = yaml.safe_load(raw) if suffix == ".yaml" else json.loads(raw)
            except Exception:  # an earlier mutation broke it: a textual one instead
                data = None
            if data is not None:
                data = _structural(rnd, data)
                try:
                    raw = (yaml.safe_dump(data, allow_unicode=rnd.random() < 0.5) if suffix == ".yaml"
                           else json.dumps(data)).encode()
                except (ValueError, RecursionError, yaml.YAMLError):
                    pass
                continue
        if mode == 1 and kind == "csv":
            try:
                raw = _cells(rnd, raw)
                continue
            except UnicodeDecodeError:
                pass
        raw = _textual(rnd, raw, suffix)
    return raw


def run_one(rnd: random.Random, kind: str, seed_files, reader, folder: Path) -> str:
    """Mutate the seed of ``kind``, write it under ``folder`` and read it: "ok" or "refused" (:func:`outcome`)."""
    suffix, raw = seed_files[kind]
    path = folder / f"fuzz-{kind}{suffix}"
    path.write_bytes(mutate(rnd, kind, suffix, raw))
    return outcome(reader, path)
