"""The columns of a nonlinear friction fit (robid.estimation.nonlinear_friction, module docstring): which base
columns each joint's request keeps, drops and replaces, the Stribeck, sigmoid and ripple columns and their
derivatives in the nonlinear parameters, and the change from the fit's own parameterisation (fs - fc) to the
reported one (fs)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from robid.errors import RobidInputError
from robid.estimation.friction_problem import ColumnFunction, FrictionProblem, FrictionRequest


@dataclass(frozen=True)
class _Joint:
    """One joint with a request that is not plain linear: its row, the W column of fc_J (kept for Stribeck,
    dropped for sigmoid), and the names of its new linear and nonlinear parameters."""

    row: int
    name: str
    request: FrictionRequest
    fc: int | None
    ripple_names: tuple[str, ...]
    varying_names: tuple[str, ...]  # fs_J (Stribeck, reported; the fit uses fs - fc) or fsa<k>_J
    nonlinear_names: tuple[str, ...]  # vs_J or fss<k>_J, fso<k>_J (alternating per sigmoid)
    log_scale: tuple[bool, ...]


@dataclass(frozen=True)
class _Layout:
    problem_names: tuple[str, ...]
    joint_names: tuple[str, ...]
    requests: tuple[FrictionRequest, ...]
    joints: tuple[_Joint, ...]
    kept: tuple[int, ...]  # W columns kept

    @property
    def ripple_names(self) -> tuple[str, ...]:
        return tuple(n for j in self.joints for n in j.ripple_names)

    @property
    def varying_names(self) -> tuple[str, ...]:
        return tuple(n for j in self.joints for n in j.varying_names)

    @property
    def nonlinear_names(self) -> tuple[str, ...]:
        return tuple(n for j in self.joints for n in j.nonlinear_names)

    @property
    def log_scale(self) -> np.ndarray:
        return np.array([b for j in self.joints for b in j.log_scale], dtype=bool)

    @property
    def linear_names(self) -> tuple[str, ...]:
        return tuple(self.problem_names[i] for i in self.kept) + self.ripple_names + self.varying_names

    @property
    def names(self) -> tuple[str, ...]:
        return self.linear_names + self.nonlinear_names


def _requests(models, joint_names: Sequence[str]) -> tuple[FrictionRequest, ...]:
    """Per joint the :class:`FrictionRequest` of ``models`` (joint name or 0-based row -> request or model name;
    a sequence of one entry per joint); joints not named are linear."""
    if models is None:
        return tuple(FrictionRequest() for _ in joint_names)
    if not isinstance(models, Mapping):
        models = list(models)
        if len(models) != len(joint_names):
            raise RobidInputError(f"friction models: {len(models)} entries for {len(joint_names)} joints")
        models = dict(enumerate(models))
    out = [FrictionRequest() for _ in joint_names]
    for key, value in models.items():
        if isinstance(key, str):
            if key not in joint_names:
                raise RobidInputError(f"friction models: no joint named {key!r} (joints: {', '.join(joint_names)})")
            row = list(joint_names).index(key)
        elif isinstance(key, int) and not isinstance(key, bool) and 0 <= key < len(joint_names):
            row = key
        else:
            raise RobidInputError(f"friction models: {key!r} is neither a joint name nor a row 0.."
                                  f"{len(joint_names) - 1}")
        out[row] = value if isinstance(value, FrictionRequest) else FrictionRequest(str(value))
    return tuple(out)


def _layout(problem: FrictionProblem, requests: tuple[FrictionRequest, ...]) -> _Layout:
    names, W = problem.names, problem.W
    joints, dropped = [], set()
    for row, (joint, req) in enumerate(zip(problem.joint_names, requests, strict=True)):
        if req.model == "linear" and not req.ripple:
            continue
        fc_name = f"fc_{joint}"
        fc = names.index(fc_name) if fc_name in names else None
        if fc is not None:
            others = np.delete(W[:, :, fc], row, axis=1)
            if np.any(others != 0):
                raise RobidInputError(f"friction: {fc_name} enters other joints' rows (a coupled drive?): a "
                                      f"{req.model} model needs the Coulomb column of joint {joint} alone")
        if req.model == "stribeck" and fc is None:
            raise RobidInputError(f"friction: the stribeck model of joint {joint} needs the base parameter "
                                  f"{fc_name} (terms with coulomb)")
        if req.model == "sigmoid" and fc is not None:
            dropped.add(fc)
        ripple = tuple(f"{p}{h}_{joint}" for h in req.ripple for p in ("frc", "frs"))
        if req.model == "stribeck":
            varying, nonlinear, logs = (f"fs_{joint}",), (f"vs_{joint}",), (True,)
        elif req.model == "sigmoid":
            k = range(1, req.sigmoids + 1)
            varying = tuple(f"fsa{i}_{joint}" for i in k)
            nonlinear = tuple(n for i in k for n in (f"fss{i}_{joint}", f"fso{i}_{joint}"))
            logs = tuple(b for _ in k for b in (True, False))
        else:
            varying, nonlinear, logs = (), (), ()
        clash = [n for n in ripple + varying + nonlinear if n in names]
        if clash:
            raise RobidInputError(f"friction: the base parameters already have {', '.join(clash)}")
        joints.append(_Joint(row, joint, req, fc, ripple, varying, nonlinear, logs))
    kept = tuple(i for i in range(len(names)) if i not in dropped)
    return _Layout(names, problem.joint_names, requests, tuple(joints), kept)


# ---- columns -----------------------------------------------------------------------------------------------------


def _stribeck(v, s, vs):
    """E = s exp(-(v/vs)^2) and dE/dvs."""
    e = s * np.exp(-((v / vs) ** 2))
    return e, e * 2.0 * v**2 / vs**3


def _sigmoid(v, b, c):
    """S = l(b (v + c)) - l(b c) (Gaz eq. 3 per unit amplitude, tanh form) and dS/db, dS/dc."""
    x, x0 = 0.5 * b * (v + c), 0.5 * b * c
    s2, s20 = 1.0 / np.cosh(np.clip(x, -300, 300)) ** 2, 1.0 / np.cosh(np.clip(x0, -300, 300)) ** 2
    value = 0.5 * (np.tanh(x) - np.tanh(x0))
    return value, 0.25 * ((v + c) * s2 - c * s20), 0.25 * b * (s2 - s20)


def _varying_function(layout: _Layout, p: np.ndarray) -> ColumnFunction:
    """g(q, v, s) -> [varying columns (one per varying name) | d(column)/d(p_i) (one per nonlinear parameter)]."""

    def g(q, v, s):
        values, derivatives = [], []
        k = 0
        for j in layout.joints:
            vj, sj = v[:, j.row], s[:, j.row]
            if j.request.model == "stribeck":
                e, de = _stribeck(vj, sj, p[k])
                values.append(e)
                derivatives.append(de)
                k += 1
            elif j.request.model == "sigmoid":
                for _ in range(j.request.sigmoids):
                    value, db, dc = _sigmoid(vj, p[k], p[k + 1])
                    values.append(value)
                    derivatives += [db, dc]
                    k += 2
        n = v.shape[0]
        return np.column_stack(values + derivatives) if values else np.zeros((n, 0))

    return g


def _ripple_function(layout: _Layout) -> ColumnFunction:
    def g(q, v, s):
        cols = []
        for j in layout.joints:
            for h in j.request.ripple:
                cols += [s[:, j.row] * np.cos(h * q[:, j.row]), s[:, j.row] * np.sin(h * q[:, j.row])]
        return np.column_stack(cols) if cols else np.zeros((v.shape[0], 0))

    return g


def _nonlinear_owner(layout: _Layout) -> tuple[list[int], list[int]]:
    """Per nonlinear parameter: the varying column it moves and that column's row."""
    column, rows = [], []
    c = 0
    for j in layout.joints:
        if j.request.model == "stribeck":
            column.append(c)
            rows.append(j.row)
            c += 1
        elif j.request.model == "sigmoid":
            for _ in range(j.request.sigmoids):
                column += [c, c]
                rows += [j.row, j.row]
                c += 1
    return column, rows


