"""Defaults shared by the library and the command line (a leaf: imports nothing, so the CLI can state them in
its help without loading the numerical packages)."""

#: rad/s (m/s for prismatic joints): rows slower than this are left out of identification by default. Near a
#: velocity reversal the Coulomb column sign(qd) -- or its noise-expected value -- is ill-defined, and rest phases
#: would be fitted with a friction sign the data do not show. The one default of ``robid process``, ``robid
#: identify``, ``robid payload`` and campaigns (docs/signals.md); 0 keeps every row. The library's
#: ``ProcessingOptions`` takes what it is given (None: every row).
DEFAULT_MIN_SPEED = 0.05

#: the estimators of ``robid identify``, campaigns and ``IdentificationOptions.method`` (docs/estimation.md);
#: ``auto``, the default, takes the one whose standard deviations are honest for the layout: ``eiv`` (least squares
#: corrected for the encoders' noise in the spring, damping and acceleration columns) in the elastic layout, ``wls``
#: elsewhere (robid.identification.defaults)
METHODS = ("auto", "ols", "wls", "irls", "consistent", "idim-iv", "didim", "eiv")
DEFAULT_METHOD = "auto"

#: the friction models compared per joint by default (``--friction-models auto``: where the problem is small enough;
#: robid.identification.defaults); ``none`` switches the comparison off
FRICTION_MODELS_AUTO = "auto"
