"""A collection worker's reports and orders, and the orchestrator's reading of them,
tested in-process (``test_collection.py`` runs real workers with real browsers).

The worker speaks JSON lines; a ``finished`` report carries a ``RunResult``'s JSON,
which the orchestrator reads back with ``RunResult.from_json``: these tests cross that
pipe through ``json`` as the real one does.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest

from runner import protocol
from runner.collection.orchestrator import ScenarioOutcome
from runner.files import append_line
from runner.project.root import Project
from runner.project.secrets import SecretMasker
from runner.run.result import RunResult
from runner.store.rundir import end_abandoned_run
from runner.workers.worker import _Lane, _Worker, finished_report, unfinished_report


def through_pipe(message: dict[str, Any]) -> dict[str, Any]:
    """What the orchestrator reads: the worker's line, parsed."""
    parsed: dict[str, Any] = json.loads(json.dumps(message, ensure_ascii=True))
    return parsed


def a_result(**changes: Any) -> RunResult:
    fields: dict[str, Any] = {
        "run_id": "shop-cart-mx2b0000-abcdef",
        "run_dir": "unotest/.runs/shop-cart-mx2b0000-abcdef",
        "scenario": "shop/cart",
        "outcome": "failed",
        "duration_ms": 2500,
        "steps": 4,
        "error": {"error": "no button", "errorName": "TimeoutError", "line": 3},
        "bundle_path": ".unotest/failures/shop__cart__3",
    }
    fields.update(changes)
    return RunResult(**fields)


# --- reports, worker to orchestrator ----------------------------------------------------


def test_a_finished_report_becomes_the_scenario_outcome_field_for_field() -> None:
    result = a_result()
    message = through_pipe(finished_report("shop/cart", result, SecretMasker()))
    assert message["type"] == "finished"
    assert RunResult.from_json(message["result"]) == result
    assert ScenarioOutcome.from_worker("shop/cart", 2, message) == ScenarioOutcome(
        "shop/cart",
        "failed",
        2,
        result.run_id,
        result.run_dir,
        2500,
        4,
        result.error,
        result.bundle_path,
    )


def test_a_finished_report_masks_the_error_only() -> None:
    masker = SecretMasker()
    masker.add("hunter2-secret")
    result = a_result(error={"error": "typed hunter2-secret", "errorName": "Error"})
    message = through_pipe(finished_report("shop/cart", result, masker))
    sent = RunResult.from_json(message["result"])
    assert "hunter2-secret" not in json.dumps(message)
    assert sent.error is not None and sent.error["error"] != result.error["error"]  # type: ignore[index]
    assert sent == RunResult(**{**result.__dict__, "error": sent.error})
    assert result.error == {"error": "typed hunter2-secret", "errorName": "Error"}  # untouched


def test_a_completed_run_reports_no_error() -> None:
    result = a_result(outcome="completed", error=None, bundle_path=None)
    outcome = ScenarioOutcome.from_worker(
        "shop/cart", 0, through_pipe(finished_report("shop/cart", result, SecretMasker()))
    )
    assert (outcome.outcome, outcome.error, outcome.steps) == ("completed", None, 4)


@pytest.mark.parametrize("run_id", [None, "shop-cart-mx2b0000-abcdef"])
def test_a_report_without_a_result_is_a_failure_with_its_run_id(run_id: str | None) -> None:
    message = through_pipe(unfinished_report("shop/cart", run_id, "disk full", "RunWriteError"))
    assert ScenarioOutcome.from_worker("shop/cart", 1, message) == ScenarioOutcome(
        "shop/cart", "failed", 1, run_id, error={"error": "disk full", "errorName": "RunWriteError"}
    )


def test_an_unreadable_result_is_a_failure_not_a_crash() -> None:
    message = {"type": "finished", "result": {**a_result().to_json(), "outcome": "sideways"}}
    outcome = ScenarioOutcome.from_worker("shop/cart", 0, message)
    assert outcome.outcome == "failed" and outcome.run_id is None
    assert outcome.error is not None and "unreadable" in outcome.error["error"]


# --- the worker's end of the pipe and its orders ------------------------------------------


def test_send_writes_one_json_line() -> None:
    out = io.StringIO()
    worker = _Worker(Path("."), out)
    worker.send({"type": "ready", "pid": 12, "note": "é"})
    assert out.getvalue() == '{"type": "ready", "pid": 12, "note": "\\u00e9"}\n'


