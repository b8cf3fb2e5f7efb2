"""Excitation design: Fourier trajectories, continuous-time limit checks, criteria, optimiser, programs.

See docs/excitation.md. The public surface::

    from robid.excitation import (FourierTrajectory, JointLimitSet, CartesianLimit, check_trajectory,
                                  evaluate_criteria, DesignProblem, design_excitation, design_from_spec,
                                  read_design_spec, load_trajectory, save_trajectory, TrajectoryFile)
    from robid.excitation.programs import export_program, ProgramOptions
"""

from robid.excitation.cartesian import CartesianLimit
from robid.excitation.constraints import CheckReport, JointLimitSet, check_trajectory
from robid.excitation.criteria import CriterionValues, evaluate_criteria
from robid.excitation.design import design_from_spec
from robid.excitation.fourier import FourierTrajectory
from robid.excitation.optimiser import DesignProblem, DesignResult, design_excitation
from robid.excitation.spec import DesignSpec, read_design_spec
from robid.excitation.trajectory_file import TrajectoryFile, load_trajectory, save_trajectory

__all__ = [
    "CartesianLimit",
    "CheckReport",
    "CriterionValues",
    "DesignProblem",
    "DesignResult",
    "DesignSpec",
    "FourierTrajectory",
    "JointLimitSet",
    "TrajectoryFile",
    "check_trajectory",
    "design_excitation",
    "design_from_spec",
    "evaluate_criteria",
    "load_trajectory",
    "read_design_spec",
    "save_trajectory",
]
