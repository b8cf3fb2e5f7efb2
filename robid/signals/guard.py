"""The guard (docs/signals.md section 7b, issue 31): per joint, robid's processing against the plain recipe a
peer would use on the same record -- a zero-phase Butterworth of order 4 at the automatic cut-off (scipy's
``sosfiltfilt``), then central differences (``numpy.gradient``) -- and the better of the two by their predicted
rms acceleration error. The automatic cut-off is robid's rule (:mod:`robid.signals.cutoff`) for each joint on its
own: the one of least predicted error of that joint (a joint at rest gets the lowest candidate).

Predictions. robid's: the path's own (:attr:`robid.signals.path_result.PathResult.predicted_qdd_error`: the
band's risk, equation (1) of :mod:`robid.signals.spectral_band`, or the predicted error of the cut-off,
:mod:`robid.signals.cutoff`). The plain recipe's: equation (2) of :mod:`robid.signals.cutoff` on the whole
record with the central difference's gain sin(w h) / h twice, at the automatic cut-off of that module.

Choice. A joint keeps robid's processing only where its predicted error is below ``MARGIN`` times the plain recipe's
(``MARGIN_PERIODS`` on K >= 2 periods); otherwise it takes the plain recipe: computed on the whole uniform record
exactly as the peer would, then carried onto the path's grid as the path carries the positions (its rows; the K
periods cut and averaged, :attr:`~robid.signals.path_result.PathResult.onto_grid`). On the rows of a window or of
the non-periodic path that is the plain recipe itself; averaged over K periods its error is at most the plain
recipe's over those periods (the mean of K errors has no more power than their mean power). Where the band was given
by the user (``--harmonics``, ``--cutoff``) the comparison is reported, not applied.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy import signal

from robid.defaults import PERIODIC, REPEATING_MODES
from robid.signals.cutoff import PositionSpectra, choose_cutoff
from robid.signals.path_result import PathResult, format_values

#: the plain recipe's Butterworth order (run forwards and backwards)
PLAIN_ORDER = 4
#: robid's processing is kept for a joint only where it predicts less than this share of the plain recipe's
#: error. The predictions rest on spectral estimates of the same record and are not exact: on rest-to-rest and
#: single-joint records (300 joints of seeds 0-29 and 100-129 of tests/oracles/signal_families.py, drawn to set
#: this value) robid's own choice was worse than the plain recipe on 10 joints kept at 0.9, 6 at 0.8, 1 at 0.5 and
#: 0 at 0.4 (while keeping robid's on 17-21 % of them: mostly joints at rest); periodic records predict 1e-2 to
#: 1e-5 of the plain recipe's error and are not affected
MARGIN = 0.4
#: on K >= 2 periods robid's prediction rests on the scatter between periods (or the quiet bins between
#: harmonics), measured apart from the motion, and the plain recipe's own prediction leaves out its errors at the
#: record's ends (filter transients, one-sided differences), which the periods reach: there the plain recipe is
#: taken only where robid's band predicts 10 times its error (the failures of issue 31 predicted 90 to 300 times
#: more). At 1.0 and 3.0 the guard took the plain recipe on joints of closed-loop records whose accelerations step
#: at reversals, where both predictions are rough, and identification got worse
#: (tests/test_elastic_static_deflection.py, tests/test_demo.py, tests/test_nonlinear_friction.py: Stribeck fc 4.5
#: std off at 3.0, within 4 at 10)
MARGIN_PERIODS = 10.0


@dataclass(frozen=True, eq=False)
class PlainRecipe:
    """The plain recipe on the whole uniform record ``t``, ``q``: its automatic ``cutoffs`` (Hz, per joint) and
    its predicted rms qdd error per joint."""

    t: np.ndarray
    q: np.ndarray
    cutoffs: tuple[float, ...]
    predicted: np.ndarray
    spectra: PositionSpectra

    @staticmethod
    def of(t: np.ndarray, q: np.ndarray, spectra: PositionSpectra | None = None, lines: bool = False) -> PlainRecipe:
        """The plain recipe on ``t``, ``q``, from ``spectra`` when given, else from the positions' estimates
        with ``lines`` (:meth:`robid.signals.cutoff.PositionSpectra.of`: on a periodic record the harmonics are
        the motion, and the automatic cut-off must not cut between them)."""
        span = float(t[-1] - t[0])
        rate = (t.size - 1) / span
        spectra = spectra if spectra is not None else PositionSpectra.of(q, rate, lines)
        cutoffs = choose_cutoff(q, rate, PLAIN_ORDER, span, spectra=spectra).own_cutoffs
        predicted = np.array([spectra.error(fc, PLAIN_ORDER, "central")[j] for j, fc in enumerate(cutoffs)])
        return PlainRecipe(t, q, cutoffs, predicted, spectra)

    def derivatives(self, orders: int, joints: np.ndarray) -> list[np.ndarray]:
        """[q, qd, ..., q^(orders)] of the plain recipe for the columns ``joints``, on the whole record."""
        h = float(self.t[1] - self.t[0])
        filtered = []
        for j in joints:
            sos = signal.butter(PLAIN_ORDER, self.cutoffs[j], fs=1.0 / h, output="sos")
            filtered.append(signal.sosfiltfilt(sos, self.q[:, j]))
        out = [np.column_stack(filtered)]
        for _ in range(orders):
            out.append(np.gradient(out[-1], h, axis=0))
        return out


@dataclass(frozen=True)
class GuardChoice:
    """Per joint: the processing kept (``robid`` or ``plain``), the predicted rms qdd errors of both and the
    plain recipe's cut-off; ``applied`` False where the band was given (compared only)."""

    kept: tuple[str, ...]
    robid_error: tuple[float, ...]
    plain_error: tuple[float, ...]
    plain_cutoff: tuple[float, ...]
    applied: bool
    margin: float = MARGIN

    def line(self) -> str:
        """The account's line."""
        text = (
            f"guard: predicted rms qdd error per joint, robid {format_values(self.robid_error)} against the plain "
            f"recipe (zero-phase Butterworth of order {PLAIN_ORDER} at {format_values(self.plain_cutoff)} Hz, "
            f"central differences) {format_values(self.plain_error)} rad/s^2"
        )
        if not self.applied:
            return text + "; kept (the band was given, or motor positions share the link positions' processing)"
        plain = [str(j + 1) for j, k in enumerate(self.kept) if k == "plain"]
        if not plain:
            return text + "; robid's processing kept on every joint"
        return (
            text + f"; robid's processing is not better on joint(s) {', '.join(plain)} "
            f"(not below {self.margin:g} times the plain recipe's): the plain recipe taken there"
        )


