"""A run's lines for a person: each step as it starts and ends, masked, indented by call
depth, the running step overwritten by its result on a terminal.

Off a terminal a step's line is printed when it ends, after the steps it called, so
the callers of a step say first that they started.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Sequence
from typing import TextIO

from dsl.interpreter import Step
from runner import protocol
from runner.project.index import SCENARIO_SUFFIX
from runner.run.steps import Ended, OpenStep, StepListener

__all__ = ["ConsoleOutput", "ConsoleSteps", "step_line"]

E2E_PREFIX = f"{protocol.UNOTEST_DIR}/{protocol.E2E_SUBDIR}/"
MARK_OK, MARK_FAIL, MARK_CAUGHT, MARK_SKIPPED, MARK_RUNNING = "✓", "✗", "○", "↷", "…"

_LINE_BREAKS = re.compile(r"[ \t]*[\r\n]+[ \t]*")


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

    def end_pending(self) -> None:
        """End a running step's line, for a line printed by someone else (a log line)."""
        self._end_pending()

    def _end_pending(self) -> None:
        if self._pending:
            self.stream.write("\n")
            self._pending = False


class ConsoleSteps(StepListener):
    """Each step on ``console``; ``scenario_file`` is the project-relative path of the
    scenario's file (by default the one ``scenario``'s name gives): a step outside it
    names its file."""

    def __init__(
        self, console: ConsoleOutput, scenario: str, scenario_file: str | None = None
    ) -> None:
        self.console = console
        self.home = scenario_file or f"{E2E_PREFIX}{scenario}{SCENARIO_SUFFIX}"

    def started(self, opened: OpenStep, callers: Sequence[OpenStep]) -> None:
        if self.console.live:
            return
        for caller in callers:
            if not caller.announced:
                caller.announced = True
                self.console.line(self._step_line(MARK_RUNNING, caller))

    def running(self, opened: OpenStep, step: Step) -> None:
        self.console.running(self._step_line(MARK_RUNNING, opened))

    def passed(self, ended: Ended) -> None:
        line = self._step_line(MARK_OK, ended.opened, ended.duration_ms, ended.paused_ms)
        self.console.finish(line)

    def failed(self, ended: Ended) -> None:
        mark = MARK_CAUGHT if ended.caught else MARK_FAIL
        note = (
            f"caught {ended.name}" if ended.caught else f"soft {ended.name}" if ended.soft else ""
        )
        line = self._step_line(mark, ended.opened, ended.duration_ms, ended.paused_ms, note)
        self.console.finish(line)
        if ended.soft:
            # The scenario goes on: the failure is said here, where it happened (the
            # run's summary lists every soft failure again at its end).
            first = ended.message.split("\n", 1)[0]
            self.console.line(f"  {'  ' * ended.opened.depth}    {ended.name}: {first}")

    def skipped(self, step: Step, text: str) -> None:
        where = self._where(step.file, step.line, step.col)
        self.console.finish(step_line(MARK_SKIPPED, step.depth, where, text, None))

    def failure_skipped(self, failed: OpenStep, step: Step) -> None:
        self.console.finish(self._step_line(MARK_SKIPPED, failed))

    def _step_line(
        self,
        mark: str,
        opened: OpenStep,
        duration: float | None = None,
        paused: float = 0.0,
        note: str = "",
    ) -> str:
        where = self._where(opened.file, opened.line, opened.col)
        # A step(title, fn) statement is shown by its title, as Playwright's reporters do.
        text = opened.text if opened.title is None else opened.title
        return step_line(mark, opened.depth, where, text, duration, paused, note)

    def _where(self, file: str, line: int, col: int) -> str:
        where = f"{line}:{col}"
        return where if file == self.home else f"{file.removeprefix(E2E_PREFIX)}:{where}"


def step_line(
    mark: str,
    depth: int,
    where: str,
    text: str,
    duration: float | None,
    paused: float = 0.0,
    note: str = "",
) -> str:
    """``  ✓ 3:2  click("Save")  (12 ms)``, indented by depth; the parenthesis adds a
    note (``caught TimeoutError``) and the time spent paused, when there are."""
    # One line: line breaks (and the indentation after them) become one space, and a
    # tab one space; the spaces inside a string literal stay as they are written.
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
