"""``unotest check`` and ``unotest list``: reading a project without running it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dsl.checker import Diagnostic, check_program
from dsl.errors import ScenarioSyntaxError
from dsl.scenario import load_helper, load_scenario
from unotest.cli import EXIT_FAILED, EXIT_OK, json_dump
from unotest.errors import UsageError
from unotest.project import (
    ALL_BUILTIN_SIGNATURES,
    SCENARIO_SUFFIX,
    Project,
    ProjectIndex,
    find_project_root,
)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _diagnostic_json(d: Diagnostic) -> dict[str, object]:
    return {"path": d.file, "line": d.line, "col": d.col, "message": d.message}


def check_command(args: argparse.Namespace) -> int:
    paths: list[Path] = [Path(p) for p in args.paths]
    for path in paths:
        if not path.exists():
            raise UsageError(f"{path}: no such file or folder")
    start = paths[0] if paths else Path.cwd()
    try:
        root = find_project_root(start if start.is_dir() else start.parent, args.root)
    except UsageError:
        if not paths:
            raise
        return _report_check(_check_loose_files(paths), [], args.json, counted=None)
    index = ProjectIndex.load(Project(root))
    diagnostics = index.errors
    if paths:
        wanted = _files_under(paths, index.project)
        diagnostics = [d for d in diagnostics if d.file in wanted]
    warnings = list(index.warnings) + _orphan_warnings(index)
    counted = (len(index.scenarios), len(index.helpers), len(index.collections))
    return _report_check(diagnostics, warnings, args.json, counted)


def _files_under(paths: list[Path], project: Project) -> set[str]:
    wanted: set[str] = set()
    for path in paths:
        if path.is_dir():
            wanted.update(project.relative(p) for p in path.rglob("*") if p.is_file())
        else:
            wanted.add(project.relative(path))
    return wanted


def _orphan_warnings(index: ProjectIndex) -> list[str]:
    known = {meta["name"] for meta in index.scenario_metas}
    return [
        f"{entry.meta['path']}: scenario '{name}' does not exist and will be skipped"
        for entry in index.collections.values()
        for name in entry.meta["scenarios"]
        if name not in known
    ]


def _check_loose_files(paths: list[Path]) -> list[Diagnostic]:
    """Files outside any project: each is checked on its own, without helpers."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*.js") if p.is_file()))
        else:
            files.append(path)
    found: list[Diagnostic] = []
    for path in files:
        rel = path.as_posix()
        try:
            source = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            found.append(Diagnostic(rel, 1, 0, f"cannot read the file: {err}"))
            continue
        try:
            if path.name.endswith(SCENARIO_SUFFIX):
                program = load_scenario(source, rel, path.name[: -len(SCENARIO_SUFFIX)]).program
            else:
                program = load_helper(source, rel, path.stem, ALL_BUILTIN_SIGNATURES).program
        except ScenarioSyntaxError as err:
            found.append(Diagnostic.from_syntax_error(err))
            continue
        found.extend(check_program(program, {}, ALL_BUILTIN_SIGNATURES))
    return found


def _report_check(
    diagnostics: list[Diagnostic],
    warnings: list[str],
    as_json: bool,
    counted: tuple[int, int, int] | None,
) -> int:
    if as_json:
        print(
            json_dump(
                {
                    "ok": not diagnostics,
                    "errors": [_diagnostic_json(d) for d in diagnostics],
                    "warnings": warnings,
                }
            )
        )
        return EXIT_FAILED if diagnostics else EXIT_OK
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    for d in diagnostics:
        print(str(d))
    if diagnostics:
        files = len({d.file for d in diagnostics})
        print(f"\n{_plural(len(diagnostics), 'problem')} in {_plural(files, 'file')}")
        return EXIT_FAILED
    if counted is not None:
        scenarios, helpers, collections = counted
        print(
            f"ok: {_plural(scenarios, 'scenario')}, {_plural(helpers, 'helper file')}, "
            f"{_plural(collections, 'collection')}, no problems"
        )
    else:
        print("ok: no problems")
    return EXIT_OK


def list_command(args: argparse.Namespace) -> int:
    root = find_project_root(Path.cwd(), args.root)
    index = ProjectIndex.load(Project(root), check=False)
    if args.json:
        print(
            json_dump(
                {
                    "root": str(root),
                    "scenarios": index.scenario_metas,
                    "helpers": index.helper_metas(),
                    "collections": [entry.meta for entry in index.collections.values()],
                    "errors": [_diagnostic_json(d) for d in index.errors],
                    "warnings": index.warnings,
                }
            )
        )
        return EXIT_OK
    print(f"project {root}")
    print(f"\nscenarios ({len(index.scenario_metas)})")
    width = max((len(m["name"]) for m in index.scenario_metas), default=0)
    for meta in index.scenario_metas:
        print(f"  {meta['name']:<{width}}  {meta['title']}  [id-{meta['id']}]")
    print(f"\nhelpers ({len(index.helpers)})")
    for helper in index.helpers:
        names = ", ".join(fn.name for fn in helper.program.functions)
        print(f"  {helper.name}: {names}")
    print(f"\ncollections ({len(index.collections)})")
    for entry in index.collections.values():
        collection = entry.meta
        description = f"  {collection['description']}" if collection["description"] else ""
        count = _plural(len(collection["scenarios"]), "scenario")
        print(f"  {collection['name']} ({count}){description}")
    if index.errors:
        print(f"\nerrors ({len(index.errors)})")
        for d in index.errors:
            print(f"  {d.file}:{d.line}:{d.col}: {d.message}")
    for warning in index.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return EXIT_OK
