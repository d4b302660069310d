"""A worker's next context opened ahead, in a real Chromium: handed out fresh and
unused, only to the browser and options it was opened for, never when it failed or its
browser is gone; a context closed in the background ends closed."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import pytest
from playwright.async_api import Browser, BrowserContext, Page, async_playwright

from runner.browser import contexts_ahead
from runner.browser.contexts_ahead import ContextsAhead, close_later

T = TypeVar("T")


@dataclass
class Opened:
    context: BrowserContext
    page: Page


async def open_blank(browser: Browser) -> Opened:
    context = await browser.new_context()
    return Opened(context, await context.new_page())


def with_browser(chromium_path: str, body: Callable[[Browser], Awaitable[T]]) -> T:
    async def run() -> T:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=chromium_path)
            try:
                return await body(browser)
            finally:
                await browser.close()

    return asyncio.run(run())


def test_the_context_opened_ahead_is_handed_out_once_fresh(chromium_path: str) -> None:
    async def body(browser: Browser) -> None:
        ahead: ContextsAhead[Opened] = ContextsAhead()
        assert await ahead.take(browser, "opts") is None  # nothing opened yet
        ahead.open(browser, "opts", open_blank)
        ahead.open(browser, "opts", open_blank)  # one at a time per browser
        taken = await ahead.take(browser, "opts")
        assert taken is not None
        assert len(browser.contexts) == 1 and taken.context in browser.contexts
        assert taken.page.url == "about:blank" and await taken.context.cookies() == []
        assert await ahead.take(browser, "opts") is None  # handed out once

    with_browser(chromium_path, body)


def test_other_options_get_nothing_and_the_unused_context_is_closed(chromium_path: str) -> None:
    async def body(browser: Browser) -> None:
        ahead: ContextsAhead[Opened] = ContextsAhead()
        ahead.open(browser, ("http://a", (1280, 720)), open_blank)
        assert await ahead.take(browser, ("http://b", (1280, 720))) is None
        for _ in range(200):  # closed in the background
            if not browser.contexts:
                break
            await asyncio.sleep(0.05)
        assert browser.contexts == []

    with_browser(chromium_path, body)


def test_a_context_that_failed_to_open_is_never_handed_out(chromium_path: str) -> None:
    async def failing(browser: Browser) -> Opened:
        raise RuntimeError("no renderer")

    async def body(browser: Browser) -> None:
        ahead: ContextsAhead[Opened] = ContextsAhead()
        ahead.open(browser, "opts", failing)
        assert await ahead.take(browser, "opts") is None

    with_browser(chromium_path, body)


def test_a_closed_page_or_a_gone_browser_gets_nothing(chromium_path: str) -> None:
    async def body(browser: Browser) -> None:
        ahead: ContextsAhead[Opened] = ContextsAhead()
        ahead.open(browser, "opts", open_blank)
        await asyncio.sleep(0)  # let it start
        opened_ahead = await open_blank(browser)  # another one, to close its page

        async def closed_page(_: Browser) -> Opened:
            await opened_ahead.page.close()
            return opened_ahead

        assert await ahead.take(browser, "opts") is not None
        ahead.open(browser, "opts", closed_page)
        assert await ahead.take(browser, "opts") is None

    with_browser(chromium_path, body)

    async def gone() -> None:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=chromium_path)
            ahead: ContextsAhead[Opened] = ContextsAhead()
            ahead.open(browser, "opts", open_blank)
            await browser.close()
            assert await ahead.take(browser, "opts") is None

    asyncio.run(gone())


def test_close_later_closes_the_context(chromium_path: str) -> None:
    async def body(browser: Browser) -> Any:
        context = await browser.new_context()
        close_later(context)
        assert context in browser.contexts  # the caller went on at once
        for _ in range(200):
            if context not in browser.contexts:
                break
            await asyncio.sleep(0.05)
        assert context not in browser.contexts

    with_browser(chromium_path, body)


def test_opening_ahead_is_asked_for_with_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    """Off by default (on two cores it made collections slower), on with ``=1``."""
    monkeypatch.delenv(contexts_ahead.ENV_VAR, raising=False)
    assert not contexts_ahead.wanted()
    monkeypatch.setenv(contexts_ahead.ENV_VAR, "1")
    assert contexts_ahead.wanted()
    monkeypatch.setenv(contexts_ahead.ENV_VAR, "0")
    assert not contexts_ahead.wanted()
