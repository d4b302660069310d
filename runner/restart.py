"""``restart``: what one run hands the next when the scenario starts again in-process.

A ``restart`` ends a run as ``aborted`` (the debugger's ``restart_requested``) and
starts its scenario again without paying the start-up a cold ``unotest e2e`` pays:
the Python imports, Playwright's driver, Chromium and the webServer stay up. The
browser passes to the next run as its shared browser, which opens a fresh context of
it exactly as a collection worker runs each of its scenarios
(:class:`runner.session.ScenarioRun`'s ``shared_browser``), so nothing of the old
run's cookies, storage or pages is left. What does change is read again: the scenario
and helper files are re-read and re-parsed (an edit counts), and the breakpoints in
effect at the restart, those set by commands included, move over, re-resolved against
the new statement starts.

The two run directories are linked both ways: the new manifest names the old run in
``restartOf``, and the old run's ``command:result`` for the ``restart`` names the new
run id in ``value`` (``ok: false`` with the reason when no new run starts: a file that
no longer parses, a run that cannot restart). This module holds those pieces; the
loop that runs one run after the other is :meth:`runner.session.ScenarioRun.run`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field

from playwright.async_api import Browser

from dsl.errors import ScriptError
from dsl.interpreter import Step
from dsl.scenario import HelperTable, ScenarioFile
from runner import protocol
from runner.browser_lifecycle import Standby, WarmBrowser
from runner.debug_commands import Command
from runner.debugger import Breakpoints, DebugListener, PauseReason
from runner.errors import UsageError
from runner.project import Project, ProjectIndex
from runner.prompt import TerminalPrompt
from runner.rundir import RunDirectory
from runner.runs import read_events
from runner.webserver import WebServer

__all__ = [
    "RESTART_CMD",
    "Handover",
    "RestartWatch",
    "Restarted",
    "StandbyOpener",
    "carry_breakpoints",
    "held_breakpoints",
    "reload_scenario",
    "terminal_prompt_of",
]

RESTART_CMD = "restart"


@dataclass
class Handover:
    """What stays up from one run to the next: the browser (with its driver), the
    webServer. Exactly one run holds it at a time; the last one closes it."""

    browser: WarmBrowser | None
    """None when there was no live browser to keep: the next run launches one."""
    web_server: WebServer | None = None
    standby: Standby | None = None
    """The next run's context and page, opened ahead in ``browser``."""

    async def close(self) -> None:
        try:
            if self.standby is not None:
                await self.standby.close()
            if self.browser is not None:
                await self.browser.close()
        finally:
            if self.web_server is not None:
                await asyncio.to_thread(self.web_server.stop)


@dataclass
class Restarted:
    """What a restarted run starts with instead of making it: its run directory
    (made by the old run, so that the old run's answer can name it), the warm
    browser and webServer, the breakpoints and the terminal prompt to keep."""

    rundir: RunDirectory
    handover: Handover
    breakpoints: Mapping[str, list[tuple[int, int]]] = field(default_factory=dict)
    prompt: TerminalPrompt | None = None


class StandbyOpener:
    """The next run's context and page opened ahead (a :class:`Standby`), at most once
    per run and never after the run has taken it (for the next run, or to close it):
    a restart then does not wait for Chromium to start a renderer, most of what a new
    context costs. What it costs otherwise: one blank page's renderer while it waits."""

    def __init__(self) -> None:
        self._future: asyncio.Future[Standby] | None = None
        self._taken = False

    def soon(self, loop: asyncio.AbstractEventLoop, open_it: Callable[[], None]) -> None:
        """From any thread: ``open_it`` on the loop, unless one is open or opening."""
        if self._future is None and not self._taken:
            with contextlib.suppress(RuntimeError):  # the loop is closed: the run is over
                loop.call_soon_threadsafe(open_it)

    def open(
        self, browser: Browser | None, opener: Callable[[Browser], Awaitable[Standby]]
    ) -> None:
        """On the loop: start opening one in ``browser`` (a live one), in the background."""
        idle = self._future is None and not self._taken
        if idle and browser is not None and browser.is_connected():
            self._future = asyncio.ensure_future(opener(browser))

    async def take(self) -> Standby | None:
        """The one opened, once it is (None: none, or it failed); none is opened after."""
        self._taken = True
        future, self._future = self._future, None
        if future is None:
            return None
        try:
            return await future
        except Exception:
            return None


