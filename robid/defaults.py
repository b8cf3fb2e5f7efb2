"""Defaults shared by the library and the command line (a leaf: imports nothing, so the CLI can state them in
its help without loading the numerical packages)."""

#: rad/s (m/s for prismatic joints): rows slower than this are left out of identification by default. Near a
#: velocity reversal the Coulomb column sign(qd) -- or its noise-expected value -- is ill-defined, and rest phases
#: would be fitted with a friction sign the data do not show. The one default of ``robid process``, ``robid
#: identify``, ``robid payload`` and campaigns (docs/signals.md); 0 keeps every row. The library's
#: ``ProcessingOptions`` takes what it is given (None: every row).
DEFAULT_MIN_SPEED = 0.05
