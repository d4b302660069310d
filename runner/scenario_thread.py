"""The interpreter in a thread of its own, watched by the scenario timeout.

The interpreter recurses once per DSL call, so its thread gets a large stack (the
200-deep call limit is always reachable) while the runner's event loop keeps
Playwright and only awaits a future the thread settles. The timeout ends the scenario
through the loop bridge, as an abort does, and does not run while the debugger is
paused.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from dsl.errors import Interrupt, ScriptError
from dsl.interpreter import Builtin, FunctionRef, Interpreter
from dsl.scenario import ScenarioFile
from runner import events
from runner.bridge import LoopBridge
from runner.events import RunError
from runner.protocol import FinishedOutcome
from runner.reporter import FailurePoint, StepReporter
from runner.run_result import (
    internal_error_message,
    script_error_info,
    timeout_error_info,
)

__all__ = [
    "THREAD_STACK_BYTES",
    "Execution",
    "ScenarioThread",
    "TimeoutFailure",
    "run_in_thread",
    "watch_timeout",
]

THREAD_STACK_BYTES = 256 * 1024 * 1024
WATCH_INTERVAL_S = 0.1

ThreadEnd = Literal["completed", "failed", "interrupted", "crashed"]
Ending = tuple[ThreadEnd, BaseException | None]
Watchdog = Callable[["asyncio.Future[Ending]"], Awaitable[None]]


@dataclass
class TimeoutFailure:
    """Where a failure without a :class:`FailurePoint` (a timeout, an internal error)
    stopped: the failure bundle needs only its step index."""

    step_index: int


Execution = tuple[FinishedOutcome, RunError | None, FailurePoint | TimeoutFailure | None]
"""How the scenario ended, its error, and where it failed (for the bundle)."""


async def run_in_thread(
    work: Callable[[], object], watchdog: Watchdog, on_cancel: Callable[[], None]
) -> Ending:
    """Run ``work`` in a large-stack thread while ``watchdog`` watches; how it ended.

    ``on_cancel`` runs when whoever awaits this is cancelled (a KeyboardInterrupt in
    pytest's thread while the loop waited): it must stop the thread driving the page.
    """
    loop = asyncio.get_running_loop()
    done: asyncio.Future[Ending] = loop.create_future()

    def target() -> None:
        ending: Ending
        try:
            work()
            ending = ("completed", None)
        except ScriptError as err:
            ending = ("failed", err)
        except Interrupt as err:
            ending = ("interrupted", err)
        except BaseException as err:
            ending = ("crashed", err)
        loop.call_soon_threadsafe(_settle, done, ending)

    previous = threading.stack_size(THREAD_STACK_BYTES)
    try:
        thread = threading.Thread(target=target, name="unotest-scenario", daemon=True)
        thread.start()
    finally:
        threading.stack_size(previous)
    watch = asyncio.ensure_future(watchdog(done))
    try:
        return await done
    except asyncio.CancelledError:
        on_cancel()
        raise
    finally:
        watch.cancel()


async def watch_timeout(
    done: asyncio.Future[Ending],
    limit_s: float,
    paused_for: Callable[[], float],
    interrupt: Callable[[str], None],
    interval: float = WATCH_INTERVAL_S,
) -> None:
    """``interrupt("timeout")`` once ``done`` has taken longer than ``limit_s``, not
    counting the ``paused_for()`` seconds the debugger held it."""
    started = time.monotonic()
    while not done.done():
        await asyncio.sleep(interval)
        if time.monotonic() - started - paused_for() > limit_s:
            interrupt("timeout")
            return


def _settle(future: asyncio.Future[Ending], value: Ending) -> None:
    if not future.done():
        future.set_result(value)


class ScenarioThread:
    """One scenario's test function, run in its thread and turned into an :data:`Execution`."""

    def __init__(
        self,
        scenario: ScenarioFile,
        helpers: Mapping[str, FunctionRef],
        reporter: StepReporter,
        bridge: LoopBridge,
        timeout_ms: int,
    ) -> None:
        self.scenario = scenario
        self.helpers = helpers
        self.reporter = reporter
        self.bridge = bridge
        self.timeout_ms = timeout_ms

    async def execute(self, builtins: Mapping[str, Builtin]) -> Execution:
        interpreter = Interpreter(builtins, self.helpers, hook=self.reporter)
        interpreter.interrupt_check = self.bridge.check
        program, test_fn = self.scenario.program, self.scenario.test_fn.name
        kind, exc = await run_in_thread(
            lambda: interpreter.run(program, test_fn),
            self._watch,
            lambda: self.bridge.interrupt("aborted"),
        )
        return self.conclude(kind, exc)

    async def _watch(self, done: asyncio.Future[Ending]) -> None:
        controller = self.reporter.debugger
        paused_for = controller.paused_for if controller is not None else _never_paused
        await watch_timeout(done, self.timeout_ms / 1000, paused_for, self.bridge.interrupt)

    def conclude(self, kind: ThreadEnd, exc: BaseException | None) -> Execution:
        """An interrupt other than the timeout (an abort) goes on as :class:`Interrupt`."""
        if kind == "completed":
            return "completed", None, None
        if kind == "failed":
            assert isinstance(exc, ScriptError)
            failure = self.reporter.failure_for(exc)
            return "failed", script_error_info(exc, failure, self.scenario.name), failure
        if kind == "interrupted":
            assert isinstance(exc, Interrupt)
            if exc.reason == "timeout":
                return self._timed_out()
            raise Interrupt(exc.reason)
        message = internal_error_message(exc)
        self.reporter.close_open_steps(message, "Error")
        info = events.run_error(message, "Error")
        return "failed", info, TimeoutFailure(self.reporter.step_count)

    def _timed_out(self) -> Execution:
        reporter = self.reporter
        message = f"the scenario took longer than its timeout of {self.timeout_ms} ms"
        step = reporter.open[-1] if reporter.open else None
        reporter.close_open_steps(message, "TimeoutError")
        info = timeout_error_info(message, self.scenario.name, step)
        if step is None:
            return "failed", info, TimeoutFailure(0)
        # runtime.json's lastFailure: the timeout is this run's failure.
        reporter.last_failure = events.last_failure(
            step.line, step.col, message, "TimeoutError", file=step.file, stack=step.chain
        )
        return "failed", info, TimeoutFailure(step.index)


def _never_paused() -> float:
    return 0.0
