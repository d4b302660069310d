"""The project index cache: what ``unotest list`` and ``unotest check`` print, kept in
``unotest/.cache/index.json`` so that a project where nothing changed is not parsed again.

The cache holds one ``IndexSummary`` (scenario metas, helper names and their function
names, collection metas, the parse problems, the checker's problems, the warnings, the
files read) under two keys:

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

This module imports neither the parser nor Lark: a hit costs reading the files and one
JSON document. ``unotest collection``'s orchestrator reads the project this way too (its
workers parse what they run); commands that need real syntax trees (running a scenario)
still use ``ProjectIndex.load``.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from dsl.errors import Diagnostic
from runner import protocol
from runner.project.problems import problem_order

if TYPE_CHECKING:
    from runner.project.index import Project, ProjectIndex

__all__ = [
    "CACHE_FILE",
    "CACHE_FORMAT",
    "CACHE_SUBDIR",
    "HelperSummary",
    "IndexSummary",
    "cache_path",
    "load_summary",
    "summarize",
]

CACHE_FORMAT = 1
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
        """``ProjectIndex.problems_of``: the helper files' problems first, then the
        scenario file's own."""
        helpers = self.helper_files(project)
        own = self.errors_in([scenario_file]) if scenario_file is not None else []
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
    )


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
