"""Reading run directories back: events, ``RunMeta``, finding a run, whether it lives,
and listing runs newest first a page at a time (:class:`RunLister`, through the run index
of :mod:`runner.store.run_index`).

A run's status comes from its ``steps.jsonl`` when it has finished, else from
whether its runner still lives: the manifest's ``pid`` with the same start time
(``pidStartTime``, so a reused PID does not count) decides at once; without that
information (another host, another platform, an older writer) a heartbeat
younger than ``HEARTBEAT_STALE_SECONDS`` means ``running``.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import json
import math
import operator
import os
import re
import socket
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Literal

from runner import protocol
from runner.errors import UsageError
from runner.processes import pid_exists, read_proc_stat
from runner.project.root import Project
from runner.protocol import JSONObject, sanitize_run_id_segment, to_base36
from runner.store.run_index import (
    SLACK_MS,
    IndexEntry,
    RunIndex,
    as_outcome,
    finished_line,
    linked_line,
    note_lines,
    run_time,
    shared_index,
    started_line,
)

__all__ = [
    "STATUSES",
    "RunLister",
    "RunQuery",
    "RunsPage",
    "events_of",
    "find_run_dir",
    "is_collection_run",
    "list_runs",
    "output_path",
    "read_events",
    "read_events_counted",
    "read_manifest",
    "run_meta",
    "runner_alive",
    "runs_page",
    "runtime_path",
    "steps_path",
    "steps_size",
]

Stream = Literal["stdout", "stderr"]
"""A run's captured output stream."""
_STARTED_KINDS = ("run:started", "collection-run:started")
FINISHED_KINDS = ("run:finished", "collection-run:finished")
_STATUS_OF: dict[protocol.RunOutcome, protocol.RunStatus] = {
    "completed": "passed",
    "failed": "failed",
    "aborted": "aborted",
    "interrupted": "interrupted",
}


# ---------------------------------------------------------------------------
# steps.jsonl
# ---------------------------------------------------------------------------


def parse_event_line(line: bytes) -> JSONObject | None:
    """One line of a steps.jsonl as a JSON object, or ``None`` (blank, not JSON, not an
    object): readers skip what they cannot use."""
    if not line.strip():
        return None
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _whole_lines(steps_path: Path, start: int = 0) -> list[bytes]:
    """The ``\\n``-terminated lines of a file from byte ``start``; an unterminated tail
    is being written."""
    try:
        with open(steps_path, "rb") as handle:
            handle.seek(start)
            data = handle.read()
    except OSError:
        return []
    return data.split(b"\n")[:-1]


def read_events(steps_path: Path, start: int = 0) -> list[JSONObject]:
    """Every whole line of ``steps_path`` (from byte ``start``) that is a JSON object.

    Splits on ``b"\\n"`` only (a JSON string may hold U+2028 or ``\\r``, never a raw
    ``\\n``), ignores an unterminated tail and skips lines that do not parse.
    """
    return read_events_counted(steps_path, start)[0]


def events_of(run_dir: Path, start: int = 0) -> list[JSONObject]:
    """The events of the run in ``run_dir`` (its ``steps.jsonl``) from byte ``start``."""
    return read_events(run_dir / protocol.STEPS_FILE, start)


def steps_size(run_dir: Path) -> int:
    """How many bytes of events the run has written so far: where to read new ones from."""
    steps = run_dir / protocol.STEPS_FILE
    try:
        return steps.stat().st_size
    except OSError:
        return 0


def runtime_path(run_dir: Path) -> Path:
    """The run's ``runtime.json`` (there or not yet)."""
    return run_dir / protocol.RUNTIME_FILE


def steps_path(run_dir: Path) -> Path:
    """The run's ``steps.jsonl``, for a reader that follows it by byte offset."""
    return run_dir / protocol.STEPS_FILE


def output_path(run_dir: Path, stream: Stream) -> Path:
    """The run's captured ``stdout.log`` or ``stderr.log`` (a run started by a front end)."""
    return run_dir / (protocol.STDOUT_FILE if stream == "stdout" else protocol.STDERR_FILE)


def read_events_counted(steps_path: Path, start: int = 0) -> tuple[list[JSONObject], int]:
    """:func:`read_events` and how many whole lines were read (those that did not parse
    too): the number of the next line, as :class:`runner.store.tail.LineTailer` numbers them."""
    lines = _whole_lines(steps_path, start)
    events = []
    for line in lines:
        event = parse_event_line(line)
        if event is not None:
            events.append(event)
    return events, len(lines)


