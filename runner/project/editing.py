"""The project's own files as the viewer edits them: sources under ``unotest/e2e/``,
``unotest/.debugger.json`` and collection manifests.

Every path a client names is resolved here, once: it must stay under ``unotest/e2e/``
after symlinks are followed and name a scenario (``*.test.js``), a helper
(``_helpers/**.js``) or a collection (``_collections/*.yaml``). Every write is whole and
atomic (``runner.files.atomic_write``), so a run starting meanwhile never reads half a
file. Front ends shape the answers; nothing here knows HTTP.

Saves are optimistic: a file's ``version`` is the hash of its bytes on disk, and a save
given the version its client read (``base_version``) is refused with ``FileConflict``
when the file has changed since, so two writers (a person in the page, an agent over
MCP, an editor) never silently lose each other's edits.
"""

from __future__ import annotations

import enum
import hashlib
import os
import stat
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import yaml

from dsl import ast
from dsl.checker import Diagnostic
from runner import protocol
from runner.errors import UnotestError, UsageError
from runner.files import atomic_write
from runner.project.config import Config, load_config
from runner.project.index import MAX_SOURCE_BYTES, SCENARIO_SUFFIX, Project, ProjectIndex
from runner.project.positions import statement_starts
from runner.project.root import HOOKS_FILE

if sys.platform != "win32":
    import fcntl

__all__ = [
    "UNCHECKED",
    "FileConflict",
    "FileExists",
    "FileMissing",
    "FileView",
    "TooLarge",
    "Unchecked",
    "config_summary",
    "project_summary",
    "resolve_source",
    "save_source",
    "source_view",
    "version_of",
    "write_collection",
    "writers_excluded",
]

MAX_PATH_CHARS = 1024


class FileMissing(UsageError):
    """The path names nothing the viewer serves (outside ``unotest/e2e/``, or absent)."""


class FileExists(UsageError):
    """Creating something that is already there."""


class TooLarge(UsageError):
    """A source bigger than ``runner.project.index.MAX_SOURCE_BYTES``."""


class FileConflict(FileExists):
    """A save whose ``base_version`` is not the file's version on disk: someone else
    wrote it since the client read it. Carries what is on disk now (``None``, ``None``
    when the file is gone) so the client can merge or choose."""

    def __init__(self, message: str, text: str | None, version: str | None) -> None:
        super().__init__(message)
        self.text = text
        self.version = version


class Unchecked(enum.Enum):
    """No ``base_version`` given: the save replaces whatever is on disk (last save wins),
    as it did before versions existed; ``None`` means "must not exist yet"."""

    UNCHECKED = "unchecked"


UNCHECKED = Unchecked.UNCHECKED
VERSION_CHARS = 16
"""A version is the first 16 hex digits of the bytes' sha256: 64 bits, plenty to tell
two contents of one file apart."""

_SAVE_LOCK = threading.Lock()
"""Held from a save's version check to its rename: two saves in this process never
both pass the check against the same bytes."""


def version_of(data: bytes) -> str:
    """The version of a file's content: what a client hands back as ``base_version``."""
    return hashlib.sha256(data).hexdigest()[:VERSION_CHARS]


def _kind_of(parts: tuple[str, ...]) -> str | None:
    """What a path relative to ``unotest/e2e/`` holds, by where it is and its suffix."""
    if not parts or any(p.startswith(".") for p in parts):
        return None
    name = parts[-1]
    if parts[0] == protocol.HELPERS_SUBDIR:
        return "helper" if len(parts) > 1 and name.endswith(".js") else None
    if parts[0] == protocol.COLLECTIONS_SUBDIR:
        return "collection" if len(parts) == 2 and name.endswith(".yaml") else None
    if name == HOOKS_FILE:
        return "helper"  # a folder's hooks: code the scenarios below it run, as a helper's
    return "scenario" if name.endswith(SCENARIO_SUFFIX) else None


