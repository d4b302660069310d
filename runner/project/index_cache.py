"""The project index cache: what ``unotest list`` and ``unotest check`` print, kept in
``unotest/.cache/index.json`` so that a project where nothing changed is not parsed again.

The cache holds one ``IndexSummary`` (scenario metas, helper names and their function
names, collection metas with their setup scenarios and context settings, the parse
problems, the checker's problems, the warnings, the files read) under two keys:

- the *version*: a hash of the language and checker sources (``dsl/*.py``,
  ``dsl/grammar.lark``, ``runner/project/index.py``, ``runner/project/signatures.py``, this module…,
  the built-in signature tables live in them), the installed Lark and PyYAML, the
  Python version and ``CACHE_FORMAT``, bumped by hand when the summary's shape changes;
- the *project key*: the project's root and, for every file under ``unotest/e2e/``
  (hidden folders skipped, as discovery does), its path, its kind (a regular file, a
  symlink and where it leads, something else) and the SHA-256 of its content.

A key that differs, a file that is missing, corrupt, truncated or of another shape is a
miss, never an error: the project is loaded with ``ProjectIndex.load`` as before and the
cache rewritten. The file is JSON (never pickle: nothing in it is executed) and is
replaced whole (``runner.files.atomic_write``: a temp file, then ``os.replace``), so a
reader in another process sees the old file or the new one, never half of one. A cache
that cannot be written (a read-only project) is silently skipped.

A parameterised scenario is in the summary as its cases (each ``<name>[<case>]`` among
the scenario metas, and ``cases``: each one's case names), so ``list``, ``e2e`` and
``collection`` know them without parsing; a folder's ``_hooks.js`` is among the files
read, and its problems stop the scenarios under it (:meth:`IndexSummary.problems_of`).

The summary also carries each scenario's ``@tags`` (read from its title by
``dsl.scenario.title_tags`` when the project is loaded), and :class:`ScenarioGrep` is
``--grep``/``--grep-invert`` over the summary's scenarios, for ``list`` and
``collection`` (and the collection's workers started early, which read the titles
themselves).

This module imports neither the parser nor Lark: a hit costs reading the files and one
JSON document. ``unotest collection``'s orchestrator reads the project this way too (its
workers parse what they run); commands that need real syntax trees (running a scenario)
still use ``ProjectIndex.load``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from dsl.errors import Diagnostic
from runner import protocol
from runner.errors import UsageError
from runner.project.root import problem_order
from runner.text import show_name

if TYPE_CHECKING:
    from runner.project.collection_file import CollectionUseJSON
    from runner.project.index import Project, ProjectIndex

__all__ = [
    "CACHE_FILE",
    "CACHE_FORMAT",
    "CACHE_SUBDIR",
    "HelperSummary",
    "IndexSummary",
    "ScenarioGrep",
    "cache_path",
    "load_summary",
    "summarize",
]

CACHE_FORMAT = 4
"""Bump when ``IndexSummary`` or its JSON form changes."""
CACHE_SUBDIR = ".cache"
CACHE_FILE = "index.json"
_MAGIC = "unotest-index-cache"
_MAX_SOURCE_BYTES = 5 * 1024 * 1024
_HASHED_SUFFIXES = (".js", ".yaml")

_REPO = Path(__file__).resolve().parents[2]
_VERSION_SOURCES = (
    "runner/project/index.py",
    "runner/project/signatures.py",
    "runner/project/index_cache.py",
    "runner/project/collection_file.py",  # a collection's settings, checked
    "runner/project/emulation.py",
    "runner/project/config_file.py",
    "runner/protocol.py",
    "runner/text.py",
)


@dataclass(frozen=True)
class HelperSummary:
    name: str
    path: str
    functions: tuple[str, ...]


@dataclass(frozen=True)
class IndexSummary:
    """What ``list`` and ``check`` need of a ``ProjectIndex``, and nothing that needs a tree."""

    scenario_metas: list[protocol.ScenarioMeta]
    helpers: list[HelperSummary]
    collections: list[protocol.CollectionMeta]
    parse_errors: list[Diagnostic]
    """Problems found without the checker, sorted (``ProjectIndex.load(check=False)``)."""
    check_errors: list[Diagnostic]
    """The checker's problems, in the order it found them."""
    warnings: list[str]
    orphan_warnings: list[str]
    files: list[str]
    tags: dict[str, list[str]] = field(default_factory=dict)
    """Each listed scenario's ``@tags``, by name (``ProjectIndex.scenario_tags``)."""
    collection_use: dict[str, CollectionUseJSON] = field(default_factory=dict)
    """The ``setup:`` scenarios and browser context keys of each collection that has
    any, by name (``CollectionEntry.use``, as a run order carries it)."""

    cases: dict[str, list[str]] = field(default_factory=dict)
    """Each parameterised scenario's case names, by its file's scenario name
    (``ProjectIndex.cases``): its cases are listed in ``scenario_metas`` as
    ``<name>[<case>]``, and ``unotest e2e <name>`` says to name one."""

    def tags_of(self, name: str) -> list[str]:
        return list(self.tags.get(name, []))

    def titles(self) -> dict[str, str]:
        """Each listed scenario's title (its description line, tags included), by name."""
        return {meta["name"]: meta["title"] for meta in self.scenario_metas}

    def errors(self, check: bool) -> list[Diagnostic]:
        """``ProjectIndex.load(project, check).errors``, in the same order."""
        if not check:
            return list(self.parse_errors)
        return sorted(self.parse_errors + self.check_errors, key=problem_order)

    def helper_metas(self) -> list[protocol.HelperMeta]:
        return [{"name": h.name, "path": h.path} for h in self.helpers]

    def errors_in(self, files: Iterable[str], check: bool = True) -> list[Diagnostic]:
        """``ProjectIndex.errors_in``: the problems of these files, in the same order."""
        wanted = set(files)
        return [d for d in self.errors(check) if d.file in wanted]

    def problems_of(self, project: Project, scenario_file: str | None) -> list[Diagnostic]:
        """``ProjectIndex.problems_of``: the helper files' problems first, then those of
        the ``_hooks.js`` files over the scenario, then its file's own."""
        helpers = self.helper_files(project)
        own: list[Diagnostic] = []
        if scenario_file is not None:
            hooks = project.hooks_files_over(project.scenario_name_of(scenario_file))
            own = self.errors_in([*hooks, scenario_file])
        return self.errors_in(helpers) + [d for d in own if d.file not in helpers]

    def helper_files(self, project: Project) -> list[str]:
        """Every helper file read, one that does not parse included."""
        prefix = project.relative(project.helpers_dir) + "/"
        return [f for f in self.files if f.startswith(prefix)]


