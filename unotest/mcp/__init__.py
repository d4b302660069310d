"""``unotest mcp``: an MCP server (stdio) that lets an agent write, run, debug and fix scenarios.

Built on the official ``mcp`` SDK. Runs are started through the engine's one way to
start a run (:func:`runner.launch.start.start_run`): **subprocesses** of the ordinary
CLI (never Playwright inside this server's event loop), with their output captured
into the run directory's stdout.log / stderr.log; the server returns as soon as the
run's first event is written, and the agent follows it with ``get_run``,
``wait_for_run``, ``inspect_runtime`` and ``debug``, exactly as a person would with
``unotest runs`` / ``inspect`` / ``dbg``, reading the run back through the engine's
readers (``runner.store.detail``, ``runner.store.runs``, ``runner.debug.client``).
Every tool validates names against the project (no path escapes), bounds what it
returns, masks secrets, and reports a problem as a tool error: a bad call never ends
the server.

The modules, one tool group each over a shared state:

- :mod:`unotest.mcp.server`: ``build_server``, the server class, the session's
  lifecycle, the wording of an argument error;
- :mod:`unotest.mcp.project_tools`: list, read, check and write scenarios, set
  breakpoints;
- :mod:`unotest.mcp.run_tools`: start runs and follow them, the runs the session owns;
- :mod:`unotest.mcp.debug_tools`: a run's runtime, its debugger, its failure;
- :mod:`unotest.mcp.state`: what every group shares (the project, masking, names);
- :mod:`unotest.mcp.answers`: the answers' shapes and bounds, wording for an agent;
- :mod:`unotest.mcp.arguments`: the annotations of the tools' arguments.
"""
