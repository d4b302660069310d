"""When a collection sends a worker its next run ahead (``CollectionRun._may_send_ahead``):
once every worker that can run does run one, and while each still has one to take.

The orders themselves are tested on real workers (test_worker_queue.py); this is the
decision alone, on the orchestrator's own records."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from runner.collection.orchestrator import CollectionRun, _Sent, _WorkerProcess
from runner.project.config import load_config
from runner.project.root import Project


def collection(tmp_path: Path, pending: int) -> CollectionRun:
    (tmp_path / "unotest.config.yaml").write_text("baseURL: http://127.0.0.1:1\n")
    return CollectionRun(
        Project(tmp_path),
        "all",
        [f"s{i}" for i in range(pending)],
        load_config(tmp_path, {}),
        workers=3,
    )


def running(run: CollectionRun, index: int) -> None:
    worker = _WorkerProcess(index, cast(Any, None))
    worker.sent.append(_Sent(f"r{index}", f"{index}-1"))
    run.processes[index] = worker


def test_runs_are_sent_ahead_only_once_every_worker_runs_one(tmp_path: Path) -> None:
    run = collection(tmp_path, pending=6)
    running(run, 0)
    running(run, 1)
    assert not run._may_send_ahead(3)  # the third is still starting
    running(run, 2)
    assert run._may_send_ahead(3)
    run.pending = run.pending[:2]
    assert not run._may_send_ahead(3)  # the last few go to whoever is free first


def test_a_worker_that_never_started_does_not_stop_the_others_sending_ahead(
    tmp_path: Path,
) -> None:
    run = collection(tmp_path, pending=6)
    running(run, 0)
    running(run, 1)
    run.workers_given_up = 1  # worker 2 failed to start twice
    assert run._may_send_ahead(3)
