"""The public Robot object (docs/interfaces.md section 2): a model plus its compiled regressors."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from robid.errors import RobidInputError
from robid.model.loader import read_robot
from robid.model.robot_model import RobotModel


@dataclass(frozen=True)
class BaseParameters:
    """The base (identifiable) parameter set of a robot and its regressor.

    ``grouping`` (nb, P) maps standard values to base values; ``expressions`` spell each base parameter as
    the standard parameter it is named after plus what is grouped into it; ``classes`` classifies every
    standard parameter as unidentifiable, grouped or identifiable. ``exact`` says whether the grouping
    coefficients are exact rationals (``grouping_exact``) or floating-point.
    """

    names: list[str]
    expressions: list[str]
    indices: list[int]
    grouping: np.ndarray
    grouping_exact: list[list[str]] | None
    classes: dict[str, str]
    exact: bool
    _module: object = field(repr=False, compare=False, default=None)
    _backend: object = field(repr=False, compare=False, default=None)  # robid.dynamics.compiled.CompiledBackend
    _many_calls: bool = field(repr=False, compare=False, default=False)

    motor_joints: tuple[int, ...] = ()

    def for_many_calls(self) -> BaseParameters:
        """This base regressor for a caller that evaluates it many times on small batches (an optimiser, an
        integrator): every call runs the C library where there is one (robid.dynamics.compiled)."""
        return dataclasses.replace(self, _many_calls=True)

    def regressor(self, q, qd, qdd, out=None, *, motor=None) -> np.ndarray:
        """(N, rows, nb) base regressor; ``out`` an optional buffer of that shape to fill and return.

        Rows are the joints, followed for the elastic layout by the motor rows of the elastic joints; then
        ``motor=(theta, thetad, thetadd)`` gives the motor states, (N, dof) each (docs/elastic.md)."""
        states = _states(q, qd, qdd) + _motor_states(self.motor_joints, motor, np.shape(q))
        library = _library_for(self._backend, self.motor_joints, states[0].shape[0], self._many_calls)
        if library is not None:
            return library.evaluate("base_regressor", *states, out=out)
        return self._module.base_regressor(*states, out=out)

    def values(self, standard_values) -> np.ndarray:
        return self.grouping @ np.asarray(standard_values, dtype=float)

    def inverse_dynamics(self, q, qd, qdd, base_values, *, motor=None) -> np.ndarray:
        states = _states(q, qd, qdd) + _motor_states(self.motor_joints, motor, np.shape(q))
        return self._module.base_inverse_dynamics(*states, np.asarray(base_values, dtype=float))


class Robot:
    """A robot model with its generated regressors (derived once and cached on disk)."""

    def __init__(self, model: RobotModel, terms: tuple[str, ...] | None = None):
        from robid.model.terms import default_terms, normalise_terms

        self.model = model
        self.terms = normalise_terms(terms, model) if terms is not None else default_terms(model)
        #: whether the terms were given (else the defaults: identification may choose the elastic layout from the
        #: data, robid.identification.choices)
        self.terms_given = terms is not None
        self._module = None
        self._backend = None
        self._torque_terms = None  # (base parameters for many calls, nominal base values)
        self._meta = None
        self._parameters = None

    def _compile(self):
        if self._module is None:
            from robid.symbolic import cache

            key = cache.model_key(self.model, self.terms)
            entry = cache.lookup(key)  # None when missing or corrupt (content hashes checked)
            if entry is None:
                from robid.symbolic.derive import compile_model  # imports sympy: only on a cache miss

                entry = compile_model(self.model, self.terms)  # derives once across processes (a file lock)
            path, meta = entry
            sha = meta.get("files", {}).get("model.py", "")
            self._module = load_module_cached(path / "model.py", f"robid_gen_{meta['key']}", sha)
            self._meta = meta
            if meta.get("closed_chain", {}).get("projection") == "numeric":  # loops solved numerically
                from robid.dynamics.closed_chain import ClosedChainModule
                from robid.model.closure import LoopClosure

                self._module = ClosedChainModule(self._module, LoopClosure(self.model))
                return self._module
            from robid.dynamics.compiled import compiled_backend

            self._backend = compiled_backend(
                path, self.model.dof, len(meta["parameter_names"]), len(meta["base"]["indices"])
            )
        return self._module

    @property
    def _c(self):
        """The compiled library, built and loaded now if it was not (robid.dynamics.compiled), or None: the numpy
        code. The regressors use it for large calls and for callers that make many (robid.dynamics.compiled)."""
        self._compile()
        return self._backend.library() if self._backend is not None else None

    @property
    def meta(self) -> dict:
        self._compile()
        return self._meta

    @property
    def name(self) -> str:
        return self.model.name

    @property
    def dof(self) -> int:
        return self.model.dof

    @property
    def joint_names(self) -> list[str]:
        return self.model.joint_names

    @property
    def parameter_names(self) -> list[str]:
        return list(self.meta["parameter_names"])

    @property
    def parameters(self) -> np.ndarray:
        """Nominal standard parameter values from the robot file."""
        if self._parameters is None:
            from robid.model.terms import nominal_values

            self._parameters = nominal_values(self.model, self.terms)
        return self._parameters.copy()

    @property
    def motor_joints(self) -> tuple[int, ...]:
        """0-based indices of the joints with a motor row (elastic layout: ``stiffness`` among the terms)."""
        names = self.meta.get("motor_joints", [])
        return tuple(self.joint_names.index(n) for n in names)

    @property
    def rows(self) -> int:
        """Rows of the regressor per sample: dof, plus one motor row per elastic joint in the elastic layout."""
        return self.dof + len(self.motor_joints)

    def regressor(self, q, qd, qdd, out=None, *, motor=None) -> np.ndarray:
        """(N, rows, P) standard regressor: tau = Y @ parameters; ``out`` an optional buffer to fill and return.

        For the elastic layout ``motor=(theta, thetad, thetadd)``, each (N, dof), gives the motor states (motor
        angle / gear ratio); the rows are then the link equations followed by the motor equations of the elastic
        joints (docs/elastic.md section 2)."""
        module = self._compile()
        states = _states(q, qd, qdd, self.dof) + _motor_states(self.motor_joints, motor, np.shape(q))
        library = _library_for(self._backend, self.motor_joints, states[0].shape[0])
        if library is not None:
            return library.evaluate("regressor", *states, out=out)
        return module.regressor(*states, out=out)

    def inverse_dynamics(self, q, qd, qdd, parameters=None, *, motor=None) -> np.ndarray:
        """(N, rows) joint torques with the nominal (or given) standard parameters (``motor`` as in
        :meth:`regressor`)."""
        p = self.parameters if parameters is None else np.asarray(parameters, dtype=float)
        states = _states(q, qd, qdd, self.dof) + _motor_states(self.motor_joints, motor, np.shape(q))
        return self._compile().inverse_dynamics(*states, p)

    def inverse_dynamics_for_many_calls(self, q, qd, qdd) -> np.ndarray:
        """(N, dof) nominal torques for a caller that evaluates them many times on small batches (the excitation
        design's torque limits): the base regressor in its ``for_many_calls`` form (the C library) times the
        nominal base values -- :meth:`inverse_dynamics` to rounding (1e-15 relative on the built-in robots), about
        5x faster on a design's batches of a few hundred samples; the elastic layout, whose motor rows need motor
        states, through :meth:`inverse_dynamics`."""
        if self.motor_joints:
            return self.inverse_dynamics(q, qd, qdd)
        if self._torque_terms is None:
            base = self.base_parameters()
            self._torque_terms = (base.for_many_calls(), base.values(self.parameters))
        base, values = self._torque_terms
        return base.regressor(q, qd, qdd) @ values

    def base_parameters(self) -> BaseParameters:
        module = self._compile()
        b = self._meta["base"]
        names = self._meta["parameter_names"]
        return BaseParameters(
            names=[names[k] for k in b["indices"]],
            expressions=list(b["expressions"]),
            indices=list(b["indices"]),
            grouping=np.array(b["grouping"], dtype=float),
            grouping_exact=b["grouping_exact"],
            classes=dict(b["classes"]),
            exact=bool(b["exact"]),
            _module=module,
            _backend=self._backend,
            motor_joints=self.motor_joints,
        )


def _library_for(backend, motor_joints: tuple[int, ...], n: int, many_calls: bool = False):
    """The C library for a call of ``n`` samples, or None: the numpy code (no library, a small call from a caller
    that makes few, or the elastic layout, whose motor rows only the numpy code has)."""
    return None if backend is None or motor_joints else backend.for_samples(n, many_calls)


_MODULES: dict[str, object] = {}


def load_module_cached(path: Path, name: str, sha256: str = ""):
    """Import a generated module once per process (per content hash: an entry derived again after it was found
    corrupt is imported anew)."""
    if (name, sha256) not in _MODULES:
        from robid.symbolic.cache import load_module

        _MODULES[name, sha256] = load_module(path, name)
    return _MODULES[name, sha256]


def _states(q, qd, qdd, dof: int | None = None, names=("q", "qd", "qdd")):
    arrays = []
    for name, x in zip(names, (q, qd, qdd), strict=True):
        a = np.asarray(x, dtype=float)
        if a.ndim == 1:
            a = a[None, :]
        if a.ndim != 2 or (dof is not None and a.shape[1] != dof):
            raise RobidInputError(f"{name}: expected shape (N, {dof}), got {np.shape(x)}")
        arrays.append(a)
    if not arrays[0].shape == arrays[1].shape == arrays[2].shape:
        raise RobidInputError(f"{', '.join(names)}: shapes differ")
    return arrays


def _motor_states(motor_joints: tuple[int, ...], motor, shape) -> list:
    """The motor states (theta, thetad, thetadd) the elastic layout needs, checked; none for a rigid layout."""
    if not motor_joints:
        if motor is not None:
            raise RobidInputError("motor: motor states given, but the terms have no elastic layout ('stiffness')")
        return []
    if motor is None or len(motor) != 3:
        raise RobidInputError("motor: the elastic layout needs motor=(theta, thetad, thetadd), each shaped like q")
    arrays = _states(*motor, shape[-1] if len(shape) else None, names=("theta", "thetad", "thetadd"))
    expected = tuple(shape) if len(shape) == 2 else (1, *shape)
    if arrays[0].shape != expected:
        raise RobidInputError(f"motor: expected the shape of q {tuple(shape)}, got {arrays[0].shape}")
    return arrays


def load_robot(robot: str | Path | RobotModel, terms=None) -> Robot:
    """Load a robot file (YAML, URDF, MJCF) or a built-in robot by name; see docs/core_api.md."""
    model = robot if isinstance(robot, RobotModel) else read_robot(robot)
    return Robot(model, terms)
