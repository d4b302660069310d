"""The run index, ``unotest/.cache/runs.jsonl``: a line appended when a run starts, when a
retry is linked to its first attempt and when a run finishes, so that the newest runs, a
page of them filtered by scenario or status, an attempt chain or a prune read a few lines
instead of every run directory (at 100,000 runs, reading every manifest takes seconds;
listing 100,000 names does not).

It is a cache, never the truth (:mod:`runner.store.runs` reads it so):

* the run directories are listed every time: a line whose directory is gone is dropped,
  a directory without a line is read from its directory, and its lines are appended
  once it has finished; a missing or deleted index is rebuilt that way, as runs are read;
* only a finished run is answered from its lines; a run without a finish line (running,
  or killed before it could write one) is read from its directory, as before the index;
* every line is one ``os.write`` on an ``O_APPEND`` descriptor
  (:func:`runner.files.append_line`), so workers, a viewer and the CLI append at once and
  every line is whole; a line that does not parse is skipped; writing one never fails a
  run (without its line, the run is read from its directory).

It lives outside ``unotest/.runs/`` so that every reader of that folder keeps finding
run directories alone. The lines (JSON, ``run`` first, ``at`` when it was written)::

    {"run":"smoke-m3x9k2aa-1f2e3d","at":1733000000123,"e":"started","kind":"scenario",
     "ref":"smoke","startedAt":1733000000120,"parentRunId":…,"restartOf":…}
    {"run":"smoke-m3x9k2aa-1f2e3d","at":1733000000456,"e":"linked","retryOf":…,"attempt":2}
    {"run":"smoke-m3x9k2aa-1f2e3d","at":1733000001789,"e":"finished",
     "finishedAt":1733000001788,"outcome":"completed"}

A reader looking for a few runs reads the file backwards from its end, a block at a
time (:class:`RunIndex`): lines are appended as things happen, so the newest runs' lines
are the last ones. Every line of a run is written after its directory was made, and
that time is in the run's id (:func:`runner.protocol.make_run_id`): once the lines read
back were written more than ``SLACK_MS`` before a run's directory, the run has no line.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from runner import protocol
from runner.errors import RunWriteError
from runner.files import append_line, atomic_write

__all__ = [
    "INDEX_FILE",
    "SLACK_MS",
    "IndexEntry",
    "RunIndex",
    "as_outcome",
    "compact_index",
    "ended_runs",
    "finished_line",
    "index_path",
    "linked_line",
    "note_finished",
    "note_lines",
    "note_linked",
    "note_started",
    "run_time",
    "shared_index",
    "started_line",
]

INDEX_FILE = "runs.jsonl"
"""In ``unotest/.cache/`` (beside ``.runs/``): the run index."""
SLACK_MS = 10 * 60 * 1000
"""How far a line's ``at`` may lie before the time in its run's id (clocks stepped back,
a process descheduled between reading the clock and writing): a reader stops looking
for a run's lines once it has read back past lines written this long before the run."""
_BLOCK = 64 * 1024
_CHUNK = 256 * 1024
"""Lines appended in one write at most (a rebuild appends many)."""
_OUTCOMES: tuple[protocol.RunOutcome, ...] = ("completed", "failed", "aborted", "interrupted")
_TAIL = re.compile(r"-([0-9a-z]{1,13})-[0-9a-f]{6}\Z")
_STARTED = b'"e":"started"'
"""In every start line :func:`started_line` writes, in no other line."""
_FINISHED = b'"e":"finished"'
"""In every finish line :func:`finished_line` writes, in no other line."""


Kind = Literal["scenario", "collection"]


def index_path(runs_dir: Path) -> Path:
    """``unotest/.cache/runs.jsonl`` for ``unotest/.runs``: the index of ``runs_dir``."""
    return runs_dir.parent / ".cache" / INDEX_FILE


