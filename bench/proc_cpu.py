"""The CPU time of every process a command starts, by kind (Linux ``/proc`` only).

``bench/collection.py --cpu`` wraps each run in :class:`ProcessCpu`: on two cores, a
collection is close to CPU-bound, so which processes spent the CPU says where the wall
time can still come from (the browsers', the same for every runner, or the runner's
own). A thread reads ``/proc/<pid>/stat`` of every process that did not exist before the
run and descends from this one, every ``interval`` seconds, and keeps each one's last
reading: a process that ends between two readings loses at most one interval of its CPU.
Whatever else the machine runs meanwhile is not counted (nor a process whose parent had
already ended when it was first seen: none of the runners' own do that).

With ``memory=True`` it also reads each process's proportional set size (PSS, from
``/proc/<pid>/smaps_rollup``: a page shared by N processes counts 1/N in each, so the
browsers' shared pages are not counted once per process) every ``memory_every``
readings, and keeps the peak of the family's total, by kind (:meth:`peak_memory`).
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from pathlib import Path
from types import TracebackType

__all__ = ["ProcessCpu", "kind_of"]

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def kind_of(cmdline: str) -> str:
    """What a process is, from its command line: the browser, Node, Python, other."""
    program = Path(cmdline.split(" ", 1)[0]).name
    if "chrom" in program or "--type=" in cmdline:
        return "Chromium"
    if program == "node" or "playwright/driver" in cmdline:
        return "Node"
    if program.startswith("python") or "unotest" in program or "pytest" in program:
        return "Python"
    return "other"


def _pids() -> set[int]:
    return {int(name) for name in os.listdir("/proc") if name.isdigit()}


def _reading(pid: int) -> tuple[int, int, float] | None:
    """(parent pid, start time in ticks, user + system CPU seconds), None once gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[1]), int(fields[19]), (int(fields[11]) + int(fields[12])) / _TICKS


def _pss_mib(pid: int) -> float | None:
    """A live process's proportional set size in MiB (None once gone)."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return ""


class ProcessCpu:
    """``with ProcessCpu() as cpu: ...`` then ``cpu.by_kind()``: seconds per kind."""

    def __init__(
        self, interval: float = 0.02, memory: bool = False, memory_every: int = 10
    ) -> None:
        self.interval = interval
        self.memory = memory
        self.memory_every = memory_every
        self._polls = 0
        self._peak: dict[str, float] = {}
        self._peak_total = 0.0
        self._before: set[int] = set()
        self._family: set[int] = {os.getpid()}
        self._seen: dict[tuple[int, int], tuple[str, float]] = {}
        # The command line each process was classified by, and by pid the newest one
        # seen: a child read between its fork and its exec still shows its parent's
        # command line, so such a child is classified again at its next reading.
        self._cmdlines: dict[tuple[int, int], str] = {}
        self._cmdline_of_pid: dict[int, str] = {os.getpid(): _cmdline(os.getpid())}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def __enter__(self) -> ProcessCpu:
        self._before = _pids() | {os.getpid()}
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join()

    def _poll(self) -> None:
        while True:
            self._read_once()
            if self._stop.wait(self.interval):
                return

    def _read_once(self) -> None:
        readings = {pid: _reading(pid) for pid in _pids() - self._before}
        found = True
        while found:  # a child may be listed before its parent
            found = False
            for pid, reading in readings.items():
                if reading is not None and pid not in self._family and reading[0] in self._family:
                    self._family.add(pid)
                    found = True
        for pid, reading in readings.items():
            if reading is None or pid not in self._family:
                continue
            parent, start, seconds = reading
            key = (pid, start)
            known = self._cmdlines.get(key)
            if known is None or known == self._cmdline_of_pid.get(parent):
                known = _cmdline(pid) or known or ""
                self._cmdlines[key] = known
                self._cmdline_of_pid[pid] = known
            self._seen[key] = (kind_of(known), seconds)
        self._polls += 1
        if self.memory and self._polls % self.memory_every == 1:
            self._read_memory()

    def _read_memory(self) -> None:
        """The family's PSS now, by kind; kept when its total is the highest yet."""
        now: Counter[str] = Counter()
        for (pid, _), (kind, _) in list(self._seen.items()):
            pss = _pss_mib(pid)
            if pss is not None:
                now[kind] += pss
        total = sum(now.values())
        if total > self._peak_total:
            self._peak_total = total
            self._peak = dict(now)

    def peak_memory(self) -> dict[str, float]:
        """MiB of PSS by kind at the moment the family's total was highest."""
        return dict(self._peak)

    def by_kind(self) -> dict[str, float]:
        totals: Counter[str] = Counter()
        for kind, seconds in self._seen.values():
            totals[kind] += seconds
        return dict(totals)
