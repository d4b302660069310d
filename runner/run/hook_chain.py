"""The interpreter's one hook for a run: the debugger asked first, then the steps told.

Around every statement the interpreter calls :meth:`HookChain.before_statement` and
:meth:`HookChain.after_statement`. The debugger (when the run has one) decides whether
the statement runs, is skipped, or, after a failure, runs again; the
:class:`~runner.run.steps.StepRecord` then records what happened and tells its
listeners (``steps.jsonl``, the console, ``runtime.json``). Nothing else is called per
statement: with no breakpoint and no stepping, the debugger's answer is two lookups.

A soft assertion's failure (``{soft: true}``, Playwright's ``expect.soft``) is recorded
as a failed step, paused at when debugging, given its own failure bundle, and then
skipped past: the scenario goes on, and fails at its end (:meth:`StepRecord.soft_verdict`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from dsl.errors import Interrupt, ScriptError
from dsl.interpreter import Directive, Step
from runner.browser.bridge import LoopBridge
from runner.debug.controller import DebugController
from runner.run.console import ConsoleOutput, ConsoleSteps
from runner.run.runtime_state import RuntimeState
from runner.run.steps import FailurePoint, StepListener, StepRecord
from runner.run.steps_writer import StepsWriter
from runner.store.rundir import RunDirectory
from runner.store.runtime_file import RuntimeFile

__all__ = ["HookChain", "SoftFailureBundle", "record_steps"]

SoftFailureBundle = Callable[[ScriptError, FailurePoint], None]
"""Takes a soft failure's bundle, the page as the failure left it (the session's)."""


def record_steps(
    rundir: RunDirectory,
    scenario: str,
    test_fn: str,
    console: ConsoleOutput,
    *,
    breakpoints: Callable[[], dict[str, list[str]]] | None = None,
    page_info: Callable[[], dict[str, str] | None] = lambda: None,
    secrets_count: Callable[[], int] = lambda: 0,
    paused_for: Callable[[], float] = lambda: 0.0,
    runtime_file: RuntimeFile | None = None,
    more: Sequence[StepListener] = (),
) -> tuple[StepRecord, RuntimeState]:
    """A run's steps with their three listeners, in the order they are told: the
    steps writer (``steps.jsonl``), the console, and ``runtime.json`` (its writer, for
    the debugger's pauses, is the second value); then ``more`` (the page's images)."""
    steps: StepRecord | None = None
    runtime = RuntimeState(
        runtime_file or RuntimeFile(rundir.write_runtime),
        rundir.run_id,
        scenario,
        test_fn,
        console.mask,
        last_failure=lambda: steps.last_failure if steps is not None else None,
        breakpoints=breakpoints,
        page_info=page_info,
        secrets_count=secrets_count,
    )
    listeners = (StepsWriter(rundir), ConsoleSteps(console, scenario), runtime, *more)
    steps = StepRecord(test_fn, console.mask, listeners, paused_for=paused_for)
    return steps, runtime


class HookChain:
    def __init__(
        self,
        steps: StepRecord,
        bridge: LoopBridge,
        debugger: DebugController | None = None,
        on_soft_failure: SoftFailureBundle | None = None,
    ) -> None:
        self.steps = steps
        self.bridge = bridge
        self.debugger = debugger
        self.on_soft_failure = on_soft_failure

    def before_statement(self, step: Step) -> Directive:
        """Open the step, then check for an interrupt.

        In that order so that a scenario timeout (or an abort) that lands between two
        statements, as in ``while (true) {}``, is reported at the statement it stopped:
        that step ends as ``step:fail`` (closed by ``close_open_steps``) and gives the
        failure its file, line, column and step index.
        """
        # No interrupt check before the debugger: the one after the step is opened below
        # places a timeout or abort at the statement it stopped (see above).
        debugger = self.debugger
        if (
            debugger is not None
            and self.bridge.interrupted is None
            and debugger.before(step) is Directive.SKIP
        ):
            self.steps.skipped(step)
            return Directive.SKIP
        self.steps.start(step)
        self.bridge.check()
        self.steps.run(step)
        return Directive.PROCEED

    def after_statement(self, step: Step, error: ScriptError | None) -> Directive:
        steps = self.steps
        if error is None:
            steps.passed(step)
            return Directive.PROCEED
        if error.soft:
            return self._soft_failure(step, error)
        if step.caught:  # a try around it catches the error: never the run's failure
            steps.failed(step, error)
            return Directive.PROCEED
        steps.record_failure(step, error)
        # The failed step is closed before its pause: a reader of steps.jsonl sees
        # step:started, step:fail, then paused (failure), "the executor caught an
        # error", whatever the person then does. A retry opens a new step; a skip adds
        # our step:skipped after the step:fail.
        failed = steps.failed(step, error)
        debugger = self.debugger
        if debugger is None or not debugger.pause_on_failure:
            steps.went_on(step)
            return Directive.PROCEED
        try:
            directive = debugger.after_failure(step, error)
        except Interrupt:
            # Aborted at the failure pause: the step had failed before anyone aborted;
            # the run keeps its failure bundle.
            steps.abandoned_failure = error
            raise
        if directive is Directive.SKIP:
            steps.failure_skipped(failed, step)
        elif directive is not Directive.RETRY:
            steps.went_on(step)
        return directive

    def _soft_failure(self, step: Step, error: ScriptError) -> Directive:
        """Record the soft failure and close its step failed; when debugging, pause
        there (a retry or a skip forgets it); then its bundle, and on past the statement
        (a ``try`` around it sees nothing, as with ``expect.soft``)."""
        steps = self.steps
        point = steps.record_failure(step, error)
        steps.soft_failures.append(point)
        failed = steps.failed(step, error)
        debugger = self.debugger
        if debugger is not None and debugger.pause_on_failure:
            directive = debugger.after_failure(step, error)
            if directive is Directive.RETRY:
                steps.forget_failure(error)
                return directive
            if directive is Directive.SKIP:
                steps.forget_failure(error)
                steps.failure_skipped(failed, step)
                return directive
        if self.on_soft_failure is not None:
            self.on_soft_failure(error, point)
        steps.went_on(step)
        return Directive.SKIP
