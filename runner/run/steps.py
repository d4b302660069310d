"""What a run knows of its steps, told to whoever listens.

:class:`StepRecord` keeps the steps that are open (the scenario's own statement, the
helper call inside it, the statement inside that), numbers them, and remembers where
each uncaught failure happened first (the innermost step) with its chain, the open
steps from the scenario's statement down to it: the run's error, the failure bundle
and ``lastFailure`` are made from that. It writes nothing itself: each change is told
to its :class:`StepListener`\\ s (``steps.jsonl``, the console, ``runtime.json``), as
pytest's reports are told to its terminal and JUnit plugins.

Durations leave out the time the debugger held the run while the step was open
(``pausedMs``). Texts and messages are masked before they are cut, so no piece of a
secret is left at a cut's edge.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from dsl import ast
from dsl.errors import ScriptError
from dsl.interpreter import Step
from dsl.values import HostValue, RegexValue, Value, display_json_head
from runner import events, protocol
from runner.project.secrets import MASK_MARGIN, cut_masked

__all__ = [
    "MAX_TEXT",
    "MAX_VAR_CHARS",
    "Ended",
    "FailurePoint",
    "OpenStep",
    "StepListener",
    "StepRecord",
    "render_var",
    "static_title",
]

MAX_VAR_CHARS = 4096
MAX_TEXT = 200


def render_var(value: Value, mask: Callable[[str], str] | None = None) -> str:
    """A variable as runtime.json shows it: JSON text, Locators readable, cut to 4 KB.

    Pass the run's ``mask``: the text is masked before the cut (see :func:`cut_masked`).
    Without it a caller that masks afterwards can leak the start of a secret.
    """
    if isinstance(value, HostValue | RegexValue):
        return cut_masked(value.render(), MAX_VAR_CHARS, mask)
    # Only the head that the cut can keep is rendered: a 100,000-item array costs what
    # its first few thousand characters cost (cut_masked reads its limit and margin).
    text, more = display_json_head(value, MAX_VAR_CHARS + MASK_MARGIN)
    return cut_masked(text, MAX_VAR_CHARS, mask, truncated=more)


def step_variables(step: Step, mask: Callable[[str], str] | None = None) -> dict[str, str]:
    return {name: render_var(value, mask) for name, value in step.variables().items()}


@dataclass
class FailurePoint:
    """The innermost step where an error was first reported."""

    error: ScriptError
    step_index: int
    line: int
    col: int
    file: str
    text: str
    call_stack: list[protocol.CallFrame]
    variables: dict[str, str]
    chain: list[protocol.ChainFrame] = field(default_factory=list)


@dataclass
class OpenStep:
    """A step that has started and not ended yet (and, once told ended, as it was)."""

    index: int
    started: float
    text: str
    depth: int
    line: int
    col: int
    file: str
    step: Step | None = None
    call_stack: list[protocol.CallFrame] = field(default_factory=list)
    mask: Callable[[str], str] | None = None
    chain: tuple[protocol.ChainFrame, ...] = ()
    """The open steps from the scenario's own statement down to this one."""
    paused_before: float = 0.0
    """The debugger's paused seconds when the step opened."""
    announced: bool = False
    """Its start line is printed (off a terminal: when its first child starts)."""
    title: str | None = None
    """A ``step(title, fn)`` statement's title: from its source when it is a literal,
    else once ``step`` runs (masked, cut to 200 characters)."""

    def variables(self) -> dict[str, str]:
        """The step's variables now (its scope outlives the unwinding; its frames do not),
        masked before their 4 KB cut (a timeout's error.json takes them from here)."""
        return step_variables(self.step, self.mask) if self.step is not None else {}


@dataclass(slots=True)
class Ended:
    """How a step ended: its record, how long it took (the debugger's pauses left out,
    and said apart), and for a failure its error; ``step`` is None for a step an
    interrupt closed."""

    opened: OpenStep
    duration_ms: float
    paused_ms: float
    step: Step | None = None
    message: str = ""
    name: str = ""
    caught: bool = False
    """A ``try`` around the step caught its error: never the run's failure."""
    soft: bool = False
    """A soft assertion failed: the scenario went on, the run fails at its end."""


class StepListener:
    """Told every change of a run's steps, in the scenario's thread (or the loop's,
    for steps closed by an interrupt). Every method does nothing unless overridden,
    as Robot Framework's listeners."""

    def started(self, opened: OpenStep, callers: Sequence[OpenStep]) -> None:
        """``opened`` has started, inside ``callers`` (outermost first)."""

    def running(self, opened: OpenStep, step: Step) -> None:
        """``opened`` runs now: no interrupt stopped it at its start."""

    def passed(self, ended: Ended) -> None:
        """A step ended without an error."""

    def failed(self, ended: Ended) -> None:
        """A step ended with an error."""

    def skipped(self, step: Step, text: str) -> None:
        """The debugger did not run ``step`` (``skip`` at a pause before it)."""

    def failure_skipped(self, failed: OpenStep, step: Step) -> None:
        """A person skipped ``failed``, which had failed, at its failure pause."""

    def went_on(self, step: Step) -> None:
        """The run goes on after a failure of its own (``lastFailure`` is new)."""