def test_send_to_a_closed_pipe_drops_the_report_quietly() -> None:
    """The orchestrator was killed: the report goes nowhere, and so do later ones."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    with open(write_end, "w") as out:
        worker = _Worker(Path("."), out)
        worker.send({"type": "started", "scenario": "a", "runId": "a-1"})
        assert worker.orphaned
        worker.send({"type": "finished"})  # nothing raised, nothing tried


class _Run:
    def __init__(self) -> None:
        self.aborts: list[str] = []

    def abort(self, reason: str = "SIGTERM") -> None:
        self.aborts.append(reason)


@pytest.mark.parametrize(
    ("order", "aborts"),
    [
        ({"type": "abort"}, ["abort"]),
        (None, ["abort"]),  # stdin closed: the orchestrator is gone
        ({"type": "run", "scenario": "b"}, []),
        ({"type": "exit"}, []),
    ],
)
def test_orders_reach_the_queue_and_abort_the_current_runs(
    order: dict[str, Any] | None, aborts: list[str]
) -> None:
    """Every lane's current run: an abort without an order id is the whole worker's."""

    async def main() -> tuple[list[str], list[str], dict[str, Any] | None]:
        worker = _Worker(Path("."), io.StringIO())
        runs = [_Run(), _Run()]
        for index, run in enumerate(runs):
            worker.lanes[index] = _Lane(index, run=run)  # type: ignore[arg-type]
        worker._receive(order)
        return runs[0].aborts, runs[1].aborts, await worker.orders.get()

    assert asyncio.run(main()) == (aborts, aborts, order)


def test_an_abort_by_order_id_aborts_that_lanes_run_only() -> None:
    async def main() -> tuple[list[str], list[str], set[str]]:
        worker = _Worker(Path("."), io.StringIO())
        runs = [_Run(), _Run()]
        for index, run in enumerate(runs):
            worker.lanes[index] = _Lane(index, run=run, order_id=f"0-{index}")  # type: ignore[arg-type]
        worker._receive({"type": "abort", "orderId": "0-1"})
        worker._receive({"type": "abort", "orderId": "0-7"})  # queued: never starts
        return runs[0].aborts, runs[1].aborts, worker.cancelled_orders

    assert asyncio.run(main()) == ([], ["abort"], {"0-7"})


def test_an_abort_between_scenarios_aborts_nothing() -> None:
    async def main() -> dict[str, Any] | None:
        worker = _Worker(Path("."), io.StringIO())
        worker._receive({"type": "abort"})
        return await worker.orders.get()

    assert asyncio.run(main()) == {"type": "abort"}


# --- a killed worker's run directory, ended by the orchestrator --------------------------------


def _run_dir(tmp_path: Path, lines: list[dict[str, Any]], tail: bytes = b"") -> Path:
    run_dir = tmp_path / "shop-cart-mx2b0000-abcdef"
    run_dir.mkdir()
    data = b"".join(json.dumps(line).encode() + b"\n" for line in lines) + tail
    (run_dir / protocol.STEPS_FILE).write_bytes(data)
    state = {"state": "running", "current": {"line": 3, "col": 2}, "file": "a.js", "page": {}}
    (run_dir / protocol.RUNTIME_FILE).write_text(json.dumps(state))
    return run_dir


def test_end_abandoned_run_closes_open_steps_and_a_half_written_line(tmp_path: Path) -> None:
    started = {"kind": "step:started", "line": 3, "col": 2, "text": "f()"}
    run_dir = _run_dir(
        tmp_path,
        [{"kind": "run:started"}, started, started, {"kind": "step:ok"}, started],
        tail=b'{"kind": "step:o',
    )
    end_abandoned_run(run_dir)
    raw = (run_dir / protocol.STEPS_FILE).read_bytes().split(b"\n")
    assert raw[-5] == b'{"kind": "step:o'  # ended, not glued to the next line
    ended = [json.loads(line) for line in raw[-4:-1]]
    assert [(e["kind"], e.get("errorName")) for e in ended] == [
        ("step:fail", "AbortError"),
        ("step:fail", "AbortError"),
        ("run:finished", None),
    ]
    assert ended[-1]["outcome"] == "aborted"
    runtime = json.loads((run_dir / protocol.RUNTIME_FILE).read_text())
    assert runtime["state"] == "aborted" and runtime["current"] is None
    assert "page" not in runtime and "file" not in runtime


def test_end_abandoned_run_leaves_a_finished_run_alone(tmp_path: Path) -> None:
    run_dir = _run_dir(tmp_path, [{"kind": "run:started"}, {"kind": "run:finished"}])
    before = (run_dir / protocol.STEPS_FILE).read_bytes()
    end_abandoned_run(run_dir)
    assert (run_dir / protocol.STEPS_FILE).read_bytes() == before


def test_append_line_appends_whole_lines_and_creates_only_when_asked(tmp_path: Path) -> None:
    path = tmp_path / "commands.jsonl"
    with pytest.raises(FileNotFoundError):
        append_line(path, b'{"cmd": "step"}\n')
    append_line(path, b'{"cmd": "step"}\n', create=True)
    append_line(path, b'{"cmd": "continue"}\n')
    assert path.read_bytes() == b'{"cmd": "step"}\n{"cmd": "continue"}\n'


def test_an_order_without_a_lane_is_for_the_workers_own_index(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``unotest watch``'s workers send no lane: a scenario sees the index its worker was
    started with, not 0 for every worker."""
    monkeypatch.setenv("UNOTEST_WORKER_INDEX", "3")

    async def main() -> list[int]:
        worker = _Worker(Path("."), io.StringIO())
        lanes = [
            worker._lane({"type": "run", "scenario": "a"}, Project(Path("."))),
            worker._lane({"type": "run", "scenario": "b", "lane": 1}, Project(Path("."))),
        ]
        for lane in lanes:
            assert lane.task is not None
            lane.task.cancel()
        return [lane.index for lane in lanes]

    assert asyncio.run(main()) == [3, 1]
