"""Physical consistency: checks of standard and base parameter sets, and a physically consistent estimate.

Conventions (interfaces.md 1.3, docs/core_api.md): per link ``m_J, mx_J, my_J, mz_J, Ixx_J, Ixy_J, Ixz_J, Iyy_J,
Iyz_J, Izz_J`` with ``h = (mx, my, mz) = m c`` and the inertia tensor ``I`` about the frame origin, products
being the tensor entries (``Ixy = -int x y dm``). Per joint ``Ia_J``, ``fv_J``, ``fc_J``, ``f0_J``, ``k_J``,
``d_J``.

A body is physically consistent iff its pseudo-inertia (Wensing, Kim & Slotine, RA-L 2017)

    J = [[Sigma, h], [h^T, m]],   Sigma = int r r^T dm = 0.5 tr(I) 1 - I

is positive semidefinite (a positive-definite J is the density-realisable interior). This implies ``m >= 0``
and the triangle inequalities of the inertia about the COM, and of the diagonal of the inertia about any point
(``Ixx + Iyy - Izz = 2 int z^2 dm >= 0``). Reflected rotor inertia, viscous and Coulomb friction, stiffness and
damping must be non-negative; offsets are free.

With only base parameters (``beta = G theta``) the question is whether *some* consistent standard set
reproduces them: :func:`check_base_consistency` solves that semidefinite feasibility problem (nearest consistent
set) and reports which base parameters would have to move.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from robid.errors import RobidInputError
from robid.estimation import _lsq
from robid.model.robot_model import INERTIAL_PARAMETERS

#: Per-joint parameters that must be non-negative, with what they are.
NONNEGATIVE = {
    "Ia": "reflected rotor inertia",
    "fv": "viscous friction",
    "fc": "Coulomb friction",
    "k": "joint stiffness",
    "d": "joint damping",
}


# --- parameter layout ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ParameterLayout:
    """Where each link's ten inertial parameters and each signed per-joint parameter sit in a name list."""

    links: tuple[tuple[str, tuple[int, ...]], ...]  # (link, indices in INERTIAL_PARAMETERS order)
    nonnegative: tuple[tuple[int, str, str], ...]  # (index, prefix, joint)
    incomplete_links: tuple[str, ...] = ()


def parameter_layout(names: Sequence[str]) -> ParameterLayout:
    """Parse ``prefix_J`` names (the joint name may itself contain underscores)."""
    rigid: dict[str, dict[str, int]] = {}
    nonneg = []
    for i, name in enumerate(names):
        prefix, sep, joint = name.partition("_")
        if not sep or prefix == "comp":
            continue
        if prefix in INERTIAL_PARAMETERS:
            rigid.setdefault(joint, {})[prefix] = i
        elif prefix in NONNEGATIVE:
            nonneg.append((i, prefix, joint))
    links, incomplete = [], []
    for joint, fields in rigid.items():
        if len(fields) == len(INERTIAL_PARAMETERS):
            links.append((joint, tuple(fields[f] for f in INERTIAL_PARAMETERS)))
        else:
            incomplete.append(joint)
    return ParameterLayout(tuple(links), tuple(nonneg), tuple(incomplete))


def pseudo_inertia(p: Sequence[float]) -> np.ndarray:
    """4x4 pseudo-inertia of ``(m, mx, my, mz, Ixx, Ixy, Ixz, Iyy, Iyz, Izz)`` (inertia about the frame origin)."""
    m, hx, hy, hz, xx, xy, xz, yy, yz, zz = (float(v) for v in p)
    inertia = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    sigma = 0.5 * np.trace(inertia) * np.eye(3) - inertia
    J = np.zeros((4, 4))
    J[:3, :3] = sigma
    J[:3, 3] = J[3, :3] = (hx, hy, hz)
    J[3, 3] = m
    return J


# --- check of a standard set ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class LinkVerdict:
    link: str
    consistent: bool
    reasons: tuple[str, ...]
    mass: float
    pseudo_inertia_min_eigenvalue: float
    com: tuple[float, float, float] | None  # None when m <= 0
    principal_moments_com: tuple[float, float, float] | None


