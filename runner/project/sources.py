"""Reading a project's files: a source (or the one problem that stops it), the walk
over a folder, and what one load of a project hands the next in the same process.

Kept apart from :mod:`runner.project.index` (which re-exports these) so that the index
holds what a project *is*, and this module how its files are *read*.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

from dsl import ast
from dsl.checker import Diagnostic
from dsl.errors import ScenarioSyntaxError

__all__ = ["MAX_SOURCE_BYTES", "LoadMemo", "read_source", "walk_files"]

MAX_SOURCE_BYTES = 5 * 1024 * 1024
T = TypeVar("T")


class LoadMemo:
    """What one load of a project can hand the next in the same process (the viewer,
    the watch daemon): each file's source by its ``stat`` (an unchanged file is not read
    again), each parse by its source (an unchanged file is not parsed again: the trees
    are frozen, so they are shared), each program's checker problems by what it was
    checked against. Only what the latest load used is kept, so the memo is as large as
    the project, however often it is loaded. At 10,000 scenarios a load without one
    parses for tens of seconds; with one, a load after a save costs a walk, a ``stat``
    per file and the changed files."""

    def __init__(self) -> None:
        self._sources: dict[str, tuple[tuple[int, int, int, int], str]] = {}
        self._parsed: dict[tuple[str, str, str, str], object] = {}
        self._checked: dict[int, tuple[object, object, list[Diagnostic]]] = {}
        self._derived: dict[tuple[int, str], tuple[object, object]] = {}
        self._changed: set[str] | None = None
        self._rels: dict[str, str] = {}
        """A plain file's path → its project-relative path."""
        self._used_rels: set[str] = set()
        self._last_rels: set[str] = set()
        self._last_sources: set[str] = set()
        """What the last load used: the only entries trusted without a look (the tables
        may hold older ones, :func:`_used_only`)."""
        self._read_rels: set[str] = set()
        """Every file any load read (project-relative): a change to another is a new file."""
        self._added = True
        self._walks: dict[
            tuple[str, str, tuple[str, ...], str, bool], tuple[list[Path], list[Path]]
        ] = {}
        self._used: tuple[
            set[str],
            set[tuple[str, str, str, str]],
            set[int],
            set[tuple[int, str]],
            set[tuple[str, str, tuple[str, ...], str, bool]],
        ] = (set(), set(), set(), set(), set())

    def walk(
        self,
        base: Path,
        suffix: str,
        skip: tuple[str, ...] = (),
        within: Path | None = None,
        keep_hidden: bool = False,
    ) -> tuple[list[Path], list[Path]]:
        """:func:`walk_files` (its files and its links out), or, when told that only
        files' contents changed (:meth:`only_changed` without ``added``), what the same
        walk found last time: no folder is listed again."""
        key = (str(base), suffix, skip, str(within), keep_hidden)
        self._used[4].add(key)
        kept = self._walks.get(key)
        if kept is not None and self._changed is not None and not self._added:
            return kept
        links: list[Path] = []
        found = walk_files(base, suffix, skip, within, links, keep_hidden)
        self._walks[key] = (found, links)
        return found, links

    def only_changed(self, rels: Iterable[str] | None, added: bool = True) -> None:
        """The next load takes every file it read before as unchanged but ``rels``
        (project-relative), without a ``stat``: for a process told of every change by a
        file watcher (the watch daemon), at 10,000 files a tenth of a second per save.
        None: every file is looked at (the default). ``added``: a file was added,
        removed or renamed (the folders are listed again), not only changed; a changed
        file the last load did not read counts as added too (a watcher may report a
        new file's creation as its last event, a change)."""
        self._changed = None if rels is None else set(rels)
        self._added = added or any(rel not in self._read_rels for rel in self._changed or ())

    def known_rel(self, path: str) -> str | None:
        """The project-relative path of the plain file at ``path``, as the last load
        found it, when told what changed and it is not among them (a file replaced by a
        link is a change): at 10,000 files an ``lstat`` each saved per save. A link is
        never kept (its path is its target's, and a change to the link itself is
        reported under its own). ``None``: look (and :meth:`keep_rel` a plain file)."""
        changed = self._changed
        if changed is None or path not in self._last_rels:
            return None
        rel = self._rels.get(path)
        if rel is None or rel in changed:
            return None
        self._used_rels.add(path)
        return rel

    def keep_rel(self, path: str, rel: str) -> None:
        self._rels[path] = rel
        self._used_rels.add(path)

    def source(
        self, path: Path, rel: str, kind: str, linked: bool = False
    ) -> tuple[str | None, Diagnostic | None]:
        """:func:`read_source`, unless the file's ``stat`` is the one last read (a
        ``linked`` file is looked at even when told what changed: its target may be
        what changed, under another name)."""
        key = str(path)
        changed = self._changed
        if changed is not None and not linked and key in self._last_sources and rel not in changed:
            self._used[0].add(key)
            return self._sources[key][1], None
        try:
            st = os.stat(path)
            # ctime too: a rewrite of the same size in the same clock tick moves it
            stamp = (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)
        except OSError:
            return read_source(path, rel, kind)
        self._used[0].add(key)
        kept = self._sources.get(key)
        if kept is not None and kept[0] == stamp:
            return kept[1], None
        source, problem = read_source(path, rel, kind)
        if source is not None:
            self._sources[key] = (stamp, source)
            self._read_rels.add(rel)
        return source, problem

    def parsed(self, kind: str, rel: str, name: str, source: str, parse: Callable[[], T]) -> T:
        """``parse()``'s result (or the syntax error it raised) for this very source."""
        key = (kind, rel, name, source)
        self._used[1].add(key)
        if key not in self._parsed:
            try:
                self._parsed[key] = parse()
            except ScenarioSyntaxError as err:
                self._parsed[key] = err
        found = self._parsed[key]
        if isinstance(found, ScenarioSyntaxError):
            # Without its old traceback: each raise would chain the frames (and the
            # indexes) of every load since, for as long as the file stays broken.
            raise found.with_traceback(None)
        return found  # type: ignore[return-value]

    def checked(
        self, program: ast.Program, against: object, check: Callable[[], list[Diagnostic]]
    ) -> list[Diagnostic]:
        """``check()``'s problems, kept while ``program`` (the same object) is checked
        against the same helpers, consts and built-ins (``against``, compared equal)."""
        key = id(program)
        self._used[2].add(key)
        kept = self._checked.get(key)
        if kept is not None and kept[0] is program and kept[1] == against:
            return kept[2]
        found = check()
        self._checked[key] = (program, against, found)
        return found

    def derived(self, program: ast.Program, what: str, compute: Callable[[], T]) -> T:
        """``compute()``, something that depends on ``program`` alone (the watch graph's
        references of its functions), kept while it is the same object."""
        key = (id(program), what)
        self._used[3].add(key)
        kept = self._derived.get(key)
        if kept is not None and kept[0] is program:
            return kept[1]  # type: ignore[return-value]
        value = compute()
        self._derived[key] = (program, value)
        return value

    def forget_unused(self) -> None:
        """After a load: keep only what it used (deleted and edited files' old entries go).
        A table with few unused entries (at most an eighth of the used, or 64) is left as
        it is until more pile up: rebuilding the tables of 10,000 files took a sixth of
        a load after a save that changed one."""
        sources, parsed, checked, derived, walks = self._used
        self._walks = _used_only(self._walks, walks)
        self._rels = _used_only(self._rels, self._used_rels)
        self._last_rels, self._used_rels = self._used_rels, set()
        self._sources = _used_only(self._sources, sources)
        self._last_sources = sources
        before = self._parsed
        self._parsed = _used_only(self._parsed, parsed)
        if checked:  # a load without the checker keeps what the last check found
            self._checked = _used_only(self._checked, checked)
        if self._parsed is not before:
            # Asked for after the load (the graph is built from the index): those of the
            # programs the load kept stay.
            kept = {id(getattr(v, "program", None)) for v in self._parsed.values()}
            self._derived = {k: v for k, v in self._derived.items() if k[0] in kept}
        del derived
        self._used = (set(), set(), set(), set(), set())
        self._changed = None  # told for one load only
        self._added = True


