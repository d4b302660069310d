"""A run's titled steps (``step(title, fn)``), read back from its ``steps.jsonl`` as the
tree they made: what the reports show of a test besides its outcome, as Playwright's
JSON report lists a result's ``steps`` and its HTML report nests them.

Only titled steps are kept: a titled step inside a plain statement (a helper called by
the test) hangs from the nearest titled step above it, or from the top. A titled step
in which a soft assertion failed is failed here with that error, though it went on to
its end (``steps.jsonl`` says ``step:ok``): Playwright's reports mark such a step failed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, NotRequired, TypedDict

from runner import protocol
from runner.store.runs import events_of

__all__ = ["TitledStep", "read_titled_steps", "titled_steps"]


class TitledStep(TypedDict):
    """One ``step(title, fn)``: how it ended, how long it took (the debugger's pauses
    left out), its error when it failed, and the titled steps it ran."""

    title: str
    status: Literal["passed", "failed"]
    duration_ms: float
    error: NotRequired[str]
    steps: list[TitledStep]


class _Open:
    __slots__ = ("children", "soft_error", "title")

    def __init__(self, title: str | None) -> None:
        self.title = title
        self.children: list[TitledStep] = []
        self.soft_error: str | None = None


def titled_steps(lines: list[protocol.JSONObject]) -> list[TitledStep]:
    """The titled steps of a run's ``steps.jsonl`` lines, as a tree, in order."""
    top: list[TitledStep] = []
    stack: list[_Open] = []
    for line in lines:
        kind = line.get("kind")
        if kind == "step:started":
            title = line.get("title")
            stack.append(_Open(title if isinstance(title, str) else None))
        elif kind in ("step:ok", "step:fail") and stack:
            done = stack.pop()
            title = line.get("title")
            if isinstance(title, str):
                done.title = title
            into = stack[-1].children if stack else top
            if kind == "step:fail" and line.get("soft") is True:
                for outer in stack:  # every step around a soft failure failed with it
                    outer.soft_error = outer.soft_error or _error_of(line)
            if done.title is None:
                into.extend(done.children)  # a plain statement: its titled steps move up
                continue
            into.append(_ended(done, line))
    while stack:  # a run that stopped mid-step (killed): its open steps never ended
        done = stack.pop()
        into = stack[-1].children if stack else top
        into.extend(done.children)
    return top


def _ended(done: _Open, line: protocol.JSONObject) -> TitledStep:
    duration = line.get("durationMs")
    failed = line.get("kind") == "step:fail"
    step: TitledStep = {
        "title": done.title or "",
        "status": "failed" if failed or done.soft_error else "passed",
        "duration_ms": float(duration) if isinstance(duration, int | float) else 0.0,
        "steps": done.children,
    }
    if failed:
        step["error"] = _error_of(line)
    elif done.soft_error:
        step["error"] = done.soft_error
    return step


def _error_of(line: protocol.JSONObject) -> str:
    name, error = line.get("errorName"), line.get("error")
    return f"{name}: {error}" if name else str(error)


def read_titled_steps(run_dir: Path) -> list[TitledStep]:
    """The titled steps of the run in ``run_dir`` (none when it has no readable
    ``steps.jsonl``: a report never fails for want of them), read as every reader of
    the run's events reads them (:func:`runner.store.runs.events_of`)."""
    try:
        return titled_steps(events_of(run_dir))
    except OSError:
        return []