def resolve_source(project: Project, rel: str, *, must_exist: bool = True) -> Path:
    """The file a project-relative path names under ``unotest/e2e/``.

    A malformed path (NUL, absolute, backslash, too long) raises ``UsageError``;
    one that leaves ``unotest/e2e/`` (``..``, a symlink out), names no source kind or
    (with ``must_exist``) no regular file raises ``FileMissing``.
    """
    if "\0" in rel or "\\" in rel or len(rel) > MAX_PATH_CHARS or not rel:
        raise UsageError("the path must be a project-relative POSIX path")
    pure = PurePosixPath(rel)
    if pure.is_absolute():
        raise UsageError("the path must be relative to the project root, not absolute")
    missing = FileMissing(f"{rel}: no scenario, helper or collection file of this project")
    prefix = (protocol.UNOTEST_DIR, protocol.E2E_SUBDIR)
    if ".." in pure.parts or pure.parts[:2] != prefix or _kind_of(pure.parts[2:]) is None:
        raise missing
    e2e = project.e2e_dir.resolve()
    path = project.root / pure
    resolved = path.resolve() if path.exists() else path.parent.resolve() / path.name
    if not resolved.is_relative_to(e2e) or resolved.relative_to(e2e).parts != pure.parts[2:]:
        raise missing  # a symlink (of the file or a folder) leads elsewhere
    if must_exist and not resolved.is_file():
        raise missing
    if resolved.exists() and not resolved.is_file():
        raise missing
    return resolved


@dataclass
class FileView:
    """One source file as an editor shows it: its text, where breakpoints can go, its
    problems (parse and static-check, from the whole project's view)."""

    path: str
    text: str
    statements: list[tuple[int, int]]
    problems: list[Diagnostic] = field(default_factory=list)
    version: str = ""
    """``version_of`` the bytes ``text`` was read from (or was saved as)."""


def _program_of(index: ProjectIndex, rel: str) -> ast.Program | None:
    for scenario in [*index.scenarios.values(), *index.unlisted]:
        if scenario.file == rel:
            return scenario.program
    hooks = (h.program for h in index.hooks_files.values() if h.file == rel)
    return next((h.program for h in index.helpers if h.file == rel), next(hooks, None))


def source_view(project: Project, rel: str) -> FileView:
    path = resolve_source(project, rel)
    try:
        size = path.stat().st_size
        if size > MAX_SOURCE_BYTES:
            raise TooLarge(f"{rel} is {size:,} bytes; a source file may be {MAX_SOURCE_BYTES:,}")
        data = path.read_bytes()
    except OSError as err:
        raise FileMissing(f"{rel}: cannot read it ({err.strerror or err})") from None
    return _view_of(project, rel, data)


def _view_of(project: Project, rel: str, data: bytes) -> FileView:
    """The view of ``rel`` holding ``data``; problems from the project as it is on disk."""
    index = ProjectIndex.load(project)
    program = _program_of(index, rel)
    starts = statement_starts(program) if program is not None else []
    text = data.decode("utf-8", "replace")
    return FileView(rel, text, starts, index.errors_in([rel]), version_of(data))


def _encoded(text: str) -> bytes:
    """``text`` as a source file's bytes, or ``UsageError``/``TooLarge`` saying why not."""
    if "\0" in text:
        raise UsageError("the text holds a NUL character; a source file is UTF-8 text")
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError("the text holds a lone surrogate; a source file is UTF-8 text") from None
    if len(data) > MAX_SOURCE_BYTES:
        raise TooLarge(
            f"the text is {len(data):,} bytes; a source file may be {MAX_SOURCE_BYTES:,}"
        )
    return data


@contextmanager
def writers_excluded(folder: Path) -> Iterator[None]:
    """This process's lock, and an advisory ``flock`` on ``folder`` that every unotest
    process saving a file there takes too (the viewer, the MCP server; ``unotest/e2e/``
    for sources, ``unotest/`` for ``.env``): between them, a version check and its write
    are one step. Editors take no such lock."""
    with _SAVE_LOCK:
        if sys.platform == "win32":  # no flock: only this process's lock holds
            yield
            return
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing the last descriptor releases the flock


