"""The one crossing between the interpreter's thread and the browser's event loop.

The interpreter runs a scenario in a thread of its own; Playwright (async) runs on
the runner's asyncio loop. A built-in submits a coroutine here and blocks its thread
on the result. ``interrupt`` (abort, SIGINT, the scenario timeout) cancels the
coroutine in flight, so even an auto-waiting action ends at once, and makes every
later call fail fast: the interpreter unwinds with :class:`dsl.errors.Interrupt`.
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

    # `coro` is any coroutine returning T, spelt as run_coroutine_threadsafe takes it.
    def call(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the loop and wait for it; raise Interrupt if interrupted."""
        with self._lock:
            if self.interrupted is not None:
                coro.close()
                raise Interrupt(self.interrupted)
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
        if self.interrupted is not None:
            raise Interrupt(self.interrupted)

    def interrupt(self, reason: str) -> None:
        """Stop the scenario: safe from any thread, idempotent (the first reason wins)."""
        with self._lock:
            if self.interrupted is None:
                self.interrupted = reason
            future = self._current
        if future is not None:
            future.cancel()
