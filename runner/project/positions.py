"""Source positions as people type them, and where a breakpoint lands among statements.

``--break``, ``unotest dbg break``, the prompt's ``b`` and MCP's ``set_breakpoints`` all
take ``[FILE:]LINE[:COL]`` (line 1-based, column 0-based), and a position given that
way must land on the same statement whoever typed it: so there is one parser and one
nearest-statement rule, here. A command's ``line``/``col`` fields and the entries of
``.debugger.json`` are checked by the same two predicates.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeGuard

if TYPE_CHECKING:
    from dsl import ast

__all__ = [
    "Landing",
    "Position",
    "format_position",
    "is_col",
    "is_line",
    "land",
    "parse_position",
    "statement_starts",
]

# A file part needs one character that is not a digit: ``10:4`` is a line and a column.
_POSITION = re.compile(r"(?:(?P<file>[^\s:]*[^\s:\d][^\s:]*):)?(?P<line>\d+)(?::(?P<col>\d+))?\Z")


@dataclass(frozen=True, slots=True)
class Position:
    """A typed position; ``col`` None means "the first statement on the line"."""

    line: int
    col: int | None = None
    file: str | None = None


def parse_position(text: str) -> Position | None:
    """``10``, ``10:4``, ``_helpers/auth:3:2`` → a Position; anything else → None.

    The text is taken as it is (callers strip it where blanks are harmless), and a line
    of 0 is still a position: whether it is acceptable is the caller's message to give.
    """
    match = _POSITION.match(text)
    if match is None:
        return None
    try:
        line = int(match["line"])
        col = int(match["col"]) if match["col"] is not None else None
    except ValueError:  # more digits than int() takes: no line of any file
        return None
    return Position(line, col, match["file"] or None)


def format_position(line: int, col: int) -> str:
    return f"{line}:{col}"


def is_line(value: object) -> TypeGuard[int]:
    """A 1-based line number from JSON (``true`` is an int to Python, not to us)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def is_col(value: object) -> TypeGuard[int]:
    """A 0-based column number from JSON."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def statement_starts(program: ast.Program) -> list[tuple[int, int]]:
    """Every step position of a file, in source order (where a breakpoint can hold)."""
    # Imported here: the commands that only read a run's positions (a collection's
    # orchestrator, through runner.store.runs) do not load the syntax tree's classes.
    from dsl import ast

    found: list[tuple[int, int]] = []

    def block(body: Iterable[ast.Stmt]) -> None:
        for stmt in body:
            found.append((stmt.span.line, stmt.span.col))
            if isinstance(stmt, ast.If):
                block(stmt.consequent.body)
                alternate = stmt.alternate
                while isinstance(alternate, ast.If):
                    found.append((alternate.span.line, alternate.span.col))
                    block(alternate.consequent.body)
                    alternate = alternate.alternate
                if alternate is not None:
                    block(alternate.body)
            elif isinstance(stmt, ast.ForOf | ast.While):
                block(stmt.body.body)
            elif isinstance(stmt, ast.Try):
                block(stmt.block.body)
                if stmt.handler is not None:
                    block(stmt.handler.body)
                if stmt.finalizer is not None:
                    block(stmt.finalizer.body)

    for fn in program.functions:
        block(fn.body.body)
    return sorted(set(found))


@dataclass(frozen=True, slots=True)
class Landing:
    """Where a breakpoint lands: kept where it was asked even when no statement starts
    there (the file may be edited to match), with the nearest start to say so."""

    position: tuple[int, int]
    exact: bool
    nearest: tuple[int, int] | None
    """The closest statement start when not exact; None when the file has none."""


def land(starts: Sequence[tuple[int, int]], line: int, col: int | None) -> Landing:
    """A line alone means its first statement (column 0 when none starts on it).

    Column 0 where no statement starts means the line too: it is how a line alone is
    kept when nothing starts on it yet (and how the protocol writes one, its ``col``
    being required), so that after an edit it lands on the line's first statement,
    indented or not."""
    if col is None or (col == 0 and (line, 0) not in starts):
        on_line = [start for start in starts if start[0] == line]
        if on_line:
            return Landing(min(on_line), True, None)
        col = 0
    position = (line, col)
    if position in starts:
        return Landing(position, True, None)
    if not starts:
        return Landing(position, False, None)
    nearest = min(starts, key=lambda s: (abs(s[0] - line), abs(s[1] - col)))
    return Landing(position, False, nearest)
