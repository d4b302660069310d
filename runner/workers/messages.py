"""The JSON lines between the collection orchestrator and its workers, typed.

Orders go down a worker's stdin, reports come up its stdout, one JSON object a line.
Both ends build them here, so mypy checks that what one side sends is what the other
reads; a scenario's result travels as :meth:`runner.run.result.RunResult.to_json`.
A run order's ``lane`` comes back in every report on that run (``started``,
``finished``, ``output``: added by the worker as it sends them), so that a reader of a
worker with several lanes tells whose report it is; the other reports are the worker's.
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from runner.events import RunError
from runner.project.collection_file import CollectionUseJSON
from runner.run.result import RunResultJSON

__all__ = [
    "AbortOrder",
    "ExitOrder",
    "FatalReport",
    "FinishedReport",
    "Order",
    "OutputReport",
    "ReadyReport",
    "RelaunchedReport",
    "ReloadOrder",
    "Report",
    "RunOrder",
    "StartedReport",
    "UnfinishedReport",
    "abort_order",
    "exit_order",
    "fatal_report",
    "finished_report",
    "output_report",
    "ready_report",
    "relaunched_report",
    "reload_order",
    "run_order",
    "started_report",
    "unfinished_report",
]


# --- orders: orchestrator → worker -------------------------------------------------------


class RunOrder(TypedDict):
    type: Literal["run"]
    scenario: str
    parentRunId: str | None
    """The collection's run id; None for a run of its own (the watch daemon's)."""
    orderId: NotRequired[str]
    """Names this order for an ``abort`` that must reach it and nothing else."""
    stopOnFailure: NotRequired[bool]
    """A failure of this run ends the collection (``--bail``, no attempt left): the
    worker then starts none of the runs ordered after it (it reports each as aborted
    before it started), without waiting for the orchestrator to cancel them."""
    use: NotRequired[CollectionUseJSON]
    """The collection's ``setup:`` scenarios and browser context keys (``locale``,
    ``storageState``, ...), which override the config's for this run: sent with every
    run order, so a worker that replaces a dead one needs nothing more."""
    setup: NotRequired[bool]
    """This run is one of the collection's setup scenarios: no ``storageState`` applies
    to it (it writes the file the others start from)."""
    lane: NotRequired[int]
    """The lane (0-based among every lane of the collection, as ``UNOTEST_WORKER_INDEX``)
    this run is for: a worker with several lanes runs one scenario of each at once, each
    lane's in the order sent. The reports on the run carry it back. Without it: the
    worker's own index (``UNOTEST_WORKER_INDEX``; ``unotest watch``'s workers have one lane)."""


class AbortOrder(TypedDict):
    """Abort the current scenario; with ``orderId``, only the run of that order, even
    if the worker has not started it yet (it then reports it without running it)."""

    type: Literal["abort"]
    orderId: NotRequired[str]


class ExitOrder(TypedDict):
    type: Literal["exit"]


class ReloadOrder(TypedDict):
    """Read the project and its config again before the next run (the watch daemon
    sends it after a save; a collection never does)."""

    type: Literal["reload"]


Order = RunOrder | AbortOrder | ExitOrder | ReloadOrder


def run_order(
    scenario: str,
    parent_run_id: str | None,
    order_id: str | None = None,
    *,
    stop_on_failure: bool = False,
    use: CollectionUseJSON | None = None,
    setup: bool = False,
    lane: int | None = None,
) -> RunOrder:
    order: RunOrder = {"type": "run", "scenario": scenario, "parentRunId": parent_run_id}
    if order_id is not None:
        order["orderId"] = order_id
    if stop_on_failure:
        order["stopOnFailure"] = True
    if use is not None:
        order["use"] = use
    if setup:
        order["setup"] = True
    if lane is not None:
        order["lane"] = lane
    return order


def abort_order(order_id: str | None = None) -> AbortOrder:
    order: AbortOrder = {"type": "abort"}
    if order_id is not None:
        order["orderId"] = order_id
    return order


def exit_order() -> ExitOrder:
    return {"type": "exit"}


def reload_order() -> ReloadOrder:
    return {"type": "reload"}


# --- reports: worker → orchestrator --------------------------------------------------------


class ReadyReport(TypedDict):
    """``endpoint``: the browser endpoint (its index in ``wsEndpoint``'s list) the
    worker's browser came from, when it came from one."""

    type: Literal["ready"]
    pid: int
    endpoint: NotRequired[int]


class FatalReport(TypedDict):
    """The worker ends. ``endpoint``: because that browser endpoint refused it (it is
    down), not because of the worker itself."""

    type: Literal["fatal"]
    error: str
    endpoint: NotRequired[int]


class StartedReport(TypedDict):
    type: Literal["started"]
    scenario: str
    runId: str


class FinishedReport(TypedDict):
    """A run that gave a result: ``RunResult.to_json()`` (its error masked)."""

    type: Literal["finished"]
    scenario: str
    result: RunResultJSON
    browserLost: NotRequired[str]
    """The run's browser endpoint dropped the connection during it and then refused
    the worker's: why (the worker ends after this report; the run counts for nothing)."""


class UnfinishedReport(TypedDict):
    """``finished`` without a result: the scenario did not load, or its run failed in
    the runner itself (``runId`` once its run directory exists)."""

    type: Literal["finished"]
    scenario: str
    runId: str | None
    error: RunError
    browserLost: NotRequired[str]
    """As :class:`FinishedReport`'s."""


class RelaunchedReport(TypedDict):
    """The worker's browser was gone (crashed, killed) and a new one took its place.
    A reader that does not know this report ignores it (the collection does)."""

    type: Literal["relaunched"]
    reason: str


class OutputReport(TypedDict):
    """A line the scenario logged (``log()``), already masked: an ``output`` event."""

    type: Literal["output"]
    scenario: str
    text: str


class TeardownReport(TypedDict):
    """The worker's ``after_all`` hooks failed (or could not run) as it ended: the
    collection fails, as Playwright fails a run on an error in ``afterAll``. ``error``
    is one sentence, masked, naming the hooks' run directory when there is one."""

    type: Literal["teardown"]
    error: str


Report = (
    ReadyReport
    | FatalReport
    | StartedReport
    | FinishedReport
    | UnfinishedReport
    | RelaunchedReport
    | OutputReport
    | TeardownReport
)


def teardown_report(error: str) -> TeardownReport:
    return {"type": "teardown", "error": error}


def output_report(scenario: str, text: str) -> OutputReport:
    return {"type": "output", "scenario": scenario, "text": text}


def ready_report(pid: int, endpoint: int | None = None) -> ReadyReport:
    report: ReadyReport = {"type": "ready", "pid": pid}
    if endpoint is not None:
        report["endpoint"] = endpoint
    return report


def relaunched_report(reason: str) -> RelaunchedReport:
    return {"type": "relaunched", "reason": reason}


def fatal_report(error: str, endpoint: int | None = None) -> FatalReport:
    report: FatalReport = {"type": "fatal", "error": error}
    if endpoint is not None:
        report["endpoint"] = endpoint
    return report


def started_report(scenario: str, run_id: str) -> StartedReport:
    return {"type": "started", "scenario": scenario, "runId": run_id}


def finished_report(scenario: str, result: RunResultJSON) -> FinishedReport:
    return {"type": "finished", "scenario": scenario, "result": result}


def unfinished_report(scenario: str, run_id: str | None, error: RunError) -> UnfinishedReport:
    return {"type": "finished", "scenario": scenario, "runId": run_id, "error": error}
