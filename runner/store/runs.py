"""Reading run directories back: events, ``RunMeta``, finding a run, whether it lives
(listing them newest first, a page at a time, is :mod:`runner.store.run_list`'s).

A run's status comes from its ``steps.jsonl`` when it has finished, else from
whether its runner still lives: the manifest's ``pid`` with the same start time
(``pidStartTime``, so a reused PID does not count) decides at once; without that
information (another host, another platform, an older writer) a heartbeat
younger than ``HEARTBEAT_STALE_SECONDS`` means ``running``.
"""

from __future__ import annotations

import json
import math
import os
import re
import time
from pathlib import Path
from typing import Literal

from runner import protocol
from runner.errors import UsageError
from runner.processes import pid_exists, read_proc_stat
from runner.project.root import Project
from runner.protocol import JSONObject
from runner.store.run_index import as_outcome

__all__ = [
    "STATUS_OF",
    "as_time",
    "events_of",
    "find_run_dir",
    "is_collection_run",
    "output_path",
    "read_events",
    "read_events_counted",
    "read_manifest",
    "run_meta",
    "runner_alive",
    "runtime_path",
    "steps_path",
    "steps_size",
]

Stream = Literal["stdout", "stderr"]
"""A run's captured output stream."""
_STARTED_KINDS = ("run:started", "collection-run:started")
FINISHED_KINDS = ("run:finished", "collection-run:finished")
STATUS_OF: dict[protocol.RunOutcome, protocol.RunStatus] = {
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


def as_time(value: object) -> int | None:
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
            started = as_time(event.get("t"))
        elif kind in FINISHED_KINDS:
            t = as_time(event.get("t"))
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


def _hostname() -> str:
    """``socket.gethostname()`` (what a manifest's ``hostname`` holds): on POSIX the same
    name as ``os.uname()``'s, which costs a listing no socket import (4 ms)."""
    uname = getattr(os, "uname", None)
    if uname is not None:
        return str(uname().nodename)
    import socket

    return socket.gethostname()


def runner_alive_by(manifest: JSONObject, run_dir: Path, now_ms: int) -> bool:
    pid = int_field(manifest, "pid")
    start = int_field(manifest, "pidStartTime")
    host = manifest.get("hostname")
    try:
        same_host = not isinstance(host, str) or host == _hostname()
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
    manifest_started = as_time(manifest.get("startedAt"))
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
        status = STATUS_OF[outcome]
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
