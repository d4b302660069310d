"""Finding a project and what it holds: scenarios, helpers, collections, problems.

Everything a command needs to know about the files on disk is gathered here once,
with every problem collected (not only the first), so ``check`` and ``list`` can
report them all and ``e2e`` can refuse a broken scenario before starting a browser.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import yaml

from dsl.builtins import PURE_OPTIONS, PURE_SIGNATURES
from dsl.checker import Arity, Diagnostic, check_program
from dsl.errors import ScenarioSyntaxError
from dsl.interpreter import FunctionRef
from dsl.scenario import (
    HelperFile,
    HelperTable,
    ScenarioFile,
    ScenarioHeader,
    build_helper_table,
    load_helper,
    load_scenario,
    parse_header,
)
from runner import protocol
from runner.project.problems import SCENARIO_SUFFIX, problem_order
from runner.project.root import CONFIG_FILE, Project, find_project_root
from runner.project.signatures import BROWSER_OPTIONS, BROWSER_SIGNATURES
from runner.project.yaml_depth import yaml_flow_too_deep
from runner.text import did_you_mean, has_control_character, show_name

__all__ = [
    "ALL_BUILTIN_OPTIONS",
    "ALL_BUILTIN_SIGNATURES",
    "CONFIG_FILE",
    "SCENARIO_SUFFIX",
    "CollectionEntry",
    "Project",
    "ProjectIndex",
    "find_project_root",
    "problem_order",
    "read_source",
    "scenario_name_problem",
    "yaml_flow_too_deep",
]

ALL_BUILTIN_SIGNATURES: dict[str, Arity] = {**PURE_SIGNATURES, **BROWSER_SIGNATURES}
ALL_BUILTIN_OPTIONS: dict[str, frozenset[str]] = {**PURE_OPTIONS, **BROWSER_OPTIONS}
"""The keys of each built-in's options object, for ``check``."""
MAX_SOURCE_BYTES = 5 * 1024 * 1024