@dataclass(frozen=True)
class JointVerdict:
    joint: str
    consistent: bool
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class ConsistencyReport:
    consistent: bool
    links: tuple[LinkVerdict, ...]
    joints: tuple[JointVerdict, ...]
    notes: tuple[str, ...] = ()

    def reasons(self) -> list[str]:
        out = [f"link {v.link}: {r}" for v in self.links for r in v.reasons]
        return out + [f"joint {v.joint}: {r}" for v in self.joints for r in v.reasons]


def _triangle(moments: np.ndarray, labels: Sequence[str], tol: float) -> list[str]:
    a, b, c = moments
    out = []
    for x, y, z, (lx, ly, lz) in (
        (a, b, c, labels),
        (b, c, a, labels[1:] + labels[:1]),
        (c, a, b, labels[2:] + labels[:2]),
    ):
        if x + y < z - tol:
            out.append(f"{lx} + {ly} = {x + y:.6g} < {lz} = {z:.6g}")
    return out


def check_link(link: str, p: Sequence[float], rel_tol: float = 1e-6) -> LinkVerdict:
    """Verdict on one body's ten standard parameters, with every violated condition stated."""
    p = np.asarray(p, dtype=float)
    J = pseudo_inertia(p)
    scale = max(float(np.max(np.abs(J))), 1e-300)
    tol = rel_tol * scale
    m = float(p[0])
    h = p[1:4]
    inertia = J[:3, :3].trace() * np.eye(3) - J[:3, :3]  # back to I
    reasons = []
    if m < -tol:
        reasons.append(f"negative mass m = {m:.6g}")
    elif abs(m) <= tol and (np.max(np.abs(h)) > tol or np.max(np.abs(inertia)) > tol):
        reasons.append("zero mass with non-zero first moment or inertia")
    lam = np.linalg.eigvalsh(J)
    if lam[0] < -tol:
        reasons.append(f"pseudo-inertia not positive semidefinite (min eigenvalue {lam[0]:.6g})")
    diag = np.diag(inertia)
    for r in _triangle(diag, ("Ixx", "Iyy", "Izz"), tol):
        reasons.append(f"triangle inequality violated by the diagonal about the frame origin: {r}")
    com = principal = None
    if m > tol:
        c = h / m
        inertia_c = inertia - m * (c @ c * np.eye(3) - np.outer(c, c))
        principal = np.linalg.eigvalsh(inertia_c)
        com = tuple(float(v) for v in c)
        if principal[0] < -tol:
            reasons.append(f"inertia about the COM not positive semidefinite (principal moments {principal})")
        for r in _triangle(principal, ("I1", "I2", "I3"), tol):
            reasons.append(f"triangle inequality violated by the principal moments about the COM: {r}")
        principal = tuple(float(v) for v in principal)
    return LinkVerdict(link, not reasons, tuple(reasons), m, float(lam[0]), com, principal)


def check_physical_consistency(
    standard_values: Sequence[float] | np.ndarray, parameter_names: Sequence[str], *, rel_tol: float = 1e-6
) -> ConsistencyReport:
    """Per-link and per-joint verdicts with reasons.

    Checks: negative mass; pseudo-inertia not PSD; triangle inequalities of the diagonal about the frame origin
    and of the principal moments about the COM; negative reflected rotor inertia, viscous or Coulomb friction,
    stiffness or damping. ``rel_tol`` is relative to the largest entry of the link's pseudo-inertia (absolute
    for the per-joint terms), so that solver round-off on a boundary is not reported.
    """
    values = np.asarray(standard_values, dtype=float)
    names = list(parameter_names)
    if values.shape != (len(names),):
        raise RobidInputError(f"standard values: {values.shape} values for {len(names)} names")
    layout = parameter_layout(names)
    links = tuple(check_link(link, values[list(idx)], rel_tol) for link, idx in layout.links)
    per_joint: dict[str, list[str]] = {}
    for i, prefix, joint in layout.nonnegative:
        per_joint.setdefault(joint, [])
        if values[i] < -rel_tol * max(1.0, abs(values[i])):
            per_joint[joint].append(f"negative {NONNEGATIVE[prefix]} {names[i]} = {values[i]:.6g}")
    joints = tuple(JointVerdict(j, not r, tuple(r)) for j, r in per_joint.items())
    notes = []
    if layout.incomplete_links:
        notes.append("links without all ten inertial parameters, not checked: " + ", ".join(layout.incomplete_links))
    ok = all(v.consistent for v in links) and all(v.consistent for v in joints)
    return ConsistencyReport(ok, links, joints, tuple(notes))


