"""Whether a process still runs, whether it is still the one that was meant, and
whether the process that started this one is still there.

A run's manifest, a webServer lease and the watch daemon's discovery file each record
a pid and its start time (field 22 of ``/proc/<pid>/stat``): a reader tells a dead
writer at once, and a reused pid from the one that wrote the file. A run or a
collection started by ``unotest mcp`` watches its owner (:class:`OwnerWatch`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

__all__ = [
    "OWNER_ENV",
    "OWNER_POLL_SECONDS",
    "OwnerWatch",
    "own_start_time",
    "pid_exists",
    "process_start_time",
    "read_proc_stat",
]

OWNER_ENV = "UNOTEST_OWNER_PID"
OWNER_POLL_SECONDS = 0.25


def read_proc_stat(pid: int) -> tuple[str, int] | None:
    """``(state, starttime)`` of ``pid`` from ``/proc/<pid>/stat`` (fields 3 and 22).

    ``None`` when there is no such process or no ``/proc`` (not Linux). The second
    field, ``(comm)``, may itself hold spaces and parentheses, so the fields are
    counted from the *last* ``)``.
    """
    if pid <= 0:
        return None
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    close = data.rfind(b")")
    if close < 0:
        return None
    fields = data[close + 1 :].split()
    # fields[0] is field 3 (state), so field 22 (starttime) is fields[19]
    if len(fields) < 20:
        return None
    try:
        return fields[0].decode("ascii", "replace"), int(fields[19])
    except ValueError:
        return None


def pid_exists(pid: int) -> bool:
    """Whether a process ``pid`` exists (maybe another user's); it may be a reused pid:
    :func:`read_proc_stat`'s start time tells them apart where there is a ``/proc``."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def process_start_time(pid: int) -> int | None:
    """Field 22 of ``/proc/<pid>/stat`` (clock ticks after boot), ``None`` if unknown."""
    stat = read_proc_stat(pid)
    return None if stat is None else stat[1]


_OWN_START: dict[int, int] = {}
"""This process's start time, by its pid: read once per process, not once per run
directory. Keyed by pid, so a forked child reads its own; a pid cannot be reused while
its process lives, so an entry never goes stale. A failed read is not kept."""


def own_start_time() -> int | None:
    """:func:`process_start_time` of this process, read from ``/proc`` only the first
    time (each run's manifest records it: a worker writes one per scenario)."""
    pid = os.getpid()
    known = _OWN_START.get(pid)
    if known is None:
        known = process_start_time(pid)
        if known is not None:
            _OWN_START[pid] = known
    return known


class OwnerWatch:
    """The process that started this one and wants it to end with it: ``unotest mcp``
    names itself (its pid) in ``UNOTEST_OWNER_PID`` in the environment of the runs it
    starts without ``detach``.

    What is watched is this process's *parent*: when the owner ends, however it ends
    (``kill -9`` included), the kernel gives its children another parent at once. So
    there is no pid that could be reused to fool the watch and nothing to poll but
    ``getppid()``. Processes that only inherit the variable (a collection's workers, a
    webServer, the browser) have another parent and watch nothing.
    """

    def __init__(self, pid: int) -> None:
        self.pid = pid

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> OwnerWatch | None:
        text = environ.get(OWNER_ENV, "").strip()
        if not text.isdigit() or int(text) <= 1:
            return None
        pid = int(text)
        if os.getppid() == pid or not pid_exists(pid):
            return cls(pid)  # ours; or the owner died before we looked: gone already
        return None  # inherited from a process the owner started (a worker's scenario)

    def gone(self) -> bool:
        return os.getppid() != self.pid
