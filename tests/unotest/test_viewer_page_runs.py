"""The viewer page's run views in real Chromium on a real ``unotest view``: a failing run's
failure panel (its screenshot loaded), the screenshot strip and the output; a
collection run with 2 workers listing its scenario runs, each opening its own tab; a
finished run reopened from the address bar; a run of 10,000 steps kept windowed."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any

from playwright.sync_api import Locator, Page, expect
from viewer_page import Viewer, browser_type_launch_args, guard_page, site_viewer, viewer_fixture

__all__ = ["browser_type_launch_args"]  # the fixture, imported for pytest to find here

WAIT_MS = 90_000
"""How long to wait for a run to start a browser and end on a loaded machine (a bound on
waiting, never an assertion about time)."""
HEADING = '  expect_visible(role("heading", "Welcome"))\n'
SCENARIOS = {
    # alpha waits, so the second worker has started before the first could take beta too.
    "alpha": '  goto("/")\n  wait(3000)\n' + HEADING,
    "beta": '  goto("/")\n  click("Press")\n' + HEADING,
    "broken": '  route("**/mocked.png", {status: 503})\n  goto("/bad.html")\n'
    + '  screenshot("home")\n  expect_visible(role("heading", "Nope"))\n',
}


BAD_PAGE = """<!doctype html><title>bad</title><h1>Bad</h1>
<script>console.error("boom from the page")</script><img src="/missing.png" alt="">
<img src="/mocked.png" alt="">"""

viewer = viewer_fixture(
    site={"bad.html": BAD_PAGE},
    scenarios=SCENARIOS,
    collections={"both": ["alpha", "beta", "gone"]},
    timeout={"expect": 1000},
    trace="on-failure",
)


def _natural_width(image: Locator) -> int:
    expect(image).to_be_visible()
    image.evaluate("img => img.decode ? img.decode().catch(() => null) : null")
    width: int = image.evaluate("img => img.naturalWidth")
    return width


def _tab_url(viewer: Viewer, key: str) -> str:
    return f"{viewer.url}#open={key}&active={key}"


def test_a_failing_run_shows_the_failure_panel(page: Page, viewer: Viewer) -> None:
    guard = guard_page(page)
    page.goto(viewer.url)
    page.get_by_role("treeitem", name="broken").click()
    page.get_by_role("button", name="Run", exact=True).click()
    status = page.get_by_role("status", name="Run status")
    expect(status).to_contain_text("failed", timeout=WAIT_MS)
    failure = page.get_by_role("region", name="Failure")
    expect(failure).to_contain_text("AssertionError", timeout=WAIT_MS)
    expect(failure).to_contain_text("Nope")
    frame = failure.get_by_label("Code frame")
    expect(frame).to_contain_text('> 8 |   expect_visible(role("heading", "Nope"))')
    assert _natural_width(failure.get_by_role("img", name="Screenshot at the failure")) > 0
    expect(failure.get_by_text("Aria snapshot")).to_be_visible()
    expect(failure.locator(".failure-console")).to_contain_text("boom from the page")
    expect(failure.locator(".failure-network")).to_contain_text("/missing.png 404")
    expect(failure.locator(".failure-network")).to_contain_text(
        "/mocked.png 503 (fulfilled by a route)"
    )
    expect(failure.locator(".failure-routed")).to_contain_text("/mocked.png → fulfilled 503")
    trace = failure.locator(".failure-trace code")
    expect(trace).to_have_text(
        re.compile(r"^playwright show-trace \.unotest/failures/\S+/trace\.zip$")
    )
    bundle = trace.inner_text().split(" ")[-1]
    assert (viewer.root / bundle).is_file()
    strip = page.get_by_role("region", name="Screenshots")
    assert _natural_width(strip.get_by_role("img", name="Screenshot home.png")) > 0
    steps = page.get_by_role("region", name="Steps")
    expect(steps.locator(".step-fail")).to_contain_text('expect_visible(role("heading", "Nope"))')
    expect(steps.locator(".step-ok")).to_have_count(3)  # route, goto, screenshot
    output = page.get_by_role("log", name="Output")
    expect(output).to_contain_text("unotest e2e broken")
    expect(output).to_contain_text("route: GET")  # the route's own line
    for name in ("Continue", "Pause", "Abort"):
        expect(page.get_by_role("button", name=name, exact=True)).to_be_disabled()
    guard.check()


def test_a_collection_run_with_two_workers_shows_its_children(page: Page, viewer: Viewer) -> None:
    guard = guard_page(page)
    page.goto(_tab_url(viewer, "collection:unotest/e2e/_collections/both.yaml"))
    listed = page.get_by_role("list", name="Scenarios of the collection")
    expect(listed.locator(".orphan")).to_have_count(1)
    expect(listed.locator(".orphan")).to_contain_text("gone")
    expect(listed.locator(".orphan")).to_contain_text("file not found")
    expect(listed.get_by_role("button", name="alpha")).to_be_visible()
    page.get_by_role("spinbutton", name="Workers").fill("2")
    page.get_by_role("button", name="Run", exact=True).click()
    status = page.get_by_role("status", name="Run status")
    expect(status).to_contain_text(re.compile(r"Run (completed|failed)"), timeout=WAIT_MS)
    table = page.get_by_role("table", name="Scenario runs")
    rows = table.locator("tbody tr")
    expect(rows).to_have_count(3, timeout=WAIT_MS)  # "gone" too, never run
    gone = rows.filter(has=page.get_by_role("cell", name="gone", exact=True))
    expect(gone).to_contain_text("skipped (scenario not found)")
    for name in ("alpha", "beta"):
        row = rows.filter(has=page.get_by_role("cell", name=name, exact=True))
        expect(row).to_contain_text("passed", timeout=WAIT_MS)
    # Each row names its worker (0-based), as the collection's scenario-started says.
    run_id = re.sub(r".*active=collection-run(?::|%3A)", "", page.url)
    started = [
        e
        for e in viewer.api("GET", f"/api/runs/{run_id}")["events"]
        if e["kind"] == "collection-run:scenario-started"
    ]
    assert sorted(e["worker"] for e in started) == [0, 1], started
    for event in started:
        row = rows.filter(has=page.get_by_role("cell", name=event["scenario"], exact=True))
        expect(row.locator("td").nth(1)).to_have_text(str(event["worker"]))
    expect(status).to_contain_text("2 passed, 1 skipped")  # as the CLI counts
    alpha = rows.filter(has=page.get_by_role("cell", name="alpha", exact=True))
    alpha.get_by_role("button").click()
    expect(page.get_by_role("status", name="Run status")).to_contain_text("Run completed")
    expect(page.get_by_role("region", name="Steps")).to_contain_text('goto("/")')
    guard.check()


def test_a_collection_run_shows_the_scenarios_it_never_ran_and_its_totals(
    page: Page, viewer: Viewer
) -> None:
    """Stopped before its second scenario (--bail, Ctrl-C): the tab listed one row and
    "1 started", as if the collection had held one scenario."""
    guard = guard_page(page)
    runs = viewer.root / "unotest" / ".runs"
    parent, child = "both-mxaaaaaa-000001", "alpha-mxaaaaab-000002"
    for run_id, kind, ref, events, extra in (
        (parent, "collection", "both", [
            {"kind": "collection-run:started", "runId": parent, "collection": "both",
             "scenarios": ["alpha", "beta"], "t": 1_000},
            {"kind": "collection-run:scenario-started", "scenarioRunId": child,
             "scenario": "alpha", "t": 1_001},
            {"kind": "collection-run:scenario-finished", "scenarioRunId": child,
             "scenario": "alpha", "outcome": "completed", "t": 1_500},
            {"kind": "collection-run:finished", "outcome": "aborted", "t": 1_600},
        ], {}),
        (child, "scenario", "alpha", [
            {"kind": "run:started", "runId": child, "scenario": "alpha", "t": 1_001},
            {"kind": "run:finished", "outcome": "completed", "t": 1_500},
        ], {"parentRunId": parent}),
    ):  # fmt: skip
        run_dir = runs / run_id
        run_dir.mkdir(parents=True)
        manifest = {"schemaVersion": 1, "kind": kind, "ref": ref, "adapter": "@unotest/web",
                    "startedAt": 1_000, **extra}  # fmt: skip
        (run_dir / "manifest.json").write_text(json.dumps(manifest))
        (run_dir / "steps.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    page.goto(_tab_url(viewer, f"collection-run:{parent}"))
    status = page.get_by_role("status", name="Run status")
    expect(status).to_contain_text("Run aborted")
    expect(status).to_contain_text("1 passed, 1 not run")
    rows = page.get_by_role("table", name="Scenario runs").locator("tbody tr")
    expect(rows).to_have_count(3)
    beta = rows.filter(has=page.get_by_role("cell", name="beta", exact=True))
    expect(beta).to_contain_text("not run")
    # Listed in the collection, left out of the run (no such scenario): said as the CLI does.
    gone = rows.filter(has=page.get_by_role("cell", name="gone", exact=True))
    expect(gone).to_contain_text("skipped (scenario not found)")
    expect(status).to_contain_text("3 scenarios (1 not found)")
    guard.check()


LONG = '  goto("/")\n  let i = 0\n  while (i < 600) {\n    wait(100)\n    i = i + 1\n  }\n'


def test_a_collection_run_is_stopped_from_its_tab_counts_as_the_cli_and_runs_again(
    tmp_path: Path, page: Page
) -> None:
    guard = guard_page(page)
    with site_viewer(
        tmp_path,
        scenarios={"quick": '  goto("/")\n' + HEADING, "long": LONG},
        collections={"mixed": ["quick", "gone", "long"]},
    ) as viewer:
        page.goto(_tab_url(viewer, "collection:unotest/e2e/_collections/mixed.yaml"))
        page.get_by_role("button", name="Run", exact=True).click()
        expect(page).to_have_url(re.compile(r"active=collection-run"), timeout=WAIT_MS)
        status = page.get_by_role("status", name="Run status")
        expect(status).to_contain_text("Running")
        expect(status).to_contain_text("3 scenarios (1 not found)", timeout=WAIT_MS)
        rows = page.get_by_role("table", name="Scenario runs").locator("tbody tr")
        gone = rows.filter(has=page.get_by_role("cell", name="gone", exact=True))
        expect(gone).to_contain_text("skipped (scenario not found)")
        long = rows.filter(has=page.get_by_role("cell", name="long", exact=True))
        expect(long).to_contain_text("running", timeout=WAIT_MS)
        expect(page.get_by_role("button", name="Run again")).to_have_count(0)
        page.get_by_role("button", name="Stop", exact=True).click()
        expect(status).to_contain_text("Run aborted", timeout=WAIT_MS)
        # The CLI's summary: `ABORTED  mixed: 1 passed, 1 aborted, 1 skipped`.
        expect(status).to_contain_text("1 passed, 1 aborted, 1 skipped", timeout=WAIT_MS)
        expect(gone).to_contain_text("skipped (scenario not found)")
        expect(page.get_by_role("button", name="Stop", exact=True)).to_have_count(0)
        first = page.url
        page.get_by_role("button", name="Run again").click()
        expect(page).not_to_have_url(first, timeout=WAIT_MS)
        expect(page).to_have_url(re.compile(r"active=collection-run"))
        expect(status).to_contain_text("Running")
        expect(page.get_by_role("button", name="Stop", exact=True)).to_be_enabled()
        assert len(viewer.api("GET", "/api/runs?ref=mixed")) == 2
        guard.check()


FAILS = '  goto("/")\n  expect_visible(role("heading", "Nope"))\n'
SLOW = '  goto("/")\n  let i = 0\n  while (i < 300) {\n    wait(100)\n    i = i + 1\n  }\n'
"""30 s: still going when the other worker's scenario has failed its last attempt."""


