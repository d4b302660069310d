"""The interpreter in a thread of its own, watched by the scenario timeout.

The interpreter recurses once per DSL call, so its thread gets a large stack (the
200-deep call limit is always reachable) while the runner's event loop keeps
Playwright and only awaits a future the thread settles. The timeout ends the scenario
through the loop bridge, as an abort does, and does not run while the debugger is
paused.

The thread runs the test between its hooks, scope by scope (:class:`HookScope`: the
project's, in helper files; each folder's ``_hooks.js``, outer first; the scenario's
file), as Playwright runs nested ``describe`` blocks: the ``before_all`` hooks of the
scopes not entered yet, every ``before_each`` outer first, the test, every
``after_each`` inner first, then (a run of its own, ``unotest e2e``) the ``after_all``
hooks inner first. A failure skips what is left before the after hooks, which always
run: after a failure as after a pass, and after an abort or a timeout too (the browser
is still there: the bridge is reopened for them, the debugger no longer stops them, and
a timeout gives them a budget of their own); a second abort, or a forced stop, skips
them. A failing after hook is a failure of the run, but the run's error stays the first
failure before it. A ``before_all`` that fails skips the ``before_each`` and
``after_each`` hooks (the test never began); the ``after_all`` of its scope still runs.

In a collection worker's lane (its :class:`ScopeLedger`, given by
:mod:`runner.workers.worker` through ``RunOptions.scopes``) the scopes outlive the
run: a scope's ``before_all`` runs in the first scenario of it the lane runs, a scope
whose ``before_all`` failed fails the lane's later scenarios of it without running them
(the worker says so), and the ``after_all`` hooks wait for the worker's end, where they
run in a run of their own (:meth:`ScopeLedger.close`).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from dsl.errors import Interrupt, ScriptError
from dsl.interpreter import HOOK_NAMES, Builtin, FunctionRef, Interpreter
from dsl.scenario import HelperTable, ScenarioFile, ScenarioHeader
from dsl.values import Value
from runner import events
from runner.browser.bridge import LoopBridge
from runner.events import RunError
from runner.protocol import FinishedOutcome
from runner.run.console import ConsoleOutput
from runner.run.hook_chain import HookChain
from runner.run.result import (
    internal_error_message,
    script_error_info,
    timeout_error_info,
)
from runner.run.steps import FailurePoint

__all__ = [
    "ABORTED_STEP",
    "TEARDOWN_NAME",
    "THREAD_STACK_BYTES",
    "Execution",
    "HookScope",
    "Hooks",
    "ScenarioThread",
    "ScopeLedger",
    "TimeoutFailure",
    "run_in_thread",
    "watch_timeout",
]

THREAD_STACK_BYTES = 256 * 1024 * 1024
ABORTED_STEP = ("the run was aborted", "AbortError")
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


PROJECT_SCOPE = "_helpers"
"""The key of the project's scope (its hooks are in helper files)."""
TEARDOWN_NAME = "after_all"
"""The name of a worker's run of its ``after_all`` hooks (:meth:`ScopeLedger.close`)."""


@dataclass(frozen=True)
class HookScope:
    """One level of hooks around a scenario, as a ``describe`` block is in Playwright:
    the project's, a folder's ``_hooks.js``, the scenario's file. ``key`` names it
    across scenarios (its file; :data:`PROJECT_SCOPE`), ``consts`` what its functions
    see besides the helper consts (its folders'; the file's ``CASES``)."""

    key: str
    hooks: Mapping[str, FunctionRef]
    consts: Mapping[str, Value]

    def hook(self, name: str) -> FunctionRef | None:
        return self.hooks.get(name)


def hook_scopes(scenario: ScenarioFile, helpers: HelperTable) -> tuple[HookScope, ...]:
    """The scopes around ``scenario``, outer first: the project, each folder with a
    ``_hooks.js`` over it, its file (every case of a file shares the file's scope)."""
    scopes = [HookScope(PROJECT_SCOPE, _declared(helpers.hook), {})]
    consts: dict[str, Value] = {}
    for folder in scenario.folders:
        consts = {**consts, **{c.name: c.value for c in folder.consts}}
        scopes.append(HookScope(folder.file, _declared(folder.hook), consts))
    scopes.append(HookScope(scenario.file, _declared(scenario.hook), scenario.consts()))
    return tuple(scopes)


