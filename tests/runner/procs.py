"""Reading /proc in tests: process state, start time, descendants, command line.

Shared by the browser tests that must prove no runner, driver or Chromium process
outlives a run (a reused pid is told apart by its start time); also stopping a
runner with its whole tree, and finding the run directory a runner made.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def proc_stat(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, starttime) of a process, None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rfind(")") + 2 :].split()
    return fields[0], int(fields[1]), int(fields[19])


def alive(pid: int, starttime: int) -> bool:
    found = proc_stat(pid)
    return found is not None and found[0] not in ("Z", "X") and found[2] == starttime


def descendants(root: int) -> dict[int, int]:
    """Every live descendant of ``root``: pid → start time (a reused pid is told apart)."""
    children: dict[int, list[tuple[int, int]]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (info := proc_stat(int(entry.name))) and info[0] != "Z":
            children.setdefault(info[1], []).append((int(entry.name), info[2]))
    found: dict[int, int] = {}
    todo = [root]
    while todo:
        for pid, start in children.get(todo.pop(), []):
            found[pid] = start
            todo.append(pid)
    return found


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def stop_tree(proc: subprocess.Popen[bytes], timeout: float = 10) -> None:
    """SIGTERM (the runner closes its browser), then SIGKILL whatever of its tree is left.

    The tree is read first, while ``proc`` is not yet reaped; SIGKILL after ``timeout``
    seconds if SIGTERM is not enough.
    """
    tree = descendants(proc.pid)
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    for pid, started in tree.items():
        if alive(pid, started):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def marked(var: str, marker: str) -> list[int]:
    """Processes (bar this one) whose environment holds ``var=marker``: runners, drivers,
    Chromium — the environment is inherited, whoever their parent is now."""
    needle = f"{var}={marker}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            with contextlib.suppress(OSError):
                if needle in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
    return found


def outlivers(var: str, marker: str, grace: float = 15) -> list[int]:
    """What still carries ``var=marker`` after ``grace`` seconds; killed, and returned."""
    deadline = time.monotonic() + grace
    while (left := marked(var, marker)) and time.monotonic() < deadline:
        time.sleep(0.2)
    for pid in left:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return left


def run_dir_of(project: Path, pid: int) -> Path | None:
    """The run directory under ``project`` whose manifest names ``pid``; None while there is
    none (a manifest being written, or unreadable, is skipped)."""
    for manifest in (project / "unotest" / ".runs").glob("*/manifest.json"):
        with contextlib.suppress(OSError, ValueError):
            if json.loads(manifest.read_text())["pid"] == pid:
                return manifest.parent
    return None


def wait_for_run_dir(
    project: Path,
    proc: subprocess.Popen[Any],
    timeout: float = 45,
    describe: Callable[[], str] = lambda: "",
) -> Path:
    """The run directory of ``proc`` once its manifest is there; the test fails if ``proc``
    ends first or ``timeout`` passes (``describe()``, e.g. its stderr, in the message)."""
    deadline = time.monotonic() + timeout
    while (found := run_dir_of(project, proc.pid)) is None:
        if proc.poll() is not None:
            raise AssertionError(f"the run ended before it made its directory\n{describe()}")
        if time.monotonic() > deadline:
            raise AssertionError(f"no run directory within {timeout} s\n{describe()}")
        time.sleep(0.02)
    return found