def _bailed_after_a_retry(viewer: Viewer, run_id: str) -> dict[str, Any]:
    """The finished collection run ``run_id`` of ``strict`` as 2 workers, ``--retries 1``
    and ``--bail`` run it: fails twice (a retry), and slow, in flight on the other worker,
    aborted by the bail; without them slow passes and fails runs once."""
    detail = viewer.finished(run_id, WAIT_MS)
    runs = sorted((c["ref"], c["status"]) for c in detail["children"])
    assert runs == [("fails", "failed"), ("fails", "failed"), ("slow", "aborted")], runs
    workers = {
        e["worker"] for e in detail["events"] if e["kind"] == "collection-run:scenario-started"
    }
    assert workers == {0, 1}, detail["events"]
    return detail


def test_run_again_repeats_the_collection_runs_workers_bail_and_retries(
    tmp_path: Path, page: Page
) -> None:
    guard = guard_page(page)
    with site_viewer(
        tmp_path,
        scenarios={"fails": FAILS, "slow": SLOW},
        collections={"strict": ["fails", "slow"]},
        timeout={"expect": 1000},
    ) as viewer:
        request = {
            "kind": "collection",
            "collection": "strict",
            "workers": 2,
            "bail": True,
            "retries": 1,
        }
        first = viewer.api("POST", "/api/runs", request)["runId"]
        assert _bailed_after_a_retry(viewer, first)["request"] == request
        page.goto(_tab_url(viewer, f"collection-run:{first}"))
        expect(page.get_by_role("status", name="Run status")).to_contain_text("Run failed")
        page.get_by_role("button", name="Run again").click()
        expect(page).not_to_have_url(re.compile(f"{first}$"), timeout=WAIT_MS)
        again = re.sub(r".*active=collection-run(?::|%3A)", "", page.url)
        assert again != first
        assert _bailed_after_a_retry(viewer, again)["request"] == request
        guard.check()


