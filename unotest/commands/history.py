"""``unotest history [SCENARIO] [--json]``: what past runs say about each scenario.

Read from ``unotest/.history/`` (one file a finished ``e2e`` or ``collection`` run):
per scenario the last N outcomes as a strip (oldest left: ✓ passed, ~ flaky, ✗ failed,
○ skipped), the pass rate over those that ran (flaky counts as passed: it did pass),
the flaky count and the median duration.

``--export PATH`` writes each scenario's median instead, as a durations file
(``{"version": 1, "durations": {name: ms}}``, :mod:`runner.collection.shards`): a CI
machine with no history of its own balances its ``--shard`` by it (``--durations``).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from runner.collection.shards import durations_document
from runner.errors import UsageError
from runner.files import atomic_write
from runner.project.index_cache import load_summary
from runner.project.root import Project, find_project_root
from runner.store.history import (
    ScenarioHistory,
    load_history,
    medians_ms,
    outcomes,
    summarize,
    summary_json,
)
from runner.text import did_you_mean, printable, show_name
from unotest.console import json_dump, plural
from unotest.exit_codes import EXIT_OK

__all__ = ["history_command"]


def _percent(rate: float | None) -> str:
    return "-" if rate is None else f"{rate * 100:.0f}%"


def _seconds(ms: float | None) -> str:
    if ms is None:
        return "-"
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.1f} s"


def _table(rows: list[ScenarioHistory], last: int) -> str:
    header = ("SCENARIO", f"LAST {last}", "PASS", "FLAKY", "FAILED", "MEDIAN")
    cells = [
        (
            printable(r.scenario),
            r.strip,
            _percent(r.pass_rate),
            str(r.flaky),
            str(r.failed),
            _seconds(r.median_ms),
        )
        for r in rows
    ]
    widths = [max(len(row[i]) for row in (header, *cells)) for i in range(len(header))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in (header, *cells)
    )


def history_command(args: argparse.Namespace) -> int:
    """``unotest history [SCENARIO] [--json] [--last N] [--root DIR]``."""
    last: int = getattr(args, "last", 10)
    if last < 1:
        raise UsageError(f"--last {last}: must be at least 1")
    root = find_project_root(Path.cwd(), getattr(args, "root", None))
    project = Project(root)
    export: Path | None = getattr(args, "export", None)
    if export is not None:
        return _export(project, export, getattr(args, "scenario", None))
    seen = outcomes(load_history(project))
    wanted: str | None = getattr(args, "scenario", None)
    if wanted is not None and wanted not in seen:
        known = [meta["name"] for meta in load_summary(project).scenario_metas]
        if wanted not in known:  # a typo, not a scenario that never ran
            raise UsageError(
                f"no scenario named {show_name(wanted)}{did_you_mean(wanted, known)}; "
                "'unotest list' shows them"
            )
    names = sorted(seen) if wanted is None else [wanted] if wanted in seen else []
    rows = [summarize(name, seen[name], last) for name in names]
    if getattr(args, "json", False):
        print(json_dump([summary_json(row) for row in rows]))
        return EXIT_OK
    if not rows:
        what = f"for {show_name(wanted)} " if wanted is not None else ""
        print(f"no history {what}yet (every finished 'unotest e2e' or 'collection' adds to it)")
        return EXIT_OK
    print(_table(rows, last))
    return EXIT_OK


def _export(project: Project, path: Path, scenario: str | None) -> int:
    """Every scenario's median (over its last 20 runs, what a collection balances its
    shards and orders its scenarios by) as a durations file at ``path``."""
    if scenario is not None:
        raise UsageError("--export writes every scenario's median: give no SCENARIO with it")
    medians = medians_ms(project)
    text = json.dumps(durations_document(medians), ensure_ascii=False, indent=2) + "\n"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, text.encode("utf-8"))
    except OSError as err:
        raise UsageError(f"--export {path}: cannot write it: {err.strerror or err}") from None
    print(f"wrote the median durations of {plural(len(medians), 'scenario')} to {path}")
    return EXIT_OK
