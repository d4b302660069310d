"""``unotest/.viewer.lock``: which viewer serves this project, and at what URL.

Written atomically once the server listens (mode 0600: the URL holds the token),
removed when it stops. ``pidStartTime`` (ours, additive, as in a run's manifest) tells
a live viewer from a reused pid: a lock is *live* only when its pid exists and, where
``/proc`` says, started at that time. Anything else is stale and may be overwritten.
"""

from __future__ import annotations

import contextlib
import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import NotRequired

from runner import protocol
from runner.files import atomic_write
from runner.processes import pid_exists, process_start_time

__all__ = ["ViewerLock", "live_lock", "lock_path", "read_lock", "remove_lock", "write_lock"]


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
    path = lock_path(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    old_mask = os.umask(0o077)  # the temporary file is created 0600 before the rename
    try:
        atomic_write(path, (json.dumps(lock, indent=2) + "\n").encode("utf-8"))
    finally:
        os.umask(old_mask)
    return lock


def remove_lock(root: Path) -> None:
    """Remove the lock if it is this process's (a newer viewer's is left alone)."""
    lock = read_lock(root)
    if lock is not None and lock["pid"] == os.getpid():
        with contextlib.suppress(OSError):
            lock_path(root).unlink()
