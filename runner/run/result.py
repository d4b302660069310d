"""A run's answer as plain data, so that a worker process can send it to the orchestrator
as one JSON line and every reader (CLI, pytest plugin, orchestrator) sees the same fields.

The ``error`` it carries is built here too, from a script error, a timeout or an
internal error, and so is the summary a person reads at the end. Nothing here needs a
browser: the orchestrator reads its workers' results without loading Playwright.
"""

from __future__ import annotations

import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NotRequired, Protocol, TypedDict

from runner import events
from runner.errors import UnotestError
from runner.events import RunError
from runner.protocol import CallFrame, ChainFrame, FinishedOutcome
from runner.text import keep_lines, one_line

if TYPE_CHECKING:
    from dsl.errors import ScriptError

__all__ = [
    "OpenStep",
    "RunResult",
    "RunResultJSON",
    "ScenarioFailed",
    "SeenFailure",
    "chain_text",
    "error_chain",
    "error_location",
    "internal_error_message",
    "script_error_info",
    "summary_lines",
    "timeout_error_info",
]

_FINISHED: tuple[FinishedOutcome, ...] = typing.get_args(FinishedOutcome)


class RunResultJSON(TypedDict):
    """:meth:`RunResult.to_json`: ``unotest e2e --json`` and a worker's ``finished`` result."""

    runId: str
    runDir: str
    scenario: str
    outcome: FinishedOutcome
    durationMs: int
    steps: int
    error: RunError | None
    bundlePath: str | None
    signal: NotRequired[str]


@dataclass
class RunResult:
    run_id: str
    run_dir: str
    scenario: str
    outcome: FinishedOutcome
    duration_ms: int
    steps: int
    error: RunError | None = None
    bundle_path: str | None = None
    signal: str | None = None

    def to_json(self) -> RunResultJSON:
        """The ``--json`` shape; ``signal`` is there only when a signal ended the run."""
        data: RunResultJSON = {
            "runId": self.run_id,
            "runDir": self.run_dir,
            "scenario": self.scenario,
            "outcome": self.outcome,
            "durationMs": self.duration_ms,
            "steps": self.steps,
            "error": self.error,
            "bundlePath": self.bundle_path,
        }
        if self.signal is not None:
            data["signal"] = self.signal
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> RunResult:
        """The inverse of :meth:`to_json`; ``ValueError`` for anything it cannot make."""
        outcome = data.get("outcome")
        if outcome not in _FINISHED:
            raise ValueError(f"not a run outcome: {outcome!r}")
        error = data.get("error")
        if error is not None and not (
            isinstance(error, dict)
            and isinstance(error.get("error"), str)
            and isinstance(error.get("errorName"), str)
        ):
            raise ValueError("'error' is not an error record")
        return cls(
            _text(data, "runId"),
            _text(data, "runDir"),
            _text(data, "scenario"),
            outcome,
            _count(data, "durationMs"),
            _count(data, "steps"),
            typing.cast(RunError | None, error),
            _optional_text(data, "bundlePath"),
            _optional_text(data, "signal"),
        )


class ScenarioFailed(UnotestError):
    """A scenario that did not pass, where the caller needs an exception (pytest): the
    one branch of the tree in ``runner.errors`` defined here, beside what it carries."""

    def __init__(self, message: str, result: RunResult) -> None:
        super().__init__(message)
        self.result = result


def _text(data: Mapping[str, object], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise ValueError(f"{key!r} is not a string")
    return value


def _optional_text(data: Mapping[str, object], key: str) -> str | None:
    return None if data.get(key) is None else _text(data, key)


def _count(data: Mapping[str, object], key: str) -> int:
    value = data.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"{key!r} is not an integer")
    return value


# --- the error a failed run carries ------------------------------------------------------


class SeenFailure(Protocol):
    """Where the steps record saw a script error first (its ``FailurePoint``)."""

    @property
    def step_index(self) -> int: ...
    @property
    def line(self) -> int: ...
    @property
    def col(self) -> int: ...
    @property
    def text(self) -> str: ...
    @property
    def call_stack(self) -> list[CallFrame]: ...
    @property
    def variables(self) -> dict[str, str]: ...
    @property
    def chain(self) -> list[ChainFrame]: ...