@dataclass(frozen=True)
class CollectionEntry:
    meta: protocol.CollectionMeta
    warnings: tuple[str, ...] = ()


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

    @classmethod
    def load(cls, project: Project, check: bool = True) -> ProjectIndex:
        index = cls(project)
        index._load_project_helpers()
        index._load_scenarios(index._scenario_paths())
        index._load_collections()
        if check:
            index._check_programs()
        index.errors.sort(key=problem_order)
        return index

    @classmethod
    def load_helpers(cls, project: Project) -> ProjectIndex:
        """The helpers (and their table) alone, scenarios parsed one at a time when asked
        (:meth:`load_scenario`): a collection worker runs some of the scenarios, which
        its orchestrator has already found and checked, so it parses only those (in a
        project of 1,000 scenarios, seconds saved in every worker)."""
        index = cls(project)
        index._load_project_helpers()
        for path, name in index._scenario_paths():
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
        path = project.e2e_dir / f"{name}{SCENARIO_SUFFIX}"
        source = index._read(path, "scenario")
        if source is not None:
            index.unparsed[name] = (project.relative(path), source)
            index.load_scenario(name)
        return index

    def load_scenario(self, name: str) -> ScenarioFile | None:
        """The scenario ``name`` as it was read by :meth:`load_helpers` (so a worker runs
        what its orchestrator checked, not a file edited since), parsed now unless it
        already was; None when there was no such file or it does not parse (the problem
        joins ``errors``)."""
        found = self.scenarios.get(name)
        if found is not None:
            return found
        read = self.unparsed.pop(name, None)
        if read is None:
            return None
        rel, source = read
        try:
            scenario = load_scenario(source, rel, name)
        except ScenarioSyntaxError as err:
            self.errors.append(Diagnostic.from_syntax_error(err))
            return None
        self.scenarios[name] = scenario
        return scenario

    @classmethod
    def load_files(cls, files: Iterable[Path], base: Path) -> ProjectIndex:
        """Loose files outside any project: ``*.test.js`` are scenarios, other files helpers.

        Helpers among the files are callable from the scenarios among them, as in a
        project; paths are shown relative to ``base`` when they lie under it.
        """
        index = cls(Project(base))
        scenario_paths: list[tuple[Path, str]] = []
        helper_paths: list[tuple[Path, str]] = []
        for path in files:
            if path.name.endswith(SCENARIO_SUFFIX):
                scenario_paths.append((path, path.name[: -len(SCENARIO_SUFFIX)]))
            else:
                helper_paths.append((path, path.stem))
        index._load_helpers(helper_paths)
        index._load_scenarios(scenario_paths)
        index._check_programs()
        index.errors.sort(key=problem_order)
        return index

    # --- discovery -------------------------------------------------------------

    def _read(self, path: Path, kind: str) -> str | None:
        rel = self.project.relative(path)
        self.files.append(rel)
        source, problem = read_source(path, rel, kind)
        if problem is not None:
            self.errors.append(problem)
        return source

    def _load_project_helpers(self) -> None:
        helpers = self.project.helpers_dir
        self._load_helpers(
            (path, path.relative_to(helpers).as_posix()[: -len(".js")])
            for path in _walk(helpers, ".js")
        )

    def _scenario_paths(self) -> list[tuple[Path, str]]:
        """Every scenario file under ``e2e/`` with its name; other ``.js`` files there are
        a warning."""
        e2e = self.project.e2e_dir
        skip = (protocol.HELPERS_SUBDIR, protocol.COLLECTIONS_SUBDIR)
        found: list[tuple[Path, str]] = []
        for path in _walk(e2e, ".js", skip=skip):
            if path.name.endswith(SCENARIO_SUFFIX):
                found.append((path, path.relative_to(e2e).as_posix()[: -len(SCENARIO_SUFFIX)]))
            else:
                self.warnings.append(
                    f"{self.project.relative(path)}: ignored: scenario files end in "
                    f"'{SCENARIO_SUFFIX}' and helper files live in "
                    f"{protocol.E2E_SUBDIR}/{protocol.HELPERS_SUBDIR}/"
                )
        return found

    def _load_helpers(self, paths: Iterable[tuple[Path, str]]) -> None:
        names = set(ALL_BUILTIN_SIGNATURES)
        for path, name in paths:
            rel = self.project.relative(path)
            self.helper_files.append(rel)
            source = self._read(path, "helper")
            if source is None:
                continue
            try:
                self.helpers.append(load_helper(source, rel, name, names))
            except ScenarioSyntaxError as err:
                self.errors.append(Diagnostic.from_syntax_error(err))
        table, errors = build_helper_table(self.helpers)
        self.helper_table = table
        self.errors.extend(Diagnostic.from_syntax_error(e) for e in errors)

    def _load_scenarios(self, paths: Iterable[tuple[Path, str]]) -> None:
        ids: dict[str, str] = {}
        for path, name in paths:
            rel = self.project.relative(path)
            source = self._read(path, "scenario")
            if source is None:
                continue
            try:
                scenario = load_scenario(source, rel, name)
            except ScenarioSyntaxError as err:
                self.errors.append(Diagnostic.from_syntax_error(err))
                self._list_header_anyway(source, rel, name, ids)
                continue
            if not self._claim_id(scenario.header.id, rel, ids, source):
                self.unlisted.append(scenario)
                continue
            self.scenarios[name] = scenario
            self.scenario_metas.append(_scenario_meta(scenario.header, name, rel))

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
        for path in _walk(base, ""):
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
        meta = _parse_collection(source, rel, name, self.errors, warnings)
        self.warnings.extend(warnings)
        if meta is None or len(self.errors) > errors_before:
            return None
        return CollectionEntry(meta, tuple(warnings))

    def _check_programs(self) -> None:
        self.errors.extend(self.check_programs())

    def check_programs(self) -> list[Diagnostic]:
        """The static checker's problems in every helper and scenario, in checking order
        (not added to ``errors``)."""
        helper_arities = arity_table(self.helper_table)
        consts = self.helper_table.consts
        programs = [h.program for h in self.helpers]
        programs += [s.program for s in self.scenarios.values()]
        programs += [s.program for s in self.unlisted]
        found: list[Diagnostic] = []
        for program in programs:
            found.extend(
                check_program(
                    program, helper_arities, ALL_BUILTIN_SIGNATURES, consts, ALL_BUILTIN_OPTIONS
                )
            )
        return found

    # --- lookups ---------------------------------------------------------------

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
        then the scenario file's own."""
        own = self.errors_in([scenario_file]) if scenario_file is not None else []
        return self.helper_problems() + [d for d in own if d.file not in self.helper_files]

    def orphan_warnings(self) -> list[str]:
        """Collection entries naming no scenario, or one twice: they are skipped when run."""
        known = {meta["name"] for meta in self.scenario_metas}
        found: list[str] = []
        for entry in self.collections.values():
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


def _scenario_meta(header: ScenarioHeader, name: str, rel: str) -> protocol.ScenarioMeta:
    return {
        "id": header.id,
        "title": header.title,
        "color": header.color,
        "name": name,
        "path": rel,
    }


