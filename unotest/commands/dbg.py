"""``unotest dbg``: drive a run from another terminal.

``dbg`` appends one ``DbgCommand`` line to the run's commands.jsonl (one ``write`` on
an ``O_APPEND`` descriptor, so concurrent writers never interleave) and waits up to
5 s for the runner's ``command:applied`` / ``command:rejected`` (and, for ``eval``, the
``command:result``), reading steps.jsonl from where it ended before the append.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

from runner.errors import UsageError
from runner.project import Project, find_project_root
from runner.runs import ACK_TIMEOUT_S, find_run_dir, send_command
from unotest.console import json_dump
from unotest.exit_codes import EXIT_FAILED, EXIT_OK

__all__ = ["dbg_command", "parse_words"]

_POSITION = re.compile(r"(?:(?P<file>[^\s:]*[^\s:\d][^\s:]*):)?(?P<line>\d+)(?::(?P<col>\d+))?\Z")
_SIMPLE = {
    "step": "step",
    "s": "step",
    "continue": "continue",
    "c": "continue",
    "pause": "pause",
    "abort": "abort",
    "retry": "retry",
    "skip": "skip",
    "step-over": "step-over",
    "next": "step-over",
    "n": "step-over",
    "step-out": "step-out",
    "out": "step-out",
    "o": "step-out",
}


def parse_words(words: list[str]) -> dict[str, Any]:
    """``step``, ``break 12:4``, ``clear helpers/x.js:3``, ``eval x + 1`` → a command."""
    if not words:
        raise UsageError(
            "which command? step, continue, pause, abort, retry, skip, step-over, "
            "step-out, break L:C, clear L:C, eval EXPR"
        )
    head, rest = words[0], words[1:]
    if head in _SIMPLE and not rest:
        return {"cmd": _SIMPLE[head]}
    if head in ("break", "b", "set-bp", "clear", "cl", "clear-bp"):
        cmd = "set-bp" if head in ("break", "b", "set-bp") else "clear-bp"
        match = _POSITION.match(" ".join(rest).strip())
        if match is None:
            raise UsageError(f"{head} needs a position: LINE[:COL] or FILE:LINE[:COL]")
        command: dict[str, Any] = {"cmd": cmd, "line": int(match["line"])}
        if match["col"] is not None:
            command["col"] = int(match["col"])
        if match["file"]:
            command["file"] = match["file"]
        return command
    if head == "eval":
        expr = " ".join(rest).strip()
        if not expr:
            raise UsageError("eval needs an expression, e.g. unotest dbg RUN eval 'x + 1'")
        return {"cmd": "eval", "expr": expr}
    raise UsageError(f"unknown debugger command '{' '.join(words)}'")


def dbg_command(args: argparse.Namespace) -> int:
    project = Project(find_project_root(Path.cwd(), args.root))
    run_dir = find_run_dir(project, args.run_id)
    command = parse_words(args.words)
    answers = send_command(run_dir, command)
    if args.json:
        print(json_dump(answers))
    rejected = next((a for a in answers if a["kind"] == "command:rejected"), None)
    result = next((a for a in answers if a["kind"] == "command:result"), None)
    if rejected is not None:
        if not args.json:
            print(f"rejected: {rejected.get('reason', '')}")
        return EXIT_FAILED
    if not answers:
        raise UsageError(
            f"no answer from run {run_dir.name} within {ACK_TIMEOUT_S:g} s "
            "(is it running with --debug?)"
        )
    if args.json:
        return EXIT_OK if result is None or result.get("ok") else EXIT_FAILED
    if result is not None:
        print(result["value"] if result.get("ok") else f"error: {result.get('error')}")
        return EXIT_OK if result.get("ok") else EXIT_FAILED
    print(f"applied: {command['cmd']}")
    return EXIT_OK