# --- the semidefinite programme -------------------------------------------------------------------------------


def _constraints(theta, layout: ParameterLayout, names, mass_bounds, com_boxes, margin):
    import cvxpy as cp

    cons = []
    link_names = {link for link, _ in layout.links}
    for key in list(mass_bounds or {}) + list(com_boxes or {}):
        if key not in link_names:
            raise RobidInputError(f"bounds: unknown link {key!r} (links: {sorted(link_names)})")
    for link, idx in layout.links:
        m, hx, hy, hz, xx, xy, xz, yy, yz, zz = (theta[i] for i in idx)
        J = cp.Variable((4, 4), PSD=True, name=f"J_{link}")
        cons += [
            J[0, 0] + margin == 0.5 * (-xx + yy + zz),
            J[1, 1] + margin == 0.5 * (xx - yy + zz),
            J[2, 2] + margin == 0.5 * (xx + yy - zz),
            J[0, 1] == -xy,
            J[0, 2] == -xz,
            J[1, 2] == -yz,
            J[0, 3] == hx,
            J[1, 3] == hy,
            J[2, 3] == hz,
            J[3, 3] + margin == m,
        ]
        if mass_bounds and link in mass_bounds:
            lo, hi = mass_bounds[link]
            if lo is not None:
                cons.append(m >= float(lo))
            if hi is not None:
                cons.append(m <= float(hi))
        if com_boxes and link in com_boxes:
            lo, hi = (np.asarray(b, dtype=float) for b in com_boxes[link])
            for h, a, b in zip((hx, hy, hz), lo, hi, strict=True):
                cons += [h >= a * m, h <= b * m]
    for i, _prefix, _joint in layout.nonnegative:
        cons.append(theta[i] >= 0)
    return cons


@dataclass(frozen=True)
class SolveOutcome:
    solved: bool
    status: str
    solver: str
    value: np.ndarray | None
    objective: float
    notes: tuple[str, ...]


def _solve(objective, cons, theta, solver: str, fallback: str | None) -> SolveOutcome:
    """Solve; a certified infeasible/unbounded verdict is final, a solver error or an inaccurate optimum moves
    on to the fallback solver (and the notes say so)."""
    import warnings

    import cvxpy as cp

    problem = cp.Problem(cp.Minimize(objective), cons)
    notes: list[str] = []
    tried = [solver] + ([fallback] if fallback and fallback != solver else [])
    inaccurate: SolveOutcome | None = None
    status, used = "not solved", solver
    for s in tried:
        used = s
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            try:
                problem.solve(solver=s)
                status = str(problem.status)
            except cp.error.SolverError as exc:
                status = f"solver error: {exc}"
        if status == cp.OPTIMAL:
            if s != tried[0]:
                notes.append(f"solved with the fallback solver {s}")
            return SolveOutcome(
                True, status, s, np.asarray(theta.value, dtype=float), float(problem.value), tuple(notes)
            )
        notes.append(f"solver {s}: {status}")
        if status in (cp.INFEASIBLE, cp.UNBOUNDED, cp.INFEASIBLE_INACCURATE, cp.UNBOUNDED_INACCURATE):
            return SolveOutcome(False, status, s, None, float("nan"), tuple(notes))
        if status == cp.OPTIMAL_INACCURATE and inaccurate is None:
            inaccurate = SolveOutcome(True, status, s, np.asarray(theta.value, dtype=float), float(problem.value), ())
    if inaccurate is not None:
        notes.append(f"using the inaccurate optimum of {inaccurate.solver}; constraints are re-checked")
        return SolveOutcome(
            True, inaccurate.status, inaccurate.solver, inaccurate.value, inaccurate.objective, tuple(notes)
        )
    return SolveOutcome(False, status, used, None, float("nan"), tuple(notes))