def test_a_finished_run_reopened_from_the_address_bar(page: Page, viewer: Viewer) -> None:
    guard = guard_page(page)
    run_id = viewer.api("POST", "/api/runs", {"kind": "scenario", "scenario": "beta"})["runId"]
    assert viewer.finished(run_id, WAIT_MS)["meta"]["outcome"] == "completed"
    page.goto(_tab_url(viewer, f"scenario-run:{run_id}"))
    expect(page.get_by_role("status", name="Run status")).to_have_text("Run completed")
    steps = page.get_by_role("region", name="Steps")
    expect(steps.locator(".step-ok")).to_have_count(3)
    expect(steps).to_contain_text('click("Press")')
    expect(page.get_by_role("log", name="Output")).to_contain_text("unotest e2e beta")
    expect(page.get_by_role("region", name="Failure")).to_have_count(0)
    # A step click shows its line in the source.
    steps.get_by_role("button", name='click("Press")').click()
    expect(page.get_by_role("textbox", name="Source")).to_be_visible()
    page.reload()
    expect(page.get_by_role("status", name="Run status")).to_have_text("Run completed")
    # From a finished run, the same scenario again: a new run in its own tab.
    page.get_by_role("button", name="Run again").click()
    expect(page).not_to_have_url(re.compile(f"active=scenario-run(:|%3A){run_id}"))
    expect(page.get_by_role("status", name="Run status")).to_have_text(
        "Run completed", timeout=WAIT_MS
    )
    assert len(viewer.api("GET", "/api/runs?ref=beta")) == 2
    guard.check()


