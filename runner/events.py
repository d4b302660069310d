"""One typed constructor per protocol shape the runner writes.

Every line of a ``steps.jsonl``, every ``runtime.json`` and every run's error record is
built here and nowhere else, so mypy checks what we emit against the
``@unotest/protocol`` 0.5.0 types of :mod:`runner.protocol` (and our additive ones):
a misspelt field or a value of the wrong type fails the type check, not the viewer.
``t`` is stamped here; :class:`runner.store.rundir.RunDirectory` stamps it only for a raw
mapping that lacks it.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Literal, NotRequired, TypeAlias, TypedDict

from dsl.errors import CallFrame
from runner import protocol

__all__ = [
    "FailedStep",
    "RunError",
    "StepsLine",
    "call_stack",
    "chain_frame",
    "collection_endpoint_down",
    "collection_run_finished",
    "collection_run_started",
    "collection_scenario_finished",
    "collection_scenario_started",
    "command_applied",
    "command_rejected",
    "command_result",
    "failed_step",
    "failure_bundle_written",
    "last_failure",
    "now_ms",
    "paused",
    "resumed",
    "run_error",
    "run_finished",
    "run_started",
    "runtime_state",
    "screenshot",
    "step_fail",
    "step_ok",
    "step_skipped",
    "step_started",
]

StepsLine: TypeAlias = protocol.RunEvent | protocol.CollectionRunEvent
"""Every line the runner may append to a ``steps.jsonl`` (scenario or collection run)."""


def now_ms() -> int:
    """Wall-clock milliseconds since the epoch, as every ``t`` of the protocol."""
    return time.time_ns() // 1_000_000


# --- scenario runs --------------------------------------------------------------------


def run_started(run_id: str, scenario: str) -> protocol.RunStartedEvent:
    return {"kind": "run:started", "runId": run_id, "scenario": scenario, "t": now_ms()}


def step_started(
    line: int, col: int, text: str, file: str, depth: int, title: str | None = None
) -> protocol.StepStartedEvent:
    """``title``: a ``step("title", fn)`` statement's, when its source says it (a title
    computed as the step runs is on its ``step:ok``/``step:fail``)."""
    event: protocol.StepStartedEvent = {
        "kind": "step:started",
        "line": line,
        "col": col,
        "text": text,
        "file": file,
        "depth": depth,
        "t": now_ms(),
    }
    if title is not None:
        event["title"] = title
    return event


def step_ok(
    duration_ms: float, paused_ms: float = 0.0, title: str | None = None
) -> protocol.StepOkEvent:
    """``durationMs`` leaves out the time spent paused, ``pausedMs`` (written only
    when there was some); ``title``: a ``step(title, fn)`` statement's."""
    event: protocol.StepOkEvent = {"kind": "step:ok", "durationMs": duration_ms, "t": now_ms()}
    if paused_ms > 0:
        event["pausedMs"] = paused_ms
    if title is not None:
        event["title"] = title
    return event


def step_fail(
    message: str,
    name: str,
    *,
    caught: bool = False,
    paused_ms: float = 0.0,
    soft: bool = False,
    title: str | None = None,
    duration_ms: float | None = None,
) -> protocol.StepFailEvent:
    """``caught``: a ``try`` of the scenario catches the error; ``soft``: a soft
    assertion failed, the scenario went on (each written only when true);
    ``durationMs`` as on ``step:ok`` (every step the runner ends has one; the lines
    written for a killed worker's run have none)."""
    event: protocol.StepFailEvent = {
        "kind": "step:fail",
        "error": message,
        "errorName": name,
        "t": now_ms(),
    }
    if duration_ms is not None:
        event["durationMs"] = duration_ms
    if caught:
        event["caught"] = True
    if soft:
        event["soft"] = True
    if paused_ms > 0:
        event["pausedMs"] = paused_ms
    if title is not None:
        event["title"] = title
    return event


def step_skipped(line: int, col: int, text: str | None = None) -> protocol.StepSkippedEvent:
    """``text``: the statement's, as ``step:started`` would have said it, when it never
    started (skipped at a breakpoint or step pause; a failed one has its own step)."""
    event: protocol.StepSkippedEvent = {
        "kind": "step:skipped",
        "line": line,
        "col": col,
        "t": now_ms(),
    }
    if text is not None:
        event["text"] = text
    return event


