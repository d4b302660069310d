"""Where a run's version-1 envelopes go: each reporter a sink of the run's one
:class:`runner.store.event_log.EventLog` (docs/reporting.md).

- :mod:`.options`: the ``--reporter`` list (``list``, ``junit=PATH``, ``json=PATH``,
  ``ndjson``), checked before the run;
- :mod:`.sinks`: the reporters a list names, as sinks, and their finish step;
- :mod:`.ndjson`, :mod:`.json_report`, :mod:`.junit`: one reporter each;
- :mod:`.report_file`: the one writer of a report file;
- :mod:`.history`: the run saved to history.

The ``list`` reporter (the console lines and summary) is each command's own.
"""
