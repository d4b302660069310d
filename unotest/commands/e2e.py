"""``unotest e2e <scenario>``: run one scenario, print its steps, exit 0/1/2/130."""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from pathlib import Path

from runner.config import load_config
from runner.errors import UsageError
from runner.positions import parse_position
from runner.project import (
    SCENARIO_SUFFIX,
    Project,
    ProjectIndex,
    find_project_root,
    scenario_name_problem,
)
from runner.secrets import RunEnvironment, SecretMasker
from runner.session import DebugOptions, ScenarioRun
from runner.text import did_you_mean, has_control_character, show_name
from unotest.console import format_diagnostic, json_dump, print_warnings
from unotest.exit_codes import exit_code_for_run

__all__ = ["e2e_command", "resolve_scenario_name"]


def _exists(given: str) -> bool:
    """Whether a path exists; a name no file system takes (too long, ...) does not."""
    try:
        return Path(given).exists()
    except OSError:
        return False


def resolve_scenario_name(index: ProjectIndex, given: str, cwd: Path) -> str:
    """A scenario by name (``auth/signin-flow``) or by the path of its file."""
    problem = scenario_name_problem(given)
    if problem is not None and (not given.strip() or has_control_character(given)):
        raise UsageError(problem)  # neither a name nor a path: no file lookup at all
    known = {meta["name"] for meta in index.scenario_metas}
    if given.endswith(SCENARIO_SUFFIX) or (os.sep in given and _exists(given)):
        path = (cwd / given).resolve()
        e2e = index.project.e2e_dir.resolve()
        if not path.is_relative_to(e2e) or not path.name.endswith(SCENARIO_SUFFIX):
            raise UsageError(
                f"{show_name(given)} is not a scenario file under {index.project.relative(e2e)}/"
            )
        return path.relative_to(e2e).as_posix()[: -len(SCENARIO_SUFFIX)]
    if given in known or (problem is None and _file_of(index, given) in index.files):
        return given  # a file that was read but did not load: e2e shows its problems
    if problem is not None:
        raise UsageError(problem)
    hint = did_you_mean(given, known, cutoff=0.5)
    raise UsageError(f"no scenario named {show_name(given)}{hint}; 'unotest list' shows them all")


def _file_of(index: ProjectIndex, name: str) -> str:
    return index.project.relative(index.project.e2e_dir / f"{name}{SCENARIO_SUFFIX}")


def parse_break(text: str) -> tuple[str | None, int, int | None]:
    """``--break 10:4``, ``--break 10``, ``--break _helpers/auth:3:2``."""
    position = parse_position(text.strip())
    if position is None or position.line < 1:
        raise UsageError(
            f"--break {text}: expected LINE[:COL] or FILE:LINE[:COL], e.g. --break 10:4"
        )
    return position.file, position.line, position.col


def _stdin_is_tty() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (ValueError, OSError):
        return False


def e2e_command(args: argparse.Namespace) -> int:
    root = find_project_root(Path.cwd(), args.root)
    project = Project(root)
    index = ProjectIndex.load(project)
    name = resolve_scenario_name(index, args.scenario, Path.cwd())
    path = next((m["path"] for m in index.scenario_metas if m["name"] == name), None)
    if path is None and _file_of(index, name) in index.files:
        path = _file_of(index, name)  # unreadable, binary, too big: not listed, but there
    files = [h.file for h in index.helpers] + ([path] if path else [])
    problems = index.errors_in(files)
    scenario = index.scenarios.get(name)
    if problems or scenario is None:
        for problem in problems:
            print(format_diagnostic(problem), file=sys.stderr)
        raise UsageError(
            f"scenario '{name}' cannot run: fix the {len(problems)} problem(s) above "
            "('unotest check' lists them)"
        )
    config = load_config(root, os.environ)
    if args.headed:
        config = replace(config, headless=False)
    print_warnings(config.warnings)
    masker = SecretMasker()
    environment = RunEnvironment.of_project(root, masker)
    print_warnings(environment.warnings)
    stream = sys.stderr if args.json else sys.stdout
    debug = None
    if args.debug or args.breaks or args.step:
        debug = DebugOptions(
            breaks=tuple(parse_break(text) for text in args.breaks),
            step_first=args.step,
            prompt=_stdin_is_tty() and not args.json,
        )
    run = ScenarioRun(
        project,
        scenario,
        index.helper_table,
        config,
        masker,
        environment,
        out=stream,
        log_stream=stream,
        debug=debug,
    )
    result = run.run()
    if args.json:
        print(json_dump(masker.mask_data(result.to_json())))
    return exit_code_for_run(result.outcome, result.signal)
