"""Runs on disk: run directories written and read back, followed live, linked, kept.

The writer of a run directory (``rundir``) and its ``runtime.json`` (``runtime_file``),
the readers (``runs``: events, ``RunMeta``, liveness; ``run_list``: pages of runs,
newest first; ``detail``: everything a front end shows of one run), following runs as
they are written (``tail``), the version-1 envelopes and the run's event log
(``envelope``, ``event_log``), retries' attempt chain and restarts' links (``retries``,
``links``), history and pruning (``history``, ``prune``).

May import: the foundations and ``project``.
"""