def read_source(path: Path, rel: str, kind: str) -> tuple[str | None, Diagnostic | None]:
    """The text of a scenario, helper or collection file, or the one problem that stops it.

    ``kind`` ("scenario", "helper", "collection") only shapes the message.
    """
    try:
        if not path.is_file():
            if not path.exists():  # deleted (or a dangling link) since it was listed
                return None, Diagnostic(rel, 1, 0, "the file is gone")
            # A FIFO or a device (a symlink to /dev/zero) would block or never end.
            return None, Diagnostic(rel, 1, 0, f"not a regular file, so not a {kind}")
        size = path.stat().st_size
        if size > MAX_SOURCE_BYTES:
            return None, Diagnostic(
                rel, 1, 0, f"the file is {size:,} bytes; a {kind} may be {MAX_SOURCE_BYTES:,}"
            )
        data = path.read_bytes()
    except OSError as err:
        return None, Diagnostic(rel, 1, 0, f"cannot read the file: {err.strerror or err}")
    if b"\0" in data:
        return None, Diagnostic(rel, 1, 0, f"this is a binary file; a {kind} is UTF-8 text")
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        line_start = data.rfind(b"\n", 0, err.start) + 1
        line_end = data.find(b"\n", err.start)
        text = data[line_start : line_end if line_end >= 0 else len(data)]
        col = len(data[line_start : err.start].decode("utf-8", "replace"))
        return None, Diagnostic(
            rel,
            line,
            col,
            f"the file is not UTF-8 text (byte 0x{data[err.start]:02x} at offset {err.start}): "
            "save it as UTF-8",
            text.decode("utf-8", "replace").rstrip("\r"),
        )


_COLLECTION_KEYS = ("description", "scenarios")
MAX_COLLECTION_DEPTH = 16


def scenario_name_problem(name: str) -> str | None:
    """Why ``name`` can never name a scenario (a path under unotest/e2e/), or ``None``.

    A collection entry or ``unotest e2e NAME`` with ``..``, an absolute path, a NUL or a
    control character is refused as such, instead of being looked up and "not found".
    """
    shown = show_name(name)
    if not name.strip():
        return (
            f"{shown} is empty: a scenario name is its path under unotest/e2e/ "
            "(e.g. auth/signin-flow)"
        )
    if has_control_character(name):
        return f"{shown} holds a control character or line break: it is not a scenario name"
    if name.startswith("/"):
        return (
            f"{shown} is an absolute path: a scenario name is its path under unotest/e2e/ "
            "without the .test.js suffix (e.g. auth/signin-flow)"
        )
    if any(part in ("", ".", "..") for part in name.split("/")):
        return (
            f"{shown} has an empty, '.' or '..' segment: a scenario name is its path under "
            "unotest/e2e/ (e.g. auth/signin-flow)"
        )
    return None


def _yaml_type(value: object) -> str:
    if value is None:
        return "empty (null)"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return f"a {type(value).__name__}"


class _Refused(Exception):
    """The one problem that stops a collection file, raised where it is found."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


class _CollectionFile:
    """One collection file being read: its lines, and where each top-level key stands,
    so that every problem points at the line that causes it."""

    def __init__(self, rel: str, source: str) -> None:
        self.rel = rel
        self.lines = source.splitlines()
        self.positions: dict[object, tuple[yaml.Node, yaml.Node]] = {}

    def refuse(self, line: int, col: int, message: str) -> _Refused:
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        return _Refused(Diagnostic(self.rel, line, col, message, text))

    def refuse_file(self, message: str) -> _Refused:
        """A problem of the whole file, shown without a source line."""
        return _Refused(Diagnostic(self.rel, 1, 0, message))

    def note_keys(self, node: yaml.MappingNode | None, warnings: list[str]) -> None:
        """Remember where each top-level key and value is; warn about a repeated key."""
        for key_node, value_node in node.value if node is not None else []:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
            line = key_node.start_mark.line + 1
            if key in self.positions:
                first = self.positions[key][0].start_mark.line + 1
                warnings.append(
                    f"{self.rel}:{line}: key '{key}' is repeated (first at line {first}); "
                    "the last one is used"
                )
            if key is not None:
                self.positions[key] = (key_node, value_node)

    def where(self, key: str, index: int | None = None) -> tuple[int, int]:
        """Line and column of a key, or of item ``index`` of its list."""
        nodes = self.positions.get(key)
        if nodes is None:
            return 1, 0
        target: yaml.Node = nodes[0]
        if index is not None and isinstance(nodes[1], yaml.SequenceNode):
            items = nodes[1].value
            if index < len(items):
                target = items[index]
        return target.start_mark.line + 1, target.start_mark.column


def _parse_collection(
    source: str, rel: str, name: str, errors: list[Diagnostic], warnings: list[str]
) -> protocol.CollectionMeta | None:
    """``description:`` and ``scenarios:`` of one collection file (runner.md §6).

    Only ``yaml.safe_load``: a ``!!python/...`` tag is refused, never executed, and
    anchors are not expanded into copies (a "billion laughs" file stays small).
    """
    file = _CollectionFile(rel, source)
    try:
        node, data = _load_collection_yaml(source, file)
        file.note_keys(node, warnings)
        description, scenarios = _collection_fields(data, file, warnings)
    except _Refused as refused:
        errors.append(refused.diagnostic)
        return None
    return {"name": name, "path": rel, "description": description, "scenarios": scenarios}


def _load_collection_yaml(
    source: str, file: _CollectionFile
) -> tuple[yaml.MappingNode | None, dict[object, object]]:
    """The top-level node (for positions) and the loaded mapping."""
    too_deep = yaml_flow_too_deep(source, MAX_COLLECTION_DEPTH)
    if too_deep is not None:
        raise file.refuse(
            *too_deep,
            f"invalid YAML: nested more than {MAX_COLLECTION_DEPTH} levels deep "
            "(a collection is a mapping with a list of scenario names)",
        )
    try:
        _refuse_aliases(source, file)
        node = yaml.compose(source, Loader=yaml.SafeLoader)
        data = yaml.safe_load(source)
    except yaml.YAMLError as err:
        raise _yaml_error(err, file) from None
    except RecursionError:
        raise file.refuse_file("invalid YAML: nested too deeply") from None
    except ValueError as err:
        # int() of a number with more than 4,300 digits (sys.get_int_max_str_digits).
        reason = err.args[0].split(":")[0] if err.args else "a value is malformed"
        raise file.refuse_file(f"invalid YAML: a value cannot be read ({reason})") from None
    if data is None:
        data = {}
    if not isinstance(data, dict) or not isinstance(node, yaml.MappingNode | None):
        raise file.refuse_file(
            f"a collection is a mapping with 'scenarios:' (and optional 'description:'), "
            f"not {_yaml_type(data)}"
        )
    return node, data


def _refuse_aliases(source: str, file: _CollectionFile) -> None:
    """Walks the parser's events, so an alias is refused before anything is built."""
    for event in yaml.parse(source, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.AliasEvent):
            raise file.refuse(
                *_mark_position(event.start_mark),
                f"YAML aliases ('*{event.anchor}') are not allowed in a collection: "
                "write the scenario names out",
            )


