"""Listing runs newest first, a page at a time (:class:`RunLister`, :func:`runs_page`):
what ``unotest runs``, the viewer's Runs list, MCP ``list_runs`` and a prune ask for.

The run directories' names are listed, the newest ordered by the time in their ids,
and each run a page shows is read from the run index (:mod:`runner.store.run_index`)
when it has the run finished there, from its directory otherwise: a page costs about
its own runs, not the folder's.

Listing 100,000 names still costs a process about 40 ms and ordering them 20 ms more,
more than the rest of ``unotest runs --limit 20``. So the newest names of a listing are
kept for the next process (``unotest/.cache/runs-listing.json``, :class:`KeptListing`)
once the listing was taken well after the folder's last change: a first page is read
from it while the folder's modification time (and inode, link count) say that no run
directory was added or removed since. Like the run index, it is a cache, never the
truth: a folder changed since is listed again.
"""

from __future__ import annotations

import bisect
import contextlib
import heapq
import itertools
import json
import operator
import os
import re
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from runner import protocol
from runner.errors import RunWriteError, UsageError
from runner.files import atomic_write
from runner.protocol import sanitize_run_id_segment, to_base36
from runner.store import runs
from runner.store.run_index import (
    SLACK_MS,
    IndexEntry,
    RunIndex,
    finished_line,
    linked_line,
    note_lines,
    run_time,
    shared_index,
    started_line,
)

__all__ = [
    "LISTING_FILE",
    "STATUSES",
    "KeptListing",
    "RunLister",
    "RunQuery",
    "RunsPage",
    "list_runs",
    "runs_page",
]

STATUSES: tuple[protocol.RunStatus, ...] = ("running", "passed", "failed", "aborted", "interrupted")
_ID_REST = re.compile(r"[0-9a-z]+-[0-9a-f]{6}")
_TAIL_OF = operator.itemgetter(slice(-15, None))
"""``tttttttt-rrrrrr``: the time (8 base-36 digits) and random suffix of a run id."""
_DASHES_OF = operator.itemgetter(slice(-16, None, 9))
"""The two characters that are ``--`` in every id ``make_run_id`` makes."""
_DASHES = itertools.repeat("--")
_RELIST_AFTER_NS = 2_100_000_000
"""A listing taken this long after the folder last changed stays right until its
modification time changes: a change in the same tick of the file system's clock as the
one before it could leave the time as it was, and some file systems stamp whole seconds
(ext3, HFS+) or two (FAT), with a clock a few milliseconds behind ``time.time_ns()``."""
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
        "status": runs.STATUS_OF[entry.outcome],
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


# ---------------------------------------------------------------------------
# the newest names of a listing, kept for the next process
# ---------------------------------------------------------------------------

LISTING_FILE = "runs-listing.json"
"""In ``unotest/.cache/`` (beside the run index): the newest names of a listing."""
_KEPT_NAMES = 1000
"""How many of the newest names a kept listing holds: a first page of up to this many
runs is read from it."""

Stamp = tuple[int, int, int, int]
"""A folder's device, inode, modification time (ns) and link count: a run directory
added or removed changes its modification time."""


def _stamp(runs_dir: Path) -> Stamp | None:
    try:
        stat = os.stat(runs_dir)
    except OSError:
        return None
    return (stat.st_dev, stat.st_ino, stat.st_mtime_ns, stat.st_nlink)


def _settled(stamp: Stamp, listed_at_ns: int) -> bool:
    """Whether a listing taken at ``listed_at_ns`` holds until the folder's modification
    time changes: taken well after the folder's last change, a later change cannot leave
    the time as it was (the clock tick a file system stamps may be coarse)."""
    return listed_at_ns - stamp[2] > _RELIST_AFTER_NS


def _listing_path(runs_dir: Path) -> Path:
    return runs_dir.parent / ".cache" / LISTING_FILE


def _pair(value: object) -> tuple[str, str] | None:
    """A kept ``[key, name]`` pair; ``None`` for anything a listing could not hold."""
    if type(value) is not list or len(value) != 2:
        return None
    key, name = value
    if type(key) is not str or type(name) is not str or not name or name.startswith("."):
        return None
    if "/" in name or "\\" in name or "\0" in name:
        return None
    return (key, name)


