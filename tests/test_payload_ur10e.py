"""Payload identification on the real UR10e load/unload runs of Mamedov et al. 2020 (2.805 kg payload; anchors
README: tau = K i with the authors' drive gains, measurements/ur10e/mapping.yaml).

Measured (docs/payload.md): the unloaded run aligned by -1.55 s, rms velocity difference 0.0012-0.0018 rad/s; the
full estimate is not physically consistent, so the auto model falls back to mass and COM: m = 2.495 kg against
2.805 kg (-11.0 %; 2.476 kg before later signal-stage changes), statistical std 0.003 kg; each joint's rows alone
give 2.11..2.55 kg, tens of their own stds apart. The error is systematic -- the drive gains' common scale (the
authors fixed K1 = 10 N m/A by a constraint) and model error, not noise -- and robid says so in a note; drive gains
calibrated with the other known-load pair bring it to -0.9 % / +1.6 % (tests/test_payload_gains_ur10e.py). The
tolerance below, 15 %, is that measured error with a margin of a quarter of it; it is not a claim that robid
measures payloads to 15 % in general.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from robid.payload import identify_payload

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared/anchors/data/dynamic_calibration/dataset_ur10e/identification_data"
MAPPING = ROOT / "measurements/ur10e/mapping.yaml"
TRUE_MASS = 2.805

pytestmark = pytest.mark.skipif(not (DATA / "ur-20_01_31-load.csv").exists(), reason="UR10e anchor data not present")


def test_ur10e_payload_from_load_and_unload_runs():
    est = identify_payload("ur10e", DATA / "ur-20_01_31-load.csv", unloaded=DATA / "ur-20_01_31-unload.csv",
                           mapping=MAPPING)
    by_joint = [round(m, 3) if m is not None else None for m in est.mass_by_joint]
    print(f"\nUR10e payload: m = {est.body.mass:.4f} +- {est.mass_std:.2g} kg against {TRUE_MASS} kg "
          f"({100 * (est.body.mass / TRUE_MASS - 1):+.1f} %), model {est.model}, COM {est.body.com} m, "
          f"per-joint masses {by_joint}")
    assert abs(est.body.mass / TRUE_MASS - 1) < 0.15
    # the statistical std alone would claim far more than the data give: robid must say so
    assert any("model or drive-gain error" in n for n in est.notes)


def test_every_payload_output_states_the_realistic_uncertainty_beside_the_statistical_one():
    """Issue 33: the URScript header said +- 0.0034 kg while the note said 0.23 kg. Every output now gives the
    realistic uncertainty (half the range of the joints' own estimates here: model and drive-gain error) and the
    statistical one beside it, labelled; the realistic one covers most of the true error (-0.33 kg)."""
    import json

    from robid.payload.export import FORMATS, render

    est = identify_payload("ur10e", DATA / "ur-20_01_31-load.csv", unloaded=DATA / "ur-20_01_31-unload.csv",
                           mapping=MAPPING)
    by_joint = [m for m in est.mass_by_joint if m is not None]
    assert est.mass_realistic_std == pytest.approx((max(by_joint) - min(by_joint)) / 2)
    assert est.mass_realistic_std > 50 * est.mass_std and abs(est.body.mass - TRUE_MASS) < 1.5 * est.mass_realistic_std
    assert est.uncertainty_source.startswith("half the range of 5 joints' own estimates")
    for fmt in FORMATS:
        text = render(est, fmt, "ur10e", "the flange frame")
        if fmt == "json":
            doc = json.loads(text)["uncertainty"]
            assert doc["realistic"]["mass_std"] == pytest.approx(est.mass_realistic_std)
            assert doc["statistical"]["mass_std"] == pytest.approx(est.mass_std)
            continue
        header = "\n".join(line for line in text.splitlines() if line.startswith(("#", ";", "!")))
        assert f"+- {est.mass_realistic_std:.2g} kg realistic" in header, (fmt, header)
        assert f"statistical +- {est.mass_std:.2g} kg" in header, (fmt, header)
        print(f"{fmt}: {header.splitlines()[1]}")
