"""One scenario run, from the project on disk to ``run:finished``.

``ScenarioRun`` (``session``) made of two frozen records (``options``); the statement
hook chain (``hook_chain``: the debugger first, then the steps and their listeners:
``steps``, ``steps_writer``, ``console``, ``runtime_state``), the scenario's thread
(``scenario_thread``), what the built-ins get from the run (``services``), signals
(``signals``), the result (``result``) and a scenario's attempts (``attempts``).

May import: the foundations, ``project``, ``store``, ``browser``, ``builtins``,
``webserver`` and ``debug``.
"""
