"""The Scenarios tree at scale (issue 34): virtualised, in real Chromium on a real
``unotest view`` of 286 scenarios.

Only a window of rows is in the DOM; each row keeps the tree's roles and its level,
position and set size; the keyboard walks past the window (rows come into view as they
are reached); a folder of more than 50 scenarios starts collapsed and opens; the filter
finds a scenario far down; a scenario opened from elsewhere (a collection's entry) is
revealed in the tree, its folder opened. Found by role and name; any page or console
error fails the test.
"""

from __future__ import annotations

from playwright.sync_api import Page, expect
from viewer_page import (
    PageGuard,
    Viewer,
    browser_type_launch_args,
    guard_fixture,
    scenario_source,
    scenarios_tree,
    tree_item,
    viewer_fixture,
)

__all__ = ["browser_type_launch_args"]  # the fixture, imported for pytest to find here

WAIT_MS = 20_000
FOLDERS = [f"f{n}" for n in range(5)]
PER_FOLDER = 45
BIG = 60
"""More than 50: the folder starts collapsed."""


def names() -> list[str]:
    found = [f"big/b{n:02d}" for n in range(BIG)]
    found += [f"{folder}/s{n:02d}" for folder in FOLDERS for n in range(PER_FOLDER)]
    return [*found, "zz/far"]


SCENARIOS = {name: scenario_source(name.replace("/", "-"), "  log(1)\n") for name in names()}
SCENARIOS["zz/far"] = scenario_source("far", "  log(1)\n", title="Far away @deep")
viewer = viewer_fixture(
    scope="module", site=False, scenarios=SCENARIOS, collections={"reach": ["zz/far", "big/b59"]}
)
guard = guard_fixture(WAIT_MS)


def test_only_a_window_of_rows_and_the_keyboard_walks_past_it(
    page: Page, viewer: Viewer, guard: PageGuard
) -> None:
    page.goto(viewer.url)
    expect(tree_item(page, "f0/s00")).to_be_visible()
    in_dom = scenarios_tree(page).get_by_role("treeitem").count()
    assert 0 < in_dom < 100  # of 233 rows shown (big collapsed)
    expect(tree_item(page, "zz/far")).to_have_count(0)
    expect(tree_item(page, "f0")).to_have_attribute("aria-level", "1")
    expect(tree_item(page, "f0")).to_have_attribute("aria-posinset", "2")
    expect(tree_item(page, "f0")).to_have_attribute("aria-setsize", "7")
    expect(tree_item(page, "f0/s00")).to_have_attribute("aria-level", "2")
    expect(tree_item(page, "f0/s00")).to_have_attribute("aria-setsize", str(PER_FOLDER))
    big = tree_item(page, "big")
    expect(big).to_have_attribute("aria-expanded", "false")
    expect(tree_item(page, "big/b00")).to_have_count(0)

    big.focus()
    page.keyboard.press("End")
    expect(tree_item(page, "zz/far")).to_be_focused()
    page.keyboard.press("Home")
    expect(big).to_be_focused()
    for _ in range(100):  # big, f0 and its 45, f1 and its 45, f2, f2/s00 … f2/s06
        page.keyboard.press("ArrowDown")
    expect(tree_item(page, "f2/s06")).to_be_focused()
    expect(tree_item(page, "f2/s06")).to_be_in_viewport()
    expect(big).to_have_count(0)  # scrolled out of the window
    page.keyboard.press("ArrowLeft")
    f2 = tree_item(page, "f2")
    expect(f2).to_be_focused()
    page.keyboard.press("ArrowLeft")
    expect(f2).to_have_attribute("aria-expanded", "false")
    expect(tree_item(page, "f2/s06")).to_have_count(0)
    page.keyboard.press("ArrowRight")
    expect(f2).to_have_attribute("aria-expanded", "true")

    page.keyboard.press("Home")
    expect(big).to_be_focused()
    page.keyboard.press("Enter")  # the collapsed big folder opens
    expect(big).to_have_attribute("aria-expanded", "true")
    expect(tree_item(page, "big/b00")).to_be_visible()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    expect(page.get_by_role("tab", name="big/b00")).to_have_attribute("aria-selected", "true")


def test_the_filter_finds_a_scenario_far_down_and_an_opened_one_is_revealed(
    page: Page, viewer: Viewer, guard: PageGuard
) -> None:
    page.goto(viewer.url)
    expect(tree_item(page, "f0/s00")).to_be_visible()
    search = page.get_by_role("searchbox", name="Filter")
    for typed in ("far", "@deep"):
        search.fill(typed)
        expect(tree_item(page, "zz/far")).to_be_visible()
        expect(tree_item(page, "zz/far")).to_have_attribute("aria-posinset", "1")
        expect(tree_item(page, "f0/s00")).to_have_count(0)
    search.fill("b59")  # inside the collapsed folder: the filter opens it
    expect(tree_item(page, "big/b59")).to_be_visible()
    search.fill("")
    expect(tree_item(page, "big/b59")).to_have_count(0)
    expect(tree_item(page, "zz/far")).to_have_count(0)

    page.get_by_role("button", name="reach: zz/far").click()
    expect(page.get_by_role("tab", name="zz/far")).to_have_attribute("aria-selected", "true")
    expect(tree_item(page, "zz/far")).to_have_attribute("aria-selected", "true")
    expect(tree_item(page, "zz/far")).to_be_in_viewport()
    page.get_by_role("button", name="reach: big/b59").click()  # its folder is collapsed
    expect(tree_item(page, "big")).to_have_attribute("aria-expanded", "true")
    expect(tree_item(page, "big/b59")).to_have_attribute("aria-selected", "true")
    expect(tree_item(page, "big/b59")).to_be_in_viewport()
