"""How a suite is organised, in the viewer (issue 31), in real Chromium on a real
``unotest view``: each case of a file's ``const CASES`` is a leaf of the tree of its
own (``shop/pay[visa]``), a click on one opens the file's tab with that case chosen,
the tab's Case picker switches it, and Run starts that case and no other; a folder's
``_hooks.js`` is listed with the helpers (``shop/_hooks``), opens in a tab, takes a
breakpoint in its gutter, and a debug run of a scenario below it pauses there.

Every element is found by role and accessible name; any page or console error fails
the test.
"""

from __future__ import annotations

from playwright.sync_api import Page, expect
from viewer_page import (
    PageGuard,
    Viewer,
    browser_type_launch_args,
    guard_fixture,
    tree_item,
    viewer_fixture,
)

__all__ = ["browser_type_launch_args"]  # the fixture, imported for pytest to find here

WAIT_MS = 20_000
PAY = """\
// id-shop-pay
// Pays with a card @smoke
// #4f46e5
const CASES = [{name: "visa", total: 1}, {name: "amex", total: 2}]
function test_pay(card) {
  log("paid " + card.name)
  expect_equal(card.total, 2)
}
"""


HOOKS = """\
// The hooks of the shop's scenarios.
function before_each() {
  log("opening the shop")
  goto("/")
}
"""

viewer = viewer_fixture(scenarios={"shop/pay": PAY}, files={"unotest/e2e/shop/_hooks.js": HOOKS})
guard = guard_fixture(WAIT_MS)


def test_each_case_is_a_leaf_and_run_starts_the_chosen_one(
    page: Page, viewer: Viewer, guard: PageGuard
) -> None:
    names = [s["name"] for s in viewer.api("GET", "/api/scenarios")]
    assert sorted(names) == ["shop/pay[amex]", "shop/pay[visa]"]
    page.goto(viewer.url)
    expect(tree_item(page, "shop/pay[visa]")).to_be_visible()
    expect(tree_item(page, "shop/pay[amex]")).to_be_visible()

    tree_item(page, "shop/pay[amex]").click()
    view = page.get_by_role("region", name="Scenario shop/pay")
    case = view.get_by_role("combobox", name="Case")
    expect(case).to_have_value("shop/pay[amex]")
    expect(view.get_by_role("heading", name="Pays with a card @smoke [amex]")).to_be_visible()
    expect(tree_item(page, "shop/pay[amex]")).to_have_attribute("aria-selected", "true")
    expect(tree_item(page, "shop/pay[visa]")).to_have_attribute("aria-selected", "false")

    # The other leaf chooses the other case in the same tab.
    tree_item(page, "shop/pay[visa]").click()
    expect(case).to_have_value("shop/pay[visa]")
    expect(page.get_by_role("tab", name="shop/pay", exact=True)).to_have_count(1)

    # The picker chooses too, and Run starts the chosen case: amex passes.
    case.select_option("shop/pay[amex]")
    view.get_by_role("button", name="Run", exact=True).click()
    expect(page.get_by_role("status", name="Run status")).to_contain_text("Run completed")
    runs = viewer.api("GET", "/api/runs")
    refs = [run.get("ref") for run in runs if run.get("kind") == "scenario"]
    assert refs == ["shop/pay[amex]"], runs


def test_a_folder_s_hooks_open_take_a_breakpoint_and_pause_a_debug_run(
    page: Page, viewer: Viewer, guard: PageGuard
) -> None:
    page.goto(viewer.url)
    helpers = page.get_by_role("region", name="Helpers")
    # A filter that hides every helper says so, not that there are none.
    page.get_by_role("searchbox", name="Filter").fill("nothing-is-named-so")
    expect(helpers).to_contain_text("No helper matches.")
    page.get_by_role("searchbox", name="Filter").fill("")
    helpers.get_by_role("button", name="shop/_hooks", exact=True).click()
    expect(page.get_by_role("tab", name="helper shop/_hooks", exact=True)).to_be_visible()
    marker = page.get_by_role("button", name="Breakpoint at line 4")
    marker.click()
    expect(marker).to_have_attribute("aria-pressed", "true")
    saved = viewer.api("GET", "/api/breakpoints")
    assert saved["scenarios"] == {"shop/_hooks": [{"line": 4, "col": 2}]}, saved

    tree_item(page, "shop/pay[amex]").click()
    page.get_by_role("button", name="Debug", exact=True).click()
    status = page.get_by_role("status", name="Run status")
    expect(status).to_contain_text("Paused at line 4:2 in unotest/e2e/shop/_hooks.js")
    expect(status).to_contain_text("breakpoint")
    expect(page.locator(".code-row.current")).to_contain_text('goto("/")')
    page.get_by_role("button", name="Continue").click()
    expect(status).to_contain_text("Run completed")