class RestartWatch(DebugListener):
    """Remembers the ``restart`` command the debugger applied: its id is what the
    old run's ``command:result`` answers. ``likely`` is called (from the thread that
    pauses or applies) when a restart may come soon, a pause, or has come: the run
    opens the next run's context then, in the background."""

    def __init__(self, likely: Callable[[], None] = lambda: None) -> None:
        self.command: Command | None = None
        self.likely = likely

    def paused(self, step: Step, reason: PauseReason, error: ScriptError | None = None) -> None:
        self.likely()

    def applied(self, command: Command) -> None:
        if command.cmd == RESTART_CMD and self.command is None:
            self.command = command
            self.likely()

    def ident_in(self, rundir: RunDirectory) -> str | None:
        """The restart's id: as heard, or, for one applied before this listener was
        added (the command feed starts first), its ``command:applied`` in steps.jsonl."""
        if self.command is not None:
            return self.command.id
        for event in read_events(rundir.path / protocol.STEPS_FILE):
            if event.get("kind") == "command:applied" and event.get("cmd") == RESTART_CMD:
                ident = event.get("id")
                return ident if isinstance(ident, str) else None
        return None


def terminal_prompt_of(listeners: list[DebugListener]) -> TerminalPrompt | None:
    """The run's terminal prompt, if one runs: the restarted run keeps it (a second
    one would race the first for the lines typed on stdin)."""
    return next((item for item in listeners if isinstance(item, TerminalPrompt)), None)


def reload_scenario(project: Project, name: str) -> tuple[ScenarioFile, HelperTable]:
    """The scenario and the helpers as the files say now, or ``UsageError`` naming the
    first problem at ``file:line:col`` (as ``unotest e2e`` would refuse to start)."""
    index = ProjectIndex.load(project)
    scenario = index.scenarios.get(name)
    file = scenario.file if scenario is not None else project.scenario_file(name)
    helpers = project.relative(project.helpers_dir) + "/"
    # Every helper file read, those that no longer parse included (they are not helpers
    # of the index then, and the scenario's calls of them would be the only sign).
    files = [read for read in index.files if read.startswith(helpers)] + [file]
    problems = index.errors_in(files)
    if scenario is None and not problems:
        raise UsageError(f"scenario '{name}' is gone from the project: not restarted")
    if problems:
        first = problems[0]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise UsageError(
            f"not restarted: {first.file}:{first.line}:{first.col}: {first.message}{more}"
        )
    assert scenario is not None
    return scenario, index.helper_table


def held_breakpoints(breakpoints: Breakpoints) -> dict[str, list[tuple[int, int]]]:
    """The breakpoints in effect now, by file, as positions."""
    held: dict[str, list[tuple[int, int]]] = {}
    for file, texts in breakpoints.active().items():
        for text in texts:
            line, _, col = text.partition(":")
            held.setdefault(file, []).append((int(line), int(col)))
    return held


def carry_breakpoints(
    held: Mapping[str, list[tuple[int, int]]],
    breakpoints: Breakpoints,
    warn: Callable[[str], None],
) -> None:
    """Add the old run's breakpoints to the new run's, resolved against the new
    statement starts (one moved or kept off a statement says so, as ``--break`` does);
    those of a file the scenario no longer uses are dropped, with a warning."""
    for file, positions in held.items():
        if file not in breakpoints.starts:
            warn(f"restart: {file} is no longer used by the scenario; its breakpoints dropped")
            continue
        for line, col in positions:
            position, note = breakpoints.resolve(file, line, col)
            breakpoints.add(file, position)
            if note:
                warn(note)