def _declared(hook: Callable[[str], FunctionRef | None]) -> dict[str, FunctionRef]:
    return {name: ref for name in HOOK_NAMES if (ref := hook(name)) is not None}


@dataclass(frozen=True)
class Hooks:
    """The functions run around one scenario's test, each list in the order it runs:
    ``before`` the ``before_each`` hooks outer first, ``after`` the ``after_each`` hooks
    inner first; ``scopes`` (outer first) hold the ``before_all``/``after_all`` hooks."""

    before: tuple[FunctionRef, ...] = ()
    after: tuple[FunctionRef, ...] = ()
    scopes: tuple[HookScope, ...] = ()

    @classmethod
    def of(cls, scenario: ScenarioFile, helpers: HelperTable) -> Hooks:
        """Project ``before_each``, folders', file's; file ``after_each``, folders', project's."""
        scopes = hook_scopes(scenario, helpers)
        return cls(
            tuple(ref for scope in scopes if (ref := scope.hook("before_each")) is not None),
            tuple(ref for scope in scopes[::-1] if (ref := scope.hook("after_each")) is not None),
            scopes,
        )


class ScopeLedger:
    """The scopes whose ``before_all`` ran (or was tried) and those whose ``before_all``
    failed: one run's own (``unotest e2e``: its ``after_all`` hooks end that run), or a
    worker lane's (``per_worker``), kept from its first scenario of a scope to its
    end, when :meth:`close` gives the run of their ``after_all`` hooks. A lane runs one
    scenario at a time (a worker's lanes have a ledger each), so no lock."""

    def __init__(self, per_worker: bool = False) -> None:
        self.per_worker = per_worker
        self.entered: dict[str, HookScope] = {}
        """By key, in the order they were entered (an outer scope before its inner ones)."""
        self.failed: dict[str, tuple[str, str]] = {}
        """A scope whose ``before_all`` failed: ``file:line:col: error`` and the error's name."""
        self.closing: tuple[ScenarioFile, tuple[tuple[FunctionRef, HookScope], ...]] | None = None

    def failure_for(self, scopes: Iterable[HookScope]) -> tuple[str, str] | None:
        """The failure of the outermost of ``scopes`` whose ``before_all`` failed."""
        return next((self.failed[s.key] for s in scopes if s.key in self.failed), None)

    def entering(self, scopes: Iterable[HookScope]) -> list[HookScope]:
        return [scope for scope in scopes if scope.key not in self.entered]

    def enter(self, scope: HookScope) -> None:
        self.entered[scope.key] = scope

    def fail(self, scope: HookScope, message: str, name: str) -> None:
        self.failed[scope.key] = (message, name)

    def close(self, worker: str) -> ScenarioFile | None:
        """The run of every entered scope's ``after_all``, inner first (a scenario whose
        test is the first of them; the thread that runs it runs the others after it),
        or None when none has one; the scopes are left either way, so a worker that goes
        on (a reload) enters them again."""
        hooks = tuple(
            (ref, scope)
            for scope in reversed(self.entered.values())
            if (ref := scope.hook("after_all")) is not None
        )
        self.entered.clear()
        self.failed.clear()
        self.closing = None
        if not hooks:
            return None
        first = hooks[0][0]
        header = ScenarioHeader("after-all", f"The after_all hooks of {worker}", "#6b7280")
        teardown = ScenarioFile(TEARDOWN_NAME, header, first.program, first.decl)
        self.closing = (teardown, hooks)
        return teardown


OnFailure = Callable[[RunError, int], None]
"""Told the run's error and its step index when the test failed and ``after_each``
hooks are about to run (the failure bundle is taken then, before they change the page)."""