@dataclass(frozen=True)
class ConsistentResult:
    """Physically consistent estimate of the full standard set.

    ``solved`` is False when the solver failed; then ``values`` and ``base_values`` are NaN and ``notes`` say
    why; no other estimate is put in their place.
    """

    method: str
    solved: bool
    status: str
    solver: str
    parameter_names: tuple[str, ...]
    values: np.ndarray
    base_names: tuple[str, ...] | None
    base_values: np.ndarray | None
    objective: float
    fit_term: float
    regularization_term: float
    residual: np.ndarray | None  # (N, dof) for the data form
    consistency: ConsistencyReport | None
    notes: tuple[str, ...] = field(default_factory=tuple)


def _regularizer(theta, P, nominal, regularization, regularization_weights):
    import cvxpy as cp

    if regularization <= 0:
        return None, None
    if nominal is None:
        raise RobidInputError("consistent estimate: regularization > 0 needs nominal values")
    nominal = np.asarray(nominal, dtype=float)
    if nominal.shape != (P,):
        raise RobidInputError(f"consistent estimate: nominal has shape {nominal.shape}, expected ({P},)")
    rw = np.ones(P) if regularization_weights is None else np.asarray(regularization_weights, dtype=float)
    return regularization * cp.sum_squares(cp.multiply(rw, theta - nominal)), (nominal, rw)


def _consistent_core(
    R: np.ndarray,
    z: np.ndarray,
    names: tuple[str, ...],
    *,
    method: str,
    nominal,
    regularization,
    regularization_weights,
    mass_bounds,
    com_boxes,
    margin,
    solver,
    fallback_solver,
    notes: list[str],
):
    import cvxpy as cp

    P = len(names)
    layout = parameter_layout(names)
    if layout.incomplete_links:
        notes.append("links without all ten inertial parameters get no LMI: " + ", ".join(layout.incomplete_links))
    if not layout.links:
        notes.append("no complete link found in the parameter names: no LMI constraint applied")
    theta = cp.Variable(P, name="theta")
    fit = cp.sum_squares(R @ theta - z)
    reg, reg_data = _regularizer(theta, P, nominal, regularization, regularization_weights)
    objective = fit if reg is None else fit + reg
    cons = _constraints(theta, layout, names, mass_bounds, com_boxes, margin)
    out = _solve(objective, cons, theta, solver, fallback_solver)
    notes.extend(out.notes)
    if not out.solved:
        notes.append("no physically consistent estimate is reported (the unconstrained estimate is not substituted)")
        nan = np.full(P, np.nan)
        return out, nan, float("nan"), float("nan"), None
    value = out.value
    fit_v = float(np.sum((R @ value - z) ** 2))
    reg_v = 0.0
    if reg_data is not None:
        reg_v = float(regularization * np.sum((reg_data[1] * (value - reg_data[0])) ** 2))
    report = check_physical_consistency(value, names, rel_tol=1e-5)
    if not report.consistent:
        notes.append("solution violates the constraints beyond solver tolerance: " + "; ".join(report.reasons()))
        if out.status != "optimal":
            notes.append("inaccurate and inconsistent: no physically consistent estimate is reported")
            out = SolveOutcome(False, out.status, out.solver, None, float("nan"), out.notes)
            return out, np.full(P, np.nan), float("nan"), float("nan"), report
    return out, value, fit_v, reg_v, report


