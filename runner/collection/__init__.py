"""A collection run: N workers, the schedule, bail, retries, shards.

The orchestrator (``orchestrator``), its workers started before its own imports
(``prelaunch``) and ``--shard``'s split balanced by durations (``shards``).

May import: the foundations, ``project``, ``store``, ``webserver``, ``run`` and
``workers``.
"""
