"""One scenario run, from the project on disk to ``run:finished``.

The runner's asyncio loop owns Playwright, the webServer, signals and the scenario
timeout; the interpreter runs in a thread of its own (a large stack, so the 200-deep
call limit is always reachable) and reaches the browser through
:class:`runner.bridge.LoopBridge`. Every exit path, including SIGINT while an action
is auto-waiting, closes the open steps, writes ``run:finished`` and the final
runtime.json, and closes the browser and the webServer.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TextIO

from playwright.async_api import Browser, BrowserContext, Page, async_playwright

from dsl.builtins import PureServices, make_pure_builtins
from dsl.errors import Interrupt, ScriptError
from dsl.interpreter import Interpreter
from dsl.scenario import ScenarioFile
from runner import protocol
from runner.bridge import LoopBridge
from runner.browser import launch_browser
from runner.browser_builtins import BrowserBuiltins, Timeouts
from runner.bundle import PageRecorder, write_failure_bundle
from runner.command_feed import CommandFeed
from runner.config import Config
from runner.debugger import Breakpoints, DebugController, load_breakpoints_file, statement_starts
from runner.errors import UsageError, WebServerCancelled
from runner.project import Project
from runner.prompt import TerminalPrompt
from runner.reporter import ConsoleOutput, StepReporter, render_var
from runner.rundir import RunDirectory, capture_output_into
from runner.secrets import RunEnvironment, SecretMasker
from runner.webserver import WebServer

__all__ = ["RunOutcome", "RunResult", "ScenarioRun", "quiet_driver_loss"]

RunOutcome = Literal["completed", "failed", "aborted"]
THREAD_STACK_BYTES = 256 * 1024 * 1024
FORCE_AFTER_S = 1.0


@dataclass(frozen=True)
class DebugOptions:
    """``--debug``: breakpoints (``--break`` as (file or None, line, col or None)),
    ``--step``, and whether the terminal prompt runs (stdin is a TTY)."""

    breaks: tuple[tuple[str | None, int, int | None], ...] = ()
    step_first: bool = False
    prompt: bool = False


@dataclass
class RunResult:
    run_id: str
    run_dir: str
    scenario: str
    outcome: RunOutcome
    duration_ms: int
    steps: int
    error: dict[str, Any] | None = None
    bundle_path: str | None = None
    signal: str | None = None


    def to_json(self) -> dict[str, Any]:
        return {
            "runId": self.run_id,
            "runDir": self.run_dir,
            "scenario": self.scenario,
            "outcome": self.outcome,
            "durationMs": self.duration_ms,
            "steps": self.steps,
            "error": self.error,
            "bundlePath": self.bundle_path,
        }


@dataclass
class ScenarioRun:
    """Everything one run needs; :meth:`run` is the whole lifecycle."""

    project: Project
    scenario: ScenarioFile
    helpers: dict[str, Any]
    config: Config
    masker: SecretMasker
    environment: RunEnvironment
    out: TextIO = sys.stdout
    quiet: bool = False
    log_stream: TextIO = sys.stdout
    parent_run_id: str | None = None
    extra_env: dict[str, str] = field(default_factory=dict)
    debug: DebugOptions | None = None
    shared_browser: Browser | None = None
    handle_signals: bool = True
    on_started: Callable[[str], None] | None = None
    provided_page: Page | None = None
    """A page someone else owns (pytest-playwright's, through runner.sync_adapter): the
    run drives it as it is, launching nothing and closing nothing."""

    def run(self) -> RunResult:
        return asyncio.run(self._main())

    async def run_async(self) -> RunResult:
        """For a worker that keeps one loop and one browser across scenarios."""
        return await self._main()

    def abort(self, reason: str = "SIGTERM") -> None:
        """Stop this run from the loop's thread (a worker told to abort)."""
        self._on_signal(reason)

    # --- lifecycle ------------------------------------------------------------------

    async def _main(self) -> RunResult:
        started = time.monotonic()
        loop = asyncio.get_running_loop()
        if self.handle_signals:
            loop.set_exception_handler(quiet_driver_loss)
        self.bridge = LoopBridge(loop)
        self.loop_thread = threading.current_thread()
        self.signal_name: str | None = None
        self.first_signal_at = 0.0
        self.console = ConsoleOutput(self.out, self.masker.mask, quiet=self.quiet)
        breakpoints, file_keys = self._prepare_breakpoints()
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
        console = self.console
        self.page: Page | None = None
        self.bundle_attempted = False
        self.context: BrowserContext | None = None
        self.recorder = PageRecorder()
        self.page_title = ""
        reporter = StepReporter(
            rundir,
            rundir.run_id,
            self.scenario.name,
            self.scenario.test_fn.name,
            console,
            self.bridge,
            page_info=self._page_info,
        )
        self.reporter = reporter
        self.web_server_cancel = threading.Event()
        if self.handle_signals:
            self._install_signals(loop)
        feed = self._start_debugger(breakpoints, file_keys)
        rundir.append(
            {"kind": "run:started", "runId": rundir.run_id, "scenario": self.scenario.name}
        )
        reporter.write_final_runtime("starting")
        console.line(f"unotest e2e {self.scenario.name}  ({self.project.relative(rundir.path)})")

        outcome: RunOutcome = "failed"
        error_info: dict[str, Any] | None = None
        bundle_path: str | None = None
        web_server: WebServer | None = None
        browser: Browser | None = None
        try:
            if self.config.web_server is not None:
                ws = self.config.web_server
                web_server = await asyncio.to_thread(
                    WebServer.start,
                    ws.command,
                    ws.url,
                    cwd=ws.cwd,
                    timeout_ms=ws.timeout,
                    reuse_existing_server=ws.reuse_existing_server,
                    log=lambda line: None,
                    cancel=self.web_server_cancel,
                )
            self.bridge.check()
            if self.provided_page is not None:
                outcome, error_info, bundle_path = await self._drive_page(
                    self.provided_page, tracing=False
                )
            elif self.shared_browser is not None:
                outcome, error_info, bundle_path = await self._drive(self.shared_browser)
            else:
                async with async_playwright() as playwright:
                    browser = await launch_browser(
                        playwright,
                        browser=self.config.browser,
                        headless=self.config.headless,
                        executable_path=self.config.executable_path,
                        ws_endpoint=self.config.ws_endpoint,
                    )
                    outcome, error_info, bundle_path = await self._drive(browser)
                    await self._close(browser)
                    browser = None
        except (Interrupt, WebServerCancelled):
            outcome = "aborted"
        except asyncio.CancelledError:
            outcome = "aborted"
        except Exception as err:
            # Infrastructure failures (webServer, browser launch) end the run cleanly
            # with the message in the run directory, then reach the CLI as they are.
            outcome = "aborted" if self.signal_name else "failed"
            if outcome == "failed":
                error_info = {"error": self.masker.mask(str(err)), "errorName": type(err).__name__}
                try:
                    self._finish_files("failed")
                finally:
                    await self._cleanup(browser, web_server)
                    feed.stop()
                raise
        finally:
            if outcome == "aborted":
                # A write error here must not skip the cleanup below; _finish_files
                # meets it again and reports it.
                with contextlib.suppress(OSError):
                    reporter.close_open_steps("the run was aborted", "AbortError")
        if outcome == "aborted":
            await self._cleanup(browser, web_server)
        elif web_server is not None:
            await asyncio.to_thread(web_server.stop)
        feed.stop()
        self._finish_files(outcome)
        duration = int((time.monotonic() - started) * 1000)
        result = RunResult(
            rundir.run_id,
            self.project.relative(rundir.path),
            self.scenario.name,
            outcome,
            duration,
            reporter.step_count,
            error_info,
            bundle_path,
            self.signal_name,
        )
        self._summary(result)
        return result

    def _finish_files(self, outcome: RunOutcome) -> None:
        """``run:finished``, the final runtime.json, the run directory closed.

        When steps.jsonl cannot grow (disk full, RLIMIT_FSIZE), runtime.json, a small
        file rewritten whole, still records how the run ended; the write error goes on
        to the CLI.
        """
        try:
            self.rundir.append({"kind": "run:finished", "outcome": outcome})
        except OSError:
            with contextlib.suppress(Exception):
                self.reporter.write_final_runtime(outcome)
            with contextlib.suppress(Exception):
                self.rundir.close()
            raise
        try:
            self.reporter.write_final_runtime(outcome)
        finally:
            self.rundir.close()  # the heartbeat stops whatever happened to runtime.json

    async def _drive(
        self, browser: Browser
    ) -> tuple[RunOutcome, dict[str, Any] | None, str | None]:
        """The scenario in a fresh browser context of ``browser``; the context is closed
        whatever happens, so nothing (cookies, storage, pages) leaks to the next one."""
        width, height = self.config.viewport
        self.context = await browser.new_context(
            base_url=self.config.base_url, viewport={"width": width, "height": height}
        )
        try:
            tracing = self.config.trace != "off"
            if tracing:
                await self.context.tracing.start(screenshots=True, snapshots=True, sources=False)
            page = await self.context.new_page()
            outcome, error_info, bundle_path = await self._drive_page(page, tracing)
            # A failure bundle stops the trace itself (into the bundle).
            if not self.bundle_attempted and tracing:
                if self.config.trace == "on":
                    await self.context.tracing.stop(path=self.rundir.path / "trace.zip")
                else:
                    await self.context.tracing.stop()
            return outcome, error_info, bundle_path
        finally:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.context.close(), 10)

    async def _drive_page(
        self, page: Page, tracing: bool
    ) -> tuple[RunOutcome, dict[str, Any] | None, str | None]:
        """The scenario on ``page``, then its failure bundle when it failed."""
        self.page = page
        self.context = page.context
        self.recorder.attach(page)
        self.bridge.check()
        outcome, error_info, failure = await self._execute()
        self.bundle_attempted = outcome == "failed" and failure is not None
        if not self.bundle_attempted:
            return outcome, error_info, None
        return outcome, error_info, await self._bundle(failure, error_info or {}, tracing)

    async def _cleanup(self, browser: Browser | None, web_server: WebServer | None) -> None:
        if browser is not None:
            await self._close(browser)
        if web_server is not None:
            await asyncio.to_thread(web_server.stop)

    async def _close(self, browser: Browser) -> None:
        # Closing is best effort: the browser process dies with the driver anyway.
        with contextlib.suppress(Exception):
            await asyncio.wait_for(browser.close(), 10)

    def _install_signals(self, loop: asyncio.AbstractEventLoop) -> None:
        for name in ("SIGINT", "SIGTERM", "SIGHUP"):
            signum = getattr(signal, name)
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(signum, self._on_signal, name)

    def _on_signal(self, name: str) -> None:
        now = time.monotonic()
        if self.signal_name is not None:
            # A double Ctrl-C is one; a later one means "stop now", cleanup or not.
            if now - self.first_signal_at >= FORCE_AFTER_S and self.handle_signals:
                self._force_stop()
            return
        self.signal_name = name
        self.first_signal_at = now
        self.web_server_cancel.set()
        self.bridge.interrupt("aborted")
        controller = self.reporter.debugger
        if controller is not None:
            controller.release()
        self.console.line(f"\n{name}: aborting the run (again in a second to force it)")

    def _force_stop(self) -> None:
        """The run directory still ends with ``run:finished``; then the process exits and
        the Playwright driver, seeing its pipe close, takes the browser with it."""
        self.console.line("stopping now")
        with contextlib.suppress(Exception):
            self.reporter.close_open_steps("the run was aborted", "AbortError")
            self.rundir.append({"kind": "run:finished", "outcome": "aborted"})
            self.reporter.write_final_runtime("aborted")
            self.rundir.close()
        os._exit(128 + signal.Signals[self.signal_name or "SIGINT"].value)  # as the shell says

    # --- the debugger ---------------------------------------------------------------

    def _prepare_breakpoints(self) -> tuple[Breakpoints, dict[str, str]]:
        """Breakpoints of ``.debugger.json`` and ``--break``, checked before the run
        directory exists, so a bad ``--break`` leaves nothing half-made behind."""
        debug = self.debug
        programs = {self.scenario.file: self.scenario.program}
        file_keys: dict[str, str] = {"": self.scenario.file, self.scenario.name: self.scenario.file}
        for ref in self.helpers.values():
            programs[ref.program.file] = ref.program
        helpers_prefix = f"{protocol.UNOTEST_DIR}/{protocol.E2E_SUBDIR}/"
        for file in programs:
            file_keys[file] = file
            if file != self.scenario.file and file.startswith(helpers_prefix):
                key = file[len(helpers_prefix) :].removesuffix(".js")
                file_keys[key] = file
        starts = {file: statement_starts(program) for file, program in programs.items()}
        breakpoints = Breakpoints(starts)
        warn = self._warn
        if debug is not None:
            stored = load_breakpoints_file(self.project.root / protocol.DEBUGGER_FILE)
            for key, positions in stored.items():
                stored_file = file_keys.get(key)
                if stored_file is None or (
                    key != self.scenario.name and not key.startswith("_helpers/")
                ):
                    continue
                for stored_line, stored_col in positions:
                    position, note = breakpoints.resolve(stored_file, stored_line, stored_col)
                    breakpoints.add(stored_file, position)
                    if note:
                        warn(note)
            for given_file, line, col in debug.breaks:
                target = file_keys.get(given_file or "")
                if target is None:
                    raise UsageError(
                        f"--break {given_file}:{line}: no such scenario or helper file"
                    )
                position, note = breakpoints.resolve(target, line, col)
                breakpoints.add(target, position)
                if note:
                    warn(note)
        return breakpoints, file_keys

    def _start_debugger(self, breakpoints: Breakpoints, file_keys: dict[str, str]) -> CommandFeed:
        """Commands are always read (a viewer may pause or abort any run); breakpoints
        and pauses on failure only with ``--debug``."""
        debug = self.debug
        warn = self._warn
        render = functools.partial(render_var, mask=self.masker.mask)
        controller = DebugController(
            emit=self.rundir.append,
            write_state=lambda state, step: self.reporter.write_runtime(state, step),
            interrupt=self.bridge.interrupt,
            render=render,
            breakpoints=breakpoints,
            file_keys=file_keys,
            warn=warn,
            step_first=debug is not None and debug.step_first,
        )
        self.reporter.debugger = controller
        self.reporter.pause_on_failure = debug is not None
        feed = CommandFeed(self.rundir.path / protocol.COMMANDS_FILE, controller.submit_line)
        feed.start()
        if debug is not None and debug.prompt:
            TerminalPrompt(controller, render, mask=self.masker.mask).start()
        return feed

    def _warn(self, text: str) -> None:
        self.console._end_pending()
        print(self.masker.mask(f"unotest: {text}"), file=sys.stderr, flush=True)

    # --- the scenario thread ----------------------------------------------------------

    def _builtins(self) -> dict[str, Any]:
        run_tag = self.rundir.run_id.rsplit("-", 1)[-1]

        def log(line: str) -> None:
            self.console._end_pending()
            print(self.masker.mask(line), file=self.log_stream, flush=True)

        pure = make_pure_builtins(PureServices(env=self._env, log=log, run_tag=run_tag))
        timeouts = self.config.timeouts
        browser_builtins = BrowserBuiltins(
            self.bridge,
            lambda: self._require_page(),
            Timeouts(float(timeouts.action), float(timeouts.expect), float(timeouts.navigation)),
            self.config.base_url,
            self.project.root,
            self._screenshot,
        )
        self.browser_builtins = browser_builtins
        return {**pure, **browser_builtins.builtins()}

    def _env(self, name: str) -> str | None:
        if name in self.extra_env:
            return self.extra_env[name]
        return self.environment.get(name)

    def _require_page(self) -> Page:
        assert self.page is not None
        return self.page

    async def _screenshot(self, name: str | None) -> None:
        page = self._require_page()
        index = self.reporter.step_count
        safe = "".join(
            ch if ch.isalnum() or ch in "-_" else "-" for ch in (name or f"step-{index}")
        )
        base = safe or "screenshot"
        relative_name = f"screenshot/{base}.png"
        suffix = 2
        while (self.rundir.path / relative_name).exists():
            # Two screenshots with the same name keep both images and both events.
            relative_name = f"screenshot/{base}-{suffix}.png"
            suffix += 1
        data = await page.screenshot()
        path = self.rundir.write_bytes_file(relative_name, data)
        self.rundir.append({"kind": "screenshot", "path": self.project.relative(path)})

    def _page_info(self) -> dict[str, str] | None:
        """``runtime.json``'s ``page``; the title is refreshed only from the scenario thread.

        The bridge blocks its caller until the loop has run the coroutine, so a call
        from the loop's own thread would wait for itself forever.
        """
        page = self.page
        if page is None or page.is_closed():
            return None
        builtins = getattr(self, "browser_builtins", None)
        if (
            builtins is not None
            and builtins.touched_page
            and threading.current_thread() is not self.loop_thread
        ):
            builtins.touched_page = False
            try:
                self.page_title = self.bridge.call(asyncio.wait_for(page.title(), 1.0))
            except Interrupt:
                raise
            except Exception:
                pass
        return {"url": page.url, "title": self.page_title}

    async def _execute(self) -> tuple[RunOutcome, dict[str, Any] | None, Any]:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[tuple[str, BaseException | None]] = loop.create_future()
        interpreter = Interpreter(self._builtins(), self.helpers, hook=self.reporter)
        interpreter.interrupt_check = self.bridge.check

        def target() -> None:
            outcome: tuple[str, BaseException | None]
            try:
                interpreter.run(self.scenario.program, self.scenario.test_fn.name)
                outcome = ("completed", None)
            except ScriptError as err:
                outcome = ("failed", err)
            except Interrupt as err:
                outcome = ("interrupted", err)
            except BaseException as err:
                outcome = ("crashed", err)
            loop.call_soon_threadsafe(_settle, done, outcome)

        previous = threading.stack_size(THREAD_STACK_BYTES)
        try:
            thread = threading.Thread(target=target, name="unotest-scenario", daemon=True)
            thread.start()
        finally:
            threading.stack_size(previous)
        watchdog = asyncio.ensure_future(self._watch_timeout(done))
        try:
            kind, exc = await done
        except asyncio.CancelledError:
            # Whoever cancelled this run (a KeyboardInterrupt in pytest's thread while
            # the loop waited) must not leave the scenario thread driving the page.
            self.bridge.interrupt("aborted")
            raise
        finally:
            watchdog.cancel()
        if kind == "completed":
            return "completed", None, None
        if kind == "failed":
            assert isinstance(exc, ScriptError)
            return "failed", self._error_info(exc), self.reporter.failure_for(exc)
        if kind == "interrupted":
            assert isinstance(exc, Interrupt)
            if exc.reason == "timeout":
                limit = self.config.timeouts.scenario
                message = f"the scenario took longer than its timeout of {limit} ms"
                failure_step = self.reporter.open[-1] if self.reporter.open else None
                self.reporter.close_open_steps(message, "TimeoutError")
                info: dict[str, Any] = {
                    "error": message,
                    "errorName": "TimeoutError",
                    "scenario": self.scenario.name,
                }
                if failure_step is not None:
                    info["file"] = failure_step.file
                    info["line"] = failure_step.line
                    info["col"] = failure_step.col
                    info["step"] = failure_step.text
                    info["stepIndex"] = failure_step.index
                    info["callStack"] = failure_step.call_stack
                    info["vars"] = failure_step.variables()
                    # runtime.json's lastFailure: the timeout is this run's failure.
                    self.reporter.last_failure = {
                        "line": failure_step.line,
                        "col": failure_step.col,
                        "error": {"message": message, "name": "TimeoutError"},
                    }
                return "failed", info, _TimeoutFailure(failure_step.index if failure_step else 0)
            raise Interrupt(exc.reason)
        message = f"internal error: {type(exc).__name__}: {exc}"
        self.reporter.close_open_steps(message, "Error")
        return (
            "failed",
            {"error": message, "errorName": "Error"},
            _TimeoutFailure(self.reporter.step_count),
        )

    async def _watch_timeout(self, done: asyncio.Future[Any]) -> None:
        """The scenario timeout, which does not run while the debugger is paused."""
        limit = self.config.timeouts.scenario / 1000
        started = time.monotonic()
        controller = self.reporter.debugger
        while not done.done():
            await asyncio.sleep(0.1)
            paused = controller.paused_for() if controller is not None else 0.0
            if time.monotonic() - started - paused > limit:
                self.bridge.interrupt("timeout")
                return

    def _error_info(self, err: ScriptError) -> dict[str, Any]:
        failure = self.reporter.failure_for(err)
        info: dict[str, Any] = {
            "error": err.message,
            "errorName": err.name,
            "file": err.file,
            "line": err.line,
            "col": err.col,
            "scenario": self.scenario.name,
        }
        if failure is not None:
            info.update(
                {
                    "step": failure.text,
                    "stepIndex": failure.step_index,
                    "stepLine": failure.line,
                    "stepCol": failure.col,
                    "callStack": failure.call_stack,
                    "vars": failure.variables,
                }
            )
        return info

    async def _bundle(self, failure: Any, error_info: dict[str, Any], tracing: bool) -> str | None:
        page = self.page
        info = dict(error_info)
        if page is not None and not page.is_closed():
            info["url"] = page.url
            try:
                info["title"] = await asyncio.wait_for(page.title(), 2)
            except Exception:
                info["title"] = self.page_title
        try:
            bundle = await write_failure_bundle(
                root=self.project.root,
                scenario=self.scenario.name,
                step_index=failure.step_index,
                error=info,
                page=page,
                context=self.context,
                recorder=self.recorder,
                mask=self.masker.mask,
                mask_data=self.masker.mask_data,
                trace=tracing,
            )
        except Exception as err:
            # Best effort (runner.md §4): a bundle that cannot be written (.unotest not a
            # directory, disk full) must not hide the scenario's own error behind an
            # "internal error" and exit 2; the run still ends as failed, exit 1.
            print(
                self.masker.mask(
                    f"unotest: warning: no failure bundle: {type(err).__name__}: {err}"
                ),
                file=sys.stderr,
                flush=True,
            )
            return None
        event: dict[str, Any] = {"kind": "failure-bundle:written", "bundlePath": bundle.relative}
        if bundle.screenshot is not None:
            event["screenshotPath"] = bundle.screenshot
        self.rundir.append(event)
        return bundle.relative

    # --- summary ----------------------------------------------------------------------

    def _summary(self, result: RunResult) -> None:
        console = self.console
        seconds = result.duration_ms / 1000
        if result.outcome == "completed":
            console.line(f"passed  {result.scenario}: {result.steps} steps in {seconds:.2f} s")
            return
        if result.outcome == "aborted":
            console.line(f"aborted  {result.scenario} after {result.steps} steps ({seconds:.2f} s)")
            return
        error = result.error or {}
        where = ""
        if "file" in error:
            where = f"{error['file']}:{error['line']}:{error['col']}: "
        console.line(f"\nfailed  {result.scenario}")
        console.line(f"  {where}{error.get('errorName', 'Error')}: {error.get('error', '')}")
        if error.get("step"):
            console.line(f"  step: {error['step']}")
        if result.bundle_path:
            console.line(f"  failure bundle: {result.bundle_path}")
        console.line(f"  run: {result.run_dir}  ({result.steps} steps in {seconds:.2f} s)")


DRIVER_LOST = "Connection closed while reading from the driver"


def quiet_driver_loss(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """The loop's exception handler: everything but the driver's lost connection.

    SIGTERM or SIGHUP sent to the whole process group (a cancelled CI job, a closed
    terminal) kills the Playwright driver at once; Playwright then leaves a future
    holding this error that nobody awaits, and asyncio would print "Future exception
    was never retrieved" about a run that was aborted cleanly.
    """
    exc = context.get("exception")
    if type(exc) is Exception and str(exc) == DRIVER_LOST:
        return
    loop.default_exception_handler(context)


@dataclass
class _TimeoutFailure:
    step_index: int


def _settle(future: asyncio.Future[Any], value: Any) -> None:
    if not future.done():
        future.set_result(value)