def _live_run(root: Path, run_id: str) -> Path:
    """A run directory as a runner writes it, its runner this test process (alive): the
    viewer follows its steps.jsonl while the test appends to it."""
    run_dir = root / "unotest" / ".runs" / run_id
    run_dir.mkdir(parents=True)
    manifest = {
        "schemaVersion": 1,
        "kind": "scenario",
        "ref": "alpha",
        "adapter": "@unotest/web",
        "startedAt": 1_000,
        "pid": os.getpid(),
    }
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    started = {"kind": "run:started", "runId": run_id, "scenario": "alpha", "t": 1_000}
    (run_dir / "steps.jsonl").write_text(json.dumps(started) + "\n")
    return run_dir


def _append_steps(run_dir: Path, first: int, count: int) -> None:
    lines = []
    for n in range(first, first + count):
        text = f'log("step number {n}")'
        lines.append({"kind": "step:started", "line": 5, "col": 2, "text": text, "t": 1_001})
        lines.append({"kind": "step:ok", "durationMs": 1, "t": 1_002})
    with (run_dir / "steps.jsonl").open("a") as steps:
        steps.write("".join(json.dumps(e) + "\n" for e in lines))


def test_ten_thousand_live_steps_stay_windowed(page: Page, viewer: Viewer) -> None:
    guard = guard_page(page)
    run_dir = _live_run(viewer.root, "alpha-many")
    page.goto(_tab_url(viewer, "scenario-run:alpha-many"))
    status = page.get_by_role("status", name="Run status")
    expect(status).to_have_text("Running")
    steps = page.get_by_role("region", name="Steps")
    total, chunk = 10_000, 100
    title = steps.locator(".pane-title")
    for first in range(0, total, chunk):
        _append_steps(run_dir, first, chunk)
        time.sleep(0.03)  # pacing, as a runner writes: never a burst past the hub's queue
        if (first + chunk) % 1000 == 0:
            # A loaded machine's page can fall behind any fixed pacing: past the hub's
            # queue (1,000 messages, 500 steps) it is dropped and resyncs, which this
            # test is not about. It waits for the page to catch up now and then.
            expect(title).to_have_text(f"Steps {first + chunk}", timeout=WAIT_MS)
    expect(title).to_have_text("Steps 10000", timeout=WAIT_MS)
    # The list followed the run to its end.
    expect(steps).to_contain_text("step number 9999", timeout=WAIT_MS)
    # A person scrolling up stops the following: new steps do not pull the list down.
    steps.locator(".steps-scroll").hover()
    page.mouse.wheel(0, -3000)
    expect(steps).not_to_contain_text("step number 9999")
    _append_steps(run_dir, total, chunk)
    expect(title).to_have_text("Steps 10100", timeout=WAIT_MS)
    expect(steps).not_to_contain_text("step number 10099")
    # Back at the end, it follows again.
    steps.locator(".steps-scroll").evaluate("el => { el.scrollTop = el.scrollHeight }")
    expect(steps).to_contain_text("step number 10099", timeout=WAIT_MS)
    finished = {"kind": "run:finished", "outcome": "completed", "t": 2_000}
    with (run_dir / "steps.jsonl").open("a") as out:
        out.write(json.dumps(finished) + "\n")
    expect(status).to_have_text("Run completed", timeout=WAIT_MS)
    rendered = steps.locator(".step").count()
    assert 0 < rendered < 200, rendered
    # Scrolled to the top it shows the first steps, still windowed.
    steps.locator(".steps-scroll").evaluate("el => { el.scrollTop = 0 }")
    expect(steps).to_contain_text("step number 0")
    expect(steps).not_to_contain_text("step number 10099")
    assert steps.locator(".step").count() < 200
    guard.check()


