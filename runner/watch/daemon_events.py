"""The watch daemon's event shapes, named and shaped as the daemon protocol says.

One typed constructor per event; the bus (:mod:`runner.watch.bus`) adds ``seq`` and
``timestamp`` when it publishes, so a constructor returns the event without them.
Paths are absolute and POSIX. The protocol is additive: consumers ignore unknown
types and fields, and ``PROTOCOL_VERSION`` only changes on an incompatible change.
Our additions are marked where they are built (``scenario``, ``via``, ``message``,
the ``config`` reason kind, run ids and run directories).
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

__all__ = [
    "ADAPTER_ID",
    "BATCH_PRECEDENCE",
    "PROTOCOL_VERSION",
    "RUNNER_KEY",
    "BatchStatus",
    "Event",
    "PlanEntry",
    "RunStatus",
    "SelectionReason",
    "Trigger",
    "Unmatched",
    "batch_status",
]

PROTOCOL_VERSION = 1
RUNNER_KEY = "unotest"
ADAPTER_ID = "e2e"

Event = dict[str, Any]
"""An event as it travels: a JSON object with at least ``type``, ``seq``, ``timestamp``."""

Trigger = Literal["idle", "maxWindow", "manual"]
RunStatus = Literal["passed", "failed", "errored", "skipped", "cancelled"]
BatchStatus = RunStatus
ChangeKind = Literal["add", "change", "unlink"]

BATCH_PRECEDENCE: tuple[RunStatus, ...] = ("errored", "cancelled", "failed", "passed", "skipped")
"""A batch's status is its runs' first status in this order: an infrastructure error
asks for a different action than a test failure, so it ranks above it."""


def batch_status(statuses: list[RunStatus]) -> BatchStatus:
    """The batch's status by the precedence; a batch with no run is ``skipped``."""
    for status in BATCH_PRECEDENCE:
        if status in statuses:
            return status
    return "skipped"


class SelectionReason(TypedDict):
    """Why a scenario was selected. ``kind`` is ``changed`` (the saved file is the
    scenario), ``importer`` (reached through the call graph), ``manual``, or (ours)
    ``config`` (``unotest.config.yaml`` changed: everything is selected)."""

    kind: Literal["changed", "importer", "manual", "config"]
    changedFile: NotRequired[str]
    sourceFile: NotRequired[str]
    depth: NotRequired[int]
    chain: NotRequired[list[str]]
    via: NotRequired[list[str]]
    """Ours: the functions along ``chain``, from the saved file's to the scenario's."""
    byName: NotRequired[bool]
    """Ours: found by the names of a helper's functions (the helper does not parse)."""
    message: NotRequired[str]


class Unmatched(TypedDict):
    file: str
    reason: str


class PlanEntry(TypedDict):
    runnerKey: str
    adapterId: str
    testFiles: list[str]
    reasons: dict[str, list[SelectionReason]]
    scenarios: list[str]
    """Ours: the scenario names, in ``testFiles`` order."""


def daemon_started(
    pid: int,
    root: str,
    version: str,
    server: dict[str, Any] | None,
    config_path: str | None,
    indexed_files: int,
) -> Event:
    return {
        "type": "daemon.started",
        "pid": pid,
        "root": root,
        "version": version,
        "protocolVersion": PROTOCOL_VERSION,
        "server": server,
        "configPath": config_path,
        "indexedFiles": indexed_files,
    }


def daemon_stopped(reason: str) -> Event:
    return {"type": "daemon.stopped", "reason": reason}


def watch_change(path: str, kind: ChangeKind) -> Event:
    return {"type": "watch.change", "path": path, "kind": kind}


def batch_started(
    batch_id: str,
    changed_files: list[str],
    trigger: Trigger,
    plan: list[PlanEntry],
    unmatched: list[Unmatched],
) -> Event:
    return {
        "type": "batch.started",
        "batchId": batch_id,
        "changedFiles": changed_files,
        "trigger": trigger,
        "plan": plan,
        "unmatched": unmatched,
    }


def run_started(batch_id: str, run_id: str, scenario: str, test_file: str, command: str) -> Event:
    return {
        "type": "run.started",
        "batchId": batch_id,
        "runId": run_id,
        "runnerKey": RUNNER_KEY,
        "adapterId": ADAPTER_ID,
        "testFiles": [test_file],
        "scenario": scenario,
        "command": command,
    }


def run_finished(batch_id: str, run_id: str, result: dict[str, Any]) -> Event:
    """``result`` is a TestRunResult (:func:`runner.watch.results.make_test_run_result`)."""
    return {"type": "run.finished", "batchId": batch_id, "runId": run_id, "result": result}


def batch_finished(batch_id: str, status: BatchStatus, runs: list[dict[str, Any]]) -> Event:
    counts = {s: sum(1 for r in runs if r.get("status") == s) for s in BATCH_PRECEDENCE}
    return {
        "type": "batch.finished",
        "batchId": batch_id,
        "result": {"batchId": batch_id, "status": status, "counts": counts, "runs": runs},
    }


def error(scope: str, message: str, detail: str | None, degraded_to: str | None) -> Event:
    return {
        "type": "error",
        "scope": scope,
        "message": message,
        "detail": detail,
        "degradedTo": degraded_to,
    }


def snapshot(state: dict[str, Any]) -> Event:
    return {"type": "snapshot", "state": state}
