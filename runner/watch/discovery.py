"""``unotest/.daemon.json``: where a project's watch daemon listens, and whether it runs.

Written atomically once the socket listens, removed on a clean stop. A daemon that
dies abruptly (``kill -9``) leaves it behind, so reading it always checks the process
(as the viewer's lock and a run's manifest do): its pid must exist and, where
``/proc`` tells, have started when the file says (``pidStartTime``, ours, additive):
a reused pid is ``stale``. Four states: ``running``, ``not-running`` (no file),
``stale``, ``unreadable`` (not JSON, or not the discovery shape).
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, NotRequired, TypedDict

from runner import protocol
from runner.files import atomic_write
from runner.processes import pid_exists, process_start_time

__all__ = [
    "CLAIM_FILE",
    "DISCOVERY_FILE",
    "DaemonInfo",
    "Discovery",
    "DiscoveryStatus",
    "ProjectClaimed",
    "claim_project",
    "claimed_by",
    "discovery_path",
    "read_discovery",
    "remove_discovery",
    "write_discovery",
]

DISCOVERY_FILE = ".daemon.json"
CLAIM_FILE = ".daemon.lock"
"""Held (``flock``) by the one daemon of a project from before its start-up to its end:
two ``unotest watch`` started a second apart both found no discovery file (it is
written once the socket listens, seconds later) and both ran."""

DiscoveryStatus = Literal["running", "not-running", "stale", "unreadable"]


class DaemonInfo(TypedDict):
    pid: int
    host: str
    port: int
    root: str
    version: str
    protocolVersion: int
    startedAt: int
    pidStartTime: NotRequired[int]


@dataclass(frozen=True)
class Discovery:
    status: DiscoveryStatus
    info: DaemonInfo | None = None
    reason: str | None = None


def discovery_path(root: Path) -> Path:
    return root / protocol.UNOTEST_DIR / DISCOVERY_FILE


_INT_KEYS = ("pid", "port", "protocolVersion", "startedAt")
_STR_KEYS = ("host", "root", "version")


def _parse(data: object) -> DaemonInfo | None:
    if not isinstance(data, dict):
        return None
    ints = all(isinstance(data.get(k), int) and not isinstance(data[k], bool) for k in _INT_KEYS)
    if not ints or not all(isinstance(data.get(k), str) for k in _STR_KEYS):
        return None
    info: DaemonInfo = {
        "pid": data["pid"],
        "host": data["host"],
        "port": data["port"],
        "root": data["root"],
        "version": data["version"],
        "protocolVersion": data["protocolVersion"],
        "startedAt": data["startedAt"],
    }
    if isinstance(data.get("pidStartTime"), int):
        info["pidStartTime"] = data["pidStartTime"]
    return info


def read_discovery(root: Path) -> Discovery:
    """The file classified: which of the four states, with what it says."""
    path = discovery_path(root)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return Discovery("not-running")
    except OSError as err:
        return Discovery("unreadable", reason=f"{path}: {err.strerror or err}")
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return Discovery("unreadable", reason=f"{path} is not JSON")
    info = _parse(data)
    if info is None:
        return Discovery("unreadable", reason=f"{path} is not a daemon discovery file")
    pid = info["pid"]
    if pid <= 0 or not pid_exists(pid):
        return Discovery("stale", info, f"process {pid} is gone")
    expected = info.get("pidStartTime")
    actual = process_start_time(pid)
    if expected is not None and actual is not None and expected != actual:
        return Discovery("stale", info, f"process {pid} is another program now (pid reused)")
    return Discovery("running", info)


def write_discovery(
    root: Path, host: str, port: int, version: str, protocol_version: int, started_at: int
) -> DaemonInfo:
    """This process's discovery file, replacing whatever was there (a stale one)."""
    pid = os.getpid()
    info: DaemonInfo = {
        "pid": pid,
        "host": host,
        "port": port,
        "root": root.as_posix(),
        "version": version,
        "protocolVersion": protocol_version,
        "startedAt": started_at,
    }
    start_time = process_start_time(pid)
    if start_time is not None:
        info["pidStartTime"] = start_time
    path = discovery_path(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, (json.dumps(info, indent=2) + "\n").encode("utf-8"))
    return info


def remove_discovery(root: Path) -> None:
    """Remove the file if it is this process's (a newer daemon's is left alone)."""
    found = read_discovery(root)
    if found.info is not None and found.info["pid"] == os.getpid():
        with contextlib.suppress(OSError):
            discovery_path(root).unlink()


class ProjectClaimed(Exception):
    """Another daemon holds the project's claim (it is starting, or runs)."""

    def __init__(self, pid: int | None) -> None:
        super().__init__(f"a watch daemon holds this project (pid {pid})")
        self.pid = pid


def claim_project(root: Path) -> int | None:
    """Claim ``root`` for this process's daemon: the open, locked claim file (kept open
    until the process ends, when the kernel releases it, ``kill -9`` included), or None
    when another process holds it. Where there is no ``flock`` (Windows) every claim
    succeeds, as before there was one."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        return -1
    path = root / protocol.UNOTEST_DIR / CLAIM_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return fd


def claimed_by(root: Path) -> int | None:
    """The pid written in the claim file (the daemon holding it), if it reads."""
    with contextlib.suppress(OSError, ValueError):
        return int((root / protocol.UNOTEST_DIR / CLAIM_FILE).read_text().strip())
    return None
