"""Franka Panda campaign on the exciting-trajectory log of Gaz et al. 2019 (anchors A.1-2, B.4), read from
../shared/anchors/data: identification on the first 14 s, the last 7 s held back and predicted, and the published
model (feasible parameters p-hat with the sigmoid friction of Table I, and with the linear friction of Table III)
scored on the same processed samples (robid.identification.references)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
CAMPAIGN = ROOT / "measurements" / "franka_panda" / "campaign.yaml"
DATA = ROOT.parent / "shared" / "anchors" / "data" / "FrankaEmikaPandaDynModel"
#: the published model's in-sample RMS error [N m] (anchors A.1-2: pinocchio with p-hat and the sigmoid friction,
#: 20 Hz zero-phase filter, 1 s trimmed at each end)
PUBLISHED_RMS = np.array([0.37, 0.69, 0.37, 0.37, 0.15, 0.10, 0.065])

pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason=f"the Panda data set is not at {DATA}")


@pytest.fixture(scope="module")
def panda_run(tmp_path_factory):
    from robid.campaign import read_campaign, run_campaign

    return run_campaign(read_campaign(CAMPAIGN), tmp_path_factory.mktemp("panda"), log=lambda _: None)


def _rms(fit) -> np.ndarray:
    return np.array([j.rms for j in fit.per_joint])


def test_robid_fits_the_identification_window_better_than_the_published_model(panda_run):
    (run,) = panda_run.record.data
    robid = _rms(run.fit)
    sigmoid, linear = (_rms(r.fit) for r in run.references)
    assert np.all(robid <= 1.1 * sigmoid), (robid, sigmoid)
    assert np.all(robid <= 1.1 * linear), (robid, linear)
    assert np.all(robid <= 1.1 * PUBLISHED_RMS), robid


def test_the_held_back_seconds_are_predicted_as_well_as_the_published_model_does(panda_run):
    (run,) = panda_run.record.validation_data
    assert run.file.endswith("[held_back_7s]") and run.segment_s[0] >= 14.0
    robid = _rms(run.fit)
    sigmoid = _rms(run.references[0].fit)
    # measured on 2026-11-29: robid 0.17, 0.36, 0.16, 0.26, 0.08, 0.033, 0.047 N m; p-hat + sigmoid 0.31, 0.77,
    # 0.22, 0.36, 0.15, 0.11, 0.063 N m on the same samples
    assert np.all(robid <= 1.1 * sigmoid), (robid, sigmoid)
    assert np.all(robid <= 1.1 * PUBLISHED_RMS), robid
    # the reference is implemented right: on the held-back samples it lands near the independent check's figures
    # (20 Hz zero-phase filter) on the joints robid processed at a cut-off of 10 Hz or more. Joints 1, 3 and 7 were
    # taken to the plain recipe at 1.8-1.9 Hz by the signal guard (their motion is below 2 Hz), which removes more
    # torque noise than the check's 20 Hz: measured 0.84, 0.61, 0.97 times the published figure there, 0.98-1.11
    # on the others.
    cutoff = np.array(run.guard.plain_cutoff_hz if run.guard and run.guard.applied else [run.cutoff_hz] * 7)
    if run.guard and run.guard.applied:
        cutoff = np.where(np.array(run.guard.kept) == "plain", cutoff, run.cutoff_hz)
    wide = cutoff >= 10.0
    assert wide.sum() >= 3, cutoff
    assert np.all(np.abs(sigmoid / PUBLISHED_RMS - 1.0)[wide] < 0.15), (sigmoid, cutoff)
    assert np.all(sigmoid[~wide] <= 1.15 * PUBLISHED_RMS[~wide]), (sigmoid, cutoff)


def test_the_report_shows_the_comparison(panda_run):
    html = panda_run.report_path.read_text()
    assert "Comparison with reference models" in html
    assert "Gaz 2019: p-hat + sigmoid friction (Table I)" in html


def test_the_reference_model_is_refused_with_its_field_named(tmp_path):
    from robid.errors import RobidInputError
    from robid.identification.references import load_reference

    robot = ROOT / "measurements" / "franka_panda" / "panda.yaml"
    with pytest.raises(RobidInputError, match=r"ref\.parameters: 'fv_A9' is not a parameter"):
        load_reference("x", robot, parameters={"fv_A9": 1.0}, where="ref")
    with pytest.raises(RobidInputError, match=r"ref\.sigmoid_friction: expected 7 finite numbers"):
        load_reference("x", robot, sigmoid_friction={"phi1": [1], "phi2": [1], "phi3": [1]}, where="ref")
