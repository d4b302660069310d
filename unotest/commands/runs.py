"""``unotest runs``: past and running runs with their status, newest first."""

from __future__ import annotations

import argparse
import sys
from datetime import datetime
from pathlib import Path

from runner import protocol
from runner.errors import UsageError
from runner.project import Project, find_project_root
from runner.runs import list_runs
from runner.text import printable
from unotest.console import json_dump
from unotest.exit_codes import EXIT_OK

__all__ = ["runs_command"]


def _local_time(ms: int) -> str:
    try:
        return datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M:%S")
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


def runs_command(args: argparse.Namespace) -> int:
    """``unotest runs [--json] [--root DIR] [--limit N]``."""
    limit: int | None = getattr(args, "limit", None)
    if limit is not None and limit < 1:
        raise UsageError(f"--limit {limit}: must be at least 1")
    root = find_project_root(Path.cwd(), getattr(args, "root", None))
    project = Project(root)
    metas = list_runs(project.runs_dir)
    total = len(metas)
    if limit is not None:
        metas = metas[:limit]
    if getattr(args, "json", False):
        print(json_dump(metas))
        return EXIT_OK
    if not metas:
        where = project.relative(project.runs_dir)
        print(f"no runs yet in {where} (start one with 'unotest e2e <scenario>')")
        return EXIT_OK
    print(_table(metas))
    if total > len(metas):
        print(f"({len(metas)} of {total} runs shown)")
    sys.stdout.flush()
    return EXIT_OK
