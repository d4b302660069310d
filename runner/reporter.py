"""The statement hook of a scenario run: events, runtime.json and console lines.

One listener, called by the interpreter around every step (in the scenario's
thread), turns each step into the protocol's ``step:started`` / ``step:ok`` /
``step:fail`` lines, rewrites runtime.json, and prints the step for a person. It
also remembers where the first uncaught failure happened, for the bundle.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TextIO

from dsl.errors import ScriptError
from dsl.interpreter import Directive, Step
from dsl.values import HostValue, RegexValue, Value, to_json_data
from runner import events, protocol
from runner.bridge import LoopBridge
from runner.debugger import DebugController
from runner.rundir import RunDirectory
from runner.secrets import MASK_MARGIN, cut_masked

__all__ = ["ConsoleOutput", "FailurePoint", "StepReporter", "render_var"]

MAX_VAR_CHARS = 4096
MAX_TEXT = 200


def render_var(value: Value, mask: Callable[[str], str] | None = None) -> str:
    """A variable as runtime.json shows it: JSON text, Locators readable, cut to 4 KB.

    Pass the run's ``mask``: the text is masked before the cut (see :func:`cut_masked`).
    Without it a caller that masks afterwards can leak the start of a secret.
    """
    if isinstance(value, HostValue | RegexValue):
        text = value.render()
    else:
        text = json.dumps(to_json_data(value), ensure_ascii=False)
    return cut_masked(text, MAX_VAR_CHARS, mask)


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
            print(self.mask(text), file=self.stream, flush=True)

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
            if self._pending:
                self.stream.write("\r\033[K")
                self._pending = False
            print(self.mask(text), file=self.stream, flush=True)

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

    def variables(self) -> dict[str, str]:
        """The step's variables now (its scope outlives the unwinding; its frames do not),
        masked before their 4 KB cut (a timeout's error.json takes them from here)."""
        return StepReporter._vars(self.step, self.mask) if self.step is not None else {}


@dataclass
class StepReporter:
    """The interpreter hook of ``unotest e2e``."""

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
    debugger: DebugController | None = None
    pause_on_failure: bool = False

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
            return Directive.SKIP
        index = self.step_count
        self.step_count += 1
        text = self._step_text(step)
        self.open.append(
            _Open(
                index,
                time.perf_counter(),
                text,
                step.depth,
                step.line,
                step.col,
                step.file,
                step,
                self._call_stack(step),
                self.console.mask,
            )
        )
        self.rundir.append(events.step_started(step.line, step.col, text, step.file, step.depth))
        self.bridge.check()
        self.write_runtime("running", step)
        self.console.running(self._line("…", step.depth, step.line, step.col, text, None))
        return Directive.PROCEED

    def after_statement(self, step: Step, error: ScriptError | None) -> Directive:
        directive = Directive.PROCEED
        if error is not None and self.debugger is not None and self.pause_on_failure:
            self.last_failure = self._last_failure(error)
            directive = self.debugger.after_failure(step, error)
            if directive is Directive.SKIP:
                opened = self.open.pop()
                self.rundir.append(events.step_skipped(step.line, step.col))
                self.console.finish(
                    self._line("↷", opened.depth, opened.line, opened.col, opened.text, None)
                )
                self.write_runtime("running", step)
                return directive
        opened = self.open.pop()
        duration = round((time.perf_counter() - opened.started) * 1000, 1)
        if error is None:
            self.rundir.append(events.step_ok(duration))
            self.console.finish(
                self._line("✓", opened.depth, opened.line, opened.col, opened.text, duration)
            )
        else:
            self.rundir.append(events.step_fail(self._message(error.message), error.name))
            self.console.finish(
                self._line("✗", opened.depth, opened.line, opened.col, opened.text, duration)
            )
            if id(error) not in self.failures:
                self.failures[id(error)] = FailurePoint(
                    error,
                    opened.index,
                    opened.line,
                    opened.col,
                    opened.file,
                    opened.text,
                    self._call_stack(step),
                    self._vars(step, self.console.mask),
                )
            self.last_failure = self._last_failure(error)
        self.write_runtime("running", step)
        return directive

    # --- unwinding without the hook -----------------------------------------------------

    def close_open_steps(self, message: str, name: str) -> None:
        """Steps still open when the run was interrupted end as failed, innermost first."""
        while self.open:
            opened = self.open.pop()
            duration = round((time.perf_counter() - opened.started) * 1000, 1)
            self.rundir.append(events.step_fail(self._message(message), name))
            self.console.finish(
                self._line("✗", opened.depth, opened.line, opened.col, opened.text, duration)
            )

    def failure_for(self, error: ScriptError) -> FailurePoint | None:
        return self.failures.get(id(error))

    # --- runtime.json -----------------------------------------------------------------

    @staticmethod
    def _call_stack(step: Step) -> list[protocol.CallFrame]:
        return events.call_stack(step.frames())

    @staticmethod
    def _vars(step: Step, mask: Callable[[str], str] | None = None) -> dict[str, str]:
        return {name: render_var(value, mask) for name, value in step.variables().items()}

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

    def _last_failure(self, error: ScriptError) -> protocol.LastFailure:
        return events.last_failure(error.line, error.col, self._message(error.message), error.name)

    def write_runtime(
        self, state: protocol.RuntimeState, step: Step | None = None, *, page: bool = True
    ) -> None:
        info = self.page_info() if page else None
        mask = self.console.mask
        self.rundir.write_runtime(
            events.runtime_state(
                run_id=self.run_id,
                scenario=self.scenario,
                test_fn=self.test_fn,
                state=state,
                current=None if step is None else (step.file, step.line, step.col),
                variables=self._vars(step, mask) if step is not None else {},
                call_stack=self._call_stack(step) if step is not None else [],
                failure=self.last_failure,
                breakpoints=(
                    self.debugger.breakpoints.active() if self.debugger is not None else None
                ),
                page=(
                    None
                    if info is None
                    else {
                        "url": cut_masked(info.get("url", ""), MAX_VAR_CHARS, mask),
                        "title": cut_masked(info.get("title", ""), MAX_VAR_CHARS, mask),
                    }
                ),
            )
        )

    def write_final_runtime(self, state: protocol.RuntimeState) -> None:
        """runtime.json outside any step (``starting`` and the terminal states).

        Written by the runner's event loop, never by the scenario thread, so it must
        not ask the page anything: ``page_info`` goes through the loop bridge, which
        raises ``Interrupt`` after an abort (a traceback instead of exit 130) and would
        block forever on the loop's own thread otherwise. No page is open at these
        points anyway (not yet, or being closed), so ``page`` is left out.
        """
        self.write_runtime(state, None, page=False)

    # --- console ------------------------------------------------------------------------

    @staticmethod
    def _line(mark: str, depth: int, line: int, col: int, text: str, duration: float | None) -> str:
        shown = " ".join(text.split())
        if len(shown) > 100:
            shown = shown[:99] + "…"
        timing = f"  ({_ms(duration)})" if duration is not None else ""
        return f"  {'  ' * depth}{mark} {line}:{col}  {shown}{timing}"


def _ms(duration: float) -> str:
    return f"{duration / 1000:.2f} s" if duration >= 1000 else f"{duration:.0f} ms"
