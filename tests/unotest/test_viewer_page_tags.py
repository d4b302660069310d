"""The viewer's tree filter understands ``@tags`` (issue 31, item 7), in real Chromium on
a real ``unotest view``.

A tag is a word of a scenario's title that starts with ``@``. Typing ``@smoke`` keeps
the scenarios tagged so (a tag that starts so: ``@smo`` as you type, case aside, as
``--grep @smoke`` matches ``@smoke-slow`` too); several ``@words`` must all be tags; the
rest of the filter is matched as text, as before. The tree keeps its roles and names.
Every element is found by role and accessible name, and any page or console error
fails the test.
"""

from __future__ import annotations

from playwright.sync_api import Page, expect
from viewer_page import (
    PageGuard,
    Viewer,
    browser_type_launch_args,
    expect_tree_shows,
    guard_fixture,
    scenario_source,
    tree_item,
    viewer_fixture,
)

__all__ = ["browser_type_launch_args"]  # the fixture, imported for pytest to find here

WAIT_MS = 20_000
TITLES = {
    "shop/cart": "Adds two items @smoke @cart",
    "shop/slow": "The whole catalogue @smoke-slow",
    "auth/login": "A user signs in @Smoke",
    "auth/logout": "A user signs out",
    "reports/daily": "The daily report @nightly",
    "mail": "Sends to a@b.com",
}

viewer = viewer_fixture(
    scenarios={
        name: scenario_source(name.replace("/", "-"), '  goto("/")\n', title=title)
        for name, title in TITLES.items()
    }
)
guard = guard_fixture(WAIT_MS)


def filtered(page: Page, text: str, shown: list[str]) -> None:
    """Type ``text`` into the filter: exactly the scenarios ``shown`` stay in the tree."""
    page.get_by_role("searchbox", name="Filter").fill(text)
    expect_tree_shows(page, TITLES, shown)


def test_typing_a_tag_keeps_the_scenarios_tagged_so(
    page: Page, viewer: Viewer, guard: PageGuard
) -> None:
    page.goto(viewer.url)
    expect(tree_item(page, "mail")).to_be_visible()

    filtered(page, "@smoke", ["shop/cart", "shop/slow", "auth/login"])
    expect(tree_item(page, "reports")).to_have_count(0)
    auth = tree_item(page, "auth")
    expect(auth).to_have_attribute("aria-expanded", "true")  # a filter opens its folders
    filtered(page, "@smo", ["shop/cart", "shop/slow", "auth/login"])  # as you type
    filtered(page, "@SMOKE-", ["shop/slow"])  # case aside
    filtered(page, "@smoke @cart", ["shop/cart"])  # every tag
    filtered(page, "  @smoke   adds ", ["shop/cart"])  # a tag and text
    filtered(page, "signs @smoke", ["auth/login"])  # in any order
    filtered(page, "@nightly", ["reports/daily"])

    filtered(page, "a@b", ["mail"])  # not a tag: text, as before
    filtered(page, "@b.com", [])  # a@b.com is no tag
    expect(page.get_by_text("No scenario matches.")).to_be_visible()
    filtered(page, "@", [n for n in TITLES if n != "auth/logout"])  # "@" alone is text
    filtered(page, "", [*TITLES])


def test_the_filtered_tree_keeps_its_roles_names_and_keys(
    page: Page, viewer: Viewer, guard: PageGuard
) -> None:
    page.goto(viewer.url)
    filtered(page, "@smoke", ["shop/cart", "shop/slow", "auth/login"])
    shop = tree_item(page, "shop")
    group = shop.get_by_role("group")
    expect(group.get_by_role("treeitem")).to_have_count(2)
    cart = tree_item(page, "shop/cart")
    expect(cart.locator(".leaf-name")).to_have_attribute("title", TITLES["shop/cart"])
    tree_item(page, "auth").focus()  # the keyboard
    page.keyboard.press("ArrowDown")
    login = tree_item(page, "auth/login")
    expect(login).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.get_by_role("tab", name="auth/login")).to_have_attribute("aria-selected", "true")
