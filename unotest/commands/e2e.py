"""``unotest e2e <scenario>``: run one scenario, print its steps, exit 0/1/2/130.

A case of a parameterised scenario is named ``<name>[<case>]`` (quoted in a shell);
the file's own name, or a case it does not have, is one sentence listing its cases.

With ``--retries N`` (or ``retries:`` in the config) a failed scenario runs again from
its start, each attempt a new run with a fresh browser, up to N more times; a debug run
never retries. The run's version-1 envelopes go where ``--reporter`` says (``json=PATH``,
``ndjson`` on stdout), to the first attempt's ``events.ndjson`` and to history.
``--trace on|off|on-failure`` replaces the config's ``trace`` for this run.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from pathlib import Path

from runner.browser import early_driver
from runner.errors import UsageError
from runner.project.config import Config, Trace, load_config
from runner.project.index import (
    SCENARIO_SUFFIX,
    Project,
    ProjectIndex,
    find_project_root,
    scenario_name_problem,
)
from runner.project.index_cache import IndexSummary, load_summary
from runner.project.root import case_problem
from runner.project.secrets import RunEnvironment, SecretMasker
from runner.run.attempts import ScenarioAttempts, run_attempts
from runner.run.options import RunOptions, ScenarioInputs
from runner.run.session import DebugOptions, ScenarioRun
from runner.store.event_log import EventLog, LiveFile
from runner.store.retries import flaky_line, retries_of
from runner.text import did_you_mean, has_control_character, show_name
from unotest.console import format_diagnostic, json_dump, print_warnings
from unotest.exit_codes import exit_code_for_run
from unotest.reporters.history import history_quietly
from unotest.reporters.options import parse_reporters
from unotest.reporters.sinks import ReportSinks

__all__ = ["e2e_command", "resolve_scenario_name"]


def _exists(given: str) -> bool:
    """Whether a path exists; a name no file system takes (too long, ...) does not."""
    try:
        return Path(given).exists()
    except OSError:
        return False


def _names_a_file(given: str) -> bool:
    """Whether ``unotest e2e GIVEN`` means a path (of a scenario file or not)."""
    return given.endswith(SCENARIO_SUFFIX) or (os.sep in given and _exists(given))


def project_root_of(given: str, root: Path | None, cwd: Path) -> Path:
    """The project of ``unotest e2e GIVEN``: ``--root``; else, for the path of an existing
    file, the project holding it (as ``unotest check PATH`` finds it), wherever the
    command runs; else the one of the working directory."""
    if root is not None or has_control_character(given) or not _names_a_file(given):
        return find_project_root(cwd, root)
    path = cwd / given
    if not _exists(str(path)):
        return find_project_root(cwd)  # resolve_scenario_name says "no such file"
    try:
        return find_project_root(path.resolve().parent)
    except UsageError:
        pass
    try:
        return find_project_root(cwd)  # a file outside any project: "not under unotest/e2e/"
    except UsageError:
        raise UsageError(
            f"no unotest project found above {show_name(given)} nor in {cwd.resolve()}: "
            "name a scenario file of a project (a folder with unotest/ or "
            "unotest.config.yaml), or pass --root DIR"
        ) from None


def _existing_scenario_file(project: Project, given: str) -> str | None:
    """The scenario a path that is not there from the working directory would name from
    the project root or its e2e folder (for the hint of "no such file")."""
    e2e = project.e2e_dir.resolve()
    for base in (project.root, project.e2e_dir):
        try:
            path = (base / given).resolve()
            found = path.is_file() and path.is_relative_to(e2e)
        except (OSError, ValueError):
            continue
        if found and path.name.endswith(SCENARIO_SUFFIX):
            return path.relative_to(e2e).as_posix()[: -len(SCENARIO_SUFFIX)]
    return None


def resolve_scenario_name(project: Project, index: IndexSummary, given: str, cwd: Path) -> str:
    """A scenario by name (``auth/signin-flow``, ``shop/pay[visa]``) or by the path of
    its file (relative to ``cwd``, as a shell means it); a parameterised scenario's file
    (by name or path) or a case it does not have is a usage error naming its cases."""
    name = _resolved(project, index, given, cwd)
    problem = case_problem(name, index.cases)
    if problem is not None:
        raise UsageError(problem)
    return name


def _resolved(project: Project, index: IndexSummary, given: str, cwd: Path) -> str:
    problem = scenario_name_problem(given)
    if problem is not None and (not given.strip() or has_control_character(given)):
        raise UsageError(problem)  # neither a name nor a path: no file lookup at all
    known = {meta["name"] for meta in index.scenario_metas}
    if _names_a_file(given):
        path = (cwd / given).resolve()
        if not _exists(str(path)):
            name = _existing_scenario_file(project, given)
            hint = f"; the project's scenario at that path is named '{name}'" if name else ""
            raise UsageError(
                f"no such file {show_name(given)} in {cwd} (a path is relative to the "
                f"current directory){hint}"
            )
        e2e = project.e2e_dir.resolve()
        if not path.is_relative_to(e2e) or not path.name.endswith(SCENARIO_SUFFIX):
            raise UsageError(
                f"{show_name(given)} is not a scenario file under {project.relative(e2e)}/"
            )
        return path.relative_to(e2e).as_posix()[: -len(SCENARIO_SUFFIX)]
    if given in known or (problem is None and project.scenario_file(given) in index.files):
        return given  # a file that was read but did not load: e2e shows its problems
    if case_problem(given, index.cases) is not None:
        return given  # said by the caller, with the cases to choose from
    if problem is not None:
        raise UsageError(problem)
    hint = did_you_mean(given, known, cutoff=0.5)
    raise UsageError(f"no scenario named {show_name(given)}{hint}; 'unotest list' shows them all")


def _stdin_is_tty() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (ValueError, OSError):
        return False


def _runnable(project: Project, summary: IndexSummary, name: str) -> ProjectIndex:
    """The helpers and the scenario, loaded (its project checked through the index cache:
    nothing else is parsed), or their problems on stderr and a usage error."""
    path = next((m["path"] for m in summary.scenario_metas if m["name"] == name), None)
    if path is None and project.scenario_file(name) in summary.files:
        path = project.scenario_file(name)  # unreadable, binary, too big: not listed, but there
    problems = summary.problems_of(project, path)  # a helper's own syntax error first
    index = ProjectIndex.load_one(project, name) if not problems else None
    if index is not None and not index.errors and name in index.scenarios:
        return index
    if index is not None:
        problems = index.errors  # edited since the cache was read
    for problem in problems:
        print(format_diagnostic(problem), file=sys.stderr)
    raise UsageError(
        f"scenario '{name}' cannot run: fix the {len(problems)} problem(s) above "
        "('unotest check' lists them)"
    )


def _debug_options(args: argparse.Namespace) -> DebugOptions | None:
    if not (args.debug or args.breaks or args.step):
        return None
    return DebugOptions.given(args.breaks, args.step, prompt=_stdin_is_tty() and not args.json)


def _run_config(
    root: Path, summary: IndexSummary, name: str, *, headed: bool, trace: Trace | None = None
) -> Config:
    """The config scenario ``name`` runs with alone (``trace``: ``--trace``, over the file's)."""
    config = load_config(root, os.environ)
    if config.storage_state is not None and any(
        name in use["setup"] for use in summary.collection_use.values()
    ):
        # A collection's setup scenario writes the state the others start from: run
        # alone it starts without it too, as it does in its collection.
        config = replace(config, storage_state=None)
    if headed:
        config = replace(config, headless=False, headed_by="--headed")
    if trace is not None:
        config = replace(config, trace=trace)
    return config


def e2e_command(args: argparse.Namespace) -> int:
    root = project_root_of(args.scenario, args.root, Path.cwd())
    project = Project(root)
    # The index cache: an unchanged project is not parsed again, and then only the
    # helpers and this scenario are.
    summary = load_summary(project)
    name = resolve_scenario_name(project, summary, args.scenario, Path.cwd())
    index = _runnable(project, summary, name)
    scenario = index.scenarios[name]
    reporters = parse_reporters(getattr(args, "reporter", None), junit_allowed=False)
    if reporters.ndjson and args.json:
        raise UsageError("--json and --reporter ndjson both print on stdout: choose one")
    trace = getattr(args, "trace", None)
    config = _run_config(root, summary, name, headed=args.headed, trace=trace)
    print_warnings(config.warnings)
    masker = SecretMasker()
    environment = RunEnvironment.of_project(root, masker)
    print_warnings(environment.warnings)
    stream = sys.stderr if args.json or reporters.ndjson else sys.stdout
    debug = _debug_options(args)
    retries = retries_of(getattr(args, "retries", None), config, debug=debug is not None)
    live = LiveFile()
    reports = ReportSinks(reporters, sys.stdout)
    log = EventLog([live, *reports.sinks], mask=masker.mask_data)
    inputs = ScenarioInputs(project, scenario, index.helper_table, config, masker, environment)
    attempts = ScenarioAttempts(
        project, scenario.name, log, live, stream, title=scenario.header.title
    )
    attempts.begin()
    result = run_attempts(
        attempts,
        retries,
        early_driver.take(),  # started by cli.main; the first attempt's run owns it
        lambda on_started, log_stream, web_server: ScenarioRun(
            inputs,
            RunOptions(
                debug=debug,
                out=stream,
                log_stream=log_stream,
                on_started=on_started,
                web_server=web_server,
                keep_web_server=retries > 0,
            ),
        ),
    )
    attempts.end(result)
    if attempts.status(result) == "flaky":
        print(flaky_line(scenario.name, attempts.failed), file=stream, flush=True)
    _report(reports, log, attempts, project, config)
    if args.json:
        data: dict[str, object] = {**result.to_json()}
        if retries:
            # Additive, only when retries were on: the shape of a plain run stays as it was.
            data.update(status=attempts.status(result), attempts=len(attempts.failed) + 1)
        print(json_dump(masker.mask_data(data)))
    return exit_code_for_run(result.outcome, result.signal)


def _report(
    reports: ReportSinks,
    log: EventLog,
    attempts: ScenarioAttempts,
    project: Project,
    config: Config,
) -> None:
    """The JSON report (its sink has every envelope), then history."""
    reports.finish()
    if attempts.first_run_id is not None:
        history_quietly(project, attempts.first_run_id, log.events, config)