def consistent_estimate(
    W: np.ndarray,
    tau: np.ndarray,
    parameter_names: Sequence[str],
    *,
    grouping: np.ndarray | None = None,
    base_names: Sequence[str] | None = None,
    noise_std: Sequence[float] | np.ndarray | None = None,
    nominal: Sequence[float] | np.ndarray | None = None,
    regularization: float = 0.0,
    regularization_weights: Sequence[float] | np.ndarray | None = None,
    mass_bounds: Mapping[str, tuple[float | None, float | None]] | None = None,
    com_boxes: Mapping[str, tuple[Sequence[float], Sequence[float]]] | None = None,
    margin: float = 0.0,
    solver: str = "CLARABEL",
    fallback_solver: str | None = "SCS",
) -> ConsistentResult:
    """Physically consistent standard parameters from data (semidefinite programme, Wensing et al. 2017).

    ``W`` is either the standard regressor ``(N, dof, P)`` or the base regressor ``(N, dof, nb)`` together with
    ``grouping`` (nb x P) so that ``W_std = W @ grouping``. Solves

        min_theta  sum_j w_j^2 ||W_std,j theta - tau_j||^2 + lambda ||diag(r) (theta - theta_nom)||^2
        s.t.       J_k(theta) >= margin (PSD, every link k); Ia, fv, fc, k, d >= 0;
                   m_lo <= m_k <= m_hi;  m_k c_lo <= h_k <= m_k c_hi   (optional bounds)

    with ``w_j = 1/noise_std_j`` (default: ``1/sigma_j`` of a two-step WLS of the unconstrained problem). The
    data term is reduced by a QR factorisation to a P x P problem. Without regularisation the standard set is
    not unique (only its base combination is); give ``nominal`` and a small ``regularization`` to pick the one
    closest to CAD values. Returns the standard set and, when ``grouping`` is given, the implied base values.
    """
    W, tau, _ = _lsq.check_problem(W, tau, None)
    names = tuple(parameter_names)
    notes: list[str] = []
    if grouping is not None:
        G = np.asarray(grouping, dtype=float)
        if G.shape != (W.shape[2], len(names)):
            raise RobidInputError(f"grouping: shape {G.shape}, expected ({W.shape[2]}, {len(names)})")
        Wstd = W @ G
    else:
        G = None
        Wstd = W
        if W.shape[2] != len(names):
            raise RobidInputError(f"regressor has {W.shape[2]} columns for {len(names)} parameter names")
    n, dof, P = Wstd.shape
    if noise_std is None:
        from robid.estimation.estimators import wls

        first = wls(W, tau)
        noise = first.sigma
        notes.append("per-joint weights 1/sigma_j from a two-step WLS of the unconstrained problem")
    else:
        noise = np.asarray(noise_std, dtype=float)
        notes.append("per-joint weights 1/noise_std (given)")
    w = _lsq.rows_of_joint(1.0 / noise, n)
    Aw = Wstd.reshape(n * dof, P) * w[:, None]
    yw = tau.reshape(n * dof) * w
    q, R = np.linalg.qr(Aw, mode="reduced")
    z = q.T @ yw
    const = float(yw @ yw - z @ z)
    out, value, fit_v, reg_v, report = _consistent_core(
        R,
        z,
        names,
        method="data",
        nominal=nominal,
        regularization=regularization,
        regularization_weights=regularization_weights,
        mass_bounds=mass_bounds,
        com_boxes=com_boxes,
        margin=margin,
        solver=solver,
        fallback_solver=fallback_solver,
        notes=notes,
    )
    residual = tau - Wstd @ value if out.solved else None
    base_vals = G @ value if G is not None else None
    return ConsistentResult(
        method="consistent-sdp (data)",
        solved=out.solved,
        status=out.status,
        solver=out.solver,
        parameter_names=names,
        values=value,
        base_names=tuple(base_names) if base_names is not None else None,
        base_values=base_vals,
        objective=out.objective + const if out.solved else float("nan"),
        fit_term=fit_v + const if out.solved else float("nan"),
        regularization_term=reg_v,
        residual=residual,
        consistency=report,
        notes=tuple(notes),
    )