def _append(run_dir: Path, *events: dict[str, Any]) -> None:
    with (run_dir / "steps.jsonl").open("a") as steps:
        steps.write("".join(json.dumps(e) + "\n" for e in events))


def test_a_step_paused_at_its_failure_shows_failed_then_running_when_retried(
    page: Page, viewer: Viewer
) -> None:
    """A runner that pauses on a failure with the step still open (its step:fail follows
    the resume): the step shows failed with the pause's error while paused, running
    again once retried."""
    guard = guard_page(page)
    run_dir = _live_run(viewer.root, "alpha-failing")
    text = 'click("Later")'
    failure = {"name": "LocatorError", "message": 'no visible element matches "Later"'}
    runtime = {
        "runId": "alpha-failing", "scenario": "alpha", "testFn": "test_it",
        "state": "paused-failure", "current": {"line": 6, "col": 2}, "vars": {},
        "callStack": [], "updatedAt": 1_003,
        "lastFailure": {"line": 6, "col": 2, "error": failure},
    }  # fmt: skip
    (run_dir / "runtime.json").write_text(json.dumps(runtime))
    _append(
        run_dir,
        {"kind": "step:started", "line": 6, "col": 2, "text": text, "t": 1_001},
        {"kind": "paused", "reason": "failure", "line": 6, "col": 2, "t": 1_002},
    )
    page.goto(_tab_url(viewer, "scenario-run:alpha-failing"))
    status = page.get_by_role("status", name="Run status")
    expect(status).to_contain_text("Paused at line 6:2 (failure)")
    row = page.get_by_role("region", name="Steps").locator(".step", has_text=text)
    expect(row).to_have_class(re.compile(r"\bstep-fail\b"))
    expect(row.get_by_label("fail", exact=True)).to_have_text("✗")
    expect(row).to_have_attribute("title", 'LocatorError: no visible element matches "Later"')
    _append(run_dir, {"kind": "resumed", "by": "continue", "cmd": "retry", "t": 1_004})
    expect(row).to_have_class(re.compile(r"\bstep-running\b"))
    expect(row.get_by_label("running", exact=True)).to_have_text("…")
    expect(row).to_have_attribute("title", text)
    _append(run_dir, {"kind": "run:finished", "outcome": "completed", "t": 2_000})
    expect(status).to_have_text("Run completed")
    guard.check()


