"""The JSON lines between the collection orchestrator and its workers, typed.

Orders go down a worker's stdin, reports come up its stdout, one JSON object a line.
Both ends build them here, so mypy checks that what one side sends is what the other
reads; a scenario's result travels as :meth:`runner.run_result.RunResult.to_json`.
"""

from __future__ import annotations

from typing import Literal, TypedDict

from runner.events import RunError
from runner.run_result import RunResultJSON

__all__ = [
    "AbortOrder",
    "ExitOrder",
    "FatalReport",
    "FinishedReport",
    "Order",
    "ReadyReport",
    "Report",
    "RunOrder",
    "StartedReport",
    "UnfinishedReport",
    "abort_order",
    "exit_order",
    "fatal_report",
    "finished_report",
    "ready_report",
    "run_order",
    "started_report",
    "unfinished_report",
]


# --- orders: orchestrator → worker -------------------------------------------------------


class RunOrder(TypedDict):
    type: Literal["run"]
    scenario: str
    parentRunId: str


class AbortOrder(TypedDict):
    type: Literal["abort"]


class ExitOrder(TypedDict):
    type: Literal["exit"]


Order = RunOrder | AbortOrder | ExitOrder


def run_order(scenario: str, parent_run_id: str) -> RunOrder:
    return {"type": "run", "scenario": scenario, "parentRunId": parent_run_id}


def abort_order() -> AbortOrder:
    return {"type": "abort"}


def exit_order() -> ExitOrder:
    return {"type": "exit"}


# --- reports: worker → orchestrator --------------------------------------------------------


class ReadyReport(TypedDict):
    type: Literal["ready"]
    pid: int


class FatalReport(TypedDict):
    type: Literal["fatal"]
    error: str


class StartedReport(TypedDict):
    type: Literal["started"]
    scenario: str
    runId: str


class FinishedReport(TypedDict):
    """A run that gave a result: ``RunResult.to_json()`` (its error masked)."""

    type: Literal["finished"]
    scenario: str
    result: RunResultJSON


class UnfinishedReport(TypedDict):
    """``finished`` without a result: the scenario did not load, or its run failed in
    the runner itself (``runId`` once its run directory exists)."""

    type: Literal["finished"]
    scenario: str
    runId: str | None
    error: RunError


Report = ReadyReport | FatalReport | StartedReport | FinishedReport | UnfinishedReport


def ready_report(pid: int) -> ReadyReport:
    return {"type": "ready", "pid": pid}


def fatal_report(error: str) -> FatalReport:
    return {"type": "fatal", "error": error}


def started_report(scenario: str, run_id: str) -> StartedReport:
    return {"type": "started", "scenario": scenario, "runId": run_id}


def finished_report(scenario: str, result: RunResultJSON) -> FinishedReport:
    return {"type": "finished", "scenario": scenario, "result": result}


def unfinished_report(scenario: str, run_id: str | None, error: RunError) -> UnfinishedReport:
    return {"type": "finished", "scenario": scenario, "runId": run_id, "error": error}
