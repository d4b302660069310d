"""The one crossing between the interpreter's thread and the browser's event loop.

The interpreter runs a scenario in a thread of its own; Playwright (async) runs on
the runner's asyncio loop. A built-in submits a coroutine here and blocks its thread
on the result. ``interrupt`` (abort, SIGINT, the scenario timeout) cancels the
coroutine in flight, so even an auto-waiting action ends at once, and makes every
later call fail fast: the interpreter unwinds with :class:`dsl.errors.Interrupt`.

After the first interrupt the runner may open the bridge once more for the
``after_each`` hooks (:meth:`LoopBridge.reopen_for_teardown`): the browser is still
there. ``interrupted`` keeps the first reason (the run still ends as it says, and the
debugger stays out of the way), and any later interrupt closes the bridge for good.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from dsl.errors import Interrupt

__all__ = ["LoopBridge"]

T = TypeVar("T")


class LoopBridge:
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._lock = threading.Lock()
        # The call in flight, whatever Playwright call it awaits: it is only ever cancelled.
        self._current: concurrent.futures.Future[Any] | None = None
        self.interrupted: str | None = None
        self._interrupts = 0
        self._reopened = False

    # `coro` is any coroutine returning T, spelt as run_coroutine_threadsafe takes it.
    def call(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the loop and wait for it; raise Interrupt if interrupted."""
        with self._lock:
            if self._closed():
                coro.close()
                raise Interrupt(self.interrupted or "aborted")
            future = asyncio.run_coroutine_threadsafe(coro, self.loop)
            self._current = future
        try:
            return future.result()
        except concurrent.futures.CancelledError:
            raise Interrupt(self.interrupted or "aborted") from None
        finally:
            with self._lock:
                self._current = None

    def check(self) -> None:
        """Called before each statement: a pure loop must stop too."""
        if self._closed():
            raise Interrupt(self.interrupted or "aborted")

    def sleep(self, seconds: float) -> None:
        """Wait on the loop, so that an interrupt ends the wait at once."""
        self.call(asyncio.sleep(seconds))

    def interrupt(self, reason: str, *, final: bool = False) -> None:
        """Stop the scenario: safe from any thread (the first reason wins).

        A second interrupt, or a ``final`` one, also refuses the ``after_each`` hooks
        their reopened bridge (or the one they were about to get).
        """
        with self._lock:
            if self.interrupted is None:
                self.interrupted = reason
            self._interrupts += 2 if final else 1
            self._reopened = False
            future = self._current
        if future is not None:
            future.cancel()

    def reopen_for_teardown(self) -> bool:
        """Let calls through again after the first interrupt, for the ``after_each``
        hooks; False (and still closed) once a second or a final interrupt came."""
        with self._lock:
            if self._interrupts > 1:
                return False
            self._reopened = self.interrupted is not None
            return True

    def _closed(self) -> bool:
        return self.interrupted is not None and not self._reopened
