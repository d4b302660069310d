"""``unotest dbg`` and ``unotest inspect``: drive and look at a run from another terminal.

``dbg`` appends one ``DbgCommand`` line to the run's commands.jsonl (one ``write`` on
an ``O_APPEND`` descriptor, so concurrent writers never interleave) and waits up to
5 s for the runner's ``command:applied`` / ``command:rejected`` (and, for ``eval``, the
``command:result``), reading steps.jsonl from where it ended before the append.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import time
import uuid
from pathlib import Path
from typing import Any

from unotest import protocol
from unotest.cli import EXIT_FAILED, EXIT_OK, json_dump
from unotest.errors import UsageError
from unotest.project import Project, find_project_root

__all__ = ["dbg_command", "find_run_dir", "inspect_command", "send_command"]

ACK_TIMEOUT_S = 5.0
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


def find_run_dir(project: Project, run_id: str) -> Path:
    """The run directory for an id, or a unique prefix of one."""
    if not run_id or "/" in run_id or "\\" in run_id or run_id in (".", "..") or "\0" in run_id:
        raise UsageError(f"{run_id!r} is not a run id ('unotest runs' lists them)")
    runs = project.runs_dir
    exact = runs / run_id
    if (exact / protocol.RUN_MANIFEST_FILE).is_file():
        return exact
    matches = (
        sorted(p for p in runs.glob(f"{glob_escape(run_id)}*") if p.is_dir())
        if runs.is_dir()
        else []
    )
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        shown = ", ".join(p.name for p in matches[:5])
        raise UsageError(f"'{run_id}' matches {len(matches)} runs ({shown}); give more of the id")
    raise UsageError(f"no run '{run_id}' in {project.relative(runs)} ('unotest runs' lists them)")


def glob_escape(text: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", text)


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


def send_command(
    run_dir: Path, command: dict[str, Any], timeout: float = ACK_TIMEOUT_S
) -> list[dict[str, Any]]:
    """Append ``command`` (an id is added) and return the runner's answers to it."""
    steps = run_dir / protocol.STEPS_FILE
    events = _read_events(steps)
    if any(e.get("kind") == "run:finished" for e in events):
        raise UsageError(f"run {run_dir.name} has finished; nothing to drive")
    ident = command.get("id") or uuid.uuid4().hex[:12]
    line = json.dumps({"id": ident, **command}, ensure_ascii=True) + "\n"
    start = steps.stat().st_size if steps.exists() else 0
    fd = os.open(run_dir / protocol.COMMANDS_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        data = line.encode()
        written = 0
        while written < len(data):
            written += os.write(fd, data[written:])
    finally:
        os.close(fd)
    wanted = {"command:applied", "command:rejected", "command:result"}
    deadline = time.monotonic() + timeout
    answers: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        answers = [
            e
            for e in _read_events(steps, start)
            if e.get("kind") in wanted and e.get("id") == ident
        ]
        kinds = {e["kind"] for e in answers}
        if (
            "command:rejected" in kinds
            or "command:result" in kinds
            or ("command:applied" in kinds and command["cmd"] != "eval")
        ):
            return answers
        time.sleep(0.01)
    return answers


def _read_events(path: Path, start: int = 0) -> list[dict[str, Any]]:
    try:
        with open(path, "rb") as handle:
            handle.seek(start)
            data = handle.read()
    except FileNotFoundError:
        return []
    events = []
    for raw in data.split(b"\n")[:-1]:
        try:
            event = json.loads(raw)
        except ValueError:
            continue
        if isinstance(event, dict):
            events.append(event)
    return events


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


def inspect_command(args: argparse.Namespace) -> int:
    project = Project(find_project_root(Path.cwd(), args.root))
    run_dir = find_run_dir(project, args.run_id)
    path = run_dir / protocol.RUNTIME_FILE
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"run {run_dir.name} has no runtime.json yet") from None
    except (OSError, ValueError) as err:
        raise UsageError(f"cannot read {project.relative(path)}: {err}") from None
    if args.json:
        print(json_dump(state))
        return EXIT_OK
    print(f"run       {state.get('runId')}  ({state.get('scenario')}, {state.get('testFn')})")
    print(f"state     {state.get('state')}")
    current = state.get("current")
    file = state.get("file")
    if current:
        where = (
            f"{file}:{current['line']}:{current['col']}"
            if file
            else f"{current['line']}:{current['col']}"
        )
        print(f"at        {where}")
        source = _source_line(project.root, file, current["line"]) if file else None
        if source is not None:
            print(f"          {source.strip()}")
    stack = state.get("callStack") or []
    print(
        "stack     "
        + (" → ".join(f"{f['fn']} ({f['file']}:{f['line']})" for f in stack) or "(test function)")
    )
    page = state.get("page")
    if page:
        print(f"page      {page.get('title', '')}  {page.get('url', '')}")
    variables = state.get("vars") or {}
    print("vars" + ("" if variables else "      (none)"))
    width = max((len(k) for k in variables), default=0)
    for name, value in variables.items():
        shown = value if len(value) <= 200 else value[:199] + "…"
        print(f"  {name:<{width}} = {shown}")
    failure = state.get("lastFailure")
    if failure:
        error = failure.get("error", {})
        name, message = error.get("name", "Error"), error.get("message", "")
        print(f"failure   {failure['line']}:{failure['col']} {name}: {message}")
    breakpoints = state.get("breakpoints")
    if breakpoints:
        print("breaks    " + "; ".join(f"{f} {', '.join(p)}" for f, p in breakpoints.items()))
    return EXIT_OK


def _source_line(root: Path, file: str, line: int) -> str | None:
    try:
        lines = (root / file).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    return lines[line - 1] if 0 < line <= len(lines) else None
