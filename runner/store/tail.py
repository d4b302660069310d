"""Following run directories as they are written: new runs, new lines, their end.

:class:`LineTailer` reads one file from a byte offset, whole ``\\n``-terminated lines
only (an unterminated tail waits in a small buffer for its ``\\n``), a bounded chunk at a
time, and never reads from the start again unless the file was truncated or replaced.
What it keeps is the offset, the file's identity and at most one partial line, so
tailing a 100,000-line ``steps.jsonl`` costs no more memory than tailing ten lines.

:class:`RunTail` follows one run directory and answers ``WsMessage``s (built by
:mod:`runner.ws_messages`): ``fs:run-started``, one ``fs:run-step`` (or
``fs:collection-run-step``) per line, ``fs:run-finished`` on ``run:finished`` /
``collection-run:finished`` or, when the runner is gone without one
(:func:`runner.store.runs.runner_alive`: its pid, else a heartbeat older than 30 s),
``interrupted``. :class:`RunsTailer` finds new run directories under ``.runs/``.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from runner import protocol, ws_messages
from runner.protocol import JSONObject
from runner.store.run_index import ended_runs
from runner.store.runs import parse_event_line, runner_alive
from runner.ws_messages import WsMessage

__all__ = ["LineTailer", "RunTail", "RunsTailer"]

CHUNK_BYTES = 64 * 1024
"""What one read takes from the file."""
BATCH_BYTES = 64 * 1024
"""What one :meth:`RunTail.poll` reads at most: its messages are all held at once."""
MAX_LINE_BYTES = 8 * 1024 * 1024
"""A partial line longer than this is dropped (with the rest of it, up to its ``\\n``)."""
_FINISHED_KINDS = ("run:finished", "collection-run:finished")
_OUTCOMES: tuple[protocol.RunOutcome, ...] = ("completed", "failed", "aborted", "interrupted")


class LineTailer:
    """The whole lines appended to one file since the last call."""

    def __init__(self, path: Path, offset: int = 0) -> None:
        self.path = path
        self.offset = offset
        """Bytes of the file consumed (whole lines and the pending partial one)."""
        self._pending = b""
        self._skipping = False
        self._identity: tuple[int, int] | None = None
        self.lines: int | None = 0 if offset == 0 else None
        """Whole lines before the next one read: the next line's 0-based number
        (counted from the file's start on the first read when it starts further on)."""

    @property
    def pending(self) -> int:
        """Bytes of an unterminated line held until its ``\\n`` comes."""
        return len(self._pending)

    def read(self, max_bytes: int = 1024 * 1024) -> list[bytes]:
        """Whole lines (without their ``\\n``) from at most ``max_bytes`` of new data.

        A file that shrank below the offset, or another file now at the path, is read
        again from its start. Call again while it returns lines to catch up.
        """
        return [line for _, line in self.read_numbered(max_bytes)]

    def read_numbered(self, max_bytes: int = 1024 * 1024) -> list[tuple[int, bytes]]:
        """As :meth:`read`, each line with its 0-based number in the file: a reader that
        also read the file whole (the viewer's page after a reconnect) tells by it which
        of the lines sent to it live it has already (lines dropped for their length
        count too)."""
        try:
            with open(self.path, "rb") as handle:
                stat = os.fstat(handle.fileno())
                identity = (stat.st_dev, stat.st_ino)
                if identity != self._identity or stat.st_size < self.offset:
                    if self._identity is not None or stat.st_size < self.offset:
                        self._restart()
                    self._identity = identity
                if self.lines is None:
                    self.lines = _count_lines(handle, self.offset)
                handle.seek(self.offset)
                return self._take(handle, max_bytes)
        except OSError:
            return []

    def _restart(self) -> None:
        self.offset = 0
        self.lines = 0
        self._pending = b""
        self._skipping = False

    def _take(self, handle: BinaryIO, max_bytes: int) -> list[tuple[int, bytes]]:
        lines: list[tuple[int, bytes]] = []
        budget = max_bytes
        while budget > 0:
            chunk = handle.read(min(CHUNK_BYTES, budget))
            if not chunk:
                break
            budget -= len(chunk)
            self.offset += len(chunk)
            self._split(chunk, lines)
        return lines

    def _split(self, chunk: bytes, lines: list[tuple[int, bytes]]) -> None:
        parts = chunk.split(b"\n")
        for index, part in enumerate(parts):
            last = index == len(parts) - 1
            if last:
                self._hold(part)
                continue
            whole, self._pending = self._pending + part, b""
            number = self.lines or 0
            self.lines = number + 1
            if self._skipping:
                self._skipping = False
            else:
                lines.append((number, whole))

    def _hold(self, part: bytes) -> None:
        if self._skipping:
            return
        self._pending += part
        if len(self._pending) > MAX_LINE_BYTES:
            self._pending = b""
            self._skipping = True


def _count_lines(handle: BinaryIO, end: int) -> int:
    """The ``\\n`` in the first ``end`` bytes, read a chunk at a time."""
    handle.seek(0)
    count = 0
    left = end
    while left > 0:
        chunk = handle.read(min(CHUNK_BYTES * 16, left))
        if not chunk:
            break
        left -= len(chunk)
        count += chunk.count(b"\n")
    return count


def _outcome(event: JSONObject) -> protocol.RunOutcome | None:
    if event.get("kind") not in _FINISHED_KINDS:
        return None
    value = event.get("outcome")
    return next((o for o in _OUTCOMES if o == value), "interrupted")


@dataclass
class RunTail:
    """One run directory being followed, from its manifest to its end."""

    run_dir: Path
    kind: protocol.RunKind
    ref: str
    tailer: LineTailer
    outcome: protocol.RunOutcome | None = None
    started_sent: bool = False

    @property
    def run_id(self) -> str:
        return self.run_dir.name

    @property
    def finished(self) -> bool:
        return self.outcome is not None

    @classmethod
    def open(cls, run_dir: Path, *, from_end: bool = False) -> RunTail | None:
        """``None`` until the manifest is there and readable. ``from_end``: follow only
        what is appended from now on (a run that was running before we looked)."""
        try:
            manifest = json.loads((run_dir / protocol.RUN_MANIFEST_FILE).read_bytes())
        except (OSError, ValueError, RecursionError):
            return None
        if not isinstance(manifest, dict):
            return None
        kind, ref = manifest.get("kind"), manifest.get("ref")
        if kind not in ("scenario", "collection") or not isinstance(ref, str):
            return None
        steps = run_dir / protocol.STEPS_FILE
        offset = 0
        if from_end:
            try:
                offset = steps.stat().st_size
            except OSError:
                offset = 0
        run_kind: protocol.RunKind = "collection" if kind == "collection" else "scenario"
        return cls(run_dir, run_kind, ref, LineTailer(steps, offset), started_sent=from_end)

    def poll(self, max_bytes: int = BATCH_BYTES) -> list[WsMessage]:
        """``fs:run-started`` the first time, then the messages of new lines (at most
        ``max_bytes`` of them), ``fs:run-finished`` after a finishing line."""
        messages: list[WsMessage] = []
        if not self.started_sent:
            self.started_sent = True
            messages.append(ws_messages.run_started(self.run_id, self.ref))
        if self.finished:
            return messages
        for number, line in self.tailer.read_numbered(max_bytes):
            event = parse_event_line(line)
            if event is None:
                continue
            messages.append(self._step(event, number))
            outcome = _outcome(event)
            if outcome is not None and self._ends_run(event):
                self.outcome = outcome
                messages.append(ws_messages.run_finished(self.run_id, outcome))
                break
        return messages

    def _step(self, event: JSONObject, line: int) -> WsMessage:
        if self.kind == "collection" and str(event.get("kind", "")).startswith("collection-run:"):
            return ws_messages.collection_run_step(self.run_id, event, line)
        return ws_messages.run_step(self.run_id, event, line)

    def _ends_run(self, event: JSONObject) -> bool:
        wanted = "collection-run:finished" if self.kind == "collection" else "run:finished"
        return event.get("kind") == wanted

    def check_alive(self, now_ms: int | None = None) -> Iterator[WsMessage]:
        """The last lines and ``fs:run-finished`` ``interrupted`` when the runner is
        gone without a finishing line; nothing while it lives."""
        if self.finished or runner_alive(self.run_dir, now_ms):
            return
        yield from self.drain()
        if not self.finished:
            self.outcome = "interrupted"
            yield ws_messages.run_finished(self.run_id, "interrupted")

    def drain(self) -> Iterator[WsMessage]:
        """Every message up to the end of what is written now, a bounded batch at a
        time (so a long file is never held whole)."""
        while True:
            batch = self.poll()
            yield from batch
            if not batch or self.finished:
                return


@dataclass
class RunsTailer:
    """The run directories under one ``.runs/``: which are new, which are followed."""

    runs_dir: Path
    known: set[str] = field(default_factory=set)
    """Names seen (followed, finished or unreadable forever); one short string a run."""
    live: dict[str, RunTail] = field(default_factory=dict)
    ended: dict[str, RunTail] = field(default_factory=dict)
    """Runs followed that ended since :meth:`take_ended` was last asked: a run found and
    ended between two looks still has its logs read (``unotest/viewer/run_logs.py``)."""
    _waiting: set[str] = field(default_factory=set)
    _listed_at: int | None = None

    def prime(self) -> None:
        """Take the runs already there: a live one is followed from its current end,
        the others are left alone (a client lists them over REST). A run the run index
        has a finish line of has ended: only the others are asked whether their runner
        lives (at 100,000 runs, asking each took a viewer 20 s to start)."""
        with contextlib.suppress(OSError):
            self._listed_at = self.runs_dir.stat().st_mtime_ns
        names = self._names()
        self.known.update(names)
        for name in sorted(set(names) - ended_runs(self.runs_dir)):
            run_dir = self.runs_dir / name
            if runner_alive(run_dir):
                tail = RunTail.open(run_dir, from_end=True)
                if tail is not None:
                    self.live[name] = tail

    def _names(self) -> list[str]:
        """The run directories' names: each entry's type as the listing gives it, not a
        ``stat`` each (100,000 of them took a second and a half at every new run)."""
        try:
            with os.scandir(self.runs_dir) as entries:
                return [e.name for e in entries if not e.name.startswith(".") and e.is_dir()]
        except OSError:
            return []

    def scan(self, *, force: bool = False) -> Iterator[WsMessage]:
        """Messages of new run directories (those with a manifest) and their lines.

        Unless ``force`` (a file event named a run), the directory is listed only when
        its mtime moved (a run directory was made or removed) or a new run still waits
        for its manifest."""
        try:
            stamp = self.runs_dir.stat().st_mtime_ns
        except OSError:
            return
        if stamp == self._listed_at and not self._waiting and not force:
            return
        self._listed_at = stamp
        known, waiting = self.known, self._waiting
        for name in sorted(n for n in self._names() if n not in known or n in waiting):
            self.known.add(name)
            tail = RunTail.open(self.runs_dir / name)
            if tail is None:
                self._waiting.add(name)  # created, manifest not written yet
                continue
            self._waiting.discard(name)
            self.live[name] = tail
            yield from self._follow(tail)

    def poll(self, run_id: str) -> Iterator[WsMessage]:
        """New messages of one run whose directory changed (a new one is scanned)."""
        tail = self.live.get(run_id)
        if tail is None:
            if run_id not in self.known or run_id in self._waiting:
                yield from self.scan(force=True)
            return
        yield from self._follow(tail)

    @property
    def waiting(self) -> bool:
        """Whether a run directory was made whose manifest was not there yet."""
        return bool(self._waiting)

    def open_waiting(self) -> Iterator[WsMessage]:
        """The runs made whose manifest was not there yet, opened once it is: each tried
        by its own directory, not by listing the folder (100,000 names at 100,000 runs);
        one whose directory is gone is forgotten."""
        for name in sorted(self._waiting):
            run_dir = self.runs_dir / name
            tail = RunTail.open(run_dir)
            if tail is None:
                if not run_dir.is_dir():
                    self._waiting.discard(name)
                continue
            self._waiting.discard(name)
            self.live[name] = tail
            yield from self._follow(tail)

    def take_ended(self) -> dict[str, RunTail]:
        """The runs that ended since the last call (:attr:`ended`), handed over once."""
        ended, self.ended = self.ended, {}
        return ended

    def poll_all(self) -> Iterator[WsMessage]:
        for tail in list(self.live.values()):
            yield from self._follow(tail)

    def check_alive(self, now_ms: int | None = None) -> Iterator[WsMessage]:
        """``fs:run-finished`` ``interrupted`` for every followed run whose runner died."""
        for tail in list(self.live.values()):
            yield from tail.check_alive(now_ms)
            self._forget_if_finished(tail)

    def _follow(self, tail: RunTail) -> Iterator[WsMessage]:
        yield from tail.drain()
        self._forget_if_finished(tail)

    def _forget_if_finished(self, tail: RunTail) -> None:
        if tail.finished:
            self.live.pop(tail.run_id, None)
            self.ended[tail.run_id] = tail