def run_time(run_id: str) -> int | None:
    """The time (ms) in a run id made by :func:`runner.protocol.make_run_id`, when its
    directory was made; ``None`` for a name not made so."""
    if len(run_id) >= 17 and run_id[-7] == "-" and run_id[-16] == "-":
        digits = run_id[-15:-7]
        if digits.isascii() and digits.isalnum() and digits.lower() == digits:
            return int(digits, 36)
    match = _TAIL.search(run_id)
    return int(match.group(1), 36) if match is not None else None


# ---------------------------------------------------------------------------
# writing
# ---------------------------------------------------------------------------


def _line(record: dict[str, object]) -> bytes:
    text = json.dumps(record, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    return text.encode("ascii") + b"\n"


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def started_line(
    run_id: str,
    *,
    kind: Kind,
    ref: str,
    started_at: int,
    parent: str | None = None,
    restart_of: str | None = None,
    retry_of: str | None = None,
    attempt: int | None = None,
) -> bytes:
    """The line of a run that started (``started_at``: its ``run:started`` time)."""
    record: dict[str, object] = {
        "run": run_id,
        "at": _now_ms(),
        "e": "started",
        "kind": kind,
        "ref": ref,
        "startedAt": started_at,
    }
    for key, value in (
        ("parentRunId", parent),
        ("restartOf", restart_of),
        ("retryOf", retry_of),
        ("attempt", attempt),
    ):
        if value is not None:
            record[key] = value
    return _line(record)


def finished_line(run_id: str, finished_at: int, outcome: protocol.RunOutcome) -> bytes:
    """The line of a run that finished (its ``run:finished`` time and outcome)."""
    record = {"run": run_id, "at": _now_ms(), "e": "finished"}
    return _line({**record, "finishedAt": finished_at, "outcome": outcome})


def note_lines(runs_dir: Path, lines: Iterable[bytes]) -> None:
    """Append whole lines to the index of ``runs_dir`` (a few writes for many lines);
    the folder is made when missing. Never raises: the index is a cache."""
    path = index_path(runs_dir)
    chunk: list[bytes] = []
    size = 0
    for line in lines:
        chunk.append(line)
        size += len(line)
        if size >= _CHUNK:
            _append(path, b"".join(chunk))
            chunk, size = [], 0
    if chunk:
        _append(path, b"".join(chunk))


def _append(path: Path, data: bytes) -> None:
    for attempt in range(2):
        try:
            append_line(path, data, create=True)
            return
        except OSError:
            if attempt:
                return
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError:
                return


def note_started(
    runs_dir: Path,
    run_id: str,
    *,
    kind: Kind,
    ref: str,
    started_at: int,
    parent: str | None = None,
    restart_of: str | None = None,
) -> None:
    """The run ``run_id`` started (its ``run:started`` line is written)."""
    line = started_line(
        run_id, kind=kind, ref=ref, started_at=started_at, parent=parent, restart_of=restart_of
    )
    note_lines(runs_dir, [line])


def linked_line(run_id: str, retry_of: str, attempt: int) -> bytes:
    """The line of a retry: attempt ``attempt`` of the run ``retry_of``."""
    record = {"run": run_id, "at": _now_ms(), "e": "linked"}
    return _line({**record, "retryOf": retry_of, "attempt": attempt})


def note_linked(runs_dir: Path, run_id: str, retry_of: str, attempt: int) -> None:
    """The run ``run_id`` is attempt ``attempt`` of the run ``retry_of`` (its manifest
    says so already)."""
    note_lines(runs_dir, [linked_line(run_id, retry_of, attempt)])


def note_finished(
    runs_dir: Path, run_id: str, finished_at: int, outcome: protocol.RunOutcome
) -> None:
    """The run ``run_id`` finished (its ``run:finished`` line is written)."""
    note_lines(runs_dir, [finished_line(run_id, finished_at, outcome)])


# ---------------------------------------------------------------------------
# reading
# ---------------------------------------------------------------------------


_OUTCOME_OF: dict[str, protocol.RunOutcome] = {o: o for o in _OUTCOMES}


def as_outcome(value: object) -> protocol.RunOutcome | None:
    """``value`` if it is a run's outcome."""
    return _OUTCOME_OF.get(value) if type(value) is str else None


def _int(value: object) -> int | None:
    # type() and not isinstance(): a bool is no time; and a whole file of lines goes
    # through here
    return value if type(value) is int else None


@dataclass(slots=True)
class IndexEntry:
    """What the index says of one run: its start (``started``: its start line was read),
    its retry link, its end (``outcome`` is ``None`` until a finish line is read)."""

    kind: Kind | None = None
    ref: str | None = None
    started_at: int | None = None
    parent: str | None = None
    restart_of: str | None = None
    retry_of: str | None = None
    attempt: int | None = None
    finished_at: int | None = None
    outcome: protocol.RunOutcome | None = None
    started: bool = False

    def start(self, record: dict[str, object]) -> None:
        kind, ref, started_at = record.get("kind"), record.get("ref"), record.get("startedAt")
        if type(started_at) is not int or type(ref) is not str:
            return
        if kind == "scenario":
            self.kind = "scenario"
        elif kind == "collection":
            self.kind = "collection"
        else:
            return
        self.ref = ref
        self.started_at = started_at
        parent, restart_of = record.get("parentRunId"), record.get("restartOf")
        self.parent = parent if type(parent) is str else None
        self.restart_of = restart_of if type(restart_of) is str else None
        if "retryOf" in record:
            self.link(record)
        self.started = True

    def link(self, record: dict[str, object]) -> None:
        retry_of, attempt = record.get("retryOf"), _int(record.get("attempt"))
        if type(retry_of) is str and attempt is not None:
            self.retry_of, self.attempt = retry_of, attempt

    def finish(self, record: dict[str, object]) -> None:
        finished_at, outcome = _int(record.get("finishedAt")), as_outcome(record.get("outcome"))
        if finished_at is not None and outcome is not None:
            self.finished_at, self.outcome = finished_at, outcome


class RunIndex:
    """The index of one runs folder as read so far: lines read backwards from where the
    file ended when first looked at (as far as a lookup needs) and forwards from there
    as they are appended (:meth:`refresh`). A file replaced (compacted) or cut is read
    again from its new end. Safe from any thread."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: dict[str, IndexEntry] = {}
        self._retries: dict[str, set[str]] = {}
        self._lock = threading.RLock()
        self._identity: tuple[int, int] | None = None
        self._low = 0
        """Where the lines not read yet end (read backwards from here)."""
        self._high = 0
        """Where the lines not read yet begin (read forwards from here)."""
        self._oldest_at: int | None = None

    # --- keeping up with the file ---------------------------------------------------

    def refresh(self) -> None:
        """Read the lines appended since the last look; start over on a new file."""
        with self._lock:
            try:
                stat = os.stat(self.path)
            except OSError:
                if self._identity is not None:
                    self._forget(None, 0)
                return
            identity = (stat.st_dev, stat.st_ino)
            if identity != self._identity or stat.st_size < self._high:
                self._forget(identity, 0)
                self._low = self._high = self._line_end(stat.st_size)
            elif stat.st_size > self._high:
                self._read_forward(stat.st_size)

    def _forget(self, identity: tuple[int, int] | None, end: int) -> None:
        self.entries.clear()
        self._retries.clear()
        self._identity = identity
        self._low = self._high = end
        self._oldest_at = None

    def _read(self, start: int, end: int) -> bytes:
        try:
            with open(self.path, "rb") as handle:
                if self._identity is not None:
                    stat = os.fstat(handle.fileno())
                    if (stat.st_dev, stat.st_ino) != self._identity:
                        return b""  # replaced meanwhile: the next refresh starts over
                handle.seek(start)
                return handle.read(end - start)
        except OSError:
            return b""

    def _line_end(self, size: int) -> int:
        """Where the last whole line of a file of ``size`` bytes ends (a line being
        written is left for the next refresh)."""
        end = size
        while end > 0:
            start = max(0, end - _BLOCK)
            data = self._read(start, end)
            if len(data) != end - start:
                return 0
            cut = data.rfind(b"\n")
            if cut >= 0:
                return start + cut + 1
            end = start
        return 0

    def _read_forward(self, size: int) -> None:
        data = self._read(self._high, size)
        end = data.rfind(b"\n") + 1
        for record in _records(data[:end].split(b"\n")[:-1]):
            self._fold(record, newer=True)
        self._high += end

    def _read_back(self, span: int = _BLOCK) -> None:
        """One more block of lines before ``_low``, newest first."""
        while True:
            start = max(0, self._low - span)
            data = self._read(start, self._low)
            if len(data) != self._low - start:
                self._low = 0  # replaced or unreadable: nothing more to read back
                return
            cut = -1 if start == 0 else data.find(b"\n")
            if start == 0 or cut >= 0:
                break
            span *= 2  # a line longer than the block
        for record in reversed(_records(data[cut + 1 :].split(b"\n")[:-1])):
            at = self._fold(record, newer=False)
            if at is not None and (self._oldest_at is None or at < self._oldest_at):
                self._oldest_at = at
        self._low = start + cut + 1

    def _fold(self, record: object, *, newer: bool) -> int | None:
        """One line into its run's entry; its ``at``. Read forwards (``newer``) a line
        adds to what came before it; read backwards, what came after it stands: a run's
        first start line counts, and its last link and finish lines."""
        if type(record) is not dict:
            return None
        run = record.get("run")
        if type(run) is not str:
            return None
        entry = self.entries.get(run)
        if entry is None:
            entry = self.entries[run] = IndexEntry()
        event = record.get("e")
        if event == "started" and not (newer and entry.started):
            linked = (entry.retry_of, entry.attempt)
            entry.start(record)
            if not newer and linked[0] is not None:
                entry.retry_of, entry.attempt = linked  # a later link line stands
        elif event == "linked" and (newer or entry.retry_of is None):
            entry.link(record)
        elif event == "finished" and (newer or entry.outcome is None):
            entry.finish(record)
        if entry.retry_of is not None:
            self._retries.setdefault(entry.retry_of, set()).add(run)
        return _int(record.get("at"))

    # --- questions ----------------------------------------------------------------------

    def lookup(self, run_id: str, made_at: int | None) -> IndexEntry | None:
        """The entry of a run whose start line the index holds, reading back as far as
        needed; ``None`` when it has none. ``made_at``: when the run's directory was
        made (:func:`run_time`), which bounds how far back to read; ``None`` reads back
        to the start of the file if need be."""
        with self._lock:
            while True:
                entry = self.entries.get(run_id)
                if entry is not None and entry.started:
                    return entry
                if self._low <= 0:
                    return None
                if (
                    made_at is not None
                    and self._oldest_at is not None
                    and self._oldest_at < made_at - SLACK_MS
                ):
                    return None
                self._read_back()

    def retries_of(self, first: str) -> list[str] | None:
        """The runs whose lines link them to ``first`` as its retries; ``None`` when the
        index does not hold ``first``'s own start line (a run older than the index): its
        retries' lines, written after it, may be missing too."""
        with self._lock:
            if self.lookup(first, run_time(first)) is None:
                return None
            return sorted(self._retries.get(first, ()))

    def start_refs(self) -> dict[str, tuple[Kind, str]]:
        """Each run's kind and ref, from its first start line, the whole file (as of the
        last :meth:`refresh`) read in one pass and nothing kept: what each scenario's
        newest run needs (``RunLister.latest``). Only the start lines are parsed, and no
        entry is built: at 100,000 runs about a third of what :meth:`read_all` costs. A
        run missing here has no start line :func:`started_line` wrote: it is read from
        its directory instead, as a run without one is."""
        with self._lock:
            data = self._read(0, self._high)
        refs: dict[str, tuple[Kind, str]] = {}
        for record in _records([line for line in data.split(b"\n") if _STARTED in line]):
            if type(record) is not dict:
                continue
            run, kind, ref = record.get("run"), record.get("kind"), record.get("ref")
            if type(run) is not str or type(ref) is not str or run in refs:
                continue
            if kind in ("scenario", "collection") and type(record.get("startedAt")) is int:
                refs[run] = ("scenario" if kind == "scenario" else "collection", ref)
        return refs

    def read_all(self) -> None:
        """Read the whole file (a prune, a list of every run)."""
        with self._lock:
            while self._low > 0:
                self._read_back(self._low)


def _records(lines: list[bytes]) -> list[object]:
    """The lines parsed, in one call when they all parse (a whole file is read several
    times faster so); a line that does not parse is ``None``."""
    try:
        value = json.loads(b"[" + b",".join(lines) + b"]")
    except (ValueError, RecursionError):
        value = None
    if isinstance(value, list) and len(value) == len(lines):
        return value
    records: list[object] = []
    for line in lines:
        try:
            records.append(json.loads(line))
        except (ValueError, RecursionError):
            records.append(None)
    return records


_SHARED: dict[Path, RunIndex] = {}
_SHARED_LOCK = threading.Lock()
_SHARED_MAX = 16


def shared_index(runs_dir: Path) -> RunIndex:
    """This process's :class:`RunIndex` of ``runs_dir``, refreshed: a viewer or an MCP
    server keeps what it has read, a CLI command reads only what it asks for."""
    path = index_path(runs_dir)
    with _SHARED_LOCK:
        index = _SHARED.pop(path, None)
        if index is None:
            index = RunIndex(path)
            while len(_SHARED) >= _SHARED_MAX:
                _SHARED.pop(next(iter(_SHARED)))
        _SHARED[path] = index  # the most recently used last
    index.refresh()
    return index


def ended_runs(runs_dir: Path) -> set[str]:
    """The runs of ``runs_dir`` the index has a finish line of: ended, their runners gone
    (the whole file read, only those lines looked at: what a viewer starting on 100,000
    runs asks, to follow the live ones). A run missing here may have ended too: ask its
    directory."""
    try:
        data = index_path(runs_dir).read_bytes()
    except OSError:
        return set()
    ended = (_run_of(line) for line in data.split(b"\n") if _FINISHED in line)
    return {run for run in ended if run is not None}


# ---------------------------------------------------------------------------
# compacting
# ---------------------------------------------------------------------------


def _run_of(line: bytes) -> str | None:
    prefix = b'{"run":"'
    if line.startswith(prefix):
        end = line.find(b'"', len(prefix))
        if end > 0 and b"\\" not in line[len(prefix) : end]:
            return line[len(prefix) : end].decode("ascii", "replace")
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return None
    run = record.get("run") if isinstance(record, dict) else None
    return run if isinstance(run, str) else None


def compact_index(runs_dir: Path) -> None:
    """Rewrite the index with only the lines of runs whose directory is there (after a
    prune): replaced atomically, then the lines others appended meanwhile added again.
    A line appended in the instant between that last read and the replacement is lost:
    its run is then read from its directory, and its lines appended again."""
    path = index_path(runs_dir)
    with contextlib.ExitStack() as stack:
        try:
            handle = stack.enter_context(open(path, "rb"))
        except OSError:
            return
        data = handle.read()
        end = data.rfind(b"\n") + 1
        try:
            alive = set(os.listdir(runs_dir))  # after the read: a line's run made before it
        except OSError:
            return
        kept = [line for line in data[:end].split(b"\n")[:-1] if _run_of(line) in alive]
        try:
            atomic_write(path, b"".join(line + b"\n" for line in kept))
        except RunWriteError:
            return
        handle.seek(end)
        late = handle.read()
    late_end = late.rfind(b"\n") + 1
    if late_end:
        with contextlib.suppress(OSError):
            append_line(path, late[:late_end])
