"""``unotest check`` and ``unotest list``: reading a project without running it."""

from __future__ import annotations

import argparse
import difflib
import os
import sys
from pathlib import Path

from dsl.checker import Diagnostic
from unotest.cli import EXIT_FAILED, EXIT_OK, json_dump
from unotest.errors import UsageError
from unotest.project import (
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
        return _report_check(*_check_loose_files(paths), args.json, summary=None)
    project = Project(root)
    inside = [p for p in paths if _is_under(p, root)]
    outside = [p for p in paths if not _is_under(p, root)]
    index = ProjectIndex.load(project)
    diagnostics = index.errors
    warnings = list(index.warnings) + _orphan_warnings(index)
    if not paths:
        counted = (
            f"{_plural(len(index.scenario_metas), 'scenario')}, "
            f"{_plural(len(index.helpers), 'helper file')}, "
            f"{_plural(len(index.collections), 'collection')}"
        )
        return _report_check(diagnostics, warnings, args.json, summary=counted)
    wanted = _files_under(inside, project)
    diagnostics = [d for d in diagnostics if d.file in wanted]
    warnings = [w for w in warnings if _warning_file(w, wanted)]
    checked = wanted & set(index.files)
    for path in inside:
        if path.is_file() and project.relative(path) not in checked:
            warnings.append(
                f"{project.relative(path)}: not a scenario, helper or collection of this "
                "project: nothing to check"
            )
    if outside:
        loose_diagnostics, loose_warnings = _check_loose_files(outside)
        diagnostics = diagnostics + loose_diagnostics
        warnings = warnings + loose_warnings
    return _report_check(
        diagnostics, warnings, args.json, summary=f"{_plural(len(checked), 'file')} checked"
    )


def _is_under(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True


def _warning_file(warning: str, files: set[str]) -> bool:
    return any(warning.startswith(f"{name}:") for name in files)


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
    found: list[str] = []
    for entry in index.collections.values():
        seen: set[str] = set()
        for name in entry.meta["scenarios"]:
            if name in seen:
                found.append(f"{entry.meta['path']}: scenario '{name}' is listed twice")
            elif name not in known:
                hint = _did_you_mean(name, known)
                found.append(
                    f"{entry.meta['path']}: scenario '{name}' does not exist and will be "
                    f"skipped{hint}"
                )
            seen.add(name)
    return found


def _did_you_mean(name: str, known: set[str]) -> str:
    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _check_loose_files(paths: list[Path]) -> tuple[list[Diagnostic], list[str]]:
    """Files outside any project: checked together, their helpers callable from their scenarios."""
    files: list[Path] = []
    problems: list[Diagnostic] = []
    warnings: list[str] = []
    for path in paths:
        if path.is_dir():
            found = _loose_scripts(path)
            if not found:
                warnings.append(f"{path.as_posix()}: no .js files to check")
            files.extend(found)
        elif path.name.endswith(".js"):
            files.append(path)
        else:
            problems.append(
                Diagnostic(
                    path.as_posix(),
                    1,
                    0,
                    f"not a scenario ('*{SCENARIO_SUFFIX}') or helper ('*.js') file",
                )
            )
    index = ProjectIndex.load_files(files, Path.cwd())
    return sorted(problems + index.errors, key=lambda d: (d.file, d.line, d.col)), warnings


MAX_LOOSE_ENTRIES = 100_000


def _loose_scripts(folder: Path) -> list[Path]:
    """The ``.js`` files below a folder outside any project, hidden folders skipped.

    Bounded: ``unotest check /`` (or a home directory) would otherwise walk the whole
    disk for minutes; past ``MAX_LOOSE_ENTRIES`` entries it is a usage error instead.
    """
    found: list[Path] = []
    seen = 0
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        seen += len(dirnames) + len(filenames)
        if seen > MAX_LOOSE_ENTRIES:
            raise UsageError(
                f"{folder}: more than {MAX_LOOSE_ENTRIES:,} files and folders below it, "
                "which is not a folder of scenarios: name the folder (or file) to check"
            )
        found.extend(Path(dirpath) / name for name in filenames if name.endswith(".js"))
    return sorted(p for p in found if p.is_file())


# One character for one (the caret under the source line stays in its column): C0 but
# tab, DEL, C1 (CSI U+009B starts an escape sequence on many terminals) and the Unicode
# line and paragraph separators.
_CONTROL = {
    i: "\ufffd"
    for i in (*range(0x00, 0x09), *range(0x0A, 0x20), *range(0x7F, 0xA0), 0x2028, 0x2029)
}
_MAX_SHOWN = 160


def _clean(text: str) -> str:
    """One line fit for a terminal: no escape sequences or stray line breaks from a file."""
    return text.translate(_CONTROL)


def format_diagnostic(d: Diagnostic) -> str:
    """``file:line:col: message``, the source line (cut around the column) and a caret:
    control characters from the file are never echoed to the terminal."""
    head = _clean(f"{d.file}:{d.line}:{d.col}: {d.message}")
    line = d.source_line.rstrip("\r\n")
    if not line.strip():
        return head
    col = max(0, min(d.col, len(line)))
    prefix = suffix = ""
    if len(line) > _MAX_SHOWN:
        start = max(0, min(col - _MAX_SHOWN // 3, len(line) - _MAX_SHOWN))
        if start > 0:
            prefix = "…"
        if start + _MAX_SHOWN < len(line):
            suffix = "…"
        line = line[start : start + _MAX_SHOWN]
        col -= start
    pad = "".join("\t" if ch == "\t" else " " for ch in prefix + line[:col])
    return f"{head}\n    {prefix}{_clean(line)}{suffix}\n    {pad}^"


def _report_check(
    diagnostics: list[Diagnostic],
    warnings: list[str],
    as_json: bool,
    summary: str | None,
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
        print(f"warning: {_clean(warning)}", file=sys.stderr)
    for d in diagnostics:
        print(format_diagnostic(d))
    if diagnostics:
        files = len({d.file for d in diagnostics})
        print(f"\n{_plural(len(diagnostics), 'problem')} in {_plural(files, 'file')}")
        return EXIT_FAILED
    print(f"ok: {summary}, no problems" if summary else "ok: no problems")
    return EXIT_OK


def list_command(args: argparse.Namespace) -> int:
    root = find_project_root(Path.cwd(), args.root)
    index = ProjectIndex.load(Project(root), check=False)
    warnings = list(index.warnings) + _orphan_warnings(index)
    if args.json:
        print(
            json_dump(
                {
                    "root": str(root),
                    "scenarios": index.scenario_metas,
                    "helpers": index.helper_metas(),
                    "collections": [entry.meta for entry in index.collections.values()],
                    "errors": [_diagnostic_json(d) for d in index.errors],
                    "warnings": warnings,
                }
            )
        )
        return EXIT_OK
    print(_clean(f"project {root}"))
    print(f"\nscenarios ({len(index.scenario_metas)})")
    width = max((len(m["name"]) for m in index.scenario_metas), default=0)
    for meta in index.scenario_metas:
        print(_clean(f"  {meta['name']:<{width}}  {meta['title']}  [id-{meta['id']}]"))
    print(f"\nhelpers ({len(index.helpers)})")
    for helper in index.helpers:
        names = ", ".join(fn.name for fn in helper.program.functions)
        print(_clean(f"  {helper.name}: {names}"))
    print(f"\ncollections ({len(index.collections)})")
    for entry in index.collections.values():
        collection = entry.meta
        text = " ".join((collection["description"] or "").split())
        description = f"  {text}" if text else ""
        count = _plural(len(collection["scenarios"]), "scenario")
        print(_clean(f"  {collection['name']} ({count}){description}"))
    if index.errors:
        print(f"\nerrors ({len(index.errors)})")
        for d in index.errors:
            print(_clean(f"  {d.file}:{d.line}:{d.col}: {d.message}"))
    for warning in warnings:
        print(f"warning: {_clean(warning)}", file=sys.stderr)
    return EXIT_OK