class ScenarioThread:
    """One scenario's test between its hooks, run in its thread, made an :data:`Execution`."""

    def __init__(
        self,
        scenario: ScenarioFile,
        helpers: HelperTable,
        hook: HookChain,
        console: ConsoleOutput,
        bridge: LoopBridge,
        timeout_ms: int,
        on_failure: OnFailure | None = None,
        scopes: ScopeLedger | None = None,
    ) -> None:
        self.scenario = scenario
        self.helpers = helpers
        self.hook = hook
        self.steps = hook.steps
        self.console = console
        self.bridge = bridge
        self.timeout_ms = timeout_ms
        self.on_failure = on_failure
        self.hooks = Hooks.of(scenario, helpers)
        self.scopes = scopes if scopes is not None else ScopeLedger()
        closing = self.scopes.closing
        self.teardown = closing[1] if closing is not None and closing[0] is scenario else None
        """A worker's ``after_all`` hooks and their scopes, when this run is only them."""
        self._entered: list[HookScope] = []
        self._each_began = False
        self._interpreters: dict[int, Interpreter] = {}
        """A worker's ``after_all`` hook (by its declaration's id) → the interpreter with
        its scope's consts."""
        self._timeout_execution: Execution | None = None
        self._teardown_budget = threading.Event()

    async def execute(self, builtins: Mapping[str, Builtin]) -> Execution:
        interpreter = self._interpreter(builtins, self.scenario.consts())
        for ref, scope in self.teardown or ():
            self._interpreters[id(ref.decl)] = self._interpreter(builtins, scope.consts)
        kind, exc = await run_in_thread(
            lambda: self._run_all(interpreter),
            self._watch,
            lambda: self.bridge.interrupt("aborted", final=True),
        )
        return self.conclude(kind, exc)

    def _interpreter(
        self, builtins: Mapping[str, Builtin], consts: Mapping[str, Value]
    ) -> Interpreter:
        """An interpreter of this run seeing the helper consts and ``consts`` over them."""
        interpreter = Interpreter(
            builtins, self.helpers, hook=self.hook, consts={**self.helpers.const_values(), **consts}
        )
        interpreter.interrupt_check = self.bridge.check
        return interpreter

    async def _watch(self, done: asyncio.Future[Ending]) -> None:
        """The scenario timeout; after it fired, once more for the ``after_each`` hooks."""
        controller = self.hook.debugger
        paused_for = controller.paused_for if controller is not None else _never_paused
        limit_s = self.timeout_ms / 1000
        await watch_timeout(done, limit_s, paused_for, self.bridge.interrupt)
        while not self._teardown_budget.is_set():
            if done.done():
                return
            await asyncio.sleep(WATCH_INTERVAL_S)
        base = paused_for()
        await watch_timeout(done, limit_s, lambda: paused_for() - base, self.bridge.interrupt)

    # --- in the scenario's thread ---------------------------------------------------------

    def _run_all(self, interpreter: Interpreter) -> None:
        """The hooks and the test; raises the error or interrupt the run ends with."""
        ending = self._run_test(interpreter)
        if isinstance(ending, Interrupt):
            self._bundle_abandoned_failure(ending)
        after = self._after_hooks()
        if not after:
            if isinstance(ending, Interrupt):
                self._close_interrupted(ending)
            if ending is not None:
                raise ending
            return
        ending = self._prepare_teardown(ending)
        first_failure = self.steps.last_failure
        hook_failures, interrupted = self._run_after_hooks(interpreter, ending, after)
        if interrupted is not None and interrupted.reason != "timeout":
            raise interrupted  # aborted while the hooks ran: the run ends aborted
        if ending is not None:
            self.steps.last_failure = first_failure  # the first failure stays the run's
            raise ending
        if interrupted is not None:
            raise interrupted
        if hook_failures:
            raise self.steps.soft_verdict(hook_failures[0]) or hook_failures[0]
        soft = self.steps.soft_verdict(None)  # soft assertions of the after_each hooks
        if soft is not None:
            raise soft

    def _prepare_teardown(
        self, ending: ScriptError | Interrupt | None
    ) -> ScriptError | Interrupt | None:
        """Before the ``after_each`` hooks: the failure bundle while the page is as the
        failure left it, and after an interrupt the bridge open again (or the interrupt
        raised, when a second one already came)."""
        if isinstance(ending, ScriptError):
            failure = self.steps.failure_for(ending)
            info = script_error_info(ending, failure, self.scenario.name)
            stopped = self._bundle(info, failure.step_index if failure else 0)
            if stopped is None:
                return ending
            ending = stopped  # aborted while the bundle was taken
        if ending is None:
            return None
        self._close_interrupted(ending)
        if not self.bridge.reopen_for_teardown():
            raise ending
        # The user asked to stop (or time ran out): no pause holds the hooks now.
        if self.hook.debugger is not None:
            self.hook.debugger.end_failure_pauses()
        if ending.reason == "timeout" and self._timeout_execution is not None:
            self._teardown_budget.set()
            _, timeout_info, where = self._timeout_execution
            if timeout_info is not None and isinstance(where, TimeoutFailure):
                stopped = self._bundle(timeout_info, where.step_index)
                if stopped is not None:
                    raise stopped
        return ending

    def _bundle_abandoned_failure(self, ending: Interrupt) -> None:
        """Aborted at a failure pause: the failure happened, and the page is still as it
        left it, so the run keeps its failure bundle (unless a second interrupt, or
        a final one, says to stop at once)."""
        error = self.steps.abandoned_failure
        debugger = self.hook.debugger
        if error is None or ending.reason != "aborted":
            return
        # The steps that called the failed one fail with its error, as they would have
        # had the run gone on (not as aborted), and before the bundle's event.
        self.steps.close_open_steps(error.message, error.name)
        if (debugger is not None and debugger.restart_requested) or (
            not self.bridge.reopen_for_teardown()
        ):
            return  # a restart: the new run is what the person wants, not a bundle
        failure = self.steps.failure_for(error)
        info = script_error_info(error, failure, self.scenario.name)
        self._bundle(info, failure.step_index if failure else 0)

    def _bundle(self, info: RunError, step_index: int) -> Interrupt | None:
        """``on_failure`` (the failure bundle), or the interrupt that stopped it."""
        if self.on_failure is None:
            return None
        try:
            self.on_failure(info, step_index)
        except Interrupt as err:
            return err
        return None

    def _run_test(self, interpreter: Interpreter) -> ScriptError | Interrupt | None:
        """The ``before_all`` hooks of the scopes this run enters, the ``before_each``
        hooks, then the test; how that ended (nothing of it in a worker's run of its
        ``after_all`` hooks alone)."""
        if self.teardown is not None:
            return None
        program, test_fn = self.scenario.program, self.scenario.test_fn.name
        try:
            began_all = self._before_all(interpreter)
            self._each_began = True
            for ref in self.hooks.before:
                self._heading(ref)
                interpreter.run(ref.program, ref.decl.name)
            if began_all or self.hooks.before or self._after_hooks():
                self.console.line(f"  {test_fn}")
            interpreter.run(program, test_fn, self.scenario.test_args())
        except ScriptError as err:
            return self.steps.soft_verdict(err)
        except Interrupt as err:
            return err
        # Soft assertions that failed fail the test now, before the after_each hooks.
        return self.steps.soft_verdict(None)

    def _before_all(self, interpreter: Interpreter) -> bool:
        """The ``before_all`` of each scope not entered yet, outer first, each scope
        entered as its hook begins (its ``after_all`` runs even if it fails); one that
        fails or times out marks its scope failed. Whether any ran."""
        ran = False
        for scope in self.scopes.entering(self.hooks.scopes):
            self.scopes.enter(scope)
            self._entered.append(scope)
            ref = scope.hook("before_all")
            if ref is None:
                continue
            ran = True
            self._heading(ref)
            try:
                interpreter.run(ref.program, ref.decl.name)
            except ScriptError as err:
                where = f"{err.file}:{err.line}:{err.col}"
                self.scopes.fail(scope, f"{where}: {err.message}{self._ran_with}", err.name)
                raise
            except Interrupt as err:
                if err.reason == "timeout":
                    message = f"{ref.program.file}: it took longer than the scenario timeout"
                    message += f" of {self.timeout_ms} ms{self._ran_with}"
                    self.scopes.fail(scope, message, "TimeoutError")
                raise
        return ran

    @property
    def _ran_with(self) -> str:
        return f" (it ran with {self.scenario.name})"

    def _after_hooks(self) -> tuple[FunctionRef, ...]:
        """The after hooks this run ends with: the ``after_each`` hooks unless a
        ``before_all`` failed, then the ``after_all`` hooks of the scopes it entered,
        inner first (not in a worker, which runs them at its end); a worker's run of its
        ``after_all`` hooks, those."""
        if self.teardown is not None:
            return tuple(ref for ref, _ in self.teardown)
        each = self.hooks.after if self._each_began else ()
        if self.scopes.per_worker:
            return each
        alls = (scope.hook("after_all") for scope in reversed(self._entered))
        return each + tuple(ref for ref in alls if ref is not None)

    def _run_after_hooks(
        self,
        interpreter: Interpreter,
        ending: ScriptError | Interrupt | None,
        after: tuple[FunctionRef, ...],
    ) -> tuple[list[ScriptError], Interrupt | None]:
        """Every after hook, whatever happened; their failures, and the interrupt that
        stopped them (the rest are skipped then)."""
        failures: list[ScriptError] = []
        for ref in after:
            self._heading(ref)
            try:
                self._interpreters.get(id(ref.decl), interpreter).run(ref.program, ref.decl.name)
            except ScriptError as err:
                failures.append(err)
                if ending is not None:
                    first_line = str(err).split("\n", 1)[0]
                    self.console.line(f"  {ref.decl.name} failed too: {first_line}")
            except Interrupt as err:
                self._close_interrupted(err)
                return failures, err
        return failures, None

    def _close_interrupted(self, interrupt: Interrupt) -> None:
        """Close the steps an interrupt left open; the first timeout is also the run's
        failure (a second one is the after hooks' own budget running out: ``after_each``,
        and ``after_all`` when this run leaves its scopes)."""
        if interrupt.reason != "timeout":
            self.steps.close_open_steps(*ABORTED_STEP)
        elif self._timeout_execution is None:
            self._timeout_execution = self._timed_out()
        else:
            self.steps.close_open_steps(
                f"the after hooks took longer than their own timeout of {self.timeout_ms} ms",
                "TimeoutError",
            )

    def _heading(self, ref: FunctionRef) -> None:
        where = "this file" if ref.program is self.scenario.program else ref.program.file
        self.console.line(f"  {ref.decl.name}  ({where})")

    # --- back on the loop -----------------------------------------------------------------

    def conclude(self, kind: ThreadEnd, exc: BaseException | None) -> Execution:
        """An interrupt other than the timeout (an abort) goes on as :class:`Interrupt`."""
        if kind == "completed":
            return "completed", None, None
        if kind == "failed":
            assert isinstance(exc, ScriptError)
            failure = self.steps.failure_for(exc)
            return "failed", script_error_info(exc, failure, self.scenario.name), failure
        if kind == "interrupted":
            assert isinstance(exc, Interrupt)
            if exc.reason == "timeout":
                return self._timeout_execution or self._timed_out()
            raise Interrupt(exc.reason)
        message = internal_error_message(exc)
        self.steps.close_open_steps(message, "Error")
        info = events.run_error(message, "Error")
        return "failed", info, TimeoutFailure(self.steps.step_count)

    def _timed_out(self) -> Execution:
        steps = self.steps
        message = f"the scenario took longer than its timeout of {self.timeout_ms} ms"
        step = steps.open[-1] if steps.open else None
        steps.close_open_steps(message, "TimeoutError")
        info = timeout_error_info(message, self.scenario.name, step)
        if step is None:
            return "failed", info, TimeoutFailure(0)
        # runtime.json's lastFailure: the timeout is this run's failure.
        steps.last_failure = events.last_failure(
            step.line, step.col, message, "TimeoutError", file=step.file, stack=step.chain
        )
        return "failed", info, TimeoutFailure(step.index)


def _never_paused() -> float:
    return 0.0
