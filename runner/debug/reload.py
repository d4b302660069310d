"""The debugger's ``reload``: the scenario and helper files read again from disk, checked
as ``unotest check`` checks them, and handed to the paused interpreter.

Reading and checking happen before anything changes, so a file that does not parse or
check rejects the command with its ``file:line:col`` and message and the run stays
paused on the code it had. Where each frame goes on is the language's business
(:mod:`dsl.reload`, :meth:`dsl.interpreter.Interpreter.reload`); the runner adds the
breakpoints, moved with their statements, and the one-line summary a person reads
(``reloaded: 2 functions replaced, 1 statement above the pause skipped``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from dsl import ast
from dsl.checker import Diagnostic, check_program
from dsl.errors import ScenarioSyntaxError
from dsl.interpreter import Step
from dsl.reload import ReloadError, StatementMap, changed_functions
from dsl.scenario import HelperFile, HelperTable, build_helper_table, load_helper, load_scenario
from runner import protocol
from runner.debug.breakpoints import Breakpoints
from runner.errors import CommandError
from runner.project.index import (
    ALL_BUILTIN_OPTIONS,
    ALL_BUILTIN_SIGNATURES,
    Project,
    arity_table,
    read_source,
)

__all__ = ["Reloader", "Sources", "read_sources"]

_E2E_PREFIX = f"{protocol.UNOTEST_DIR}/{protocol.E2E_SUBDIR}/"


@dataclass(frozen=True)
class Sources:
    """The scenario's file and every helper file as they are on disk now, checked."""

    programs: dict[str, ast.Program]
    helpers: HelperTable


def _rejected(problem: Diagnostic) -> CommandError:
    return CommandError(problem.head)


def _helper_paths(base: Path) -> list[Path]:
    """Helper files as the project index finds them: sorted, no hidden folders, no
    symlinked folders followed."""
    if not base.is_dir():
        return []
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        found.extend(Path(dirpath) / f for f in sorted(filenames) if f.endswith(".js"))
    return found


def _read(path: Path, rel: str, kind: str) -> str:
    source, problem = read_source(path, rel, kind)
    if problem is not None:
        raise _rejected(problem)
    assert source is not None
    return source


def read_sources(root: Path, scenario: str, scenario_file: str) -> Sources:
    """Every file the run uses, parsed and checked; ``CommandError`` with the first
    problem (``file:line:col: message``)."""
    project = Project(root)
    helpers: list[HelperFile] = []
    names = set(ALL_BUILTIN_SIGNATURES)
    try:
        for path in _helper_paths(project.helpers_dir):
            rel = project.relative(path)
            name = path.relative_to(project.helpers_dir).as_posix()[: -len(".js")]
            helpers.append(load_helper(_read(path, rel, "helper"), rel, name, names))
        table, errors = build_helper_table(helpers)
        if errors:
            raise errors[0]
        source = _read(root / scenario_file, scenario_file, "scenario")
        loaded = load_scenario(source, scenario_file, scenario)
    except ScenarioSyntaxError as err:
        raise _rejected(Diagnostic.from_syntax_error(err)) from None
    programs = {helper.file: helper.program for helper in helpers}
    programs[loaded.file] = loaded.program
    arities = arity_table(table)
    for program in programs.values():
        found = check_program(
            program, arities, ALL_BUILTIN_SIGNATURES, table.consts, ALL_BUILTIN_OPTIONS
        )
        if found:
            raise _rejected(found[0])
    return Sources(programs, table)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


@dataclass
class Reloader:
    """``reload`` for one run: ``root`` is the project, ``scenario`` the scenario's name
    and ``scenario_file`` its project-relative path; ``breakpoints`` holds the versions
    of the files the run started with (and moves with each reload)."""

    root: Path
    scenario: str
    scenario_file: str
    breakpoints: Breakpoints
    file_keys: dict[str, str] | None = None
    """The names breakpoint commands give files by; a helper file created since the
    run started is added (``_helpers/<name>`` and its path)."""

    def __call__(self, step: Step) -> str:
        """Reload at the pause ``step`` is at; the summary, or ``CommandError``."""
        sources = read_sources(self.root, self.scenario, self.scenario_file)
        old = self.breakpoints.programs
        maps = {
            file: StatementMap(old[file], new)
            for file, new in sources.programs.items()
            if file in old
        }
        on_stack = {(frame.file, frame.fn) for frame in step.frames()}
        try:
            outcome = step.reload(
                sources.programs, sources.helpers, sources.helpers.const_values(), maps
            )
        except ReloadError as err:
            raise CommandError(f"cannot reload: {err.message}; nothing changed") from None
        changed = {
            (file, name)
            for file, new in sources.programs.items()
            for name in (
                changed_functions(old[file], new)
                if file in old
                else [f.name for f in new.functions]
            )
        }
        moved = self.breakpoints.reload(sources.programs, maps)
        if self.file_keys is not None:
            for file in sources.programs:
                if file not in self.file_keys:
                    self.file_keys[file] = file
                    self.file_keys.setdefault(
                        file.removeprefix(_E2E_PREFIX).removesuffix(".js"), file
                    )
        return _summary(
            len(changed - on_stack),
            sorted(n for _, n in changed & on_stack),
            outcome.skipped,
            moved,
        )


def _summary(replaced: int, running: list[str], skipped: int, moved: int) -> str:
    parts = []
    if replaced:
        parts.append(f"{_plural(replaced, 'function')} replaced")
    if running:
        parts.append(f"{', '.join(running)} (on the call stack) going on in the new code")
    if skipped:
        parts.append(f"{_plural(skipped, 'statement')} above the pause skipped")
    if moved:
        parts.append(f"{_plural(moved, 'breakpoint')} moved")
    return "reloaded: " + (", ".join(parts) if parts else "no changes")
