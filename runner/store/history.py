"""Run history: every finished ``e2e`` and ``collection`` run's envelopes, kept in
``unotest/.history/<runId>.json`` (one ordered JSON array a run, written atomically),
and what they answer: per scenario the last outcomes, pass rate, flaky count and
median duration, the medians a collection schedules by (longest first), and the run
directories history still points to (``unotest runs --prune`` keeps those).

The folder is bounded after every write (``history:`` in the config: ``maxAgeDays``,
``maxBytes``), oldest file first, so it never grows without limit.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from runner.files import atomic_write
from runner.project.config import HistoryConfig
from runner.project.root import Project
from runner.store.envelope import Envelope, read_envelopes

__all__ = [
    "HISTORY_SUBDIR",
    "SCENARIO_NOT_FOUND",
    "Outcome",
    "ScenarioHistory",
    "bound_history",
    "history_dir",
    "history_report",
    "load_history",
    "longest_first",
    "medians_ms",
    "referenced_run_ids",
    "save_history",
    "summarize",
    "summary_json",
]

HISTORY_SUBDIR = ".history"
STRIP_MARKS = {"passed": "✓", "flaky": "~", "failed": "✗", "skipped": "○", "aborted": "-"}
"""``aborted``: a person or a signal stopped the run (a debug session closed, Ctrl-C):
shown, but no failure of the scenario, so it counts in neither the pass rate nor the
failed count."""
_DAY_S = 24 * 60 * 60


def history_dir(project: Project) -> Path:
    return project.unotest_dir / HISTORY_SUBDIR


def save_history(
    project: Project, run_id: str, events: Sequence[Envelope], bounds: HistoryConfig
) -> Path:
    """Write one run's envelopes (atomically: a reader sees all of it or none), then
    bound the folder, never removing the file just written."""
    folder = history_dir(project)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{run_id}.json"
    data = json.dumps(list(events), ensure_ascii=False, allow_nan=False, indent=1)
    atomic_write(path, data.encode("utf-8") + b"\n")
    bound_history(folder, bounds, keep=path)
    return path


def _files(folder: Path) -> list[tuple[float, int, Path]]:
    """(mtime, size, path) of every history file, oldest first."""
    found: list[tuple[float, int, Path]] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return found
    for entry in entries:
        if entry.name.endswith(".json") and not entry.name.startswith("."):
            try:
                stat = entry.stat()
            except OSError:
                continue
            found.append((stat.st_mtime, stat.st_size, Path(entry.path)))
    found.sort()
    return found


def bound_history(
    folder: Path, bounds: HistoryConfig, keep: Path | None = None, now: float | None = None
) -> list[Path]:
    """Remove files older than ``maxAgeDays``, then the oldest until the folder is at
    most ``maxBytes`` (0 turns a bound off); the removed paths."""
    now = time.time() if now is None else now
    files = _files(folder)
    removed: list[Path] = []
    total = sum(size for _, size, _ in files)
    for mtime, size, path in files:
        if path == keep:
            continue
        too_old = bounds.max_age_days > 0 and now - mtime > bounds.max_age_days * _DAY_S
        too_big = bounds.max_bytes > 0 and total > bounds.max_bytes
        if not (too_old or too_big):
            continue
        try:
            path.unlink()
        except OSError:
            continue
        total -= size
        removed.append(path)
    return removed


@dataclass(frozen=True)
class Outcome:
    """One scenario's ``test_end`` in one saved run."""

    scenario: str
    status: str
    duration_ns: int
    run_ids: tuple[str, ...]
    saved_at: float
    title: str | None = None
    """The scenario's title then (``test_end.title``; older runs and ``e2e`` have none)."""


def load_history(project: Project) -> list[tuple[Path, list[Envelope]]]:
    """Every history file's envelopes, oldest first. A file that is not JSON (cut by a
    full disk) is skipped; one of another major version stops with one sentence."""
    loaded: list[tuple[Path, list[Envelope]]] = []
    for _, _, path in _files(history_dir(project)):
        try:
            value = json.loads(path.read_bytes())
        except (OSError, ValueError):
            continue
        loaded.append((path, read_envelopes(value, project.relative(path))))
    return loaded


SCENARIO_NOT_FOUND = "scenario not found"
"""The note of a name a collection lists that is no scenario: no history of its own."""


