"""What the watch daemon watches: ``unotest/e2e/**`` and ``unotest.config.yaml``.

Two watchfiles watches: the scenarios' folder recursively, and the project root
*not* recursively (for the config alone: a recursive watch of the root would see
every run directory's writes, and a project's ``node_modules``). Only the files a
project is made of pass (``.js``, ``.yaml``/``.yml`` under ``unotest/e2e/``, the
config by its name): an editor's swap and backup files do not start batches.
watchfiles' own grouping is kept short; the daemon's debounce decides what a batch is.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable
from pathlib import Path

import watchfiles

from runner import protocol
from runner.project.root import CONFIG_FILE
from runner.watch.daemon_events import ChangeKind
from runner.watch.selection import Change

__all__ = ["watch_project"]

_KINDS: dict[watchfiles.Change, ChangeKind] = {
    watchfiles.Change.added: "add",
    watchfiles.Change.modified: "change",
    watchfiles.Change.deleted: "unlink",
}
_SUFFIXES = (".js", ".yaml", ".yml")


MAX_FOLDER_FILES = 5000
"""The most entries of a folder moved in that are looked at (a larger one is cut)."""

Known = Callable[[], list[str]]
"""The project files the daemon knows now (project-relative): what a folder that moved
away held."""


async def watch_project(
    root: Path,
    on_changes: Callable[[list[Change]], None],
    stop: asyncio.Event,
    known: Known = list,
) -> None:
    """Call ``on_changes`` with every relevant group of changes until ``stop`` is set."""
    e2e = root / protocol.UNOTEST_DIR / protocol.E2E_SUBDIR
    watches = [_watch(root, root, False, on_changes, stop, known)]
    if (root / protocol.UNOTEST_DIR).is_dir():  # unotest/.env, which env() reads
        watches.append(_watch(root, root / protocol.UNOTEST_DIR, False, on_changes, stop, known))
    if e2e.is_dir():
        watches.append(_watch(root, e2e, True, on_changes, stop, known))
    await asyncio.gather(*watches)


async def _watch(
    root: Path,
    path: Path,
    recursive: bool,
    on_changes: Callable[[list[Change]], None],
    stop: asyncio.Event,
    known: Known,
) -> None:
    with contextlib.suppress(FileNotFoundError, RuntimeError):
        async for found in watchfiles.awatch(
            path, stop_event=stop, recursive=recursive, debounce=60, step=10, rust_timeout=500
        ):
            changes: dict[str, Change] = {}
            for kind, p in found:
                for change in _changes(root, kind, p, known):
                    changes[change.rel] = change
            if changes:
                on_changes(sorted(changes.values(), key=lambda c: c.rel))


def _changes(root: Path, kind: watchfiles.Change, path: str, known: Known) -> list[Change]:
    """The project files a change at ``path`` touched: itself, or, for a folder renamed
    or moved in or out (one event for the folder alone), each file it holds or held."""
    try:
        rel = Path(path).relative_to(root).as_posix()
    except ValueError:
        return []
    e2e = f"{protocol.UNOTEST_DIR}/{protocol.E2E_SUBDIR}/"
    if rel in (CONFIG_FILE, protocol.ENV_FILE) or (rel.startswith(e2e) and rel.endswith(_SUFFIXES)):
        return [Change(rel, _KINDS[kind])]
    if not rel.startswith(e2e):
        return []
    folder = Path(path)
    if kind == watchfiles.Change.added and folder.is_dir():
        return [Change(p.relative_to(root).as_posix(), "add") for p in _files_in(folder)]
    if kind == watchfiles.Change.deleted:
        return [Change(file, "unlink") for file in known() if file.startswith(rel + "/")]
    return []


def _files_in(folder: Path) -> list[Path]:
    """The project files under a folder moved in, looking at no more than
    :data:`MAX_FOLDER_FILES` entries (a ``node_modules`` moved in is not walked whole on
    the daemon's loop)."""
    found: list[Path] = []
    looked = 0
    for top, dirs, files in os.walk(folder):
        dirs.sort()
        looked += len(dirs) + len(files)
        found += [Path(top, name) for name in sorted(files) if name.endswith(_SUFFIXES)]
        if looked >= MAX_FOLDER_FILES:
            break
    return found