def page_image(
    path: str,
    after: protocol.PageImageAfter,
    where: tuple[str, int, int],
    viewport: tuple[int, int],
    *,
    step: int | None = None,
    aria: str | None = None,
) -> protocol.PageImageEvent:
    """Ours: the page as an image (``where`` is the statement's ``(file, line, col)``,
    ``viewport`` the page's CSS size; ``step`` for an image after a step, ``aria``
    the aria snapshot beside a pause's image)."""
    event: protocol.PageImageEvent = {
        "kind": "page:image",
        "path": path,
        "after": after,
        "file": where[0],
        "line": where[1],
        "col": where[2],
        "viewport": {"width": viewport[0], "height": viewport[1]},
        "t": now_ms(),
    }
    if step is not None:
        event["step"] = step
    if aria is not None:
        event["aria"] = aria
    return event


def screenshot(path: str) -> protocol.ScreenshotEvent:
    return {"kind": "screenshot", "path": path, "t": now_ms()}


def failure_bundle_written(
    bundle_path: str, screenshot_path: str | None = None
) -> protocol.FailureBundleWrittenEvent:
    event: protocol.FailureBundleWrittenEvent = {
        "kind": "failure-bundle:written",
        "bundlePath": bundle_path,
        "t": now_ms(),
    }
    if screenshot_path is not None:
        event["screenshotPath"] = screenshot_path
    return event


def call_stack(frames: Sequence[CallFrame]) -> list[protocol.CallFrame]:
    """The interpreter's frames (outermost first) as the protocol's ``callStack``: the
    helper calls only, the test function itself is not one."""
    return [{"fn": f.fn, "file": f.file, "line": f.line} for f in frames[1:]]


def chain_frame(file: str, line: int, col: int, fn: str) -> protocol.ChainFrame:
    """One place of a failure's chain (see :class:`runner.protocol.ChainFrame`)."""
    return {"file": file, "line": line, "col": col, "fn": fn}


def paused(
    reason: Literal["breakpoint", "step", "failure"],
    line: int,
    col: int,
    variables: dict[str, str],
    call_stack: list[protocol.CallFrame],
) -> protocol.PausedEvent:
    return {
        "kind": "paused",
        "reason": reason,
        "line": line,
        "col": col,
        "snapshot": {"vars": variables, "callStack": call_stack},
        "t": now_ms(),
    }


def resumed(by: Literal["step", "continue"], cmd: str) -> protocol.ResumedEvent:
    return {"kind": "resumed", "by": by, "cmd": cmd, "t": now_ms()}


def run_finished(outcome: protocol.RunOutcome) -> protocol.RunFinishedEvent:
    return {"kind": "run:finished", "outcome": outcome, "t": now_ms()}


# --- debugger answers (additive kinds) -------------------------------------------------


def command_applied(ident: str, cmd: str, note: str | None = None) -> protocol.CommandAppliedEvent:
    event: protocol.CommandAppliedEvent = {
        "kind": "command:applied",
        "id": ident,
        "cmd": cmd,
        "t": now_ms(),
    }
    if note:
        event["note"] = note
    return event


def command_rejected(
    reason: str, ident: str | None = None, cmd: str | None = None
) -> protocol.CommandRejectedEvent:
    event: protocol.CommandRejectedEvent = {
        "kind": "command:rejected",
        "reason": reason,
        "t": now_ms(),
    }
    if ident is not None:
        event["id"] = ident
    if cmd is not None:
        event["cmd"] = cmd
    return event


def command_result(
    ident: str, ok: bool, *, value: str | None = None, error: str | None = None
) -> protocol.CommandResultEvent:
    event: protocol.CommandResultEvent = {
        "kind": "command:result",
        "id": ident,
        "ok": ok,
        "t": now_ms(),
    }
    if value is not None:
        event["value"] = value
    if error is not None:
        event["error"] = error
    return event


# --- collection runs -------------------------------------------------------------------


