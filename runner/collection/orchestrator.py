"""Running a collection with N workers, as Playwright Test does.

The orchestrator owns the collection's run directory (``kind: "collection"``, the four
``collection-run:*`` events), the webServer (started once for every scenario), the
schedule, ``--bail`` and signals. Workers are lanes of worker processes
(:mod:`runner.workers.lanes`, ``--lanes`` to a process); each lane runs scenarios one
after another in fresh contexts of its process's one browser
(:mod:`runner.workers.worker`); their reports are plain JSON lines. A process that dies
costs only the current scenario of each of its lanes (``interrupted``): a new process
takes its place and the collection goes on.

A signal aborts everything: each worker aborts its scenario (whose run directory it
ends itself), then the webServer is stopped. A second signal more than a second
later forces the stop: the workers are killed, and the orchestrator ends their
scenarios' run directories in their place (``run:finished`` ``aborted`` and a final
runtime.json), kills the webServer's process group and exits, so that no directory
is left looking alive and no process outlives the collection.

A failed scenario is retried (``retries``) by sending it to a worker again: a fresh
context and a new run directory, linked to the first attempt by its manifest
(:func:`runner.store.retries.mark_attempt`). Only a scenario that failed every attempt
counts for ``--bail`` and fails the collection; one that passed on a retry is flaky.

A collection started by ``unotest mcp`` without ``detach`` watches that server (its
parent, :class:`runner.processes.OwnerWatch`) and aborts itself, as on SIGTERM,
when the server is gone.

A collection's ``setup:`` scenarios (Playwright's setup project) run first, one after
another on the first worker ready, while the other workers start and wait: none of
them is sent anything before every setup scenario has passed (the storage state a
setup scenario saves is read when each later context is made). A setup scenario is
retried as any other (``retries``, as Playwright retries its setup tests); one that
fails every attempt skips every scenario not run yet, each reported ``skipped`` with
``skipped: setup <name> failed``, and the collection fails. The collection's settings
(its browser context's keys, ``CollectionUseJSON``) go with every run order, and a
setup scenario's order says it is one (no ``storageState`` applies to it).

With ``wsEndpoint`` the workers' browsers come from Playwright servers, the pool of
:mod:`runner.workers.pool`: each new worker goes to the endpoint with the most free
capacity. An endpoint that refuses a worker, or drops a scenario's connection and then
refuses the worker's, is down: said once (``on_endpoint``, and a
``collection-run:endpoint-down`` line of ours), its workers' queued runs go back to
the queue, and a scenario it cost runs again on another endpoint as an
infrastructure retry (``infraRetryOf`` in the new run's manifest, ``infraRetry`` on the
lost run's ``scenario-finished``, :class:`InfraRetry` on the outcome): no ``--retries``
attempt, no failure, no flaky pass. A down endpoint is tried again after a back-off.
When every endpoint is down the collection stops (:class:`BrowserPoolDown`), keeping
every finished run, its scenarios not run reported skipped.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TextIO, cast

from runner import events
from runner.collection.prelaunch import Prelaunched, worker_env
from runner.errors import BrowserPoolDown, UnotestError, WebServerCancelled, WebServerError
from runner.events import RunError
from runner.processes import OWNER_POLL_SECONDS, OwnerWatch, read_proc_stat
from runner.project.collection_file import CollectionUseJSON
from runner.project.config import Config, WebServerConfig
from runner.project.root import Project
from runner.project.secrets import project_masker
from runner.protocol import FinishedOutcome, JSONObject, ScenarioOutcomeKind
from runner.run.result import RunResult
from runner.run.signals import RunStopper, install_signal_handlers
from runner.store.retries import Attempt, mark_attempt, mark_infra_retry, retryable
from runner.store.rundir import RunDirectory, capture_output_into, end_abandoned_run
from runner.webserver.server import WebServer
from runner.workers import messages
from runner.workers.host import REAP_WAIT_S, WorkerHost
from runner.workers.lanes import LaneHost, SharedWorker, lanes_per_process
from runner.workers.pool import ENDPOINT_ENV, MAX_INFRA_RETRIES, BrowserPool, short_reason

__all__ = [
    "CollectionResult",
    "CollectionRun",
    "InfraRetry",
    "ScenarioOutcome",
    "setup_failed_note",
]

KILLED_WORKER_WAIT_S = 5.0
POOL_POLL_S = 0.25
"""How often a worker with no endpoint to go to looks again (a place freed, a down
endpoint's back-off over)."""
NO_ENDPOINT_LEFT = "not run: no browser endpoint was left"


@dataclass(frozen=True)
class InfraRetry:
    """A run lost with its browser endpoint (the scenario ran again elsewhere)."""

    run_id: str | None
    endpoint: str
    reason: str

    def to_json(self) -> dict[str, object]:
        return {"run_id": self.run_id, "browser_endpoint": self.endpoint, "reason": self.reason}


def setup_failed_note(setup: str) -> str:
    """What a scenario skipped because the setup scenario ``setup`` failed is reported
    with, in the console, the JSON report and JUnit alike."""
    return f"skipped: setup {setup} failed"


@dataclass
class ScenarioOutcome:
    scenario: str
    outcome: ScenarioOutcomeKind
    worker: int | None = None
    run_id: str | None = None
    run_dir: str | None = None
    duration_ms: int = 0
    steps: int = 0
    error: RunError | None = None
    bundle_path: str | None = None
    note: str | None = None
    retries: list[Attempt] = field(default_factory=list)
    """The failed attempts before this one, in order (empty: this was the first)."""
    endpoint: str | None = None
    """The browser endpoint it ran on (``wsEndpoint``, shown without credentials)."""
    infra_retries: list[InfraRetry] = field(default_factory=list)
    """The runs of it lost with their browser endpoint before this one (not attempts)."""

    @property
    def flaky(self) -> bool:
        """Passed after at least one failed attempt."""
        return self.outcome == "completed" and bool(self.retries)

    def attempt(self) -> Attempt:
        """This outcome as the attempt it was (numbered after the failed ones)."""
        error: Mapping[str, object] = self.error or {}
        message = error.get("error") or (self.note if self.outcome != "completed" else None)
        return Attempt(
            len(self.retries) + 1,
            self.run_id,
            self.outcome,
            self.duration_ms,
            str(message) if message is not None else None,
            str(error["errorName"]) if error.get("errorName") else None,
        )

    @classmethod
    def from_worker(cls, name: str, worker: int, message: JSONObject) -> ScenarioOutcome:
        """A worker's ``finished`` report: a :class:`RunResult`, or (when the run could not
        give one) the run id it had and the error."""
        data = message.get("result")
        run_id = message.get("runId")
        if not isinstance(run_id, str):
            run_id = None
        if not isinstance(data, dict):
            # the worker built it with events.run_error (messages.UnfinishedReport)
            error = cast(RunError | None, message.get("error"))
            return cls(name, "failed", worker, run_id, error=error)
        try:
            result = RunResult.from_json(data)
        except ValueError as err:
            error = events.run_error(f"the worker's report is unreadable: {err}", "Error")
            return cls(name, "failed", worker, run_id, error=error)
        return cls(
            name,
            result.outcome,
            worker,
            result.run_id,
            result.run_dir,
            result.duration_ms,
            result.steps,
            result.error,
            result.bundle_path,
        )


@dataclass
class CollectionResult:
    run_id: str
    run_dir: str
    collection: str
    outcome: FinishedOutcome
    duration_ms: int
    scenarios: list[ScenarioOutcome]
    signal: str | None = None
    error: UnotestError | None = None
    """What stopped the collection before any scenario could run (its webServer did not
    start): the run directory and the reports are whole, then the caller raises it."""
    teardown_errors: list[str] = field(default_factory=list)
    """The workers' ``after_all`` failures (the collection failed on them)."""


@dataclass
class _Sent:
    """A run order sent to a worker and not finished yet."""

    name: str
    order_id: str
    cancelled: bool = False
    """Aborted by its id (``--bail``, a signal): if it had not started, it never will."""


@dataclass
class _WorkerProcess:
    """A worker's host and what the schedule knows of it."""

    host: LaneHost
    """Its lane of a worker process (the process may hold other lanes)."""
    endpoint: int | None = None
    """The browser endpoint its browser comes from (None: launched here)."""
    lost: str | None = None
    """Why its endpoint went down under it: it ends."""
    current: str | None = None
    run_id: str | None = None
    started_at: float = 0.0
    sent: deque[_Sent] = field(default_factory=deque)
    """Its run orders not finished yet, oldest first: the first is ``current``; the one
    behind it waits in the worker's queue, sent ahead so the worker starts it the moment
    the current one ends (not after its report's round trip through this process)."""


@dataclass
class CollectionRun:
    project: Project
    name: str
    scenarios: list[str]
    config: Config
    workers: int = 1
    bail: bool = False
    headed: bool = False
    out: TextIO = sys.stdout
    on_event: Callable[[str, ScenarioOutcome], None] = lambda kind, outcome: None
    skipped: list[str] = field(default_factory=list)
    none_found: bool = False
    """Every scenario the collection lists is missing (before any shard): it fails."""
    # Listed scenarios that do not load (parse or check errors): never run, they still
    # fail the collection, in its run directory as in the exit code.
    broken: list[str] = field(default_factory=list)
    retries: int = 0
    """How many more times a failed scenario runs (0: never again)."""
    order: list[str] | None = None
    """The order to start the scenarios in (longest first, from history); reports keep
    the collection's own order."""
    on_start: Callable[[Path], None] | None = None
    """Called once the collection's run directory exists (the live event file)."""
    on_output: Callable[[str, str], None] | None = None
    """Called with a scenario's name and each line it logs (the ``output`` events)."""
    on_web_server: Callable[[float, str | None], None] | None = None
    """Called with the milliseconds the webServer took to be ready, and the error when it
    did not start (the ``before_all`` hook)."""
    prelaunched: Prelaunched | None = None
    """Workers started before the project was loaded (:mod:`runner.collection.prelaunch`):
    adopted when they are the ones this run wants, stopped otherwise."""
    setup: list[str] = field(default_factory=list)
    teardown_errors: list[str] = field(default_factory=list)
    """The workers' ``after_all`` failures: each fails the collection."""
    """The setup scenarios (the first of ``scenarios``; ``order`` holds the others):
    run first, in this order, on one worker, before any other scenario is sent."""
    use: CollectionUseJSON | None = None
    """The collection's settings, sent with every run order (None: the config's)."""
    on_endpoint: Callable[[str, str, str | None], None] | None = None
    """Told ``("down", endpoint, why)`` once when a browser endpoint goes down, and
    ``("back", endpoint, None)`` when a worker connects to it again."""
    lanes: int | None = None
    """Lanes to a worker process (``--lanes``; None: the default,
    :func:`runner.workers.lanes.lanes_per_process`)."""

    def __post_init__(self) -> None:
        self.stopper = RunStopper(self._stop_cleanly, self._force_stop, can_force=True)
        self.bailing = False
        first = set(self.setup)
        self.pending: list[str] = [
            name
            for name in (self.order if self.order is not None else self.scenarios)
            if name not in first
        ]
        self.setup_pending: list[str] = list(self.setup)
        """Setup scenarios not run yet (a retry comes back here, first)."""
        self.setup_done = asyncio.Event()
        """Set once every setup scenario passed, or one failed: the others may start."""
        if not self.setup:
            self.setup_done.set()
        self.setup_worker: int | None = None
        """The worker that runs the setup scenarios (the first one ready)."""
        self.failed_attempts: dict[str, list[Attempt]] = {}
        self.awaiting_retry: dict[str, ScenarioOutcome] = {}
        """The failed attempt of each scenario whose retry is queued: what it is reported
        as when the collection stops (``--bail``, a signal) before the retry runs."""
        self.results: dict[str, ScenarioOutcome] = {}
        self.processes: dict[int, _WorkerProcess] = {}
        """By lane: the workers of the schedule (a process may hold several)."""
        self.shared: dict[int, SharedWorker] = {}
        """The worker processes by their index, each with its lanes."""
        self.per_process = 1
        """Lanes to a worker process (set when the run starts)."""
        self.cancel = threading.Event()
        self.web_server: WebServer | None = None
        self.rundir: RunDirectory | None = None
        """The collection's run directory, made by :meth:`run`."""
        self.order_ids = itertools.count(1)
        self.workers_given_up = 0
        """Workers that could not start (twice): no longer counted among those that
        must all run something before runs are sent ahead."""
        self.start_errors_said: set[str] = set()
        """Why workers did not start, each said once: every worker tries twice, and a
        refused NODE_OPTIONS or a broken install says the same thing every time."""
        self.pool = BrowserPool((), 0)
        """The browser endpoints (made for the worker count when the run starts)."""
        self.infra: dict[str, list[InfraRetry]] = {}
        """Each scenario's runs lost with their browser endpoint, in order."""
        self.infra_of: dict[str, str] = {}
        """The run each infrastructure retry queued runs again (its manifest says so)."""
        self.pool_down: BrowserPoolDown | None = None
        """Every endpoint went down: the collection stops with it."""

    def run(self) -> CollectionResult:
        try:
            return asyncio.run(self._main())
        finally:
            if self.prelaunched is not None:
                self.prelaunched.stop()  # the ones not adopted (none, when all went well)

    @property
    def signal_name(self) -> str | None:
        return self.stopper.signal_name

    # --- lifecycle ------------------------------------------------------------------

    async def _main(self) -> CollectionResult:
        started = time.monotonic()
        # First: from the moment its directory exists, a Ctrl-C aborts the collection
        # (which then ends that directory), never a bare KeyboardInterrupt.
        install_signal_handlers(asyncio.get_running_loop(), self.stopper.request)
        rundir = RunDirectory.create(self.project.runs_dir, "collection", self.name)
        self.rundir = rundir
        if os.environ.get("UNOTEST_OUTPUT_TO_RUN_DIR") == "1":
            capture_output_into(rundir.path)
        rundir.start_heartbeat()
        if self.on_start is not None:
            self.on_start(rundir.path)
        rundir.append(events.collection_run_started(rundir.run_id, self.name, self.scenarios))
        owner = OwnerWatch.from_environ(os.environ)
        watch = asyncio.ensure_future(self._watch_owner(owner)) if owner is not None else None
        error: UnotestError | None = None
        try:
            await self._run_scenarios()
        except WebServerError as err:  # a cancelled start is the abort, ended below
            error = err
        finally:
            if watch is not None:
                watch.cancel()
        if error is None and self.pool_down is not None:
            error = self.pool_down
        for name in [*self.setup_pending, *self.pending]:
            if name in self.awaiting_retry:
                # It ran and failed; its retry never came: that attempt is its result.
                self._record(self.awaiting_retry.pop(name))
                continue
            # Not run because the site never came up: failed with why, as a scenario run
            # alone is (CI reading the JUnit must not see it as skipped, or green). Not
            # run for want of a browser: skipped (the exit code says the pool was down).
            if error is None or isinstance(error, BrowserPoolDown):
                note = "not started" if error is None else NO_ENDPOINT_LEFT
                self._record(ScenarioOutcome(name, "skipped", note=note))
                continue
            self._record(
                ScenarioOutcome(
                    name, "failed", error=events.run_error(str(error), "WebServerError")
                )
            )
        ordered = [self.results[name] for name in self.scenarios if name in self.results]
        outcome = self._outcome(ordered) if error is None else "failed"
        rundir.append(events.collection_run_finished(outcome))
        rundir.close()
        return CollectionResult(
            rundir.run_id,
            self.project.relative(rundir.path),
            self.name,
            outcome,
            int((time.monotonic() - started) * 1000),
            ordered,
            self.signal_name,
            error,
            self.teardown_errors,
        )

    async def _run_scenarios(self) -> None:
        """The webServer (once, for every scenario), then the workers until done."""
        web_server: WebServer | None = None
        # The setup scenarios run on one of them: they do not count.
        count = max(1, min(self.workers, len(self.scenarios) - len(self.setup)))
        self.pool = BrowserPool(self.config.endpoints, count)
        if self.pool.remote and self.pool.size < count:
            print(
                f"unotest: wsEndpoint's endpoints hold {self.pool.size} browser(s) at once: "
                f"{self.pool.size} of the {count} workers start",
                file=sys.stderr,
                flush=True,
            )
            count = self.pool.size
        self.per_process = lanes_per_process(self.lanes, self.pool.remote)
        early = self.prelaunched
        if early is not None and not early.wanted(count, self.per_process, self.headed):
            # Started for another number of workers (a listed scenario is missing or
            # broken): out of the way before the webServer and the real ones start.
            self.prelaunched = None
            await asyncio.to_thread(early.stop)
        try:
            if self.config.web_server is not None and self.scenarios:
                web_server = await self._start_web_server(self.config.web_server)
            if self.scenarios:
                await asyncio.gather(*(self._worker_loop(i, count) for i in range(count)))
        except WebServerCancelled:
            pass  # the abort: the collection ends as aborted
        finally:
            if web_server is not None:
                await asyncio.to_thread(web_server.stop)

    async def _start_web_server(self, config: WebServerConfig) -> WebServer:
        """Start (or reuse) the webServer, telling ``on_web_server`` how long it took
        and, when it did not start, why (the ``before_all`` hook's envelope)."""
        started = time.monotonic()
        try:
            web_server = await asyncio.to_thread(
                WebServer.from_config,
                config,
                mask=project_masker(self.project.root).mask,
                cancel=self.cancel,
            )
        except WebServerError as err:
            if self.on_web_server is not None and not isinstance(err, WebServerCancelled):
                self.on_web_server((time.monotonic() - started) * 1000, str(err))
            raise
        self.web_server = web_server
        if self.on_web_server is not None:
            self.on_web_server((time.monotonic() - started) * 1000, None)
        return web_server

    async def _watch_owner(self, owner: OwnerWatch) -> None:
        """The MCP session that started the collection closed: abort it as SIGTERM does."""
        while not owner.gone():
            await asyncio.sleep(OWNER_POLL_SECONDS)
        if not self.stopper.stopped:
            print(
                "unotest: the MCP session that started this collection has closed: aborting "
                "it (a run started with detach: true outlives its session)",
                file=sys.stderr,
                flush=True,
            )
            self.stopper.request("SIGTERM")

    def _outcome(self, ordered: list[ScenarioOutcome]) -> FinishedOutcome:
        if self.signal_name is not None:
            return "aborted"
        if self.broken or self.teardown_errors or any(r.outcome != "completed" for r in ordered):
            return "failed"
        if self.none_found:
            # Every listed scenario is missing: with nothing run, a typo in the
            # collection must not pass CI (Playwright Test fails "no tests found").
            return "failed"
        return "completed"

    @property
    def _dir(self) -> RunDirectory:
        assert self.rundir is not None, "the collection has not started"
        return self.rundir

    def _stop_cleanly(self, name: str) -> None:
        print(
            f"\n{name}: aborting the collection (again in a second to force it)",
            file=self.out,
            flush=True,
        )
        self.cancel.set()
        self._stop_everything()

    def _force_stop(self) -> None:
        """Stop now: kill the workers, end their scenarios' run directories for them,
        kill the webServer, end the collection's directory, exit."""
        print("stopping now", file=self.out, flush=True)
        workers = list(self.processes.values())
        for worker in workers:
            worker.host.kill()
        for worker in workers:
            # A killed worker cannot write any more only once it is dead: wait for that
            # (bounded) before writing into its run directory.
            _wait_dead(worker.host.pid, KILLED_WORKER_WAIT_S)
            if worker.current is not None and worker.run_id is not None:
                with contextlib.suppress(Exception):
                    self._dir.append(
                        events.collection_scenario_finished(
                            worker.run_id, worker.current, "aborted"
                        )
                    )
                self._end_abandoned_run(worker.run_id)
        web_server = self.web_server
        if web_server is not None and web_server.pid is not None:
            # Its own session (process group), so nothing else reaches it: without
            # this a webServer that takes its time over SIGTERM outlives us.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(web_server.pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            self._dir.append(events.collection_run_finished("aborted"))
            self._dir.close()
        os._exit(128 + signal.Signals[self.signal_name or "SIGINT"].value)  # as the shell says

    def _end_abandoned_run(self, run_id: str) -> None:
        """Best effort; never lets an error stop the caller."""
        with contextlib.suppress(Exception):
            end_abandoned_run(self.project.runs_dir / run_id)

    def _stop_everything(self) -> None:
        signalled: set[int] = set()
        for worker in self.processes.values():
            self._cancel_sent(worker)
            if worker.host.pid not in signalled:  # once per process, not per lane
                signalled.add(worker.host.pid)
                worker.host.send_signal(signal.SIGTERM)

    def _cancel_sent(self, worker: _WorkerProcess) -> None:
        """Abort every run order sent to ``worker`` and not finished yet: the running one
        stops, the queued one never starts."""
        for sent in worker.sent:
            if not sent.cancelled:
                sent.cancelled = True
                worker.host.send(messages.abort_order(sent.order_id))

    def _send_run(self, worker: _WorkerProcess, name: str) -> None:
        sent = _Sent(name, f"{worker.host.index}-{next(self.order_ids)}")
        worker.sent.append(sent)
        # With --bail, a worker that fails its last attempt must not start what is
        # queued behind it before this process has read the failure.
        final_attempt = len(self.failed_attempts.get(name, [])) >= self.retries
        order = messages.run_order(
            name,
            self._dir.run_id,
            sent.order_id,
            stop_on_failure=self.bail and final_attempt,
            use=self.use,
            setup=name in self.setup,
        )
        worker.host.send(order)

    def _requeue(self, name: str) -> None:
        """``name`` first in its queue again (a retry, or an order that never started)."""
        (self.setup_pending if name in self.setup else self.pending).insert(0, name)

    def _queued(self) -> bool:
        return bool(self.setup_pending or self.pending)

    @property
    def stopping(self) -> bool:
        return self.signal_name is not None or self.bailing or self.pool_down is not None

    # --- workers ----------------------------------------------------------------------

    async def _spawn(
        self, index: int, count: int, endpoint: int | None = None
    ) -> _WorkerProcess | None:
        """Worker ``index`` (a lane, on browser endpoint ``endpoint``), once its process
        says ``ready``; None when it did not start (an endpoint that refused it is then
        down). The lanes of one process share it: the first to come starts it."""
        number = index // self.per_process
        shared = self.shared.get(number)
        if shared is None or not shared.open:
            shared = SharedWorker(number, self._start_process(number, count, endpoint))
            self.shared[number] = shared
        try:
            host = await shared.attach(index)
        except OSError as err:
            if not self.stopping and str(err) not in self.start_errors_said:
                self.start_errors_said.add(str(err))
                print(f"unotest: worker {index}: {err}", file=sys.stderr, flush=True)
            return None
        worker = _WorkerProcess(host, endpoint)
        self.processes[index] = worker
        message = await host.first_report()
        said = (message or {}).get("endpoint")  # the endpoint it went to, or refused it
        kind = (message or {}).get("type")
        if kind == "fatal" and isinstance(said, int):
            await self._reap(worker)
            self._endpoint_down(said, str((message or {}).get("error")))
            return None
        if kind == "ready" and isinstance(said, int):
            # A worker started early chose its endpoint itself (by the same rule).
            worker.endpoint = said
            self.pool.attach(index, said)
            if self.pool.came_up(said) and self.on_endpoint is not None:
                self.on_endpoint("back", self.pool.shown(said), None)
        if message is None or message.get("type") != "ready":
            # A worker stopped by Ctrl-C while it starts is no error worth a line.
            if not self.stopping:
                error = str((message or {}).get("error", "the worker did not start"))
                if error not in self.start_errors_said:
                    self.start_errors_said.add(error)
                    print(f"unotest: worker {index}: {error}", file=sys.stderr, flush=True)
            await self._reap(worker)
            return None
        return worker

    async def _start_process(self, number: int, count: int, endpoint: int | None) -> WorkerHost:
        """Worker process ``number`` (its lanes from ``number`` × lanes on): the one
        started early for it, else a new one."""
        early = self.prelaunched.take(number) if self.prelaunched else None
        if early is not None:
            return await WorkerHost.adopt(number, early)
        env = worker_env(number * self.per_process, count, self.headed)
        if endpoint is not None:
            env[ENDPOINT_ENV] = str(endpoint)
        return await WorkerHost.spawn(number, self.project.root, env)

    async def _reap(self, worker: _WorkerProcess) -> None:
        await worker.host.reap()
        if self.processes.get(worker.host.index) is worker:
            self.processes.pop(worker.host.index, None)
            self.pool.detach(worker.host.index)

    async def _worker_loop(self, index: int, count: int) -> None:
        try:
            await self._work(index, count)
        finally:
            self._leave_setup(index)

    async def _work(self, index: int, count: int) -> None:
        worker: _WorkerProcess | None = None
        failures_to_start = 0
        while (worker is not None and worker.sent) or (self._queued() and not self.stopping):
            if worker is None:
                endpoint = self.pool.choose() if self.pool.remote else None
                if self.pool.remote:
                    if endpoint is None:
                        # Every endpoint full or resting: look again in a moment (when a
                        # resting one's back-off ends sooner, then).
                        await asyncio.sleep(min(POOL_POLL_S, self.pool.wait_s() or POOL_POLL_S))
                        continue
                    self.pool.attach(index, endpoint)
                worker = await self._spawn(index, count, endpoint)
                if worker is None:
                    if endpoint is not None and self.pool.endpoints[endpoint].down:
                        continue  # its endpoint refused it: another one, or later
                    failures_to_start += 1
                    if failures_to_start >= 2:
                        self.workers_given_up += 1
                        return
                    continue
                # Starting took time: the other workers may have emptied the queue, or
                # --bail / a signal may have stopped the collection meanwhile.
                continue
            if not await self._send_next(worker, count):
                continue  # another worker ran the setup scenarios meanwhile: look again
            sent = worker.sent[0]
            worker.current = sent.name
            worker.run_id = None
            worker.started_at = time.monotonic()
            finished = await self._follow(worker, sent)
            worker.sent.popleft()
            worker.current = None
            if worker.lost is not None:
                await self._lose(worker)
                worker = None
                continue
            if not finished:
                # The worker died mid-scenario: it costs that scenario only; the ones
                # queued behind it never started and go back to the queue.
                for queued in reversed(worker.sent):
                    self._requeue(queued.name)
                worker.sent.clear()
                await self._reap(worker)
                if self.signal_name is not None and worker.run_id is not None:
                    # Killed while we were aborting (it did not stop in time): the run
                    # is "aborted", as the collection reports it, not left to look
                    # "interrupted" for want of the run:finished it could not write.
                    self._end_abandoned_run(worker.run_id)
                worker = None
        if worker is not None:
            worker.host.send(messages.exit_order())
            await self._ended(worker)
            await self._reap(worker)

    async def _ended(self, worker: _WorkerProcess) -> None:
        """What a worker told as it ended (its ``after_all`` hooks' failure), read until
        it closes its end, for as long as it is given to end."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(REAP_WAIT_S):
                while (report := await worker.host.read()) is not None:
                    if report.get("type") == "teardown":
                        self.teardown_errors.append(str(report.get("error")))

    async def _send_next(self, worker: _WorkerProcess, count: int) -> bool:
        """Send ``worker`` its next run (and one ahead, when it may); a setup scenario
        when some are left, claiming the setup for this worker. False when another
        worker runs the setup: this one waited for it to end instead."""
        if self.stopping:
            self._cancel_sent(worker)  # what is sent ahead must not start now
            return True
        index = worker.host.index
        if not worker.sent and not self.setup_done.is_set():
            if self.setup_worker not in (None, index):
                await self.setup_done.wait()
                return False
            self.setup_worker = index
            self._send_run(worker, self.setup_pending.pop(0))
            return True  # never one ahead: the next waits for this one's outcome
        if not worker.sent:
            self._send_run(worker, self.pending.pop(0))
        if len(worker.sent) < 2 and self.setup_done.is_set() and self._may_send_ahead(count):
            self._send_run(worker, self.pending.pop(0))
        return True

    def _leave_setup(self, index: int) -> None:
        """The setup's worker stopped for good (it could not start again, or the
        collection stops): a setup scenario it could not run fails, so that the
        workers waiting for the setup go on (to skip the rest, or to end)."""
        if self.setup_worker != index or self.setup_done.is_set():
            return
        self.setup_worker = None
        if self.setup_pending and not self.stopping:
            name = self.setup_pending.pop(0)
            error = events.run_error("the worker running the setup scenarios stopped", "Error")
            self._record(ScenarioOutcome(name, "failed", error=error))
            self._setup_failed(name)
        self.setup_done.set()

    def _setup_ended(self, result: ScenarioOutcome) -> None:
        """A setup scenario's last attempt: the next one runs, or the others start; a
        failure skips everything not run yet (an abort leaves it to be reported as not
        started)."""
        if result.outcome != "completed":
            if self.signal_name is None:
                self._setup_failed(result.scenario)
            self.setup_done.set()
        elif not self.setup_pending:
            self.setup_done.set()

    def _setup_failed(self, name: str) -> None:
        note = setup_failed_note(name)
        for other in [*self.setup_pending, *self.pending]:
            self._record(ScenarioOutcome(other, "skipped", note=note))
        self.setup_pending.clear()
        self.pending.clear()

    def _may_send_ahead(self, count: int) -> bool:
        """Whether a worker may be given its next run before its current one ends: only
        once every worker runs one (the first ``count`` scenarios start side by side, as
        listed) and while every other worker still has one to take after it (the last
        few go to whichever worker is free first)."""
        working = count - self.workers_given_up
        busy = sum(1 for worker in self.processes.values() if worker.sent)
        return busy >= working and len(self.pending) >= working

    async def _follow(self, worker: _WorkerProcess, sent: _Sent) -> bool:
        """The worker's reports on ``sent`` until it finished (True) or the worker died
        (False). A cancelled order that never started goes back to the queue (it is
        reported as not started if nothing takes it)."""
        name = sent.name
        while True:
            message = await worker.host.read()
            if message is None:
                if sent.cancelled and worker.run_id is None:
                    self._requeue(name)
                else:
                    self._finish(self._died(worker, name))
                return False
            kind = message.get("type")
            run_id = message.get("runId")
            if kind == "started" and isinstance(run_id, str):
                worker.run_id = run_id
                self._link_retry(name, run_id)
                endpoint = self._shown(worker)
                # The worker as a person counts them (1-based); the index is 0-based.
                started = events.collection_scenario_started(
                    run_id, name, worker.host.index, endpoint
                )
                self._dir.append(started)
                self.on_event(
                    "started",
                    ScenarioOutcome(
                        name, "completed", worker.host.index, worker.run_id, endpoint=endpoint
                    ),
                )
            elif kind == "finished":
                if self.stopping and worker.run_id is None and "result" not in message:
                    # Not started: cancelled, or held back by a failure under --bail.
                    self._requeue(name)
                    return True
                result = ScenarioOutcome.from_worker(name, worker.host.index, message)
                result.endpoint = self._shown(worker)
                lost = message.get("browserLost")
                if isinstance(lost, str) and worker.endpoint is not None:
                    worker.lost = lost  # the worker ends after this report
                    self._endpoint_down(worker.endpoint, lost)
                    if result.outcome != "completed" and self._infra_retry(result, lost):
                        return True
                self._finish(result)
                return True
            elif kind == "fatal" and isinstance(message.get("endpoint"), int):
                # Its browser went between two runs and its endpoint refused it since:
                # this run never started.
                worker.lost = str(message.get("error"))
                if worker.endpoint is not None:
                    self._endpoint_down(worker.endpoint, worker.lost)
                if worker.run_id is None:
                    self._requeue(name)
                else:
                    self._finish(self._died(worker, name))
                return True
            elif kind == "output" and self.on_output is not None:
                text = message.get("text")
                if isinstance(text, str):
                    self.on_output(name, text)

    def _died(self, worker: _WorkerProcess, name: str) -> ScenarioOutcome:
        """A worker gone mid-scenario: ``interrupted``, or ``aborted`` while aborting."""
        duration = int((time.monotonic() - worker.started_at) * 1000)
        outcome: ScenarioOutcomeKind = "aborted" if self.signal_name else "interrupted"
        # Its run directory is what a CI user opens first (the reports name it).
        run_dir = (
            self.project.relative(self.project.runs_dir / worker.run_id) if worker.run_id else None
        )
        return ScenarioOutcome(
            name,
            outcome,
            worker.host.index,
            worker.run_id,
            run_dir,
            duration_ms=duration,
            note="the worker died" if outcome == "interrupted" else None,
        )

    def _shown(self, worker: _WorkerProcess) -> str | None:
        return self.pool.shown(worker.endpoint) if worker.endpoint is not None else None

    def _infra_retry(self, result: ScenarioOutcome, reason: str) -> bool:
        """``result``'s run was lost with its browser endpoint: the scenario runs again,
        first in the queue, neither an attempt nor a failure (True); past
        :data:`MAX_INFRA_RETRIES`, or while aborting, its outcome stands (False). With no
        endpoint left it is reported ``interrupted``, as a run that never ended."""
        name = result.scenario
        lost = self.infra.setdefault(name, [])
        if len(lost) >= MAX_INFRA_RETRIES or self.signal_name is not None or self.bailing:
            return False
        lost.append(InfraRetry(result.run_id, result.endpoint or "", short_reason(reason)))
        if result.run_id is not None and result.outcome != "skipped":
            self._dir.append(
                events.collection_scenario_finished(
                    result.run_id, name, result.outcome, infra_retry=True
                )
            )
            self.infra_of[name] = result.run_id
        # What it is reported as if no endpoint is left to run it again.
        waiting = replace(
            result,
            outcome="interrupted",
            error=None,
            note=f"its browser endpoint {result.endpoint} went down",
            retries=list(self.failed_attempts.get(name, [])),
            infra_retries=list(lost[:-1]),  # this one is the lost run itself
        )
        self.awaiting_retry[name] = waiting
        self._requeue(name)
        self.on_event("infra-retry", result)
        return True

    async def _lose(self, worker: _WorkerProcess) -> None:
        """``worker``'s endpoint went down under it (said by :meth:`_follow`): the runs
        queued on the worker go back to the queue, and the worker (ending) is reaped."""
        for queued in reversed(worker.sent):
            self._requeue(queued.name)
        worker.sent.clear()
        await self._reap(worker)

    def _endpoint_down(self, endpoint: int, reason: str) -> None:
        """Said once each time it goes down; the collection stops when none is left."""
        backoff = self.pool.went_down(endpoint, reason)
        if backoff is not None:
            shown, reason = self.pool.shown(endpoint), self.pool.endpoints[endpoint].reason
            self._dir.append(events.collection_endpoint_down(shown, reason, int(backoff * 1000)))
            if self.on_endpoint is not None:
                self.on_endpoint("down", shown, reason)
            else:
                print(f"unotest: browser endpoint {shown} is down: {reason}", file=sys.stderr)
        if self.pool.exhausted and self.pool_down is None and not self.stopping:
            self.pool_down = BrowserPoolDown(
                f"every browser endpoint of wsEndpoint is down ({self.pool.down_list()}): "
                "the collection stopped, keeping every run that finished"
            )
            for other in self.processes.values():
                self._cancel_sent(other)

    def _link_retry(self, name: str, run_id: str) -> None:
        """A retry's manifest names its attempt and the first attempt's run, and an
        infrastructure retry's the run it replaces."""
        again = self.infra_of.pop(name, None)
        if again is not None:
            mark_infra_retry(self.project.runs_dir / run_id, again)
        failed = self.failed_attempts.get(name)
        if failed:
            first = next((a.run_id for a in failed if a.run_id is not None), None)
            if first is not None:
                mark_attempt(self.project.runs_dir / run_id, len(failed) + 1, first)

    def _finish(self, result: ScenarioOutcome) -> None:
        outcome = result.outcome
        if result.run_id is not None and outcome != "skipped":
            self._dir.append(
                events.collection_scenario_finished(result.run_id, result.scenario, outcome)
            )
        failed = self.failed_attempts.setdefault(result.scenario, [])
        result.retries = list(failed)
        result.infra_retries = list(self.infra.get(result.scenario, []))
        self.awaiting_retry.pop(result.scenario, None)
        if retryable(outcome) and len(failed) < self.retries and not self.stopping:
            # Another attempt, first in the queue: the next worker free runs it again.
            failed.append(result.attempt())
            self.awaiting_retry[result.scenario] = result
            self._requeue(result.scenario)
            self.on_event("retry", result)
            return
        self._record(result)
        if result.scenario in self.setup and not self.setup_done.is_set():
            self._setup_ended(result)
        if self.bail and outcome not in ("completed",) and not self.bailing:
            self.bailing = True
            for other in self.processes.values():
                self._cancel_sent(other)

    def _record(self, result: ScenarioOutcome) -> None:
        self.results[result.scenario] = result
        self.on_event("finished", result)


def _wait_dead(pid: int, timeout: float) -> bool:
    """Until ``pid`` is a zombie or gone (it can no longer write anything)."""
    deadline = time.monotonic() + timeout
    while True:
        stat = read_proc_stat(pid)
        if stat is None or stat[0] in ("Z", "X"):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
