"""``unotest merge-reports``: the JSON reports of a collection's shards as one run.

Each shard of a CI matrix writes its own version-1 JSON report (``--reporter
json=PATH``); its ``run_start`` carries our additive ``shard`` (``{current, total,
partition, scenarios}``). This module reads them, checks that they are the shards of
one run (one collection, every ``i/n`` once, split the same way), and folds them into
the envelopes one unsharded run would have written: ``run_start`` listing every
scenario in the collection's order, the webServer's ``before_all`` hooks as one, each
shard's scenarios with their ``retry``, ``output`` and ``test_end`` events, and a
``run_end`` whose counts are the merged ``test_end`` statuses. Every reporter (list,
JUnit, JSON, NDJSON) and history then read them as they read a run's.

A scenario several shards report (a setup scenario runs in every shard that runs any
other; a scenario not found, or with errors, is reported by every shard) is reported
once: the worst of its results (failed, then flaky, passed, skipped), the lowest shard
on a tie. The merged ``run_end.duration_ns`` is the longest shard's, the shards having
run side by side.

Every refusal is one sentence naming the file: a file that is not a report, a report
of another event protocol version (or a mix of versions), of an ``e2e`` run, of
another collection, a shard given twice or missing, shards split differently.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from runner.errors import EventProtocolError, UsageError
from runner.protocol import JSONObject
from runner.store import envelope
from runner.store.envelope import PROTOCOL_VERSION, Envelope, read_envelopes
from runner.text import one_line

__all__ = ["ShardReport", "check_shards", "load_reports", "merge", "merged_outcome", "report_paths"]

MAX_REPORT_BYTES = 512 * 1024 * 1024
"""A file larger than this is refused before it is read (a report of 100,000
scenarios with their steps is about 100 MB)."""
_RANK = {"failed": 0, "flaky": 1, "passed": 2, "skipped": 3}
"""Which result of a scenario several shards report is the merged one: the lowest."""


@dataclass(frozen=True)
class ShardReport:
    """One shard's report: its envelopes and what its ``run_start``/``run_end`` say."""

    shown: str
    """The file as the user named it, for messages."""
    events: list[Envelope]
    collection: str
    run_id: str | None
    shard: tuple[int, int] | None
    partition: str | None
    whole: list[str] | None
    """``shard.scenarios``: every scenario the unsharded run would list, in its order."""
    listed: list[str]
    outcome: str | None
    duration_ns: int

    @property
    def label(self) -> str:
        """``shard 2/3 (reports/2.json)``, or the file alone for a whole run."""
        if self.shard is None:
            return self.shown
        return f"shard {self.shard[0]}/{self.shard[1]} ({self.shown})"


def report_paths(given: Sequence[Path]) -> list[Path]:
    """Each file named, and every ``*.json`` under each folder named (sorted), once."""
    found: list[Path] = []
    for path in given:
        if path.is_dir():
            inside = sorted(p for p in path.rglob("*.json") if p.is_file())
            if not inside:
                raise UsageError(f"{one_line(str(path))} holds no .json report")
            found.extend(inside)
        elif path.exists():
            found.append(path)
        else:
            raise UsageError(f"{one_line(str(path))}: no such file or folder")
    unique: dict[Path, Path] = {}
    for path in found:
        unique.setdefault(path.resolve(), path)
    return list(unique.values())


def _raw(path: Path) -> list[object]:
    shown = one_line(str(path))
    try:
        if path.stat().st_size > MAX_REPORT_BYTES:
            raise UsageError(f"{shown} is larger than {MAX_REPORT_BYTES // 2**20} MB: no report")
        value = json.loads(path.read_bytes())
    except OSError as err:
        raise UsageError(f"{shown}: cannot read it: {err.strerror or err}") from None
    except (ValueError, RecursionError):
        raise UsageError(
            f"{shown} is not a unotest JSON report (not JSON; '--reporter json=PATH' writes one)"
        ) from None
    if not isinstance(value, list):
        raise UsageError(
            f"{shown} is not a unotest JSON report (expected a JSON array of event envelopes)"
        )
    return value


def _versions(value: list[object]) -> set[object]:
    return {item.get("protocol_version") for item in value if isinstance(item, dict)}


def load_reports(paths: Sequence[Path]) -> list[ShardReport]:
    """Every file read as a report; reports of another protocol version than ours, or of
    several versions, are refused in one sentence before any is merged."""
    raw = [(path, _raw(path)) for path in paths]
    versions = [(path, v) for path, value in raw for v in sorted(_versions(value), key=repr)]
    foreign = [(path, v) for path, v in versions if v != PROTOCOL_VERSION]
    if foreign:
        path, version = foreign[0]
        ours = [p for p, v in versions if v == PROTOCOL_VERSION]
        if ours:
            raise EventProtocolError(
                f"cannot merge reports of event protocol versions {PROTOCOL_VERSION} "
                f"({one_line(str(ours[0]))}) and {version!r} ({one_line(str(path))}): "
                f"this unotest reads version {PROTOCOL_VERSION}; make every shard's report "
                "with the same unotest"
            )
    return [_report(path, read_envelopes(value, one_line(str(path)))) for path, value in raw]


