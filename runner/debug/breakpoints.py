"""The breakpoints of one run: where they are, and where they go when the code changes.

A breakpoint is a statement start in a file (its project-relative path). One given
anywhere else (``--break 10``, a click in the viewer's gutter between statements) lands
on the nearest statement start, with a note; after a ``reload`` each moves with its
statement (:mod:`dsl.reload`). ``unotest/.debugger.json``, where they are kept between
runs, is read by :mod:`runner.project.breakpoints_file`.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

from dsl import ast
from dsl.reload import StatementMap, statements
from runner.project.positions import format_position, land, statement_starts

__all__ = ["Breakpoints"]


class Breakpoints:
    """Active breakpoints per file (project-relative path); safe from any thread.

    ``programs`` are the files' parsed versions the run uses (``reload`` replaces
    them, and moves each breakpoint with its statement)."""

    def __init__(
        self,
        starts: Mapping[str, list[tuple[int, int]]],
        programs: Mapping[str, ast.Program] | None = None,
    ) -> None:
        self._lock = threading.Lock()
        self._by_file: dict[str, set[tuple[int, int]]] = {}
        self.starts = starts
        self.programs: Mapping[str, ast.Program] = programs or {}

    def resolve(self, file: str, line: int, col: int | None) -> tuple[tuple[int, int], str | None]:
        """The position to stop at and, when it matches no statement, a note saying so."""
        landing = land(self.starts.get(file, []), line, col)
        if landing.exact:
            return landing.position, None
        if landing.nearest is None:
            return landing.position, f"{file} has no statements"
        line, col = landing.position
        asked = f"{line}" if col == 0 else f"{line}:{col}"  # a line alone is kept at :0
        return landing.position, (
            f"breakpoint {file}:{asked} matches no statement start; the nearest is "
            f"{format_position(*landing.nearest)} (kept: it may match after an edit)"
        )

    def add(self, file: str, position: tuple[int, int]) -> None:
        with self._lock:
            self._by_file.setdefault(file, set()).add(position)

    def remove(self, file: str, position: tuple[int, int]) -> bool:
        with self._lock:
            positions = self._by_file.get(file, set())
            if position in positions:
                positions.discard(position)
                return True
            return False

    def hit(self, file: str, line: int, col: int) -> bool:
        positions = self._by_file.get(file)
        return positions is not None and (line, col) in positions

    def reload(self, programs: Mapping[str, ast.Program], maps: Mapping[str, StatementMap]) -> int:
        """The files' new versions: a breakpoint on a statement moves with it (lines
        inserted above shift it down), any other is resolved again against the new
        statement starts. How many moved."""
        moved = 0
        starts = {file: statement_starts(program) for file, program in programs.items()}
        with self._lock:
            by_file: dict[str, set[tuple[int, int]]] = {}
            for file, positions in self._by_file.items():
                if file not in programs:
                    by_file[file] = positions
                    continue
                kept = _follow(positions, maps.get(file), starts[file])
                moved += len(positions - kept)
                by_file[file] = kept
            self._by_file = by_file
            self.starts = {**self.starts, **starts}
            self.programs = {**self.programs, **programs}
        return moved

    def active(self) -> dict[str, list[str]]:
        with self._lock:
            return {
                file: [format_position(line, col) for line, col in sorted(positions)]
                for file, positions in sorted(self._by_file.items())
                if positions
            }


def _follow(
    positions: set[tuple[int, int]],
    statement_map: StatementMap | None,
    starts: list[tuple[int, int]],
) -> set[tuple[int, int]]:
    """Where breakpoints are in a file's new version: at the new place of the statement
    each was on, or landed again on the new statement starts."""
    at = (
        {(s.span.line, s.span.col): s for s in statements(statement_map.old)}
        if statement_map is not None and positions
        else {}
    )
    kept: set[tuple[int, int]] = set()
    for position in positions:
        old = at.get(position)
        target = statement_map.get(old) if statement_map is not None and old is not None else None
        if target is None:
            kept.add(land(starts, *position).position)
        else:
            kept.add((target.span.line, target.span.col))
    return kept
