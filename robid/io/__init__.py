"""robid's edges: everything that reads or writes a file lives in this package, so that the numerical packages
(signals, estimation, excitation, identification) take and return arrays and records.

* :mod:`robid.io.files` -- atomic writes (text, JSON), YAML/JSON/text reading with errors that name the file and
  line. A leaf module: any package may use it.

The package's ``__init__`` imports nothing on purpose: ``robid.io.files`` is used by the lowest layers (the robot
readers), while other modules of this package translate the records of higher layers to files and back.
"""
