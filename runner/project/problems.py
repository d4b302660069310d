"""The order problems are listed in, wherever they are listed (``check``, ``e2e``,
``collection``, the index and its cache, MCP ``check``): helper files' problems first,
then by place.

A helper file that does not parse leaves its functions out of the helper table, so
every scenario calling them fails too ("'note' is not a function, helper or
built-in"): the helper's own error is the cause, and is the one to read first. Kept
apart from :mod:`runner.project.index` so that the index cache sorts the same way without
importing the parser.
"""

from __future__ import annotations

from dsl.errors import Diagnostic
from runner.project.root import SCENARIO_SUFFIX

__all__ = ["SCENARIO_SUFFIX", "is_helper_file", "problem_order"]


def is_helper_file(file: str) -> bool:
    """A helper file's path: a ``.js`` file that is not a scenario (``*.test.js``)."""
    return file.endswith(".js") and not file.endswith(SCENARIO_SUFFIX)


def problem_order(d: Diagnostic) -> tuple[bool, str, int, int]:
    """The sort key: helper files' problems first, then by file, line and column."""
    return (not is_helper_file(d.file), d.file, d.line, d.col)
