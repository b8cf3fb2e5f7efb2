"""Robot description: joints, links, drives, friction, elasticity, compensators, limits, and their readers."""

from robid.model.robot_model import (
    Compensator,
    Controller,
    Drive,
    Elasticity,
    Friction,
    Joint,
    JointGeometry,
    Limits,
    Link,
    RobotModel,
)

__all__ = [
    "Compensator",
    "Controller",
    "Drive",
    "Elasticity",
    "Friction",
    "Joint",
    "JointGeometry",
    "Limits",
    "Link",
    "RobotModel",
]
