"""A collection run: N workers, the schedule, bail, retries, shards.

The orchestrator (``orchestrator``) and its workers started before its own imports
(``prelaunch``).

May import: the foundations, ``project``, ``store``, ``webserver``, ``run`` and
``workers``.
"""
