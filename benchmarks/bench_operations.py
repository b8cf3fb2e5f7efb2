"""Operation counts of the generated programs next to El-Rayyes (1990) and SYMORO (issue 14).

Run: ``python benchmarks/bench_operations.py`` (or ``python benchmarks/run_all.py``). Prints a Markdown section to
paste into benchmarks/RESULTS.md: the customised inverse dynamics with the numeric parameters folded (the setting of
El-Rayyes' Tables 1.2 and 4.2: geometry and mass data numeric), in the base-parameter form of Khalil & Kleinfinger
(SYMORO) and with the standard parameters (NEDYN's form), the pass-by-pass statistics like CLEAR's report, and
the four programs generated with the parameters as run-time inputs. Counting convention: robid.symbolic.operations.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_core import machine  # noqa: E402  (one description of the machine for every benchmark)

ROBOTS = (("PUMA 560", "puma560"), ("Stanford arm", str(HERE / "robots" / "stanford.yaml")))
#: El-Rayyes (1990) Tables 1.2, 4.1, 4.2 (mult/add): NEDYN+CLEAR, ARM recursive, SYMORO (Khalil-Kleinfinger 1987)
PUBLISHED = {
    "PUMA 560": {"NEDYN+CLEAR": (204, 154), "ARM (recursive)": (224, 174), "SYMORO": None},
    "Stanford arm": {"NEDYN+CLEAR": (174, 135), "ARM (recursive)": (185, 148), "SYMORO": (142, 99)},
}


def _fmt(mul: int, add: int, calls: int = 0) -> str:
    extra = f" (+{calls} sin/cos)" if calls else ""
    return f"{mul}/{add} = **{mul + add}**{extra}"


def _published(pair) -> str:
    return "-" if pair is None else f"{pair[0]}/{pair[1]} = {sum(pair)}"


def cse_only_counts(model, terms, values) -> dict[str, int]:
    """The issue-2 baseline: the standard recursion with the standard values folded, then sympy CSE only."""
    import sympy as sp

    from robid.symbolic.codegen import optimise
    from robid.symbolic.derive import DerivationContext, ProgramBuilder, derive_torques, joint_symbols
    from robid.symbolic.folding import program_counts

    ctx = DerivationContext(model=model, symbols=joint_symbols(model), program=ProgramBuilder())
    exact = [sp.Rational(repr(float(v))) if v != 0 else sp.Integer(0) for v in values]
    tau = derive_torques(ctx, terms, exact)
    return program_counts(optimise(ctx.program.assignments, [], {("tau", i): e for i, e in enumerate(tau)}))


def measure(robot_name: str):
    import robid
    from robid.symbolic.derive import base_equivalent_values, customised_program
    from robid.symbolic.operations import generated_operations, program_operations

    robot = robid.load_robot(robot_name, terms=("rigid",))
    base = robot.base_parameters()
    values = base_equivalent_values(len(robot.parameter_names), base.indices, base.values(robot.parameters))
    stages: list = []
    t0 = time.perf_counter()
    program, symbols = customised_program(robot.model, robot.terms, values, stages)
    seconds = time.perf_counter() - t0
    folded_base = program_operations(program, symbols)
    program_std, symbols_std = customised_program(robot.model, robot.terms, robot.parameters)
    folded_std = program_operations(program_std, symbols_std)
    before = cse_only_counts(robot.model, robot.terms, robot.parameters)
    generic = generated_operations(robot.meta["operation_counts"])
    nonzero = int(np.count_nonzero(base.values(robot.parameters)))
    return {
        "base": folded_base,
        "standard": folded_std,
        "before": before,
        "generic": generic,
        "stages": stages,
        "seconds": seconds,
        "n_base": len(base.names),
        "nonzero": nonzero,
    }


#: El-Rayyes (1990) Tables 4.1 and 4.3, three-DOF positioning systems (mult/add); NEDYN's PUMA row is a copy of
#: the six-DOF row in the thesis (erratum), so it is left out
PUBLISHED_3DOF = {
    "PUMA 560": {"NEDYN+CLEAR": None, "ARM (recursive)": (99, 75), "ARM (closed form)": (55, 42)},
    "Stanford arm": {"NEDYN+CLEAR": (49, 37), "ARM (recursive)": (57, 47), "ARM (closed form)": (40, 24)},
}


def three_dof(robot_name: str):
    """The customised inverse dynamics of the first three links (the positioning system), both forms."""
    import dataclasses

    import robid
    from robid.model.loader import read_robot
    from robid.symbolic.derive import base_equivalent_values, customised_program
    from robid.symbolic.operations import program_operations

    model = read_robot(robot_name)
    model = dataclasses.replace(model, name=f"{model.name}_3dof", joints=model.joints[:3])
    robot = robid.load_robot(model, terms=("rigid",))
    base = robot.base_parameters()
    values = base_equivalent_values(len(robot.parameter_names), base.indices, base.values(robot.parameters))
    out = {}
    for form, v in (("base", values), ("standard", robot.parameters)):
        out[form] = program_operations(*customised_program(robot.model, robot.terms, v))
    return out


def main() -> None:
    results = {label: measure(name) for label, name in ROBOTS}
    print(f"## Operation counts (issue 14) — {time.strftime('%Y-%m-%d')} — {machine()}\n")
    print("Inverse dynamics with the numeric parameters folded, rigid bodies, mult/add = total per sample (sin/cos")
    print("of the joint angles are inputs; a sum angle's sin/cos are calls and its angle sum an addition):\n")
    print(
        "| robot | robid, base parameters (Khalil-Kleinfinger form) | robid, standard parameters (NEDYN form) |"
        " robid before (issue 2: CSE only) | El-Rayyes NEDYN+CLEAR | ARM recursive | SYMORO |"
    )
    print("|---|---|---|---|---|---|---|")
    for label, r in results.items():
        b, s, old = r["base"], r["standard"], r["before"]
        pub = PUBLISHED[label]
        print(
            f"| {label} | {_fmt(b.mul, b.add, b.calls)} | {_fmt(s.mul, s.add, s.calls)} |"
            f" {old['mul']}/{old['add']} = {old['mul'] + old['add']} | {_published(pub['NEDYN+CLEAR'])} |"
            f" {_published(pub['ARM (recursive)'])} | {_published(pub['SYMORO'])} |"
        )
    print("\nPass by pass (base-parameter form), mult/add = total, like CLEAR's statistics (El-Rayyes Fig. 3.9);")
    print("the program's statements only (the PUMA's sum angle q2 + q3 adds one addition to every row):\n")
    names = [name for name, _ in next(iter(results.values()))["stages"]]
    print("| stage | " + " | ".join(results) + " |")
    print("|---|" + "---|" * len(results))
    for k, name in enumerate(names):
        cells = []
        for r in results.values():
            c = r["stages"][k][1]
            cells.append(f"{c['mul']}/{c['add']} = {c['mul'] + c['add']}")
        print(f"| {name} | " + " | ".join(cells) + " |")
    print("\nPrograms generated with the parameters as run-time inputs (cached; `robid model ROBOT --ops`):\n")
    progs = ["inverse_dynamics", "base_inverse_dynamics", "regressor", "base_regressor"]
    print("| robot | " + " | ".join(progs) + " |")
    print("|---|" + "---|" * len(progs))
    for label, r in results.items():
        g = r["generic"]
        print(f"| {label} | " + " | ".join(f"{g[p].mul}/{g[p].add} = {g[p].total}" for p in progs) + " |")
    print("\nThree-DOF positioning systems (the first three links of the same data), folded inverse dynamics:\n")
    print(
        "| robot | robid, base parameters | robid, standard parameters | NEDYN+CLEAR | ARM recursive |"
        " ARM closed form |"
    )
    print("|---|---|---|---|---|---|")
    for label, name in ROBOTS:
        r3, pub = three_dof(name), PUBLISHED_3DOF[label]
        b, s = r3["base"], r3["standard"]
        print(
            f"| {label} | {_fmt(b.mul, b.add, b.calls)} | {_fmt(s.mul, s.add, s.calls)} |"
            f" {_published(pub['NEDYN+CLEAR'])} | {_published(pub['ARM (recursive)'])} |"
            f" {_published(pub['ARM (closed form)'])} |"
        )
    print()
    for label, r in results.items():
        print(
            f"- {label}: {r['n_base']} base parameters, {r['nonzero']} of them non-zero for these data;"
            f" customised program derived and optimised in {r['seconds']:.1f} s"
        )


if __name__ == "__main__":
    main()
