"""What ``e2e`` and ``collection`` share in reporting: the ``--reporter`` list, the
``--retries`` count, the NDJSON printer, the report file writer and history.

The envelopes themselves come from :class:`runner.event_log.EventLog`; this module only
decides where they go.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from runner import envelope
from runner.config import MAX_RETRIES, Config
from runner.envelope import Envelope
from runner.errors import UsageError
from runner.history import save_history
from runner.project_root import Project
from runner.retries import Attempt
from runner.text import one_line

__all__ = [
    "Reporters",
    "history_quietly",
    "ndjson_printer",
    "parse_reporters",
    "retries_of",
    "write_report",
]


@dataclass(frozen=True)
class Reporters:
    """``--reporter``: the list on the terminal, JUnit and JSON files, NDJSON on stdout."""

    show_list: bool = True
    junit: Path | None = None
    json: Path | None = None
    ndjson: bool = False


def parse_reporters(text: str | None, junit_allowed: bool = True) -> Reporters:
    """``list``, ``junit=PATH``, ``json=PATH``, ``ndjson`` (comma-separated)."""
    if text is None:
        return Reporters()
    show_list, junit, json_path, ndjson = False, None, None, False
    expected = (
        "list, junit=PATH, json=PATH or ndjson" if junit_allowed else ("list, json=PATH or ndjson")
    )
    for part in text.split(","):
        part = part.strip()
        name, _, value = part.partition("=")
        if name == "list" and not value:
            show_list = True
        elif name == "junit" and value and junit_allowed:
            if junit is not None:
                raise UsageError("--reporter junit= is given twice: one JUnit file a run")
            junit = _report_path("junit", value)
        elif name == "json" and value:
            if json_path is not None:
                raise UsageError("--reporter json= is given twice: one JSON file a run")
            json_path = _report_path("json", value)
        elif name == "ndjson" and not value:
            ndjson = True
        else:
            raise UsageError(f"--reporter {part!r}: expected {expected}")
    if ndjson and show_list:
        raise UsageError("--reporter ndjson prints the events on stdout: use it without 'list'")
    if junit is not None and json_path is not None and junit.resolve() == json_path.resolve():
        raise UsageError(f"--reporter junit= and json= both name {junit}: one would overwrite")
    return Reporters(show_list, junit, json_path, ndjson)


def _report_path(kind: str, value: str) -> Path:
    """A report's path, refused before the run when it can never be written (a folder,
    or under a file): the run used to go to its end, then fail to write it."""
    path = Path(value)
    if path.is_dir():
        raise UsageError(f"--reporter {kind}={value}: {value} is a folder: name a file in it")
    for parent in path.parents:
        if parent.exists() and not parent.is_dir():
            raise UsageError(f"--reporter {kind}={value}: {parent} is a file, not a folder")
    return path


def flaky_line(scenario: str, failed: list[Attempt]) -> str:
    """What a scenario that passed after ``failed`` attempts is called, the same after
    ``e2e --retries`` as in a collection's summary: a clean pass's line would hide it."""
    first = failed[0]
    why = f"{first.error_name}: " if first.error_name else ""
    return (
        f"~ {scenario}: flaky, passed on attempt {len(failed) + 1} "
        f"(attempt 1: {why}{one_line(first.error_message or first.outcome)})"
    )


def retries_of(given: int | None, config: Config, debug: bool = False) -> int:
    """``--retries`` wins over ``retries:`` in the config; a debug run never retries
    (the person at it is the retry)."""
    if given is not None and not 0 <= given <= MAX_RETRIES:
        raise UsageError(f"--retries {given}: expected a whole number from 0 to {MAX_RETRIES}")
    if debug:
        return 0
    return given if given is not None else config.retries


def ndjson_printer(out: TextIO) -> Callable[[Envelope], None]:
    """Each envelope as one line on ``out``, flushed, for a pipe reading it live."""

    def sink(event: Envelope) -> None:
        out.write(envelope.to_json_line(event) + "\n")
        out.flush()

    return sink


def write_report(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as err:
        raise UsageError(f"cannot write report {path}: {err.strerror or err}") from None


def history_quietly(project: Project, run_id: str, events: list[Envelope], config: Config) -> None:
    """Save the run to history; a history that cannot be written costs a warning, never
    the run's own exit code."""
    try:
        save_history(project, run_id, events, config.history)
    except OSError as err:
        print(f"warning: history not saved: {err.strerror or err}", file=sys.stderr)
