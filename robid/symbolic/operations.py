"""Operation counts of the generated programs (El-Rayyes 1990 Tables 4.1-4.5; Khalil & Kleinfinger 1987).

Counting convention (El-Rayyes 1990 chapter 4, see ../shared/reference/001_elrayyes_thesis.md section 4): the
multiplications and additions of the straight-line program that computes the outputs from the joint inputs.

* A product of k factors is k - 1 multiplications; a factor -1 is a sign change and is free; a numeric factor
  (a folded mass or length) is a multiplication; x**n is n - 1 multiplications; a division is a multiplication.
* A sum of k terms is k - 1 additions (a subtraction is an addition).
* The inputs sin(q_j), cos(q_j), qd_j, qdd_j are free, as in the thesis's generated code (its part 1 reads
  ``C1 = COS(TH(1))`` before the counted statements). A sum angle's sin/cos (``S23 = SIN(TH(2)+TH(3))``) is a
  function call, counted in ``calls``, and its angle sum is counted in ``add``.
* Only the statements the outputs need are counted (dead code is not generated).

Programs: the four generated with the parameters as run-time inputs (``inverse_dynamics``, ``base_inverse_
dynamics``, ``regressor``, ``base_regressor``; counted at generation, cache meta.json) and the customised inverse
dynamics with the numeric parameters folded (``inverse_dynamics_folded``, :func:`customised_operations`).
"""

from __future__ import annotations

from dataclasses import dataclass

from robid.model.robot_model import RobotModel
from robid.symbolic.codegen import OptimisedProgram, free_symbols, needed_assignments, sum_angle_operations
from robid.symbolic.geometry import JointSymbols
from robid.symbolic.program import operation_counts


@dataclass(frozen=True)
class OperationCount:
    """Multiplications, additions and function calls (sum-angle sin/cos, square roots of compensators)."""

    mul: int
    add: int
    calls: int = 0

    @property
    def total(self) -> int:
        """Multiplications plus additions, El-Rayyes' "total"."""
        return self.mul + self.add

    def as_dict(self) -> dict[str, int]:
        return {"mul": self.mul, "add": self.add, "total": self.total, "calls": self.calls}


def program_operations(program: OptimisedProgram, symbols: list[JointSymbols], keys=None) -> OperationCount:
    """Count of the statements the outputs ``keys`` (default: all) need, with the sum-angle inputs they read."""
    exprs = [program.entries[k] for k in (keys if keys is not None else program.entries)]
    assigns = needed_assignments(program, exprs)
    body = operation_counts(assigns, exprs)
    inputs = sum_angle_operations(symbols, free_symbols(assigns, exprs))
    return OperationCount(body["mul"], body["add"] + inputs["add"], body["call"] + inputs["call"])


def generated_operations(meta_counts: dict[str, dict[str, int]]) -> dict[str, OperationCount]:
    """The counts of the cached programs (meta.json ``operation_counts``: mul, add, call per program)."""
    return {name: OperationCount(c["mul"], c["add"], c.get("call", 0)) for name, c in meta_counts.items()}


def customised_operations(model: RobotModel, terms: tuple[str, ...], values) -> OperationCount:
    """Count of :func:`robid.symbolic.derive.customised_program` for the standard-set ``values`` (pass
    :func:`robid.symbolic.derive.base_equivalent_values` for Khalil-Kleinfinger's base-parameter form)."""
    from robid.symbolic.derive import customised_program

    program, symbols = customised_program(model, terms, values)
    return program_operations(program, symbols)


def customised_operation_counts(model: RobotModel, terms: tuple[str, ...], values) -> dict[str, int]:
    """Operation counts (mul, add, call) of the inverse dynamics with the numeric parameter ``values`` folded
    (:func:`robid.symbolic.derive.folded_program`; the setting of El-Rayyes 1990 Tables 4.2/4.3), sum-angle inputs
    included (:func:`program_operations`)."""
    from robid.symbolic.derive import folded_program

    prog, symbols = folded_program(model, terms, values)
    c = program_operations(prog, symbols)
    return {"mul": c.mul, "add": c.add, "call": c.calls}
