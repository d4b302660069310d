"""``playwright run-server`` on a loopback port, as a test's browser host.

``RunServer(*extra)`` starts ``python -m playwright run-server --port 0 --host
127.0.0.1 *extra`` in a session of its own and waits for its ``Listening on ws://…``
line (``endpoint``). Pass ``--unsafe`` when the project's config sets
``executablePath``: a server honours it (and ``args``) only then.

``stop()`` ends it as a person does (Ctrl+C to its group, then SIGKILL after a grace);
``kill_host()`` ends it as a host that dies does: SIGKILL to the server and to every
process under it, its browsers included (Playwright starts them in process groups of
their own, so a signal to the server's group alone would leave them running).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

__all__ = ["RunServer", "descendants", "process_stat"]

REPO = Path(__file__).resolve().parents[2]


def process_stat(pid: int) -> list[str] | None:
    """[state, ppid, pgrp, ...] of a live process, None when gone or a zombie."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rfind(")") + 2 :].split()
    return None if fields[0] == "Z" else fields


def descendants(root: int) -> set[int]:
    """Every live process under ``root`` (by parent pid)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = process_stat(int(entry.name))
            if fields:
                children.setdefault(int(fields[1]), []).append(int(entry.name))
    found: set[int] = set()
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


class RunServer:
    """One ``playwright run-server`` process group on 127.0.0.1."""

    def __init__(self, *extra: str) -> None:
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "playwright",
                "run-server",
                "--port",
                "0",
                "--host",
                "127.0.0.1",
                *extra,
            ],
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            text=True,
        )
        self.lines: list[str] = []
        found = threading.Event()
        self.endpoint = ""
        self.members: set[tuple[int, str]] = set()
        """(pid, start time) of every process it had when last looked at: a browser
        outlives a killed server, and a pid reused since is not ours."""

        def read() -> None:
            assert self.process.stdout is not None
            for line in self.process.stdout:
                self.lines.append(line.rstrip())
                match = re.search(r"Listening on (ws://\S+)", line)
                if match and not found.is_set():
                    self.endpoint = match.group(1)
                    found.set()

        self.reader = threading.Thread(target=read, daemon=True)
        self.reader.start()
        if not found.wait(timeout=30):
            self.stop()
            pytest.fail(f"playwright run-server did not start: {self.lines}")

    def _all(self) -> set[int]:
        """Its processes alive now (the server's and those it had before)."""
        for pid in descendants(self.process.pid) | {self.process.pid}:
            fields = process_stat(pid)
            if fields:
                self.members.add((pid, fields[19]))
        alive = set()
        for pid, started in self.members:
            fields = process_stat(pid)
            if fields and fields[19] == started:
                alive.add(pid)
        return alive

    def kill_host(self) -> None:
        """SIGKILL to the server and everything under it, as a dying host: its clients
        see their connections dropped and any new one refused."""
        for pid in self._all():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        """Ctrl+C, as a person stops it: once the server has launched a browser,
        Playwright's SIGTERM handler only closes browsers and the server keeps running."""
        members = self._all()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGINT)
        deadline = time.monotonic() + 10
        while any(process_stat(p) for p in members) and time.monotonic() < deadline:
            self.process.poll()
            time.sleep(0.05)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        for pid in self._all():  # a browser in a group of its own, left by a killed server
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.process.wait(timeout=10)
        self.reader.join(timeout=5)
