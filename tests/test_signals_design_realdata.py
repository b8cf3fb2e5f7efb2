"""Published UR10e designs (Mamedov et al.) against the recorded runs: the design evaluated at the start found by
the alignment reproduces the measured positions; the start agrees with the rest-to-motion transition read off
the data by hand; processing with the design keeps the design's harmonics. Skipped without the shared data."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from robid.cli import main
from robid.errors import RobidInputError
from robid.io.design_file import design_processing, read_design
from robid.io.measurement_file import read_measurement
from robid.signals import ProcessingOptions, process
from robid.signals.design_alignment import align_design
from robid.signals.resampling import to_uniform_grid

MAPPING = Path(__file__).resolve().parents[1] / "examples" / "mappings" / "ur10e_mamedov.yaml"

#: run -> (its design, bound on the rms of q - q_design per joint, rad). The bounds hold the tracking and the
#: timing slips of the controller (0.1-0.3 s in the second half of the longer runs, docs/validation.md).
RUNS = {
    "ur-19_10_01-13_51_41": ("opt_sltn_N3T5", 0.008),
    "ur-20_02_06-20sec_5harm": ("ga_N5T20", 0.02),
    "ur-20_02_10-30sec_12harm": ("ptrnSrch_N12T30QR", 0.07),
    "ur-20_02_19_14harm50sec": ("ptrnSrch_N14T50QR", 0.06),
}


def _paths(shared, run, design):
    base = shared / "anchors" / "data" / "dynamic_calibration"
    return (base / "dataset_ur10e" / "identification_data" / f"{run}.csv",
            base / "trajectory_optmzn" / "optimal_trjctrs" / f"{design}.mat")


def _on_grid(csv):
    m = read_measurement(csv, mapping=MAPPING, dof=6)
    grid = to_uniform_grid(m.t, {"q": m.q})
    return grid.t, grid.signals["q"]


def _hand_start(t, q, traj, threshold=2e-3):
    """Read off the data without the alignment: the first sample after the robot has rested at the design's
    start pose (within 1e-3 rad for 0.3 s) where it leaves that pose by ``threshold``, minus the time the design
    itself takes to leave it by ``threshold``."""
    q0 = traj.center
    dev = np.max(np.abs(q - q0), axis=1)
    h = t[1] - t[0]
    rest = np.convolve(dev < 1e-3, np.ones(int(0.3 / h)), mode="valid") == int(0.3 / h)
    first_rest = int(np.flatnonzero(rest)[0])
    leave = first_rest + int(np.flatnonzero(dev[first_rest:] > threshold)[0])
    fine = np.linspace(0.0, traj.period, 200001)
    own = fine[np.argmax(np.max(np.abs(traj.derivative(fine) - q0), axis=1) > threshold)]
    return t[leave] - own


@pytest.mark.parametrize("run", sorted(RUNS))
def test_design_at_the_found_start_reproduces_the_recorded_positions(shared, run):
    design, bound = RUNS[run]
    csv, mat = _paths(shared, run, design)
    traj = read_design(mat).trajectory
    t, q = _on_grid(csv)
    tau = np.linspace(0.0, traj.period, 2001)
    found = align_design(t, q, tau, traj.derivative(tau))
    rms = np.sqrt(np.mean((np.interp(found.start + tau, t, q[:, 0]) - traj.derivative(tau)[:, 0]) ** 2))
    assert rms == pytest.approx(found.rms[0], rel=0.02)  # the reported rms, recomputed here
    hand = _hand_start(t, q, traj)
    print(f"\n{run} ({design}): t0 = {found.start - t[0]:.3f} s into the record, hand {hand - t[0]:.3f} s; "
          f"rms q - q_design per joint {np.round(found.rms, 4)} rad, mismatch {found.mismatch:.1e}")
    assert max(found.rms) < bound
    # the start found by the alignment against the rest-to-motion transition: late by 0.02-0.1 s, the
    # alignment weighs the whole period and the controller's timing slips later in the run
    assert -0.02 < found.start - hand < 0.12


def test_processing_with_the_published_design_keeps_its_twelve_harmonics(shared, tmp_path):
    csv, mat = _paths(shared, "ur-20_02_10-30sec_12harm", "ptrnSrch_N12T30QR")
    period, band, samples = design_processing(mat)
    assert period == 30.0 and band == tuple(range(1, 13))
    m = read_measurement(csv, mapping=MAPPING, dof=6)
    p = process(m, ProcessingOptions(period=period, period_source="trajectory", excited_harmonics=band,
                                     design=samples))
    assert p.harmonics == tuple(range(1, 13)) and p.period == pytest.approx(30.0)
    assert p.segment[0] - m.t[0] == pytest.approx(6.832, abs=0.01) and p.n_samples == 3000
    assert "executed period found at t0" in p.method
    # the same through the mapping key and through the command line
    mapping = tmp_path / "ur10e_with_design.yaml"
    mapping.write_text(MAPPING.read_text() + f"design: {mat}\n")
    by_mapping = process(read_measurement(csv, mapping=mapping, dof=6))
    assert by_mapping.segment == p.segment and by_mapping.harmonics == p.harmonics
    out = tmp_path / "p.csv"
    assert main(["process", "ur10e", str(csv), "--mapping", str(MAPPING), "--trajectory", str(mat),
                 "--out", str(out), "--quiet"]) == 0
    assert np.loadtxt(out, delimiter=",", skiprows=1).shape == (3000, 1 + 5 * 6)  # t, q, qd, qdd, tau, keep


def test_a_run_executed_with_other_timing_is_refused_with_the_fit(shared):
    """20sec_8harm ran its N8T20 design about 5 % slower and unevenly: cutting 20 s would cut the motion."""
    csv, mat = _paths(shared, "ur-20_02_05-20sec_8harm", "ptrnSrch_N8T20QR")
    period, band, samples = design_processing(mat)
    m = read_measurement(csv, mapping=MAPPING, dof=6)
    with pytest.raises(RobidInputError, match=r"20sec_8harm.csv: the record does not follow the design "
                                              r"ptrnSrch_N8T20QR.mat: .* rms per joint \(mismatch 0\.0"):
        process(m, ProcessingOptions(design=samples))


def test_a_campaign_measurement_names_a_published_design(shared, tmp_path):
    from robid.campaign.campaign_file import read_campaign
    from robid.campaign.runner import run_campaign

    csv, mat = _paths(shared, "ur-20_02_10-30sec_12harm", "ptrnSrch_N12T30QR")
    spec = tmp_path / "c.yaml"
    spec.write_text(
        "robid_campaign: 1\nname: ur-design\nrobot: ur10e\n"
        f"trajectories:\n  n12t30: {{file: {mat}}}\n"
        f"measurements:\n  run30: {{file: {csv}, mapping: {MAPPING}, trajectory: n12t30}}\n"
        "identification: {measurements: [run30], method: wls}\nreport: false\n"
    )
    run = run_campaign(read_campaign(spec), tmp_path / "out", log=lambda *_: None)
    (processed,) = run.record.data
    assert processed.period_source == "design" and processed.harmonics == tuple(range(1, 13))
    assert processed.segment_s[0] - read_measurement(csv, mapping=MAPPING, dof=6).t[0] == pytest.approx(6.832, abs=0.01)
