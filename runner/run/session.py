"""One scenario run, from the project on disk to ``run:finished``.

The runner's asyncio loop owns Playwright, the webServer, signals and the scenario
timeout; the interpreter runs in a thread of its own (a large stack, so the 200-deep
call limit is always reachable) and reaches the browser through
:class:`runner.browser.bridge.LoopBridge`. Every exit path, including SIGINT while an
action is auto-waiting, closes the open steps, writes ``run:finished`` and the final
runtime.json, and closes the browser and the webServer.

:class:`ScenarioRun` is the front its callers see (``unotest e2e`` through
:mod:`runner.run.attempts`, the pytest plugin, a collection worker), made of two frozen
records (:mod:`runner.run.options`); its parts live next to it: the statement hook
chain (:mod:`runner.run.hook_chain`), the scenario's thread
(:mod:`runner.run.scenario_thread`), what the built-ins get (:mod:`runner.run.services`),
signals (:mod:`runner.run.signals`) and the result (:mod:`runner.run.result`); where it
runs is :mod:`runner.browser.lifecycle`, its debugger :mod:`runner.debug.setup`, and
its part in ``restart`` :class:`runner.debug.restart.RunRestarts`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import threading
import time
from dataclasses import replace

from dsl.errors import Interrupt, ScriptError
from runner import events
from runner.browser import contexts_ahead
from runner.browser.bridge import LoopBridge
from runner.browser.early_driver import EarlyDriver
from runner.browser.lifecycle import BrowserLifecycle, Driven
from runner.builtins.pick import PagePicker
from runner.debug.breakpoints import Breakpoints
from runner.debug.command_feed import CommandFeed
from runner.debug.controller import DebugController
from runner.debug.prompt import TerminalPrompt
from runner.debug.restart import Restarted, RunRestarts, abandon, carry_breakpoints
from runner.debug.setup import DebugOptions, prepare_breakpoints, start_debugger
from runner.errors import WebServerCancelled
from runner.events import RunError
from runner.protocol import FinishedOutcome
from runner.run.console import ConsoleOutput
from runner.run.hook_chain import HookChain, record_steps
from runner.run.options import RunOptions, ScenarioInputs
from runner.run.page_images import PageImages
from runner.run.result import RunResult, script_error_info, summary_lines
from runner.run.runtime_state import RuntimeState
from runner.run.scenario_thread import ABORTED_STEP, Execution, ScenarioThread
from runner.run.services import RunServices
from runner.run.signals import (
    FORCE_AFTER_S,
    RunStopper,
    force_stop,
    install_signal_handlers,
    quiet_driver_loss,
)
from runner.run.steps import FailurePoint, StepRecord, render_var
from runner.store.rundir import RunDirectory, capture_output_into
from runner.webserver.server import WebServer

__all__ = [
    "ABORTED_STEP",
    "DebugOptions",
    "RunOptions",
    "RunResult",
    "ScenarioInputs",
    "ScenarioRun",
    "quiet_driver_loss",
]


class ScenarioRun:
    """Everything one run needs; :meth:`run` is the whole lifecycle.

    Every part exists from construction on, so :meth:`abort` is valid at any moment.
    Before :meth:`run` it is remembered, as a signal during the run would be: the run,
    once started, still makes its run directory and ends it ``aborted`` at its first
    check, before any browser opens. After the run its result stands.
    """

    def __init__(
        self,
        inputs: ScenarioInputs,
        options: RunOptions | None = None,
        restarted: Restarted | None = None,
    ) -> None:
        """``restarted``: this run is another's ``restart`` (see :mod:`runner.debug.restart`)."""
        options = options if options is not None else RunOptions()
        self.inputs, self.options = inputs, options
        self.project, self.scenario, self.helpers = inputs.project, inputs.scenario, inputs.helpers
        self.config, self.masker = inputs.config, inputs.masker
        self.console = ConsoleOutput(options.out, inputs.masker.mask, quiet=options.quiet)
        self.stopper = RunStopper(
            self._stop_cleanly, self._force_stop, can_force=options.handle_signals
        )
        self.web_server_cancel = threading.Event()
        self.kept_web_server: WebServer | None = None
        """The webServer left up for the next attempt (``keep_web_server``)."""
        self.browser = BrowserLifecycle(
            inputs.config, inputs.project.root, inputs.scenario.name, inputs.masker
        )
        self.restarts = RunRestarts(
            restarted,
            self.browser,
            refusal=options.restart_refusal(),
            shared_browser=options.shared_browser,
            stopped=lambda: self.stopper.stopped,
            signal_name=lambda: self.signal_name,
        )
        self.services = RunServices(
            inputs,
            options,
            self.console,
            self.browser,
            step_count=lambda: self._steps().step_count,
            paused_for=self._paused_for,
            titled=lambda title: self._steps().titled(title),
        )
        # Made by run(): the loop they belong to, or the run directory, exists only then.
        self.bridge: LoopBridge | None = None
        self.rundir: RunDirectory | None = None
        self.steps: StepRecord | None = None
        self.runtime: RuntimeState | None = None
        self.hook: HookChain | None = None
        self.debugger: DebugController | None = None
        self.next_run: ScenarioRun | None = None
        """The run a ``restart`` starts after this one."""

    def run(self, early: EarlyDriver | None = None) -> RunResult:
        """The run, and each run a ``restart`` starts after it: the last one's result.
        ``early``: a loop with Playwright's driver already started on it
        (:mod:`runner.browser.early_driver`), which this run then owns and closes."""
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
            if run is not self and run.options.handle_signals:
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
        steps = self.steps
        if steps is None:
            return False
        controller = self.debugger
        return bool(steps.open) or (controller is not None and controller.current_pause is not None)

    def _terminal_prompt(self) -> TerminalPrompt | None:
        controller = self.debugger
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
        bridge = self._bind_loop(asyncio.get_running_loop())
        rundir, feed = await self._begin(bridge)
        outcome, error_info, bundle_path = await self._run_guarded(bridge, rundir, feed)
        await self._hand_over(rundir)
        try:
            self._finish_files(rundir, outcome)
        except BaseException:
            await self._abandon_next_run()
            raise
        steps = self._steps()
        result = RunResult(
            rundir.run_id,
            self.project.relative(rundir.path),
            self.scenario.name,
            outcome,
            int((time.monotonic() - started) * 1000),
            steps.step_count,
            error_info,
            bundle_path,
            self.signal_name,
        )
        for line in summary_lines(result):
            self.console.line(line)
        skipped = steps.failures_skipped
        if skipped and outcome == "completed":
            # A person skipped a failure at its pause: the run went on, the scenario
            # did not pass on its own, and its summary must not read as a clean pass.
            what = "1 failed step was" if skipped == 1 else f"{skipped} failed steps were"
            self.console.line(f"  note: {what} skipped at the debugger's failure pause")
        return result

    async def _begin(self, bridge: LoopBridge) -> tuple[RunDirectory, CommandFeed]:
        """Breakpoints checked (a bad ``--break`` fails before anything is written),
        then the run directory, the statement hook chain and ``run:started``; a driver
        started early is stopped when that fails."""
        try:
            breakpoints, file_keys = self._breakpoints()
        except BaseException:
            await self.browser.discard_prelaunch()  # a driver started early, if any
            raise
        if self.options.provided_page is None and self.restarts.shared_browser() is None:
            self.browser.prelaunch()  # the driver and browser start while the run sets up
        try:
            rundir = self._open_run_directory()
            self.services.bind(bridge, rundir)
            if self.options.handle_signals:
                install_signal_handlers(bridge.loop, self._request_stop)
            feed = self._build_hook_chain(rundir, bridge, breakpoints, file_keys)
            rundir.append(events.run_started(rundir.run_id, self.scenario.name))
            self._runtime().write_final("starting")
            where = self.project.relative(rundir.path)
            self.console.line(f"unotest e2e {self.scenario.name}  ({where})")
        except BaseException:
            await self.browser.discard_prelaunch()
            raise
        return rundir, feed

    def _build_hook_chain(
        self,
        rundir: RunDirectory,
        bridge: LoopBridge,
        breakpoints: Breakpoints,
        file_keys: dict[str, str],
    ) -> CommandFeed:
        """The interpreter's hook: the debugger first, then the steps and their
        listeners (steps.jsonl, the console, runtime.json). The debugger's command
        feed is running: the run stops it when it ends."""
        mask = self.masker.mask
        images = self._page_images(rundir, bridge)
        steps, runtime = record_steps(
            rundir,
            self.scenario.name,
            self.scenario.test_fn.name,
            self.console,
            breakpoints=breakpoints.active,
            page_info=self.services.page_info,
            secrets_count=lambda: len(self.masker),
            paused_for=self._paused_for,
            more=(images,),
        )
        debugger, feed = start_debugger(
            self._debug_options(),
            breakpoints,
            file_keys,
            scenario=self.scenario.name,
            rundir=rundir,
            write_state=runtime.write,
            render=functools.partial(render_var, mask=mask),
            bridge=bridge,
            masker=self.masker,
            warn=self.services.warn,
            idle_timeout_ms=self.config.debug.idle_timeout,
        )
        debugger.listeners.append(images)  # after the prompt: the pause is said first
        picker = PagePicker(bridge, lambda: self.services.browser.page, mask)
        debugger.picker = lambda command: picker(command.point, command.name, command.role)
        self.steps, self.runtime, self.debugger = steps, runtime, debugger
        self.hook = HookChain(steps, bridge, debugger, on_soft_failure=self._bundle_soft_failure)
        self.restarts.attach(debugger, bridge.loop, debugging=self.options.debug is not None)
        return feed

    def _page_images(self, rundir: RunDirectory, bridge: LoopBridge) -> PageImages:
        """The page's images: at every pause; after each step as ``pageImages.steps``
        says (``on-debug``: in a run under the debugger)."""
        setting = self.config.page_images
        services = self.services

        def touches() -> int:
            builtins = services.browser_builtins
            return builtins.page_touches if builtins is not None else 0

        return PageImages(
            rundir,
            bridge,
            lambda: services.browser.page,
            touches,
            self.masker.mask,
            self.project.relative,
            step_images=setting.steps == "on"
            or (setting.steps == "on-debug" and self.options.debug is not None),
            width=setting.width,
            loop_thread=services.loop_thread,
        )

    def _steps(self) -> StepRecord:
        assert self.steps is not None, "the run has not begun"
        return self.steps

    def _runtime(self) -> RuntimeState:
        assert self.runtime is not None, "the run has not begun"
        return self.runtime

    def _paused_for(self) -> float:
        """The seconds the debugger has held the run so far."""
        return self.debugger.paused_for() if self.debugger is not None else 0.0

    def _bind_loop(self, loop: asyncio.AbstractEventLoop) -> LoopBridge:
        if self.options.handle_signals:
            loop.set_exception_handler(quiet_driver_loss)
        bridge = LoopBridge(loop)
        if self.stopper.stopped:
            bridge.interrupt("aborted")  # aborted before it began
        self.bridge = bridge
        return bridge

    def _debug_options(self) -> DebugOptions | None:
        """A restarted run keeps the old run's prompt (``_watch_restart``): no new one."""
        debug, restarted = self.options.debug, self.restarts.restarted
        if debug is None or restarted is None or restarted.prompt is None:
            return debug
        return replace(debug, prompt=False)

    def _breakpoints(self) -> tuple[Breakpoints, dict[str, str]]:
        """``--break`` and ``.debugger.json``, or, restarted, the old run's breakpoints
        (those set by commands included, those cleared gone) on the new statements."""
        restarted, warn = self.restarts.restarted, self.services.warn
        if restarted is None:
            return prepare_breakpoints(
                self.options.debug, self.scenario, self.helpers, self.project.root, warn
            )
        breakpoints, file_keys = prepare_breakpoints(
            None, self.scenario, self.helpers, self.project.root, warn
        )
        carry_breakpoints(restarted.breakpoints, breakpoints, warn)
        return breakpoints, file_keys

    def _open_run_directory(self) -> RunDirectory:
        restarted = self.restarts.restarted
        if restarted is not None:
            rundir = restarted.rundir  # made by the run it restarts
        else:
            rundir = RunDirectory.create(
                self.project.runs_dir,
                "scenario",
                self.scenario.name,
                parent_run_id=self.options.parent_run_id,
                mask=self.masker.mask_data,
                browser_endpoint=self._browser_endpoint(),
            )
        self.rundir = rundir
        to_run_dir = os.environ.get("UNOTEST_OUTPUT_TO_RUN_DIR") == "1"
        if to_run_dir and self.options.parent_run_id is None:
            capture_output_into(rundir.path)
        rundir.start_heartbeat()
        if self.options.on_started is not None:
            self.options.on_started(rundir.run_id)
        return rundir

    def _browser_endpoint(self) -> str | None:
        """The Playwright server this run's browser comes from (the manifest's
        ``browserEndpoint``): a worker's, given; else the config's first endpoint when
        this run launches its own browser; None for a browser launched here."""
        options = self.options
        if options.browser_endpoint is not None or options.shared_browser is not None:
            return options.browser_endpoint
        if options.provided_page is not None or not self.config.endpoints:
            return None
        return self.config.endpoints[0].shown

    async def _run_guarded(
        self, bridge: LoopBridge, rundir: RunDirectory, feed: CommandFeed
    ) -> Driven:
        """The webServer and the scenario; whatever happens, both end and the feed stops.

        An infrastructure failure (webServer, browser launch) ends the run directory as
        failed, then reaches the CLI as it is; after a signal it is just the abort.
        """
        driven: Driven = ("failed", None, None)
        web_server: WebServer | None = None
        # A browser given to run scenario after scenario in (a worker's), not one kept up
        # for this run by the run it restarts.
        given_browser = self.options.shared_browser is not None and self.restarts.warm is None
        try:
            web_server = await self._start_web_server()
            bridge.check()
            driven = await self.browser.drive(
                rundir,
                self._execute,
                provided_page=self.options.provided_page,
                shared_browser=self.restarts.shared_browser(),
                keep_launched=self.restarts.keep_warm,
                standby=self.restarts.inherited_standby(),
                ahead=given_browser and contexts_ahead.wanted(),
                close_behind=given_browser,
            )
        except (Interrupt, WebServerCancelled, asyncio.CancelledError):
            driven = self._aborted()
        except Exception as exc:
            if not self.stopper.stopped:
                try:
                    self._finish_files(rundir, "failed", cause=exc)
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
                    self._steps().close_open_steps(*ABORTED_STEP)
        await self.browser.discard_prelaunch()  # not taken: the run ended before drive
        if self.restarts.keep_warm():
            await self.restarts.keep_for_next(web_server)
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
        warm = self.restarts.warm
        if warm is not None:
            return warm.web_server  # kept up by the run this one restarts
        if self.options.web_server is not None:
            return self.options.web_server  # an earlier attempt's
        if ws is None:
            return None
        return await asyncio.to_thread(
            WebServer.from_config, ws, mask=self.masker.mask, cancel=self.web_server_cancel
        )

    async def _cleanup(self, web_server: WebServer | None) -> None:
        """Close what this run holds and does not hand on: a browser it launched (or
        kept for a restart that did not come), one it inherited, the webServer."""
        await self.restarts.close_standbys()
        await self.browser.close_launched()
        await self.restarts.close_warm()
        keep = self.options.keep_web_server
        if web_server is not None and keep and self.stopper.signal_name is None:
            self.kept_web_server = web_server  # for the next attempt, which stops it
        elif web_server is not None:
            await asyncio.to_thread(web_server.stop)

    def _finish_files(
        self,
        rundir: RunDirectory,
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
            self._runtime().write_final(outcome)
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

    # --- restart (runner.debug.restart) ----------------------------------------------------

    async def _hand_over(self, rundir: RunDirectory) -> None:
        """After a ``restart``: the next run, on the scenario as the files say now, with
        what this run kept up for it (see :meth:`RunRestarts.hand_over`)."""
        following = await self.restarts.hand_over(
            rundir,
            self.project,
            self.scenario.name,
            self.masker.mask_data,
            self.services.warn,
            self.console.line,
        )
        if following is None:
            return
        inputs = replace(self.inputs, scenario=following.scenario, helpers=following.helpers)
        options = self.options
        kept = RunOptions(
            debug=options.debug,
            out=options.out,
            quiet=options.quiet,
            log_stream=options.log_stream,
            extra_env=options.extra_env,
            handle_signals=options.handle_signals,
            on_started=options.on_started,
        )
        self.next_run = ScenarioRun(inputs, kept, following.restarted)

    async def _abandon_next_run(self) -> None:
        """This run failed to end its files after handing over: the next one does not
        start; its browser closes and its directory ends ``aborted``."""
        successor, self.next_run = self.next_run, None
        if successor is not None and successor.restarts.restarted is not None:
            await abandon(successor.restarts.restarted)

    # --- stopping -------------------------------------------------------------------

    def _stop_cleanly(self, name: str) -> None:
        self.web_server_cancel.set()
        if self.bridge is not None:
            self.bridge.interrupt("aborted")
        controller = self.debugger
        if controller is not None:
            controller.release()
        self.console.line(f"\n{name}: aborting the run (again in a second to force it)")

    def _force_stop(self) -> None:
        force_stop(self.console, self.steps, self.runtime, self.rundir, self.signal_name)

    async def _execute(self) -> Execution:
        assert self.bridge is not None and self.hook is not None
        self.bridge.check()
        if self.options.debug is not None:
            self.restarts.open_standby()  # a restart is likely enough in a debug run
        thread = ScenarioThread(
            self.scenario,
            self.helpers,
            self.hook,
            self.console,
            self.bridge,
            self.config.timeouts.scenario,
            on_failure=self._bundle_before_teardown,
            scopes=self.options.scopes,
        )
        return await thread.execute(self.services.builtins())

    def _bundle_soft_failure(self, error: ScriptError, point: FailurePoint) -> None:
        """From the scenario thread: a soft assertion failed, the scenario goes on; its
        bundle is the page as the failure left it (no trace: the run's goes on too)."""
        assert self.bridge is not None and self.rundir is not None
        info = script_error_info(error, point, self.scenario.name)
        self.bridge.call(self.browser.bundle_soft(self.rundir, point.step_index, info))

    def _bundle_before_teardown(self, error_info: RunError, step_index: int) -> None:
        """From the scenario thread: the failure bundle before ``after_each`` runs."""
        assert self.bridge is not None and self.rundir is not None
        self.bridge.call(self.browser.bundle_now(self.rundir, step_index, error_info))
