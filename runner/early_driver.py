"""Playwright's driver started before the run's imports and project load, not after.

``unotest e2e`` spends about 170 ms importing the runner, parsing the project and
reading the config, and Playwright's driver (a Node process) takes about 230 ms to
start. Started first, on the event loop the run will use, in a thread of its own, the
driver comes up while those run instead of after them. The run then takes the loop and
the driver (:func:`take`); whoever starts one and does not hand it on ends it
(:func:`discard`), so a usage error or an unknown scenario leaves no driver behind.

Only the standard library at the top: this module is imported before anything heavy,
and Playwright itself is imported in the starting thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.async_api import Playwright

__all__ = ["EarlyDriver", "discard", "start", "take"]


@dataclass
class EarlyDriver:
    """A new event loop, not running, and the driver started on it (or why not)."""

    loop: asyncio.AbstractEventLoop = field(default_factory=asyncio.new_event_loop)
    playwright: Playwright | None = None
    error: BaseException | None = None
    _thread: threading.Thread | None = None

    def begin(self) -> None:
        self._thread = threading.Thread(target=self._start, name="unotest-driver", daemon=True)
        self._thread.start()

    def _start(self) -> None:
        """The loop runs here only until the driver is up; it is then run again by the
        thread that takes it (a loop may be run by one thread at a time, any thread)."""
        try:
            from playwright.async_api import async_playwright

            self.playwright = self.loop.run_until_complete(async_playwright().start())
        except BaseException as err:  # raised where a launch would raise it: drive
            self.error = err

    def wait(self) -> None:
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def close(self) -> None:
        """Stop the driver and close the loop (nobody took them)."""
        self.wait()
        loop, playwright, self.playwright = self.loop, self.playwright, None
        if loop.is_closed():
            return
        try:
            if playwright is not None:
                with contextlib.suppress(Exception):
                    loop.run_until_complete(playwright.stop())
            with contextlib.suppress(Exception):
                loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()


_early: EarlyDriver | None = None
"""The one driver started ahead in this process, until taken or discarded."""


def start() -> None:
    """Start the driver now, in the background (once per process)."""
    global _early
    if _early is None:
        _early = EarlyDriver()
        _early.begin()


def take() -> EarlyDriver | None:
    """The driver started ahead, now the caller's to run and close; None if none was."""
    global _early
    early, _early = _early, None
    if early is not None:
        early.wait()
    return early


def discard() -> None:
    """End a driver started ahead and never taken (an early exit)."""
    early = take()
    if early is not None:
        early.close()
