"""The viewer's Steps list shows a ``step(title, fn)`` statement by its title (its code
kept in the row's tooltip) and a soft assertion's failure as ``soft fail``, while the
run goes on: real Chromium on a real ``unotest view``, the run started through its API
as the page's Run button starts one."""

from __future__ import annotations

from playwright.sync_api import Page, expect
from viewer_page import Viewer, browser_type_launch_args, guard_page, viewer_fixture

__all__ = ["browser_type_launch_args"]  # the fixture, imported for pytest to find here

WAIT_MS = 90_000
"""How long to wait for a run to start a browser and end on a loaded machine (a bound on
waiting, never an assertion about time)."""

TITLED = """\
// id-titled
// Steps with titles and a soft check
// #0891b2
function open_home() {
  goto("/")
  step("Check the heading", check_heading)
}
function check_heading() {
  expect_text(css("h1"), "Hello", {soft: true, timeout: 300})
}
function press(label) {
  click(label)
}
function test_titled() {
  step("Open the home page", open_home)
  step(`Press ${"the button"}`, press, {args: ["Press"]})
  expect_text(css("#out"), "clicked")
}
"""

viewer = viewer_fixture(scenarios={"titled": TITLED})


def test_steps_show_their_titles_and_a_soft_failure(page: Page, viewer: Viewer) -> None:
    guard = guard_page(page)
    run_id = viewer.api("POST", "/api/runs", {"kind": "scenario", "scenario": "titled"})["runId"]
    # The soft failure did not stop the run: the click after it ran, and the run failed
    # at its end, for the soft failure.
    assert viewer.finished(run_id, WAIT_MS)["meta"]["outcome"] == "failed"
    key = f"scenario-run:{run_id}"
    page.goto(f"{viewer.url}#open={key}&active={key}")
    expect(page.get_by_role("status", name="Run status")).to_have_text("Run failed")
    steps = page.get_by_role("region", name="Steps")
    # Titled statements show their title, not their code; the code is the tooltip.
    opening = page.get_by_role("button", name="Open the home page", exact=True)
    expect(steps.get_by_role("button", name="Open the home page", exact=True)).to_be_visible()
    row = steps.locator(".step-titled", has=opening)
    expect(row).to_have_attribute("title", 'step("Open the home page", open_home)')
    expect(steps.get_by_role("button", name="Check the heading", exact=True)).to_be_visible()
    # A title computed as the step ran (a template) is shown too.
    expect(steps.get_by_role("button", name="Press the button", exact=True)).to_be_visible()
    expect(steps.locator(".step-titled")).to_have_count(3)
    # The soft failure: a failed row, said to be soft; the steps after it passed.
    soft = steps.locator(".step-fail")
    expect(soft).to_have_count(1)
    expect(soft).to_contain_text('expect_text(css("h1"), "Hello"')
    expect(soft.get_by_label("soft fail")).to_be_visible()
    expect(soft.locator(".step-status")).to_have_text("soft fail")
    done = steps.locator(".step-ok", has_text='expect_text(css("#out"), "clicked")')
    expect(done).to_have_count(1)
    failure = page.get_by_role("region", name="Failure")
    expect(failure).to_contain_text("1 soft assertion failed", timeout=WAIT_MS)
    guard.check()