class HeldReads:
    """The page's reads of one run (``GET /api/runs/<runId>``), let through until
    ``holding`` is set, then kept back until the test answers them."""

    def __init__(self, page: Page, run_id: str) -> None:
        self.page = page
        self.held: list[Any] = []
        self.holding = False
        page.route(re.compile(rf"/api/runs/{run_id}$"), self._route)

    def _route(self, route: Any) -> None:
        if self.holding:
            self.held.append(route)
        else:
            route.continue_()

    def wait(self, count: int) -> None:
        """Until the page has asked ``count`` times while held."""
        deadline = time.monotonic() + WAIT_MS / 1000
        while len(self.held) < count:
            assert time.monotonic() < deadline, "the page never read the run again"
            self.page.wait_for_timeout(50)


def test_a_resync_keeps_each_step_once_when_late_lines_come_inside_the_read(
    page: Page, viewer: Viewer
) -> None:
    """After a reconnect the page reads the run over REST while the new socket already
    delivers lines; the hub may deliver lines the read holds, even ones well before its
    end (a loaded machine: the bug seen under load, rows misaligned). Here the socket is
    a relay that replays, while the read is held back, two lines from the middle of the
    run as the server numbered them, then new lines come: each step is shown once."""
    guard = guard_page(page)
    run_dir = _live_run(viewer.root, "alpha-late")
    seen: list[str] = []  # the server's fs:run-step messages, as sent
    live: list[Any] = []

    def relay(ws: Any) -> None:
        server = ws.connect_to_server()

        def forward(message: str | bytes) -> None:
            if isinstance(message, str) and '"fs:run-step"' in message:
                seen.append(message)
            if isinstance(message, str) and '"fs:run-started"' in message:
                announced.append(message)
            ws.send(message)

        server.on_message(forward)
        live.append(ws)

    announced: list[str] = []
    page.route_web_socket(re.compile(r"/ws$"), relay)
    reads = HeldReads(page, "alpha-late")
    page.goto(_tab_url(viewer, "scenario-run:alpha-late"))
    expect(page.get_by_role("status", name="Run status")).to_have_text("Running")
    # The lines must come over the socket: the server follows the run once its watcher
    # has seen it (announced to this page, or before the page connected). On a loaded
    # machine lines appended before that come only through the page's REST read.
    for _ in range(100):
        if announced:
            break
        page.wait_for_timeout(50)
    steps = page.get_by_role("region", name="Steps")
    title = steps.locator(".pane-title")
    _append_steps(run_dir, 0, 20)
    expect(title).to_have_text("Steps 20", timeout=WAIT_MS)
    late = [m for m in seen if "step number 7" in m or '"lineIndex": 16' in m]
    assert len(late) == 2, seen  # step 7's step:started and its step:ok (lines 15, 16)

    reads.holding = True
    live[-1].close()  # the page reconnects and reads the run again
    reads.wait(1)
    for message in late:
        live[-1].send(message)
    _append_steps(run_dir, 20, 5)
    page.wait_for_timeout(500)  # the new lines reach the page while its read is held
    reads.holding = False
    reads.held[0].continue_()
    expect(title).to_have_text("Steps 25", timeout=WAIT_MS)
    expect(steps.locator(".pane-title")).to_have_text("Steps 25")
    steps.locator(".steps-scroll").evaluate("el => { el.scrollTop = 0 }")
    expect(steps.get_by_text("step number 7", exact=False)).to_have_count(1)
    _append_steps(run_dir, 25, 1)  # and it follows on, one row per step
    expect(title).to_have_text("Steps 26", timeout=WAIT_MS)
    guard.check()


