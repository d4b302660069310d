"""A run directory seen from a test: steps.jsonl read and waited on, commands.jsonl appended to.

Imported as ``from events import ...`` (``tests/`` is on ``sys.path``, see conftest.py).

Unlike ``runner.store.runs.read_events`` (the product's reader, which skips a line that does not
parse), these helpers fail the test on such a line: a test reads steps.jsonl to check it.
Both split on ``b"\\n"`` only and leave out an unterminated tail (a write in progress).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

STEPS_FILE = "steps.jsonl"
COMMANDS_FILE = "commands.jsonl"
EVENT_TIMEOUT_S = 45

Event = dict[str, Any]
Predicate = Callable[[Event], bool]


class RunningRun(Protocol):
    """What ``wait_for_event`` needs of a test's run: where it writes and its process."""

    @property
    def run_dir(self) -> Path: ...

    @property
    def proc(self) -> subprocess.Popen[Any]: ...


def read_lines(run_dir: Path, *, finished: bool = False) -> list[bytes]:
    """The whole lines of ``run_dir/steps.jsonl``; none before the file exists.

    ``finished``: the run is over, so the file must exist and end with a whole line.
    """
    path = run_dir / STEPS_FILE
    if finished:
        data = path.read_bytes()
        assert data.endswith(b"\n"), f"{path} must end with a whole line"
    else:
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return []
    return data.split(b"\n")[:-1]


def read_events(run_dir: Path, *, finished: bool = False) -> list[Event]:
    """Every whole line of ``run_dir/steps.jsonl``, each a JSON object with a ``kind``."""
    events = []
    for line in read_lines(run_dir, finished=finished):
        event = json.loads(line)
        assert isinstance(event, dict) and isinstance(event.get("kind"), str), line
        events.append(event)
    return events


def wait_for_event(
    run: Path | RunningRun,
    predicate: Predicate,
    *,
    after: int = 0,
    timeout: float = EVENT_TIMEOUT_S,
) -> tuple[int, Event]:
    """The first event at index ``after`` or later that ``predicate`` accepts: (index, event).

    ``run`` is a run directory, or a run whose process must still be going while there is
    no such event yet (its ``stderr``, when it has one, goes into the failure message).
    """
    run_dir = run if isinstance(run, Path) else run.run_dir
    deadline = time.monotonic() + timeout
    while True:
        events = read_events(run_dir)
        for index in range(after, len(events)):
            if predicate(events[index]):
                return index, events[index]
        ended = None if isinstance(run, Path) else run.proc.poll()
        if ended is not None or time.monotonic() > deadline:
            why = f"the run ended (exit {ended})" if ended is not None else f"{timeout} s passed"
            shown = "\n".join(json.dumps(e) for e in events[after:])
            stderr = getattr(run, "stderr", b"")
            if isinstance(stderr, bytes):
                stderr = stderr.decode(errors="replace")
            raise AssertionError(f"no such event: {why}; events:\n{shown}\n{stderr}")
        time.sleep(0.02)


def is_kind(kind: str, **fields: Any) -> Predicate:
    """An event of ``kind`` whose ``fields`` have these values."""
    return lambda e: e["kind"] == kind and all(e.get(k) == v for k, v in fields.items())


def answer_to(ident: str, cmd: str) -> Predicate:
    """The answer that ends command ``ident``'s round trip: ``command:result`` for an eval,
    ``command:applied`` for the others, or ``command:rejected``."""
    last = "command:result" if cmd == "eval" else "command:applied"
    return lambda e: e.get("id") == ident and e["kind"] in (last, "command:rejected")


def append_raw(run_dir: Path, data: bytes) -> None:
    """One ``write`` on an O_APPEND descriptor, as every writer of commands.jsonl does."""
    fd = os.open(run_dir / COMMANDS_FILE, os.O_WRONLY | os.O_APPEND)
    try:
        written = 0
        while written < len(data):
            written += os.write(fd, data[written:])
    finally:
        os.close(fd)


def append_command(run_dir: Path, cmd: str, **fields: Any) -> str:
    """Append ``{"id", "cmd", **fields}`` to commands.jsonl with a fresh id; returns the id."""
    ident = f"t-{uuid.uuid4().hex[:10]}"
    append_raw(run_dir, json.dumps({"id": ident, "cmd": cmd, **fields}).encode() + b"\n")
    return ident
