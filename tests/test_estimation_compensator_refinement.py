"""The refinement's physical region: a geometry the caller's ``feasible`` rejects is never evaluated (the
objective is a finite penalty there), and without ``feasible`` a column that refuses a geometry reaches the
caller as an error instead of being swallowed (docs/compensator.md, section 5)."""

from __future__ import annotations

import numpy as np
import pytest

from robid.errors import RobidInputError
from robid.estimation.compensator import gas_cylinder_column, gas_volume_positive, refine_nonlinear_compensator

LIMIT = 1.5  # the "physical" region of the toy geometry: a <= LIMIT


def _problem():
    """tau = 3 exp(-a q) + 0.5 q with a = 2 (outside the region): the best fit pushes a to the region's edge."""
    q = np.linspace(-1.0, 1.0, 400)
    tau = (3.0 * np.exp(-2.0 * q) + 0.5 * q)[:, None]
    evaluated = []

    def column(g):
        evaluated.append(g["a"])
        if g["a"] > LIMIT:
            raise RobidInputError(f"a = {g['a']:.3g} is outside the physical region")
        return np.exp(-g["a"] * q)[:, None]

    W = np.stack([np.exp(-q), q], axis=1)[:, None, :]
    return W, tau, ["comp_p", "mx"], column, evaluated


def test_infeasible_geometry_gets_a_penalty_and_is_never_evaluated():
    W, tau, names, column, evaluated = _problem()
    r = refine_nonlinear_compensator(W, tau, names, "comp_p", column, {"a": 1.0}, ("a",), bounds={"a": (0.1, 3.0)},
                                     feasible=lambda g: g["a"] <= LIMIT, serial_correlation=False)
    assert max(evaluated) <= LIMIT
    assert r.optimum["a"] == pytest.approx(LIMIT, abs=0.05)  # pressed against the edge of the region
    assert r.cost_refined < r.cost_start
    # an optimum pinned by the physical region is not a separated parameter: reported, not adopted
    assert "edge of the physical region" in r.parameter("a").reason and not r.adopted


def test_without_feasible_the_column_refusal_reaches_the_caller():
    W, tau, names, column, _ = _problem()
    with pytest.raises(RobidInputError, match="outside the physical region"):
        refine_nonlinear_compensator(W, tau, names, "comp_p", column, {"a": 1.0}, ("a",), bounds={"a": (0.1, 3.0)},
                                     serial_correlation=False)


def test_gas_volume_positive_is_the_column_domain():
    """The predicate accepts exactly the geometries for which the gas column exists at every recorded length."""
    length = np.array([0.62, 0.8, 0.97])
    dlength = np.ones(3)
    feasible = gas_volume_positive(length)
    base = {"area": 1.669e-3, "l0": 0.6, "n": 1.0}
    edge = base["area"] * (0.97 - 0.6)  # v0 at which the gas volume vanishes at the longest length
    for v0 in (0.5 * edge, 0.999 * edge, 1.001 * edge, 2 * edge):
        g = dict(base, v0=v0)
        assert feasible(g) == (v0 > edge)
        if feasible(g):
            assert np.all(np.isfinite(gas_cylinder_column(length, dlength, **g)))
        else:
            with pytest.raises(RobidInputError, match="gas volume"):
                gas_cylinder_column(length, dlength, **g)
