"""The step debugger: where a run stops, the commands that drive it, reload and restart.

The one stopping point and a ``do_*`` method per command (``controller``), the
breakpoints of a run (``breakpoints``), the command vocabulary (``commands``), reading
``commands.jsonl`` (``command_feed``, ``file_changes``), the terminal prompt
(``prompt``), a run's debugger set up (``setup``), edit and continue (``reload``),
``restart`` and a run's part in it (``restart``), and driving a run from another
process (``client``).

May import: the foundations, ``project``, ``store``, ``browser`` and ``webserver``.
"""
