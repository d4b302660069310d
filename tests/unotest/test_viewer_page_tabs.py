"""The tab bar with more tabs than fit (issue 32, defect 3), in real Chromium at
1440×900 on a real ``unotest view``: the active tab is always in view (the bar
scrolls to it, a click in the tree or the keyboard alike), and a scenario's next run
takes the place of its last run's tab once that run has ended, instead of one more
tab labelled the same.

Found by role and accessible name; any page or console error fails the test.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from viewer_page import (
    PageGuard,
    Viewer,
    browser_type_launch_args,
    guard_fixture,
    guard_page,
    scenario_source,
    site_viewer,
    tree_item,
    viewer_fixture,
)

__all__ = ["browser_type_launch_args"]  # the fixture, imported for pytest to find here

WAIT_MS = 20_000
NAMES = [f"checkout/a-rather-long-scenario-name-{i:02d}" for i in range(12)]

viewer = viewer_fixture(
    scenarios={name: scenario_source(name.split("/")[-1], '  goto("/")\n') for name in NAMES}
)
guard = guard_fixture(WAIT_MS)


def test_the_active_tab_stays_in_view_and_a_rerun_reuses_its_tab(
    page: Page, viewer: Viewer, guard: PageGuard
) -> None:
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(viewer.url)
    tabs = page.get_by_role("tablist", name="Open tabs")
    for name in NAMES:
        tree_item(page, name).click()
        active = tabs.get_by_role("tab", name=name, exact=True)
        expect(active).to_have_attribute("aria-selected", "true")
        expect(active).to_be_in_viewport()
    # Back to the first by the keyboard (Home): it scrolls back into view.
    tabs.get_by_role("tab", name=NAMES[-1], exact=True).focus()
    page.keyboard.press("Home")
    first = tabs.get_by_role("tab", name=NAMES[0], exact=True)
    expect(first).to_have_attribute("aria-selected", "true")
    expect(first).to_be_in_viewport()

    # Run twice: the second run takes the ended first run's tab.
    view = page.get_by_role("region", name=f"Scenario {NAMES[0]}")
    view.get_by_role("button", name="Run", exact=True).click()
    status = page.get_by_role("status", name="Run status")
    expect(status).to_contain_text("Run completed")
    run_tabs = tabs.get_by_role("tab", name=f"run {NAMES[0]}", exact=True)
    expect(run_tabs).to_have_count(1)
    first_run = page.url
    tabs.get_by_role("tab", name=NAMES[0], exact=True).click()
    view.get_by_role("button", name="Run", exact=True).click()
    expect(status).to_contain_text("Run completed")
    expect(run_tabs).to_have_count(1)
    assert page.url != first_run  # the tab shows the new run
    expect(run_tabs).to_be_in_viewport()


def test_a_headed_run_without_a_display_is_refused_before_it_exists(
    page: Page, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 32, defect 7: it ended "Run failed" with 0 steps, its reason cut off, and
    the scenario counted as failed though it never ran."""
    monkeypatch.delenv("DISPLAY", raising=False)  # the viewer inherits this environment
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    expect.set_options(timeout=WAIT_MS)
    guard = guard_page(page)
    guard.allow("status of 400 (Bad Request)")  # the refused run, provoked on purpose
    with site_viewer(tmp_path) as viewer:
        page.goto(viewer.url)
        tree_item(page, "smoke").click()
        view = page.get_by_role("region", name="Scenario smoke")
        view.get_by_role("checkbox", name="headed").check()
        view.get_by_role("button", name="Run", exact=True).click()
        expect(view.get_by_role("alert")).to_have_text(
            "a headed run needs a display and neither DISPLAY nor WAYLAND_DISPLAY is set "
            "(headed because of the run's 'headed' option): start it without 'headed' "
            "to run headless, or run under a virtual display (xvfb-run unotest ...)"
        )
        expect(page.get_by_role("tab", name="run smoke")).to_have_count(0)
        assert viewer.api("GET", "/api/runs") == []
        assert not (viewer.root / "unotest" / ".runs").exists() or not any(
            (viewer.root / "unotest" / ".runs").iterdir()
        )
        # Headless, it runs as before.
        view.get_by_role("checkbox", name="headed").uncheck()
        view.get_by_role("button", name="Run", exact=True).click()
        expect(page.get_by_role("status", name="Run status")).to_contain_text("Run completed")
    guard.check()
