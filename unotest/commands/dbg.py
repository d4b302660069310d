"""``unotest dbg``: drive a run from another terminal.

``dbg`` appends one ``DbgCommand`` line to the run's commands.jsonl (one ``write`` on
an ``O_APPEND`` descriptor, so concurrent writers never interleave) and waits up to
5 s for the runner's ``command:applied`` / ``command:rejected`` (and, for ``eval`` and
``reload``, the ``command:result``), reading steps.jsonl from where it ended before the
append. ``restart`` waits longer for its ``command:result`` (it comes once the old run
has ended and the new one exists) and prints the new run id, the one to drive next.
The words it takes are the debugger's vocabulary (``runner.debug.commands``), the same
as at the terminal prompt.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from runner.debug.client import ACK_TIMEOUT_S, COLLECTION_ABORT_WAIT_S, send_command
from runner.debug.commands import parse_words
from runner.errors import UsageError
from runner.project.index import Project, find_project_root
from runner.protocol import STEPS_FILE, JSONObject
from runner.store.runs import find_run_dir, is_collection_run, read_events
from unotest.console import json_dump
from unotest.exit_codes import EXIT_FAILED, EXIT_OK

__all__ = ["dbg_command"]


def _leading_options(args: argparse.Namespace) -> None:
    """``dbg RUN --json eval x``: argparse hands everything after RUN_ID to the command
    (an eval may hold anything); options written first there are taken as options, as
    every other command takes them after its arguments."""
    words = list(args.words)
    while words and words[0] in ("--json", "--root"):
        if words[0] == "--json":
            args.json = True
            words.pop(0)
            continue
        if len(words) < 2:
            raise UsageError("--root needs a folder")
        args.root = Path(words[1])
        del words[:2]
    args.words = words


def dbg_command(args: argparse.Namespace) -> int:
    _leading_options(args)
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
    ended = next((a for a in answers if a["kind"] == "collection-run:finished"), None)
    if ended is not None:
        if not args.json:
            print(f"collection run {run_dir.name} ended: {ended.get('outcome')}")
        return EXIT_OK
    if not answers:
        if command["cmd"] == "abort" and is_collection_run(run_dir):
            raise UsageError(
                f"collection run {run_dir.name} was asked to stop and has not ended within "
                f"{COLLECTION_ABORT_WAIT_S:g} s"
            )
        if any(e.get("kind") == "run:finished" for e in read_events(run_dir / STEPS_FILE)):
            raise UsageError(f"run {run_dir.name} finished before it answered")
        raise UsageError(
            f"no answer from run {run_dir.name} within {ACK_TIMEOUT_S:g} s "
            "(is it running with --debug?)"
        )
    if args.json:
        if command["cmd"] == "restart" and result is None:
            return EXIT_FAILED  # applied, but no new run was named
        return EXIT_OK if result is None or result.get("ok") else EXIT_FAILED
    if command["cmd"] == "restart":
        return _restarted(run_dir, result)
    if result is not None:
        print(result["value"] if result.get("ok") else f"error: {result.get('error')}")
        return EXIT_OK if result.get("ok") else EXIT_FAILED
    applied = next((a for a in answers if a["kind"] == "command:applied"), {})
    note = f" ({applied['note']})" if applied.get("note") else ""
    print(f"applied: {command['cmd']}{note}")
    return EXIT_OK


def _restarted(run_dir: Path, result: JSONObject | None) -> int:
    """``restarted as <newRunId>``, or why no run follows (exit 1)."""
    if result is None:
        print(f"applied: restart, but run {run_dir.name} named no new run (see its stderr.log)")
        return EXIT_FAILED
    if result.get("ok") is not True:
        print(f"not restarted: {_reason(result.get('error'))}")
        return EXIT_FAILED
    print(f"restarted as {result.get('value')}")
    return EXIT_OK


def _reason(error: object) -> str:
    text = str(error or "no reason given")
    return text.removeprefix("not restarted: ")
