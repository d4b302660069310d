"""Finding a project and what it holds: scenarios, helpers, collections, problems.

Everything a command needs to know about the files on disk is gathered here once,
with every problem collected (not only the first), so ``check`` and ``list`` can
report them all and ``e2e`` can refuse a broken scenario before starting a browser.

Each folder's ``_hooks.js`` is loaded before the scenarios, and every scenario carries
the ones over it (``ScenarioFile.folders``, outer first): a problem in one stops the
scenarios of its folder. A parameterised scenario (``const CASES``) is listed, indexed
and put in collections as its cases, ``<name>[<case>]`` (``cases`` keeps each one's
case names by its file's name).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TypeVar

from dsl import ast
from dsl.builtins import PURE_OPTIONS, PURE_SIGNATURES
from dsl.checker import Arity, Diagnostic, check_program
from dsl.errors import ScenarioSyntaxError
from dsl.interpreter import FunctionRef
from dsl.scenario import (
    HOOKS_FILE,
    HelperFile,
    HelperTable,
    HooksFile,
    ScenarioFile,
    ScenarioHeader,
    build_helper_table,
    hooks_const_clashes,
    load_helper,
    load_hooks_file,
    load_scenario,
    parse_header,
    title_tags,
)
from runner import protocol
from runner.project.collection_file import CollectionUse, parse_collection, scenario_name_problem
from runner.project.config_file import yaml_flow_too_deep
from runner.project.root import (
    CONFIG_FILE,
    SCENARIO_SUFFIX,
    Project,
    case_problem,
    find_project_root,
    problem_order,
    split_case_name,
)
from runner.project.signatures import BROWSER_OPTIONS, BROWSER_SIGNATURES
from runner.project.sources import MAX_SOURCE_BYTES, LoadMemo, read_source, walk_files
from runner.text import did_you_mean

__all__ = [
    "ALL_BUILTIN_OPTIONS",
    "ALL_BUILTIN_SIGNATURES",
    "CONFIG_FILE",
    "MAX_SOURCE_BYTES",
    "SCENARIO_SUFFIX",
    "CollectionEntry",
    "LoadMemo",
    "Project",
    "ProjectIndex",
    "find_project_root",
    "problem_order",
    "read_source",
    "scenario_name_problem",
    "walk_files",
    "yaml_flow_too_deep",
]

ALL_BUILTIN_SIGNATURES: dict[str, Arity] = {**PURE_SIGNATURES, **BROWSER_SIGNATURES}
ALL_BUILTIN_OPTIONS: dict[str, frozenset[str]] = {**PURE_OPTIONS, **BROWSER_OPTIONS}
"""The keys of each built-in's options object, for ``check``."""
T = TypeVar("T")


@dataclass(frozen=True)
class CollectionEntry:
    """A collection file that loads: its protocol meta, its warnings, and ``use`` when
    it lists ``setup:`` scenarios or sets a browser context's keys (``locale``,
    ``storageState``, ...) for its scenarios."""

    meta: protocol.CollectionMeta
    warnings: tuple[str, ...] = ()
    use: CollectionUse | None = None