def consistent_from_base(
    base_values: Sequence[float] | np.ndarray,
    covariance: np.ndarray,
    grouping: np.ndarray,
    parameter_names: Sequence[str],
    *,
    base_names: Sequence[str] | None = None,
    nominal: Sequence[float] | np.ndarray | None = None,
    regularization: float = 0.0,
    regularization_weights: Sequence[float] | np.ndarray | None = None,
    mass_bounds: Mapping[str, tuple[float | None, float | None]] | None = None,
    com_boxes: Mapping[str, tuple[Sequence[float], Sequence[float]]] | None = None,
    margin: float = 0.0,
    solver: str = "CLARABEL",
    fallback_solver: str | None = "SCS",
) -> ConsistentResult:
    """Consistent standard set nearest to an unconstrained base estimate in the metric of its covariance.

    ``min (G theta - beta)^T Cov^-1 (G theta - beta) + lambda ||diag(r)(theta - theta_nom)||^2`` under the same
    constraints as :func:`consistent_estimate`. For a WLS estimate (``Cov = (A_w^T A_w)^-1``) the fit term equals
    the data term of :func:`consistent_estimate` up to a constant, at the cost of an nb x P problem.
    """
    beta = np.asarray(base_values, dtype=float)
    cov = np.asarray(covariance, dtype=float)
    G = np.asarray(grouping, dtype=float)
    names = tuple(parameter_names)
    nb = beta.shape[0]
    if cov.shape != (nb, nb) or G.shape != (nb, len(names)):
        raise RobidInputError(
            f"consistent_from_base: covariance {cov.shape} / grouping {G.shape} do not match {nb} base values"
        )
    try:
        L = np.linalg.cholesky(0.5 * (cov + cov.T))
    except np.linalg.LinAlgError as exc:
        raise RobidInputError("consistent_from_base: covariance is not positive definite") from exc
    R = np.linalg.solve(L, G)
    z = np.linalg.solve(L, beta)
    notes: list[str] = ["fit term: Mahalanobis distance to the unconstrained base estimate"]
    out, value, fit_v, reg_v, report = _consistent_core(
        R,
        z,
        names,
        method="base",
        nominal=nominal,
        regularization=regularization,
        regularization_weights=regularization_weights,
        mass_bounds=mass_bounds,
        com_boxes=com_boxes,
        margin=margin,
        solver=solver,
        fallback_solver=fallback_solver,
        notes=notes,
    )
    return ConsistentResult(
        method="consistent-sdp (base)",
        solved=out.solved,
        status=out.status,
        solver=out.solver,
        parameter_names=names,
        values=value,
        base_names=tuple(base_names) if base_names is not None else None,
        base_values=G @ value if out.solved else np.full(nb, np.nan),
        objective=out.objective,
        fit_term=fit_v,
        regularization_term=reg_v,
        residual=None,
        consistency=report,
        notes=tuple(notes),
    )


# --- check of a base set -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BaseConsistencyReport:
    """Is there a physically consistent standard set ``theta`` with ``G theta = beta``?

    ``consistent``: the nearest consistent set reproduces every base value within ``rel_tol`` (relative to
    ``max(|beta_i|, floor)``). ``mismatch = G theta* - beta`` for the nearest set ``theta*`` (minimum of the
    scaled 2-norm), ``moved`` the base parameters that had to move beyond tolerance, largest first.
    With a covariance, ``mahalanobis`` = ``sqrt(mismatch^T Cov^-1 mismatch)`` of the nearest set and
    ``statistically_compatible`` says whether it is within the 95 % chi-square quantile (nb degrees of freedom).
    """

    consistent: bool | None  # None when the solver failed
    solved: bool
    status: str
    relative_mismatch: np.ndarray
    mismatch: np.ndarray
    moved: tuple[tuple[str, float, float], ...]  # (name, value, nearest consistent value)
    nearest_standard: np.ndarray
    mahalanobis: float | None
    statistically_compatible: bool | None
    notes: tuple[str, ...] = ()


