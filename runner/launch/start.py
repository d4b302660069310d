"""The one way a front end starts a run: a :class:`~runner.launch.request.LaunchRequest`
made a child process (:func:`runner.launch.launcher.launch_run`), back once the run has
started, with the request kept beside it (``request.json``: "Run again" repeats it).
The viewer's ``POST /api/runs`` and the MCP server's run tools both come here.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from runner.launch.adapter import RunnerAdapter
from runner.launch.launcher import START_TIMEOUT_S, LaunchedRun, OutputLine, launch_run
from runner.launch.request import LaunchRequest
from runner.store.detail import record_request

__all__ = ["start_run"]


async def start_run(
    root: Path,
    request: LaunchRequest,
    *,
    owner_pid: int | None = None,
    on_line: OutputLine | None = None,
    mask: Callable[[str], str] = lambda text: text,
    timeout: float = START_TIMEOUT_S,
) -> LaunchedRun:
    """Start ``request`` in the project at ``root``. ``owner_pid``: the run ends when
    that process does (an MCP session's runs, unless detached); ``on_line`` follows its
    output; ``mask`` masks what the child printed before its run started (the error of
    a run that never starts). ``UsageError`` for a run that exits before it starts."""
    adapter = RunnerAdapter()
    run = await launch_run(
        root,
        [*adapter.resolve_bin(), *request.args()],
        request.kind,
        env=adapter.build_env(request.protocol_request()),
        owner_pid=owner_pid,
        on_line=on_line,
        mask=mask,
        timeout=timeout,
    )
    # At once (a small atomic write): no await between the start and the caller's
    # hold on the run (an MCP session owns its runs from here).
    record_request(run.run_dir, request.asked)
    return run
