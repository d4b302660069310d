"""Reading /proc in tests: process state, start time, descendants, command line.

Shared by the browser tests that must prove no runner, driver or Chromium process
outlives a run (a reused pid is told apart by its start time).
"""

from __future__ import annotations

from pathlib import Path


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
