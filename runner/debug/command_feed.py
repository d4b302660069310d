"""Reading ``commands.jsonl`` while others append to it.

The file is read by byte offset and only whole lines are taken: a writer that is
half-way through a line is simply read again on the next look. A thread of its own
looks when the kernel says the file was written (:class:`runner.debug.file_changes.FileChanges`,
Linux's ``inotify``), and every ``WAKE_FALLBACK_SECONDS`` besides (a file replaced by
another is watched again then); where writes cannot be watched it polls every few
milliseconds (a ``stat`` is cheap). Either way a command lands in well under the 20 ms
the protocol aims for, whatever the scenario thread is doing.

A line that fails in ``on_line`` is reported and the lines after it are still
delivered; a line longer than ``MAX_PENDING_BYTES`` is handed over once, cut, (the
consumer rejects it as too long) and the rest of it, up to its ``\\n``, is dropped
instead of being taken for a command of its own.

The same thread watches the run's owner, when it has one
(:class:`runner.processes.OwnerWatch`: the MCP server that started it), and says once
when the owner is gone.

:meth:`CommandFeed.stop` does not wait for the thread to end, only for a look in
progress (after it, no line is handed on): it is called on the run's event loop, and
joining a thread there waited for that thread to get the interpreter's lock, about 17 ms
a run in a busy worker (whose other lanes' runs wait on the same loop). The thread ends
on its own as soon as it wakes, and closes its wake-up pipe itself.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from runner.debug.file_changes import FileChanges
from runner.processes import OWNER_POLL_SECONDS, OwnerWatch

__all__ = ["CommandFeed"]

POLL_SECONDS = 0.004
IDLE_POLL_SECONDS = 0.05
"""How often a run nobody debugs looks (a run without ``--debug``, which a viewer may
still pause or abort): 250 looks a second cost each collection worker about 4 ms of
CPU per scenario. Its first command makes it look every ``POLL_SECONDS`` from then on."""
WAKE_FALLBACK_SECONDS = 0.05
"""With a watch on the file, how often the feed looks anyway: for its owner, and for a
write the watch could not see (the file replaced, a file system that misses some)."""
MAX_PENDING_BYTES = 8 * 1024 * 1024
READ_CHUNK_BYTES = 1024 * 1024


def _stderr(text: str) -> None:
    print(f"unotest: {text}", file=sys.stderr, flush=True)


class CommandFeed:
    def __init__(
        self,
        path: Path,
        on_line: Callable[[bytes], None],
        poll: float = POLL_SECONDS,
        warn: Callable[[str], None] = _stderr,
        owner: OwnerWatch | None = None,
        on_owner_gone: Callable[[], None] = lambda: None,
        idle_poll: float | None = None,
    ) -> None:
        """``idle_poll``: look that often until the first command comes (a run nobody
        debugs yet), then every ``poll``; None: every ``poll`` from the start."""
        self.path = path
        self.on_line = on_line
        self.fast_poll = poll
        self.poll = poll if idle_poll is None else max(poll, idle_poll)
        self.warn = warn
        self.owner = owner
        self.on_owner_gone = on_owner_gone
        self._owner_checked = 0.0
        self._offset = 0
        self._pending = b""
        self._identity: tuple[int, int] | None = None
        self._discarding = False  # inside an over-long line: drop up to its "\n"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="unotest-commands", daemon=True)
        self._wake: tuple[int, int] | None = None
        """A pipe :meth:`stop` writes to, so a feed waiting on its watch ends at once."""
        self._wake_lock = threading.Lock()
        """Held to write to the pipe or close it (never a write to a closed, reused fd)."""
        self._looking = threading.Lock()
        """Held by a look: :meth:`stop` waits for one in progress."""
        self.watching = False
        """Whether the thread waits on a watch of the file (else it polls)."""

    def start(self) -> None:
        self._wake = os.pipe()
        self._thread.start()

    def stop(self) -> None:
        """No line is handed on after this returns; the thread ends on its own."""
        self._stop.set()
        with self._wake_lock:
            if self._wake is not None:
                with contextlib.suppress(OSError):
                    os.write(self._wake[1], b"x")
        if threading.current_thread() is not self._thread:
            with self._looking:
                pass  # a look in progress has ended; the next one sees the stop

    def _close_wake(self) -> None:
        with self._wake_lock:
            wake, self._wake = self._wake, None
        for fd in wake or ():
            with contextlib.suppress(OSError):
                os.close(fd)

    def _run(self) -> None:
        changes: FileChanges | None = None
        try:
            while not self._stop.is_set():
                identity = self._identity
                self._look()
                if changes is None or self._identity != identity:
                    # The first look, or another file at the path now: watch it, then
                    # look once more (a write between the look and the watch is read).
                    if changes is not None:
                        changes.close()
                    changes = FileChanges.open(self.path)
                    self.watching = changes is not None
                    if changes is not None:
                        continue
                if changes is None:
                    self._stop.wait(self.poll)
                else:
                    wake = self._wake
                    changes.wait(WAKE_FALLBACK_SECONDS, wake[0] if wake else None)
        finally:
            if changes is not None:
                changes.close()
            self._close_wake()

    def _look(self) -> None:
        with self._looking:
            if not self._stop.is_set():
                self._look_now()

    def _look_now(self) -> None:
        try:
            self.read_new()
        except OSError:
            pass  # the run directory may be going away at the very end
        except Exception as err:  # never let the feed die: later commands must land
            self.warn(f"commands.jsonl: {type(err).__name__}: {err}")
        self._check_owner()

    def _check_owner(self) -> None:
        """Every quarter second, whether the owner is gone; ``on_owner_gone`` once."""
        owner = self.owner
        now = time.monotonic()
        if owner is None or now - self._owner_checked < OWNER_POLL_SECONDS:
            return
        self._owner_checked = now
        if owner.gone():
            self.owner = None
            try:
                self.on_owner_gone()
            except Exception as err:
                self.warn(f"ending the run for its owner failed: {type(err).__name__}: {err}")

    def read_new(self) -> None:
        """Hand every complete new line to ``on_line``; keep a partial tail for later."""
        try:
            stat = os.stat(self.path)
        except FileNotFoundError:
            return
        size, identity = stat.st_size, (stat.st_dev, stat.st_ino)
        if self._identity is not None and (identity != self._identity or size < self._offset):
            # Replaced or truncated: what is there now was never read.
            self.warn("commands.jsonl was replaced; reading it from its start")
            self._offset, self._pending, self._discarding = 0, b"", False
        self._identity = identity
        if size == self._offset:
            return
        with open(self.path, "rb") as handle:
            handle.seek(self._offset)
            while self._offset < size:
                data = handle.read(min(READ_CHUNK_BYTES, size - self._offset))
                if not data:
                    break
                self._offset += len(data)
                self._take(data)

    def _take(self, data: bytes) -> None:
        lines = (self._pending + data).split(b"\n")
        self._pending = lines.pop()
        if self._discarding:
            if not lines:
                self._pending = b""
                return
            lines.pop(0)  # the end of the over-long line
            self._discarding = False
        for line in lines:
            if line.strip():
                self._deliver(line)
        if len(self._pending) > MAX_PENDING_BYTES:
            # A line this long is not a command: hand over what there is (rejected as
            # too long) rather than hold the run's memory hostage, then skip the rest.
            overlong, self._pending, self._discarding = self._pending, b"", True
            self._deliver(overlong)

    def _deliver(self, line: bytes) -> None:
        self.poll = self.fast_poll  # somebody drives this run now: answer at once
        try:
            self.on_line(line)
        except Exception as err:
            self.warn(f"commands.jsonl: a command failed: {type(err).__name__}: {err}")