def _yaml_error(err: yaml.YAMLError, file: _CollectionFile) -> _Refused:
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    problem = getattr(err, "problem", None) or str(err).splitlines()[0]
    tag = re.search(r"tag '([^']*)'", problem)
    if isinstance(err, yaml.constructor.ConstructorError) and tag is not None:
        shown = re.sub(r"\Atag:yaml\.org,2002:", "!!", tag.group(1))
        problem = f"the tag '{shown}' is not allowed (a collection is plain YAML)"
    return file.refuse(*_mark_position(mark), f"invalid YAML: {problem}")


class _Mark(Protocol):
    """PyYAML's marks: the pure-Python and the libyaml one have the same fields."""

    line: int
    column: int


def _mark_position(mark: _Mark | None) -> tuple[int, int]:
    return (mark.line + 1, mark.column) if mark is not None else (1, 0)


def _collection_fields(
    data: dict[object, object], file: _CollectionFile, warnings: list[str]
) -> tuple[str | None, list[str]]:
    """The description and scenario names, each checked for its type."""
    for key in data:
        if key not in _COLLECTION_KEYS:
            line, _ = file.where(str(key))
            warnings.append(
                f"{file.rel}:{line}: unknown key '{key}' is ignored (known: description, scenarios)"
            )
    description = data.get("description")
    if description is not None and not isinstance(description, str):
        raise file.refuse(
            *file.where("description"),
            f"'description' must be a string, not {_yaml_type(description)}",
        )
    scenarios = data.get("scenarios", [])
    if scenarios is None:
        scenarios = []
    if not isinstance(scenarios, list):
        raise file.refuse(
            *file.where("scenarios"),
            f"'scenarios' must be a list of scenario names, not {_yaml_type(scenarios)}",
        )
    for i, item in enumerate(scenarios):
        if not isinstance(item, str):
            raise file.refuse(
                *file.where("scenarios", i),
                f"'scenarios' item {i + 1} must be a scenario name (a string), "
                f"not {_yaml_type(item)}",
            )
        reason = scenario_name_problem(item)
        if reason is not None:
            raise file.refuse(*file.where("scenarios", i), f"'scenarios' item {i + 1} {reason}")
    return description, list(scenarios)


def _walk(base: Path, suffix: str, skip: tuple[str, ...] = ()) -> list[Path]:
    """Files under ``base`` ending in ``suffix``, sorted, never following symlinked dirs."""
    if not base.is_dir():
        return []
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(base):
        here = Path(dirpath)
        dirnames[:] = sorted(
            d for d in dirnames if not (here == base and d in skip) and not d.startswith(".")
        )
        found.extend(here / f for f in sorted(filenames) if f.endswith(suffix))
    return found


def arity_table(table: Mapping[str, FunctionRef]) -> dict[str, Arity]:
    return {name: (len(ref.decl.params), len(ref.decl.params)) for name, ref in table.items()}