def _report(path: Path, events: list[Envelope]) -> ShardReport:
    shown = one_line(str(path))
    starts = [e["data"] for e in events if e["type"] == "run_start"]
    ends = [e["data"] for e in events if e["type"] == "run_end"]
    if not starts:
        raise UsageError(f"{shown} is not a unotest JSON report (it has no run_start event)")
    if not ends:
        raise UsageError(f"{shown} has no run_end: its run did not finish")
    start, end = starts[0], ends[-1]
    collection = start.get("collection")
    if not isinstance(collection, str):
        raise UsageError(
            f"{shown} is the report of a 'unotest e2e' run, not of a collection: "
            "merge-reports merges the reports of a collection's shards"
        )
    shard, partition, whole = _shard(shown, start.get("shard"))
    run_id = start.get("runId")
    listed = start.get("scenarios")
    duration = end.get("duration_ns")
    outcome = end.get("outcome")
    return ShardReport(
        shown,
        events,
        collection,
        run_id if isinstance(run_id, str) else None,
        shard,
        partition,
        whole,
        [n for n in listed if isinstance(n, str)] if isinstance(listed, list) else [],
        outcome if isinstance(outcome, str) else None,
        duration if isinstance(duration, int) and duration >= 0 else 0,
    )


def _shard(
    shown: str, value: object
) -> tuple[tuple[int, int] | None, str | None, list[str] | None]:
    """``run_start.shard`` as (i, n), its partition and the whole run's scenarios."""
    if value is None:
        return None, None, None
    current = value.get("current") if isinstance(value, dict) else None
    total = value.get("total") if isinstance(value, dict) else None
    good = isinstance(current, int) and isinstance(total, int) and 1 <= current <= total
    if not isinstance(value, dict) or not good:
        raise UsageError(
            f"{shown}: its run_start's shard is not {{current, total}} with "
            "1 <= current <= total, as 'unotest collection --shard i/n' writes it"
        )
    assert isinstance(current, int) and isinstance(total, int)
    partition = value.get("partition")
    whole = value.get("scenarios")
    return (
        (current, total),
        partition if isinstance(partition, str) else None,
        [n for n in whole if isinstance(n, str)] if isinstance(whole, list) else None,
    )


def check_shards(reports: Sequence[ShardReport]) -> list[ShardReport]:
    """The reports as the shards of one run, first to last; anything else refused."""
    if not reports:
        raise UsageError("no report to merge: name the shards' JSON reports or their folder")
    first = reports[0]
    for report in reports:
        if report.collection != first.collection:
            raise UsageError(
                f"{first.shown} is a report of collection '{one_line(first.collection)}' and "
                f"{report.shown} of '{one_line(report.collection)}': merge the shards of one "
                "collection's run"
            )
    whole = [r for r in reports if r.shard is None]
    sharded = sorted((r for r in reports if r.shard is not None), key=_index)
    name = one_line(first.collection)
    if whole and sharded:
        raise UsageError(
            f"{whole[0].shown} is a whole run of collection '{name}' (no --shard) and "
            f"{sharded[0].label} is a shard: merge the shards of one run"
        )
    if len(whole) > 1:
        raise UsageError(
            f"{whole[0].shown} and {whole[1].shown} are both whole runs of collection "
            f"'{name}' (no --shard): merge the shards of one run"
        )
    if whole:
        return whole
    total = _total(sharded[0])
    for report in sharded:
        if _total(report) != total:
            raise UsageError(
                f"{sharded[0].label} and {report.label} are not of one split "
                "(the shards of one run are i/n with the same n)"
            )
    for before, after in itertools.pairwise(sharded):
        if _index(before) == _index(after):
            raise UsageError(
                f"{before.shown} and {after.shown} are both shard {_index(after)}/{total}: "
                "give each shard's report once"
            )
    missing = sorted(set(range(1, total + 1)) - {_index(r) for r in sharded})
    if missing:
        names = " and ".join(f"{i}/{total}" for i in missing)
        given = ", ".join(r.label for r in sharded)
        verb = "is" if len(missing) == 1 else "are"
        raise UsageError(
            f"shard{'s' if len(missing) > 1 else ''} {names} {verb} missing "
            f"(given: {given}): merge the reports of every shard"
        )
    for report in sharded[1:]:
        if report.partition != sharded[0].partition:
            raise UsageError(
                f"{sharded[0].label} and {report.label} were split differently (balanced "
                "by other durations), so a scenario may have run twice or never: give every "
                "shard the same --durations file ('unotest history --export PATH')"
            )
    return sharded


def _index(report: ShardReport) -> int:
    return report.shard[0] if report.shard is not None else 0


def _total(report: ShardReport) -> int:
    return report.shard[1] if report.shard is not None else 1


