"""robid.signals.periodic.weighted_columns, the spectral filter every regressor column and torque goes through: the
same numbers, to the bit, as the transform along axis 0 it replaced (numpy's pocketfft computes each column's
transform alike in either layout; the transposed layout is only faster), for any length, width and weights."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from robid.signals.periodic import masked_filter, weighted_columns, window_filter


def _along_axis_0(x, weights, n):
    return np.fft.irfft(np.fft.rfft(x, axis=0) * weights[:, None], n=n, axis=0)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 700), k=st.integers(1, 9), seed=st.integers(0, 2**32 - 1))
def test_the_transposed_transform_is_the_axis_0_transform_to_the_bit(n, k, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, k)) * 10.0 ** rng.uniform(-3, 3, k)
    weights = rng.uniform(0.0, 1.0, n // 2 + 1)
    got = weighted_columns(x, weights, n)
    assert got.flags["C_CONTIGUOUS"] and got.shape == (n, k)
    assert np.array_equal(got, _along_axis_0(x, weights, n))


@settings(max_examples=30, deadline=None)
@given(n=st.integers(4, 400), seed=st.integers(0, 2**32 - 1))
def test_the_filters_keep_their_shapes_and_numbers(n, seed):
    rng = np.random.default_rng(seed)
    mask = rng.random(n // 2 + 1) < 0.3
    x = rng.standard_normal((n, 2, 3))  # a regressor block: samples, rows, columns
    expected = np.fft.irfft(np.fft.rfft(x, axis=0) * mask.reshape(-1, 1, 1), n=n, axis=0)
    assert np.array_equal(masked_filter(mask, n, "test")(x), expected)
    smooth = window_filter(rng.uniform(0, 1, n // 2 + 1), n, 1.0, "test")(x)
    assert smooth.shape == x.shape and np.all(np.isfinite(smooth))