def _check_base(path: Path, rel: str, base: str | None) -> None:
    """Raise ``FileConflict`` unless the file on disk is at version ``base`` (``None``:
    unless it does not exist)."""
    try:
        current: bytes | None = path.read_bytes()
    except FileNotFoundError:
        current = None
    except OSError as err:
        raise FileMissing(f"{rel}: cannot read it ({err.strerror or err})") from None
    version = None if current is None else version_of(current)
    if version == base:
        return
    text = None if current is None else current.decode("utf-8", "replace")
    if base is None:
        raise FileConflict(f"{rel} exists already (created since you opened it)", text, version)
    if current is None:
        raise FileConflict(f"{rel} was deleted since you opened it", None, None)
    raise FileConflict(f"{rel} changed on disk since you opened it", text, version)


def save_source(
    project: Project, rel: str, text: str, *, base_version: str | Unchecked | None = UNCHECKED
) -> FileView:
    """Replace (or create) a source file atomically, keeping its mode; the new view.

    With ``base_version`` (the version the client read; ``None``: the file must not
    exist yet) the save is refused with ``FileConflict`` when the file on disk is at
    another one. The check runs just before the write, both under :func:`writers_excluded`.
    """
    path = resolve_source(project, rel, must_exist=False)
    data = _encoded(text)
    with writers_excluded(project.e2e_dir):
        if not isinstance(base_version, Unchecked):
            _check_base(path, rel, base_version)
        mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else None
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, data, display=rel)
        if mode is not None:
            os.chmod(path, mode)
    return _view_of(project, rel, data)


# ---------------------------------------------------------------------------
# Collections
# ---------------------------------------------------------------------------


def write_collection(
    project: Project, name: object, description: object, scenarios: object, *, create: bool
) -> protocol.CollectionMeta:
    """Write ``_collections/<name>.yaml`` atomically. ``create``: refuse an existing one
    (``FileExists``); otherwise it is created or replaced."""
    reason = protocol.validate_collection_name(name)
    if reason is not None:
        raise UsageError(f"the collection name {reason}")
    assert isinstance(name, str)
    if name != name.strip():
        raise UsageError("the collection name must not start or end with blanks")
    if description is not None and not isinstance(description, str):
        raise UsageError("description must be a string or null")
    if not isinstance(scenarios, list) or not all(isinstance(s, str) for s in scenarios):
        raise UsageError("scenarios must be a list of scenario names")
    path = project.collections_dir / f"{name}.yaml"
    if create and path.exists():
        raise FileExists(f"collection '{name}' exists already")
    document: dict[str, object] = {}
    if description is not None:
        document["description"] = description
    document["scenarios"] = scenarios
    text = yaml.safe_dump(document, sort_keys=False, allow_unicode=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    rel = project.relative(path)
    atomic_write(path, text.encode("utf-8"), display=rel)
    return {"name": name, "path": rel, "description": description, "scenarios": scenarios}


# ---------------------------------------------------------------------------
# The project at a glance
# ---------------------------------------------------------------------------


def config_summary(config: Config) -> dict[str, object]:
    """What the configuration decides, in the protocol's key spelling."""
    server = config.web_server
    return {
        "baseURL": config.base_url,
        "browser": config.browser,
        "headless": config.headless,
        "viewport": {"width": config.viewport[0], "height": config.viewport[1]},
        "timeout": {
            "action": config.timeouts.action,
            "expect": config.timeouts.expect,
            "navigation": config.timeouts.navigation,
            "scenario": config.timeouts.scenario,
        },
        "trace": config.trace,
        "webServer": None if server is None else {"command": server.command, "url": server.url},
        "debug": {"idleTimeout": config.debug.idle_timeout},
        "warnings": list(config.warnings),
    }


def project_summary(project: Project) -> dict[str, object]:
    """Root, name, protocol version, adapter and the configuration (or why it is broken)."""
    summary: dict[str, object] = {
        "root": str(project.root),
        "name": project.root.name,
        "protocolVersion": protocol.PROTOCOL_VERSION,
        "adapter": protocol.ADAPTER_NAME,
    }
    try:
        summary["config"] = config_summary(load_config(project.root, os.environ))
        summary["configError"] = None
    except UnotestError as err:
        summary["config"] = None
        summary["configError"] = str(err)
    return summary
