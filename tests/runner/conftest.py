"""Fixtures for the runner tests that need a real browser or a site to open.

``chromium_path``  the Chromium every browser test launches (session scope). A test
                   that needs a browser FAILS when none can be found: CI installs one
                   (``.ci/setup``), so a missing browser is a broken setup, not a skip.
``static_site``    serves ``tmp_path`` over http on 127.0.0.1 (a free port) from a
                   background thread and yields the base URL, without a trailing
                   slash (``f"{static_site}/index.html"``). Write the site's files into
                   ``tmp_path``; they are served as they are at request time.
``on_page``        ``on_page(html, check)`` runs ``await check(page)`` in-process on a
                   fresh headless Chromium page (Playwright's async API) whose content is
                   ``html`` (``page.set_content``; None: about:blank), and returns its
                   result. The page is in a context of its own, closed after; the
                   browser (``shared_browser``) is one per test process.
``shared_browser`` that one headless Chromium (session scope), on a loop in a thread.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from browser_thread import BrowserThread
from net import serve_directory
from playwright.async_api import Page

from runner.browser.launch import playwright_browser_path, resolve_executable
from runner.errors import BrowserNotFound

T = TypeVar("T")


@pytest.fixture(scope="session")
def chromium_path() -> str:
    """The Chromium executable for headless launches, resolved as a run resolves it.

    Always a path: the system Chromium, or Playwright's own when that is installed
    (passing its path explicitly launches the same browser as Playwright's default).
    """
    try:
        resolved = resolve_executable("chromium", None, headless=True)
    except BrowserNotFound as exc:
        pytest.fail(
            f"the browser tests need Chromium and none was found: {exc}. "
            "Run 'bash .ci/setup', which installs one.",
            pytrace=False,
        )
    path = resolved or playwright_browser_path("chromium", headless=True)
    if not path:  # resolve_executable said Playwright's own is there
        pytest.fail("Playwright's own Chromium was reported but its path is unknown")
    return path


@pytest.fixture
def static_site(tmp_path: Path) -> Iterator[str]:
    """``http://127.0.0.1:PORT`` serving ``tmp_path``; shut down after the test."""
    with serve_directory(tmp_path, "static-site") as url:
        yield url


@pytest.fixture(scope="session")
def shared_browser(chromium_path: str) -> Iterator[BrowserThread]:
    """One headless Chromium for the tests of this process that need only a page."""
    browser = BrowserThread(chromium_path)
    try:
        yield browser
    finally:
        browser.close()


@pytest.fixture
def on_page(
    shared_browser: BrowserThread,
) -> Callable[[str | None, Callable[[Page], Awaitable[Any]]], Any]:
    """``on_page(html, check)``: ``await check(page)`` on a fresh page showing ``html``."""

    def run(html: str | None, check: Callable[[Page], Awaitable[T]]) -> T:
        async def scenario() -> T:
            context = await shared_browser.browser.new_context()
            try:
                page = await context.new_page()
                if html is not None:
                    await page.set_content(html)
                return await check(page)
            finally:
                await context.close()

        return shared_browser.run(scenario())

    return run
