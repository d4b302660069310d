"""``unotest inspect``: a run's runtime.json, readably: where, stack, variables."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from runner import protocol
from runner.errors import UsageError
from runner.project import Project, find_project_root
from runner.run_result import chain_text, error_chain
from runner.runs import find_run_dir
from unotest.console import json_dump
from unotest.exit_codes import EXIT_OK

__all__ = ["inspect_command"]


def inspect_command(args: argparse.Namespace) -> int:
    project = Project(find_project_root(Path.cwd(), args.root))
    run_dir = find_run_dir(project, args.run_id)
    path = run_dir / protocol.RUNTIME_FILE
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        if _kind(run_dir) == "collection":
            raise UsageError(
                f"run {run_dir.name} is a collection's: inspect one of its scenarios' runs "
                "('unotest runs' lists them)"
            ) from None
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
        print(f"failure   {_failure_text(failure)}")
    breakpoints = state.get("breakpoints")
    if breakpoints:
        print("breaks    " + "; ".join(f"{f} {', '.join(p)}" for f, p in breakpoints.items()))
    return EXIT_OK


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


def _kind(run_dir: Path) -> object:
    try:
        manifest = json.loads((run_dir / protocol.RUN_MANIFEST_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return manifest.get("kind") if isinstance(manifest, dict) else None
