"""One host for worker processes: spawn them, feed them orders, read their reports,
reap them. A collection's orchestrator and ``unotest watch``'s warm pool both drive
their workers through it, as Playwright's ``workerHost``/``processHost`` do for its
runner and UI mode.

A worker is ``python -m runner.workers.main ROOT`` (:func:`worker_argv`); orders go to
its stdin and reports come from its stdout, one JSON object a line
(:mod:`runner.workers.messages`). Its first report is ``ready`` (its browser is up) or
``fatal``. A worker started before the event loop existed (``unotest collection``
starts them first: :mod:`runner.collection.prelaunch`) is adopted with its pipes made
this loop's streams.

Only the standard library is imported here: the pre-launch path reads
:func:`worker_argv` before anything else is loaded.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

__all__ = [
    "LINE_LIMIT",
    "START_TIMEOUT_S",
    "WorkerHost",
    "WorkerProcess",
    "worker_argv",
]

WORKER_MODULE = "runner.workers.main"
START_TIMEOUT_S = 60.0
"""How long a worker has to say ``ready`` (its driver, imports and browser)."""
LINE_LIMIT = 16 * 1024 * 1024
"""The longest report line read from a worker (a result with a long error and output)."""
REAP_WAIT_S = 15.0
"""How long a worker whose stdin closed has to end before it is killed."""


def worker_argv(root: Path) -> list[str]:
    """The command line of a worker process for the project at ``root``."""
    return [sys.executable, "-m", WORKER_MODULE, str(root)]


class WorkerProcess(Protocol):
    """What a host uses of a worker process: asyncio's, or one started early."""

    @property
    def pid(self) -> int: ...

    @property
    def returncode(self) -> int | None: ...

    @property
    def stdin(self) -> asyncio.StreamWriter | None: ...

    @property
    def stdout(self) -> asyncio.StreamReader | None: ...

    async def wait(self) -> int: ...

    def kill(self) -> None: ...

    def send_signal(self, sig: int) -> None: ...


class _AdoptedProcess:
    """A worker started before the event loop existed, its pipes made streams of this
    loop."""

    def __init__(
        self,
        popen: subprocess.Popen[bytes],
        stdin: asyncio.StreamWriter,
        stdout: asyncio.StreamReader,
    ) -> None:
        self.popen = popen
        self.stdin = stdin
        self.stdout = stdout

    @classmethod
    async def adopt(cls, popen: subprocess.Popen[bytes]) -> _AdoptedProcess:
        assert popen.stdin is not None and popen.stdout is not None
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=LINE_LIMIT, loop=loop)
        await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader, loop=loop), popen.stdout
        )
        transport, protocol = await loop.connect_write_pipe(
            lambda: asyncio.streams.FlowControlMixin(loop=loop), popen.stdin
        )
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
        return cls(popen, writer, reader)

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def returncode(self) -> int | None:
        return self.popen.poll()

    async def wait(self) -> int:
        while (code := self.popen.poll()) is None:
            await asyncio.sleep(0.005)
        return code

    def kill(self) -> None:
        if self.popen.poll() is None:
            self.popen.kill()

    def send_signal(self, sig: int) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(sig)


class WorkerHost:
    """One worker process of index ``index``: its orders out, its reports in."""

    def __init__(self, index: int, process: WorkerProcess) -> None:
        self.index = index
        self.process = process

    @classmethod
    async def spawn(cls, index: int, root: Path, env: Mapping[str, str]) -> WorkerHost:
        """A new worker for the project at ``root``, with ``env`` as its environment."""
        process = await asyncio.create_subprocess_exec(
            *worker_argv(root),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env=dict(env),
            cwd=str(root),
            limit=LINE_LIMIT,
        )
        return cls(index, process)

    @classmethod
    async def adopt(cls, index: int, popen: subprocess.Popen[bytes]) -> WorkerHost:
        """A worker started before this loop (``subprocess.Popen`` with pipes)."""
        return cls(index, await _AdoptedProcess.adopt(popen))

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def alive(self) -> bool:
        return self.process.returncode is None

    async def read(self) -> dict[str, object] | None:
        """The worker's next report (a line that is no JSON object is passed over);
        ``None`` once its stdout has closed: it has ended."""
        stdout = self.process.stdout
        assert stdout is not None
        while True:
            line = await stdout.readline()
            if not line:
                return None
            try:
                report = json.loads(line)
            except ValueError:
                continue
            if isinstance(report, dict):
                return report

    async def first_report(self, timeout: float = START_TIMEOUT_S) -> dict[str, object] | None:
        """Its first report (``ready``, or ``fatal`` with its error), or ``None`` when it
        ended or said nothing in ``timeout``."""
        try:
            return await asyncio.wait_for(self.read(), timeout)
        except TimeoutError:
            return None

    def send(self, order: Mapping[str, object]) -> None:
        """One order, one line; a worker that is gone, or going, is sent nothing."""
        stdin = self.process.stdin
        if stdin is None or stdin.is_closing():
            return
        with contextlib.suppress(ConnectionError, RuntimeError):
            stdin.write((json.dumps(order) + "\n").encode())

    async def reap(self, wait_s: float = REAP_WAIT_S) -> None:
        """Its stdin closed (a worker ends when it reads the end), then awaited; killed
        when it has not ended after ``wait_s``."""
        if self.process.stdin is not None:
            with contextlib.suppress(Exception):
                self.process.stdin.close()
        try:
            await asyncio.wait_for(self.process.wait(), wait_s)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
            await self.process.wait()

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()

    def send_signal(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.process.send_signal(sig)