def _scenario_of(event: Envelope) -> str | None:
    """The scenario an event belongs to (``test_start``/``retry``/``test_end``: its
    ``name``; ``output`` and a test's ``hook``: ``test_name``)."""
    data = event["data"]
    key = "name" if event["type"] in ("test_start", "test_end", "retry") else "test_name"
    value = data.get(key)
    return value if isinstance(value, str) else None


def _chosen(reports: Sequence[ShardReport]) -> dict[str, int]:
    """Each scenario's shard (an index into ``reports``): the one with its worst result."""
    results: dict[str, list[tuple[int, int]]] = {}
    for at, report in enumerate(reports):
        for event in report.events:
            name = _scenario_of(event)
            if event["type"] == "test_end" and name is not None:
                rank = _RANK.get(str(event["data"].get("status")), len(_RANK))
                results.setdefault(name, []).append((rank, at))
    return {name: min(found)[1] for name, found in results.items()}


def _order(reports: Sequence[ShardReport], names: Iterable[str]) -> list[str]:
    """Every scenario, in the order the unsharded run would list them (``shard.
    scenarios``), those it does not name after, as they first appear."""
    whole = next((r.whole for r in reports if r.whole), [])
    place = {name: at for at, name in reversed(list(enumerate(whole)))}
    seen: dict[str, int] = {}
    for name in [*(n for r in reports for n in r.listed), *names]:
        seen.setdefault(name, len(seen))
    return sorted(seen, key=lambda n: (place.get(n, len(place)), seen[n]))


def merged_outcome(reports: Sequence[ShardReport], events: Sequence[Envelope]) -> str:
    """``aborted`` when a shard was, else ``failed`` when a shard or a scenario failed."""
    outcomes = {r.outcome for r in reports}
    if "aborted" in outcomes:
        return "aborted"
    failed = any(e["type"] == "test_end" and e["data"].get("status") == "failed" for e in events)
    return "failed" if failed or "failed" in outcomes else "completed"


def merged_run_id(reports: Sequence[ShardReport]) -> str:
    """``<collection>-merged-<digest of the shards' runs>``: merging the same reports
    again gives the same id (history keeps it once); safe as a file name."""
    digest = hashlib.sha256()
    for report in reports:
        digest.update((report.run_id or json.dumps(report.events, sort_keys=True)).encode())
        digest.update(b"\0")
    safe = re.sub(r"[^A-Za-z0-9_-]", "-", reports[0].collection)[:60].strip("-") or "collection"
    return f"{safe}-merged-{digest.hexdigest()[:12]}"


def merge(reports: Sequence[ShardReport]) -> list[Envelope]:
    """The envelopes of one run made of ``reports`` (as :func:`check_shards` orders them)."""
    collection = reports[0].collection
    chosen = _chosen(reports)
    run_id = merged_run_id(reports)
    merged: list[Envelope] = []
    hooks: list[JSONObject] = []
    for at, report in enumerate(reports):
        for event in report.events:
            kind, data = event["type"], event["data"]
            if kind in ("run_start", "run_end", "suite_start", "suite_end"):
                continue
            if kind == "hook" and data.get("test_name") is None:
                hooks.append(data)  # the webServer's before_all: one for the run, below
                continue
            name = _scenario_of(event)
            if name is not None and chosen.get(name, at) != at:
                continue  # another shard's result of this scenario is the merged one
            merged.append(event)
    order = _order(reports, chosen)
    shards: list[JSONObject] = [
        {"current": r.shard[0], "total": r.shard[1], "runId": r.run_id}
        for r in reports
        if r.shard is not None
    ]
    extra: JSONObject = {
        "collection": collection,
        "runId": run_id,
        "scenarios": order,
        "mergedFrom": shards or [{"runId": r.run_id} for r in reports],
    }
    head = [envelope.run_start(len(order), extra=extra), envelope.suite_start(collection)]
    head.extend(_hook(hooks))
    counts = dict.fromkeys(("passed", "flaky", "failed", "skipped"), 0)
    for event in merged:
        status = event["data"].get("status")
        if event["type"] == "test_end" and isinstance(status, str) and status in counts:
            counts[status] += 1
    duration = max(r.duration_ns for r in reports)
    outcome = merged_outcome(reports, merged)
    end_extra: JSONObject = {"outcome": outcome, "collection": collection, "runId": run_id}
    tail = [envelope.suite_end(collection), envelope.run_end(counts, duration, extra=end_extra)]
    return [*head, *merged, *tail]


def _hook(hooks: Sequence[JSONObject]) -> list[Envelope]:
    """The shards' webServer starts as one ``before_all``: failed with the first error
    when one failed, the longest start's duration."""
    if not hooks:
        return []
    failed = next((h for h in hooks if h.get("status") == "failed"), None)
    durations = [h.get("duration_ns") for h in hooks]
    longest = max((d for d in durations if isinstance(d, int)), default=0)
    message = failed.get("error_message") if failed is not None else None
    return [
        envelope.hook(
            "before_all",
            "failed" if failed is not None else "passed",
            longest,
            suite=str(hooks[0].get("suite") or "") or None,
            error_message=message if isinstance(message, str) else None,
        )
    ]