@dataclass
class ProjectIndex:
    """Everything discovered in a project, problems included."""

    project: Project
    scenarios: dict[str, ScenarioFile] = field(default_factory=dict)
    scenario_metas: list[protocol.ScenarioMeta] = field(default_factory=list)
    helpers: list[HelperFile] = field(default_factory=list)
    helper_table: HelperTable = field(default_factory=HelperTable)
    """Helper functions, the project's hooks and the helper files' consts."""
    collections: dict[str, CollectionEntry] = field(default_factory=dict)
    errors: list[Diagnostic] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    """Project-relative path of every scenario, helper and collection file that was read."""
    unlisted: list[ScenarioFile] = field(default_factory=list)
    """Scenarios that parsed but are not listed (duplicate id): still statically checked."""
    helper_files: list[str] = field(default_factory=list)
    """Project-relative path of every helper file read, those that did not load included
    (``helpers`` holds only those that did)."""
    unparsed: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Scenario sources read but not parsed yet, by name: (project-relative path,
    source); :meth:`load_helpers` fills it, :meth:`load_scenario` parses from it."""
    hooks_files: dict[str, HooksFile] = field(default_factory=dict)
    """Each folder's ``_hooks.js`` that loads, by e2e-relative folder (``""``: e2e's own)."""
    cases: dict[str, list[str]] = field(default_factory=dict)
    """Each parameterised scenario's case names, by its file's scenario name."""
    memo: LoadMemo | None = field(default=None, repr=False)
    """What the previous load in this process read, parsed and checked (see LoadMemo)."""
    _links: set[str] = field(default_factory=set, repr=False)
    """The files under ``e2e/`` that are symbolic links (:meth:`_rel` saw them)."""
    _e2e: tuple[str, str] | None = field(default=None, repr=False)
    """``e2e/`` as a path and project-relative, once asked (:meth:`_rel`)."""

    @classmethod
    def load(
        cls, project: Project, check: bool = True, memo: LoadMemo | None = None
    ) -> ProjectIndex:
        index = cls(project, memo=memo)
        index._load_project_helpers()
        scenarios, hooks = index._scenario_paths()
        index._load_hooks_files(hooks)
        index._load_scenarios(scenarios)
        index._load_collections()
        index._expand_cases_in_collections()
        if check:
            index._check_programs()
        index.errors.sort(key=problem_order)
        if memo is not None:
            memo.forget_unused()
        return index

    @classmethod
    def load_helpers(cls, project: Project) -> ProjectIndex:
        """The helpers (and their table) alone, scenarios parsed one at a time when asked
        (:meth:`load_scenario`): a collection worker runs some of the scenarios, which
        its orchestrator has already found and checked, so it parses only those (in a
        project of 1,000 scenarios, seconds saved in every worker)."""
        index = cls(project)
        index._load_project_helpers()
        scenarios, hooks = index._scenario_paths()
        index._load_hooks_files(hooks)
        for path, name in scenarios:
            rel = project.relative(path)
            source = index._read(path, "scenario")
            if source is not None:
                index.unparsed[name] = (rel, source)
        return index

    @classmethod
    def load_one(cls, project: Project, name: str) -> ProjectIndex:
        """The helpers and the one scenario ``name``, for a run of it whose project was
        found and checked through the index cache (``unotest e2e``): a project of 1,000
        scenarios is not parsed for one of them. Problems found now (a file edited since
        the check) join ``errors``; the scenario is in ``scenarios`` when it loads."""
        index = cls(project)
        index._load_project_helpers()
        index._load_hooks_files(index._hooks_paths_over(name))
        base, _ = split_case_name(name)
        path = project.e2e_dir / f"{base}{SCENARIO_SUFFIX}"
        source = index._read(path, "scenario")
        if source is not None:
            index.unparsed[base] = (project.relative(path), source)
            index.load_scenario(name)
        return index

    def load_scenario(self, name: str) -> ScenarioFile | None:
        """The scenario ``name`` (a case: ``pay[visa]``) as it was read by
        :meth:`load_helpers` (so a worker runs what its orchestrator checked, not a file
        edited since), parsed now unless it already was; None when there was no such
        file or case, when it does not parse or a ``_hooks.js`` over it does not load
        (the problem joins ``errors``)."""
        found = self.scenarios.get(name)
        if found is not None:
            return found
        base, _ = split_case_name(name)
        read = self.unparsed.get(base)
        if read is None:
            self._no_case(name)
            return None
        blocked = self.errors_in(self.project.hooks_files_over(base))
        if blocked:  # its hooks would not run: it does not run either
            self.errors.append(blocked[0])
            return None
        del self.unparsed[base]
        rel, source = read
        try:
            scenario = load_scenario(source, rel, base)
        except ScenarioSyntaxError as err:
            self.errors.append(Diagnostic.from_syntax_error(err))
            return None
        self._attach(scenario)
        found = self.scenarios.get(name)
        if found is None:
            self._no_case(name)
        return found

    def _no_case(self, name: str) -> None:
        """``name`` is no scenario: a parameterised file's own name, or a case it does
        not have, is a problem of that file."""
        problem = case_problem(name, self.cases)
        if problem is not None:
            self.errors.append(Diagnostic(self.project.scenario_file(name), 1, 0, problem))

    def _attach(self, scenario: ScenarioFile) -> tuple[ScenarioFile, ...]:
        """The scenarios a parsed file makes, each with the ``_hooks.js`` files over it
        (outer first): itself, or one per case (its case names kept in ``cases``)."""
        folders = self._attach_folders(scenario.name)
        if folders != scenario.folders:  # most have none: no copy of every scenario
            scenario = replace(scenario, folders=folders)
        made = scenario.each_case()
        if scenario.cases:
            self.cases[scenario.name] = [case.name for case in scenario.cases]
        for one in made:
            self.scenarios[one.name] = one
        return made

    @classmethod
    def load_files(cls, files: Iterable[Path], base: Path) -> ProjectIndex:
        """Loose files outside any project: ``*.test.js`` are scenarios, other files helpers.

        Helpers among the files are callable from the scenarios among them, as in a
        project; paths are shown relative to ``base`` when they lie under it.
        """
        index = cls(Project(base))
        scenario_paths: list[tuple[Path, str]] = []
        helper_paths: list[tuple[Path, str]] = []
        hooks_paths: list[tuple[Path, str]] = []
        for path in files:
            if path.name.endswith(SCENARIO_SUFFIX):
                scenario_paths.append((path, path.name[: -len(SCENARIO_SUFFIX)]))
            elif path.name == HOOKS_FILE:
                hooks_paths.append((path, ""))  # the hooks of the loose scenarios
            else:
                helper_paths.append((path, path.stem))
        index._load_helpers(helper_paths)
        index._load_hooks_files(hooks_paths[:1])
        index._load_scenarios(scenario_paths)
        index._check_programs()
        index.errors.sort(key=problem_order)
        return index

    # --- discovery -------------------------------------------------------------

    def _walk(
        self,
        base: Path,
        suffix: str,
        skip: tuple[str, ...] = (),
        within: Path | None = None,
        links_out: list[Path] | None = None,
    ) -> list[Path]:
        """:func:`walk_files`, through the memo when there is one."""
        if self.memo is None:
            return walk_files(base, suffix, skip, within, links_out)
        found, links = self.memo.walk(base, suffix, skip, within)
        if links_out is not None:
            links_out.extend(links)
        return found

    def _rel(self, path: Path) -> str:
        """``project.relative(path)`` for a file the walk found under ``e2e/``: the walk
        follows no linked folder, so only the file itself may be a link (one ``lstat``
        rather than resolving every folder of the path, a fifth of a load at 10,000)."""
        if self._e2e is None:
            e2e = self.project.e2e_dir
            self._e2e = (str(e2e), self.project.relative(e2e))
        base, rel = self._e2e
        text = str(path)
        if text.startswith(base + os.sep):
            memo = self.memo
            known = memo.known_rel(text) if memo is not None else None
            if known is not None:
                return known
            if not os.path.islink(text):
                found = rel + text[len(base) :].replace(os.sep, "/")
                if memo is not None:
                    memo.keep_rel(text, found)
                return found
            self._links.add(text)  # its target may change unseen: always looked at
        return self.project.relative(path)

    def _read(self, path: Path, kind: str, rel: str | None = None) -> str | None:
        rel = rel if rel is not None else self._rel(path)
        self.files.append(rel)
        memo = self.memo
        source, problem = (
            memo.source(path, rel, kind, linked=str(path) in self._links)
            if memo is not None
            else read_source(path, rel, kind)
        )
        if problem is not None:
            self.errors.append(problem)
        return source

    def _load_project_helpers(self) -> None:
        helpers = self.project.helpers_dir
        paths: list[tuple[Path, str]] = []
        links_out: list[Path] = []
        for path in self._walk(helpers, ".js", within=self.project.e2e_dir, links_out=links_out):
            if path.name != HOOKS_FILE:
                paths.append((path, path.relative_to(helpers).as_posix()[: -len(".js")]))
                continue
            # It would be a helper file, its hooks the project's: surely not what was meant.
            rel = self.project.relative(path)
            self.files.append(rel)
            self.helper_files.append(rel)
            self.errors.append(
                Diagnostic(
                    rel,
                    1,
                    0,
                    f"a {HOOKS_FILE} holds the hooks of its folder's scenarios, and "
                    f"{protocol.HELPERS_SUBDIR}/ holds none: declare the project's hooks "
                    f"in a helper file (e.g. {protocol.HELPERS_SUBDIR}/hooks.js), a "
                    f"folder's in that folder's {HOOKS_FILE}",
                )
            )
        self._warn_links_out(links_out)
        self._load_helpers(paths)

    def _warn_links_out(self, links: list[Path]) -> None:
        for path in links:
            self.warnings.append(
                f"{self.project.relative(path)}: ignored: a symbolic link that leads out of "
                f"{protocol.UNOTEST_DIR}/{protocol.E2E_SUBDIR}/ (copy the file here instead)"
            )

    def _scenario_paths(self) -> tuple[list[tuple[Path, str]], list[tuple[Path, str]]]:
        """Every scenario file under ``e2e/`` with its name, and every ``_hooks.js``
        with its folder (outer first); other ``.js`` files there are a warning."""
        e2e = self.project.e2e_dir
        skip = (protocol.HELPERS_SUBDIR, protocol.COLLECTIONS_SUBDIR)
        found: list[tuple[Path, str]] = []
        hooks: list[tuple[Path, str]] = []
        links_out: list[Path] = []
        prefix = len(str(e2e)) + 1
        for path in self._walk(e2e, ".js", skip=skip, within=e2e, links_out=links_out):
            inner = str(path)[prefix:].replace(os.sep, "/")
            if path.name.endswith(SCENARIO_SUFFIX):
                found.append((path, inner[: -len(SCENARIO_SUFFIX)]))
            elif path.name == HOOKS_FILE:
                hooks.append((path, inner[: -len(HOOKS_FILE)].rstrip("/")))
            else:
                hint = (
                    f" (a folder's hooks file is named {HOOKS_FILE})" if "hook" in path.name else ""
                )
                self.warnings.append(
                    f"{self.project.relative(path)}: ignored: scenario files end in "
                    f"'{SCENARIO_SUFFIX}' and helper files live in "
                    f"{protocol.E2E_SUBDIR}/{protocol.HELPERS_SUBDIR}/{hint}"
                )
        self._warn_links_out(links_out)
        return found, hooks

    def _hooks_paths_over(self, name: str) -> list[tuple[Path, str]]:
        """The ``_hooks.js`` files over scenario ``name`` that exist, with their folders."""
        folders = split_case_name(name)[0].split("/")[:-1]
        found: list[tuple[Path, str]] = []
        for depth in range(len(folders) + 1):
            path = self.project.e2e_dir.joinpath(*folders[:depth], HOOKS_FILE)
            if path.exists() or path.is_symlink():
                found.append((path, "/".join(folders[:depth])))
        return found

    def _load_hooks_files(self, paths: Iterable[tuple[Path, str]]) -> None:
        """Each folder's ``_hooks.js``, outer folders first (an inner one's consts are
        checked against theirs and the helpers'); one with a problem is left out."""
        names = set(ALL_BUILTIN_SIGNATURES)
        for path, folder in paths:
            rel = self._rel(path)
            source = self._read(path, "hooks file", rel)
            if source is None:
                continue
            try:
                hooks = self._parse(
                    "hooks",
                    rel,
                    folder,
                    source,
                    partial(load_hooks_file, source, rel, folder, names),
                )
            except ScenarioSyntaxError as err:
                self.errors.append(Diagnostic.from_syntax_error(err))
                continue
            outer = [h for h in self.hooks_files.values() if h.covers(folder + "/")]
            clashes = hooks_const_clashes(hooks, self.helper_table, outer)
            if clashes:
                self.errors.extend(Diagnostic.from_syntax_error(e) for e in clashes)
                continue
            self.hooks_files[folder] = hooks

    def _load_helpers(self, paths: Iterable[tuple[Path, str]]) -> None:
        names = set(ALL_BUILTIN_SIGNATURES)
        for path, name in paths:
            rel = self._rel(path)
            self.helper_files.append(rel)
            source = self._read(path, "helper", rel)
            if source is None:
                continue
            try:
                helper = self._parse(
                    "helper", rel, name, source, partial(load_helper, source, rel, name, names)
                )
                self.helpers.append(helper)
            except ScenarioSyntaxError as err:
                self.errors.append(Diagnostic.from_syntax_error(err))
        table, errors = build_helper_table(self.helpers)
        self.helper_table = table
        self.errors.extend(Diagnostic.from_syntax_error(e) for e in errors)

    def _load_scenarios(self, paths: Iterable[tuple[Path, str]]) -> None:
        ids: dict[str, str] = {}
        for path, name in paths:
            rel = self._rel(path)
            source = self._read(path, "scenario", rel)
            if source is None:
                continue
            try:
                if name.endswith("]"):
                    raise ScenarioSyntaxError(_BRACKETED, rel, 1, 0, "")
                scenario = self._parse(
                    "scenario", rel, name, source, partial(load_scenario, source, rel, name)
                )
            except ScenarioSyntaxError as err:
                self.errors.append(Diagnostic.from_syntax_error(err))
                self._list_header_anyway(source, rel, name, ids)
                continue
            if not self._claim_id(scenario.header.id, rel, ids, source):
                self.unlisted.append(scenario)
                continue
            for made in self._attach(scenario):
                self.scenario_metas.append(_scenario_meta(made.header, made.name, rel))

    def _list_header_anyway(self, source: str, rel: str, name: str, ids: dict[str, str]) -> None:
        """A scenario whose body is broken still has an identity the viewer can show."""
        try:
            header = parse_header(source, rel)
        except ScenarioSyntaxError:
            return
        if self._claim_id(header.id, rel, ids, source):
            self.scenario_metas.append(_scenario_meta(header, name, rel))

    def _claim_id(self, scenario_id: str, rel: str, ids: dict[str, str], source: str) -> bool:
        first = ids.get(scenario_id)
        if first is not None:
            first_line = source.split("\n", 1)[0].rstrip("\r").lstrip("\ufeff")
            col = max(first_line.find("id-"), 0)
            self.errors.append(
                Diagnostic(
                    rel,
                    1,
                    col,
                    f"id 'id-{scenario_id}' is already used by {first}: "
                    "ids must be unique across the project",
                    first_line,
                )
            )
            return False
        ids[scenario_id] = rel
        return True

    def _load_collections(self) -> None:
        base = self.project.collections_dir
        for path in walk_files(base, "", keep_hidden=True):
            rel = self.project.relative(path)
            if path.name.endswith(".yml"):
                self.warnings.append(
                    f"{rel}: ignored: collection files end in '.yaml' "
                    f"(rename it to {path.name[: -len('.yml')]}.yaml)"
                )
                continue
            if not path.name.endswith(".yaml"):
                continue
            if path.parent != base:
                self.warnings.append(
                    f"{rel}: ignored: collections live directly in "
                    f"{protocol.E2E_SUBDIR}/{protocol.COLLECTIONS_SUBDIR}/, not in a subfolder"
                )
                continue
            entry = self._load_collection(path)
            if entry is not None:
                self.collections[entry.meta["name"]] = entry

    def _load_collection(self, path: Path) -> CollectionEntry | None:
        rel = self.project.relative(path)
        name = path.name[: -len(".yaml")]
        reason = protocol.validate_collection_name(name)
        if reason is not None:
            self.files.append(rel)
            self.errors.append(Diagnostic(rel, 1, 0, f"collection name '{name}' {reason}"))
            return None
        source = self._read(path, "collection")
        if source is None:
            return None
        errors_before = len(self.errors)
        warnings: list[str] = []
        parsed = parse_collection(source, rel, name, self.errors, warnings, self.project.root)
        self.warnings.extend(warnings)
        if parsed is None or len(self.errors) > errors_before:
            return None
        return CollectionEntry(parsed[0], tuple(warnings), parsed[1])

    def _expand_cases_in_collections(self) -> None:
        """A collection's entry naming a parameterised scenario, under ``scenarios:`` or
        ``setup:``, stands for its cases, in their order (a case may be listed on its
        own: ``pay[visa]``)."""
        for name, entry in list(self.collections.items()):
            listed = entry.meta["scenarios"]
            setup = entry.use.setup if entry.use is not None else ()
            if not any(item in self.cases for item in [*listed, *setup]):
                continue
            meta = entry.meta.copy()
            meta["scenarios"] = self._with_cases(listed)
            use = replace(entry.use, setup=tuple(self._with_cases(setup))) if entry.use else None
            self.collections[name] = replace(entry, meta=meta, use=use)

    def _with_cases(self, listed: Iterable[str]) -> list[str]:
        return [
            case
            for item in listed
            for case in (
                [f"{item}[{c}]" for c in self.cases[item]] if item in self.cases else [item]
            )
        ]

    def _check_programs(self) -> None:
        self.errors.extend(self.check_programs())

    def check_programs(self) -> list[Diagnostic]:
        """The static checker's problems in every helper, ``_hooks.js`` and scenario file
        (once, however many cases it has), in checking order (not added to ``errors``).
        Each sees the helper consts, and the consts of the ``_hooks.js`` files over it."""
        helper_arities = arity_table(self.helper_table)
        consts = set(self.helper_table.consts)
        programs = [(h.program, consts) for h in self.helpers]
        for hooks in self.hooks_files.values():
            over = [h for h in self.hooks_files.values() if h.covers(hooks.folder + "/")]
            programs.append((hooks.program, consts | {c.name for h in over for c in h.consts}))
        files = {s.file: s for s in [*self.scenarios.values(), *self.unlisted]}
        for scenario in files.values():
            if not scenario.folders:
                folders = self._attach_folders(scenario.name)
                scenario = replace(scenario, folders=folders) if folders else scenario
            programs.append((scenario.program, consts | set(scenario.consts())))
        found: list[Diagnostic] = []
        memo = self.memo
        for program, names in programs:

            def check(program: ast.Program = program, names: set[str] = names) -> list[Diagnostic]:
                return check_program(
                    program, helper_arities, ALL_BUILTIN_SIGNATURES, names, ALL_BUILTIN_OPTIONS
                )

            # The built-in tables are the same in one process: the helpers' arities and
            # the consts in scope are what may differ from one load to the next.
            found.extend(memo.checked(program, (helper_arities, names), check) if memo else check())
        return found

    def _parse(self, kind: str, rel: str, name: str, source: str, parse: Callable[[], T]) -> T:
        return self.memo.parsed(kind, rel, name, source, parse) if self.memo else parse()

    def _attach_folders(self, name: str) -> tuple[HooksFile, ...]:
        """The ``_hooks.js`` files over scenario ``name``, outer first."""
        if not self.hooks_files:
            return ()  # a project without any: twice per scenario and load, for nothing
        over = [h for h in self.hooks_files.values() if h.covers(name)]
        return tuple(sorted(over, key=lambda hooks: len(hooks.folder)))

    # --- lookups ---------------------------------------------------------------

    def scenario_tags(self) -> dict[str, list[str]]:
        """Each listed scenario's ``@tags`` (read from its title), by name: kept in the
        index cache beside the metas (0.5.0's ``ScenarioMeta`` has no such field), so
        ``unotest list --json`` carries them without parsing anything."""
        return {meta["name"]: list(title_tags(meta["title"])) for meta in self.scenario_metas}

    def helper_metas(self) -> list[protocol.HelperMeta]:
        return [{"name": h.name, "path": h.file} for h in self.helpers]

    def errors_in(self, files: Iterable[str]) -> list[Diagnostic]:
        wanted = set(files)
        return [d for d in self.errors if d.file in wanted]

    def helper_problems(self) -> list[Diagnostic]:
        """The problems of every helper file, one that does not parse included: any of
        them stops every scenario (each run loads every helper file)."""
        return self.errors_in(self.helper_files)

    def problems_of(self, scenario_file: str | None) -> list[Diagnostic]:
        """What stops a scenario from running: the helper files' problems first (a
        syntax error there is the cause of the scenario's "'x' is not a function"),
        then those of the ``_hooks.js`` files over it (its hooks), then its file's own."""
        if scenario_file is None:
            return self.helper_problems()
        hooks = self.project.hooks_files_over(self.project.scenario_name_of(scenario_file))
        own = self.errors_in([*hooks, scenario_file])
        return self.helper_problems() + [d for d in own if d.file not in self.helper_files]

    def orphan_warnings(self) -> list[str]:
        """Collection entries naming no scenario, or one twice: they are skipped when run."""
        known = {meta["name"] for meta in self.scenario_metas}
        found: list[str] = []
        for entry in self.collections.values():
            for name in entry.use.setup if entry.use is not None else ():
                if name not in known and not self._unloadable(name):
                    found.append(
                        f"{entry.meta['path']}: setup scenario '{name}' does not exist: the "
                        f"collection will fail{did_you_mean(name, known)}"
                    )
            seen: set[str] = set()
            for name in entry.meta["scenarios"]:
                if name in seen:
                    found.append(f"{entry.meta['path']}: scenario '{name}' is listed twice")
                elif name not in known and not self._unloadable(name):
                    hint = did_you_mean(name, known)
                    found.append(
                        f"{entry.meta['path']}: scenario '{name}' does not exist and will be "
                        f"skipped{hint}"
                    )
                seen.add(name)
        return found

    def _unloadable(self, name: str) -> bool:
        """Its file is there but is no scenario (a wrong header): a problem of its own,
        said where it is, not a name that does not exist."""
        return bool(self.errors_in([self.project.scenario_file(name)]))


_BRACKETED = (
    "a scenario file's name cannot end in ']': <name>[<case>] names a case of a "
    "parameterised scenario; rename the file"
)


def _scenario_meta(header: ScenarioHeader, name: str, rel: str) -> protocol.ScenarioMeta:
    return {
        "id": header.id,
        "title": header.title,
        "color": header.color,
        "name": name,
        "path": rel,
    }


def arity_table(table: Mapping[str, FunctionRef]) -> dict[str, Arity]:
    return {name: (len(ref.decl.params), len(ref.decl.params)) for name, ref in table.items()}
