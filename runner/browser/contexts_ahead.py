"""A worker's next fresh context opened while its current scenario runs.

A collection worker runs scenario after scenario in one browser, each in a fresh
context (isolation: no cookie, storage or cache shared). Opening a context and its page
costs Chromium a new renderer, most of a scenario's cost besides its steps, and closing
one costs a round trip too. So while a scenario runs on a shared browser, the next
context and page are opened in the background (one at a time per browser, with the
options they were opened with), and the scenario that comes next takes them, unused;
a context a scenario is done with is closed in the background.

Closing in the background (:func:`close_later`) is what every worker does now, ahead or
not (``BrowserLifecycle.drive``'s ``close_behind``): the run ends without waiting for
the browser's answer, about 11 ms of each scenario.

Opening ahead is off unless ``UNOTEST_CONTEXTS_AHEAD=1`` (:func:`wanted`): on two cores with two
workers, the renderer opened ahead competes with the running scenario's page for the
CPU, and a 24-flow collection took 10 to 14 % longer with it than without it
(``bench/collection.py``'s flows, interleaved runs: 16.1 s against 13.9 s, 17.2 s
against 15.7 s). With cores to spare it may pay; it stays for those machines.

The options a context is matched on are all of those it was made with
(``runner.browser.lifecycle.options_key``), a ``storageState`` file's content among
them, read when the context opens: a context opened while a collection's setup scenario
runs (before it has written the file), or with a collection's other settings, is
never handed to a scenario that needs the file's state; it is closed, and the
scenario opens its own from the file as it is then.

What it costs when no scenario comes: one blank page's renderer until the browser
closes (at the worker's end). A context that failed to open, of a browser that is gone,
of another event loop, or opened with other options, is never handed out: the scenario
opens its own, as it would have.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from playwright.async_api import Browser, BrowserContext, Page

__all__ = ["ENV_VAR", "ContextsAhead", "close_later", "wanted"]

CLOSE_TIMEOUT_S = 10.0
ENV_VAR = "UNOTEST_CONTEXTS_AHEAD"


def wanted() -> bool:
    """Whether a worker opens its next context ahead: only when asked (see above)."""
    return os.environ.get(ENV_VAR, "").strip() == "1"


class Opened(Protocol):
    """A context and its page (``runner.browser.lifecycle.Standby``)."""

    @property
    def context(self) -> BrowserContext: ...

    @property
    def page(self) -> Page: ...


S = TypeVar("S", bound=Opened)


@dataclass
class _Ahead(Generic[S]):
    browser: Browser
    options: Hashable
    task: asyncio.Task[S | None]


class ContextsAhead(Generic[S]):
    """At most one standby being opened (or ready) per browser."""

    def __init__(self) -> None:
        self._ahead: dict[int, _Ahead[S]] = {}

    def open(
        self,
        browser: Browser,
        options: Hashable,
        opener: Callable[[Browser], Awaitable[S]],
    ) -> None:
        """Start opening the next context of ``browser`` (unless one is already)."""
        if id(browser) in self._ahead or not browser.is_connected():
            return

        async def opened() -> S | None:
            # A failure is a context not opened ahead (the scenario opens its own), never
            # a task ending in an exception: asyncio.run's shutdown reports those even
            # when retrieved (a browser killed while its next context opens).
            try:
                return await opener(browser)
            except Exception:
                return None

        task = asyncio.get_running_loop().create_task(opened())
        self._ahead[id(browser)] = _Ahead(browser, options, task)

    async def take(self, browser: Browser, options: Hashable) -> S | None:
        """The context opened ahead for ``browser`` with these options, else ``None``."""
        ahead = self._ahead.pop(id(browser), None)
        if ahead is None:
            return None
        loop = asyncio.get_running_loop()
        usable = (
            ahead.browser is browser
            and ahead.options == options
            and ahead.task.get_loop() is loop
            and browser.is_connected()
        )
        if not usable:
            if ahead.task.get_loop() is loop:
                close_later(_close_when_open(ahead.task))
            return None
        try:
            standby = await ahead.task
        except Exception:
            return None
        if standby is None:
            return None
        if standby.page.is_closed():
            close_later(standby.context)
            return None
        return standby


async def _close_when_open(task: asyncio.Task[S | None]) -> None:
    with contextlib.suppress(Exception):
        standby = await task
        if standby is not None:
            await asyncio.wait_for(standby.context.close(), CLOSE_TIMEOUT_S)


_closing: set[asyncio.Task[None]] = set()


def close_later(what: BrowserContext | Awaitable[None]) -> None:
    """Close a context (or run a closing coroutine) in the background: the run goes on
    without waiting for the browser's answer. Errors are ignored, as an awaited close's
    are."""

    async def close() -> None:
        with contextlib.suppress(Exception):
            if isinstance(what, BrowserContext):
                await asyncio.wait_for(what.close(), CLOSE_TIMEOUT_S)
            else:
                await what

    task = asyncio.get_running_loop().create_task(close())
    _closing.add(task)  # a strong reference until it is done (asyncio keeps weak ones)
    task.add_done_callback(_closing.discard)