def _time(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return int(value)


def _lifecycle(steps_path: Path) -> tuple[int | None, int | None, protocol.RunOutcome | None]:
    """``(started t, finished t, outcome)``; only lines naming those kinds are parsed."""
    started: int | None = None
    finished: int | None = None
    outcome: protocol.RunOutcome | None = None
    for line in _whole_lines(steps_path):
        if b"run:started" not in line and b"run:finished" not in line:
            continue
        event = parse_event_line(line)
        if event is None:
            continue
        kind = event.get("kind")
        if kind in _STARTED_KINDS and started is None:
            started = _time(event.get("t"))
        elif kind in FINISHED_KINDS:
            t = _time(event.get("t"))
            value = as_outcome(event.get("outcome"))
            if t is not None and value is not None:
                finished, outcome = t, value
    return started, finished, outcome


# ---------------------------------------------------------------------------
# liveness
# ---------------------------------------------------------------------------


def int_field(manifest: JSONObject, key: str) -> int | None:
    value = manifest.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def runner_alive_by(manifest: JSONObject, run_dir: Path, now_ms: int) -> bool:
    pid = int_field(manifest, "pid")
    start = int_field(manifest, "pidStartTime")
    host = manifest.get("hostname")
    try:
        same_host = not isinstance(host, str) or host == socket.gethostname()
    except OSError:
        same_host = True
    if pid is not None and pid > 0 and same_host:
        if start is not None and Path("/proc/self/stat").exists():
            stat = read_proc_stat(pid)
            # a zombie has exited; a different start time is another process
            return stat is not None and stat[0] not in ("Z", "X", "x") and stat[1] == start
        if not pid_exists(pid):
            return False  # certainly dead; an existing pid may be reused: ask the heartbeat
    return _heartbeat_fresh(run_dir, now_ms)


def runner_alive(run_dir: Path, now_ms: int | None = None) -> bool:
    """Whether the runner writing ``run_dir`` still lives, without reading its steps:
    the manifest's pid (and start time), else a heartbeat younger than
    ``HEARTBEAT_STALE_SECONDS``. A finished run's runner is gone: ask ``run_meta``."""
    manifest = read_manifest(run_dir) or {}
    if now_ms is None:
        now_ms = time.time_ns() // 1_000_000
    return runner_alive_by(manifest, run_dir, now_ms)


def _heartbeat_fresh(run_dir: Path, now_ms: int) -> bool:
    for name in (protocol.HEARTBEAT_FILE, protocol.RUN_MANIFEST_FILE):
        try:
            mtime = (run_dir / name).stat().st_mtime
        except OSError:
            continue
        return now_ms / 1000 - mtime < protocol.HEARTBEAT_STALE_SECONDS
    return False


# ---------------------------------------------------------------------------
# RunMeta
# ---------------------------------------------------------------------------


def read_manifest(run_dir: Path) -> JSONObject | None:
    """The run's ``manifest.json`` as an object; ``None`` when missing or not one."""
    try:
        value = json.loads((run_dir / protocol.RUN_MANIFEST_FILE).read_bytes())
    except (OSError, ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def run_meta(run_dir: Path, now_ms: int | None = None) -> protocol.RunMeta | None:
    """The ``RunMeta`` of one run directory; ``None`` without a readable manifest."""
    manifest = read_manifest(run_dir)
    if manifest is None:
        return None
    kind = manifest.get("kind")
    ref = manifest.get("ref")
    manifest_started = _time(manifest.get("startedAt"))
    if kind not in ("scenario", "collection") or not isinstance(ref, str):
        return None
    if now_ms is None:
        now_ms = time.time_ns() // 1_000_000
    started, finished, outcome = _lifecycle(run_dir / protocol.STEPS_FILE)
    if started is None:
        started = manifest_started
    if started is None:
        return None
    status: protocol.RunStatus
    if outcome is not None:
        status = _STATUS_OF[outcome]
    elif runner_alive_by(manifest, run_dir, now_ms):
        status = "running"
    else:
        status = "interrupted"
    meta: protocol.RunMeta = {
        "runId": run_dir.name,
        "kind": "collection" if kind == "collection" else "scenario",
        "ref": ref,
        "startedAt": started,
        "finishedAt": finished,
        "durationMs": None if finished is None else finished - started,
        "status": status,
        "outcome": outcome,
    }
    parent = manifest.get("parentRunId")
    if isinstance(parent, str):
        meta["parentRunId"] = parent
    _add_links(meta, manifest)
    return meta


def _add_links(meta: protocol.RunMeta, manifest: JSONObject) -> None:
    """The manifest's additive links (a restart's ``restartOf``, a retry's ``attempt``
    and ``retryOf``), so every list of runs shows how runs follow each other."""
    restart_of = manifest.get("restartOf")
    if isinstance(restart_of, str):
        meta["restartOf"] = restart_of
    retry_of = manifest.get("retryOf")
    attempt = int_field(manifest, "attempt")
    if isinstance(retry_of, str) and attempt is not None:
        meta["retryOf"] = retry_of
        meta["attempt"] = attempt


# ---------------------------------------------------------------------------
# listing runs: newest first, a page at a time, through the run index
# ---------------------------------------------------------------------------

STATUSES: tuple[protocol.RunStatus, ...] = ("running", "passed", "failed", "aborted", "interrupted")
_ID_REST = re.compile(r"[0-9a-z]+-[0-9a-f]{6}")
_TAIL_OF = operator.itemgetter(slice(-15, None))
"""``tttttttt-rrrrrr``: the time (8 base-36 digits) and random suffix of a run id."""
_DASHES_OF = operator.itemgetter(slice(-16, None, 9))
"""The two characters that are ``--`` in every id ``make_run_id`` makes."""
_DASHES = itertools.repeat("--")
_RELIST_AFTER_NS = 1_000_000_000
"""A listing taken this long after the folder last changed stays right until its
modification time changes (a change in the same clock tick as the one before it could
leave the time as it was)."""
_REORDER_AT = 512
"""Above this many names gone or come between two listings, sort again."""


@dataclass(frozen=True)
class RunQuery:
    """Which runs a page holds: the newest ``limit`` (every one when ``None``) after the
    run ``before`` (a run id from the page before), of the scenario or collection
    ``ref``, with ``status``, the scenario runs of the collection run ``parent``."""

    limit: int | None = None
    before: str | None = None
    ref: str | None = None
    status: protocol.RunStatus | None = None
    parent: str | None = None

    def keeps(self, meta: protocol.RunMeta) -> bool:
        return (
            (self.ref is None or meta["ref"] == self.ref)
            and (self.status is None or meta["status"] == self.status)
            and (self.parent is None or meta.get("parentRunId") == self.parent)
        )


@dataclass(frozen=True)
class RunsPage:
    """One page of runs, newest first; ``more``: older runs match too (ask again with
    ``before=next_before``); ``total``: the run directories in the folder."""

    runs: list[protocol.RunMeta]
    more: bool
    total: int

    @property
    def next_before(self) -> str | None:
        return self.runs[-1]["runId"] if self.more and self.runs else None


def _indexed_meta(run_id: str, entry: IndexEntry) -> protocol.RunMeta | None:
    """The ``RunMeta`` of a finished run from its index lines, as :func:`run_meta` reads
    it from its directory; ``None`` for a run without a finish line."""
    if (
        entry.outcome is None
        or entry.finished_at is None
        or entry.kind is None
        or entry.ref is None
        or entry.started_at is None
    ):
        return None
    meta: protocol.RunMeta = {
        "runId": run_id,
        "kind": entry.kind,
        "ref": entry.ref,
        "startedAt": entry.started_at,
        "finishedAt": entry.finished_at,
        "durationMs": entry.finished_at - entry.started_at,
        "status": _STATUS_OF[entry.outcome],
        "outcome": entry.outcome,
    }
    if entry.parent is not None:
        meta["parentRunId"] = entry.parent
    if entry.restart_of is not None:
        meta["restartOf"] = entry.restart_of
    if entry.retry_of is not None and entry.attempt is not None:
        meta["retryOf"] = entry.retry_of
        meta["attempt"] = entry.attempt
    return meta


def _repair_lines(meta: protocol.RunMeta, entry: IndexEntry | None) -> list[bytes]:
    """The lines a finished run read from its directory lacks in the index."""
    run_id, outcome, finished_at = meta["runId"], meta["outcome"], meta["finishedAt"]
    if outcome is None or finished_at is None:
        return []  # not finished: read from its directory until it is
    lines = []
    retry_of, attempt = meta.get("retryOf"), meta.get("attempt")
    if entry is None:
        lines.append(
            started_line(
                run_id,
                kind=meta["kind"],
                ref=meta["ref"],
                started_at=meta["startedAt"],
                parent=meta.get("parentRunId"),
                restart_of=meta.get("restartOf"),
                retry_of=retry_of,
                attempt=attempt,
            )
        )
    elif retry_of is not None and attempt is not None and entry.retry_of is None:
        lines.append(linked_line(run_id, retry_of, attempt))
    lines.append(finished_line(run_id, finished_at, outcome))
    return lines


def _may_be_of(name: str, prefix: str) -> bool:
    """Whether the run directory ``name`` may be a run of the ref whose id segment and
    dash are ``prefix``: made by ``make_run_id`` from that ref, or a name it did not make."""
    if name.startswith(prefix) and _ID_REST.fullmatch(name, len(prefix)) is not None:
        return True
    return run_time(name) is None


class RunLister:
    """The runs of one folder, newest first, a page at a time.

    Newest first is by the time in the run's id (when its directory was made: the
    manifest's ``startedAt``), then by the id's random suffix; a directory whose name
    ``make_run_id`` did not make is placed by its manifest's ``startedAt``. The folder is
    listed for every page (not when it is unchanged since a listing taken well after its
    last change), and the runs a page shows are read from the run index
    (:mod:`runner.store.run_index`) when it has them finished, from their directories
    otherwise: a page costs about its own runs, not the folder's. Ordering the names is
    left to C (a slice of each name, ``heapq.nlargest`` for a first page); a lister kept
    (a viewer's) keeps them sorted between pages, and each ref's newest run for
    :meth:`latest`. Safe from any thread.
    """

    _shared: ClassVar[dict[Path, RunLister]] = {}
    _shared_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, runs_dir: Path, index: RunIndex | None = None) -> None:
        self.runs_dir = runs_dir
        self.index = index if index is not None else shared_index(runs_dir)
        self._lock = threading.Lock()
        self._names: set[str] = set()
        self._odd: dict[str, str] = {}
        """The names ``make_run_id`` did not shape, and their keys (from the manifest)."""
        self._order: list[tuple[str, str]] | None = None
        self._listed: tuple[int, int] | None = None
        self._served = 0
        self._resolving = False
        """Whether :meth:`latest` was asked: then new names are resolved to their refs."""
        self._unresolved: set[str] = set()
        self._ref_of: dict[str, tuple[str, str]] = {}
        self._latest: dict[tuple[str, str], tuple[str, str]] = {}
        self._dirty: set[tuple[str, str]] = set()

    @classmethod
    def of(cls, runs_dir: Path) -> RunLister:
        """This process's lister of ``runs_dir``."""
        with cls._shared_lock:
            lister = cls._shared.pop(runs_dir, None)
            if lister is None:
                lister = cls(runs_dir)
                while len(cls._shared) >= 16:
                    cls._shared.pop(next(iter(cls._shared)))
            cls._shared[runs_dir] = lister
            return lister

    # --- the folder --------------------------------------------------------------------

    def _key(self, name: str) -> str:
        """Where ``name`` sorts: ``tttttttt-rrrrrr``, the time and random suffix of an id
        ``make_run_id`` made (8 base-36 digits sort as their values), else its manifest's
        ``startedAt`` in the same digits."""
        if _DASHES_OF(name) == "--":
            return str(_TAIL_OF(name))
        key = self._odd.get(name)
        if key is None:
            manifest = read_manifest(self.runs_dir / name) or {}
            key = to_base36(max(_time(manifest.get("startedAt")) or 0, 0)).rjust(8, "0")
            key = self._odd[name] = f"{key}-{name}"
        return key

    def _relist(self) -> None:
        try:
            mtime = os.stat(self.runs_dir).st_mtime_ns
        except OSError:
            self._listed = None
            self._take(set())
            return
        listed = self._listed
        if listed is not None and listed[0] == mtime and listed[1] - mtime > _RELIST_AFTER_NS:
            return
        now = time.time_ns()
        try:
            found = os.listdir(self.runs_dir)
        except OSError:
            found = []
        names = set(found)
        if found and min(found) < "/":  # only then may a name start with "."
            names = {n for n in names if not n.startswith(".")}
        self._listed = (mtime, now)
        self._take(names)

    def _take(self, names: set[str]) -> None:
        """The folder's names now: the sorted order and each ref's newest run follow."""
        come = names - self._names if self._names else names
        gone = self._names - names if self._names else set()
        odd = list(itertools.compress(come, map(operator.ne, map(_DASHES_OF, come), _DASHES)))
        for name in odd:
            self._key(name)  # read its manifest once
        order = self._order
        if order is not None:
            if len(gone) + len(come) > _REORDER_AT:
                self._order = None
            else:
                for name in gone:
                    pair = (self._key(name), name)
                    at = bisect.bisect_left(order, pair)
                    if at < len(order) and order[at] == pair:
                        del order[at]
                for name in come:
                    bisect.insort(order, (self._key(name), name))
        for name in gone:
            self._odd.pop(name, None)
            ref = self._ref_of.pop(name, None)
            if ref is not None and self._latest.get(ref, ("", ""))[1] == name:
                self._dirty.add(ref)
        if self._resolving:
            self._unresolved -= gone
            self._unresolved |= come
        self._names = names

    def _newest_first(self, below: tuple[str, str] | None, hint: int | None) -> Iterator[str]:
        """The names older than ``below``, newest first. ``hint``: how many the caller
        expects to need; the first page of a lister takes them without sorting all."""
        if self._order is None and hint is not None and hint * 8 < len(self._names):
            shaped: Iterable[str] = self._names
            if self._odd:
                shaped = self._names.difference(self._odd)
            if below is not None:
                bound = below
                shaped = (n for n in shaped if (_TAIL_OF(n), n) < bound)
            top = [(str(_TAIL_OF(n)), n) for n in heapq.nlargest(hint, shaped, key=_TAIL_OF)]
            top += [(k, n) for n, k in self._odd.items() if below is None or (k, n) < below]
            top.sort(reverse=True)
            for _, name in top[:hint]:
                yield name
            if len(top) < hint:
                return
            below = top[hint - 1]
        if self._order is None:
            names = self._names
            self._order = sorted(zip(map(_TAIL_OF, names), names, strict=True))
            if self._odd:
                shaped_pairs = [p for p in self._order if p[1] not in self._odd]
                self._order = sorted([*shaped_pairs, *((k, n) for n, k in self._odd.items())])
        order = self._order
        end = len(order) if below is None else bisect.bisect_left(order, below)
        for at in range(end - 1, -1, -1):
            name = order[at][1]
            if name in self._names:
                yield name

    # --- a page ------------------------------------------------------------------------

    def page(self, query: RunQuery) -> RunsPage:
        """The runs ``query`` asks for, newest first."""
        now_ms = time.time_ns() // 1_000_000
        repairs: list[bytes] = []
        with self._lock:
            self.index.refresh()
            self._relist()
            below = self._cursor(query.before)
            floor = None
            if query.parent is not None:
                # A collection's scenario runs are made between its start and its end.
                made = run_time(query.parent)
                floor = to_base36(max((made or 0) - SLACK_MS, 0)).rjust(8, "0")
                parent = self.index.lookup(query.parent, made)
                end = None if parent is None else parent.finished_at
                if below is None and made is not None and end is not None and end >= made:
                    below = (to_base36(end + SLACK_MS).rjust(8, "0"), "")
            plain = query.ref is None and query.status is None and query.parent is None
            first = self._served == 0
            self._served += 1
            hint = query.limit + 1 if plain and first and query.limit is not None else None
            prefix = None if query.ref is None else sanitize_run_id_segment(query.ref) + "-"
            runs: list[protocol.RunMeta] = []
            more = False
            for name in self._newest_first(below, hint):
                if floor is not None and self._key(name) < floor:
                    break
                if prefix is not None and not _may_be_of(name, prefix):
                    continue
                meta = self._meta(name, now_ms, repairs)
                if meta is None or not query.keeps(meta):
                    continue
                if query.limit is not None and len(runs) >= query.limit:
                    more = True
                    break
                runs.append(meta)
            total = len(self._names)
        if repairs:
            note_lines(self.runs_dir, repairs)
        return RunsPage(runs, more, total)

    def latest(self) -> list[protocol.RunMeta]:
        """The newest run of each scenario and collection, newest first (the viewer's
        tree shows each scenario's). The first call reads every run's ref (from the
        index, else its directory); later calls only those of new runs."""
        now_ms = time.time_ns() // 1_000_000
        repairs: list[bytes] = []
        with self._lock:
            self.index.refresh()
            self._relist()
            if not self._resolving:
                self._resolving = True
                self._unresolved = set(self._names)
            if len(self._unresolved) > 1000:
                self.index.read_all()  # one pass over the file, not one per lookup
            for name in list(self._unresolved):
                ref = self._ref(name, now_ms, repairs)
                if ref is None:
                    continue  # no manifest yet (being made), or never: asked again
                self._unresolved.discard(name)
                self._ref_of[name] = ref
                pair = (self._key(name), name)
                if ref not in self._latest or self._latest[ref] < pair:
                    self._latest[ref] = pair
            if self._dirty:
                self._recount(self._dirty)
            newest = sorted(self._latest.values(), reverse=True)
            runs = [m for m in (self._meta(n, now_ms, repairs) for _, n in newest) if m]
        if repairs:
            note_lines(self.runs_dir, repairs)
        return runs

    def _ref(self, name: str, now_ms: int, repairs: list[bytes]) -> tuple[str, str] | None:
        entry = self.index.lookup(name, run_time(name))
        if entry is not None and entry.kind is not None and entry.ref is not None:
            return (entry.kind, entry.ref)
        meta = self._meta(name, now_ms, repairs)
        return None if meta is None else (meta["kind"], meta["ref"])

    def _recount(self, refs: set[tuple[str, str]]) -> None:
        """The newest run of refs whose newest run is gone, from the runs left."""
        for ref in refs:
            self._latest.pop(ref, None)
        for name, ref in self._ref_of.items():
            if ref in refs:
                pair = (self._key(name), name)
                if ref not in self._latest or self._latest[ref] < pair:
                    self._latest[ref] = pair
        refs.clear()

    def _cursor(self, before: str | None) -> tuple[str, str] | None:
        if before is None:
            return None
        if not before or any(c in before for c in "/\\\0") or before in (".", ".."):
            raise UsageError(f"before={before!r} is not a run id")
        return (self._key(before), before)

    def _meta(self, name: str, now_ms: int, repairs: list[bytes]) -> protocol.RunMeta | None:
        """A run's ``RunMeta``: from the index when it has the run finished, else from
        its directory (whose lines, once finished, are added to the index)."""
        entry = self.index.lookup(name, run_time(name))
        if entry is not None:
            meta = _indexed_meta(name, entry)
            if meta is not None:
                return meta
        meta = run_meta(self.runs_dir / name, now_ms)
        if meta is None or meta["outcome"] is None:
            return meta  # read from its directory until it has finished
        if entry is None:
            # Past the bound, lines written while the clock stood behind the run's id:
            # looked for once through the whole file before any are added again.
            entry = self.index.lookup(name, None)
            if entry is not None and _indexed_meta(name, entry) is not None:
                return meta
        repairs.extend(_repair_lines(meta, entry))
        return meta


def runs_page(runs_dir: Path, query: RunQuery) -> RunsPage:
    """A page of the runs under ``runs_dir`` (:class:`RunLister`)."""
    return RunLister.of(runs_dir).page(query)


def list_runs(runs_dir: Path) -> list[protocol.RunMeta]:
    """Every readable run under ``runs_dir``, newest first: the whole index is read, and
    the directories of the runs it lacks or has not finished (the product lists a page
    at a time, :func:`runs_page`; this is for tests and the scale bench)."""
    return runs_page(runs_dir, RunQuery()).runs


# ---------------------------------------------------------------------------
# finding a run
# ---------------------------------------------------------------------------


def find_run_dir(project: Project, run_id: str) -> Path:
    """The run directory for an id, or a unique prefix of one."""
    if not run_id or "/" in run_id or "\\" in run_id or run_id in (".", "..") or "\0" in run_id:
        raise UsageError(f"{run_id!r} is not a run id ('unotest runs' lists them)")
    runs = project.runs_dir
    exact = runs / run_id
    if (exact / protocol.RUN_MANIFEST_FILE).is_file():
        return exact
    matches = (
        sorted(p for p in runs.glob(f"{glob_escape(run_id)}*") if p.is_dir())
        if runs.is_dir()
        else []
    )
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        # The newest first: the run one means is most often the one just started.
        newest = sorted(matches, key=_started_at, reverse=True)
        shown = ", ".join(p.name for p in newest[:5])
        raise UsageError(
            f"'{run_id}' matches {len(matches)} runs (newest first: {shown}); give more of the id"
        )
    raise UsageError(f"no run '{run_id}' in {project.relative(runs)} ('unotest runs' lists them)")


def _started_at(run_dir: Path) -> float:
    try:
        return (run_dir / protocol.RUN_MANIFEST_FILE).stat().st_mtime
    except OSError:
        return 0.0


def glob_escape(text: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", text)


def is_collection_run(run_dir: Path) -> bool:
    return (read_manifest(run_dir) or {}).get("kind") == "collection"
