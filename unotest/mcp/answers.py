"""What the MCP tools answer, where they build it themselves, and how an answer is bounded.

Every tool group builds its answers from these shapes (the rest is a masked
``JSONObject``) and words them for an agent the same way (a tool, not a CLI command,
named as the help): kept apart from the tools so that the groups share them without
importing each other. The tools are registered with ``structured_output=False``: the
SDK sends every answer as text, and publishes no output schema derived from these types.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from dsl.checker import Diagnostic
from runner import protocol
from runner.protocol import JSONObject

__all__ = [
    "MAX_TEXT",
    "BreakpointsSet",
    "CheckResult",
    "FileWritten",
    "ScenarioSource",
    "SourceLines",
    "StartedRun",
    "cut",
    "diag",
    "for_agent",
]

MAX_TEXT = 20_000
"""At most this many characters of text in one answer (a source, a start's error)."""


def cut(text: str, limit: int = MAX_TEXT) -> str:
    """``text`` bounded for an answer; mask it *before* cutting (see
    runner.project.secrets.cut_masked)."""
    return (
        text
        if len(text) <= limit
        else text[: limit - 40] + f"\n… ({len(text) - limit + 40} more characters)"
    )


def diag(d: Diagnostic) -> JSONObject:
    """A problem as the tools answer it: ``{file, line, col, message}``."""
    return {"file": d.file, "line": d.line, "col": d.col, "message": d.message}


# The runner's messages name the CLI command that helps; an agent has a tool for it.
_CLI_HINTS = (
    ("('unotest runs' lists them)", "(the list_runs tool lists them)"),
    ("('unotest check' lists them)", "(the check tool lists them)"),
)


def for_agent(message: str) -> str:
    """The runner's ``message`` naming the tool instead of the CLI command."""
    for cli, tool in _CLI_HINTS:
        message = message.replace(cli, tool)
    return message


class SourceLines(TypedDict):
    """The lines ``source`` shows (1-based, inclusive) of the file's ``total``."""

    first: int
    last: int
    total: int


class ScenarioSource(TypedDict):
    name: str
    kind: str
    path: str
    source: str
    lines: SourceLines
    version: str
    """What ``write_file``'s ``base_version`` takes to refuse a write over a newer save."""


class CheckResult(TypedDict):
    ok: bool
    errors: list[JSONObject]
    notes: NotRequired[list[str]]
    """Files left out of a whole-project check (a symlink out of unotest/e2e/)."""


class StartedRun(TypedDict):
    runId: str
    runDir: str
    pid: int
    warnings: NotRequired[list[str]]
    """What the runner printed on stderr before the run started (also in stderr.log)."""


class FileWritten(TypedDict):
    path: str
    ok: bool
    problems: list[JSONObject]
    statements: list[protocol.BreakpointEntry]
    version: str


class BreakpointsSet(TypedDict):
    file: str
    scenario: str
    breakpoints: list[protocol.BreakpointEntry]
    notes: NotRequired[list[str]]
