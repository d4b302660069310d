"""Several lanes of a collection on one worker process: a host per lane over a shared one.

A collection runs ``--workers N`` scenarios at once in *lanes*, ``--lanes L`` of them to
a worker process (:func:`lanes_per_process`): each process starts one Python, one
Playwright driver and one browser, and its lanes' scenarios run side by side in their own
contexts of that browser. The orchestrator keeps one loop per lane, as it would per
process; each loop talks to a :class:`LaneHost`, which looks like a
:class:`runner.workers.host.WorkerHost` of its own:

- orders: a lane's ``run`` orders carry its index (``lane``); ``abort`` orders go as they
  are (they name an order); the process gets ``exit`` once every lane on it said ``exit``;
- reports: one reader per process hands each report on a run (it carries ``lane``) to
  its lane, and the worker's own (``ready``, ``fatal``, ``relaunched``) to every lane; its
  ``teardown`` (the ``after_all`` hooks' failure, as it ends) to the lane that closed it;
  the end of its output ends every lane's;
- reaping: a lane leaves the process; the last one to leave reaps it.

Only the standard library is imported here (the pre-launch path reads
:func:`lanes_per_process` before anything else is loaded).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Mapping
from typing import Any

from runner.workers.host import START_TIMEOUT_S, WorkerHost

__all__ = ["DEFAULT_LANES", "LaneHost", "SharedWorker", "lanes_per_process"]

DEFAULT_LANES = 2
"""Lanes to a worker process unless ``--lanes`` says otherwise: two scenarios share a
browser, a driver and a Python process (each needs little of them: a scenario mostly
waits for the page), and a crash costs at most two of them."""

Report = dict[str, Any]


def lanes_per_process(requested: int | None, remote: bool) -> int:
    """How many lanes each worker process holds: ``requested`` (``--lanes``), else
    :data:`DEFAULT_LANES`; one with browsers from ``wsEndpoint`` servers, whose capacity
    counts browsers and whose loss must cost one scenario per browser, as documented."""
    if remote:
        return 1
    return max(1, requested if requested is not None else DEFAULT_LANES)


class SharedWorker:
    """One worker process and the lanes on it. Made at once (so that the lanes that
    start together find it) and started by ``starting``."""

    def __init__(self, index: int, starting: Awaitable[WorkerHost]) -> None:
        self.index = index
        """The process's place among the collection's (its first lane is index × lanes)."""
        self.started: asyncio.Task[WorkerHost] = asyncio.ensure_future(starting)
        self.queues: dict[int, asyncio.Queue[Report | None]] = {}
        """The lanes on it (those that have not left), each with its reports."""
        self.exited: set[int] = set()
        """Lanes that said ``exit``."""
        self.closing = False
        """``exit`` went to the process: no lane joins it any more."""
        self.closer: int | None = None
        self.first: Report | None = None
        """Its first report once read (``ready``, ``fatal``), for lanes that join later."""
        self.ended = False
        self.reader: asyncio.Task[None] | None = None

    @property
    def open(self) -> bool:
        """Whether a lane may still join it."""
        if self.closing or self.ended:
            return False
        if not self.started.done():
            return True
        return (
            not self.started.cancelled()
            and self.started.exception() is None
            and (self.started.result().alive)
        )

    async def attach(self, lane: int) -> LaneHost:
        """Lane ``lane`` on this process, once the process exists (OSError when it could
        not be started)."""
        queue: asyncio.Queue[Report | None] = asyncio.Queue()
        self.queues[lane] = queue
        if self.first is not None:
            queue.put_nowait(self.first)
        if self.ended:
            queue.put_nowait(None)
        try:
            host = await asyncio.shield(self.started)
        except BaseException:
            self.queues.pop(lane, None)
            raise
        if self.reader is None:
            self.reader = asyncio.ensure_future(self._read(host))
        return LaneHost(lane, self, host, queue)

    async def _read(self, host: WorkerHost) -> None:
        """Every report to the lanes it is for, until the process's output ends (or can
        no longer be read: a line over the limit); then each lane's end."""
        try:
            first = await host.first_report(START_TIMEOUT_S)
            if first is not None:
                self.first = first
                self._broadcast(first)
            if first is not None and first.get("type") == "ready":
                while (report := await host.read()) is not None:
                    self._route(report)
        finally:
            self.ended = True
            for queue in self.queues.values():
                queue.put_nowait(None)

    def _route(self, report: Report) -> None:
        lane = report.get("lane")
        if isinstance(lane, int):
            queue = self.queues.get(lane)
            if queue is not None:
                queue.put_nowait(report)
        elif report.get("type") == "teardown":
            closer = self.closer if self.closer in self.queues else min(self.queues, default=None)
            if closer is not None:
                self.queues[closer].put_nowait(report)
        else:
            self._broadcast(report)

    def _broadcast(self, report: Report) -> None:
        for queue in self.queues.values():
            queue.put_nowait(report)

    def exit(self, lane: int, host: WorkerHost) -> None:
        """Lane ``lane`` is done: the last lane on the process to be done closes it; the
        others' view of it ends now (they have nothing more to read from it)."""
        self.exited.add(lane)
        if not self._close_when_done(lane, host) and not self.closing:
            queue = self.queues.get(lane)
            if queue is not None:
                queue.put_nowait(None)

    async def leave(self, lane: int, host: WorkerHost) -> None:
        """Lane ``lane`` leaves; the last to leave reaps the process, and one that leaves
        a process still serving others that are all done closes it for them."""
        self.queues.pop(lane, None)
        self.exited.discard(lane)
        if not self.queues:
            await host.reap()
            if self.reader is not None:
                await self.reader
        else:
            self._close_when_done(min(self.queues), host)

    def _close_when_done(self, closer: int, host: WorkerHost) -> bool:
        """``exit`` to the process once every lane on it is done (``closer`` reads its
        last reports); whether it was sent now."""
        if self.closing or not set(self.queues) <= self.exited:
            return False
        self.closing = True
        self.closer = closer
        host.send({"type": "exit"})
        return True


class LaneHost:
    """One lane's view of its worker process: what the orchestrator's loop for that lane
    uses of a :class:`WorkerHost`."""

    def __init__(
        self,
        index: int,
        shared: SharedWorker,
        host: WorkerHost,
        queue: asyncio.Queue[Report | None],
    ) -> None:
        self.index = index
        self.shared = shared
        self.host = host
        self.queue = queue
        self.done = False

    @property
    def pid(self) -> int:
        return self.host.pid

    @property
    def alive(self) -> bool:
        return self.host.alive

    async def read(self) -> Report | None:
        """Its next report; None once the process ended (or this lane's view of it)."""
        if self.done:
            return None
        report = await self.queue.get()
        if report is None:
            self.done = True
        return report

    async def first_report(self) -> Report | None:
        """The process's first report (``ready`` or ``fatal``), or None: it did not start."""
        return await self.read()

    def send(self, order: Mapping[str, object]) -> None:
        """An order of this lane: a run order names it; ``exit`` waits for the others."""
        kind = order.get("type")
        if kind == "exit":
            self.shared.exit(self.index, self.host)
        elif kind == "run":
            self.host.send({**order, "lane": self.index})
        else:
            self.host.send(order)

    async def reap(self) -> None:
        await self.shared.leave(self.index, self.host)

    def kill(self) -> None:
        self.host.kill()

    def send_signal(self, sig: int) -> None:
        self.host.send_signal(sig)
