"""The one way a front end starts a run: a :class:`~runner.launch.request.LaunchRequest`
made a child process (:func:`runner.launch.launcher.launch_run`), back once the run has
started, with the request kept beside it (``request.json``: "Run again" repeats it).
The viewer's ``POST /api/runs`` and the MCP server's run tools both come here.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from runner.errors import ConfigError, UsageError
from runner.launch.adapter import RunnerAdapter
from runner.launch.launcher import START_TIMEOUT_S, LaunchedRun, launch_run
from runner.launch.request import LaunchRequest
from runner.project.config import headed_without_display, load_config
from runner.store.detail import record_request

__all__ = ["start_run"]


def _headed_without_display(root: Path, request: LaunchRequest) -> str | None:
    """Why the run ``request`` asks for would be headed here without a display; None
    when it runs headless, in a remote browser, or a display is there (a config that
    does not load is left to the run to say)."""
    try:
        config = load_config(root, os.environ)
    except ConfigError:
        return None
    if (config.headless and not request.headed) or config.ws_endpoint:
        return None
    return headed_without_display("request" if request.headed else config.headed_by)


async def start_run(
    root: Path,
    request: LaunchRequest,
    *,
    owner_pid: int | None = None,
    mask: Callable[[str], str] = lambda text: text,
    timeout: float = START_TIMEOUT_S,
) -> LaunchedRun:
    """Start ``request`` in the project at ``root``. ``owner_pid``: the run ends when
    that process does (an MCP session's runs, unless detached); ``mask`` masks what the
    child printed before its run started (the error of a run that never starts).
    ``UsageError`` for a run that exits before it starts, or a headed one this machine
    cannot show (no display): refused before it exists, so no failed run is recorded
    for a scenario that never ran."""
    no_display = _headed_without_display(root, request)
    if no_display is not None:
        raise UsageError(no_display)
    adapter = RunnerAdapter()
    run = await launch_run(
        root,
        [*adapter.resolve_bin(), *request.args()],
        request.kind,
        env=adapter.build_env(request.protocol_request()),
        owner_pid=owner_pid,
        mask=mask,
        timeout=timeout,
    )
    # At once (a small atomic write): no await between the start and the caller's
    # hold on the run (an MCP session owns its runs from here).
    record_request(run.run_dir, request.asked)
    return run
