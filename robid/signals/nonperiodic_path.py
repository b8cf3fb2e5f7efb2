"""The non-periodic path: zero-phase low-pass, central differences, edge trimming, decimation (docs/signals.md
section 7; the filter, the differentiator and their gains are in :mod:`robid.signals.filtering`, the automatic
cut-off in :mod:`robid.signals.cutoff`).

Noise (section 8): positions -- the white-equivalent level of the position spectrum at the cut-off (the noise
model of the cut-off choice); torques -- the robust estimate of :func:`robid.signals.noise.robust_white_std`
(blind to Coulomb steps and smooth content); on the processed signals s^2 mean_f |H|^4 |D(f)|^(2n).

Correlated rows: the processed torque is e_rows = F e of the white torque noise, F = pick o (zero-phase
low-pass); :class:`robid.signals.records.RowNoise` carries F^T (the low-pass is symmetric: its transpose on the
settled rows is the same convolution, applied to the rows put back at their samples with zeros between them)
and its power gain, for the estimator's covariance (docs/estimation.md, "Correlated rows").
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import numpy as np

from robid.errors import RobidInputError
from robid.signals import bands, filtering, noise
from robid.signals.cutoff import PositionSpectra
from robid.signals.path_result import MIN_SAMPLES, PathResult, format_values
from robid.signals.records import NoiseEstimate, RowNoise
from robid.signals.streamed_filter import pad_length, zero_phase_blocks

if TYPE_CHECKING:
    from robid.signals.processing import ProcessingOptions

#: zeros on each side of F^T's output, in periods of the cut-off: the impulse response decays below 1e-8
TRANSPOSE_PAD_PERIODS = 8.0

#: automatic decimation (``decimate=None``, ``--decimate auto``): the processed rate stays at least this many
#: times the cut-off
AUTO_DECIMATION_RATE = 5.0


def decimation_factor(decimate: int | None, fc: float, rate: float) -> int:
    """The decimation factor r of the non-periodic path: ``decimate`` itself, or for None (automatic) the
    largest r with rate / r >= AUTO_DECIMATION_RATE * fc (at least 1).

    Parallel decimation (the IDIM recipe: Gautier 1997, "Dynamic identification of robots with power model",
    ICRA; Khalil & Dombre 2002, *Modeling, Identification and Control of Robots*, ch. 12, data filtering): once
    the torque and the regressor columns carry the same zero-phase low-pass at fc, their rows are oversampled by
    fs / (2 fc) and keeping every r-th row loses little information while dividing the least squares' work by
    r. Classical practice keeps fc <= 0.8 fs / (2 r) (decimated rate >= 2.5 fc, the limit :func:`_check_band`
    enforces); the automatic rule keeps twice that margin (>= 5 fc: |H|^2 of the order-4 Butterworth is below
    1/1500 at the decimated Nyquist frequency 2.5 fc, so the products of filtered columns are sampled without
    noticeable aliasing). The rows stay correlated; the estimator's covariance uses their exact correlation
    (:func:`_row_noise`). A ratio within 1e-6 of an integer counts as that integer, so that time stamps rounded
    by their float format (controller clocks counted from 1970) choose the same factor as exact ones."""
    if decimate is None:
        return max(1, int(np.floor(rate / (AUTO_DECIMATION_RATE * fc) + 1e-6)))
    return int(decimate)


def process_nonperiodic(
    t: np.ndarray, sig: dict, o: ProcessingOptions, where: str, spectra: PositionSpectra | None = None
) -> PathResult:
    """Filter and differentiate the record on the uniform grid ``t``; trim the edges and decimate. ``spectra``:
    the positions' spectral estimates when the caller has them (:class:`robid.signals.cutoff.PositionSpectra`)."""
    h = float(t[1] - t[0])
    rate = 1.0 / h
    q, tau = sig["q"], sig["tau"]
    choice = bands.lowpass_cutoff(o.cutoff_hz, t, q, rate, o.filter_order, spectra)
    fc = choice.cutoff
    # the rate over the whole record for the factor: one step of stamps rounded by their float format is off by
    # up to 2e-5 relative (t ~ 1.7e9 s), the span by 1e-8
    r = decimation_factor(o.decimate, fc, (t.size - 1) / float(t[-1] - t[0]))
    orders = max(2, o.derivatives)
    edge = _check_band(fc, rate, r, orders, t.size, where)
    sos = filtering.lowpass_sos(fc, rate, o.filter_order)
    derivs = _filtered_derivatives(q, sos, h, orders)
    tau_f = filtering.zero_phase(tau, sos)
    theta_f = _filtered_derivatives(sig["theta"], sos, h, 2) if sig.get("theta") is not None else None
    pick = slice(edge, t.size - edge, r)
    row_noise = _row_noise(sos, fc, rate, t.size, pick)
    est = _noise(np.square(choice.noise_std), tau[pick.start : pick.stop], sos, rate)
    lines = _method_lines(o, choice, orders, edge, h, est, row_noise, r)
    sos_out = filtering.lowpass_sos(fc, rate / r, o.filter_order)

    def apply_filter(x: np.ndarray) -> np.ndarray:
        return filtering.zero_phase(np.asarray(x, dtype=float), sos_out)

    def parallel_filter(evaluate, block: int | None = None):
        if block is None:
            return filtering.zero_phase(np.asarray(evaluate(*derivs[:3], slice(None)), dtype=float), sos)[pick]
        return streamed_parallel_filter(evaluate, derivs[:3], sos, pick, block)

    return PathResult(
        t=t[pick],
        derivs=[d[pick] for d in derivs],
        tau=tau_f[pick],
        theta=[x[pick] for x in theta_f] if theta_f is not None else None,
        noise=est,
        apply_filter=apply_filter,
        mode="nonperiodic",
        rate=rate / r,
        lines=lines,
        cutoff=fc,
        segment=(float(t[edge]), float(t[t.size - edge - 1])),
        trimmed=(edge, edge),
        row_noise=row_noise,
        parallel_filter=parallel_filter,
        decimation=r,
        predicted_qdd_error=choice.predicted_error_rms,
        onto_grid=lambda x: x[pick],
        whole_states=derivs[:3],
    )



