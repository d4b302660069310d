"""``unotest runs``: past and running runs with their status, newest first.

``--limit N`` reads about N runs, whatever the number of run directories: the names are
listed, the newest N read from the run index (or their directories) by
:func:`runner.store.run_list.runs_page`.

``--prune`` with ``--older-than DAYS`` and/or ``--keep N`` removes old run directories
and their failure bundles, keeping those history points to (:mod:`runner.store.prune`).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from runner import protocol
from runner.errors import UsageError
from runner.project.root import Project, find_project_root
from runner.store.run_list import RunQuery, runs_page
from runner.text import printable
from unotest.console import json_dump
from unotest.exit_codes import EXIT_OK

__all__ = ["runs_command"]


def _local_time(ms: int) -> str:
    try:
        # time, not datetime: the same local time, without datetime's import (3 ms)
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ms / 1000))
    except (OverflowError, OSError, ValueError):
        return "?"


def _duration(ms: float | None) -> str:
    if ms is None:
        return "-"
    if ms < 1000:
        return f"{max(ms, 0):.0f} ms"
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m {secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m"


def _table(metas: list[protocol.RunMeta]) -> str:
    header = ("RUN ID", "KIND", "REF", "STATUS", "STARTED", "DURATION")
    rows = [
        (
            printable(m["runId"]),
            m["kind"],
            printable(m["ref"]),
            m["status"],
            _local_time(m["startedAt"]),
            _duration(m["durationMs"]),
        )
        for m in metas
    ]
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in (header, *rows)
    )


def _prune(args: argparse.Namespace, project: Project) -> int:
    older: float | None = getattr(args, "older_than", None)
    keep: int | None = getattr(args, "keep", None)
    if older is None and keep is None:
        raise UsageError("--prune needs --older-than DAYS and/or --keep N")
    if older is not None and not older >= 0:
        raise UsageError(f"--older-than {older}: must be 0 or more days")
    if keep is not None and keep < 0:
        raise UsageError(f"--keep {keep}: must be 0 or more")
    # Here, not at the top: history's and the config's imports cost a listing 40 ms.
    from runner.store.prune import prune_runs

    result = prune_runs(project, older, keep)
    if getattr(args, "json", False):
        print(
            json_dump(
                {
                    "removed": result.removed,
                    "bundles": result.bundles,
                    "keptForHistory": result.kept_for_history,
                }
            )
        )
        return EXIT_OK
    kept = len(result.kept_for_history)
    print(
        f"removed {len(result.removed)} run(s) and {len(result.bundles)} failure bundle(s)"
        + (f"; kept {kept} that history points to" if kept else "")
    )
    return EXIT_OK


def runs_command(args: argparse.Namespace) -> int:
    """``unotest runs [--json] [--root DIR] [--limit N] [--prune ...]``."""
    limit: int | None = getattr(args, "limit", None)
    if limit is not None and limit < 1:
        raise UsageError(f"--limit {limit}: must be at least 1")
    if not getattr(args, "prune", False) and (
        getattr(args, "older_than", None) is not None or getattr(args, "keep", None) is not None
    ):
        raise UsageError("--older-than and --keep go with --prune")
    root = find_project_root(Path.cwd(), getattr(args, "root", None))
    project = Project(root)
    if getattr(args, "prune", False):
        return _prune(args, project)
    page = runs_page(project.runs_dir, RunQuery(limit=limit))
    metas = page.runs
    if getattr(args, "json", False):
        print(json_dump(metas))
        return EXIT_OK
    if not metas:
        where = project.relative(project.runs_dir)
        print(f"no runs yet in {where} (start one with 'unotest e2e <scenario>')")
        return EXIT_OK
    print(_table(metas))
    if page.more:
        print(f"({len(metas)} of {page.total} runs shown)")
    sys.stdout.flush()
    return EXIT_OK