def cache_path(project: Project) -> Path:
    return project.unotest_dir / CACHE_SUBDIR / CACHE_FILE


def load_summary(project: Project) -> IndexSummary:
    """The project's summary: from the cache when nothing changed, else loaded and cached."""
    version = _version()
    key = _project_key(project)
    path = cache_path(project)
    cached = _read(path, version, key)
    if cached is not None:
        return cached
    from runner.project.index import ProjectIndex

    index = ProjectIndex.load(project, check=False)
    summary = summarize(index)
    if _project_key(project) == key:  # a file edited while it was read: not cached
        _write(path, version, key, summary)
    return summary


def summarize(index: ProjectIndex) -> IndexSummary:
    """The summary of an index loaded with ``check=False``; runs the checker on it."""
    parse_errors = list(index.errors)
    check_errors = index.check_programs()
    return IndexSummary(
        scenario_metas=[m.copy() for m in index.scenario_metas],
        helpers=[
            HelperSummary(h.name, h.file, tuple(fn.name for fn in h.program.functions))
            for h in index.helpers
        ],
        collections=[e.meta.copy() for e in index.collections.values()],
        parse_errors=parse_errors,
        check_errors=check_errors,
        warnings=list(index.warnings),
        orphan_warnings=index.orphan_warnings(),
        files=list(index.files),
        tags=index.scenario_tags(),
        cases={name: list(cases) for name, cases in index.cases.items()},
        collection_use={
            name: entry.use.to_json()
            for name, entry in index.collections.items()
            if entry.use is not None
        },
    )