def check_base_consistency(
    base_values: Sequence[float] | np.ndarray,
    grouping: np.ndarray,
    parameter_names: Sequence[str],
    *,
    base_names: Sequence[str] | None = None,
    covariance: np.ndarray | None = None,
    rel_tol: float = 1e-4,
    floor: float = 1e-6,
    mass_bounds: Mapping[str, tuple[float | None, float | None]] | None = None,
    com_boxes: Mapping[str, tuple[Sequence[float], Sequence[float]]] | None = None,
    solver: str = "CLARABEL",
    fallback_solver: str | None = "SCS",
) -> BaseConsistencyReport:
    """Check whether base values can come from any physically consistent standard set.

    Solves ``min_theta sum_i ((G theta - beta)_i / s_i)^2`` with ``s_i = max(|beta_i|, floor * max|beta|)`` (or,
    with ``covariance``, the Mahalanobis distance ``(G theta - beta)^T Cov^-1 (G theta - beta)``) under the LMIs
    and sign constraints of :func:`consistent_estimate`. A zero optimum means consistent; the verdict uses the
    relative mismatch ``(G theta* - beta)_i / s_i`` of the optimum in either case. Necessary
    conditions such as "D(q) positive definite for all q" are implied by this test (a consistent standard set
    has a PD mass matrix) but are much weaker.
    """
    import cvxpy as cp

    beta = np.asarray(base_values, dtype=float)
    G = np.asarray(grouping, dtype=float)
    names = tuple(parameter_names)
    nb = beta.shape[0]
    if G.shape != (nb, len(names)):
        raise RobidInputError(f"check_base_consistency: grouping {G.shape} does not match ({nb}, {len(names)})")
    bnames = tuple(base_names) if base_names is not None else tuple(f"beta{i}" for i in range(nb))
    s = np.maximum(np.abs(beta), floor * max(float(np.max(np.abs(beta))), 1e-300))
    layout = parameter_layout(names)
    theta = cp.Variable(len(names))
    cons = _constraints(theta, layout, names, mass_bounds, com_boxes, 0.0)
    if covariance is not None:
        cov = np.asarray(covariance, dtype=float)
        if cov.shape != (nb, nb):
            raise RobidInputError(f"check_base_consistency: covariance {cov.shape}, expected ({nb}, {nb})")
        L = np.linalg.cholesky(0.5 * (cov + cov.T))
        objective = cp.sum_squares(np.linalg.solve(L, G) @ theta - np.linalg.solve(L, beta))
    else:
        objective = cp.sum_squares(cp.multiply(1.0 / s, G @ theta - beta))
    out = _solve(objective, cons, theta, solver, fallback_solver)
    notes = list(out.notes)
    if layout.incomplete_links:
        notes.append("links without all ten inertial parameters get no LMI: " + ", ".join(layout.incomplete_links))
    if not out.solved:
        nan = np.full(nb, np.nan)
        notes.append("feasibility problem not solved: no verdict")
        return BaseConsistencyReport(
            None, False, out.status, nan, nan, (), np.full(len(names), np.nan), None, None, tuple(notes)
        )
    mismatch = G @ out.value - beta
    rel = mismatch / s
    order = np.argsort(-np.abs(rel))
    moved = tuple((bnames[i], float(beta[i]), float(beta[i] + mismatch[i])) for i in order if abs(rel[i]) > rel_tol)
    maha = compatible = None
    if covariance is not None:
        from scipy.stats import chi2

        maha = float(np.sqrt(max(mismatch @ np.linalg.solve(cov, mismatch), 0.0)))
        compatible = bool(maha**2 <= chi2.ppf(0.95, nb))
    notes.append(f"tolerance: relative mismatch {rel_tol:g} of max(|beta_i|, {floor:g} max|beta|)")
    return BaseConsistencyReport(
        consistent=not moved,
        solved=True,
        status=out.status,
        relative_mismatch=rel,
        mismatch=mismatch,
        moved=moved,
        nearest_standard=out.value,
        mahalanobis=maha,
        statistically_compatible=compatible,
        notes=tuple(notes),
    )
