"""A worker's queue of run orders: real worker processes, real Chromium, a real site.

A collection sends a worker its next run while the current one runs, so that the
worker starts it the moment the current one ends. What must hold for that to be
safe (``runner/workers/worker.py``): queued runs start in order, one at a time; an ``abort``
naming a queued run keeps it from ever starting; a run ordered with
``stopOnFailure`` that fails holds back everything queued behind it (``--bail``: nothing
starts after a failure, even before the orchestrator reads it); SIGTERM drops what is
queued. The site records every visit, so "never started" means "never reached the
page", not only "reported so".
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from recording_site import RecordingSite
from sites import config_yaml, scenario_source, write_project

from runner.collection.prelaunch import worker_env
from runner.workers import messages
from runner.workers.host import worker_argv

SITE = Path(__file__).resolve().parent / "site_collection"
REPORT_TIMEOUT_S = 120.0  # a loaded CI machine takes seconds to start a worker

PASS = '  expect_visible(role("heading", "Collection home"))\n'
FAIL = '  expect_text(css("h1"), "Wrong heading")\n'
# Long enough (about 15 s) to be aborted or signalled in flight.
BUSY = (
    "  for (const i of range(60)) {\n"
    "    wait(250)\n"
    '    expect_visible(role("heading", "Collection home"))\n'
    "  }\n"
)
# Busy for about 4 s: long enough for an order sent while it runs to arrive, and run to
# its end by a test that waits for that.
BRIEF = (
    "  for (const i of range(16)) {\n"
    "    wait(250)\n"
    '    expect_visible(role("heading", "Collection home"))\n'
    "  }\n"
)


def visit(name: str) -> str:
    return f'  goto("/index.html?s={name}")\n'


class Worker:
    """One worker process of the project at ``root``, its orders and reports."""

    def __init__(self, root: Path) -> None:
        self.proc = subprocess.Popen(
            worker_argv(root),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=worker_env(0, 1, False),
            cwd=root,
            text=True,
        )
        assert self.next()["type"] == "ready"

    def order(self, order: messages.Order) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(order) + "\n")
        self.proc.stdin.flush()

    def next(self) -> dict[str, Any]:
        """The next report (output lines skipped); a worker that ends fails the test."""
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            assert line, f"the worker ended (exit {self.proc.wait(REPORT_TIMEOUT_S)})"
            report: dict[str, Any] = json.loads(line)
            if report["type"] != "output":
                return report

    def finished(self, scenario: str) -> dict[str, Any]:
        """The reports up to ``scenario``'s ``finished``, which is returned."""
        while True:
            report = self.next()
            assert report["scenario"] == scenario, report
            if report["type"] == "finished":
                return report

    def close(self) -> int:
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            return self.proc.wait(REPORT_TIMEOUT_S)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            if self.proc.stdout is not None:
                self.proc.stdout.close()


def outcome(report: dict[str, Any]) -> str:
    result = report.get("result")
    return str(result["outcome"]) if isinstance(result, dict) else "not run"


def not_started(report: dict[str, Any]) -> bool:
    """Reported without running: no run directory, the abort as its error."""
    return (
        report.get("runId") is None
        and "result" not in report
        and report["error"]["error"] == "aborted before it started"
    )


@pytest.fixture
def site() -> Iterator[RecordingSite]:
    served = RecordingSite(SITE, REPORT_TIMEOUT_S)
    try:
        yield served
    finally:
        served.close()


def visits(site: RecordingSite) -> list[str]:
    """The scenarios that reached the site, in order."""
    with site.lock:
        return [hit["s"] for hit in site.hits if "s" in hit]


@pytest.fixture
def worker(tmp_path: Path, site: RecordingSite, chromium_path: str) -> Iterator[Worker]:
    bodies = {
        "first": visit("first") + PASS,
        "second": visit("second") + PASS,
        "busy": visit("busy") + BUSY,
        "brief": visit("brief") + BRIEF,
        "fails": visit("fails") + FAIL,
    }
    root = write_project(
        tmp_path / "proj",
        config_yaml(site.url, chromium=chromium_path, timeout={"expect": 1000}),
        {name: scenario_source(name, body) for name, body in bodies.items()},
    )
    started = Worker(root)
    try:
        yield started
    finally:
        started.close()


def run(scenario: str, order_id: str, *, stop_on_failure: bool = False) -> messages.RunOrder:
    return messages.run_order(scenario, None, order_id, stop_on_failure=stop_on_failure)


