"""The statement hook of a scenario run: events, runtime.json and console lines.

One listener, called by the interpreter around every step (in the scenario's
thread), turns each step into the protocol's ``step:started`` / ``step:ok`` /
``step:fail`` lines, keeps runtime.json current, and prints the step for a person.
runtime.json is written at once when its meaning changes (a failure, and the
debugger's pauses and resumes, the start and the end, through :meth:`write_runtime`)
and at most every :data:`~runner.runtime_file.PROGRESS_INTERVAL_S` while the steps
run (:class:`~runner.runtime_file.RuntimeFile`): one write and one page-title round
trip per step were most of a step's cost. It
also remembers where each uncaught failure happened first (the innermost step) and
its chain, the open steps from the scenario's own statement down to it, for the
run's error, the bundle and ``lastFailure``.

A step that fails inside a ``try`` that catches the error (``Step.caught``) is
written ``step:fail`` with ``caught: true`` and printed with its own mark; it is
never a failure of the run. Durations leave out the time the debugger held the run
while the step was open (``pausedMs``).
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TextIO

from dsl.errors import Interrupt, ScriptError
from dsl.interpreter import Directive, Step
from dsl.values import HostValue, RegexValue, Value, display_json_head
from runner import events, protocol
from runner.bridge import LoopBridge
from runner.debugger import DebugController
from runner.project import SCENARIO_SUFFIX
from runner.rundir import RunDirectory
from runner.runtime_file import RuntimeFile
from runner.secrets import MASK_MARGIN, cut_masked

__all__ = ["ConsoleOutput", "FailurePoint", "StepReporter", "render_var"]

MAX_VAR_CHARS = 4096
MAX_TEXT = 200
E2E_PREFIX = f"{protocol.UNOTEST_DIR}/{protocol.E2E_SUBDIR}/"
MARK_OK, MARK_FAIL, MARK_CAUGHT, MARK_SKIPPED, MARK_RUNNING = "✓", "✗", "○", "↷", "…"


_LINE_BREAKS = re.compile(r"[ \t]*[\r\n]+[ \t]*")


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


class ConsoleOutput:
    """Lines for a person: masked, indented by call depth, live on a terminal."""

    def __init__(self, stream: TextIO, mask: Callable[[str], str], quiet: bool = False) -> None:
        self.stream = stream
        self.mask = mask
        self.quiet = quiet
        self.live = stream.isatty()
        self._pending = False

    def line(self, text: str) -> None:
        if self.quiet:
            return
        # A terminal that went away (SIGHUP, a closed pipe) must never stop a run
        # from finishing cleanly: console output is best effort.
        with contextlib.suppress(OSError, ValueError):
            self._end_pending()
            # one write for the text and its newline: the loop thread (a signal's notice)
            # and the scenario thread (steps, log lines) may print at the same moment
            self.stream.write(self.mask(text) + "\n")
            self.stream.flush()

    def running(self, text: str) -> None:
        """The step now running, overwritten by its result on a terminal."""
        if self.quiet or not self.live:
            return
        with contextlib.suppress(OSError, ValueError):
            self._end_pending()
            self.stream.write(self.mask(text))
            self.stream.flush()
            self._pending = True

    def finish(self, text: str) -> None:
        if self.quiet:
            return
        with contextlib.suppress(OSError, ValueError):
            prefix = "\r\033[K" if self._pending else ""
            self._pending = False
            self.stream.write(prefix + self.mask(text) + "\n")
            self.stream.flush()

    def _end_pending(self) -> None:
        if self._pending:
            self.stream.write("\n")
            self._pending = False


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
class _Open:
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

    def variables(self) -> dict[str, str]:
        """The step's variables now (its scope outlives the unwinding; its frames do not),
        masked before their 4 KB cut (a timeout's error.json takes them from here)."""
        return StepReporter._vars(self.step, self.mask) if self.step is not None else {}


@dataclass
class StepReporter:
    """The interpreter hook of ``unotest e2e``.

    ``scenario_file`` is the project-relative path of the scenario's file (by default
    the one its name gives): the console names the file of every step outside it.
    """

    rundir: RunDirectory
    run_id: str
    scenario: str
    test_fn: str
    console: ConsoleOutput
    bridge: LoopBridge
    page_info: Callable[[], dict[str, str] | None] = lambda: None
    step_count: int = 0
    open: list[_Open] = field(default_factory=list)
    failures: dict[int, FailurePoint] = field(default_factory=dict)
    last_failure: protocol.LastFailure | None = None
    failures_skipped: int = 0
    """Failed steps a person skipped at their failure pause."""
    abandoned_failure: ScriptError | None = None
    """A failure the run was aborted at (at its pause): it stays the failed step's
    error, and the run still gets its failure bundle."""
    debugger: DebugController | None = None
    pause_on_failure: bool = False
    scenario_file: str | None = None
    runtime_file: RuntimeFile | None = None
    """runtime.json's writer (made from ``rundir`` when not given)."""
    _page: protocol.PageInfo | None = None
    """The page as last asked, shown by progress states written later."""
    secrets_count: Callable[[], int] = lambda: 0
    """How many secrets the run's masker holds: a variable rendered before a secret was
    registered is rendered again."""
    _shown: dict[str, tuple[Value, int, int, str]] = field(default_factory=dict)
    """Each variable as last rendered for runtime.json: (its value, its length, the
    secrets then, the text)."""

    def __post_init__(self) -> None:
        if self.runtime_file is None:
            self.runtime_file = RuntimeFile(self.rundir.write_runtime)

    # --- hook -----------------------------------------------------------------------

    def before_statement(self, step: Step) -> Directive:
        """Open the step, then check for an interrupt.

        In that order so that a scenario timeout (or an abort) that lands between two
        statements, as in ``while (true) {}``, is reported at the statement it stopped:
        that step ends as ``step:fail`` (closed by :meth:`close_open_steps`) and gives
        the failure its file, line, column and step index.
        """
        # No interrupt check before the debugger: the one after the step is opened below
        # places a timeout or abort at the statement it stopped (see above).
        debugger = self.debugger
        if (
            debugger is not None
            and self.bridge.interrupted is None
            and debugger.before(step) is Directive.SKIP
        ):
            text = self._step_text(step)
            self.rundir.append(events.step_skipped(step.line, step.col, text))
            where = self._where(step.file, step.line, step.col)
            self.console.finish(self._line(MARK_SKIPPED, step.depth, where, text, None, 0.0, ""))
            return Directive.SKIP
        opened = self._open_step(step)
        self.rundir.append(
            events.step_started(step.line, step.col, opened.text, step.file, step.depth)
        )
        self._announce_callers()
        self.bridge.check()
        self._progress(step)
        self.console.running(self._console_line(MARK_RUNNING, opened))
        return Directive.PROCEED

    def after_statement(self, step: Step, error: ScriptError | None) -> Directive:
        directive = Directive.PROCEED
        opened = self.open[-1]
        caught = error is not None and step.caught
        if error is not None and not caught:
            self.last_failure = self._last_failure(self._record_failure(opened, step, error))
            if self.debugger is not None and self.pause_on_failure:
                # The failed step is closed before its pause: a reader of steps.jsonl
                # sees step:started, step:fail, then paused (failure), "the executor
                # caught an error", whatever the person then does. A retry opens a new
                # step; a skip adds our step:skipped after the step:fail.
                self._finish_failed(step, error)
                try:
                    directive = self.debugger.after_failure(step, error)
                except Interrupt:
                    # Aborted at the failure pause: the step had failed before anyone
                    # aborted; the run keeps its failure bundle.
                    self.abandoned_failure = error
                    raise
                if directive is Directive.SKIP:
                    self.failures_skipped += 1
                    self.rundir.append(events.step_skipped(step.line, step.col))
                    self.console.finish(self._console_line(MARK_SKIPPED, opened))
                    self._progress(step)
                    return directive
                if directive is not Directive.RETRY:
                    self.write_runtime("running", step)
                return directive
        if error is None:
            opened = self.open.pop()
            duration, paused = self._timing(opened)
            self.rundir.append(events.step_ok(duration, paused))
            self.console.finish(self._console_line(MARK_OK, opened, duration, paused))
        else:
            self._finish_failed(step, error)
        if error is not None and not caught:
            self.write_runtime("running", step)  # lastFailure is new: shown at once
        else:
            self._progress(step)
        return directive

    def _finish_failed(self, step: Step, error: ScriptError) -> None:
        """Close the innermost open step as failed with ``error``."""
        self._close_failed(error.message, error.name, caught=step.caught)

    def _close_failed(self, message: str, name: str, *, caught: bool = False) -> None:
        """Close the innermost open step as failed: its step:fail and its console line."""
        opened = self.open.pop()
        duration, paused = self._timing(opened)
        self.rundir.append(
            events.step_fail(self._message(message), name, caught=caught, paused_ms=paused)
        )
        mark = MARK_CAUGHT if caught else MARK_FAIL
        note = f"caught {name}" if caught else ""
        self.console.finish(self._console_line(mark, opened, duration, paused, note))

    # --- unwinding without the hook -----------------------------------------------------

    def close_open_steps(self, message: str, name: str) -> None:
        """Steps still open when the run was interrupted end as failed, innermost first."""
        while self.open:
            self._close_failed(message, name)

    def failure_for(self, error: ScriptError) -> FailurePoint | None:
        return self.failures.get(id(error))

    # --- steps ------------------------------------------------------------------------

    def _open_step(self, step: Step) -> _Open:
        """The step's record: its text, its place in the chain of open steps, and the
        debugger's paused time so far (what its duration will leave out)."""
        index = self.step_count
        self.step_count += 1
        frames = step.frames()
        own = events.chain_frame(
            step.file, step.line, step.col, frames[-1].fn if frames else self.test_fn
        )
        caller = self.open[-1] if self.open and self.open[-1].depth < step.depth else None
        opened = _Open(
            index,
            time.perf_counter(),
            self._step_text(step),
            step.depth,
            step.line,
            step.col,
            step.file,
            step,
            events.call_stack(frames),
            self.console.mask,
            chain=(*caller.chain, own) if caller is not None else (own,),
            paused_before=self._paused_seconds(),
        )
        self.open.append(opened)
        return opened

    def _record_failure(self, opened: _Open, step: Step, error: ScriptError) -> FailurePoint:
        """Where ``error`` was first seen: the innermost step (the steps that called it
        fail with the same error after it and keep this record)."""
        point = self.failures.get(id(error))
        if point is not None:
            return point
        *callers, own = opened.chain
        if error.file == opened.file:
            own = events.chain_frame(error.file, error.line, error.col, own["fn"])
        point = FailurePoint(
            error,
            opened.index,
            opened.line,
            opened.col,
            opened.file,
            opened.text,
            self._call_stack(step),
            self._vars(step, self.console.mask),
            [*callers, own],
        )
        self.failures[id(error)] = point
        return point

    def _paused_seconds(self) -> float:
        return self.debugger.paused_for() if self.debugger is not None else 0.0

    def _timing(self, opened: _Open) -> tuple[float, float]:
        """``(durationMs, pausedMs)``: the time the step was open, less the time the
        debugger held the run meanwhile (a failure pause, pauses in the steps it called)."""
        paused = max(0.0, self._paused_seconds() - opened.paused_before)
        total = time.perf_counter() - opened.started
        return round(max(0.0, total - paused) * 1000, 1), round(paused * 1000, 1)

    def _announce_callers(self) -> None:
        """Off a terminal a step's line is printed when it ends, after the steps it
        called: the callers of the step just opened say first that they started."""
        if self.console.live:
            return
        for caller in self.open[:-1]:
            if not caller.announced:
                caller.announced = True
                self.console.line(self._console_line(MARK_RUNNING, caller))

    # --- runtime.json -----------------------------------------------------------------

    @staticmethod
    def _call_stack(step: Step) -> list[protocol.CallFrame]:
        return events.call_stack(step.frames())

    @staticmethod
    def _vars(step: Step, mask: Callable[[str], str] | None = None) -> dict[str, str]:
        return {name: render_var(value, mask) for name, value in step.variables().items()}

    def _shown_vars(self, step: Step, reuse: bool) -> dict[str, str]:
        """runtime.json's variables. A progress state is built around every step (the
        timer may write it) and rendering a big array each time made a loop beside it
        quadratic: with ``reuse``, a variable that still holds the very same value, of
        the same length, keeps its text. An element changed in place is then shown at
        the next state written at once (at most an interval later, or at a pause)."""
        mask = self.console.mask
        secrets = self.secrets_count()
        shown: dict[str, str] = {}
        kept: dict[str, tuple[Value, int, int, str]] = {}
        for name, value in step.variables().items():
            size = len(value) if isinstance(value, list | dict | str) else -1
            last = self._shown.get(name) if reuse else None
            if last is not None and last[0] is value and last[1] == size and last[2] == secrets:
                text = last[3]
            else:
                text = render_var(value, mask)
            kept[name] = (value, size, secrets, text)
            shown[name] = text
        self._shown = kept
        return shown

    # --- bounded, masked values ---------------------------------------------------------

    def _step_text(self, step: Step) -> str:
        """``step:started.text``: at most 200 characters, masked before the cut.

        ``Step.text`` is already cut to 200, which would leave the start of a secret
        written in the source; the longer text is taken and cut here instead.
        """
        whole = step.program.statement_text(step.stmt, MAX_TEXT + MASK_MARGIN)
        return cut_masked(whole, MAX_TEXT, self.console.mask)

    def _message(self, message: str) -> str:
        """An error message as steps.jsonl and runtime.json hold it: masked, at most 4 KB.

        (A failed ``expect_equal`` on a 1 MB value would otherwise put 1 MB into every
        rewrite of runtime.json; error.json in the bundle keeps the whole message.)
        """
        return cut_masked(message, MAX_VAR_CHARS, self.console.mask)

    def _last_failure(self, point: FailurePoint) -> protocol.LastFailure:
        """runtime.json's ``lastFailure``: where the error happened, in its file, and
        its chain from the scenario's own statement."""
        error = point.error
        return events.last_failure(
            error.line,
            error.col,
            self._message(error.message),
            error.name,
            file=error.file,
            stack=point.chain,
        )

    def _progress(self, step: Step) -> None:
        """runtime.json while steps run: written now when the last write is old enough,
        else built now (the step's variables are this thread's) and written by the
        timer, with the page as last asked (asking again costs a round trip)."""
        writer = self.runtime_file
        assert writer is not None
        if writer.due():
            self.write_runtime("running", step)
            return
        number = writer.number()
        writer.progress(number, self._runtime_state("running", step, self._page, reuse=True))

    def write_runtime(
        self, state: protocol.RuntimeState, step: Step | None = None, *, page: bool = True
    ) -> None:
        """runtime.json now (a pause, a resume, a failure, the start and the end)."""
        writer = self.runtime_file
        assert writer is not None
        number = writer.number()
        info = self.page_info() if page else None
        mask = self.console.mask
        shown: protocol.PageInfo | None = None
        if info is not None:
            shown = {
                "url": cut_masked(info.get("url", ""), MAX_VAR_CHARS, mask),
                "title": cut_masked(info.get("title", ""), MAX_VAR_CHARS, mask),
            }
            self._page = shown
        writer.write_now(number, self._runtime_state(state, step, shown))

    def _runtime_state(
        self,
        state: protocol.RuntimeState,
        step: Step | None,
        page: protocol.PageInfo | None,
        *,
        reuse: bool = False,
    ) -> protocol.RuntimeStateFile:
        return events.runtime_state(
            run_id=self.run_id,
            scenario=self.scenario,
            test_fn=self.test_fn,
            state=state,
            current=None if step is None else (step.file, step.line, step.col),
            variables=self._shown_vars(step, reuse) if step is not None else {},
            call_stack=self._call_stack(step) if step is not None else [],
            failure=self.last_failure,
            breakpoints=(self.debugger.breakpoints.active() if self.debugger is not None else None),
            page=page,
        )

    def write_final_runtime(self, state: protocol.RuntimeState) -> None:
        """runtime.json outside any step (``starting`` and the terminal states).

        Written by the runner's event loop, never by the scenario thread, so it must
        not ask the page anything: ``page_info`` goes through the loop bridge, which
        raises ``Interrupt`` after an abort (a traceback instead of exit 130) and would
        block forever on the loop's own thread otherwise. No page is open at these
        points anyway (not yet, or being closed), so ``page`` is left out. A progress
        state still waiting for its timer is dropped: it is older.
        """
        try:
            self.write_runtime(state, None, page=False)
        finally:
            if state != "starting":  # even when the write failed: nothing older after it
                assert self.runtime_file is not None
                self.runtime_file.close()

    # --- console ------------------------------------------------------------------------

    def _console_line(
        self,
        mark: str,
        opened: _Open,
        duration: float | None = None,
        paused: float = 0.0,
        note: str = "",
    ) -> str:
        """A step for a person; a step outside the scenario's file names its file."""
        where = self._where(opened.file, opened.line, opened.col)
        return self._line(mark, opened.depth, where, opened.text, duration, paused, note)

    def _where(self, file: str, line: int, col: int) -> str:
        home = self.scenario_file or f"{E2E_PREFIX}{self.scenario}{SCENARIO_SUFFIX}"
        where = f"{line}:{col}"
        return where if file == home else f"{file.removeprefix(E2E_PREFIX)}:{where}"

    @staticmethod
    def _line(
        mark: str,
        depth: int,
        where: str,
        text: str,
        duration: float | None,
        paused: float = 0.0,
        note: str = "",
    ) -> str:
        """``  ✓ 3:2  click("Save")  (12 ms)``, indented by depth; the parenthesis adds
        a note (``caught TimeoutError``) and the time spent paused, when there are."""
        # One line: line breaks (and the indentation after them) become one space, and
        # a tab one space; the spaces inside a string literal stay as they are written.
        shown = _LINE_BREAKS.sub(" ", text.strip()).replace("\t", " ")
        if len(shown) > 100:
            shown = shown[:99] + "…"
        parts = [note] if note else []
        if duration is not None:
            parts.append(_ms(duration))
        if paused > 0:
            parts.append(f"paused {_ms(paused)}")
        timing = f"  ({', '.join(parts)})" if parts else ""
        return f"  {'  ' * depth}{mark} {where}  {shown}{timing}"


def _ms(duration: float) -> str:
    return f"{duration / 1000:.2f} s" if duration >= 1000 else f"{duration:.0f} ms"
