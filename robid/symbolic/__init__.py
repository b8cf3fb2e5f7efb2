"""Symbolic derivation (sympy): kinematics, Newton-Euler regressor, extra terms, base parameters, code generation.

Nothing in here evaluates data; it derives straight-line programs once per model and writes numpy code to an
on-disk cache (robid.symbolic.cache). Numeric paths import only the generated modules.
"""