def test_runs_sent_together_run_one_after_the_other_in_order(
    worker: Worker, site: RecordingSite
) -> None:
    worker.order(run("first", "1"))
    worker.order(run("second", "2"))

    first = worker.next()
    assert (first["type"], first["scenario"]) == ("started", "first")
    assert outcome(worker.finished("first")) == "completed"
    second = worker.next()
    assert (second["type"], second["scenario"]) == ("started", "second")
    assert second["runId"] != first["runId"]
    assert outcome(worker.finished("second")) == "completed"
    assert visits(site) == ["first", "second"]
    assert worker.close() == 0


def test_an_abort_naming_a_queued_run_keeps_it_from_starting(
    worker: Worker, site: RecordingSite
) -> None:
    worker.order(run("brief", "1"))
    worker.order(run("second", "2"))
    site.wait_for("brief")
    worker.order(messages.abort_order("2"))  # the queued one only: brief goes on

    assert outcome(worker.finished("brief")) == "completed"
    assert not_started(worker.finished("second"))
    worker.order(run("first", "3"))  # the worker is still good for the next one
    assert outcome(worker.finished("first")) == "completed"
    assert visits(site) == ["brief", "first"]


@pytest.mark.parametrize("stop_on_failure", [True, False])
def test_a_failed_run_ordered_to_stop_holds_back_the_queue(
    worker: Worker, site: RecordingSite, stop_on_failure: bool
) -> None:
    worker.order(run("fails", "1", stop_on_failure=stop_on_failure))
    worker.order(run("second", "2"))

    assert outcome(worker.finished("fails")) == "failed"
    second = worker.finished("second")
    if stop_on_failure:
        assert not_started(second)
        assert visits(site) == ["fails"]
    else:
        assert outcome(second) == "completed"
        assert visits(site) == ["fails", "second"]


def test_a_completed_run_ordered_to_stop_on_failure_lets_the_queue_go_on(
    worker: Worker, site: RecordingSite
) -> None:
    worker.order(run("first", "1", stop_on_failure=True))
    worker.order(run("second", "2"))

    assert outcome(worker.finished("first")) == "completed"
    assert outcome(worker.finished("second")) == "completed"
    assert visits(site) == ["first", "second"]


def test_sigterm_aborts_the_run_and_drops_the_queue(worker: Worker, site: RecordingSite) -> None:
    worker.order(run("busy", "1"))
    worker.order(run("second", "2"))
    site.wait_for("busy")
    worker.proc.send_signal(signal.SIGTERM)

    assert outcome(worker.finished("busy")) == "aborted"
    assert worker.proc.stdout is not None
    assert worker.proc.stdout.read() == ""  # nothing more: the queued run is dropped
    assert worker.close() == 0
    assert visits(site) == ["busy"]


# --- lanes: one worker, several scenarios at once -----------------------------------------


def lane_run(scenario: str, order_id: str, lane: int) -> messages.RunOrder:
    return messages.run_order(scenario, None, order_id, lane=lane)


def test_two_lanes_run_side_by_side_each_in_its_order(worker: Worker, site: RecordingSite) -> None:
    """Lane 1's runs start while lane 0's busy one runs; each report names its lane."""
    worker.order(lane_run("brief", "1", 0))
    worker.order(lane_run("first", "2", 1))
    worker.order(lane_run("second", "3", 1))
    reports: dict[str, dict[str, Any]] = {}
    while len(reports) < 3:
        report = worker.next()
        if report["type"] == "finished":
            reports[report["scenario"]] = report
    assert {name: (r["lane"], outcome(r)) for name, r in reports.items()} == {
        "brief": (0, "completed"),
        "first": (1, "completed"),
        "second": (1, "completed"),
    }
    seen = visits(site)  # the lanes start together: either may reach the site first
    assert sorted(seen) == ["brief", "first", "second"]
    assert seen.index("first") < seen.index("second")  # each lane's in its order
    # Lane 1 did not wait for lane 0: its quick run ended before the 4 s one.
    assert list(reports).index("first") < list(reports).index("brief")


def test_a_stop_while_the_lanes_stop_ends_the_worker(worker: Worker, site: RecordingSite) -> None:
    """``exit`` while a lane runs, then stdin closed (as ``unotest watch`` closes a busy
    worker, or a second SIGTERM): the end of stdin aborts the run, and takes nothing away
    from the end of the orders the lane waits for after it: the worker leaves."""
    worker.order(lane_run("busy", "1", 0))
    site.wait_for("busy")
    worker.order(messages.exit_order())
    time.sleep(0.5)  # the exit order taken (the lanes told to end) before stdin closes
    assert worker.proc.stdin is not None
    worker.proc.stdin.close()

    assert outcome(worker.finished("busy")) == "aborted"
    assert worker.close() == 0
    assert visits(site) == ["busy"]
