"""The Runs list a page at a time, in real Chromium on a real ``unotest view`` (issue 34):
130 run directories written by hand (``fake_runs``) show as the newest 100 and "Load
more"; a run that starts meanwhile comes first with the older page kept; the Status and
Scenario filters ask the server. Every element is found by role and accessible name; any
page or console error fails (``guard``)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_runs import fake_run
from playwright.sync_api import Page, expect
from viewer_page import Viewer, browser_type_launch_args, guard_page, page_project, running_viewer

from runner.protocol import RunOutcome

__all__ = ["browser_type_launch_args"]  # the fixture, imported for pytest to find here

WAIT_MS = 20_000
REFS = ["smoke", "shop/cart"]


@pytest.fixture
def viewer(tmp_path: Path) -> Iterator[tuple[Viewer, list[str]]]:
    root = page_project(
        tmp_path / "proj",
        "http://127.0.0.1:9",
        scenarios={name: '  goto("/")\n' for name in REFS},
    )
    start = time.time_ns() // 1_000_000 - 3_600_000
    ids = []
    for n in range(130):
        outcome: RunOutcome = "failed" if n % 5 == 0 else "completed"
        ids.append(fake_run(root / "unotest" / ".runs", REFS[n % 2], start + n * 1000, outcome))
    with running_viewer(root) as running:
        yield running, ids[::-1]


def test_the_runs_list_pages_follows_new_runs_and_filters_on_the_server(
    page: Page, viewer: tuple[Viewer, list[str]]
) -> None:
    running, newest_first = viewer
    expect.set_options(timeout=WAIT_MS)
    guard = guard_page(page)
    page.goto(running.url)
    page.get_by_role("button", name="Runs", exact=True).click()
    runs = page.get_by_role("region", name="Runs")
    rows = runs.get_by_role("row")
    expect(rows).to_have_count(101)  # the header and the newest 100
    expect(runs.get_by_text("100 runs, more older")).to_be_visible()
    expect(rows.nth(1)).to_contain_text(newest_first[0])
    expect(rows.nth(100)).to_contain_text(newest_first[99])

    runs.get_by_role("button", name="Load more").click()
    expect(rows).to_have_count(131)
    expect(rows.nth(130)).to_contain_text(newest_first[129])
    expect(runs.get_by_role("button", name="Load more")).to_have_count(0)
    expect(runs.get_by_text("130 runs", exact=True)).to_be_visible()

    # A run that starts now comes first; the older page stays loaded under it.
    started = fake_run(running.root / "unotest" / ".runs", "smoke", time.time_ns() // 1_000_000)
    expect(rows.nth(1)).to_contain_text(started)
    expect(rows).to_have_count(132)

    runs.get_by_role("combobox", name="Status").select_option("failed")
    failed = [run_id for n, run_id in enumerate(newest_first[::-1]) if n % 5 == 0][::-1]
    expect(rows).to_have_count(1 + len(failed))
    expect(rows.nth(1)).to_contain_text(failed[0])
    runs.get_by_role("combobox", name="Scenario").select_option("shop/cart")
    # failed runs are those with n % 5 == 0; shop/cart's have an odd n
    expect(rows).to_have_count(1 + len(failed) // 2)
    expect(rows.filter(has_text="smoke-")).to_have_count(0)
    guard.check()
