"""Robots whose regressors travel to other processes (robid.excitation.optimiser, "Parallel starts"): compiled
regressors do not pickle, so :func:`portable_robot` wraps a robot whose methods pickle as (model, terms) and are
rebuilt once per worker process from the shared derivation cache."""

from __future__ import annotations

import hashlib
import pickle
from collections.abc import Callable

from robid.model.robot_model import RobotModel

#: per process: hash of (model, terms) -> robid.robot.Robot rebuilt from the derivation cache
_REBUILT: dict[str, object] = {}


class _RobotMethod:
    """Picklable stand-in for ``Robot.inverse_dynamics`` or ``Robot.base_parameters().regressor``: pickles as
    (model, terms); after unpickling the robot is rebuilt on first call (once per process: the derivation cache is
    shared and locked, so a robot type derives at most once). Same compiled code, so the same numbers."""

    def __init__(self, model: RobotModel, terms: tuple[str, ...], kind: str, fn: Callable | None = None):
        self.model, self.terms, self.kind = model, tuple(terms), kind
        self._fn = fn

    def __getstate__(self) -> dict:
        return {"model": self.model, "terms": self.terms, "kind": self.kind, "_fn": None}

    def __call__(self, *args, **kwargs):
        if self._fn is None:
            from robid.robot import Robot

            key = hashlib.sha256(pickle.dumps((self.model, self.terms))).hexdigest()  # nominal values included
            robot = _REBUILT.get(key)
            if robot is None:
                robot = _REBUILT[key] = Robot(self.model, self.terms)
            self._fn = (robot.base_parameters().for_many_calls().regressor if self.kind == "base_regressor"
                        else getattr(robot, self.kind))  # the optimiser's many calls: the C library
        return self._fn(*args, **kwargs)


class _PortableBase:
    def __init__(self, base, regressor: _RobotMethod):
        self.names = list(getattr(base, "names", []))
        self.regressor = regressor


class _PortableRobot:
    """The parts of a robot that :func:`robid.excitation.design.design_from_spec` uses, picklable."""

    def __init__(self, robot):
        self.model = robot.model
        base = robot.base_parameters()
        self._base = _PortableBase(base, _RobotMethod(robot.model, robot.terms, "base_regressor",
                                                      base.for_many_calls().regressor))
        self.inverse_dynamics = _RobotMethod(robot.model, robot.terms, "inverse_dynamics", robot.inverse_dynamics)
        self.inverse_dynamics_for_many_calls = _RobotMethod(robot.model, robot.terms, "inverse_dynamics_for_many_calls",
                                                            robot.inverse_dynamics_for_many_calls)

    def base_parameters(self) -> _PortableBase:
        return self._base


def portable_robot(robot):
    """``robot`` itself when its base regressor and inverse dynamics pickle (e.g. a pure-Python stand-in), else a
    wrapper for a :class:`robid.robot.Robot` (compiled code) whose methods are rebuilt where they are unpickled."""
    try:
        pickle.dumps((robot.model, robot.base_parameters().regressor, getattr(robot, "inverse_dynamics", None)))
        return robot
    except Exception:  # ctypes handles of the compiled backend, generated modules
        if not hasattr(robot, "terms"):
            raise
        return _PortableRobot(robot)
