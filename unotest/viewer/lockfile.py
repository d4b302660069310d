"""``unotest/.viewer.lock``: which viewer serves this project, and at what URL; and
``unotest/.cache/viewer.json``: where the last one served it.

The lock is written atomically once the server listens (mode 0600: the URL holds the
token), removed when it stops. ``pidStartTime`` (ours, additive, as in a run's manifest)
tells a live viewer from a reused pid: a lock is *live* only when its pid exists and,
where ``/proc`` says, started at that time. Anything else is stale and may be
overwritten.

The last viewer's host, port and token (:class:`LastViewer`, ours) are written beside
the lock and outlast it, so that a viewer started again takes the same port when it is
free and keeps the token: the pages left open on the old one simply reconnect, their
cookie still good. It is in ``unotest/.cache/`` (which ``unotest init`` keeps out of
git), mode 0600 as the lock, and may be removed at any time (the next viewer then takes
any free port and a new token, as ``unotest view --new-token`` does).
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import NotRequired

from runner import protocol
from runner.files import atomic_write
from runner.processes import pid_exists, process_start_time

__all__ = [
    "LastViewer",
    "ViewerLock",
    "last_viewer",
    "live_lock",
    "lock_path",
    "read_lock",
    "remember_viewer",
    "remove_lock",
    "write_lock",
]

LAST_VIEWER_FILE = ".cache/viewer.json"
"""Under ``unotest/``: the last viewer's host, port and token."""
MIN_TOKEN_LENGTH = 32
"""A kept token shorter than a new one (192 bits, 32 characters) is not taken again."""


class ViewerLock(protocol.LockFile):
    pidStartTime: NotRequired[int]


def lock_path(root: Path) -> Path:
    return root / protocol.UNOTEST_DIR / protocol.LOCK_FILE


def read_lock(root: Path) -> ViewerLock | None:
    """The lock as written, or None (absent, unreadable, not a LockFile)."""
    try:
        data = json.loads(lock_path(root).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not (
        isinstance(data, dict)
        and isinstance(data.get("pid"), int)
        and isinstance(data.get("url"), str)
        and isinstance(data.get("startedAt"), str)
    ):
        return None
    lock: ViewerLock = {"pid": data["pid"], "url": data["url"], "startedAt": data["startedAt"]}
    if isinstance(data.get("pidStartTime"), int):
        lock["pidStartTime"] = data["pidStartTime"]
    return lock


def is_live(lock: ViewerLock) -> bool:
    pid = lock["pid"]
    if pid <= 0 or not pid_exists(pid):
        return False
    expected = lock.get("pidStartTime")
    actual = process_start_time(pid)
    return expected is None or actual is None or expected == actual


def live_lock(root: Path) -> ViewerLock | None:
    """The lock of a viewer that still runs, or None (no lock, or a stale one)."""
    lock = read_lock(root)
    return lock if lock is not None and is_live(lock) else None


def write_lock(root: Path, url: str, started: datetime | None = None) -> ViewerLock:
    """This process's lock, replacing whatever was there."""
    pid = os.getpid()
    when = started or datetime.now(UTC)
    lock: ViewerLock = {
        "pid": pid,
        "url": url,
        "startedAt": when.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
    }
    start_time = process_start_time(pid)
    if start_time is not None:
        lock["pidStartTime"] = start_time
    _write_private(lock_path(root), lock)
    return lock


def _write_private(path: Path, data: object) -> None:
    """``data`` as JSON, replacing the file atomically, readable by this user only."""
    path.parent.mkdir(parents=True, exist_ok=True)
    old_mask = os.umask(0o077)  # the temporary file is created 0600 before the rename
    try:
        atomic_write(path, (json.dumps(data, indent=2) + "\n").encode("utf-8"))
    finally:
        os.umask(old_mask)


def remove_lock(root: Path) -> None:
    """Remove the lock if it is this process's (a newer viewer's is left alone)."""
    lock = read_lock(root)
    if lock is not None and lock["pid"] == os.getpid():
        with contextlib.suppress(OSError):
            lock_path(root).unlink()


@dataclass(frozen=True)
class LastViewer:
    """Where the last viewer of a project listened, and its token."""

    host: str
    port: int
    token: str


def _last_path(root: Path) -> Path:
    return root / protocol.UNOTEST_DIR / LAST_VIEWER_FILE


def last_viewer(root: Path, host: str) -> LastViewer | None:
    """The last viewer of this project on ``host``, or None (none, another host, or a
    file that does not read as one: it is only a preference)."""
    try:
        data = json.loads(_last_path(root).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    port, token = data.get("port"), data.get("token")
    if data.get("host") != host or not isinstance(port, int) or not 0 < port <= 65535:
        return None
    if not isinstance(token, str) or len(token) < MIN_TOKEN_LENGTH:
        return None
    return LastViewer(host, port, token)


def remember_viewer(root: Path, viewer: LastViewer) -> None:
    """Keep this viewer's host, port and token for the next one (0600, atomically)."""
    _write_private(
        _last_path(root), {"host": viewer.host, "port": viewer.port, "token": viewer.token}
    )