# --- --grep ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ScenarioGrep:
    """``--grep REGEX`` and ``--grep-invert REGEX`` of ``unotest list`` and ``collection``.

    A scenario is kept when ``grep`` is found (Python's ``re.search``, case-sensitive)
    in ``"<name> <title>"`` and ``invert`` is not: Playwright matches a test's file and
    title the same way, and a title holds its ``@tags`` as written, so ``--grep @smoke``
    keeps the tagged scenarios. A name with no title (a listed name that is no
    scenario, or one whose header cannot be read) is matched alone."""

    grep: re.Pattern[str] | None = None
    invert: re.Pattern[str] | None = None

    @classmethod
    def parse(cls, grep: str | None, invert: str | None) -> ScenarioGrep | None:
        """None when neither option is given; a pattern that does not compile is one
        sentence (a usage error) before anything else is read."""
        if grep is None and invert is None:
            return None
        return cls(_compiled("--grep", grep), _compiled("--grep-invert", invert))

    def selects(self, name: str, title: str | None) -> bool:
        text = name if title is None else f"{name} {title}"
        if self.grep is not None and self.grep.search(text) is None:
            return False
        return self.invert is None or self.invert.search(text) is None

    def __str__(self) -> str:
        """The options as given (``--grep '@smoke' --grep-invert '@slow'``), for a message."""
        given = (("--grep", self.grep), ("--grep-invert", self.invert))
        return " ".join(f"{flag} {show_name(p.pattern)}" for flag, p in given if p is not None)


def _compiled(flag: str, pattern: str | None) -> re.Pattern[str] | None:
    if pattern is None:
        return None
    try:
        return re.compile(pattern)
    except (re.error, OverflowError, RecursionError) as err:
        reason = "it is too large or nested too deeply"
        if isinstance(err, re.error):
            reason = err.msg if err.pos is None else f"{err.msg} at position {err.pos}"
        raise UsageError(
            f"{flag} {show_name(pattern)} is not a regular expression ({reason}); "
            "escape a literal character with a backslash, e.g. --grep 'a\\(b'"
        ) from None


# --- keys ----------------------------------------------------------------------------

_version_memo: list[str] = []


def _version() -> str:
    if _version_memo:
        return _version_memo[0]
    digest = hashlib.sha256(f"{_MAGIC}:{CACHE_FORMAT}:{sys.version_info[:3]}".encode())
    dsl_dir = _REPO / "dsl"
    sources = sorted(
        p for p in dsl_dir.iterdir() if p.name.endswith(".py") or p.name.endswith(".lark")
    )
    sources += [_REPO / rel for rel in _VERSION_SOURCES]
    for source in sources:
        digest.update(source.name.encode() + b"\0")
        try:
            digest.update(hashlib.sha256(source.read_bytes()).digest())
        except OSError:
            digest.update(b"missing")
    for package in ("lark", "yaml"):
        digest.update(_package_stamp(package).encode() + b"\0")
    _version_memo.append(digest.hexdigest())
    return _version_memo[0]


