"""``restart``: what one run hands the next when the scenario starts again in-process.

A ``restart`` ends a run as ``aborted`` (the debugger's ``restart_requested``) and
starts its scenario again without paying the start-up a cold ``unotest e2e`` pays:
the Python imports, Playwright's driver, Chromium and the webServer stay up. The
browser passes to the next run as its shared browser, which opens a fresh context of
it exactly as a collection worker runs each of its scenarios
(:class:`runner.run.session.ScenarioRun`'s ``shared_browser``), so nothing of the old
run's cookies, storage or pages is left. What does change is read again: the scenario
and helper files are re-read and re-parsed (an edit counts), and the breakpoints in
effect at the restart, those set by commands included, move over, re-resolved against
the new statement starts.

The two run directories are linked both ways: the new manifest names the old run in
``restartOf``, and the old run's ``command:result`` for the ``restart`` names the new
run id in ``value`` (``ok: false`` with the reason when no new run starts: a file that
no longer parses, a run that cannot restart). This module holds those pieces, and
:class:`RunRestarts`, one run's part in it; the loop that runs one run after the other
is :meth:`runner.run.session.ScenarioRun.run`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from playwright.async_api import Browser

from dsl.errors import ScriptError
from dsl.interpreter import Step
from dsl.scenario import HelperTable, ScenarioFile
from runner import events
from runner.browser.lifecycle import BrowserLifecycle, Standby, WarmBrowser
from runner.debug.breakpoints import Breakpoints
from runner.debug.commands import Command
from runner.debug.controller import DebugController, DebugListener, PauseReason
from runner.debug.prompt import PauseAnnouncer, TerminalPrompt
from runner.errors import UnotestError, UsageError
from runner.project.index import Project, ProjectIndex
from runner.store.rundir import RunDirectory
from runner.store.runs import events_of
from runner.webserver.server import WebServer

__all__ = [
    "RESTART_CMD",
    "Handover",
    "NextRun",
    "RestartWatch",
    "Restarted",
    "RunRestarts",
    "StandbyOpener",
    "abandon",
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
        for event in events_of(rundir.path):
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
    # Every helper file read, those that no longer parse included (they are not helpers
    # of the index then, and the scenario's calls of them would be the only sign), the
    # _hooks.js files over it, and its own.
    problems = index.problems_of(file)
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


@dataclass
class NextRun:
    """What :meth:`RunRestarts.hand_over` gives the run that starts after a restart."""

    scenario: ScenarioFile
    helpers: HelperTable
    restarted: Restarted


class RunRestarts:
    """One run's part in ``restart``: what it inherited from the run it restarts (a
    warm browser, the webServer, a context opened ahead), and what it hands on when a
    ``restart`` comes. ``refusal`` says why this run can never restart in its process
    (a page it does not own, a collection's scenario), or is None; ``stopped`` and
    ``signal_name`` tell whether and how the run was stopped from outside.
    """

    def __init__(
        self,
        restarted: Restarted | None,
        browser: BrowserLifecycle,
        *,
        refusal: str | None,
        shared_browser: Browser | None,
        stopped: Callable[[], bool],
        signal_name: Callable[[], str | None],
    ) -> None:
        self.restarted = restarted
        self.browser = browser
        self.refusal = refusal
        self.given_browser = shared_browser
        self.stopped = stopped
        self.signal_name = signal_name
        self.warm: Handover | None = restarted.handover if restarted is not None else None
        """What this run inherited and has not closed or handed on."""
        self.handover: Handover | None = None
        """What this run keeps up for the next, once its scenario has ended."""
        self.watch = RestartWatch(likely=self.soon)
        self.standby = StandbyOpener()
        self.controller: DebugController | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._keep: bool | None = None

    def attach(
        self, controller: DebugController, loop: asyncio.AbstractEventLoop, debugging: bool
    ) -> None:
        """Hear the ``restart`` command; a restarted run keeps the old run's terminal
        prompt (a second one would race it for stdin) with no idle timeout, as
        ``start_debugger`` sets a prompt up."""
        self.controller = controller
        self._loop = loop
        controller.listeners.append(self.watch)
        prompt = self.restarted.prompt if self.restarted is not None else None
        if prompt is not None and debugging:
            controller.listeners[:] = [
                item for item in controller.listeners if not isinstance(item, PauseAnnouncer)
            ]
            controller.idle_timeout_s = None
            prompt.controller = controller
            controller.listeners.append(prompt)

    # --- while the run runs ----------------------------------------------------------

    def shared_browser(self) -> Browser | None:
        """The browser the run opens its context in: the warm one it inherited, or the
        one it was given (a worker's); None: it launches its own."""
        if self.warm is not None and self.warm.browser is not None:
            return self.warm.browser.browser
        return self.given_browser

    def inherited_standby(self) -> Standby | None:
        """The context opened ahead for this run by the run before (taken once)."""
        warm = self.warm
        standby = warm.standby if warm is not None else None
        if warm is not None:
            warm.standby = None
        return standby

    def soon(self) -> None:
        """From any thread, when a restart may come (a pause) or has come."""
        if self._loop is not None:
            self.standby.soon(self._loop, self.open_standby)

    def open_standby(self) -> None:
        """On the loop. A debug run opens it as soon as its own page is there."""
        if self.refusal is None:
            browser = self.shared_browser() or self.browser.launched
            self.standby.open(browser, self.browser.open_standby)

    # --- when the scenario has ended -------------------------------------------------

    def keep_warm(self) -> bool:
        """Whether the browser and the webServer stay up for a restart; asked once the
        scenario has ended, and the first answer stands (the browser's fate is sealed
        by it), so a ``restart`` later than that is answered as too late."""
        if self._keep is None:
            controller = self.controller
            self._keep = (
                controller is not None
                and controller.restart_requested
                and self.refusal is None
                and not self.stopped()
            )
        return self._keep

    async def keep_for_next(self, web_server: WebServer | None) -> None:
        """The browser (launched here and kept, or inherited) and the webServer kept for
        the next run. A restart before the browser was up, or after it died, hands on
        no browser: the next run launches one, as a first run does."""
        browser = self.warm.browser if self.warm is not None else self.browser.kept
        standby = await self.standby.take()
        self.browser.kept = None
        self.warm = None
        if browser is not None and not browser.browser.is_connected():
            await browser.close()  # its driver
            browser = None
        if standby is not None and browser is None:
            await standby.close()
            standby = None
        self.handover = Handover(browser, web_server, standby)

    async def close_standbys(self) -> None:
        """Close the contexts opened ahead that nobody takes (this run's, and the one
        the run before opened for it)."""
        for standby in (await self.standby.take(), self.inherited_standby()):
            if standby is not None:
                await standby.close()

    async def close_warm(self) -> None:
        """Close a browser kept for a restart that did not come, or one inherited."""
        inherited = self.warm.browser if self.warm is not None else None
        for warm in (self.browser.kept, inherited):
            if warm is not None:
                await warm.close()
        self.browser.kept = None
        self.warm = None

    async def hand_over(
        self,
        rundir: RunDirectory,
        project: Project,
        scenario: str,
        mask_data: Callable[[Any], Any],
        warn: Callable[[str], None],
        say: Callable[[str], None],
    ) -> NextRun | None:
        """After a ``restart``: the scenario read again, the next run's directory made
        (``restartOf``), and this run's ``command:result`` naming it, before this run's
        ``run:finished``; or the reason no run follows, and everything closed."""
        controller = self.controller
        asked = controller is not None and controller.restart_requested
        ident = self.watch.ident_in(rundir) if asked else None
        handover, self.handover = self.handover, None
        if ident is None:
            if handover is not None:
                await handover.close()
            return None
        try:
            if handover is None:
                raise UsageError(self.refusal or self._too_late())
            loaded, helpers = await asyncio.to_thread(reload_scenario, project, scenario)
            new_dir = RunDirectory.create(
                project.runs_dir, "scenario", scenario, restart_of=rundir.run_id, mask=mask_data
            )
        except UnotestError as err:
            if handover is not None:
                await handover.close()
            warn(str(err))
            rundir.append(events.command_result(ident, False, error=str(err)))
            return None
        rundir.append(events.command_result(ident, True, value=new_dir.run_id))
        say(f"restart: {rundir.run_id} → {new_dir.run_id}")
        restarted = Restarted(new_dir, handover)
        if controller is not None:
            restarted.breakpoints = held_breakpoints(controller.breakpoints)
            restarted.prompt = terminal_prompt_of(controller.listeners)
        return NextRun(loaded, helpers, restarted)

    def _too_late(self) -> str:
        if self.stopped():
            return f"not restarted: {self.signal_name()} ended the run"
        return "not restarted: the run was already ending"


async def abandon(restarted: Restarted) -> None:
    """The run that restarted failed to end its files after handing over: the next run
    does not start; its browser closes and its directory ends ``aborted``."""
    await restarted.handover.close()
    with contextlib.suppress(Exception):
        restarted.rundir.append(events.run_finished("aborted"))
    restarted.rundir.close()