@dataclass(frozen=True)
class KeptListing:
    """The newest names of a listing of a runs folder taken well after the folder last
    changed (``stamp``), kept in ``unotest/.cache/runs-listing.json`` for the next
    process: ``newest`` as ``(key, name)`` pairs, newest first; ``total``, how many names
    the listing had."""

    stamp: Stamp
    total: int
    newest: list[tuple[str, str]]

    @classmethod
    def read(cls, runs_dir: Path, stamp: Stamp) -> KeptListing | None:
        """The listing kept for ``runs_dir`` if the folder is still as it was then
        (``stamp``, its stamp now); ``None`` otherwise, or when the file is unreadable."""
        try:
            data = json.loads(_listing_path(runs_dir).read_bytes())
        except (OSError, ValueError, RecursionError):
            return None
        if type(data) is not dict or data.get("version") != 1 or data.get("folder") != [*stamp]:
            return None
        listed_at, total, newest = data.get("listedAt"), data.get("total"), data.get("newest")
        if type(listed_at) is not int or not _settled(stamp, listed_at):
            return None
        if type(total) is not int or type(newest) is not list or not 0 <= len(newest) <= total:
            return None
        pairs = [_pair(value) for value in newest]
        if any(pair is None for pair in pairs):
            return None
        return cls(stamp, total, [pair for pair in pairs if pair is not None])

    def write(self, runs_dir: Path, listed_at_ns: int) -> None:
        """Kept for the next process; a listing not kept (a read-only project, a full
        disk) only costs that process a listing."""
        record = {
            "version": 1,
            "folder": [*self.stamp],
            "listedAt": listed_at_ns,
            "total": self.total,
            "newest": self.newest,
        }
        data = json.dumps(record, ensure_ascii=True, separators=(",", ":")).encode("ascii")
        path = _listing_path(runs_dir)
        with contextlib.suppress(OSError, RunWriteError):
            path.parent.mkdir(exist_ok=True)
            atomic_write(path, data)

    def first(self, count: int) -> list[tuple[str, str]] | None:
        """The newest ``count`` ``(key, name)`` pairs, or ``None`` when it does not hold
        that many and the folder has more."""
        if count > len(self.newest) and len(self.newest) < self.total:
            return None
        return self.newest[:count]


