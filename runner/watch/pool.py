"""The watch daemon's warm workers: collection workers kept alive between batches.

Each worker is a :mod:`runner.workers.worker` process (one browser, scenarios one after
another in fresh contexts, its usual run directories), started once with the daemon,
so a save pays neither Python's start, nor Playwright's, nor a browser launch. After
a save the daemon sends every worker ``reload`` (the project read again before its
next run). A worker whose browser disappears relaunches it and says so
(``relaunched``); a worker that dies is replaced. Both reach ``on_degraded``, which
the daemon turns into an ``error`` event with ``degradedTo``.

With ``wsEndpoint`` the workers' browsers come from Playwright servers, spread over
them by free capacity (``browsers``: :class:`runner.workers.pool.BrowserPool`). A
server that refuses a worker, or drops a run and refuses the worker again, is down
(said once, through ``on_degraded``); the worker is replaced on another endpoint, and
the down one is tried again after its back-off when a worker is next replaced.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from runner.errors import BrowserLaunchError
from runner.project.collection_file import CollectionUseJSON
from runner.protocol import JSONObject
from runner.workers import messages
from runner.workers.host import WorkerHost
from runner.workers.pool import ENDPOINT_ENV, BrowserPool

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
    host: WorkerHost
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
        self.use: CollectionUseJSON | None = None
        """The watched collection's context keys and ``storageState`` (``--collection``),
        which its scenarios run with, as in the collection."""
        self.closing = False
        self.orders = 0
        self.browsers = BrowserPool((), 0)
        """The config's browser endpoints (set by the daemon before :meth:`start`)."""

    async def start(self) -> None:
        """Every worker launched and ready (in parallel); the first failure raises."""
        started = await asyncio.gather(*(self._spawn(i) for i in range(self.size)))
        for member in started:
            self.idle.put_nowait(member.host.index)

    @property
    def pids(self) -> list[int]:
        return [m.host.pid for m in self.members.values()]

    async def _spawn(self, index: int) -> _Member:
        """Worker ``index``, ready; on the browser endpoint with the most free capacity
        (another one when an endpoint refuses it)."""
        while True:
            endpoint = self.browsers.choose() if self.browsers.remote else None
            if self.browsers.remote and endpoint is None:
                raise BrowserLaunchError(
                    f"worker {index} could not start: no browser endpoint takes a worker now "
                    f"({self.browsers.down_list() or 'every one is full'})"
                )
            env = {**self.env, "UNOTEST_WORKER_INDEX": str(index)}
            if endpoint is not None:
                env[ENDPOINT_ENV] = str(endpoint)
                self.browsers.attach(index, endpoint)
            member = _Member(await WorkerHost.spawn(index, self.root, env))
            self.members[index] = member
            member.reader = asyncio.ensure_future(self._read(member))
            try:
                first = await asyncio.wait_for(member.reports.get(), START_TIMEOUT_S)
            except TimeoutError:
                first = None
            if first is not None and first.get("type") == "ready":
                if endpoint is not None:
                    self.browsers.came_up(endpoint)
                return member
            await self._reap(member)
            why = (first or {}).get("error", "it did not start")
            if endpoint is not None and (first or {}).get("endpoint") == endpoint:
                self._endpoint_down(endpoint, str(why))
                continue
            raise BrowserLaunchError(f"worker {index} could not start: {why}")

    def _endpoint_down(self, endpoint: int, why: str) -> None:
        """Said once each time an endpoint goes down."""
        if self.browsers.went_down(endpoint, why) is not None:
            self.on_degraded(
                f"endpoint:{endpoint}",
                f"browser endpoint {self.browsers.shown(endpoint)} is down",
                self.browsers.endpoints[endpoint].reason,
                "its workers run on the other endpoints; it is tried again later",
            )

    async def _read(self, member: _Member) -> None:
        """Every report of one worker: ``relaunched`` at once, the rest to its queue."""
        index = member.host.index
        while True:
            report = await member.host.read()
            if report is None:
                member.reports.put_nowait(None)
                return
            if report.get("type") == "relaunched":
                self.on_degraded(
                    f"worker:{index}",
                    f"worker {index}'s browser disconnected (crashed or killed)",
                    str(report.get("reason")),
                    f"worker {index} launched a new browser; its other scenarios run there",
                )
                continue
            member.reports.put_nowait(report)

    def reload(self) -> None:
        """Every worker reads the project again before its next scenario."""
        for member in self.members.values():
            member.host.send(messages.reload_order())

    def abort_running(self) -> None:
        """Abort the scenario each busy worker runs (its browser stays)."""
        for member in self.members.values():
            if member.busy and member.order_id is not None:
                # With its order's id: a run the worker has not started yet is not
                # run, and an abort that arrives after the run ended hits nothing.
                member.host.send(messages.abort_order(member.order_id))

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
            order = messages.run_order(scenario, None, member.order_id, use=self.use)
            member.host.send(order)
            while True:
                report = await member.reports.get()
                if report is None:
                    break
                if report.get("type") == "started" and isinstance(report.get("runId"), str):
                    run_id = str(report["runId"])
                    on_started(run_id)
                elif report.get("type") == "finished":
                    lost = report.get("browserLost")
                    if isinstance(lost, str):
                        # Its endpoint went down under it: the worker ends; another
                        # takes its place elsewhere.
                        endpoint = self.browsers.endpoint_of(index)
                        if endpoint is not None:
                            self._endpoint_down(endpoint, lost)
                        await self._replace(member)
                    return PoolOutcome(report, run_id, index)
            await self._replace(member)
            return PoolOutcome(None, run_id, index)
        finally:
            member.busy = False
            member.order_id = None
            if index in self.members and self.members[index].host.alive:
                self.idle.put_nowait(index)

    async def _replace(self, member: _Member) -> None:
        """A worker died mid-scenario: it costs that scenario; a new one takes its place."""
        await self._reap(member)
        if self.closing:
            return
        try:
            await self._spawn(member.host.index)
        except BrowserLaunchError as err:
            left = len(self.members)
            self.on_degraded(
                f"worker:{member.host.index}",
                f"worker {member.host.index} died and no new one could start",
                str(err),
                f"{left} worker(s) left" if left else "none: scenarios end errored until a restart",
            )
            if not left:
                self.idle.put_nowait(NO_WORKER)
            return
        self.on_degraded(
            f"worker:{member.host.index}",
            f"worker {member.host.index} died during a scenario",
            None,
            f"a new worker {member.host.index} with a new browser runs the next scenarios",
        )

    async def _reap(self, member: _Member) -> None:
        await member.host.reap()
        if member.reader is not None:
            member.reader.cancel()
        if self.members.get(member.host.index) is member:
            del self.members[member.host.index]
            self.browsers.detach(member.host.index)

    async def close(self) -> None:
        """Every worker told to exit (it closes its browser), then reaped."""
        self.closing = True
        for member in list(self.members.values()):
            if member.busy:
                member.host.send(messages.abort_order())
            member.host.send(messages.exit_order())
        await asyncio.gather(*(self._reap(m) for m in list(self.members.values())))
