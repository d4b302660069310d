"""Finding a project and what it holds: scenarios, helpers, collections, problems.

Everything a command needs to know about the files on disk is gathered here once,
with every problem collected (not only the first), so ``check`` and ``list`` can
report them all and ``e2e`` can refuse a broken scenario before starting a browser.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from dsl.builtins import PURE_SIGNATURES
from dsl.checker import Arity, Diagnostic, check_program
from dsl.errors import ScenarioSyntaxError
from dsl.interpreter import FunctionRef
from dsl.scenario import HelperFile, ScenarioFile, build_helper_table, load_helper, load_scenario
from runner.signatures import BROWSER_SIGNATURES
from unotest import protocol
from unotest.errors import UsageError

__all__ = [
    "ALL_BUILTIN_SIGNATURES",
    "CollectionEntry",
    "Project",
    "ProjectIndex",
    "find_project_root",
]

ALL_BUILTIN_SIGNATURES: dict[str, Arity] = {**PURE_SIGNATURES, **BROWSER_SIGNATURES}
CONFIG_FILE = "unotest.config.yaml"
SCENARIO_SUFFIX = ".test.js"
MAX_SOURCE_BYTES = 5 * 1024 * 1024


def _is_project_dir(path: Path) -> bool:
    if (path / CONFIG_FILE).is_file():
        return True
    marker = path / protocol.UNOTEST_DIR
    # A `unotest/` that is a Python package is unotest's own source tree, not a project.
    return marker.is_dir() and not (marker / "__init__.py").exists()


def find_project_root(start: Path, override: Path | None = None) -> Path:
    """The nearest ancestor holding ``unotest/`` or ``unotest.config.yaml``."""
    if override is not None:
        root = override.expanduser().resolve()
        if not root.is_dir():
            raise UsageError(f"--root {override}: no such directory")
        return root
    here = start.resolve()
    for candidate in (here, *here.parents):
        if _is_project_dir(candidate):
            return candidate
    raise UsageError(
        f"no unotest project found in {here} or above it: run inside a project "
        "(a folder with unotest/ or unotest.config.yaml), pass --root DIR, "
        "or create one with 'unotest init'"
    )


@dataclass(frozen=True)
class Project:
    """Paths of one project; every path the product touches is derived here."""

    root: Path

    @property
    def unotest_dir(self) -> Path:
        return self.root / protocol.UNOTEST_DIR

    @property
    def e2e_dir(self) -> Path:
        return self.unotest_dir / protocol.E2E_SUBDIR

    @property
    def helpers_dir(self) -> Path:
        return self.e2e_dir / protocol.HELPERS_SUBDIR

    @property
    def collections_dir(self) -> Path:
        return self.e2e_dir / protocol.COLLECTIONS_SUBDIR

    @property
    def runs_dir(self) -> Path:
        return self.unotest_dir / protocol.RUNS_SUBDIR

    def relative(self, path: Path) -> str:
        """Project-relative POSIX path, the form every artifact uses."""
        try:
            return path.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return path.as_posix()


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
    helper_table: dict[str, FunctionRef] = field(default_factory=dict)
    collections: dict[str, CollectionEntry] = field(default_factory=dict)
    errors: list[Diagnostic] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @classmethod
    def load(cls, project: Project, check: bool = True) -> ProjectIndex:
        index = cls(project)
        index._load_helpers()
        index._load_scenarios()
        index._load_collections()
        if check:
            index._check_programs()
        index.errors.sort(key=lambda d: (d.file, d.line, d.col))
        return index

    # --- discovery -------------------------------------------------------------

    def _read(self, path: Path) -> str | None:
        rel = self.project.relative(path)
        try:
            size = path.stat().st_size
            if size > MAX_SOURCE_BYTES:
                self.errors.append(
                    Diagnostic(
                        rel, 1, 0, f"file is {size:,} bytes; the limit is {MAX_SOURCE_BYTES:,}"
                    )
                )
                return None
            data = path.read_bytes()
        except OSError as err:
            self.errors.append(
                Diagnostic(rel, 1, 0, f"cannot read the file: {err.strerror or err}")
            )
            return None
        if b"\0" in data:
            self.errors.append(Diagnostic(rel, 1, 0, "this is a binary file, not a scenario"))
            return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as err:
            self.errors.append(
                Diagnostic(rel, 1, 0, f"the file is not UTF-8 text (byte {err.start})")
            )
            return None

    def _load_helpers(self) -> None:
        names = set(ALL_BUILTIN_SIGNATURES)
        for path in _walk(self.project.helpers_dir, ".js"):
            rel = self.project.relative(path)
            name = path.relative_to(self.project.helpers_dir).as_posix()[: -len(".js")]
            source = self._read(path)
            if source is None:
                continue
            try:
                self.helpers.append(load_helper(source, rel, name, names))
            except ScenarioSyntaxError as err:
                self.errors.append(Diagnostic.from_syntax_error(err))
        table, errors = build_helper_table(self.helpers)
        self.helper_table = table
        self.errors.extend(Diagnostic.from_syntax_error(e) for e in errors)

    def _load_scenarios(self) -> None:
        ids: dict[str, str] = {}
        e2e = self.project.e2e_dir
        for path in _walk(
            e2e, SCENARIO_SUFFIX, skip=(protocol.HELPERS_SUBDIR, protocol.COLLECTIONS_SUBDIR)
        ):
            rel = self.project.relative(path)
            name = path.relative_to(e2e).as_posix()[: -len(SCENARIO_SUFFIX)]
            source = self._read(path)
            if source is None:
                continue
            try:
                scenario = load_scenario(source, rel, name)
            except ScenarioSyntaxError as err:
                self.errors.append(Diagnostic.from_syntax_error(err))
                self._list_header_anyway(source, rel, name, ids)
                continue
            if not self._claim_id(scenario.header.id, rel, ids):
                continue
            self.scenarios[name] = scenario
            self.scenario_metas.append(
                {
                    "id": scenario.header.id,
                    "title": scenario.header.title,
                    "color": scenario.header.color,
                    "name": name,
                    "path": rel,
                }
            )

    def _list_header_anyway(self, source: str, rel: str, name: str, ids: dict[str, str]) -> None:
        """A scenario whose body is broken still has an identity the viewer can show."""
        from dsl.scenario import parse_header

        try:
            header = parse_header(source, rel)
        except ScenarioSyntaxError:
            return
        if self._claim_id(header.id, rel, ids):
            self.scenario_metas.append(
                {
                    "id": header.id,
                    "title": header.title,
                    "color": header.color,
                    "name": name,
                    "path": rel,
                }
            )

    def _claim_id(self, scenario_id: str, rel: str, ids: dict[str, str]) -> bool:
        first = ids.get(scenario_id)
        if first is not None:
            self.errors.append(
                Diagnostic(
                    rel,
                    1,
                    0,
                    f"id 'id-{scenario_id}' is already used by {first}: ids must be unique",
                )
            )
            return False
        ids[scenario_id] = rel
        return True

    def _load_collections(self) -> None:
        for path in _walk(self.project.collections_dir, ".yaml"):
            if path.parent != self.project.collections_dir:
                continue
            entry = self._load_collection(path)
            if entry is not None:
                self.collections[entry.meta["name"]] = entry

    def _load_collection(self, path: Path) -> CollectionEntry | None:
        rel = self.project.relative(path)
        name = path.name[: -len(".yaml")]
        reason = protocol.validate_collection_name(name)
        if reason is not None:
            self.errors.append(Diagnostic(rel, 1, 0, f"collection name '{name}' {reason}"))
            return None
        source = self._read(path)
        if source is None:
            return None
        try:
            data = yaml.safe_load(source)
        except yaml.YAMLError as err:
            mark = getattr(err, "problem_mark", None)
            line, col = (mark.line + 1, mark.column) if mark is not None else (1, 0)
            problem = getattr(err, "problem", None) or str(err).splitlines()[0]
            self.errors.append(Diagnostic(rel, line, col, f"invalid YAML: {problem}"))
            return None
        except RecursionError:
            self.errors.append(Diagnostic(rel, 1, 0, "invalid YAML: nested too deeply"))
            return None
        if data is None:
            data = {}
        if not isinstance(data, dict):
            self.errors.append(
                Diagnostic(
                    rel,
                    1,
                    0,
                    "a collection is a mapping with 'scenarios:' (and optional 'description:')",
                )
            )
            return None
        warnings = tuple(
            f"{rel}: unknown key '{key}' is ignored (known: description, scenarios)"
            for key in data
            if key not in ("description", "scenarios")
        )
        self.warnings.extend(warnings)
        description = data.get("description")
        if description is not None and not isinstance(description, str):
            self.errors.append(Diagnostic(rel, 1, 0, "'description' must be a string"))
            return None
        scenarios = data.get("scenarios", [])
        if scenarios is None:
            scenarios = []
        if not isinstance(scenarios, list) or not all(isinstance(s, str) for s in scenarios):
            self.errors.append(
                Diagnostic(rel, 1, 0, "'scenarios' must be a list of scenario names")
            )
            return None
        meta: protocol.CollectionMeta = {
            "name": name,
            "path": rel,
            "description": description,
            "scenarios": list(scenarios),
        }
        return CollectionEntry(meta, warnings)

    def _check_programs(self) -> None:
        helper_arities: dict[str, Arity] = {
            name: (len(ref.decl.params), len(ref.decl.params))
            for name, ref in self.helper_table.items()
        }
        programs = [h.program for h in self.helpers] + [s.program for s in self.scenarios.values()]
        for program in programs:
            self.errors.extend(check_program(program, helper_arities, ALL_BUILTIN_SIGNATURES))

    # --- lookups ---------------------------------------------------------------

    def helper_metas(self) -> list[protocol.HelperMeta]:
        return [{"name": h.name, "path": h.file} for h in self.helpers]

    def errors_in(self, files: Iterable[str]) -> list[Diagnostic]:
        wanted = set(files)
        return [d for d in self.errors if d.file in wanted]


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


def content_hash(source: str) -> str:
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def arity_table(table: Mapping[str, FunctionRef]) -> dict[str, Arity]:
    return {name: (len(ref.decl.params), len(ref.decl.params)) for name, ref in table.items()}
