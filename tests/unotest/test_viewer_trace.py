"""Playwright's trace viewer served by the viewer (issue 32, deliverable 4): one real
``unotest view`` on a project with ``trace: on`` and one real run of it, shared by the
module.

- As a client (httpx, and ``http.client`` for a path no client would normalise): the
  trace viewer's ``index.html`` and the run's ``trace.zip`` are served with the token
  and refused without it; a path out of the trace viewer's folder is refused; the
  trace viewer's path has its own policy (its inline script by hash, nothing from
  another origin) and keeps the guards every path has.
- In real Chromium: the run's tab links to its trace; ``Open trace`` opens the trace
  viewer in a tab of its own, whose service worker fetches the trace with the page's
  cookie, and the trace's actions are listed (the ``goto`` and the click).
"""

from __future__ import annotations

import http.client
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, expect
from viewer_page import Viewer, browser_type_launch_args, guard_page, viewer_fixture

__all__ = ["browser_type_launch_args"]  # the fixture, imported for pytest to find here

WAIT_MS = 60_000
"""How long to wait for a run to end on a loaded machine (a bound, never an assertion)."""
SCENARIO = '  goto("/")\n  click("Press")\n  expect_text(css("#out"), "clicked")\n'

viewer = viewer_fixture(scope="module", scenarios={"traced": SCENARIO}, trace="on")


@pytest.fixture(scope="module")
def run_id(viewer: Viewer) -> str:
    """The one run of the module: passed, with ``trace.zip`` in its directory."""
    started = viewer.api("POST", "/api/runs", {"kind": "scenario", "scenario": "traced"})
    detail = viewer.finished(started["runId"], WAIT_MS)
    assert detail["meta"]["status"] == "passed", detail["meta"]
    assert "trace.zip" in detail["files"]
    return str(started["runId"])


def _raw_status(viewer: Viewer, path: str) -> int:
    """``GET path`` sent byte for byte (httpx would remove its dot segments), with the token."""
    parts = urlsplit(viewer.base)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
    try:
        connection.putrequest("GET", path, skip_host=True)
        connection.putheader("Host", parts.netloc)
        connection.putheader("Authorization", f"Bearer {viewer.token}")
        connection.endheaders()
        return connection.getresponse().status
    finally:
        connection.close()


def test_the_trace_viewer_and_the_trace_are_served_with_the_token_only(
    viewer: Viewer, run_id: str
) -> None:
    bearer = {"Authorization": f"Bearer {viewer.token}"}
    index = viewer.client.get(f"{viewer.base}/trace/index.html", headers=bearer)
    assert index.status_code == 200
    assert "<title>Playwright Trace Viewer</title>" in index.text
    policy = dict(
        directive.strip().split(" ", 1)
        for directive in index.headers["content-security-policy"].split(";")
    )
    assert policy["frame-ancestors"] == "'none'" and policy["connect-src"] == "'self'"
    # Its one inline script by its hash, not any inline script.
    assert policy["script-src"].startswith("'self' 'sha256-"), policy["script-src"]
    assert index.headers["x-frame-options"] == "DENY"
    assert index.headers["referrer-policy"] == "no-referrer"
    worker = viewer.client.get(f"{viewer.base}/trace/sw.bundle.js", headers=bearer)
    assert worker.status_code == 200
    assert worker.headers["content-type"].startswith("text/javascript")
    assert "default-src 'self'" in worker.headers["content-security-policy"]
    # The page's own policy is untouched by the trace viewer's.
    page = viewer.client.get(f"{viewer.base}/", headers=bearer)
    assert page.headers["content-security-policy"] == "frame-ancestors 'none'"

    trace = viewer.client.get(f"{viewer.base}/api/runs/{run_id}/files/trace.zip", headers=bearer)
    assert trace.status_code == 200 and trace.content[:2] == b"PK"

    for path in ("/trace/index.html", "/trace/sw.bundle.js", f"/api/runs/{run_id}/files/trace.zip"):
        assert viewer.status("GET", path) == 401, path

    # Out of the trace viewer's folder (to the driver's package.json), however spelled.
    for escape in (
        "/trace/../../../package.json",
        "/trace/..%2f..%2f..%2fpackage.json",
        "/trace/assets/%2e%2e/%2e%2e/%2e%2e/%2e%2e/package.json",
        "/trace/.hidden",
    ):
        assert _raw_status(viewer, escape) == 404, escape
    assert _raw_status(viewer, "/trace/index.html") == 200  # the same request, inside


def test_open_trace_shows_the_run_s_actions_in_playwright_s_trace_viewer(
    page: Page, viewer: Viewer, run_id: str
) -> None:
    guard = guard_page(page)
    key = f"scenario-run:{run_id}"
    page.goto(f"{viewer.url}#open={key}&active={key}")
    run = page.get_by_role("region", name=f"Run {run_id}")
    link = run.get_by_role("link", name="Open trace")
    expect(link).to_be_visible(timeout=WAIT_MS)
    with page.context.expect_page() as opened:
        link.click()
    trace = opened.value
    trace_errors = guard_page(trace)
    trace.wait_for_load_state()
    assert trace.url.startswith(f"{viewer.base}/trace/index.html?trace=")
    actions = trace.get_by_role("tabpanel", name="Actions").get_by_role("tree")
    expect(actions).to_contain_text("Navigate", timeout=WAIT_MS)
    expect(actions).to_contain_text("Click")
    trace.close()
    trace_errors.check()
    guard.check()
