"""``unotest inspect``: a run's runtime.json, readably: where, stack, variables."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from runner.errors import UsageError
from runner.project.index import Project, find_project_root
from runner.project.secrets import project_masker
from runner.run.result import chain_text, error_chain
from runner.store.runs import find_run_dir, is_collection_run, run_meta, runtime_path
from unotest.console import json_dump
from unotest.exit_codes import EXIT_OK

__all__ = ["inspect_command"]


def inspect_command(args: argparse.Namespace) -> int:
    project = Project(find_project_root(Path.cwd(), args.root))
    run_dir = find_run_dir(project, args.run_id)
    path = runtime_path(run_dir)
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        if is_collection_run(run_dir):
            raise UsageError(
                f"run {run_dir.name} is a collection's: inspect one of its scenarios' runs "
                "('unotest runs' lists them)"
            ) from None
        raise UsageError(f"run {run_dir.name} has no runtime.json yet") from None
    except (OSError, ValueError) as err:
        raise UsageError(f"cannot read {project.relative(path)}: {err}") from None
    if not isinstance(state, dict):
        raise UsageError(f"cannot read {project.relative(path)}: not a JSON object")
    if args.json:
        print(json_dump(state))
        return EXIT_OK
    try:
        _print_state(project, run_dir, state)
    except (KeyError, TypeError, AttributeError, IndexError):
        raise UsageError(
            f"cannot read {project.relative(path)}: it is not in the protocol's RuntimeState "
            "shape"
        ) from None
    return EXIT_OK


def _print_state(project: Project, run_dir: Path, state: dict[str, Any]) -> None:
    print(f"run       {state.get('runId')}  ({state.get('scenario')}, {state.get('testFn')})")
    meta = run_meta(run_dir)
    gone = meta is not None and meta.get("status") == "interrupted"
    # runtime.json is the runner's last word: a runner killed mid-step left "running".
    note = "  (interrupted: its runner is gone; this is where it was)" if gone else ""
    print(f"state     {state.get('state')}{note}")
    mask = project_masker(project.root).mask
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
            print(f"          {mask(source.strip())}")
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
        print(f"failure   {_failure_text(failure)}")
    breakpoints = state.get("breakpoints")
    if breakpoints:
        print("breaks    " + "; ".join(f"{f} {', '.join(p)}" for f, p in breakpoints.items()))


def _failure_text(failure: dict[str, object]) -> str:
    """``lastFailure`` in one line: its chain from the scenario's own line (or its
    ``file:line:col``, or ``line:col`` from a runner that wrote neither), the error."""
    error = failure.get("error")
    error = error if isinstance(error, dict) else {}
    name, message = error.get("name", "Error"), error.get("message", "")
    chain = error_chain({"chain": failure.get("stack")})
    if chain:
        where = chain_text(chain)
    elif failure.get("file"):
        where = f"{failure['file']}:{failure['line']}:{failure['col']}"
    else:
        where = f"{failure.get('line')}:{failure.get('col')}"
    return f"{where}: {name}: {message}"


def _source_line(root: Path, file: str, line: int) -> str | None:
    try:
        lines = (root / file).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    return lines[line - 1] if 0 < line <= len(lines) else None