def outcomes(loaded: Iterable[tuple[Path, list[Envelope]]]) -> dict[str, list[Outcome]]:
    """Each scenario's outcomes, oldest first (a listed name that was no scenario has
    none: a typo in a collection is no scenario that never passes)."""
    found: dict[str, list[Outcome]] = {}
    for path, events in loaded:
        try:
            saved_at = path.stat().st_mtime
        except OSError:
            saved_at = 0.0
        for event in events:
            data = event["data"]
            name, status = data.get("name"), data.get("status")
            if event["type"] != "test_end" or not isinstance(name, str):
                continue
            if status == "skipped" and data.get("error_message") == SCENARIO_NOT_FOUND:
                continue
            if status == "failed" and data.get("outcome") == "aborted":
                status = "aborted"  # stopped, not failed (the report's status is failed)
            duration = data.get("duration_ns")
            ids = data.get("run_ids")
            title = data.get("title")
            found.setdefault(name, []).append(
                Outcome(
                    name,
                    str(status),
                    duration if isinstance(duration, int) else 0,
                    tuple(i for i in ids if isinstance(i, str)) if isinstance(ids, list) else (),
                    saved_at,
                    title if isinstance(title, str) else None,
                )
            )
    return found


@dataclass(frozen=True)
class ScenarioHistory:
    """What ``unotest history`` shows for one scenario."""

    scenario: str
    strip: str
    runs: int
    pass_rate: float | None
    flaky: int
    failed: int
    median_ms: float | None
    statuses: list[str] = field(default_factory=list)
    title: str | None = None
    """The newest title history saw for it (a renamed title shows as it is now)."""


def summarize(name: str, seen: Sequence[Outcome], last: int) -> ScenarioHistory:
    """The last ``last`` outcomes: the strip (oldest left), and over them the pass rate
    (passed or flaky, out of those that ran), flaky and failed counts, the median
    duration of those that ran."""
    recent = list(seen)[-last:] if last > 0 else list(seen)
    statuses = [o.status for o in recent]
    ran = [o for o in recent if o.status in ("passed", "flaky", "failed")]
    good = sum(1 for o in ran if o.status in ("passed", "flaky"))
    median = statistics.median(o.duration_ns for o in ran) / 1e6 if ran else None
    title = next((o.title for o in reversed(seen) if o.title is not None), None)
    return ScenarioHistory(
        name,
        "".join(STRIP_MARKS.get(s, "?") for s in statuses),
        len(recent),
        good / len(ran) if ran else None,
        statuses.count("flaky"),
        statuses.count("failed"),
        median,
        statuses,
        title,
    )


def summary_json(row: ScenarioHistory) -> dict[str, object]:
    """One scenario's summary as ``unotest history --json`` (and MCP) give it; ``title``
    is additive (``null`` until a run recorded one)."""
    return {
        "scenario": row.scenario,
        "title": row.title,
        "strip": row.strip,
        "statuses": row.statuses,
        "runs": row.runs,
        "passRate": row.pass_rate,
        "flaky": row.flaky,
        "failed": row.failed,
        "medianMs": row.median_ms,
    }


def history_report(
    project: Project, scenario: str | None = None, last: int = 10
) -> list[dict[str, object]]:
    """Every scenario's summary (or the one asked for; none without history), by name."""
    seen = outcomes(load_history(project))
    names = sorted(seen) if scenario is None else [scenario] if scenario in seen else []
    return [summary_json(summarize(name, seen[name], last)) for name in names]


def medians_ms(project: Project, last: int = 20) -> dict[str, float]:
    """Each scenario's median duration over its last runs (no history: absent)."""
    found: dict[str, float] = {}
    for name, seen in outcomes(load_history(project)).items():
        median = summarize(name, seen, last).median_ms
        if median is not None:
            found[name] = median
    return found


def longest_first(names: Sequence[str], medians: Mapping[str, float]) -> list[str]:
    """The order to start a collection's scenarios in: those with no history first
    (they may be the longest), then by median, longest first; ties keep their order."""
    unknown = [n for n in names if n not in medians]
    known = sorted((n for n in names if n in medians), key=lambda n: -medians[n])
    return unknown + known


def referenced_run_ids(project: Project) -> set[str]:
    """Every run id a history file names: the run (collection) itself, each attempt."""
    ids: set[str] = set()
    for path, events in load_history(project):
        ids.add(path.stem)
        for event in events:
            data = event["data"]
            for key in ("run_id", "runId"):
                value = data.get(key)
                if isinstance(value, str):
                    ids.add(value)
            listed = data.get("run_ids")
            if isinstance(listed, list):
                ids.update(i for i in listed if isinstance(i, str))
    return ids
