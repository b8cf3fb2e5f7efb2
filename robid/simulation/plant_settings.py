"""The virtual robot's settings (robid.simulation.plant): the controller's gains and feed-forward kind, the
integrator's tolerances and Coulomb smoothing, and the integrator's statistics of a run."""

from __future__ import annotations

import math
from dataclasses import dataclass

from robid.defaults import DEFAULT_FEEDFORWARD, FEEDFORWARD_KINDS
from robid.errors import RobidInputError

FEEDFORWARD_MODES = FEEDFORWARD_KINDS  # robid.defaults: one definition


@dataclass(frozen=True)
class ControllerSettings:
    """Joint controller of the virtual robot; ``enabled=False`` leaves the motors unpowered (tau_m = 0)."""

    enabled: bool = True
    feedforward: str = DEFAULT_FEEDFORWARD
    default_bandwidth_hz: float = 5.0
    default_damping_ratio: float = 0.7
    table_step: float = 1e-3

    def __post_init__(self) -> None:
        if self.feedforward not in FEEDFORWARD_MODES:
            raise RobidInputError(f"controller: feedforward: {self.feedforward!r} is not one of {FEEDFORWARD_MODES}")
        for name in ("default_bandwidth_hz", "default_damping_ratio", "table_step"):
            value = getattr(self, name)
            if not (value > 0 and math.isfinite(value)):
                raise RobidInputError(f"controller: {name}: must be positive, got {value!r}")


@dataclass(frozen=True)
class IntegratorSettings:
    """solve_ivp method and tolerances; ``coulomb_epsilon`` (rad/s or m/s) smooths sign(v) as tanh(v/eps)."""

    method: str = "LSODA"
    rtol: float = 1e-7
    atol_position: float = 1e-9
    atol_velocity: float = 1e-7
    coulomb_epsilon: float = 1e-4
    max_step: float = math.inf

    def __post_init__(self) -> None:
        if self.method not in ("RK45", "RK23", "DOP853", "Radau", "BDF", "LSODA"):
            raise RobidInputError(f"integrator: method: unknown solve_ivp method {self.method!r}")
        for name in ("rtol", "atol_position", "atol_velocity", "coulomb_epsilon", "max_step"):
            value = getattr(self, name)
            if not value > 0:
                raise RobidInputError(f"integrator: {name}: must be positive, got {value!r}")


@dataclass(frozen=True)
class IntegratorStats:
    method: str
    rtol: float
    atol_position: float
    atol_velocity: float
    coulomb_epsilon: float
    nfev: int
    njev: int
    nlu: int
    wall_time_s: float
    success: bool
    message: str


