"""Reading ``commands.jsonl`` while others append to it (runner.md §3).

The file is read by byte offset and only whole lines are taken: a writer that is
half-way through a line is simply read again on the next look. A thread of its own
polls every few milliseconds (a ``stat`` is cheap), so a command lands in well under
the 20 ms the protocol aims for, whatever the scenario thread is doing.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from pathlib import Path

__all__ = ["CommandFeed"]

POLL_SECONDS = 0.004
MAX_PENDING_BYTES = 8 * 1024 * 1024


class CommandFeed:
    def __init__(
        self, path: Path, on_line: Callable[[bytes], None], poll: float = POLL_SECONDS
    ) -> None:
        self.path = path
        self.on_line = on_line
        self.poll = poll
        self._offset = 0
        self._pending = b""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="unotest-commands", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout=2)

    def _run(self) -> None:
        while not self._stop.is_set():
            # The run directory may be going away at the very end.
            with contextlib.suppress(OSError):
                self.read_new()
            self._stop.wait(self.poll)

    def read_new(self) -> None:
        """Hand every complete new line to ``on_line``; keep a partial tail for later."""
        try:
            size = os.stat(self.path).st_size
        except FileNotFoundError:
            return
        if size <= self._offset:
            return
        with open(self.path, "rb") as handle:
            handle.seek(self._offset)
            data = handle.read(size - self._offset)
        self._offset += len(data)
        buffer = self._pending + data
        *lines, self._pending = buffer.split(b"\n")
        if len(self._pending) > MAX_PENDING_BYTES:
            # A line this long without an end is not a command; drop it rather than
            # hold the run's memory hostage.
            self._pending = b""
            self.on_line(b"\xff")
        for line in lines:
            if line.strip():
                self.on_line(line)