class RunLister:
    """The runs of one folder, newest first, a page at a time.

    Newest first is by the time in the run's id (when its directory was made: the
    manifest's ``startedAt``), then by the id's random suffix; a directory whose name
    ``make_run_id`` did not make is placed by its manifest's ``startedAt``. The folder is
    listed for every page (not when it is unchanged since a listing taken well after its
    last change; a lister's first page is read from the :class:`KeptListing` while that
    still holds), and the runs a page shows are read from the run index
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
        self._listing: list[str] = []
        """The folder's run directories as last listed (the order ``os.listdir`` gave:
        ``heapq.nlargest`` walks a list several times faster than a set)."""
        self._name_set: set[str] | None = set()
        """The same names as a set, made when first asked (:attr:`_names`)."""
        self._odd: dict[str, str] = {}
        """The names ``make_run_id`` did not shape, and their keys (from the manifest)."""
        self._order: list[tuple[str, str]] | None = None
        self._listed: tuple[Stamp, int] | None = None
        """The folder's stamp when last listed, and when (ns)."""
        self._kept: Stamp | None = None
        """The folder's stamp of the :class:`KeptListing` known to be on disk."""
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

    @property
    def _names(self) -> set[str]:
        if self._name_set is None:
            self._name_set = set(self._listing)
        return self._name_set

    # --- the folder --------------------------------------------------------------------

    def _key(self, name: str) -> str:
        """Where ``name`` sorts: ``tttttttt-rrrrrr``, the time and random suffix of an id
        ``make_run_id`` made (8 base-36 digits sort as their values), else its manifest's
        ``startedAt`` in the same digits."""
        if _DASHES_OF(name) == "--":
            return str(_TAIL_OF(name))
        key = self._odd.get(name)
        if key is None:
            manifest = runs.read_manifest(self.runs_dir / name) or {}
            key = to_base36(max(runs.as_time(manifest.get("startedAt")) or 0, 0)).rjust(8, "0")
            key = self._odd[name] = f"{key}-{name}"
        return key

    def _relist(self) -> None:
        stamp = _stamp(self.runs_dir)
        if stamp is None:
            self._listed = None
            self._take([])
            return
        listed = self._listed
        if listed is not None and listed[0] == stamp and _settled(stamp, listed[1]):
            return
        now = time.time_ns()
        try:
            found = os.listdir(self.runs_dir)
        except OSError:
            found = []
        if found and min(found) < "/":  # only then may a name start with "."
            found = [n for n in found if not n.startswith(".")]
        self._listed = (stamp, now)
        self._take(found)

    def _keep(self) -> None:
        """The newest names of a settled listing kept for the next process, once for
        each state of the folder."""
        listed = self._listed
        if listed is None or listed[0] == self._kept or not _settled(*listed):
            return
        self._kept = listed[0]
        if self._order is not None:
            newest = [pair for pair in self._order[-_KEPT_NAMES:] if pair[1] in self._names]
            newest.reverse()
        else:
            newest = self._newest_pairs(_KEPT_NAMES, None)
        KeptListing(listed[0], len(self._listing), newest).write(self.runs_dir, listed[1])

    def _kept_page(self, count: int) -> tuple[list[tuple[str, str]], int] | None:
        """The newest ``count`` ``(key, name)`` pairs and how many names the folder has,
        from the listing kept by an earlier process while the folder is as it was then;
        ``None`` otherwise."""
        stamp = _stamp(self.runs_dir)
        kept = None if stamp is None else KeptListing.read(self.runs_dir, stamp)
        if kept is None:
            return None
        self._kept = kept.stamp
        pairs = kept.first(count)
        return None if pairs is None else (pairs, kept.total)

    def _kept_then_listed(
        self, pairs: list[tuple[str, str]], total: int, hint: int
    ) -> Iterator[str]:
        """The kept names, newest first, then, when the folder has more, the older names
        of a listing of it (below the last kept one). A page may need more names than
        the ``limit + 1`` kept ones it asked for: a name with no run in it (a directory
        made and never written: its runner killed before the manifest) is skipped, and
        the runs after it still fill the page and tell whether there are more."""
        for _, name in pairs:
            yield name
        if len(pairs) < total:
            self._relist()
            self._keep()
            yield from self._newest_first(pairs[-1] if pairs else None, hint)

    def _take(self, listing: list[str]) -> None:
        """The folder's names now: the sorted order and each ref's newest run follow."""
        if not self._names and self._order is None and not self._resolving:
            # The first listing (a CLI command's only one): nothing to follow, and the
            # set is made only if asked for.
            shapes = map(operator.ne, map(_DASHES_OF, listing), _DASHES)
            for name in itertools.compress(listing, shapes):
                self._key(name)  # an odd name: its manifest read once
            self._listing, self._name_set = listing, None
            return
        names = set(listing)
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
        self._listing, self._name_set = listing, names

    def _newest_first(self, below: tuple[str, str] | None, hint: int | None) -> Iterator[str]:
        """The names older than ``below``, newest first. ``hint``: how many the caller
        expects to need; the first page of a lister takes them without sorting all."""
        if self._order is None and hint is not None and hint * 8 < len(self._listing):
            top = self._newest_pairs(hint, below)
            for _, name in top:
                yield name
            if len(top) < hint:
                return
            below = top[-1]
        if self._order is None:
            names = self._listing
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

    def _newest_pairs(self, count: int, below: tuple[str, str] | None) -> list[tuple[str, str]]:
        """The ``count`` newest ``(key, name)`` pairs older than ``below``, newest first,
        without sorting every name."""
        names: Iterable[str] = self._listing
        if below is not None:
            bound = below
            names = (n for n in names if (_TAIL_OF(n), n) < bound)
        # Of the names ranked by their tails, at most len(odd) are odd: dropped here, as
        # they rank by their manifests' times.
        odd = self._odd
        ranked = heapq.nlargest(count + len(odd), names, key=_TAIL_OF)
        top = [(str(_TAIL_OF(n)), n) for n in ranked if n not in odd]
        top += [(k, n) for n, k in odd.items() if below is None or (k, n) < below]
        top.sort(reverse=True)
        return top[:count]

    # --- a page ------------------------------------------------------------------------

    def page(self, query: RunQuery) -> RunsPage:
        """The runs ``query`` asks for, newest first."""
        now_ms = time.time_ns() // 1_000_000
        repairs: list[bytes] = []
        with self._lock:
            self.index.refresh()
            plain = query.ref is None and query.status is None and query.parent is None
            first = self._served == 0
            self._served += 1
            hint = query.limit + 1 if plain and first and query.limit is not None else None
            kept = None
            if hint is not None and query.before is None and self._listed is None:
                kept = self._kept_page(hint)
            if kept is None:
                self._relist()
                self._keep()
            below, floor = self._bounds(query)
            if kept is not None and hint is not None:
                names = self._kept_then_listed(kept[0], kept[1], hint)
            else:
                names = self._newest_first(below, hint)
            prefix = None if query.ref is None else sanitize_run_id_segment(query.ref) + "-"
            found: list[protocol.RunMeta] = []
            more = False
            for name in names:
                if floor is not None and self._key(name) < floor:
                    break
                if prefix is not None and not _may_be_of(name, prefix):
                    continue
                meta = self._meta(name, now_ms, repairs)
                if meta is None or not query.keeps(meta):
                    continue
                if query.limit is not None and len(found) >= query.limit:
                    more = True
                    break
                found.append(meta)
            # Listed after all when the kept names ran out (``_kept_then_listed``).
            total = kept[1] if kept is not None and self._listed is None else len(self._listing)
        if repairs:
            note_lines(self.runs_dir, repairs)
        return RunsPage(found, more, total)

    def _bounds(self, query: RunQuery) -> tuple[tuple[str, str] | None, str | None]:
        """Where a page starts (below this key and name) and the key it stops at."""
        below = self._cursor(query.before)
        if query.parent is None:
            return below, None
        # A collection's scenario runs are made between its start and its end.
        made = run_time(query.parent)
        floor = to_base36(max((made or 0) - SLACK_MS, 0)).rjust(8, "0")
        parent = self.index.lookup(query.parent, made)
        end = None if parent is None else parent.finished_at
        if below is None and made is not None and end is not None and end >= made:
            below = (to_base36(end + SLACK_MS).rjust(8, "0"), "")
        return below, floor

    def latest(self) -> list[protocol.RunMeta]:
        """The newest run of each scenario and collection, newest first (the viewer's
        tree shows each scenario's). The first call reads every run's ref (from the
        index, else its directory); later calls only those of new runs."""
        now_ms = time.time_ns() // 1_000_000
        repairs: list[bytes] = []
        with self._lock:
            self.index.refresh()
            self._relist()
            self._keep()
            if not self._resolving:
                self._resolving = True
                self._unresolved = set(self._names)
            # Many to resolve (a viewer's first call): every ref from one pass over the
            # index's start lines, not a lookup each; a run it lacks, from its directory.
            known = self.index.start_refs() if len(self._unresolved) > 1000 else None
            for name in list(self._unresolved):
                ref: tuple[str, str] | None = known.get(name) if known is not None else None
                if ref is None:
                    ref = self._ref(name, now_ms, repairs, indexed=known is None)
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

    def _ref(
        self, name: str, now_ms: int, repairs: list[bytes], *, indexed: bool = True
    ) -> tuple[str, str] | None:
        """A run's kind and ref: from the index, else its directory. ``indexed``
        ``False``: the index is known to lack it (``start_refs``), so it is not read
        back for it."""
        if not indexed:
            meta = runs.run_meta(self.runs_dir / name, now_ms)
            if meta is None:
                return None
            repairs.extend(_repair_lines(meta, None))
            return (meta["kind"], meta["ref"])
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
        meta = runs.run_meta(self.runs_dir / name, now_ms)
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
