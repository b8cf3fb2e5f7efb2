"""robid's edges: everything that reads or writes a file lives in this package, so that the numerical packages
(signals, estimation, excitation, identification) take and return arrays and records.

* :mod:`robid.io.files` -- atomic writes (text, JSON), YAML/JSON/text reading with errors that name the file and
  line. A leaf module: any package may use it.
* :mod:`robid.io.measurement_file` -- ``read_measurement`` (a measurement file, canonical CSV or any layout a
  mapping describes, to a :class:`robid.signals.records.Measurement`) and ``read_trajectory_timing``.
* :mod:`robid.io.mapping` -- mapping files (:class:`ChannelMapping`): where each signal of a non-canonical
  layout is, in which unit, on which side of the gears.
* :mod:`robid.io.tables` -- raw text and ``.mat`` tables, every unreadable row kept with its reason.
* :mod:`robid.io.table_set` -- the tables of one measurement, each loaded once, and column references into them.
* :mod:`robid.io.screening` -- row checks while reading (:class:`ScreeningPolicy`, ``screen``): bad rows, time
  order and gaps, position jumps, constant and saturated channels; what is dropped is recorded.
* :mod:`robid.io.motor_side` -- motor-side signals and currents to the joint side (transmission matrix N).
* :mod:`robid.io.processed_files` -- PROCESSED.csv of ``robid process`` and the JSON summary of the signal stage.

The package's ``__init__`` imports nothing on purpose: ``robid.io.files`` is used by the lowest layers (the robot
readers), while other modules of this package translate the records of higher layers to files and back.
"""
