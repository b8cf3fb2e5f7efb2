"""Independent verification oracles for robid's dynamics (used only by the tests).

Nothing here imports robid's dynamics code: ``lagrangian`` derives the equations of motion by Lagrange with
sympy, ``pinocchio_model`` builds a pinocchio model from the numeric joint geometry of a robid RobotModel.
"""