def _filtered_derivatives(x: np.ndarray, sos: np.ndarray, h: float, orders: int) -> list[np.ndarray]:
    """``x`` low-passed forwards and backwards, then differentiated ``orders`` times (5-point central differences)."""
    out = [filtering.zero_phase(x, sos)]
    for _ in range(orders):
        out.append(filtering.derivative(out[-1], h))
    return out


def _method_lines(o: ProcessingOptions, choice, orders: int, edge: int, h: float, est, row_noise, r: int) -> list[str]:
    """What the non-periodic path did, one line each: the filter and its cut-off, derivatives, edges, noise, the
    rows' correlation and the decimation."""
    fc, rate = choice.cutoff, 1.0 / h
    lines = [
        f"non-periodic: Butterworth low-pass of order {o.filter_order} at {fc:.4g} Hz, run forwards and backwards "
        "(zero phase, |H|^2) on positions, torques and motor positions alike",
        f"cut-off {fc:.4g} Hz: {choice.describe()}",
        f"derivatives: 5-point central differences of the filtered positions, applied {orders} times",
        f"edges: {edge} samples trimmed at each end ({edge * h:g} s) while the filter settles",
        "torque noise per joint (white, per sample; robust to friction steps): " + format_values(est.tau_std),
        f"rows correlated by the low-pass: noise power gain {row_noise.power_gain:.3g} per row (used by the "
        "estimator's covariance)",
    ]
    if r > 1 and o.decimate is None:
        lines.append(f"decimated by {r} (automatic: the largest factor that keeps the rate at or above "
                     f"{AUTO_DECIMATION_RATE:g} times the cut-off; parallel decimation of the filtered torque and "
                     f"regressor rows): {rate / r:g} Hz")
    elif r > 1:
        lines.append(f"decimated by {r}: {rate / r:g} Hz")
    elif o.decimate is None:
        lines.append(f"not decimated (automatic: {rate:g} Hz is below {AUTO_DECIMATION_RATE * 2:g} times the "
                     "cut-off)")
    return lines