class StepRecord:
    """The steps of one run: open, ended, failed; each change told to ``listeners``.

    ``mask`` masks every text before it is cut; ``paused_for`` is the debugger's
    paused time so far (durations leave it out); ``test_fn`` names the frame of a
    step at the scenario's own level.
    """

    def __init__(
        self,
        test_fn: str,
        mask: Callable[[str], str],
        listeners: Sequence[StepListener] = (),
        paused_for: Callable[[], float] = lambda: 0.0,
    ) -> None:
        self.test_fn = test_fn
        self.mask = mask
        self.listeners = tuple(listeners)
        # Each event goes only to the listeners that hear it (a listener leaves the rest
        # to StepListener's no-ops): this runs around every statement.
        self._started = _hearing(self.listeners, "started")
        self._running = _hearing(self.listeners, "running")
        self._passed = _hearing(self.listeners, "passed")
        self._failed = _hearing(self.listeners, "failed")
        self.paused_for = paused_for
        self.step_count = 0
        self.open: list[OpenStep] = []
        self.failures: dict[int, FailurePoint] = {}
        self.last_failure: protocol.LastFailure | None = None
        self.failures_skipped = 0
        """Failed steps a person skipped at their failure pause."""
        self.abandoned_failure: ScriptError | None = None
        """A failure the run was aborted at (at its pause): it stays the failed step's
        error, and the run still gets its failure bundle."""
        self.soft_failures: list[FailurePoint] = []
        """The soft assertions that failed, in order: the run fails at its end with them."""

    # --- a step's life --------------------------------------------------------------------

    def start(self, step: Step) -> OpenStep:
        """The step's record: its text, its place in the chain of open steps, and the
        debugger's paused time so far (what its duration will leave out)."""
        index = self.step_count
        self.step_count += 1
        frames = step.frames()
        own = events.chain_frame(
            step.file, step.line, step.col, frames[-1].fn if frames else self.test_fn
        )
        caller = self.open[-1] if self.open and self.open[-1].depth < step.depth else None
        opened = OpenStep(
            index,
            time.perf_counter(),
            self.text_of(step),
            step.depth,
            step.line,
            step.col,
            step.file,
            step,
            events.call_stack(frames),
            self.mask,
            chain=(*caller.chain, own) if caller is not None else (own,),
            paused_before=self.paused_for(),
            title=self._title(static_title(step.stmt)),
        )
        self.open.append(opened)
        if self._started:
            callers = self.open[:-1]
            for started in self._started:
                started(opened, callers)
        return opened

    def run(self, step: Step) -> None:
        """The innermost open step runs (no interrupt stopped it at its start)."""
        opened = self.open[-1]
        for running in self._running:
            running(opened, step)

    def passed(self, step: Step) -> None:
        opened = self.open.pop()
        ended = Ended(opened, *self._timing(opened), step)
        for passed in self._passed:
            passed(ended)

    def failed(self, step: Step, error: ScriptError) -> OpenStep:
        """Close the innermost open step as failed with ``error``; the step closed."""
        caught = step.caught and not error.soft
        return self._close_failed(
            error.message, error.name, caught=caught, step=step, soft=error.soft
        )

    def titled(self, title: str) -> None:
        """``step(title, fn)`` runs in the innermost open step: that is its title."""
        if self.open:
            self.open[-1].title = self._title(title)

    def _title(self, title: str | None) -> str | None:
        return None if title is None else cut_masked(title, MAX_TEXT, self.mask)

    def skipped(self, step: Step) -> None:
        """The debugger skipped ``step`` before it ran: it never opens."""
        text = self.text_of(step)
        for listener in self.listeners:
            listener.skipped(step, text)

    def failure_skipped(self, failed: OpenStep, step: Step) -> None:
        self.failures_skipped += 1
        for listener in self.listeners:
            listener.failure_skipped(failed, step)

    def went_on(self, step: Step) -> None:
        for listener in self.listeners:
            listener.went_on(step)

    def close_open_steps(self, message: str, name: str) -> None:
        """Steps still open when the run was interrupted end as failed, innermost first."""
        while self.open:
            self._close_failed(message, name)

    def _close_failed(
        self,
        message: str,
        name: str,
        *,
        caught: bool = False,
        step: Step | None = None,
        soft: bool = False,
    ) -> OpenStep:
        opened = self.open.pop()
        duration, paused = self._timing(opened)
        text = self.message_of(message)
        ended = Ended(opened, duration, paused, step, text, name, caught, soft)
        for failed in self._failed:
            failed(ended)
        return opened

    def _timing(self, opened: OpenStep) -> tuple[float, float]:
        """``(durationMs, pausedMs)``: the time the step was open, less the time the
        debugger held the run meanwhile (a failure pause, pauses in the steps it called)."""
        paused = max(0.0, self.paused_for() - opened.paused_before)
        total = time.perf_counter() - opened.started
        return round(max(0.0, total - paused) * 1000, 1), round(paused * 1000, 1)

    # --- failures --------------------------------------------------------------------------

    def record_failure(self, step: Step, error: ScriptError) -> FailurePoint:
        """Where ``error`` was first seen, the innermost open step (the steps that
        called it fail with the same error after it and keep this record); it is the
        run's ``lastFailure`` from now on."""
        point = self.failures.get(id(error))
        if point is None:
            point = self._failure_point(self.open[-1], step, error)
            self.failures[id(error)] = point
        self.last_failure = self._last_failure(point)
        return point

    def failure_for(self, error: ScriptError) -> FailurePoint | None:
        return self.failures.get(id(error))

    def forget_failure(self, error: ScriptError) -> None:
        """A failure retried or skipped at its pause: no longer the run's (nor soft)."""
        point = self.failures.pop(id(error), None)
        if point is not None and point in self.soft_failures:
            self.soft_failures.remove(point)

    def soft_verdict(self, ending: ScriptError | None) -> ScriptError | None:
        """What the run fails with, its test over, when soft assertions failed: the
        error it ends with anyway (``ending``), told them too, or else one error of
        its own placed at the first of them, listing each (Playwright's report lists
        every ``expect.soft`` failure). ``None``: none failed, or they were told."""
        points, self.soft_failures = self.soft_failures, []
        if not points:
            return ending
        count = f"{len(points)} soft assertion{'' if len(points) == 1 else 's'} failed"
        listed = "\n".join(f"  {_one_line(point.error)}" for point in points)
        if ending is not None:
            ending.message = f"{ending.message}\n({count} before it:\n{listed})"
            return ending
        first = points[0].error
        verdict = ScriptError(
            "AssertionError",
            f"{count}:\n{listed}",
            first.file,
            first.line,
            first.col,
            first.call_chain,
        )
        self.failures[id(verdict)] = points[0]
        self.last_failure = self._last_failure(replace(points[0], error=verdict))
        return verdict

    def _failure_point(self, opened: OpenStep, step: Step, error: ScriptError) -> FailurePoint:
        *callers, own = opened.chain
        if error.file == opened.file:
            own = events.chain_frame(error.file, error.line, error.col, own["fn"])
        return FailurePoint(
            error,
            opened.index,
            opened.line,
            opened.col,
            opened.file,
            opened.text,
            events.call_stack(step.frames()),
            step_variables(step, self.mask),
            [*callers, own],
        )

    def _last_failure(self, point: FailurePoint) -> protocol.LastFailure:
        """runtime.json's ``lastFailure``: where the error happened, in its file, and
        its chain from the scenario's own statement."""
        error = point.error
        return events.last_failure(
            error.line,
            error.col,
            self.message_of(error.message),
            error.name,
            file=error.file,
            stack=point.chain,
        )

    # --- bounded, masked texts -------------------------------------------------------------

    def text_of(self, step: Step) -> str:
        """``step:started.text``: at most 200 characters, masked before the cut.

        ``Step.text`` is already cut to 200, which would leave the start of a secret
        written in the source; the longer text is taken and cut here instead.
        """
        whole = step.program.statement_text(step.stmt, MAX_TEXT + MASK_MARGIN)
        return cut_masked(whole, MAX_TEXT, self.mask)

    def message_of(self, message: str) -> str:
        """An error message as steps.jsonl and runtime.json hold it: masked, at most 4 KB.

        (A failed ``expect_equal`` on a 1 MB value would otherwise put 1 MB into every
        rewrite of runtime.json; error.json in the bundle keeps the whole message.)
        """
        return cut_masked(message, MAX_VAR_CHARS, self.mask)


