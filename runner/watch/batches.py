"""Batches: saves gathered by a debounce, then run on the warm workers, cancellable.

A burst of saves (an editor writing several files, a formatter after it) is one
batch: the debounce closes it when no change came for the idle window (``trigger:
"idle"``), or when the maximum window since its first change is over, however busy
the disk still is (``"maxWindow"``). A key or a client closes one at once
(``"manual"``). A batch runs its scenarios on the pool's workers at once; a newer
batch cancels it: the scenarios not started yet end ``cancelled`` without a run,
the running ones are aborted (their run directories end ``aborted``, their status is
``cancelled``) and the workers and their browsers stay.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from runner.watch.daemon_events import Event, RunStatus, Trigger, batch_finished, batch_status
from runner.watch.daemon_events import run_finished as run_finished_event
from runner.watch.daemon_events import run_started as run_started_event
from runner.watch.pool import PoolOutcome
from runner.watch.results import ScenarioJob, make_test_run_result, status_of
from runner.watch.selection import Change

__all__ = ["Batch", "Debouncer"]


class Debouncer:
    """Changes in, ``fire(changes, trigger)`` out once the idle or maximum window closes."""

    def __init__(
        self,
        idle_s: float,
        max_s: float,
        fire: Callable[[list[Change], Trigger], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.idle_s = idle_s
        self.max_s = max_s
        self.fire = fire
        self.clock = clock
        self.pending: dict[str, Change] = {}
        self.first = 0.0
        self.last = 0.0
        self.timer: asyncio.Task[None] | None = None

    def add(self, changes: list[Change]) -> None:
        now = self.clock()
        if not self.pending:
            self.first = now
        self.last = now
        for change in changes:
            self.pending.pop(change.rel, None)  # the latest kind, in the latest order
            self.pending[change.rel] = change
        if self.timer is None or self.timer.done():
            self.timer = asyncio.ensure_future(self._wait())

    async def _wait(self) -> None:
        while True:
            idle_at = self.last + self.idle_s
            max_at = self.first + self.max_s
            due = min(idle_at, max_at)
            now = self.clock()
            if now >= due:
                break
            await asyncio.sleep(due - now)
        trigger: Trigger = "idle" if idle_at <= max_at else "maxWindow"
        changes = list(self.pending.values())
        self.pending = {}
        self.fire(changes, trigger)

    def cancel(self) -> None:
        if self.timer is not None:
            self.timer.cancel()


RunOnPool = Callable[
    [str, Callable[[str], None], Callable[[], bool]], Awaitable[PoolOutcome | None]
]


@dataclass
class Batch:
    batch_id: str
    jobs: list[ScenarioJob]
    blocked: dict[str, str]
    """Scenario → why it cannot run (a problem in its files): ``errored`` without a run."""
    publish: Callable[[Event], Event]
    cancelled: bool = False
    cancel_reason: str = ""
    results: list[dict[str, Any]] = field(default_factory=list)
    task: asyncio.Task[None] | None = None

    def start(self, run_on_pool: RunOnPool) -> None:
        self.task = asyncio.ensure_future(self._run(run_on_pool))

    def cancel(self, why: str = "a newer batch started before this scenario ran") -> None:
        """No scenario of the batch starts from now on; ``why`` is what those that never
        ran are reported with."""
        self.cancelled = True
        self.cancel_reason = why

    async def _run(self, run_on_pool: RunOnPool) -> None:
        await asyncio.gather(*(self._one(job, run_on_pool) for job in self.jobs))
        statuses: list[RunStatus] = [r["status"] for r in self.results]
        self.publish(batch_finished(self.batch_id, batch_status(statuses), self.results))

    async def _one(self, job: ScenarioJob, run_on_pool: RunOnPool) -> None:
        problem = self.blocked.get(job.name)
        if problem is not None:
            self._finished(job, make_test_run_result(job, "errored", message=problem))
            return
        if self.cancelled:
            self._finished(job, self._never_ran(job))
            return

        def started(run_id: str) -> None:
            self.publish(
                run_started_event(self.batch_id, run_id, job.name, job.test_file, job.command)
            )

        outcome = await run_on_pool(job.name, started, lambda: not self.cancelled)
        if outcome is None:
            self._finished(job, self._never_ran(job))
            return
        status, result, message = status_of(outcome.report, self.cancelled, outcome.worker)
        record = make_test_run_result(
            job, status, result=result, message=message or None, run_id=outcome.run_id
        )
        self._finished(job, record)

    def _never_ran(self, job: ScenarioJob) -> dict[str, Any]:
        return make_test_run_result(job, "cancelled", message=self.cancel_reason)

    def _finished(self, job: ScenarioJob, record: dict[str, Any]) -> None:
        self.results.append(record)
        self.publish(run_finished_event(self.batch_id, record["runId"], record))
