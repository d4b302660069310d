"""runtime.json written when it changes meaning, and at most every so often while running.

Rewriting runtime.json around every step (and asking the page its title for it) was
the largest per-step cost of a run. A reader (the viewer, ``unotest inspect``, an
agent polling it) needs the state to be right whenever it changes meaning (pause,
resume, failure, the end) and the run's progress to be fresh within a fraction of a
second otherwise. So :class:`RuntimeFile` has two ways in:

* :meth:`RuntimeFile.write_now`: written at once (pause, resume, failure, the end);
  after a state other than ``running`` the next progress state is written at once too;
* :meth:`RuntimeFile.progress`: written at once when the last write is older than the
  interval (the leading edge), otherwise kept and written by a timer when the interval
  is over (the trailing edge), so a step that runs long is shown while it runs.

Each state is numbered when it is *built*, and a write never replaces a later-numbered
one: a pause written from the scenario's thread, or the end written from the event
loop, is never overwritten by an older progress state still waiting for its timer. The
lock guards only the file write, never the building of a state (which may ask the page
through the loop bridge): the loop thread writing the end must never wait for a
scenario thread waiting for the loop.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from runner import protocol
from runner.events import now_ms

__all__ = ["PROGRESS_INTERVAL_S", "RuntimeFile"]

PROGRESS_INTERVAL_S = 0.2
"""How stale runtime.json may be while a run goes on without pausing."""


class RuntimeFile:
    """The one writer of a run's runtime.json (through ``write``, the run directory's)."""

    def __init__(
        self,
        write: Callable[[protocol.RuntimeStateFile], None],
        interval: float = PROGRESS_INTERVAL_S,
    ) -> None:
        self._write = write
        self.interval = interval
        self._lock = threading.Lock()
        self._numbered = 0
        self._written = 0
        self._last = float("-inf")
        self._pending: tuple[int, protocol.RuntimeStateFile] | None = None
        self._timer: threading.Timer | None = None

    def number(self) -> int:
        """The number of a state about to be built (later states get larger ones)."""
        with self._lock:
            self._numbered += 1
            return self._numbered

    def due(self) -> bool:
        """Whether a progress state would be written at once (the interval is over)."""
        return time.monotonic() - self._last >= self.interval

    def write_now(self, number: int, state: protocol.RuntimeStateFile) -> None:
        """Write ``state`` unless a later one is already written; drops a pending one
        that is older."""
        with self._lock:
            if self._pending is not None and self._pending[0] < number:
                self._pending = None
            if number > self._written:
                self._write(state)
                self._written = number
                # after any other state (starting, paused, ...) the next step is news
                running = state["state"] == "running"
                self._last = time.monotonic() if running else float("-inf")

    def progress(self, number: int, state: protocol.RuntimeStateFile) -> None:
        """Keep ``state`` for the timer (it replaces an older pending one)."""
        with self._lock:
            if number <= self._written:
                return
            self._pending = (number, state)
            if self._timer is None:
                delay = max(0.0, self._last + self.interval - time.monotonic())
                timer = threading.Timer(delay, self._flush)
                timer.daemon = True
                timer.name = "unotest-runtime"
                self._timer = timer
                timer.start()

    def close(self) -> None:
        """Nothing pending is written any more (the run directory is closing)."""
        with self._lock:
            self._pending = None
            timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()

    def _flush(self) -> None:
        with self._lock:
            self._timer = None
            pending, self._pending = self._pending, None
            if pending is None or pending[0] <= self._written:
                return
            number, state = pending
            state["updatedAt"] = now_ms()
            try:
                self._write(state)
            except Exception:  # best effort: the run directory may be gone already
                return
            self._written = number
            self._last = time.monotonic()
