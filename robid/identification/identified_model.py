"""The identified model: what identification chose, as the one object every consumer evaluates.

An identification ends with the base values and their covariance and, where the friction model selection chose
a nonlinear model on some joint and the record adopted it (robid.record.friction_models, schema 2.0), the joint
fit of those models with every base parameter: Stribeck or sigmoid friction and position ripple on their joints
(docs/estimation.md "Nonlinear friction"). The torque of joint J is then

    tau_J = W_J(q, qd, qdd) beta + phi_J(q, v, s)

with ``W beta`` the base regressor times the base values (the Coulomb column of a sigmoid joint carries zero) and
``phi_J`` what the joint's model adds: ``(fs_J - fc_J) s exp(-(v/vs_J)^2)`` (Stribeck), ``sum_k a_k [l(b_k (v +
c_k)) - l(b_k c_k)]`` (sigmoids), ``sum_h (frc_h cos(h q) + frs_h sin(h q)) s`` (ripple); v is the friction
velocity and s the sign the Coulomb columns use (robid.identification.coulomb). The record's torque fits and
figures, ``robid predict``, the report, ``export-model`` and ``payload identify --result`` all go through
:class:`IdentifiedModel`; nothing re-derives the model from the linear base values alone.

Springs, dampers, compensators and coupled drives are base parameters (their columns are in W); a motor-encoder-only
identification's link-state reconstruction is the record's ``processing.motor_encoders_only`` (the data sets are
built through it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robid.errors import RobidInputError
from robid.estimation import prediction_std
from robid.estimation.nonlinear_friction import (
    FrictionProblem,
    FrictionRequest,
    FrictionSignals,
    friction_regressor,
)
from robid.record.held_friction import HeldFriction


@dataclass(frozen=True, eq=False)
class AdoptedFriction:
    """The nonlinear friction of an identified model: the joint fit's parameter ``names`` (base parameters kept,
    new linear ones, then the nonlinear ones), ``values``, ``nonlinear`` flags, one FrictionRequest per joint
    (``requests``) and the ``covariance`` of all of them (the fields robid.estimation.nonlinear_friction.
    friction_regressor reads; a NonlinearFrictionResult has them too)."""

    names: tuple[str, ...]
    values: np.ndarray
    nonlinear: tuple[bool, ...]
    requests: tuple[FrictionRequest, ...]
    covariance: np.ndarray

    @classmethod
    def of_result(cls, result) -> AdoptedFriction:
        """The adopted friction of a joint fit (robid.estimation.nonlinear_friction.NonlinearFrictionResult)."""
        return cls(tuple(result.names), np.asarray(result.values, dtype=float), tuple(result.nonlinear),
                   tuple(result.requests), np.asarray(result.covariance, dtype=float))

    @property
    def linear_values(self) -> np.ndarray:
        return np.asarray(self.values, dtype=float)[~np.array(self.nonlinear, dtype=bool)]

    def labels(self, joint_names) -> str:
        """e.g. ``J1 stribeck, J2 sigmoid; J3..J6 linear``."""
        special = [f"{j} {r.label}" for j, r in zip(joint_names, self.requests, strict=True)
                   if r.model != "linear" or r.ripple]
        linear = [j for j, r in zip(joint_names, self.requests, strict=True) if r.model == "linear" and not r.ripple]
        return ", ".join(special) + (f"; {', '.join(linear)} linear" if linear else "")


@dataclass(frozen=True, eq=False)
class IdentifiedModel:
    """The base values and covariance of an identification and its adopted nonlinear friction (None: linear
    friction everywhere), with the Coulomb sign rule of its columns (module docstring)."""

    names: tuple[str, ...]
    values: np.ndarray
    covariance: np.ndarray
    friction: AdoptedFriction | None = None
    coulomb: str = "noise"
    #: the standstill model (robid.record.held_friction.HeldFriction, robid.identification.held_friction): what a
    #: joint held still carries in place of its velocity friction; None: the velocity friction everywhere
    held: HeldFriction | None = None

    @classmethod
    def of_record(cls, record) -> IdentifiedModel:
        """The model a RESULT.json describes (robid.record.IdentificationRecord)."""
        fm = record.friction_models
        friction = None
        if fm is not None and fm.adopted:
            friction = _adopted(fm, record.joints)
        return cls(record.names, record.values, record.covariance_matrix, friction, record.processing.coulomb,
                   record.held_friction)

    @property
    def is_linear(self) -> bool:
        return self.friction is None

    def describe(self, joint_names) -> str:
        """One line: the friction models the model evaluates."""
        line = ("friction: linear (viscous, Coulomb, offset) on every joint" if self.friction is None
                else "friction: " + self.friction.labels(joint_names))
        return line if self.held is None else f"{line}; held still: {self.held.line()}"

    # -- evaluation --------------------------------------------------------------------------------------------
    def dataset_torque(self, robot, dataset) -> tuple[np.ndarray, np.ndarray]:
        """(mean, parameter-uncertainty std), each (N, dof), of the drive torque of a data set
        (robid.identification.datasets.DataSet in its drive view): its filtered rows, zero on the rows the data
        selection left out (as its regressor)."""
        from robid.identification.compact_regressor import CompactRegressor

        dataset = dataset.drive_view()
        W = dataset.W
        if self.friction is None:
            std = W.prediction_std(self.covariance) if isinstance(W, CompactRegressor) else prediction_std(
                W, self.covariance)
            return W @ self.values, std
        from robid.identification.friction_fit import friction_problem

        if isinstance(W, CompactRegressor):
            raise RobidInputError(f"{dataset.source}: a nonlinear friction model is evaluated on the stacked "
                                  "regressor (not the streamed path of long non-periodic records)")
        problem = friction_problem(robot, [dataset], self.coulomb)
        X, S = friction_regressor(self.friction, problem)
        mean = np.where(problem.used, X @ self.friction.linear_values, 0.0)
        return mean, prediction_std(S, self.friction.covariance)

    def grid_torque(self, robot, W: np.ndarray, q: np.ndarray, v: np.ndarray, s: np.ndarray) -> np.ndarray:
        """(N, dof) torque on a processed grid, unfiltered: ``W`` the base regressor there (with the Coulomb
        columns of this model's sign rule), ``q`` the positions, ``v`` the friction velocity and ``s`` its sign as
        the Coulomb columns took it (robid.identification.predict)."""
        if self.friction is None:
            return W @ self.values
        problem = FrictionProblem(W, np.zeros(W.shape[:2]), self.names, tuple(robot.joint_names),
                                  FrictionSignals.unfiltered(q, v, s))
        X, _ = friction_regressor(self.friction, problem)
        return X @ self.friction.linear_values

    def friction_torque(self, robot, joint: int, q: np.ndarray, v: np.ndarray, s: np.ndarray) -> np.ndarray:
        """Joint ``joint``'s whole friction torque (fv v + fc s + f0 plus what its model adds) at the states
        ``q``, ``v`` with sign ``s`` (each (N, dof)); for figures and exports."""
        names = list(self.names)
        base = dict(zip(names, self.values, strict=True))
        name = robot.joint_names[joint]
        qj, vj, sj = (np.asarray(x, dtype=float)[:, joint] for x in (q, v, s))
        out = (base.get(f"fv_{name}", 0.0) * vj + base.get(f"fc_{name}", 0.0) * sj
               + base.get(f"f0_{name}", 0.0) * np.ones_like(vj))
        if self.friction is None:
            return out
        return out + _excess(self.friction, joint, name, qj, vj, sj)


    def friction_curve(self, robot, joint: int, velocity: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(torque, std) of joint ``joint``'s friction over a velocity grid (position ripple at q = 0, sign(v)):
        the model's curve and its standard deviation by the delta method, from the covariance of the parameters
        it depends on (central differences for the nonlinear ones)."""
        v = np.asarray(velocity, dtype=float)
        dof = robot.dof
        V = np.zeros((v.size, dof))
        V[:, joint] = v
        S = np.sign(V)
        Q = np.zeros_like(V)
        torque = self.friction_torque(robot, joint, Q, V, S)
        if self.friction is None:
            names, values, cov = self.names, np.asarray(self.values, dtype=float), self.covariance
        else:
            names, values, cov = self.friction.names, np.asarray(self.friction.values, dtype=float), \
                self.friction.covariance
        joint_name = robot.joint_names[joint]
        own = [k for k, n in enumerate(names) if n.endswith(f"_{joint_name}") and n.split("_", 1)[0] in _FRICTION]
        J = np.zeros((v.size, len(own)))
        for c, k in enumerate(own):
            h = 1e-6 * max(abs(values[k]), 1e-6)
            plus, minus = values.copy(), values.copy()
            plus[k] += h
            minus[k] -= h
            J[:, c] = (self._with(names, plus).friction_torque(robot, joint, Q, V, S)
                       - self._with(names, minus).friction_torque(robot, joint, Q, V, S)) / (2 * h)
        C = np.asarray(cov, dtype=float)[np.ix_(own, own)]
        std = np.sqrt(np.clip(np.sum((J @ C) * J, axis=1), 0.0, None)) if own else np.zeros_like(v)
        return torque, std

    def _with(self, names, values) -> IdentifiedModel:
        """This model with the parameters ``names`` set to ``values`` (the base values or the friction fit's)."""
        if self.friction is None:
            return IdentifiedModel(self.names, values, self.covariance, None, self.coulomb, self.held)
        table = dict(zip(names, values, strict=True))
        base = np.array([table.get(n, 0.0) for n in self.names])
        friction = AdoptedFriction(self.friction.names, values, self.friction.nonlinear, self.friction.requests,
                                   self.friction.covariance)
        return IdentifiedModel(self.names, base, self.covariance, friction, self.coulomb, self.held)


#: prefixes of a joint's friction parameters (linear, Stribeck, sigmoid, ripple)
_FRICTION = ("fv", "fc", "f0", "fs", "vs", *(f"{p}{k}" for p in ("fsa", "fss", "fso", "frc", "frs")
                                                 for k in range(1, 9)))


def _excess(friction: AdoptedFriction, row: int, joint: str, q, v, s) -> np.ndarray:
    """phi_J of the module docstring: what joint ``joint``'s model adds to fv v + fc s + f0."""
    value = dict(zip(friction.names, np.asarray(friction.values, dtype=float), strict=True))
    request = friction.requests[row]
    out = np.zeros_like(v)
    for h in request.ripple:
        out = out + (value[f"frc{h}_{joint}"] * np.cos(h * q) + value[f"frs{h}_{joint}"] * np.sin(h * q)) * s
    if request.model == "stribeck":
        fc = value.get(f"fc_{joint}", 0.0)
        out = out + (value[f"fs_{joint}"] - fc) * s * np.exp(-((v / value[f"vs_{joint}"]) ** 2))
    elif request.model == "sigmoid":
        for k in range(1, request.sigmoids + 1):
            a, b, c = (value[f"{p}{k}_{joint}"] for p in ("fsa", "fss", "fso"))
            out = out + a * 0.5 * (np.tanh(0.5 * b * (v + c)) - np.tanh(0.5 * b * c))
    return out


def _adopted(fm, joints) -> AdoptedFriction:
    """The AdoptedFriction of a record's friction_models section (adopted)."""
    fit = fm.fit
    if fit is None or len(fm.models) != len(joints):
        raise RobidInputError("RESULT.json: friction_models: adopted without the fit or the per-joint models")
    requests = tuple(FrictionRequest(m.model, m.sigmoids, tuple(m.ripple)) for m in fm.models)
    values = np.array([np.nan if v is None else v for v in fit.values], dtype=float)
    cov = np.array([[np.nan if v is None else v for v in row] for row in fit.covariance], dtype=float)
    return AdoptedFriction(tuple(fit.names), values, tuple(fit.nonlinear), requests, cov)