def _hearing(listeners: Sequence[StepListener], event: str) -> tuple[Callable[..., None], ...]:
    """The bound methods of ``listeners`` that handle ``event`` (not StepListener's own)."""
    base = getattr(StepListener, event)
    return tuple(
        getattr(listener, event)
        for listener in listeners
        if getattr(type(listener), event) is not base
    )


def static_title(stmt: ast.Stmt) -> str | None:
    """The title a ``step("title", fn)`` statement (its value kept, or not: declared,
    assigned or returned) gives in its source, so ``step:started`` can say it; ``None``
    for any other statement, and for a title only known when it runs (a template with
    ``${}``)."""
    if type(stmt) is ast.ExprStmt:
        expr: ast.Expr | None = stmt.expr
    elif type(stmt) is ast.VarDecl:
        expr = stmt.init
    elif type(stmt) is ast.Assign or type(stmt) is ast.Return:
        expr = stmt.value
    else:
        return None
    if type(expr) is not ast.Call or not expr.args:
        return None
    callee, first = expr.callee, expr.args[0]
    if type(callee) is not ast.Identifier or callee.name != "step":
        return None
    if type(first) is ast.StringLit:
        return first.value
    if type(first) is ast.TemplateLit and not first.exprs:
        return "".join(first.quasis)
    return None


def _one_line(error: ScriptError) -> str:
    """``file:line:col: Name: message``, the message's first line."""
    return f"{error.location}: {error.name}: {error.message.split(chr(10), 1)[0]}"
