"""Defaults and the vocabulary (the word sets of methods, modes, bands, ...) shared by the library, the input files'
schemas and the command line (a leaf: imports nothing, so the CLI can state them in its help without loading the
numerical packages)."""

#: rad/s (m/s for prismatic joints): rows slower than this are left out of identification by default. Near a
#: velocity reversal the Coulomb column sign(qd) -- or its noise-expected value -- is ill-defined, and rest phases
#: would be fitted with a friction sign the data do not show. The one default of ``robid process``, ``robid
#: identify``, ``robid payload`` and campaigns (docs/signals.md); 0 keeps every row. The library's
#: ``ProcessingOptions`` takes what it is given (None: every row).
DEFAULT_MIN_SPEED = 0.05

#: the word of every choice robid makes itself where the caller left it open (method, mode, friction models)
AUTO = "auto"
#: the estimators' names, one constant each: the library compares against these, never against a spelled-out word
OLS = "ols"
WLS = "wls"
IRLS = "irls"
CONSISTENT = "consistent"
IDIM_IV = "idim-iv"
DIDIM = "didim"
EIV = "eiv"
#: the estimators of ``robid identify``, campaigns and ``IdentificationOptions.method`` (docs/estimation.md);
#: ``auto``, the default, takes the one whose standard deviations are honest for the layout: ``eiv`` (least squares
#: corrected for the encoders' noise in the spring, damping and acceleration columns) in the elastic layout, ``wls``
#: elsewhere (robid.identification.defaults)
METHODS = (AUTO, OLS, WLS, IRLS, CONSISTENT, IDIM_IV, DIDIM, EIV)
DEFAULT_METHOD = AUTO

#: the friction models compared per joint by default (``--friction-models auto``: where the problem is small enough;
#: robid.identification.defaults); ``none`` switches the comparison off
FRICTION_MODELS_AUTO = AUTO
#: the friction models identification compares per joint (robid.estimation.nonlinear_friction)
FRICTION_CANDIDATES = ("linear", "stribeck", "sigmoid")

# ---- the vocabulary: one definition of each word set the library, the schemas and the command line share -----------
# tests/test_vocabulary.py ties the JSON Schemas (schemas/*.json), the command line's choices and the library's checks
# to these tuples.

#: the estimators that simulate the closed loop (idim-iv: instrumental variables; didim: the direct and inverse
#: model; docs/estimation.md), a subset of :data:`METHODS`
CLOSED_LOOP_METHODS = (IDIM_IV, DIDIM)

#: the processing modes' names, one constant each
PERIODIC = "periodic"
PERIODIC_SAMPLES = "periodic-samples"
REST_TO_REST = "rest-to-rest"
NONPERIODIC = "nonperiodic"
#: the signal paths a user may request (``robid process --mode``, ``processing.mode``; docs/signals.md); ``auto``
#: chooses periodic when a period is given or found, else rest-to-rest, else non-periodic
PROCESSING_MODES = (AUTO, PERIODIC, REST_TO_REST, NONPERIODIC)
#: the path a processed record went through (``ProcessedSignals.mode``): the requested ones but ``auto``, and
#: ``periodic-samples`` (periods kept sample by sample, not averaged)
PROCESSED_MODES = (PERIODIC, PERIODIC_SAMPLES, REST_TO_REST, NONPERIODIC)
#: the processed modes whose samples repeat with a period (``ProcessedSignals.period`` set)
REPEATING_MODES = (PERIODIC, PERIODIC_SAMPLES)

#: harmonics of the averaged torque kept on the periodic path (``--torque-band``, ``processing.torque_band``):
#: ``all`` (period averaging only), ``signal`` (the excited band), ``positions`` (the positions' band)
TORQUE_BANDS = ("all", "signal", "positions")
DEFAULT_TORQUE_BAND = "all"

#: how the Coulomb column sign(qd) is formed (robid.identification.coulomb): its noise-expected value, the sign of
#: the differentiated velocity, or the plain sign
COULOMB_MODELS = ("noise", "differentiated", "sign")

#: the controller's feed-forward (the virtual robot's ``--feedforward``, the closed-loop estimators' model of it)
FEEDFORWARD_KINDS = ("rigid", "full", "none")
DEFAULT_FEEDFORWARD = "rigid"