def streamed_parallel_filter(evaluate, states: list[np.ndarray], sos: np.ndarray, pick: slice, block: int):
    """The parallel filter evaluated and filtered ``block`` recorded samples at a time (robid.signals.
    streamed_filter: the same numbers as on the whole record), kept compactly: ``(columns, rows)`` with ``rows``
    (processed samples, len(columns)) the filtered channels ``columns`` of ``evaluate`` at the processed samples
    ``pick``; the channels not listed are zero on the whole record. The next block is evaluated on a thread while
    the current one is filtered (the compiled regressor and the filter run without the GIL); the blocks are the
    same, in the same order."""
    n = states[0].shape[0]
    block = max(int(block), 4 * pad_length(sos))
    windows = [slice(lo, min(n, lo + block)) for lo in range(0, n, block)]

    def one(window: slice) -> np.ndarray:
        return np.asarray(evaluate(*(x[window] for x in states), window), dtype=float)

    def blocks():
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="robid-regressor") as pool:
            pending = pool.submit(one, windows[0])
            for window in windows[1:]:
                ready = pending.result()
                pending = pool.submit(one, window)
                yield ready
            yield pending.result()

    chunks = blocks()
    first = next(chunks)
    sel = range(n)[pick]
    data, columns = None, None
    for start, cols, y in zero_phase_blocks(_chained(first, chunks), n, first.shape[1], sos, padded=True):
        if data is None:
            columns = cols
            data = np.empty((len(sel), cols.size))  # pages are touched only as the blocks arrive
        i0 = max(0, -(-(start - sel.start) // sel.step))  # processed rows of this block: i0 <= i < i1
        i1 = min(len(sel), -(-(start + y.shape[0] - sel.start) // sel.step))
        if i1 > i0:
            first_row = sel.start + i0 * sel.step - start
            data[i0:i1] = y[first_row : first_row + (i1 - i0 - 1) * sel.step + 1 : sel.step]
    return columns, data


def _chained(first, rest):
    yield first
    yield from rest


def _check_band(fc: float, rate: float, r: int, orders: int, n: int, where: str) -> int:
    """Refuse a cut-off at or above Nyquist, decimation that would alias, and too few samples left after
    trimming; returns the samples trimmed at each end."""
    if fc >= 0.5 * rate:
        raise RobidInputError(f"cutoff: {fc:g} Hz is not below the Nyquist frequency {0.5 * rate:g} Hz")
    if r > 1 and fc > 0.8 * rate / (2 * r):
        raise RobidInputError(
            f"decimate: by {r} the Nyquist frequency drops to {rate / (2 * r):g} Hz; the cut-off {fc:g} Hz must "
            f"stay below 80 % of it"
        )
    edge = filtering.edge_samples(fc, rate, orders)
    if n - 2 * edge < MIN_SAMPLES:
        raise RobidInputError(
            f"{where}: {n} samples are too few for the cut-off {fc:g} Hz: {edge} samples are trimmed at each "
            "end while the zero-phase filter settles"
        )
    return edge


def _row_noise(sos: np.ndarray, fc: float, rate: float, n: int, pick: slice) -> RowNoise:
    """F^T for rows = (zero-phase low-pass of n samples)[pick], and the power gain (F F^T)_nn of a settled row."""
    pad = int(np.ceil(TRANSPOSE_PAD_PERIODS * rate / fc))
    positions = pad + np.arange(n)[pick]

    def transpose(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        z = np.zeros((n + 2 * pad,) + x.shape[1:])
        z[positions] = x
        return filtering.zero_phase_unpadded(z, sos)

    def transpose_gram(rows, k: int, block: int = 1 << 15) -> np.ndarray:
        return streamed_transpose_gram(rows, k, sos, n, pad, pick, block)

    middle = np.zeros((positions.size, 1))
    middle[positions.size // 2] = 1.0
    gram = None
    if pick.step is not None and pick.step > 1:
        kernel = decimated_row_correlation(sos, pad, pick.step)

        def gram(x: np.ndarray) -> np.ndarray:
            return toeplitz_gram(x, kernel)

    return RowNoise(transpose=transpose, power_gain=float(np.sum(transpose(middle) ** 2)),
                    transpose_gram=transpose_gram, gram=gram)


def decimated_row_correlation(sos: np.ndarray, pad: int, step: int) -> np.ndarray:
    """(F F^T)'s band on rows ``step`` samples apart: c(l step) for |l| <= 2 pad / step, c the autocorrelation of
    the zero-phase filter's impulse response h (c = h * h, the impulse response of |H|^4: the zero-phase filter
    applied twice to an impulse, each time from rest; h is below 1e-8 of its peak beyond ``pad`` samples, c
    beyond 2 ``pad``). On settled rows F F^T is Toeplitz: (F F^T)_ik = sum_t h(t - i) h(t - k) = c(i - k)."""
    z = np.zeros(4 * pad + 1)
    z[2 * pad] = 1.0
    c = filtering.zero_phase_unpadded(filtering.zero_phase_unpadded(z, sos), sos)
    lags = 2 * pad + step * np.arange(-(2 * pad // step), 2 * pad // step + 1)
    return c[lags]


def toeplitz_gram(x: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    """x^T C x (k, k) for x (rows, k) and the symmetric Toeplitz C_ik = kernel[L + i - k] (kernel of odd length
    2 L + 1): (F^T x)^T (F^T x) of decimated rows without F^T (:func:`decimated_row_correlation`). C x is the
    convolution of every column with the kernel (scipy.signal.oaconvolve, mode "same": centred), then one
    product; symmetrised against rounding."""
    from scipy.signal import oaconvolve

    x = np.asarray(x, dtype=float)
    if x.shape[0] == 0:
        return np.zeros((x.shape[1], x.shape[1]))
    cx = oaconvolve(x, kernel[:, None], mode="same", axes=0)
    g = x.T @ cx
    return 0.5 * (g + g.T)


def streamed_transpose_gram(rows, k: int, sos: np.ndarray, n: int, pad: int, pick: slice, block: int) -> np.ndarray:
    """(F^T x)^T (F^T x) (k, k) of :func:`_row_noise`'s F^T without holding x or F^T x: ``rows(lo, hi)`` gives the
    processed rows lo:hi of x (rows, k); the zero-padded record is filtered block by block (robid.signals.
    streamed_filter, the same numbers as ``transpose``) and the products summed as the blocks come out."""
    total = n + 2 * pad
    sel = range(n)[pick]
    m, step = len(sel), sel.step
    offset = pad + sel.start  # position of processed row i: offset + i * step

    def blocks():
        for a in range(0, total, block):
            b = min(total, a + block)
            z = np.zeros((b - a, k))
            i0 = max(0, -(-(a - offset) // step))
            i1 = min(m, -(-(b - offset) // step))
            if i1 > i0:
                first = offset + i0 * step - a
                z[first : first + (i1 - i0 - 1) * step + 1 : step] = rows(i0, i1)
            yield z

    gram = np.zeros((k, k))
    for _, cols, y in zero_phase_blocks(blocks(), total, k, sos, padded=False):
        gram[np.ix_(cols, cols)] += y.T @ y
    return gram


def _noise(var_q: np.ndarray, tau: np.ndarray, sos: np.ndarray, rate: float) -> NoiseEstimate:
    """Noise record: white position noise of variance ``var_q`` (the cut-off's noise model), torque noise from
    the settled samples ``tau`` (robust), and the levels left on the processed signals."""
    f, h2 = filtering.magnitude_squared(sos, rate)
    var_tau = noise.robust_white_std(tau) ** 2
    gains = [float(np.mean(h2**2 * filtering.derivative_gain(f, rate) ** (2 * k))) for k in range(3)]
    return noise.filtered_estimate(
        np.asarray(var_q, dtype=float),
        var_tau,
        gains,
        "positions: white-equivalent level of the position spectrum at the cut-off; torques: median absolute "
        "third difference (robust to friction steps, white-noise assumption); processed: through the filter's gains",
    )
