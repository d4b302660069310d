"""A run's Network and Console messages regions in real Chromium on a real ``unotest
view``: a passing scenario, paused at a breakpoint, already lists its page's requests
(a failed one marked in words) and console messages (an error marked); after it
completes each region filters its entries; reloaded, the finished run shows them again."""

from __future__ import annotations

import json
import re

from playwright.sync_api import Page, expect
from viewer_page import Viewer, browser_type_launch_args, guard_page, viewer_fixture

__all__ = ["browser_type_launch_args"]  # the fixture, imported for pytest to find here

WAIT_MS = 60_000
"""How long to wait for a run to start a browser on a loaded machine (a bound on waiting,
never an assertion about time)."""

SITE = """<!doctype html><html><head><title>Log site</title><link rel="icon" href="data:,">
</head><body><h1>Welcome</h1><p id="out">waiting</p><script>
  console.log("hello from the page");
  fetch("/nothing.json").then((r) => r.text()).then(() => console.error("bad thing happened"));
  fetch("/data.json").then((r) => r.json()).then(() => {
    document.getElementById("out").textContent = "loaded";
  });
</script></body></html>
"""
BODY = '  goto("/")\n  expect_text(css("#out"), "loaded")\n  log("after")\n'
# Line 5 goto, 6 expect_text, 7 log (the header is lines 1-3).

viewer = viewer_fixture(
    site={"index.html": SITE, "data.json": '{"ok": true}'},
    scenarios={"pagelog": BODY},
    files={
        "unotest/.debugger.json": json.dumps(
            {"version": 1, "scenarios": {"pagelog": [{"line": 7, "col": 2}]}}
        )
    },
)


def test_a_runs_requests_and_console_messages_live_filtered_and_after(
    page: Page, viewer: Viewer
) -> None:
    guard = guard_page(page)
    page.goto(viewer.url)
    page.get_by_role("treeitem", name="pagelog").click()
    page.get_by_role("button", name="Debug").click()
    status = page.get_by_role("status", name="Run status")
    expect(status).to_contain_text("Paused at line 7:2", timeout=WAIT_MS)

    # While the run is paused, its page's requests and messages are there already.
    network = page.get_by_role("region", name="Network")
    requests = network.get_by_role("table", name="Requests")
    missing = requests.get_by_role("row").filter(has_text="/nothing.json")
    expect(missing).to_contain_text("✗ failed 404", timeout=WAIT_MS)
    data = requests.get_by_role("row").filter(has_text="/data.json")
    expect(data).to_contain_text("200")
    expect(data).not_to_contain_text("failed")
    messages = page.get_by_role("region", name="Console messages")
    expect(messages).to_contain_text("hello from the page", timeout=WAIT_MS)
    error = messages.get_by_role("listitem").filter(has_text="bad thing happened")
    expect(error).to_contain_text("✗ error")

    page.get_by_role("button", name="Continue").click()
    expect(status).to_contain_text("Run completed", timeout=WAIT_MS)

    network.get_by_role("searchbox", name="Filter requests").fill("NOTHING")
    expect(requests.locator("tbody tr")).to_have_count(1)
    expect(requests.locator("tbody tr")).to_contain_text("/nothing.json")
    expect(network).to_contain_text("1 of 3 requests match")  # the page, the two fetches
    messages.get_by_role("searchbox", name="Filter console messages").fill("hello")
    expect(messages.get_by_role("listitem")).to_have_count(1)
    expect(messages.get_by_role("listitem")).to_contain_text("hello from the page")

    # The finished run, opened again (its tab comes back from the address bar).
    page.reload()
    expect(page.get_by_role("status", name="Run status")).to_contain_text(
        "Run completed", timeout=WAIT_MS
    )
    reopened = page.get_by_role("region", name="Network").get_by_role("table", name="Requests")
    expect(reopened.locator("tbody tr")).to_have_count(3, timeout=WAIT_MS)
    expect(page.get_by_role("region", name="Console messages")).to_contain_text("bad thing")
    guard.check()

    # The route behind the regions: from an offset, and refused for a bad one.
    run_id = re.search(r"active=scenario-run(?::|%3A)([A-Za-z0-9_-]+)", page.url)
    assert run_id, page.url
    path = f"/api/runs/{run_id.group(1)}/page-log"
    whole = viewer.api("GET", path)
    assert len(whole["network"]["entries"]) == 3 and whole["network"]["more"] is False
    after = whole["console"]["next"]
    assert viewer.api("GET", f"{path}?console={after}")["console"]["entries"] == []
    assert "byte offset" in viewer.api("GET", f"{path}?network=2x")["error"]
