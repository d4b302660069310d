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

from dataclasses import dataclass, field, replace
from pathlib import Path

from dsl import ast
from dsl.checker import Diagnostic, check_program
from dsl.errors import ScenarioSyntaxError
from dsl.interpreter import Step
from dsl.reload import ReloadError, StatementMap, changed_functions
from dsl.scenario import (
    HelperFile,
    HelperTable,
    HooksFile,
    build_helper_table,
    hooks_const_clashes,
    load_helper,
    load_hooks_file,
    load_scenario,
)
from dsl.values import Value
from runner import protocol
from runner.debug.breakpoints import Breakpoints
from runner.errors import CommandError
from runner.project.index import (
    ALL_BUILTIN_OPTIONS,
    ALL_BUILTIN_SIGNATURES,
    Project,
    arity_table,
    read_source,
    walk_files,
)
from runner.project.root import HOOKS_FILE, split_case_name

__all__ = ["Reloader", "Sources", "read_sources"]

_E2E_PREFIX = f"{protocol.UNOTEST_DIR}/{protocol.E2E_SUBDIR}/"


@dataclass(frozen=True)
class Sources:
    """The scenario's file, the ``_hooks.js`` files over it and every helper file as
    they are on disk now, checked; ``consts`` the scenario's besides the helpers' (its
    folders', its ``CASES``)."""

    programs: dict[str, ast.Program]
    helpers: HelperTable
    consts: dict[str, Value] = field(default_factory=dict)


def _rejected(problem: Diagnostic) -> CommandError:
    return CommandError(problem.head)


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
        # Found as the index finds them (no hidden file, no link out of unotest/e2e/):
        # a reload reads what the run read, nothing more.
        for path in walk_files(project.helpers_dir, ".js", within=project.e2e_dir):
            rel = project.relative(path)
            name = path.relative_to(project.helpers_dir).as_posix()[: -len(".js")]
            helpers.append(load_helper(_read(path, rel, "helper"), rel, name, names))
        table, errors = build_helper_table(helpers)
        if errors:
            raise errors[0]
        folders = _hooks_files(project, scenario, table)
        source = _read(root / scenario_file, scenario_file, "scenario")
        base = split_case_name(scenario)[0]
        loaded = replace(load_scenario(source, scenario_file, base), folders=folders)
    except ScenarioSyntaxError as err:
        raise _rejected(Diagnostic.from_syntax_error(err)) from None
    programs = {helper.file: helper.program for helper in helpers}
    seen = set(table.consts)
    checked = [(program, seen) for program in programs.values()]
    for folder in folders:
        seen = seen | {c.name for c in folder.consts}
        checked.append((folder.program, seen))
        programs[folder.file] = folder.program
    programs[loaded.file] = loaded.program
    checked.append((loaded.program, set(table.consts) | set(loaded.consts())))
    arities = arity_table(table)
    for program, consts in checked:
        found = check_program(program, arities, ALL_BUILTIN_SIGNATURES, consts, ALL_BUILTIN_OPTIONS)
        if found:
            raise _rejected(found[0])
    return Sources(programs, table, loaded.consts())


def _hooks_files(project: Project, scenario: str, table: HelperTable) -> tuple[HooksFile, ...]:
    """The ``_hooks.js`` files over ``scenario``, outer first, loaded as the index loads
    them (a problem raised as ``ScenarioSyntaxError``)."""
    found: list[HooksFile] = []
    for rel in project.hooks_files_over(scenario):
        path = project.root / rel
        if not (path.exists() or path.is_symlink()):
            continue
        folder = rel[len(_E2E_PREFIX) : -len(HOOKS_FILE)].rstrip("/")
        names = set(ALL_BUILTIN_SIGNATURES)
        hooks = load_hooks_file(_read(path, rel, "hooks file"), rel, folder, names)
        clashes = hooks_const_clashes(hooks, table, found)
        if clashes:
            raise clashes[0]
        found.append(hooks)
    return tuple(found)


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
            consts = {**sources.helpers.const_values(), **sources.consts}
            outcome = step.reload(sources.programs, sources.helpers, consts, maps)
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