class OpenStep(Protocol):
    """The step a timeout stopped (an ``OpenStep`` of the steps record)."""

    @property
    def index(self) -> int: ...
    @property
    def line(self) -> int: ...
    @property
    def col(self) -> int: ...
    @property
    def file(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def call_stack(self) -> list[CallFrame]: ...
    @property
    def chain(self) -> tuple[ChainFrame, ...]: ...
    def variables(self) -> dict[str, str]: ...


def script_error_info(err: ScriptError, failure: SeenFailure | None, scenario: str) -> RunError:
    """A script error, placed at the innermost step that reported it when there is one,
    with the chain that step saw (an error no step saw has its own place only)."""
    return events.run_error(
        err.message,
        err.name,
        where=(err.file, err.line, err.col),
        chain=failure.chain if failure is not None else (),
        scenario=scenario,
        at_step=None
        if failure is None
        else events.failed_step(
            failure.text,
            failure.step_index,
            failure.line,
            failure.col,
            failure.call_stack,
            failure.variables,
        ),
    )


def timeout_error_info(message: str, scenario: str, step: OpenStep | None) -> RunError:
    """The scenario timeout, placed at the step it stopped (none: before the first)."""
    if step is None:
        return events.run_error(message, "TimeoutError", scenario=scenario)
    return events.run_error(
        message,
        "TimeoutError",
        where=(step.file, step.line, step.col),
        chain=step.chain,
        scenario=scenario,
        at_step=events.failed_step(
            step.text, step.index, step.line, step.col, step.call_stack, step.variables()
        ),
    )


def internal_error_message(exc: BaseException | None) -> str:
    """Anything else the interpreter raised: a bug of ours, reported as one."""
    return f"internal error: {type(exc).__name__}: {exc}"


# --- what a person reads ------------------------------------------------------------------


CHAIN_HEAD = 3
CHAIN_TAIL = 4
"""A long chain (recursion: up to the call-depth limit of 200) is shown as its first
and last places around a count, so a summary or a JUnit message stays one short line."""


def chain_text(chain: Sequence[ChainFrame]) -> str:
    """``a.test.js:12:2 → _helpers/b.js:45:2 check_items``: each place, with the
    function that holds it after the first (the scenario's own statement). The same
    place repeated (recursion) is written once with ``×N``, and a chain of many places
    keeps its head and tail around ``… N more …``."""
    runs: list[tuple[str, int]] = []
    for i, f in enumerate(chain):
        place = f"{f['file']}:{f['line']}:{f['col']}" + (f" {f['fn']}" if i and f["fn"] else "")
        if runs and runs[-1][0] == place:
            runs[-1] = (place, runs[-1][1] + 1)
        else:
            runs.append((place, 1))
    shown = [place if count == 1 else f"{place} ×{count}" for place, count in runs]
    if len(shown) > CHAIN_HEAD + CHAIN_TAIL + 1:
        hidden = sum(count for _, count in runs[CHAIN_HEAD:-CHAIN_TAIL])
        shown = [*shown[:CHAIN_HEAD], f"… {hidden} more …", *shown[-CHAIN_TAIL:]]
    return " → ".join(shown)


def error_chain(error: Mapping[str, object]) -> list[ChainFrame]:
    """The ``chain`` of an error record read back (a worker's report, error.json):
    only well-formed places, none when the record has none."""
    chain = error.get("chain")
    if not isinstance(chain, list):
        return []
    return [
        events.chain_frame(f["file"], f["line"], f["col"], str(f.get("fn") or ""))
        for f in chain
        if isinstance(f, dict)
        and isinstance(f.get("file"), str)
        and _is_int(f.get("line"))
        and _is_int(f.get("col"))
    ]


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def error_location(error: Mapping[str, object]) -> str | None:
    """Where an error record says the failure is, as every report writes it: its chain
    (the scenario's own line first), else ``file:line:col``, else ``None``."""
    chain = error_chain(error)
    if chain:
        return chain_text(chain)
    if error.get("file") is None:
        return None
    return f"{error['file']}:{error['line']}:{error['col']}"


def summary_lines(result: RunResult) -> list[str]:
    seconds = result.duration_ms / 1000
    if result.outcome == "completed":
        return [f"passed  {result.scenario}: {_steps(result.steps)} in {seconds:.2f} s"]
    if result.outcome == "aborted":
        return [f"aborted  {result.scenario} after {_steps(result.steps)} ({seconds:.2f} s)"]
    error: Mapping[str, object] = result.error or {}
    location = error_location(error)
    where = f"{location}: " if location else ""
    # Page and test text can hold terminal escapes: shown, never obeyed.
    message = keep_lines(str(error.get("error", "")))
    lines = [
        f"\nfailed  {result.scenario}",
        f"  {where}{error.get('errorName', 'Error')}: {message}",
    ]
    if error.get("step"):
        lines.append(f"  step: {one_line(str(error['step']))}")
    if result.bundle_path:
        lines.append(f"  failure bundle: {result.bundle_path}")
    lines.append(f"  run: {result.run_dir}  ({_steps(result.steps)} in {seconds:.2f} s)")
    return lines


def _steps(count: int) -> str:
    return f"{count} step" if count == 1 else f"{count} steps"
