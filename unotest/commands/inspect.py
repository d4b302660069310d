"""``unotest inspect``: a run's runtime.json, readably: where, stack, variables."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from runner import protocol
from runner.errors import UsageError
from runner.project import Project, find_project_root
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