def _varying_rows(layout: _Layout) -> list[int]:
    rows = []
    for j in layout.joints:
        rows += [j.row] * len(j.varying_names)
    return rows


def _ripple_rows(layout: _Layout) -> list[int]:
    rows = []
    for j in layout.joints:
        rows += [j.row] * len(j.ripple_names)
    return rows


def _place(columns: np.ndarray, rows: list[int], used: np.ndarray) -> np.ndarray:
    """(N, k) columns -> (N, dof, k), column i in row rows[i], zero on the rows not used."""
    n, dof = used.shape
    out = np.zeros((n, dof, columns.shape[1]))
    for i, r in enumerate(rows):
        out[:, r, i] = columns[:, i] * used[:, r]
    return out


def _fixed_columns(problem: FrictionProblem, layout: _Layout) -> np.ndarray:
    used = problem.used
    ripple = _place(problem.signals.evaluate(_ripple_function(layout)), _ripple_rows(layout), used) \
        if layout.ripple_names else np.zeros(problem.W.shape[:2] + (0,))
    return np.concatenate([problem.W[:, :, list(layout.kept)], ripple], axis=2)


def _varying_columns(problem: FrictionProblem, layout: _Layout, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    used = problem.used
    nv = len(layout.varying_names)
    if nv == 0:
        empty = np.zeros(problem.W.shape[:2] + (0,))
        return empty, empty
    cols = problem.signals.evaluate(_varying_function(layout, p))
    column, rows = _nonlinear_owner(layout)
    return _place(cols[:, :nv], _varying_rows(layout), used), _place(cols[:, nv:], rows, used)


def _reporting_columns(layout: _Layout, fixed: np.ndarray, varying: np.ndarray) -> np.ndarray:
    """[fixed | varying] with fc_J's column s replaced by s (1 - E) on Stribeck joints: the columns of (fc, fs)
    instead of (fc, fs - fc)."""
    fixed = fixed.copy()
    kept = list(layout.kept)
    c = 0
    for j in layout.joints:
        if j.request.model == "stribeck":
            fixed[:, :, kept.index(j.fc)] -= varying[:, :, c]
        c += len(j.varying_names)
    return np.concatenate([fixed, varying], axis=2)


def _reporting_values(layout: _Layout, beta: np.ndarray, nf: int) -> np.ndarray:
    """The fit's linear coefficients ([fixed | varying], fs - fc on Stribeck joints) as reported (fs)."""
    beta = np.array(beta, dtype=float, copy=True)
    kept = list(layout.kept)
    c = 0
    for j in layout.joints:
        if j.request.model == "stribeck":
            beta[nf + c] += beta[kept.index(j.fc)]  # fs = fc + (fs - fc)
        c += len(j.varying_names)
    return beta


def _sensitivity(layout: _Layout, X: np.ndarray, derivative: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """d(prediction)/d(p) (N, dof, nn): each nonlinear parameter's varying column derivative times the column's
    coefficient in the fit's own parameterisation (fs - fc for Stribeck)."""
    column, _ = _nonlinear_owner(layout)
    nf = X.shape[2] - len(layout.varying_names)
    kept = list(layout.kept)
    coefficient = beta[nf:].copy()
    c = 0
    for j in layout.joints:
        if j.request.model == "stribeck":
            coefficient[c] -= beta[kept.index(j.fc)]
        c += len(j.varying_names)
    return derivative * coefficient[column][None, None, :]


_FRICTION_PREFIXES = ("fv", "fc", "f0")


def _joint_parameters(layout: _Layout, row: int) -> tuple[str, ...]:
    joint = layout.joint_names[row]
    base = [n for n in layout.linear_names if n in {f"{p}_{joint}" for p in _FRICTION_PREFIXES}]
    extra = [n for j in layout.joints if j.row == row for n in j.ripple_names + j.varying_names + j.nonlinear_names]
    return tuple(base + extra)


