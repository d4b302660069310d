"""``unotest/.debugger.json``: the breakpoints kept between runs, and their one owner.

A run reads it when it starts (with ``--break``), the viewer and MCP read it and replace
it. A breakpoint that is not at a statement start moves to the nearest one as it is
saved, so the file holds statement starts only; a run lands its own breakpoints again
in case the code changed since.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from dsl import ast
from runner import protocol
from runner.errors import ConfigError, UsageError
from runner.files import atomic_write
from runner.project.index import Project, ProjectIndex
from runner.project.positions import is_col, is_line, land, statement_starts
from runner.project.root import hooks_key

__all__ = [
    "BreakpointsSaved",
    "breakpoints_of",
    "load_breakpoints_file",
    "read_breakpoints",
    "replace_breakpoints",
    "save_breakpoints",
]


def load_breakpoints_file(path: Path) -> dict[str, list[tuple[int, int]]]:
    """``unotest/.debugger.json`` (BreakpointsFile): key → positions; absent file → {}."""
    if not path.exists():
        return {}
    where = "unotest/.debugger.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"{where}: cannot read it ({err})") from None
    except json.JSONDecodeError as err:
        raise ConfigError(f"{where}:{err.lineno}:{err.colno}: invalid JSON ({err.msg})") from None
    except RecursionError:
        raise ConfigError(f"{where}: invalid JSON (nested too deeply)") from None
    except ValueError as err:  # int() of a number with more than 4,300 digits
        raise ConfigError(f"{where}: invalid JSON ({str(err).split(':')[0]})") from None
    try:
        return breakpoints_of(data)
    except UsageError as err:
        raise ConfigError(f"{where}: {err}") from None


def breakpoints_of(data: object) -> dict[str, list[tuple[int, int]]]:
    """A ``BreakpointsFile`` (parsed JSON) checked: key → positions. ``UsageError`` with
    one sentence for a wrong shape (the file's reader prefixes it with the file name)."""
    if (
        not isinstance(data, dict)
        or data.get("version") != 1
        or not isinstance(data.get("scenarios"), dict)
    ):
        raise UsageError('expected {"version": 1, "scenarios": {...}}')
    result: dict[str, list[tuple[int, int]]] = {}
    for key, entries in data["scenarios"].items():
        if not isinstance(entries, list):
            raise UsageError(f"scenarios[{json.dumps(key)}] must be a list of {{line, col}}")
        positions = []
        for entry in entries:
            line = entry.get("line") if isinstance(entry, dict) else None
            col = entry.get("col") if isinstance(entry, dict) else None
            if not (is_line(line) and is_col(col)):
                raise UsageError(
                    f"scenarios[{json.dumps(key)}] holds {json.dumps(entry)}; "
                    'each breakpoint is {"line": N (1-based), "col": N (0-based)}'
                )
            positions.append((line, col))
        result[str(key)] = positions
    return result


def read_breakpoints(project: Project) -> protocol.BreakpointsFile:
    """``.debugger.json`` as it is (no file: no breakpoints); ConfigError when malformed."""
    stored = load_breakpoints_file(project.root / protocol.DEBUGGER_FILE)
    return {
        "version": 1,
        "scenarios": {
            key: [{"line": line, "col": col} for line, col in positions]
            for key, positions in stored.items()
        },
    }


@dataclass
class BreakpointsSaved:
    file: protocol.BreakpointsFile
    notes: list[str]
    """One sentence per breakpoint moved to a statement start, or kept as given."""


def _programs_by_key(index: ProjectIndex) -> dict[str, ast.Program]:
    """The names ``.debugger.json`` keys a file by: a scenario's name (a parameterised
    file's own, without ``[<case>]``), ``_helpers/<name>``, ``<folder>/_hooks``."""
    programs = {s.base_name: s.program for s in index.scenarios.values()}
    programs.update({f"{protocol.HELPERS_SUBDIR}/{h.name}": h.program for h in index.helpers})
    programs.update({hooks_key(h.folder): h.program for h in index.hooks_files.values()})
    return programs


def save_breakpoints(project: Project, data: object) -> BreakpointsSaved:
    """Replace ``.debugger.json`` with ``data`` (a BreakpointsFile): a breakpoint that is
    not at a statement start moves to the nearest one (a note says so); a key naming no
    parsed scenario or helper is kept as given (a note says so too)."""
    wanted = breakpoints_of(data)
    programs = _programs_by_key(ProjectIndex.load(project, check=False))
    notes: list[str] = []
    scenarios: dict[str, list[protocol.BreakpointEntry]] = {}
    for key, positions in wanted.items():
        program = programs.get(key)
        if program is None and positions:
            notes.append(f"{key}: no scenario or helper of that name parses; kept as given")
        starts = statement_starts(program) if program is not None else []
        entries: list[protocol.BreakpointEntry] = []
        for line, col in positions:
            landing = land(starts, line, col)
            at = landing.nearest or landing.position
            if landing.nearest is not None:
                notes.append(f"{key}: {line}:{col} is no statement start; moved to {at[0]}:{at[1]}")
            if {"line": at[0], "col": at[1]} not in entries:
                entries.append({"line": at[0], "col": at[1]})
        if entries:
            scenarios[key] = entries
    result: protocol.BreakpointsFile = {"version": 1, "scenarios": scenarios}
    _write(project, result)
    return BreakpointsSaved(result, notes)


def replace_breakpoints(
    project: Project, key: str, positions: list[protocol.BreakpointEntry]
) -> None:
    """Replace one scenario's (or helper's) entry, as given, keeping the others' (no
    entry: ``key``'s is removed). ``ConfigError`` when the file there is malformed: it
    is not replaced."""
    scenarios = dict(read_breakpoints(project)["scenarios"])
    if positions:
        scenarios[key] = positions
    else:
        scenarios.pop(key, None)
    _write(project, {"version": 1, "scenarios": scenarios})


def _write(project: Project, data: protocol.BreakpointsFile) -> None:
    """Written whole and renamed, so a run starting meanwhile never reads half a file."""
    path = project.root / protocol.DEBUGGER_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, (json.dumps(data, indent=2) + "\n").encode("utf-8"))
