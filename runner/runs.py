"""Reading run directories back: events, ``RunMeta``, finding a run, sending it a command.

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
import signal
import socket
import time
import uuid
from collections.abc import Mapping
from pathlib import Path

from runner import protocol
from runner.debug_commands import RESULT_WITHIN, WITH_RESULT
from runner.errors import UsageError
from runner.project_root import Project
from runner.protocol import JSONObject
from runner.rundir import append_line, pid_exists, read_proc_stat

__all__ = [
    "COLLECTION_ABORT_WAIT_S",
    "find_run_dir",
    "is_collection_run",
    "list_runs",
    "read_events",
    "read_events_counted",
    "read_manifest",
    "run_meta",
    "runner_alive",
    "send_command",
]

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


def read_events_counted(steps_path: Path, start: int = 0) -> tuple[list[JSONObject], int]:
    """:func:`read_events` and how many whole lines were read (those that did not parse
    too): the number of the next line, as :class:`runner.tail.LineTailer` numbers them."""
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


def _int_field(manifest: JSONObject, key: str) -> int | None:
    value = manifest.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _runner_alive(manifest: JSONObject, run_dir: Path, now_ms: int) -> bool:
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
    return _runner_alive(manifest, run_dir, now_ms)


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
    _add_links(meta, manifest)
    return meta


def _add_links(meta: protocol.RunMeta, manifest: JSONObject) -> None:
    """The manifest's additive links (a restart's ``restartOf``, a retry's ``attempt``
    and ``retryOf``), so every list of runs shows how runs follow each other."""
    restart_of = manifest.get("restartOf")
    if isinstance(restart_of, str):
        meta["restartOf"] = restart_of
    retry_of = manifest.get("retryOf")
    attempt = _int_field(manifest, "attempt")
    if isinstance(retry_of, str) and attempt is not None:
        meta["retryOf"] = retry_of
        meta["attempt"] = attempt


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
# finding a run, driving it from another process
# ---------------------------------------------------------------------------

ACK_TIMEOUT_S = 5.0


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


def send_command(
    run_dir: Path, command: Mapping[str, object], timeout: float = ACK_TIMEOUT_S
) -> list[JSONObject]:
    """Append ``command`` (an id is added) and return the runner's answers to it.

    Waits ``timeout`` for the answer; a command answered by a ``command:result`` that
    may come well after its ``command:applied`` (``restart``: once the old run has
    ended) is given its own time from the acknowledgement on (``RESULT_WITHIN``)."""
    steps = run_dir / protocol.STEPS_FILE
    # The answer is looked for after this offset, taken before the check below: an end
    # written in between is still seen.
    start = steps.stat().st_size if steps.exists() else 0
    events = read_events(steps)
    if any(e.get("kind") in _FINISHED_KINDS for e in events):
        raise UsageError(f"run {run_dir.name} has finished; nothing to drive")
    manifest = read_manifest(run_dir) or {}
    if not _runner_alive(manifest, run_dir, time.time_ns() // 1_000_000):
        raise UsageError(
            f"run {run_dir.name} was interrupted: its runner is gone without finishing it; "
            "nothing to drive"
        )
    if manifest.get("kind") == "collection":
        return _abort_collection(run_dir, manifest, command, start)
    ident = command.get("id") or uuid.uuid4().hex[:12]
    line = json.dumps({"id": ident, **command}, ensure_ascii=True) + "\n"
    append_line(run_dir / protocol.COMMANDS_FILE, line.encode(), create=True)
    wanted = {"command:applied", "command:rejected", "command:result"}
    deadline = time.monotonic() + timeout
    later = RESULT_WITHIN.get(str(command.get("cmd")))
    answers: list[JSONObject] = []
    while time.monotonic() < deadline:
        new_events = read_events(steps, start)
        answers = [e for e in new_events if e.get("kind") in wanted and e.get("id") == ident]
        kinds = {e["kind"] for e in answers}
        if (
            "command:rejected" in kinds
            or "command:result" in kinds
            or ("command:applied" in kinds and command["cmd"] not in WITH_RESULT)
            or any(e.get("kind") == "run:finished" for e in new_events)  # no answer to come
        ):
            return answers
        if later is not None and "command:applied" in kinds:
            deadline, later = time.monotonic() + later, None  # from the acknowledgement on
        time.sleep(0.01)
    return answers


def is_collection_run(run_dir: Path) -> bool:
    return (read_manifest(run_dir) or {}).get("kind") == "collection"

COLLECTION_ABORT_WAIT_S = 20.0
"""How long an ``abort`` of a collection waits for it to end (its workers abort their
scenarios and the reports are written first)."""


def _abort_collection(
    run_dir: Path, manifest: JSONObject, command: Mapping[str, object], start: int
) -> list[JSONObject]:
    """A collection has no debugger of its own: ``abort`` stops it as Ctrl-C or SIGTERM
    does (its process, named by the manifest and alive), and the answer is its
    ``collection-run:finished``; any other command is refused."""
    if command.get("cmd") != "abort":
        raise UsageError(
            f"run {run_dir.name} is a collection: it takes 'abort' only; the debugger's "
            "other commands go to one of its scenarios' runs ('unotest runs' lists them)"
        )
    pid = _int_field(manifest, "pid")
    host = manifest.get("hostname")
    if isinstance(host, str) and host != socket.gethostname():
        raise UsageError(f"run {run_dir.name} runs on {host}: stop it there")
    if pid is None or pid <= 0:
        raise UsageError(f"run {run_dir.name} names no process to stop")
    started = _int_field(manifest, "pidStartTime")
    if started is not None and Path("/proc/self/stat").exists():
        stat = read_proc_stat(pid)
        if stat is None or stat[1] != started:  # checked again just before the signal
            raise UsageError(f"run {run_dir.name} was interrupted: its runner is gone")
    steps = run_dir / protocol.STEPS_FILE
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        raise UsageError(f"run {run_dir.name} was interrupted: its runner is gone") from None
    except PermissionError:
        raise UsageError(f"run {run_dir.name} is another user's: cannot stop it") from None
    deadline = time.monotonic() + COLLECTION_ABORT_WAIT_S
    while time.monotonic() < deadline:
        ended = [e for e in read_events(steps, start) if e.get("kind") in _FINISHED_KINDS]
        if ended:
            return ended
        time.sleep(0.05)
    return []