_K = TypeVar("_K")
_V = TypeVar("_V")
UNUSED_KEPT = 64
"""Unused entries a table may keep (or an eighth of its used ones, if more)."""


def _used_only(table: dict[_K, _V], used: set[_K]) -> dict[_K, _V]:
    """``table`` without the entries ``used`` lacks; ``table`` itself while they are few.
    The difference of the sizes counts them (a used key that a load could not fill, a
    file that cannot be read, is not in the table: they are undercounted by as many,
    which bounds what is kept all the same)."""
    if len(table) - len(used) <= max(UNUSED_KEPT, len(used) // 8):
        return table
    return {k: v for k, v in table.items() if k in used}


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


def walk_files(
    base: Path,
    suffix: str,
    skip: tuple[str, ...] = (),
    within: Path | None = None,
    links_out: list[Path] | None = None,
    keep_hidden: bool = False,
) -> list[Path]:
    """Files under ``base`` ending in ``suffix``, sorted, never following symlinked dirs.
    Hidden files (``.name``) are not project files (an editor's, a tool's). A symbolic
    link that leads out of ``within`` (``unotest/e2e/``) is not read either: the viewer
    and MCP refuse to open or write it, so it must not be a scenario that runs code
    from elsewhere; it goes to ``links_out`` (a warning says so). ``keep_hidden``: a
    hidden collection file is kept, for its name's own problem to be said."""
    if not base.is_dir():
        return []
    inside = os.path.realpath(within) if within is not None else None
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(base):
        here = Path(dirpath)
        dirnames[:] = sorted(
            d for d in dirnames if not (here == base and d in skip) and not d.startswith(".")
        )
        for name in sorted(filenames):
            path = here / name
            if (name.startswith(".") and not keep_hidden) or not name.endswith(suffix):
                continue
            if inside is not None and path.is_symlink():
                target = os.path.realpath(path)
                if os.path.commonpath([target, inside]) != inside:
                    if links_out is not None:
                        links_out.append(path)
                    continue
            found.append(path)
    return found
