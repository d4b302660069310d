"""The tree by its scenarios' latest runs (issue 32, deliverable 5 and defect 10), in real
Chromium on a real ``unotest view`` whose runs are real.

- A scenario's colour is a strip with a title, not a round dot that reads as a status
  before any run; the status is the run badge's words.
- The Status combobox keeps All, Failed, Passed or Not run scenarios, and works with
  the filter box's ``@tag``s.
- Run failed is off while no latest run failed; then it runs again exactly the
  scenarios whose latest run failed (not the passed one, not the one never run), and
  says what it started.

Every element is found by role and accessible name; any page or console error fails.
"""

from __future__ import annotations

import time
from collections import Counter

from playwright.sync_api import Page, expect
from viewer_page import (
    PageGuard,
    Viewer,
    browser_type_launch_args,
    expect_tree_shows,
    guard_fixture,
    scenario_source,
    scenarios_tree,
    tree_item,
    viewer_fixture,
)

__all__ = ["browser_type_launch_args"]  # the fixture, imported for pytest to find here

WAIT_MS = 60_000
"""How long to wait for runs to end on a loaded machine (a bound, never an assertion)."""
PASS = '  goto("/")\n  expect_text(css("h1"), "Welcome")\n'
FAIL = '  goto("/")\n  expect_text(css("h1"), "Nope")\n'
SCENARIOS = {  # name -> (title, body)
    "shop/good": ("Buys one @smoke", PASS),
    "shop/bad": ("Pays twice @smoke", FAIL),
    "auth/broken": ("Signs in", FAIL),
    "never": ("Not run yet @smoke", PASS),
}
RAN = ("shop/good", "shop/bad", "auth/broken")

viewer = viewer_fixture(
    scenarios={
        name: scenario_source(name.replace("/", "-"), body, title=title)
        for name, (title, body) in SCENARIOS.items()
    },
    timeout={"expect": 1000},
)
guard = guard_fixture(WAIT_MS)


def _runs_by_scenario(viewer: Viewer) -> Counter[str]:
    """How many runs each scenario has, once none is running any more."""
    deadline = time.monotonic() + WAIT_MS / 1000
    while True:
        runs = viewer.api("GET", "/api/runs")
        if all(run["status"] != "running" for run in runs):
            return Counter(run["ref"] for run in runs if run["kind"] == "scenario")
        assert time.monotonic() < deadline, "runs did not end"
        time.sleep(0.2)


def test_status_filter_run_failed_and_a_colour_that_is_no_status(
    page: Page, viewer: Viewer, guard: PageGuard
) -> None:
    page.goto(viewer.url)
    tree = scenarios_tree(page)
    good = tree_item(page, "shop/good")
    expect(good).to_be_visible()
    # Before any run: a strip in the scenario's colour, titled so, and no status at all.
    swatch = good.locator(".color-swatch")
    expect(swatch).to_have_attribute("title", "scenario colour #4f46e5")
    width, height, radius = swatch.evaluate(
        "el => [el.offsetWidth, el.offsetHeight, getComputedStyle(el).borderRadius]"
    )
    assert height > 2 * width and not radius.endswith("%"), (width, height, radius)
    expect(tree.locator(".run-badge")).to_have_count(0)
    run_failed = page.get_by_role("button", name="Run failed", exact=True)
    expect(run_failed).to_be_disabled()  # no latest run failed: nothing to run

    for name in RAN:
        viewer.api("POST", "/api/runs", {"kind": "scenario", "scenario": name})
    assert _runs_by_scenario(viewer) == Counter(RAN)
    expect(good.locator(".run-badge")).to_have_text("passed")
    bad = tree_item(page, "shop/bad")
    expect(bad.locator(".run-badge")).to_have_text("failed")
    expect(tree.get_by_role("treeitem", name="auth/broken").locator(".run-badge")).to_have_text(
        "failed"
    )

    status = page.get_by_role("combobox", name="Status")
    expect(status).to_have_value("all")
    status.select_option(label="Failed")
    expect_tree_shows(page, SCENARIOS, {"shop/bad", "auth/broken"})
    status.select_option(label="Passed")
    expect_tree_shows(page, SCENARIOS, {"shop/good"})
    status.select_option(label="Not run")
    expect_tree_shows(page, SCENARIOS, {"never"})
    # With the filter box's @tag: failed and tagged @smoke.
    status.select_option(label="Failed")
    page.get_by_role("searchbox", name="Filter").fill("@smoke")
    expect_tree_shows(page, SCENARIOS, {"shop/bad"})
    page.get_by_role("searchbox", name="Filter").fill("")
    status.select_option(label="All")
    expect_tree_shows(page, SCENARIOS, set(SCENARIOS))

    expect(run_failed).to_be_enabled()
    expect(run_failed).to_have_attribute("title", "Run again: auth/broken, shop/bad")
    run_failed.click()
    progress = page.get_by_role("status", name="Run failed progress")
    expect(progress).to_have_text("Started 2 of 2 failed scenarios.")
    assert _runs_by_scenario(viewer) == Counter(RAN) + Counter(["shop/bad", "auth/broken"])
    expect(bad.locator(".run-badge")).to_have_text("failed")
    expect(run_failed).to_be_enabled()  # they failed again: it may run them again
