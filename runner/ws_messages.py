"""One typed constructor per ``WsMessage`` kind of ``@unotest/protocol`` 0.5.0.

The viewer server pushes these over its WebSocket; they are built here and nowhere else
(as :mod:`runner.events` builds every ``steps.jsonl`` line), so mypy checks the kinds and
fields against the protocol's interfaces. The ``fs:*-changed`` and ``fs:bp-changed``
messages carry only their kind, as 0.5.0 types them: a client refetches over REST.

``watch:event`` and ``watch:status`` are ours (additive; a client ignores unknown kinds):
the viewer's link to the project's watch daemon (``unotest watch``) forwards each
daemon event as it came off the daemon's socket, and says when the daemon comes or goes.
``fs:env-changed`` is ours too: ``unotest/.env`` was created, written or removed, and
carries only its kind, as the other ``fs:*-changed`` do.

``fs:run-step`` and ``fs:collection-run-step`` carry a ``steps.jsonl`` line *as read
back*: a ``RunArtifact`` (or ``CollectionRunArtifact``) or one of our additive kinds
(``command:applied``, ``step:skipped``, ...), so ``event`` is a :data:`JSONObject`.
They also carry ``lineIndex`` (ours, additive): the line's 0-based number in
``steps.jsonl``. A page that reconnected reads the run over REST (whose detail says
``lineCount``, the whole lines it read) while the hub may still deliver lines that
the read holds; by the number it keeps each line once, which comparing contents
cannot (two ``step:ok`` lines can be identical).
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypeAlias, TypedDict

from runner.protocol import JSONObject, RunId, RunOutcome

__all__ = [
    "ErrorMessage",
    "FsBreakpointsChangedMessage",
    "FsCollectionRunStepMessage",
    "FsCollectionsChangedMessage",
    "FsEnvChangedMessage",
    "FsHelpersChangedMessage",
    "FsRunFinishedMessage",
    "FsRunStartedMessage",
    "FsRunStepMessage",
    "FsScenariosChangedMessage",
    "LogLineMessage",
    "LogStream",
    "WatchEventMessage",
    "WatchStatus",
    "WatchStatusMessage",
    "WsMessage",
    "bp_changed",
    "collection_run_step",
    "collections_changed",
    "env_changed",
    "error",
    "helpers_changed",
    "log_line",
    "run_finished",
    "run_started",
    "run_step",
    "scenarios_changed",
    "watch_event",
    "watch_status",
]

LogStream: TypeAlias = Literal["stdout", "stderr"]
WatchStatus: TypeAlias = Literal["running", "not-running", "stale", "unreadable"]


class FsScenariosChangedMessage(TypedDict):
    kind: Literal["fs:scenarios-changed"]


class FsHelpersChangedMessage(TypedDict):
    kind: Literal["fs:helpers-changed"]


class FsCollectionsChangedMessage(TypedDict):
    kind: Literal["fs:collections-changed"]


class FsBreakpointsChangedMessage(TypedDict):
    kind: Literal["fs:bp-changed"]


class FsEnvChangedMessage(TypedDict):
    """Ours: ``unotest/.env`` was created, written or removed; ``GET /api/env`` has it."""

    kind: Literal["fs:env-changed"]


class FsRunStartedMessage(TypedDict):
    """``scenario`` is the manifest's ``ref``: the collection's name for a collection run."""

    kind: Literal["fs:run-started"]
    runId: RunId
    scenario: str


class FsRunStepMessage(TypedDict):
    kind: Literal["fs:run-step"]
    runId: RunId
    event: JSONObject
    lineIndex: NotRequired[int]


class FsCollectionRunStepMessage(TypedDict):
    kind: Literal["fs:collection-run-step"]
    runId: RunId
    event: JSONObject
    lineIndex: NotRequired[int]


class FsRunFinishedMessage(TypedDict):
    kind: Literal["fs:run-finished"]
    runId: RunId
    outcome: RunOutcome


class LogLineMessage(TypedDict):
    kind: Literal["log:line"]
    runId: RunId
    stream: LogStream
    line: str


class WatchEventMessage(TypedDict):
    """Ours: one event of the watch daemon's socket (``snapshot``, ``batch.started``, ...),
    unchanged (its absolute paths, its ``seq``)."""

    kind: Literal["watch:event"]
    event: JSONObject


class WatchStatusMessage(TypedDict):
    """Ours: the viewer's link to the watch daemon changed (``connected``: it reads the
    daemon's socket now); ``GET /api/watch`` has the whole state."""

    kind: Literal["watch:status"]
    status: WatchStatus
    connected: bool


class ErrorMessage(TypedDict):
    kind: Literal["error"]
    message: str


WsMessage: TypeAlias = (
    FsScenariosChangedMessage
    | FsHelpersChangedMessage
    | FsCollectionsChangedMessage
    | FsBreakpointsChangedMessage
    | FsEnvChangedMessage
    | FsRunStartedMessage
    | FsRunStepMessage
    | FsCollectionRunStepMessage
    | FsRunFinishedMessage
    | LogLineMessage
    | WatchEventMessage
    | WatchStatusMessage
    | ErrorMessage
)
"""Every message the viewer server sends on ``/ws``."""


def scenarios_changed() -> FsScenariosChangedMessage:
    return {"kind": "fs:scenarios-changed"}


def helpers_changed() -> FsHelpersChangedMessage:
    return {"kind": "fs:helpers-changed"}


def collections_changed() -> FsCollectionsChangedMessage:
    return {"kind": "fs:collections-changed"}


def bp_changed() -> FsBreakpointsChangedMessage:
    return {"kind": "fs:bp-changed"}


def env_changed() -> FsEnvChangedMessage:
    return {"kind": "fs:env-changed"}


def run_started(run_id: RunId, scenario: str) -> FsRunStartedMessage:
    return {"kind": "fs:run-started", "runId": run_id, "scenario": scenario}


def run_step(run_id: RunId, event: JSONObject, line_index: int | None = None) -> FsRunStepMessage:
    message: FsRunStepMessage = {"kind": "fs:run-step", "runId": run_id, "event": event}
    if line_index is not None:
        message["lineIndex"] = line_index
    return message


def collection_run_step(
    run_id: RunId, event: JSONObject, line_index: int | None = None
) -> FsCollectionRunStepMessage:
    message: FsCollectionRunStepMessage = {
        "kind": "fs:collection-run-step",
        "runId": run_id,
        "event": event,
    }
    if line_index is not None:
        message["lineIndex"] = line_index
    return message


def run_finished(run_id: RunId, outcome: RunOutcome) -> FsRunFinishedMessage:
    return {"kind": "fs:run-finished", "runId": run_id, "outcome": outcome}


def log_line(run_id: RunId, stream: LogStream, line: str) -> LogLineMessage:
    return {"kind": "log:line", "runId": run_id, "stream": stream, "line": line}


def error(message: str) -> ErrorMessage:
    return {"kind": "error", "message": message}


def watch_event(event: JSONObject) -> WatchEventMessage:
    return {"kind": "watch:event", "event": event}


def watch_status(status: WatchStatus, connected: bool) -> WatchStatusMessage:
    return {"kind": "watch:status", "status": status, "connected": connected}
