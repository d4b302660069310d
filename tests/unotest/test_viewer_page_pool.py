"""The collection run tab of a run over a browser pool, in real Chromium on a real
``unotest view``: the column ``browser`` names each run's endpoint, the list
``Browser endpoints down`` says the endpoint that went down once, and the run lost with
it says it was run again and is not counted. The run directories are written as the
orchestrator writes them (``test_browser_pool_e2e.py`` runs the real thing)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, expect
from viewer_page import Viewer, browser_type_launch_args, guard_page, viewer_fixture

from runner.protocol import make_run_id

__all__ = ["browser_type_launch_args"]  # the fixture, imported for pytest to find here

DOWN = "ws://127.0.0.1:3001/"
UP = "ws://127.0.0.1:3002/"

viewer = viewer_fixture(
    site=False,
    base_url="http://127.0.0.1:9",
    scenarios={"alpha": '  goto("/")\n', "beta": '  goto("/")\n'},
    collections={"both": ["alpha", "beta"]},
)


def _write_run(runs: Path, run_id: str, manifest: dict[str, Any], events: list[Any]) -> None:
    run_dir = runs / run_id
    run_dir.mkdir(parents=True)
    whole = {"schemaVersion": 1, "adapter": "@unotest/web", **manifest}
    (run_dir / "manifest.json").write_text(json.dumps(whole))
    (run_dir / "steps.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))


def test_a_collection_run_over_a_pool_names_endpoints_and_the_one_that_went_down(
    page: Page, viewer: Viewer
) -> None:
    guard = guard_page(page)
    runs = viewer.root / "unotest" / ".runs"
    t0 = time.time_ns() // 1_000_000 - 60_000  # a minute ago, as a run's id and times say
    parent = make_run_id("both", t0, "000001")
    lost, beta = make_run_id("alpha", t0 + 1, "000002"), make_run_id("beta", t0 + 2, "000003")
    again = make_run_id("alpha", t0 + 200, "000004")
    _write_run(runs, parent, {"kind": "collection", "ref": "both", "startedAt": t0}, [
        {"kind": "collection-run:started", "runId": parent, "collection": "both",
         "scenarios": ["alpha", "beta"], "t": t0},
        {"kind": "collection-run:scenario-started", "scenarioRunId": lost, "scenario": "alpha",
         "worker": 0, "endpoint": DOWN, "t": t0 + 1},
        {"kind": "collection-run:scenario-started", "scenarioRunId": beta, "scenario": "beta",
         "worker": 1, "endpoint": UP, "t": t0 + 2},
        {"kind": "collection-run:endpoint-down", "endpoint": DOWN,
         "reason": "WebSocket error: connect ECONNREFUSED 127.0.0.1:3001", "retryInMs": 2000,
         "t": t0 + 100},
        {"kind": "collection-run:scenario-finished", "scenarioRunId": lost, "scenario": "alpha",
         "outcome": "failed", "infraRetry": True, "t": t0 + 100},
        {"kind": "collection-run:scenario-started", "scenarioRunId": again, "scenario": "alpha",
         "worker": 0, "endpoint": UP, "t": t0 + 200},
        {"kind": "collection-run:scenario-finished", "scenarioRunId": beta, "scenario": "beta",
         "outcome": "completed", "t": t0 + 300},
        {"kind": "collection-run:scenario-finished", "scenarioRunId": again, "scenario": "alpha",
         "outcome": "completed", "t": t0 + 400},
        {"kind": "collection-run:finished", "outcome": "completed", "t": t0 + 500},
    ])  # fmt: skip
    for run_id, ref, t, outcome, extra in (
        (lost, "alpha", t0 + 1, "failed", {"browserEndpoint": DOWN}),
        (beta, "beta", t0 + 2, "completed", {"browserEndpoint": UP}),
        (again, "alpha", t0 + 200, "completed", {"browserEndpoint": UP, "infraRetryOf": lost}),
    ):
        _write_run(
            runs,
            run_id,
            {"kind": "scenario", "ref": ref, "parentRunId": parent, "startedAt": t, **extra},
            [
                {"kind": "run:started", "runId": run_id, "scenario": ref, "t": t},
                {"kind": "run:finished", "outcome": outcome, "t": t + 90},
            ],
        )
    key = f"collection-run:{parent}"
    page.goto(f"{viewer.url}#open={key}&active={key}")

    down = page.get_by_role("list", name="Browser endpoints down")
    expect(down.get_by_role("listitem")).to_have_count(1)
    expect(down).to_contain_text(f"Browser endpoint {DOWN} is down: WebSocket error")
    table = page.get_by_role("table", name="Scenario runs")
    expect(table.get_by_role("columnheader", name="browser")).to_be_visible()
    rows = table.locator("tbody tr")
    expect(rows).to_have_count(3)
    lost_row = rows.filter(has=page.get_by_role("button", name=lost))
    expect(lost_row.get_by_role("cell", name=DOWN, exact=True)).to_be_visible()
    expect(lost_row).to_contain_text("lost with its browser endpoint: run again, not counted")
    again_row = rows.filter(has=page.get_by_role("button", name=again))
    expect(again_row.get_by_role("cell", name=UP, exact=True)).to_be_visible()
    status = page.get_by_role("status", name="Run status")
    expect(status).to_contain_text("Run completed")
    expect(status).to_contain_text("2 passed")
    expect(status).not_to_contain_text("failed")
    guard.check()
