"""The watch daemon's warm workers: collection workers kept alive between batches.

Each worker is a :mod:`runner.worker` process (one browser, scenarios one after
another in fresh contexts, its usual run directories), started once with the daemon,
so a save pays neither Python's start, nor Playwright's, nor a browser launch. After
a save the daemon sends every worker ``reload`` (the project read again before its
next run). A worker whose browser disappears relaunches it and says so
(``relaunched``); a worker that dies is replaced. Both reach ``on_degraded``, which
the daemon turns into an ``error`` event with ``degradedTo``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from runner import worker_messages as messages
from runner.errors import BrowserLaunchError
from runner.protocol import JSONObject

__all__ = ["NO_WORKER", "PoolOutcome", "WarmPool"]

START_TIMEOUT_S = 60.0
NO_WORKER = -1
"""In the idle queue when every worker is gone: whoever waits for one is answered."""


@dataclass
class PoolOutcome:
    """A worker's ``finished`` report on one scenario, or None when the worker died
    (``worker`` is ``NO_WORKER`` when there was none left to run it)."""

    report: JSONObject | None
    run_id: str | None
    worker: int


@dataclass
class _Member:
    index: int
    process: asyncio.subprocess.Process
    reports: asyncio.Queue[JSONObject | None] = field(default_factory=asyncio.Queue)
    busy: bool = False
    order_id: str | None = None
    reader: asyncio.Task[None] | None = None


class WarmPool:
    def __init__(
        self,
        root: Path,
        size: int,
        on_degraded: Callable[[str, str, str | None, str], None],
        env: dict[str, str] | None = None,
    ) -> None:
        self.root = root
        self.size = max(1, size)
        self.on_degraded = on_degraded
        self.env = {**(env if env is not None else os.environ), "PYTHONSAFEPATH": "1"}
        self.members: dict[int, _Member] = {}
        self.idle: asyncio.Queue[int] = asyncio.Queue()
        self.closing = False
        self.orders = 0

    async def start(self) -> None:
        """Every worker launched and ready (in parallel); the first failure raises."""
        started = await asyncio.gather(*(self._spawn(i) for i in range(self.size)))
        for member in started:
            self.idle.put_nowait(member.index)

    @property
    def pids(self) -> list[int]:
        return [m.process.pid for m in self.members.values()]

    async def _spawn(self, index: int) -> _Member:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "runner.worker_main",
            str(self.root),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env={**self.env, "UNOTEST_WORKER_INDEX": str(index)},
            cwd=str(self.root),
            limit=16 * 1024 * 1024,
        )
        member = _Member(index, process)
        self.members[index] = member
        member.reader = asyncio.ensure_future(self._read(member))
        try:
            first = await asyncio.wait_for(member.reports.get(), START_TIMEOUT_S)
        except TimeoutError:
            first = None
        if first is None or first.get("type") != "ready":
            await self._reap(member)
            why = (first or {}).get("error", "it did not start")
            raise BrowserLaunchError(f"worker {index} could not start: {why}")
        return member

    async def _read(self, member: _Member) -> None:
        """Every report of one worker: ``relaunched`` at once, the rest to its queue."""
        stdout = member.process.stdout
        assert stdout is not None
        while True:
            line = await stdout.readline()
            if not line:
                member.reports.put_nowait(None)
                return
            with contextlib.suppress(ValueError):
                report = json.loads(line)
                if not isinstance(report, dict):
                    continue
                if report.get("type") == "relaunched":
                    self.on_degraded(
                        f"worker:{member.index}",
                        f"worker {member.index}'s browser disconnected (crashed or killed)",
                        str(report.get("reason")),
                        f"worker {member.index} launched a new browser; its other scenarios "
                        "run there",
                    )
                    continue
                member.reports.put_nowait(report)

    def _order(self, member: _Member, order: messages.Order) -> None:
        stdin = member.process.stdin
        if stdin is None or stdin.is_closing():
            return
        with contextlib.suppress(ConnectionError, RuntimeError):
            stdin.write((json.dumps(order) + "\n").encode())

    def reload(self) -> None:
        """Every worker reads the project again before its next scenario."""
        for member in self.members.values():
            self._order(member, messages.reload_order())

    def abort_running(self) -> None:
        """Abort the scenario each busy worker runs (its browser stays)."""
        for member in self.members.values():
            if member.busy and member.order_id is not None:
                # With its order's id: a run the worker has not started yet is not
                # run, and an abort that arrives after the run ended hits nothing.
                self._order(member, messages.abort_order(member.order_id))

    async def run(
        self, scenario: str, on_started: Callable[[str], None], wanted: Callable[[], bool]
    ) -> PoolOutcome | None:
        """``scenario`` on the next free worker, until its ``finished`` report; None when
        it is no longer ``wanted`` once a worker is free (its batch was cancelled)."""
        index = await self.idle.get()
        if index == NO_WORKER:
            self.idle.put_nowait(index)  # for every other scenario waiting
            return PoolOutcome(None, None, index)
        member = self.members[index]
        run_id: str | None = None
        try:
            if not wanted() or self.closing:
                return None
            member.busy = True
            self.orders += 1
            member.order_id = f"order-{self.orders}"
            self._order(member, messages.run_order(scenario, None, member.order_id))
            while True:
                report = await member.reports.get()
                if report is None:
                    break
                if report.get("type") == "started" and isinstance(report.get("runId"), str):
                    run_id = str(report["runId"])
                    on_started(run_id)
                elif report.get("type") == "finished":
                    return PoolOutcome(report, run_id, index)
            await self._replace(member)
            return PoolOutcome(None, run_id, index)
        finally:
            member.busy = False
            member.order_id = None
            if index in self.members and self.members[index].process.returncode is None:
                self.idle.put_nowait(index)

    async def _replace(self, member: _Member) -> None:
        """A worker died mid-scenario: it costs that scenario; a new one takes its place."""
        await self._reap(member)
        if self.closing:
            return
        try:
            await self._spawn(member.index)
        except BrowserLaunchError as err:
            left = len(self.members)
            self.on_degraded(
                f"worker:{member.index}",
                f"worker {member.index} died and no new one could start",
                str(err),
                f"{left} worker(s) left" if left else "none: scenarios end errored until a restart",
            )
            if not left:
                self.idle.put_nowait(NO_WORKER)
            return
        self.on_degraded(
            f"worker:{member.index}",
            f"worker {member.index} died during a scenario",
            None,
            f"a new worker {member.index} with a new browser runs the next scenarios",
        )

    async def _reap(self, member: _Member) -> None:
        if member.process.stdin is not None:
            with contextlib.suppress(Exception):
                member.process.stdin.close()
        try:
            await asyncio.wait_for(member.process.wait(), 15)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                member.process.kill()
            await member.process.wait()
        if member.reader is not None:
            member.reader.cancel()
        if self.members.get(member.index) is member:
            del self.members[member.index]

    async def close(self) -> None:
        """Every worker told to exit (it closes its browser), then reaped."""
        self.closing = True
        for member in list(self.members.values()):
            if member.busy:
                self._order(member, messages.abort_order())
            self._order(member, messages.exit_order())
        await asyncio.gather(*(self._reap(m) for m in list(self.members.values())))