def collection_run_started(
    run_id: str, collection: str, scenarios: Iterable[str]
) -> protocol.CollectionRunStartedEvent:
    return {
        "kind": "collection-run:started",
        "runId": run_id,
        "collection": collection,
        "scenarios": list(scenarios),
        "t": now_ms(),
    }


def collection_scenario_started(
    scenario_run_id: str, scenario: str, worker: int | None = None, endpoint: str | None = None
) -> protocol.CollectionScenarioStartedEvent:
    """``worker`` (ours, 0-based like the JSON report and the console's ``[w0]``): which
    worker runs it, so a viewer can show it; ``endpoint`` (ours): its browser endpoint."""
    event: protocol.CollectionScenarioStartedEvent = {
        "kind": "collection-run:scenario-started",
        "scenarioRunId": scenario_run_id,
        "scenario": scenario,
        "t": now_ms(),
    }
    if worker is not None:
        event["worker"] = worker
    if endpoint is not None:
        event["endpoint"] = endpoint
    return event


def collection_scenario_finished(
    scenario_run_id: str, scenario: str, outcome: protocol.RunOutcome, *, infra_retry: bool = False
) -> protocol.CollectionScenarioFinishedEvent:
    """``infra_retry``: the run was lost with its browser endpoint and runs again (ours)."""
    event: protocol.CollectionScenarioFinishedEvent = {
        "kind": "collection-run:scenario-finished",
        "scenarioRunId": scenario_run_id,
        "scenario": scenario,
        "outcome": outcome,
        "t": now_ms(),
    }
    if infra_retry:
        event["infraRetry"] = True
    return event


def collection_endpoint_down(
    endpoint: str, reason: str, retry_in_ms: int
) -> protocol.CollectionEndpointDownEvent:
    """A browser endpoint of the pool went down (ours), said once each time it does."""
    return {
        "kind": "collection-run:endpoint-down",
        "endpoint": endpoint,
        "reason": reason,
        "retryInMs": retry_in_ms,
        "t": now_ms(),
    }


def collection_run_finished(outcome: protocol.RunOutcome) -> protocol.CollectionRunFinishedEvent:
    return {"kind": "collection-run:finished", "outcome": outcome, "t": now_ms()}


# --- runtime.json ------------------------------------------------------------------------


def last_failure(
    line: int,
    col: int,
    message: str,
    name: str,
    *,
    file: str | None = None,
    stack: Sequence[protocol.ChainFrame] = (),
) -> protocol.LastFailure:
    """``line``/``col`` in ``file`` are where the error happened; ``stack`` is its chain
    from the scenario's own statement (both additive, left out when unknown)."""
    failure: protocol.LastFailure = {
        "line": line,
        "col": col,
        "error": {"message": message, "name": name},
    }
    if file is not None:
        failure["file"] = file
    if stack:
        failure["stack"] = list(stack)
    return failure


def runtime_state(
    *,
    run_id: str,
    scenario: str,
    test_fn: str,
    state: protocol.RuntimeState,
    current: tuple[str, int, int] | None,
    variables: dict[str, str],
    call_stack: list[protocol.CallFrame],
    failure: protocol.LastFailure | None,
    breakpoints: dict[str, list[str]] | None = None,
    page: protocol.PageInfo | None = None,
    frame_vars: list[dict[str, str]] | None = None,
) -> protocol.RuntimeStateFile:
    """``current`` is ``(file, line, col)`` of the statement, or ``None`` between steps;
    ``frame_vars`` (ours, at a pause inside a call) the variables where each frame
    stands, outermost (the test function) first, the last one ``vars``."""
    data: protocol.RuntimeStateFile = {
        "runId": run_id,
        "scenario": scenario,
        "testFn": test_fn,
        "state": state,
        "current": None if current is None else {"line": current[1], "col": current[2]},
        "vars": variables,
        "callStack": call_stack,
        "lastFailure": failure,
        "updatedAt": now_ms(),
    }
    if current is not None:
        data["file"] = current[0]
    if breakpoints is not None:
        data["breakpoints"] = breakpoints
    if page is not None:
        data["page"] = page
    if frame_vars is not None:
        data["frameVars"] = frame_vars
    return data


# --- a run's error: RunResult.error, error.json, the worker's message -------------------


