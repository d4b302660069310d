"""``unotest check``: parse and statically check a project, or loose files, without running."""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

from dsl.checker import Diagnostic
from runner import protocol
from runner.errors import ConfigError, UsageError
from runner.project.config import load_config
from runner.project.index import (
    CONFIG_FILE,
    SCENARIO_SUFFIX,
    Project,
    find_project_root,
    problem_order,
)
from runner.project.index_cache import load_summary
from runner.project.secrets import env_file_warnings
from runner.text import replace_controls
from unotest.console import diagnostic_json, format_diagnostic, json_dump, plural
from unotest.exit_codes import EXIT_FAILED, EXIT_OK


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
    index = load_summary(project)
    diagnostics = index.errors(check=True)
    warnings = list(index.warnings) + index.orphan_warnings
    wanted = _files_under(inside, project)
    config_problem, config_warnings = (
        _check_config(root) if not paths or CONFIG_FILE in wanted else (None, [])
    )
    if config_problem is not None:
        diagnostics = [config_problem, *diagnostics]
    warnings += config_warnings
    if not paths or protocol.ENV_FILE in wanted:
        warnings += env_file_warnings(root)  # what every run would warn about
    if not paths:
        counted = (
            f"{plural(len(index.scenario_metas), 'scenario')}, "
            f"{plural(len(index.helpers), 'helper file')}, "
            f"{plural(len(index.collections), 'collection')}"
        )
        return _report_check(diagnostics, warnings, args.json, summary=counted)
    diagnostics = [d for d in diagnostics if d.file in wanted]
    warnings = [w for w in warnings if _warning_file(w, wanted)]
    checked = wanted & (set(index.files) | {CONFIG_FILE})
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
        diagnostics, warnings, args.json, summary=f"{plural(len(checked), 'file')} checked"
    )


_CONFIG_PLACE = re.compile(rf"{re.escape(CONFIG_FILE)}(?::(\d+)(?::(\d+))?)?: (.*)", re.S)


def _check_config(root: Path) -> tuple[Diagnostic | None, list[str]]:
    """The project's configuration as every run reads it: a broken one is a problem of
    the project (a CI gate that runs ``check`` must not pass it), its warnings too."""
    try:
        config = load_config(root, os.environ, on_this_machine=False)
    except ConfigError as err:
        if not str(err).startswith(CONFIG_FILE):
            raise  # UNOTEST_BASE_URL: not a problem of a file, said as it is (exit 2)
        place = _CONFIG_PLACE.fullmatch(str(err))
        if place is None:
            return Diagnostic(CONFIG_FILE, 1, 0, str(err)), []
        line, col, message = place.groups()
        return Diagnostic(CONFIG_FILE, int(line or 1), int(col or 0), message), []
    return None, list(config.warnings)


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
    from runner.project.index import ProjectIndex  # here: the cached path never needs the parser

    index = ProjectIndex.load_files(files, Path.cwd())
    return sorted(problems + index.errors, key=problem_order), warnings


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
                    "errors": [diagnostic_json(d) for d in diagnostics],
                    "warnings": warnings,
                }
            )
        )
        return EXIT_FAILED if diagnostics else EXIT_OK
    for warning in warnings:
        print(f"warning: {replace_controls(warning)}", file=sys.stderr)
    for d in diagnostics:
        print(format_diagnostic(d))
    if diagnostics:
        files = len({d.file for d in diagnostics})
        print(f"\n{plural(len(diagnostics), 'problem')} in {plural(files, 'file')}")
        return EXIT_FAILED
    print(f"ok: {summary}, no problems" if summary else "ok: no problems")
    return EXIT_OK
