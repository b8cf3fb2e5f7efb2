"""A long record's multitaper spectrum on a fast transform length (robid.signals.cutoff.fft_length): the
zero-padded transform is checked against the tapered DTFT summed directly at its bins, and the cut-off chosen
from it against the best one in hindsight (the references of tests/test_signals_cutoff.py, written out there
independently of robid's filtering code)."""

from __future__ import annotations

import numpy as np
from scipy import signal

from robid.signals import cutoff
from tests.test_signals_cutoff import hindsight_ratio, sines

#: 2 * 7 * 17 * 1009 + 2 samples: the second difference has a length with the large prime factor 1009
AWKWARD = 2 * 7 * 17 * 1009 + 2


def test_short_records_keep_their_own_length_long_ones_get_a_fast_one():
    assert cutoff.fft_length(cutoff.FAST_PAD) == cutoff.FAST_PAD
    n = AWKWARD - 2
    size = cutoff.fft_length(n)
    m = size
    for p in (2, 3, 5, 7, 11):
        while m % p == 0:
            m //= p
    assert m == 1 and n <= size < 1.01 * n


def test_padded_spectrum_is_the_tapered_dtft_at_its_bins():
    rate = 1000.0
    rng = np.random.default_rng(3)
    x = np.cumsum(np.cumsum(rng.standard_normal((AWKWARD, 2)), axis=0), axis=0) * 1e-6 + rng.standard_normal(
        (AWKWARD, 2)) * 1e-5
    f, p, nu = cutoff.position_spectrum(x, rate)
    y = np.diff(x, n=2, axis=0)
    y = y - y.mean(axis=0)
    n = y.shape[0]
    size = cutoff.fft_length(n)
    assert f.size == size // 2 + 1 and nu == 2 * cutoff.TAPERS
    tapers = signal.windows.dpss(n, cutoff.NW, cutoff.TAPERS)
    samples = np.arange(n)
    for k in (1, 17, 4321, size // 5, size // 2):
        freq = k * rate / size
        assert np.isclose(f[k], freq)
        kernel = np.exp(-2j * np.pi * k * samples / size)  # the DTFT at the padded grid's bin k
        power = sum(np.abs((taper * kernel) @ y) ** 2 for taper in tapers) / cutoff.TAPERS
        gain = (2.0 * np.sin(np.pi * freq / rate)) ** 4
        assert np.allclose(p[k], power / gain, rtol=1e-8)


def test_long_record_cutoff_within_1_3_of_the_best_in_hindsight():
    rate = 1000.0
    t, q, qdd = sines(rate, AWKWARD / rate, 2.0, 1e-5, 7)
    assert cutoff.fft_length(q.shape[0] - 2) != q.shape[0] - 2  # the padded path is the one tested
    chosen, best, ratio = hindsight_ratio(t, q, qdd, rate)
    print(f"\nchosen {chosen:.3g} Hz, best {best:.3g} Hz, acceleration error ratio {ratio:.3f}")
    assert ratio <= 1.3


def test_long_windowed_amplitude_spectrum_on_the_fast_length():
    """robid.signals.spectrum.amplitude_spectrum of a long non-periodic record: zero-padded to the fast length,
    a sine centred on one of its bins keeps its amplitude (Hann coherent gain corrected by the record's samples)."""
    from robid.signals.spectrum import amplitude_spectrum

    n, rate = AWKWARD, 1000.0
    size = cutoff.fft_length(n)
    assert size != n
    k = 3001
    t = np.arange(n) / rate
    x = 3.0 * np.sin(2 * np.pi * (k * rate / size) * t) + 0.5
    f, a = amplitude_spectrum(x[:, None], rate, periodic=False)
    assert f.size == size // 2 + 1 and np.isclose(f[k], k * rate / size)
    assert int(np.argmax(a[1:, 0])) + 1 == k and np.isclose(a[k, 0], 3.0, rtol=2e-3)
