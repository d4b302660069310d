"""Driving a run's debugger from another process: ``unotest dbg``, MCP, the viewer.

A command is one line appended to the run's ``commands.jsonl``; the answer is the
run's ``command:applied``, ``command:rejected`` or ``command:result`` with the same id
in its ``steps.jsonl``, read from where the file ended before the append. A collection
has no debugger of its own: it takes ``abort`` only, as a signal to its process.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import time
import uuid
from collections.abc import Mapping
from pathlib import Path

from runner import protocol
from runner.debug.commands import RESULT_WITHIN, WITH_RESULT
from runner.errors import UsageError
from runner.files import append_line
from runner.processes import read_proc_stat
from runner.protocol import JSONObject
from runner.store.runs import (
    FINISHED_KINDS,
    events_of,
    int_field,
    read_manifest,
    runner_alive_by,
    steps_size,
)

__all__ = [
    "ACK_TIMEOUT_S",
    "COLLECTION_ABORT_WAIT_S",
    "append_command",
    "send_command",
    "until_result",
    "until_resumed",
]

ACK_TIMEOUT_S = 5.0


def append_command(run_dir: Path, command: Mapping[str, object]) -> None:
    """``command`` as one whole line of the run's ``commands.jsonl``, not waiting for an
    answer (the viewer reads the answer from ``/ws``)."""
    line = json.dumps(dict(command), ensure_ascii=True) + "\n"
    append_line(run_dir / protocol.COMMANDS_FILE, line.encode(), create=True)


def send_command(
    run_dir: Path, command: Mapping[str, object], timeout: float = ACK_TIMEOUT_S
) -> list[JSONObject]:
    """Append ``command`` (an id is added) and return the runner's answers to it.

    Waits ``timeout`` for the answer; a command answered by a ``command:result`` that
    may come well after its ``command:applied`` (``restart``: once the old run has
    ended) is given its own time from the acknowledgement on (``RESULT_WITHIN``)."""
    # The answer is looked for after this offset, taken before the check below: an end
    # written in between is still seen.
    start = steps_size(run_dir)
    events = events_of(run_dir)
    if any(e.get("kind") in FINISHED_KINDS for e in events):
        raise UsageError(f"run {run_dir.name} has finished; nothing to drive")
    manifest = read_manifest(run_dir) or {}
    if not runner_alive_by(manifest, run_dir, time.time_ns() // 1_000_000):
        raise UsageError(
            f"run {run_dir.name} was interrupted: its runner is gone without finishing it; "
            "nothing to drive"
        )
    if manifest.get("kind") == "collection":
        return _abort_collection(run_dir, manifest, command, start)
    ident = command.get("id") or uuid.uuid4().hex[:12]
    append_command(run_dir, {"id": ident, **command})
    wanted = {"command:applied", "command:rejected", "command:result"}
    deadline = time.monotonic() + timeout
    later = RESULT_WITHIN.get(str(command.get("cmd")))
    answers: list[JSONObject] = []
    while time.monotonic() < deadline:
        new_events = events_of(run_dir, start)
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
    pid = int_field(manifest, "pid")
    host = manifest.get("hostname")
    if isinstance(host, str) and host != socket.gethostname():
        raise UsageError(f"run {run_dir.name} runs on {host}: stop it there")
    if pid is None or pid <= 0:
        raise UsageError(f"run {run_dir.name} names no process to stop")
    started = int_field(manifest, "pidStartTime")
    if started is not None and Path("/proc/self/stat").exists():
        stat = read_proc_stat(pid)
        if stat is None or stat[1] != started:  # checked again just before the signal
            raise UsageError(f"run {run_dir.name} was interrupted: its runner is gone")
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        raise UsageError(f"run {run_dir.name} was interrupted: its runner is gone") from None
    except PermissionError:
        raise UsageError(f"run {run_dir.name} is another user's: cannot stop it") from None
    deadline = time.monotonic() + COLLECTION_ABORT_WAIT_S
    while time.monotonic() < deadline:
        ended = [e for e in events_of(run_dir, start) if e.get("kind") in FINISHED_KINDS]
        if ended:
            return ended
        time.sleep(0.05)
    return []


async def until_result(run_dir: Path, ident: str, timeout: float) -> JSONObject | None:
    """The ``command:result`` answering ``ident``, if one comes within ``timeout``
    (a ``restart``'s comes once the old run has ended, a ``reload``'s once it is done)."""
    deadline = time.monotonic() + timeout
    while True:
        for event in events_of(run_dir):
            if event.get("kind") == "command:result" and event.get("id") == ident:
                return event
        if time.monotonic() >= deadline:
            return None
        await asyncio.sleep(0.02)


async def until_resumed(run_dir: Path, ident: str, timeout: float) -> None:
    """Until the run has resumed after the command ``ident`` was applied (its
    ``resumed``, or its end), or ``timeout`` has passed: ``command:applied`` comes before
    ``resumed`` and the ``running`` runtime.json, and a reader right after the answer
    must not see the old pause."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        events = events_of(run_dir)
        at = next(
            (
                i
                for i, e in enumerate(events)
                if e.get("kind") == "command:applied" and e.get("id") == ident
            ),
            None,
        )
        if at is not None and any(
            e.get("kind") in ("resumed", "run:finished") for e in events[at + 1 :]
        ):
            return
        await asyncio.sleep(0.01)
