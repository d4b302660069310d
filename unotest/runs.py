"""Reading run directories back: events, ``RunMeta`` and ``unotest runs``.

A run's status comes from its ``steps.jsonl`` when it has finished, else from
whether its runner still lives: the manifest's ``pid`` with the same start time
(``pidStartTime``, so a reused PID does not count) decides at once; without that
information (another host, another platform, an older writer) a heartbeat
younger than ``HEARTBEAT_STALE_SECONDS`` means ``running``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import socket
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from runner.rundir import read_proc_stat
from unotest import protocol
from unotest.cli import EXIT_OK, json_dump
from unotest.errors import UsageError
from unotest.project import Project, find_project_root

__all__ = ["list_runs", "read_events", "run_meta", "runs_command"]

_STARTED_KINDS = ("run:started", "collection-run:started")
_FINISHED_KINDS = ("run:finished", "collection-run:finished")
_OUTCOMES: tuple[protocol.RunOutcome, ...] = ("completed", "failed", "aborted", "interrupted")
_STATUS_OF: dict[protocol.RunOutcome, protocol.RunStatus] = {
    "completed": "passed",
    "failed": "failed",
    "aborted": "aborted",
    "interrupted": "interrupted",
}


# ---------------------------------------------------------------------------
# steps.jsonl
# ---------------------------------------------------------------------------


def _parse_line(line: bytes) -> dict[str, Any] | None:
    if not line.strip():
        return None
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _whole_lines(steps_path: Path) -> list[bytes]:
    """The ``\\n``-terminated lines of a file; an unterminated tail is being written."""
    try:
        data = steps_path.read_bytes()
    except OSError:
        return []
    return data.split(b"\n")[:-1]


def read_events(steps_path: Path) -> list[dict[str, Any]]:
    """Every whole line of ``steps_path`` that is a JSON object, in order.

    Splits on ``b"\\n"`` only (a JSON string may hold U+2028 or ``\\r``, never a raw
    ``\\n``), ignores an unterminated tail and skips lines that do not parse.
    """
    events = []
    for line in _whole_lines(steps_path):
        event = _parse_line(line)
        if event is not None:
            events.append(event)
    return events


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
        event = _parse_line(line)
        if event is None:
            continue
        kind = event.get("kind")
        if kind in _STARTED_KINDS and started is None:
            started = _time(event.get("t"))
        elif kind in _FINISHED_KINDS:
            t = _time(event.get("t"))
            value = event.get("outcome")
            if t is not None and value in _OUTCOMES:
                finished = t
                outcome = next(o for o in _OUTCOMES if o == value)
    return started, finished, outcome


# ---------------------------------------------------------------------------
# liveness
# ---------------------------------------------------------------------------


def _pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def _int_field(manifest: dict[str, Any], key: str) -> int | None:
    value = manifest.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _runner_alive(manifest: dict[str, Any], run_dir: Path, now_ms: int) -> bool:
    pid = _int_field(manifest, "pid")
    start = _int_field(manifest, "pidStartTime")
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
        if not _pid_exists(pid):
            return False  # certainly dead; an existing pid may be reused: ask the heartbeat
    return _heartbeat_fresh(run_dir, now_ms)


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


def _read_manifest(run_dir: Path) -> dict[str, Any] | None:
    try:
        value = json.loads((run_dir / protocol.RUN_MANIFEST_FILE).read_bytes())
    except (OSError, ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def run_meta(run_dir: Path, now_ms: int | None = None) -> protocol.RunMeta | None:
    """The ``RunMeta`` of one run directory; ``None`` without a readable manifest."""
    manifest = _read_manifest(run_dir)
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
    elif _runner_alive(manifest, run_dir, now_ms):
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
    return meta


def list_runs(runs_dir: Path) -> list[protocol.RunMeta]:
    """Every readable run under ``runs_dir``, newest first."""
    try:
        entries = [p for p in runs_dir.iterdir() if not p.name.startswith(".") and p.is_dir()]
    except OSError:
        return []
    now_ms = time.time_ns() // 1_000_000
    metas = [m for m in (run_meta(p, now_ms) for p in entries) if m is not None]
    metas.sort(key=lambda m: (m["startedAt"], m["runId"]), reverse=True)
    return metas


# ---------------------------------------------------------------------------
# unotest runs
# ---------------------------------------------------------------------------


def _printable(text: str) -> str:
    """A ref or id on one terminal line: control characters are shown escaped."""
    return "".join(
        ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text
    )


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
            _printable(m["runId"]),
            m["kind"],
            _printable(m["ref"]),
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
