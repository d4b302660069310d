"""One headless Chromium on an asyncio loop running in a thread of its own.

Launching Playwright's driver and a browser costs about a second of CPU; tests that
only need a fresh page share one browser (``on_page`` in this folder's conftest, the
``chromium`` fixture of test_builtins_more) and isolate with a context each. Imported
as ``from browser_thread import BrowserThread`` (pytest puts this folder on sys.path).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from playwright.async_api import Browser, Playwright, async_playwright

T = TypeVar("T")


class BrowserThread:
    """``run(coro)`` runs ``coro`` on the browser's loop and returns its result."""

    def __init__(self, executable: str) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.playwright: Playwright = self.run(async_playwright().start())
        self.browser: Browser = self.run(
            self.playwright.chromium.launch(executable_path=executable, headless=True)
        )

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 120) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=timeout)

    def close(self) -> None:
        try:
            self.run(self.browser.close())
            self.run(self.playwright.stop())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)
            self.loop.close()