class RunError(TypedDict):
    """What a failed run reports about its error (ours; error.json holds it whole).

    ``file``/``line``/``col`` are where the error happened (a helper's line when it
    failed in one); ``at`` is the scenario's own statement that led there and
    ``chain`` every place from ``at`` down to ``file:line:col`` (outermost first, see
    :class:`runner.protocol.ChainFrame`). ``step*``/``callStack``/``vars`` exist when
    the failure happened at a step the steps record saw; ``url``/``title`` when a page was
    open.
    """

    error: str
    errorName: str
    scenario: NotRequired[str]
    file: NotRequired[str | None]
    line: NotRequired[int | None]
    col: NotRequired[int | None]
    step: NotRequired[str]
    stepIndex: NotRequired[int]
    stepLine: NotRequired[int]
    stepCol: NotRequired[int]
    callStack: NotRequired[list[protocol.CallFrame]]
    vars: NotRequired[dict[str, str]]
    at: NotRequired[protocol.ChainFrame]
    chain: NotRequired[list[protocol.ChainFrame]]
    url: NotRequired[str]
    title: NotRequired[str]


class FailedStep(TypedDict):
    """Where the steps record saw an error first: the step and the state around it."""

    step: str
    stepIndex: int
    stepLine: int
    stepCol: int
    callStack: list[protocol.CallFrame]
    vars: dict[str, str]


def failed_step(
    text: str,
    index: int,
    line: int,
    col: int,
    call_stack: list[protocol.CallFrame],
    variables: dict[str, str],
) -> FailedStep:
    return {
        "step": text,
        "stepIndex": index,
        "stepLine": line,
        "stepCol": col,
        "callStack": call_stack,
        "vars": variables,
    }


def run_error(
    message: str,
    name: str,
    *,
    scenario: str | None = None,
    where: tuple[str | None, int | None, int | None] | None = None,
    at_step: FailedStep | None = None,
    chain: Sequence[protocol.ChainFrame] = (),
) -> RunError:
    """The one builder of a run's error record (``RunResult.error``, error.json, a
    worker's report); ``where`` is ``(file, line, col)`` of the error itself, ``chain``
    the places from the scenario's own statement down to it."""
    error: RunError = {"error": message, "errorName": name}
    if where is not None:
        error["file"], error["line"], error["col"] = where
    if chain:
        error["at"] = chain[0]
        error["chain"] = list(chain)
    if scenario is not None:
        error["scenario"] = scenario
    if at_step is not None:
        error["step"] = at_step["step"]
        error["stepIndex"] = at_step["stepIndex"]
        error["stepLine"] = at_step["stepLine"]
        error["stepCol"] = at_step["stepCol"]
        error["callStack"] = at_step["callStack"]
        error["vars"] = at_step["vars"]
    return error


# --- a run's page log: network.jsonl, console.jsonl (ours) ------------------------------


def network_line(
    method: str,
    url: str | None,
    *,
    status: int | None,
    duration_ms: float | None,
    size: int | None,
    failure: str | None,
    routed: protocol.PageRouted | None = None,
) -> protocol.NetworkLine:
    """A request that finished or failed, stamped now (when it ended)."""
    line: protocol.NetworkLine = {
        "method": method,
        "url": url,
        "durationMs": duration_ms,
        "status": status,
        "failure": failure,
        "size": size,
        "t": now_ms(),
    }
    if routed is not None:
        line["routed"] = routed
    return line


def console_line(
    kind: str, text: str | None, at: tuple[str | None, int | None] | None = None
) -> protocol.ConsoleLine:
    """A console message (``kind`` as the browser says), stamped now; ``at``, its
    ``(url, line)`` (either may be unknown), for a console message only: a page error
    and a dialog have no place."""
    entry: protocol.ConsoleLine = {"type": kind, "text": text, "t": now_ms()}
    if at is not None:
        entry["url"], entry["line"] = at
    return entry


def page_log_capped(limit: Literal["lines", "bytes"], kept: int) -> protocol.PageLogCapped:
    """The last line of a page log that reached its bound after ``kept`` lines."""
    return {"capped": True, "limit": limit, "kept": kept, "t": now_ms()}


__all__ += ["console_line", "network_line", "page_log_capped"]
