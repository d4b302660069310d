"""``--reporter``: the comma-separated reporters of ``e2e`` and ``collection``, checked
before the run starts (a report that could never be written is refused up front)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from runner.errors import UsageError

__all__ = ["Reporters", "parse_reporters"]


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
