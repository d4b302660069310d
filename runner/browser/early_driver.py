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
    """A new event loop and the start of the driver on it: a task the run awaits, done
    or not. The loop runs in its own thread until the driver is up or the run asks for
    the loop (:meth:`hand_over`), whichever comes first; an unfinished start then goes
    on in the run's own thread, so the run's set-up still overlaps what is left of it."""

    loop: asyncio.AbstractEventLoop = field(default_factory=asyncio.new_event_loop)
    task: asyncio.Task[Playwright] | None = None
    error: BaseException | None = None
    _thread: threading.Thread | None = None
    _starter: threading.Thread | None = None
    _spawning: threading.Event = field(default_factory=threading.Event)

    def begin(self) -> None:
        """Start the thread and wait until it has imported Playwright and is about to
        spawn the driver. Two threads importing at once take turns on the GIL, so the
        caller's own imports running meanwhile would only delay the driver's spawn (by
        about 80 ms) and finish no sooner themselves."""
        self._thread = threading.Thread(target=self._start, name="unotest-driver", daemon=True)
        self._starter = self._thread
        self._thread.start()
        self._spawning.wait(SPAWN_WAIT_S)

    def _start(self) -> None:
        """A loop may be run by one thread at a time, any thread: stopped here, the run
        runs it again in its own."""
        loop = self.loop
        try:
            from playwright.async_api import async_playwright

            from runner.browser import node_cache

            node_cache.enable()
            self.task = loop.create_task(async_playwright().start())
            # Two turns of the loop: the start's first step schedules the client's run,
            # whose first step spawns the driver.
            loop.call_soon(loop.call_soon, self._spawning.set)
            self.task.add_done_callback(lambda _: self._stop_here())
            loop.run_forever()
        except BaseException as err:  # raised where a launch would raise it: drive
            self.error = err
        finally:
            self._spawning.set()

    def _stop_here(self) -> None:
        """Stop the loop if this thread is the starting one: the same callback run later
        by the run's thread (a stop queued as the start finished) does nothing."""
        if threading.current_thread() is self._starter:
            self.loop.stop()

    def hand_over(self) -> None:
        """Stop running the loop in its thread (now, or once it gets to it) and wait."""
        if self._thread is not None:
            self.loop.call_soon_threadsafe(self._stop_here)
            self._thread.join()
            self._thread = None

    def close(self) -> None:
        """Nobody took them: let the start finish, stop the driver, close the loop."""
        self.hand_over()
        loop, task, self.task = self.loop, self.task, None
        if loop.is_closed():
            return
        try:
            if task is not None:
                with contextlib.suppress(BaseException):
                    playwright = loop.run_until_complete(task)
                    loop.run_until_complete(playwright.stop())
            with contextlib.suppress(Exception):
                loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()


SPAWN_WAIT_S = 2.0
"""How long :meth:`EarlyDriver.begin` waits for the spawn at most (a stalled import
must not stall the command)."""

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
        early.hand_over()
    return early


def discard() -> None:
    """End a driver started ahead and never taken (an early exit)."""
    early = take()
    if early is not None:
        early.close()
