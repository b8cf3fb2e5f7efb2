"""What the signal stage did to one measurement, as a record (:class:`robid.record.ProcessingSummary`): the
path taken, the band kept, the noise estimated, every row dropped or left unused, and the account of each step.
``robid process --summary`` writes it; identification extends it into a run record of RESULT.json."""

from __future__ import annotations

import numpy as np

from robid.record.codec import finite, finite_tuple
from robid.record.runs import DroppedSample, NoiseLevels, ProcessingGuard, ProcessingSummary
from robid.signals.records import ProcessedSignals

_NOISE_STD = ("q_std", "tau_std", "q_std_processed", "qd_std_processed", "qdd_std_processed", "tau_std_processed")


def processing_summary(p: ProcessedSignals) -> ProcessingSummary:
    """The summary record of processed signals ``p``."""
    nz = p.noise
    return ProcessingSummary(
        mode=p.mode,
        samples=p.n_samples,
        sample_rate_hz=float(p.sample_rate),
        period_s=finite(p.period),
        period_source=p.period_source,
        n_periods=int(p.n_periods),
        rejected_periods=tuple(int(k) for k in p.rejected_periods),
        harmonics=tuple(int(h) for h in p.harmonics) if p.harmonics is not None else None,
        cutoff_hz=finite(p.cutoff_hz),
        segment_s=(float(p.segment[0]), float(p.segment[1])) if p.segment else None,
        trimmed_samples=(int(p.trimmed[0]), int(p.trimmed[1])),
        standstill_s=tuple((float(a), float(b)) for a, b in p.standstill),
        unused_rows_per_joint=tuple(int(x) for x in np.count_nonzero(~p.keep, axis=0)),
        noise=NoiseLevels(method=nz.method, **{k: finite_tuple(getattr(nz, k)) for k in _NOISE_STD}),
        dropped_rows=tuple(DroppedSample(r.file, int(r.row), int(r.sample), r.reason) for r in p.dropped.rows),
        samples_read=int(p.dropped.samples_read),
        notes=tuple(p.notes),
        method=tuple(p.method.splitlines()),
        guard=_guard(p),
    )


def _guard(p: ProcessedSignals) -> ProcessingGuard | None:
    """The guard's choice of ``p`` as a record (robid.signals.guard)."""
    g = p.guard
    if g is None:
        return None
    return ProcessingGuard(
        kept=tuple(g.kept),
        robid_qdd_error=finite_tuple(g.robid_error),
        plain_qdd_error=finite_tuple(g.plain_error),
        plain_cutoff_hz=finite_tuple(g.plain_cutoff),
        applied=bool(g.applied),
    )
