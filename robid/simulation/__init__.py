"""The virtual robot: closed-loop forward simulation of a robot file's model, with sensors, noise and quantisation.

It integrates forward dynamics with its own recursive Newton-Euler (:mod:`robid.simulation.rnea`); it never
uses robid's generated regressor, which it serves to test. See docs/simulation.md.
"""

from robid.simulation.compensator_plant import CompensatorTorques, compensator_force, compensator_length
from robid.simulation.plant import ControllerSettings, IntegratorSettings, IntegratorStats, Plant
from robid.simulation.reference import ReferenceMotion
from robid.simulation.rnea import RigidBodyDynamics
from robid.simulation.sensors import NOISE_LEVELS, SensorRecording, SensorSettings
from robid.simulation.simulator import SimulationResult, SimulationSettings, simulate
from robid.simulation.truth import true_parameters

__all__ = [
    "NOISE_LEVELS",
    "CompensatorTorques",
    "ControllerSettings",
    "IntegratorSettings",
    "IntegratorStats",
    "Plant",
    "ReferenceMotion",
    "RigidBodyDynamics",
    "SensorRecording",
    "SensorSettings",
    "SimulationResult",
    "SimulationSettings",
    "compensator_force",
    "compensator_length",
    "simulate",
    "true_parameters",
]
