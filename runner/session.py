"""One scenario run, from the project on disk to ``run:finished``.

The runner's asyncio loop owns Playwright, the webServer, signals and the scenario
timeout; the interpreter runs in a thread of its own (a large stack, so the 200-deep
call limit is always reachable) and reaches the browser through
:class:`runner.bridge.LoopBridge`. Every exit path, including SIGINT while an action
is auto-waiting, closes the open steps, writes ``run:finished`` and the final
runtime.json, and closes the browser and the webServer.

:class:`ScenarioRun` is the front its callers see (the CLI, the pytest plugin, a
collection worker); its parts live next to it: :mod:`runner.browser_lifecycle`,
:mod:`runner.scenario_thread`, :mod:`runner.debug_setup`, :mod:`runner.run_signals`
and :mod:`runner.run_result`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TextIO

from playwright.async_api import Browser, Page

from dsl.builtins import PureServices, make_pure_builtins
from dsl.errors import Interrupt
from dsl.interpreter import Builtin
from dsl.scenario import HelperTable, ScenarioFile
from runner import contexts_ahead, events
from runner.bridge import LoopBridge
from runner.browser_builtins import BrowserBuiltins, Timeouts
from runner.browser_lifecycle import BrowserLifecycle, Driven, Standby
from runner.command_feed import CommandFeed
from runner.config import Config
from runner.debug_setup import DebugOptions, prepare_breakpoints, start_debugger
from runner.debugger import Breakpoints
from runner.early_driver import EarlyDriver
from runner.errors import UnotestError, UsageError, WebServerCancelled
from runner.events import RunError
from runner.project import Project
from runner.prompt import PauseAnnouncer, TerminalPrompt
from runner.protocol import FinishedOutcome
from runner.reporter import ConsoleOutput, StepReporter
from runner.restart import (
    Handover,
    Restarted,
    RestartWatch,
    StandbyOpener,
    carry_breakpoints,
    held_breakpoints,
    reload_scenario,
    terminal_prompt_of,
)
from runner.run_result import RunResult, summary_lines
from runner.run_signals import (
    FORCE_AFTER_S,
    RunStopper,
    force_stop,
    install_signal_handlers,
    quiet_driver_loss,
)
from runner.rundir import RunDirectory, capture_output_into
from runner.scenario_thread import ABORTED_STEP, Execution, ScenarioThread
from runner.secrets import RunEnvironment, SecretMasker
from runner.webserver import WebServer

__all__ = ["ABORTED_STEP", "DebugOptions", "RunResult", "ScenarioRun", "quiet_driver_loss"]

TITLE_TIMEOUT_S = 1.0


class ScenarioRun:
    """Everything one run needs; :meth:`run` is the whole lifecycle.

    Every part exists from construction on, so :meth:`abort` is valid at any moment.
    Before :meth:`run` it is remembered, as a signal during the run would be: the run,
    once started, still makes its run directory and ends it ``aborted`` at its first
    check, before any browser opens. After the run its result stands.
    """

    def __init__(
        self,
        project: Project,
        scenario: ScenarioFile,
        helpers: HelperTable,
        config: Config,
        masker: SecretMasker,
        environment: RunEnvironment,
        out: TextIO = sys.stdout,
        quiet: bool = False,
        log_stream: TextIO = sys.stdout,
        parent_run_id: str | None = None,
        extra_env: dict[str, str] | None = None,
        debug: DebugOptions | None = None,
        shared_browser: Browser | None = None,
        handle_signals: bool = True,
        on_started: Callable[[str], None] | None = None,
        provided_page: Page | None = None,
        restarted: Restarted | None = None,
        web_server: WebServer | None = None,
        keep_web_server: bool = False,
    ) -> None:
        """``provided_page`` is a page someone else owns (pytest-playwright's, through
        runner.sync_adapter): the run drives it as it is, launching and closing nothing.
        ``restarted``: this run is another's ``restart`` (see :mod:`runner.restart`).
        ``web_server``: the one an earlier attempt of the same ``e2e`` started, used as
        it is; ``keep_web_server``: leave the webServer up at the end, in
        :attr:`kept_web_server`, for the next attempt (``--retries``: the site, and the
        state it keeps, stay as they were between attempts, as in a collection)."""
        self.project = project
        self.scenario = scenario
        self.helpers = helpers
        self.config = config
        self.masker = masker
        self.environment = environment
        self.log_stream = log_stream
        self.parent_run_id = parent_run_id
        self.extra_env = extra_env if extra_env is not None else {}
        self.debug = debug
        self.shared_browser = shared_browser
        self.handle_signals = handle_signals
        self.on_started = on_started
        self.provided_page = provided_page
        self.out = out
        self.quiet = quiet
        self.console = ConsoleOutput(out, masker.mask, quiet=quiet)
        self.stopper = RunStopper(self._stop_cleanly, self._force_stop, can_force=handle_signals)
        self.web_server_cancel = threading.Event()
        self.given_web_server = web_server
        self.keep_web_server = keep_web_server
        self.kept_web_server: WebServer | None = None
        self.browser = BrowserLifecycle(config, project.root, scenario.name, masker)
        # Made by run(): the loop they belong to, or the run directory, exists only then.
        self.bridge: LoopBridge | None = None
        self.loop_thread: threading.Thread | None = None
        self.rundir: RunDirectory | None = None
        self.reporter: StepReporter | None = None
        self.browser_builtins: BrowserBuiltins | None = None
        # restart: what this run inherited, what it hands on, and to whom.
        self.restarted = restarted
        self.warm: Handover | None = restarted.handover if restarted is not None else None
        self.handover: Handover | None = None
        self.next_run: ScenarioRun | None = None
        self.restart_watch = RestartWatch(likely=self._standby_soon)
        self._keep: bool | None = None
        self.standby = StandbyOpener()

    def run(self, early: EarlyDriver | None = None) -> RunResult:
        """The run, and each run a ``restart`` starts after it: the last one's result.
        ``early``: a loop with Playwright's driver already started on it
        (:mod:`runner.early_driver`), which this run then owns and closes."""
        if early is None:
            return asyncio.run(self._run_restarting())
        self.browser.early_driver = early.task or early.error
        early.task = None
        with asyncio.Runner(loop_factory=lambda: early.loop) as runner:
            return runner.run(self._run_restarting())

    async def run_async(self) -> RunResult:
        """For a worker that keeps one loop and one browser across scenarios (a
        ``restart`` there is refused: the worker's orchestrator decides what runs)."""
        return await self._main()

    async def _run_restarting(self) -> RunResult:
        run = self
        loop = asyncio.get_running_loop()
        while True:
            if run is not self and run.handle_signals:
                # Before anything of the next run: a signal meanwhile is its own (it
                # starts, and ends aborted, as a run signalled before it began does).
                install_signal_handlers(loop, run._request_stop)
            result = await run._main()
            successor = run.next_run
            if successor is None:
                return result
            if run.stopper.stopped and run.signal_name is not None:
                successor.abort(run.signal_name)  # a signal between the two runs
            run = successor

    def abort(self, reason: str = "SIGTERM") -> None:
        """Stop this run (a worker told to abort); from the loop's thread once it runs."""
        self._request_stop(reason)

    def _request_stop(self, name: str) -> None:
        """A signal or an abort. A later one (not the second half of a double Ctrl-C)
        also skips the ``after_each`` hooks the first one left running. With a person
        at the debugger's prompt, a first Ctrl-C pauses instead (see
        :meth:`TerminalPrompt.interrupted`)."""
        stopper = self.stopper
        if name == "SIGINT" and not stopper.stopped and self._in_scenario():
            prompt = self._terminal_prompt()
            if prompt is not None and prompt.interrupted():
                return
        if (
            stopper.stopped
            and self.bridge is not None
            and stopper.clock() - stopper.first_signal_at >= FORCE_AFTER_S
        ):
            self.bridge.interrupt("aborted")
        stopper.request(name)

    def _in_scenario(self) -> bool:
        """Whether the scenario's statements run (or wait at a pause): a Ctrl-C while
        the webServer starts or the run ends has no next statement to pause before."""
        reporter = self.reporter
        if reporter is None:
            return False
        controller = reporter.debugger
        return bool(reporter.open) or (
            controller is not None and controller.current_pause is not None
        )

    def _terminal_prompt(self) -> TerminalPrompt | None:
        controller = self.reporter.debugger if self.reporter is not None else None
        if controller is None:
            return None
        listeners = controller.listeners
        return next((item for item in listeners if isinstance(item, TerminalPrompt)), None)

    @property
    def signal_name(self) -> str | None:
        """What stopped the run from outside (a signal's name, or abort's reason)."""
        return self.stopper.signal_name

    # --- lifecycle ------------------------------------------------------------------

    async def _main(self) -> RunResult:
        started = time.monotonic()
        loop = asyncio.get_running_loop()
        bridge = self._bind_loop(loop)
        try:
            breakpoints, file_keys = self._breakpoints()
        except BaseException:
            await self.browser.discard_prelaunch()  # a driver started early, if any
            raise
        if self.provided_page is None and self._shared_browser() is None:
            self.browser.prelaunch()  # the driver and browser start while the run sets up
        try:
            rundir, reporter = self._open_run_directory(bridge)
            if self.handle_signals:
                install_signal_handlers(loop, self._request_stop)
            feed = start_debugger(
                self._debug_options(),
                breakpoints,
                file_keys,
                rundir=rundir,
                reporter=reporter,
                bridge=bridge,
                masker=self.masker,
                warn=self._warn,
                idle_timeout_ms=self.config.debug.idle_timeout,
            )
            self._watch_restart(reporter)
            rundir.append(events.run_started(rundir.run_id, self.scenario.name))
            reporter.write_final_runtime("starting")
            where = self.project.relative(rundir.path)
            self.console.line(f"unotest e2e {self.scenario.name}  ({where})")
        except BaseException:
            await self.browser.discard_prelaunch()
            raise
        outcome, error_info, bundle_path = await self._run_guarded(bridge, rundir, reporter, feed)
        await self._hand_over(rundir)
        try:
            self._finish_files(rundir, reporter, outcome)
        except BaseException:
            await self._abandon_next_run()
            raise
        result = RunResult(
            rundir.run_id,
            self.project.relative(rundir.path),
            self.scenario.name,
            outcome,
            int((time.monotonic() - started) * 1000),
            reporter.step_count,
            error_info,
            bundle_path,
            self.signal_name,
        )
        for line in summary_lines(result):
            self.console.line(line)
        skipped = reporter.failures_skipped
        if skipped and outcome == "completed":
            # A person skipped a failure at its pause: the run went on, the scenario
            # did not pass on its own, and its summary must not read as a clean pass.
            steps = "1 failed step was" if skipped == 1 else f"{skipped} failed steps were"
            self.console.line(f"  note: {steps} skipped at the debugger's failure pause")
        return result

    def _bind_loop(self, loop: asyncio.AbstractEventLoop) -> LoopBridge:
        if self.handle_signals:
            loop.set_exception_handler(quiet_driver_loss)
        bridge = LoopBridge(loop)
        if self.stopper.stopped:
            bridge.interrupt("aborted")  # aborted before it began
        self.bridge = bridge
        self.loop_thread = threading.current_thread()
        return bridge

    def _debug_options(self) -> DebugOptions | None:
        """A restarted run keeps the old run's prompt (``_watch_restart``): no new one."""
        if self.debug is None or self.restarted is None or self.restarted.prompt is None:
            return self.debug
        return replace(self.debug, prompt=False)

    def _breakpoints(self) -> tuple[Breakpoints, dict[str, str]]:
        """``--break`` and ``.debugger.json``, or, restarted, the old run's breakpoints
        (those set by commands included, those cleared gone) on the new statements."""
        if self.restarted is None:
            return prepare_breakpoints(
                self.debug, self.scenario, self.helpers, self.project.root, self._warn
            )
        breakpoints, file_keys = prepare_breakpoints(
            None, self.scenario, self.helpers, self.project.root, self._warn
        )
        carry_breakpoints(self.restarted.breakpoints, breakpoints, self._warn)
        return breakpoints, file_keys

    def _open_run_directory(self, bridge: LoopBridge) -> tuple[RunDirectory, StepReporter]:
        if self.restarted is not None:
            rundir = self.restarted.rundir  # made by the run it restarts
        else:
            rundir = RunDirectory.create(
                self.project.runs_dir,
                "scenario",
                self.scenario.name,
                parent_run_id=self.parent_run_id,
                mask=self.masker.mask_data,
            )
        self.rundir = rundir
        if os.environ.get("UNOTEST_OUTPUT_TO_RUN_DIR") == "1" and self.parent_run_id is None:
            capture_output_into(rundir.path)
        rundir.start_heartbeat()
        if self.on_started is not None:
            self.on_started(rundir.run_id)
        self.reporter = StepReporter(
            rundir,
            rundir.run_id,
            self.scenario.name,
            self.scenario.test_fn.name,
            self.console,
            bridge,
            page_info=self._page_info,
            secrets_count=lambda: len(self.masker),
        )
        return rundir, self.reporter

    async def _run_guarded(
        self, bridge: LoopBridge, rundir: RunDirectory, reporter: StepReporter, feed: CommandFeed
    ) -> Driven:
        """The webServer and the scenario; whatever happens, both end and the feed stops.

        An infrastructure failure (webServer, browser launch) ends the run directory as
        failed, then reaches the CLI as it is; after a signal it is just the abort.
        """
        driven: Driven = ("failed", None, None)
        web_server: WebServer | None = None
        try:
            web_server = await self._start_web_server()
            bridge.check()
            driven = await self.browser.drive(
                rundir,
                self._execute,
                provided_page=self.provided_page,
                shared_browser=self._shared_browser(),
                keep_launched=self._keep_warm,
                standby=self._inherited_standby(),
                ahead=self.shared_browser is not None
                and self.warm is None
                and contexts_ahead.wanted(),
                close_behind=self.shared_browser is not None and self.warm is None,
            )
        except (Interrupt, WebServerCancelled, asyncio.CancelledError):
            driven = self._aborted()
        except Exception as exc:
            if not self.stopper.stopped:
                try:
                    self._finish_files(rundir, reporter, "failed", cause=exc)
                finally:
                    await self._cleanup(web_server)
                    feed.stop()
                raise
            driven = self._aborted()
        finally:
            if driven[0] == "aborted":
                # A write error here must not skip the cleanup below; _finish_files
                # meets it again and reports it.
                with contextlib.suppress(OSError):
                    reporter.close_open_steps(*ABORTED_STEP)
        await self.browser.discard_prelaunch()  # not taken: the run ended before drive
        if self._keep_warm():
            self.handover = await self._warm_for_next(web_server)
        else:
            await self._cleanup(web_server)
        feed.stop()
        return driven

    def _aborted(self) -> Driven:
        """Aborted, keeping what the scenario had ended with if a launched browser's
        close was what got cancelled."""
        _, error_info, bundle_path = self.browser.driven or (None, None, None)
        return "aborted", error_info, bundle_path

    async def _start_web_server(self) -> WebServer | None:
        ws = self.config.web_server
        if self.warm is not None:
            return self.warm.web_server  # kept up by the run this one restarts
        if self.given_web_server is not None:
            return self.given_web_server  # an earlier attempt's
        if ws is None:
            return None
        return await asyncio.to_thread(
            WebServer.from_config, ws, mask=self.masker.mask, cancel=self.web_server_cancel
        )

    async def _cleanup(self, web_server: WebServer | None) -> None:
        """Close what this run holds and does not hand on: a browser it launched (or
        kept for a restart that did not come), one it inherited, the webServer."""
        for standby in (await self.standby.take(), self._inherited_standby()):
            if standby is not None:
                await standby.close()
        await self.browser.close_launched()
        inherited = self.warm.browser if self.warm is not None else None
        for warm in (self.browser.kept, inherited):
            if warm is not None:
                await warm.close()
        self.browser.kept = None
        self.warm = None
        if web_server is not None and self.keep_web_server and self.stopper.signal_name is None:
            self.kept_web_server = web_server  # for the next attempt, which stops it
        elif web_server is not None:
            await asyncio.to_thread(web_server.stop)

    def _finish_files(
        self,
        rundir: RunDirectory,
        reporter: StepReporter,
        outcome: FinishedOutcome,
        cause: Exception | None = None,
    ) -> None:
        """The final runtime.json, ``run:finished``, the run directory closed.

        runtime.json first, as for a pause: a reader that sees ``run:finished`` and then
        reads runtime.json must find the final state, not the last ``running``. When
        steps.jsonl cannot grow (disk full, RLIMIT_FSIZE), runtime.json, a small file
        rewritten whole, still records how the run ended; the write error goes on to
        the CLI. ``cause``: why the run could not go on (the webServer, the browser):
        ``run:finished`` says it (ours, additive), or a reader of the run directory
        would see a failure without a reason.
        """
        runtime_error: Exception | None = None
        try:
            reporter.write_final_runtime(outcome)
        except Exception as err:
            runtime_error = err
        finished = events.run_finished(outcome)
        if cause is not None:
            finished["error"] = self.masker.mask(str(cause) or type(cause).__name__)
            finished["errorName"] = type(cause).__name__
        try:
            rundir.append(finished)
        finally:
            rundir.close()  # the heartbeat stops whatever happened to the files
        if runtime_error is not None:
            raise runtime_error

    # --- restart (runner.restart) ----------------------------------------------------

    def _shared_browser(self) -> Browser | None:
        if self.warm is not None and self.warm.browser is not None:
            return self.warm.browser.browser
        return self.shared_browser

    def _restart_refusal(self) -> str | None:
        """Why this run cannot restart in its process, if it cannot."""
        if self.provided_page is not None:
            return "not restarted: this run drives a page it does not own (pytest)"
        if self.shared_browser is not None or self.parent_run_id is not None:
            return "not restarted: a scenario of a collection run restarts with the collection"
        return None

    def _too_late(self) -> str:
        if self.stopper.stopped:
            return f"not restarted: {self.signal_name} ended the run"
        return "not restarted: the run was already ending"

    def _keep_warm(self) -> bool:
        """Whether the browser and the webServer stay up for a restart; asked once the
        scenario has ended, and the first answer stands (the browser's fate is sealed
        by it), so a ``restart`` later than that is answered as too late."""
        if self._keep is None:
            controller = self.reporter.debugger if self.reporter is not None else None
            self._keep = (
                controller is not None
                and controller.restart_requested
                and self._restart_refusal() is None
                and not self.stopper.stopped
            )
        return self._keep

    async def _warm_for_next(self, web_server: WebServer | None) -> Handover:
        """The browser (launched here and kept, or inherited) and the webServer for the
        next run. A restart before the browser was up, or after it died, hands on no
        browser: the next run launches one, as a first run does."""
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
        return Handover(browser, web_server, standby)

    def _standby_soon(self) -> None:
        """From any thread, when a restart may come (a pause) or has come."""
        if self.bridge is not None:
            self.standby.soon(self.bridge.loop, self._open_standby)

    def _open_standby(self) -> None:
        """On the loop. A debug run opens it as soon as its own page is there."""
        if self._restart_refusal() is None:
            browser = self._shared_browser() or self.browser.launched
            self.standby.open(browser, self.browser.open_standby)

    def _inherited_standby(self) -> Standby | None:
        warm = self.warm
        standby = warm.standby if warm is not None else None
        if warm is not None:
            warm.standby = None
        return standby

    def _watch_restart(self, reporter: StepReporter) -> None:
        """Hear the ``restart`` command; a restarted run keeps the old run's terminal
        prompt (a second one would race it for stdin) with no idle timeout, as
        ``start_debugger`` sets a prompt up."""
        controller = reporter.debugger
        if controller is None:
            return
        controller.listeners.append(self.restart_watch)
        prompt = self.restarted.prompt if self.restarted is not None else None
        if prompt is not None and self.debug is not None:
            controller.listeners[:] = [
                item for item in controller.listeners if not isinstance(item, PauseAnnouncer)
            ]
            controller.idle_timeout_s = None
            prompt.controller = controller
            controller.listeners.append(prompt)

    async def _hand_over(self, rundir: RunDirectory) -> None:
        """After a ``restart``: the scenario read again, the next run's directory made
        (``restartOf``), and this run's ``command:result`` naming it, before this run's
        ``run:finished``; or the reason no run follows, and everything closed."""
        controller = self.reporter.debugger if self.reporter is not None else None
        asked = controller is not None and controller.restart_requested
        ident = self.restart_watch.ident_in(rundir) if asked else None
        handover, self.handover = self.handover, None
        if ident is None:
            if handover is not None:
                await handover.close()
            return
        try:
            if handover is None:
                raise UsageError(self._restart_refusal() or self._too_late())
            scenario, helpers = await asyncio.to_thread(
                reload_scenario, self.project, self.scenario.name
            )
            new_dir = RunDirectory.create(
                self.project.runs_dir,
                "scenario",
                self.scenario.name,
                restart_of=rundir.run_id,
                mask=self.masker.mask_data,
            )
        except UnotestError as err:
            if handover is not None:
                await handover.close()
            self._warn(str(err))
            rundir.append(events.command_result(ident, False, error=str(err)))
            return
        rundir.append(events.command_result(ident, True, value=new_dir.run_id))
        self.console.line(f"restart: {rundir.run_id} → {new_dir.run_id}")
        self.next_run = self._successor(scenario, helpers, Restarted(new_dir, handover))

    def _successor(
        self, scenario: ScenarioFile, helpers: HelperTable, restarted: Restarted
    ) -> ScenarioRun:
        controller = self.reporter.debugger if self.reporter is not None else None
        if controller is not None:
            restarted.breakpoints = held_breakpoints(controller.breakpoints)
            restarted.prompt = terminal_prompt_of(controller.listeners)
        return ScenarioRun(
            self.project,
            scenario,
            helpers,
            self.config,
            self.masker,
            self.environment,
            out=self.out,
            quiet=self.quiet,
            log_stream=self.log_stream,
            extra_env=self.extra_env,
            debug=self.debug,
            handle_signals=self.handle_signals,
            on_started=self.on_started,
            restarted=restarted,
        )

    async def _abandon_next_run(self) -> None:
        """This run failed to end its files after handing over: the next one does not
        start; its browser closes and its directory ends ``aborted``."""
        successor, self.next_run = self.next_run, None
        if successor is None or successor.restarted is None:
            return
        await successor.restarted.handover.close()
        with contextlib.suppress(Exception):
            successor.restarted.rundir.append(events.run_finished("aborted"))
        successor.restarted.rundir.close()

    # --- stopping -------------------------------------------------------------------

    def _stop_cleanly(self, name: str) -> None:
        self.web_server_cancel.set()
        if self.bridge is not None:
            self.bridge.interrupt("aborted")
        controller = self.reporter.debugger if self.reporter is not None else None
        if controller is not None:
            controller.release()
        self.console.line(f"\n{name}: aborting the run (again in a second to force it)")

    def _force_stop(self) -> None:
        force_stop(self.console, self.reporter, self.rundir, self.signal_name)

    # --- what the scenario thread runs with ---------------------------------------------

    async def _execute(self) -> Execution:
        assert self.bridge is not None and self.reporter is not None
        self.bridge.check()
        if self.debug is not None:
            self._open_standby()  # a restart is likely enough in a debug run
        thread = ScenarioThread(
            self.scenario,
            self.helpers,
            self.reporter,
            self.bridge,
            self.config.timeouts.scenario,
            on_failure=self._bundle_before_teardown,
        )
        return await thread.execute(self._builtins())

    def _bundle_before_teardown(self, error_info: RunError, step_index: int) -> None:
        """From the scenario thread: the failure bundle before ``after_each`` runs."""
        assert self.bridge is not None and self.rundir is not None
        self.bridge.call(self.browser.bundle_now(self.rundir, step_index, error_info))

    def _builtins(self) -> dict[str, Builtin]:
        assert self.bridge is not None and self.rundir is not None
        run_tag = self.rundir.run_id.rsplit("-", 1)[-1]
        timeouts = self.config.timeouts
        pure = make_pure_builtins(
            PureServices(
                env=self._env,
                log=self._log,
                run_tag=run_tag,
                sleep=self.bridge.sleep,
                elapsed=self._active_seconds,
                expect_timeout_ms=float(timeouts.expect),
            )
        )
        browser_builtins = BrowserBuiltins(
            self.bridge,
            self._require_page,
            Timeouts(float(timeouts.action), float(timeouts.expect), float(timeouts.navigation)),
            self.config.base_url,
            self.project.root,
            self._screenshot,
            self.browser.dialogs,
            self.browser.use_page,
            self.rundir.path,
        )
        self.browser_builtins = browser_builtins
        return {**pure, **browser_builtins.builtins()}

    def _active_seconds(self) -> float:
        """A monotonic clock that stands still while the debugger holds the run."""
        controller = self.reporter.debugger if self.reporter is not None else None
        paused = controller.paused_for() if controller is not None else 0.0
        return time.monotonic() - paused

    def _env(self, name: str) -> str | None:
        if name in self.extra_env:
            return self.extra_env[name]
        return self.environment.get(name)

    def _log(self, line: str) -> None:
        self.console._end_pending()
        # One write, line and newline together: after an abort the loop's thread prints
        # too (the after_each hooks still log), and print() writes the two apart.
        self.log_stream.write(self.masker.mask(line) + "\n")
        self.log_stream.flush()

    def _warn(self, text: str) -> None:
        self.console._end_pending()
        print(self.masker.mask(f"unotest: {text}"), file=sys.stderr, flush=True)

    def _require_page(self) -> Page:
        assert self.browser.page is not None
        return self.browser.page

    async def _screenshot(self, name: str | None) -> None:
        assert self.rundir is not None and self.reporter is not None
        rundir = self.rundir
        page = self._require_page()
        index = self.reporter.step_count
        safe = "".join(
            ch if ch.isalnum() or ch in "-_" else "-" for ch in (name or f"step-{index}")
        )
        base = safe or "screenshot"
        relative_name = f"screenshot/{base}.png"
        suffix = 2
        while (rundir.path / relative_name).exists():
            # Two screenshots with the same name keep both images and both events.
            relative_name = f"screenshot/{base}-{suffix}.png"
            suffix += 1
        data = await page.screenshot()
        path = rundir.write_bytes_file(relative_name, data)
        rundir.append(events.screenshot(self.project.relative(path)))

    def _page_info(self) -> dict[str, str] | None:
        """``runtime.json``'s ``page``; the title is refreshed only from the scenario thread.

        The bridge blocks its caller until the loop has run the coroutine, so a call
        from the loop's own thread would wait for itself forever.
        """
        page = self.browser.page
        if page is None or page.is_closed():
            return None
        builtins = self.browser_builtins
        if (
            builtins is not None
            and builtins.touched_page
            and threading.current_thread() is not self.loop_thread
        ):
            builtins.touched_page = False
            assert self.bridge is not None
            try:
                self.browser.page_title = self.bridge.call(_title_of(page))
            except Interrupt:
                raise
            except Exception:
                pass
        return {"url": page.url, "title": self.browser.page_title}


async def _title_of(page: Page) -> str:
    """``page.title()`` made only once the loop runs this: an interrupted bridge closes
    the coroutine unstarted, and an inner one made eagerly (``wait_for(page.title())``)
    would be left behind, "never awaited", a RuntimeWarning on stderr."""
    return await asyncio.wait_for(page.title(), TITLE_TIMEOUT_S)
