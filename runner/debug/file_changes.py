"""Writes to one file as a descriptor ``select`` can wait on (Linux ``inotify``).

The command feed (:mod:`runner.debug.command_feed`) used to look at ``commands.jsonl`` every
4 ms: 250 wake-ups a second that take the GIL from the scenario's interpreter, and a
command still waited for the next look (plus the GIL's 5 ms switch interval). Woken
by the kernel when the file is written, the feed costs nothing while nobody writes and
reads a command as soon as it is appended. Only the file is watched, not its folder:
the run writes ``steps.jsonl`` beside it on every step, and those writes must not wake
anyone.

Where there is no ``inotify`` (macOS, Windows, a kernel without it, a file system that
does not report writes) :meth:`FileChanges.open` answers None and the feed polls as
before. Standard library only (``ctypes``, imported on first use).
"""

from __future__ import annotations

import os
import select
import sys
from pathlib import Path
from typing import Any

__all__ = ["FileChanges"]

_IN_MODIFY = 0x002
_IN_ATTRIB = 0x004
_IN_CLOSE_WRITE = 0x008
_IN_DELETE_SELF = 0x400
_IN_MOVE_SELF = 0x800
_WATCHED = _IN_MODIFY | _IN_ATTRIB | _IN_CLOSE_WRITE | _IN_DELETE_SELF | _IN_MOVE_SELF
"""A write, a truncation (``IN_MODIFY``), and the file going away or being renamed (the
feed then reads what is at the path now and watches that)."""
_DRAIN_BYTES = 4096

_libc: Any = None


def _inotify() -> Any:
    global _libc
    if _libc is None:
        import ctypes

        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc


class FileChanges:
    """An ``inotify`` descriptor watching one file; :meth:`wait` returns when it was
    written (or ``also`` became readable, or ``timeout`` passed)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    @classmethod
    def open(cls, path: Path) -> FileChanges | None:
        """A watch on ``path``; None where writes cannot be watched (or it is missing)."""
        if not sys.platform.startswith("linux"):
            return None
        try:
            libc = _inotify()
            fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        except (OSError, AttributeError):
            return None
        if fd < 0:
            return None
        if libc.inotify_add_watch(fd, os.fsencode(path), _WATCHED) < 0:
            os.close(fd)
            return None
        return cls(fd)

    def wait(self, timeout: float, also: int | None = None) -> None:
        """Until the file is written, ``also`` is readable, or ``timeout`` seconds; the
        events that woke it are read away (the caller reads the file itself)."""
        watched = [self.fd] if also is None else [self.fd, also]
        try:
            ready, _, _ = select.select(watched, [], [], timeout)
        except (OSError, ValueError):
            return
        if self.fd in ready:
            self._drain()

    def _drain(self) -> None:
        try:
            while os.read(self.fd, _DRAIN_BYTES):
                pass
        except (BlockingIOError, OSError):
            pass

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