def guarded(result: PathResult, plain: PlainRecipe, orders: int, applied: bool) -> tuple[PathResult, GuardChoice]:
    """``result`` with the plain recipe's derivatives on the joints where robid's processing does not predict
    less than ``MARGIN`` times its error (module docstring), and the choice."""
    dof = plain.q.shape[1]
    robid = np.asarray(result.predicted_qdd_error if result.predicted_qdd_error is not None else [np.inf] * dof)
    margin = MARGIN_PERIODS if result.mode in REPEATING_MODES and result.n_periods >= 2 else MARGIN
    # motor positions share the link positions' processing (the deflection theta - q goes through one operator):
    # with them the comparison is reported, not applied
    applied = applied and result.theta is None
    take = (robid >= margin * plain.predicted) if applied and result.onto_grid is not None else np.zeros(dof, bool)
    choice = GuardChoice(
        kept=tuple("plain" if x else "robid" for x in take),
        robid_error=tuple(float(v) for v in robid),
        plain_error=tuple(float(v) for v in plain.predicted),
        plain_cutoff=plain.cutoffs,
        applied=applied,
        margin=margin,
    )
    if not take.any():
        return result, choice
    joints = np.flatnonzero(take)
    derivs = [d.copy() for d in result.derivs]
    wholes = plain.derivatives(len(derivs) - 1, joints)
    for d, whole in zip(derivs, wholes, strict=True):
        d[:, joints] = result.onto_grid(whole)
    for state, whole in zip(result.whole_states or [], wholes, strict=False):
        state[:, joints] = whole  # the states the parallel filter evaluates the regressor on
    return replace(result, derivs=derivs, noise=_plain_noise(result, plain, joints)), choice


def _plain_noise(result: PathResult, plain: PlainRecipe, joints: np.ndarray):
    """The path's noise record with the processed position, velocity and acceleration noise of ``joints`` those
    of the plain recipe (:meth:`robid.signals.cutoff.PositionSpectra.noise_std`; divided by sqrt(K) where the
    path averages K periods)."""
    averaged = result.n_periods if result.mode == PERIODIC and result.n_periods >= 2 else 1
    fields = {}
    for n, name in enumerate(("q_std_processed", "qd_std_processed", "qdd_std_processed")):
        values = list(getattr(result.noise, name))
        for j in joints:
            values[j] = float(plain.spectra.noise_std(plain.cutoffs[j], PLAIN_ORDER, n)[j] / np.sqrt(averaged))
        fields[name] = tuple(values)
    return replace(result.noise, **fields)
