"""``steps.jsonl``'s step lines: the protocol's ``step:started``, ``step:ok``,
``step:fail`` and our additive ``step:skipped``, one per change of a step.

A step that fails inside a ``try`` that catches the error is written ``step:fail`` with
``caught: true``; it is never a failure of the run. A soft assertion's failure is
``soft: true``: the scenario went on. A ``step(title, fn)`` statement's ``title`` is on
its ``step:started`` when its source says it, and on its ``step:ok``/``step:fail``.
"""

from __future__ import annotations

from collections.abc import Sequence

from dsl.interpreter import Step
from runner import events
from runner.run.steps import Ended, OpenStep, StepListener
from runner.store.rundir import RunDirectory

__all__ = ["StepsWriter"]


class StepsWriter(StepListener):
    def __init__(self, rundir: RunDirectory) -> None:
        self.rundir = rundir

    def started(self, opened: OpenStep, callers: Sequence[OpenStep]) -> None:
        self.rundir.append(
            events.step_started(
                opened.line, opened.col, opened.text, opened.file, opened.depth, opened.title
            )
        )

    def passed(self, ended: Ended) -> None:
        self.rundir.append(events.step_ok(ended.duration_ms, ended.paused_ms, ended.opened.title))

    def failed(self, ended: Ended) -> None:
        self.rundir.append(
            events.step_fail(
                ended.message,
                ended.name,
                caught=ended.caught,
                paused_ms=ended.paused_ms,
                soft=ended.soft,
                title=ended.opened.title,
                duration_ms=ended.duration_ms,
            )
        )

    def skipped(self, step: Step, text: str) -> None:
        self.rundir.append(events.step_skipped(step.line, step.col, text))

    def failure_skipped(self, failed: OpenStep, step: Step) -> None:
        # After the failed step's step:fail: a reader of 0.5.0 pairs steps as before.
        self.rundir.append(events.step_skipped(step.line, step.col))
