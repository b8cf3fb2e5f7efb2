"""What an identification is asked (robid.identification.identify): :class:`IdentificationOptions` (estimator,
processing, mapping, screening, per-file overrides, friction models, closed loop, ...), :class:`RunSource` (a run
read under a name of its own), and :func:`load_run`, the data set of one run under those options."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from robid.defaults import DEFAULT_METHOD, DEFAULT_MIN_SPEED, FRICTION_MODELS_AUTO
from robid.estimation import ClassificationThresholds
from robid.identification.datasets import DataSet, load_dataset
from robid.io.screening import ScreeningPolicy
from robid.robot import Robot
from robid.signals import ProcessingOptions


@dataclass(frozen=True)
class RunSource:
    """A measurement file under a name of its own, so that one file can be given twice with different options
    (e.g. two time windows of one record: identification on one, the held-back rest for validation). ``str()``
    is that name: the key of ``file_processing``/``file_mapping`` and the run's ``file`` in the record."""

    path: Path
    key: str

    def __str__(self) -> str:
        return self.key


@dataclass(frozen=True)
class IdentificationOptions:
    #: the estimator (robid.defaults.METHODS); "auto": eiv in the elastic layout, wls elsewhere
    #: (robid.identification.defaults.resolved_method)
    method: str = DEFAULT_METHOD
    #: the signal stage's options; by default the commands' data selection (rows slower than
    #: robid.defaults.DEFAULT_MIN_SPEED left out), so that the Python API takes the path the command line takes
    processing: ProcessingOptions = field(default_factory=lambda: ProcessingOptions(min_speed=DEFAULT_MIN_SPEED))
    mapping: str | Path | None = None
    policy: ScreeningPolicy = field(default_factory=ScreeningPolicy)
    thresholds: ClassificationThresholds = field(default_factory=ClassificationThresholds)
    #: Coulomb columns: "noise" (expected sign given the velocity noise, robid.identification.coulomb) or "sign"
    coulomb: str = "noise"
    #: positions are motor-side (theta): correct them to the link by the static deflection K^-1 G
    #: (robid.elastic.static_deflection)
    static_deflection: bool = False
    #: positions are motor-side (motor encoders only) on an elastic model: the link states are reconstructed and
    #: the stiffness identified through them by Gauss-Newton (robid.elastic.motor_encoders_only)
    motor_encoders_only: bool = False
    #: consistent method: weight of the regulariser towards the nominal standard values (0 = none)
    regularization: float = 1e-6
    check_consistency: bool = True
    #: per-file processing options (e.g. the period of each run's trajectory) and mappings, keyed by str(path)
    file_processing: dict = field(default_factory=dict)
    file_mapping: dict = field(default_factory=dict)
    #: reference models (published or nominal parameter sets) scored on every run next to robid's fit
    #: (robid.identification.references)
    references: tuple = ()
    #: other methods estimated on the same runs and scored on the validation runs
    #: (robid.identification.estimator_comparison); empty: none
    compare_methods: tuple = ()
    #: candidate friction models compared per joint after the linear fit, e.g. ("linear", "stribeck", "sigmoid")
    #: (robid.identification.friction_selection); empty: none; "auto": linear, stribeck and sigmoid where the
    #: layout allows it and the problem is small enough (robid.identification.defaults.friction_candidates). With
    #: the wls estimator a nonlinear model chosen on some joint becomes the record's model (adopted).
    friction_models: tuple | str = FRICTION_MODELS_AUTO
    #: fit the held (standstill) friction per joint on the runs' holds (robid.identification.held_friction)
    held_friction: bool = True
    #: methods idim-iv and didim: the trajectory of every run and the controller's feed-forward
    #: (robid.identification.closed_loop_estimation.ClosedLoopOptions)
    closed_loop: object = None

    def processing_for(self, path) -> ProcessingOptions:
        return self.file_processing.get(str(path), self.processing)

    def mapping_for(self, path):
        return self.file_mapping.get(str(path), self.mapping)


def load_run(robot: Robot, source, o: IdentificationOptions, motor_side_values=None, linearise: bool = True,
          compact: bool = False) -> DataSet:
    """The data set of a file or RunSource (then recorded under its name); ``compact``: a non-periodic run's
    regressor kept compactly (robid.identification.compact_regressor)."""
    path = source.path if isinstance(source, RunSource) else source
    dataset = load_dataset(
        robot, path, mapping=o.mapping_for(source), options=o.processing_for(source), policy=o.policy,
        coulomb=o.coulomb, static_deflection=o.static_deflection, motor_side_values=motor_side_values,
        linearise=linearise, compact=compact,
    )
    return dataclasses.replace(dataset, source=str(source)) if isinstance(source, RunSource) else dataset


