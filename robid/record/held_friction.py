"""The record of the held-friction model (schema 2.2, JSON ``held_friction``): per joint the chosen standstill
model (none, constant, decay; robid.estimation.held_friction, docs/estimation.md "Held friction"), its amplitude
h (N m), time constant T (s), their std, the fraction h / fc of the joint's Coulomb torque, how many holds and rows
it was fitted on, and every candidate's figures. ``robid predict`` and the identified model
(robid.identification.identified_model) evaluate it on the rows where a joint is held still."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class HeldFrictionCandidate:
    """One joint with one candidate: parameter count, RMS on the identification holds (N m), BIC, held-out RMS
    (None without held-out holds), whether chosen."""

    joint: str
    model: str
    parameters: int
    rms: float | None
    bic: float | None
    validation_rms: float | None
    chosen: bool


@dataclass(frozen=True)
class HeldFrictionJoint:
    """The chosen held-friction model of one joint (``model`` "none": no held torque)."""

    joint: str
    model: str
    amplitude: float
    amplitude_std: float | None
    time_constant: float | None
    time_constant_std: float | None
    #: amplitude / fc_J (None when the joint has no Coulomb parameter of its own or it is 0)
    fraction: float | None
    holds: int
    rows: int


@dataclass(frozen=True)
class HeldFriction:
    """Held friction of every joint; ``criterion`` "validation" (held-out holds) or "bic"."""

    criterion: str
    joints: tuple[HeldFrictionJoint, ...]
    candidates: tuple[HeldFrictionCandidate, ...] = ()

    def joint(self, name: str) -> HeldFrictionJoint:
        return next(j for j in self.joints if j.joint == name)

    def line(self) -> str:
        """e.g. ``J1 decay (h 2.10 N m, T 1.3 s), J2 constant (h 0.80 N m); J3 none``."""
        parts = []
        for j in self.joints:
            if j.model == "decay":
                parts.append(f"{j.joint} decay (h {j.amplitude:.3g} N m, T {j.time_constant:.3g} s)")
            elif j.model == "constant":
                parts.append(f"{j.joint} constant (h {j.amplitude:.3g} N m)")
        none = [j.joint for j in self.joints if j.model == "none"]
        return ", ".join(parts) + (("; " if parts else "") + f"{', '.join(none)} none" if none else "")
