"""pytest-playwright's Playwright and browser, per test module.

pytest-playwright keeps one sync Playwright for the whole session. Its event loop stays
installed in the worker's main thread from the first ``page`` test to the end of the
session, so every later test in that worker that calls ``asyncio.run`` (the viewer's
HTTP and WebSocket clients, the MCP client, the runner's own loops) fails with "cannot
be called from a running event loop". Module scope gives the loop back as soon as the
page tests of a module are done: pytest tears a module's fixtures down before it runs
a test of another module, which xdist does freely. The fixtures overridden are those
of pytest-playwright that hold the Playwright instance; ``context`` and ``page`` stay
pytest-playwright's own.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserType, Playwright, sync_playwright


@pytest.fixture(scope="module")
def playwright() -> Iterator[Playwright]:
    pw = sync_playwright().start()
    yield pw
    pw.stop()


@pytest.fixture(scope="module")
def browser_type(playwright: Playwright, browser_name: str) -> BrowserType:
    chosen: BrowserType = getattr(playwright, browser_name)
    return chosen


@pytest.fixture(scope="module")
def browser(
    browser_type: BrowserType, browser_type_launch_args: dict[str, Any]
) -> Iterator[Browser]:
    launched = browser_type.launch(**browser_type_launch_args)
    yield launched
    launched.close()


@pytest.fixture(scope="module")
def browser_context_args(
    pytestconfig: pytest.Config,
    playwright: Playwright,
    device: str | None,
    base_url: str | None,
    _pw_artifacts_folder: tempfile.TemporaryDirectory[str],
) -> dict[str, Any]:
    """pytest-playwright's own, at module scope (it reads ``playwright.devices``)."""
    args: dict[str, Any] = {}
    if device:
        args.update(playwright.devices[device])
    if base_url:
        args["base_url"] = base_url
    if pytestconfig.getoption("--video") in ("on", "retain-on-failure"):
        args["record_video_dir"] = _pw_artifacts_folder.name
    return args