def test_two_reconnects_in_a_row_apply_the_newer_read_whichever_answers_last(
    page: Page, viewer: Viewer
) -> None:
    """Two reconnects start two reads of the run; the first answers last, with fewer
    lines than the second: the page keeps the newer one and the steps it had since."""
    guard = guard_page(page)
    run_dir = _live_run(viewer.root, "alpha-twice")
    live: list[Any] = []

    def relay(ws: Any) -> None:
        ws.connect_to_server()
        live.append(ws)

    page.route_web_socket(re.compile(r"/ws$"), relay)
    reads = HeldReads(page, "alpha-twice")
    page.goto(_tab_url(viewer, "scenario-run:alpha-twice"))
    expect(page.get_by_role("status", name="Run status")).to_have_text("Running")
    title = page.get_by_role("region", name="Steps").locator(".pane-title")
    _append_steps(run_dir, 0, 3)
    expect(title).to_have_text("Steps 3", timeout=WAIT_MS)
    reads.holding = True
    live[-1].close()
    reads.wait(1)  # the first read, of 3 steps, is held
    # The first read is answered now (the file as it is) but reaches the page later.
    first = reads.held[0].fetch()
    _append_steps(run_dir, 3, 2)
    live[-1].close()
    reads.wait(2)  # the second read, of 5 steps
    reads.holding = False
    reads.held[1].continue_()
    expect(title).to_have_text("Steps 5", timeout=WAIT_MS)
    reads.held[0].fulfill(response=first)
    _append_steps(run_dir, 5, 1)
    expect(title).to_have_text("Steps 6", timeout=WAIT_MS)
    page.wait_for_timeout(300)
    expect(title).to_have_text("Steps 6")
    guard.check()


def test_lines_written_before_the_socket_first_opens_are_shown_once_it_does(
    page: Page, viewer: Viewer
) -> None:
    """The run tab reads the run over REST as it opens; the socket may open only later
    (refused here until the lines are written): lines appended in between came over no
    socket, and the tab reads the run again when the socket first opens."""
    guard = guard_page(page)
    run_dir = _live_run(viewer.root, "alpha-early")
    refusing = {"on": True}

    def relay(ws: Any) -> None:
        if refusing["on"]:
            ws.close()
            return
        ws.connect_to_server()

    page.route_web_socket(re.compile(r"/ws$"), relay)
    page.goto(_tab_url(viewer, "scenario-run:alpha-early"))
    expect(page.get_by_role("status", name="Run status")).to_have_text("Running")
    title = page.get_by_role("region", name="Steps").locator(".pane-title")
    expect(title).to_have_text("Steps 0")
    _append_steps(run_dir, 0, 4)
    refusing["on"] = False
    expect(title).to_have_text("Steps 4", timeout=WAIT_MS)
    _append_steps(run_dir, 4, 1)
    expect(title).to_have_text("Steps 5", timeout=WAIT_MS)
    # Never connected before: no "Reconnecting" banner came or stays.
    expect(page.get_by_role("alert").filter(has_text="Reconnecting")).to_have_count(0)
    guard.check()


def test_the_default_page_project_scenario_passes(tmp_path: Path) -> None:
    """``page_project``'s default scenario (the heading by CSS) completes on the served
    site: the fixture other page tests start from is a passing project."""
    with site_viewer(tmp_path) as viewer:
        run_id = viewer.api("POST", "/api/runs", {"kind": "scenario", "scenario": "smoke"})["runId"]
        detail = viewer.finished(run_id, WAIT_MS)
        assert detail["meta"]["outcome"] == "completed", detail["meta"]
        assert [e["kind"] for e in detail["events"]].count("step:ok") == 2