def _package_stamp(package: str) -> str:
    """Where an installed package lives and when its ``__init__`` was written."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return f"{package}:none"
    origin = spec.origin if spec is not None else None
    if origin is None:
        return f"{package}:none"
    try:
        st = os.stat(origin)
    except OSError:
        return f"{package}:{origin}"
    return f"{package}:{origin}:{st.st_size}:{st.st_mtime_ns}"


def _project_key(project: Project) -> str:
    digest = hashlib.sha256()
    root = project.root
    digest.update(f"{root}\0{os.path.realpath(root)}\0".encode())
    e2e = project.e2e_dir
    digest.update(f"{os.path.realpath(e2e)}\0".encode())
    if not e2e.is_dir():
        digest.update(b"no e2e")
        return digest.hexdigest()
    for dirpath, dirnames, filenames in os.walk(e2e):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            digest.update(f"{full}\0{_file_stamp(full, name)}\0".encode())
    return digest.hexdigest()


def _file_stamp(full: str, name: str) -> str:
    """What in a file can change what discovery makes of it."""
    try:
        link = f"link:{os.path.realpath(full)}:" if os.path.islink(full) else ""
        st = os.stat(full)
    except OSError as err:
        return f"unreadable:{err.errno}"
    import stat

    if not stat.S_ISREG(st.st_mode):
        return f"{link}special:{stat.S_IFMT(st.st_mode)}"
    if not name.endswith(_HASHED_SUFFIXES):
        return f"{link}other"
    if st.st_size > _MAX_SOURCE_BYTES:
        return f"{link}big:{st.st_size}"
    try:
        with open(full, "rb") as handle:
            data = handle.read()
    except OSError as err:
        return f"{link}unreadable:{err.errno}"
    return f"{link}sha256:{hashlib.sha256(data).hexdigest()}"


# --- the file ------------------------------------------------------------------------


def _read(path: Path, version: str, key: str) -> IndexSummary | None:
    """The cached summary if the file is whole, of this version and for this key."""
    try:
        data = json.loads(path.read_bytes())
        if (
            not isinstance(data, dict)
            or data.get("format") != _MAGIC
            or data.get("version") != version
            or data.get("key") != key
        ):
            return None
        return _summary_from_json(data["summary"])
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
        return None


def _write(path: Path, version: str, key: str, summary: IndexSummary) -> None:
    from runner.errors import UnotestError
    from runner.files import atomic_write

    document = {"format": _MAGIC, "version": version, "key": key, "summary": _to_json(summary)}
    data = json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    if not path.parent.parent.is_dir():
        return  # a project of only unotest.config.yaml: no unotest/ made for a cache
    try:
        path.parent.mkdir(exist_ok=True)
        atomic_write(path, data)
    except (OSError, UnotestError):
        return  # a cache that cannot be written is only a slower next run


def _to_json(summary: IndexSummary) -> dict[str, object]:
    return {
        "scenarios": summary.scenario_metas,
        "helpers": [[h.name, h.path, list(h.functions)] for h in summary.helpers],
        "collections": summary.collections,
        "parse_errors": [_diagnostic_to_json(d) for d in summary.parse_errors],
        "check_errors": [_diagnostic_to_json(d) for d in summary.check_errors],
        "warnings": summary.warnings,
        "orphan_warnings": summary.orphan_warnings,
        "files": summary.files,
        "tags": summary.tags,
        "cases": summary.cases,
        "collection_use": summary.collection_use,
    }


def _diagnostic_to_json(d: Diagnostic) -> list[object]:
    return [d.file, d.line, d.col, d.message, d.source_line]


def _summary_from_json(data: object) -> IndexSummary:
    if not isinstance(data, dict):
        raise TypeError("summary")
    helpers = []
    for item in _list(data["helpers"]):
        name, path, functions = _list(item)
        helpers.append(HelperSummary(_str(name), _str(path), tuple(_strs(functions))))
    return IndexSummary(
        scenario_metas=[_scenario_meta(_dict(m)) for m in _list(data["scenarios"])],
        helpers=helpers,
        collections=[_collection_meta(_dict(c)) for c in _list(data["collections"])],
        parse_errors=[_diagnostic(d) for d in _list(data["parse_errors"])],
        check_errors=[_diagnostic(d) for d in _list(data["check_errors"])],
        warnings=_strs(data["warnings"]),
        orphan_warnings=_strs(data["orphan_warnings"]),
        files=_strs(data["files"]),
        tags={_str(name): _strs(tags) for name, tags in _dict(data["tags"]).items()},
        cases={_str(name): _strs(cases) for name, cases in _dict(data["cases"]).items()},
        collection_use={
            _str(name): _collection_use(_dict(use))
            for name, use in _dict(data["collection_use"]).items()
        },
    )


def _scenario_meta(m: dict[object, object]) -> protocol.ScenarioMeta:
    return {
        "id": _str(m["id"]),
        "title": _str(m["title"]),
        "color": _str(m["color"]),
        "name": _str(m["name"]),
        "path": _str(m["path"]),
    }


def _collection_meta(c: dict[object, object]) -> protocol.CollectionMeta:
    description = c["description"]
    return {
        "name": _str(c["name"]),
        "path": _str(c["path"]),
        "description": None if description is None else _str(description),
        "scenarios": _strs(c["scenarios"]),
    }


def _collection_use(use: dict[object, object]) -> CollectionUseJSON:
    """A collection's settings as cached; their values are checked again where they
    are used (``CollectionUse.from_json``)."""
    places = {
        _str(name): [_int(n) for n in _list(place)] for name, place in _dict(use["places"]).items()
    }
    values = {_str(name): value for name, value in _dict(use["values"]).items()}
    return {
        "file": _str(use["file"]),
        "setup": _strs(use["setup"]),
        "values": values,
        "places": places,
    }


def _diagnostic(item: object) -> Diagnostic:
    file, line, col, message, source_line = _list(item)
    return Diagnostic(_str(file), _int(line), _int(col), _str(message), _str(source_line))


def _list(value: object) -> list[object]:
    if not isinstance(value, list):
        raise TypeError("not a list")
    return value


def _dict(value: object) -> dict[object, object]:
    if not isinstance(value, dict):
        raise TypeError("not an object")
    return value


def _str(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError("not a string")
    return value


def _int(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError("not an integer")
    return value


def _strs(value: object) -> list[str]:
    return [_str(v) for v in _list(value)]
