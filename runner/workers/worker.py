"""A collection worker: one browser, many scenarios, each in a fresh browser context.

Started by the orchestrator (:mod:`runner.collection.orchestrator`) as
``python -m runner.workers.main`` (which starts Playwright's driver before importing this module).
It speaks JSON lines: orders on stdin (``run``, ``abort``, ``exit``, and ``reload`` from
the watch daemon, which keeps workers warm across saves), reports on stdout (``ready``,
``started``, ``finished``, ``fatal``, ``relaunched`` when a browser that disconnected
was replaced), plain serialisable data both ways; ``finished`` carries the run's
:class:`runner.run.result.RunResult` as its JSON. Orders queue: a collection sends a
worker its next run while the current one runs, so that it starts at once; a queued
run that was aborted (``abort`` with its ``orderId``), or that follows a failed run
ordered with ``stopOnFailure``, is reported as aborted before it started.

A worker has one or more *lanes* (a run order's ``lane`` says whose it is; an order
without one is for the worker's own index, as ``unotest watch`` sends them): each lane
runs its orders one after another, and the lanes run side
by side, each scenario in its own context of the one browser, driven through the one
driver, as Playwright Test drives a worker's tests but several at once. That is the
cost a collection saves per lane: a Python process, a driver and a browser to start,
and their memory. Everything else is the lane's own, as it would be a worker's: a
scenario sees its lane as ``UNOTEST_WORKER_INDEX``, and each lane has its hooks' scopes
(below), so that what a ``before_all`` set up serves one scenario at a time, as in
Playwright.
It ignores SIGINT and SIGHUP (the orchestrator decides what a Ctrl-C or a closed
terminal means, and tells it; both reach every process of the group), aborts its
current scenario on SIGTERM or an ``abort`` order, and exits when its stdin closes, so a
worker never outlives the orchestrator: killed with ``kill -9``, the orchestrator
leaves each worker an end-of-file, and the worker aborts its scenario (whose run
directory still ends with ``run:finished``), closes its browser and exits, quietly
(a report to a reader that is gone is dropped, not a ``BrokenPipeError`` traceback).

The hooks' scopes live as long as the lane (its :class:`runner.run.scenario_thread.ScopeLedger`):
a scope's ``before_all`` runs in the first of its scenarios the lane runs; a scenario
of a scope whose ``before_all`` failed in the lane is reported failed (``before_all
failed: …``) without running; each lane's ``after_all`` hooks run when the worker ends
(``exit``, its stdin closed, SIGTERM) or reloads, in a run of their own named
``after_all`` (no report: the collection has its results, and may be gone), a failure
said on stderr.

With ``wsEndpoint`` the browser comes from a Playwright server of the pool
(:mod:`runner.workers.pool`: the one ``UNOTEST_BROWSER_ENDPOINT`` names, else its place
by its index), named in ``ready`` and in each run's manifest (``browserEndpoint``). A
server that refuses the worker's connection ends it with ``fatal`` naming the endpoint.
When a run does not pass and the browser's connection is gone (a round trip to the
server tells), the worker connects again: a server that takes it had only lost its
browser (the run failed, as with a local browser that crashed); one that refuses it is
down, and the run's ``finished`` report says so (``browserLost``) before the worker
ends: the orchestrator runs that scenario again elsewhere.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import threading
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TextIO

from playwright.async_api import Browser, Playwright, async_playwright

from dsl.scenario import ScenarioFile
from runner import events
from runner.browser import node_cache
from runner.browser.early_driver import EarlyDriver
from runner.browser.launch import launch_browser, started_driver
from runner.errors import BrowserConnectError, ConfigError
from runner.project.config import CollectionUse, Config, load_config, with_collection
from runner.project.emulation import read_storage_state
from runner.project.index import Project, ProjectIndex
from runner.project.secrets import RunEnvironment, SecretMasker
from runner.protocol import JSONObject
from runner.run.options import RunOptions, ScenarioInputs
from runner.run.result import RunResult, error_location
from runner.run.scenario_thread import TEARDOWN_NAME, ScopeLedger, hook_scopes
from runner.run.session import ScenarioRun, quiet_driver_loss
from runner.store.event_log import line_stream
from runner.workers import messages
from runner.workers.orders import OrderPipe
from runner.workers.pool import worker_endpoint

__all__ = ["finished_report", "main", "run_config", "unfinished_report"]

_BROWSER_LOST = "browser-lost"
"""An order the worker gives itself when its browser disconnects (never sent by a
reader: a browser that is still connected makes it a no-op)."""
PROBE_TIMEOUT_S = 10.0
"""How long the round trip that tells a live server from a dropped one may take."""


@dataclass
class _Lane:
    """One lane's orders, run one after another by its task."""

    index: int
    orders: asyncio.Queue[JSONObject | None] = field(default_factory=asyncio.Queue)
    task: asyncio.Task[None] | None = None
    run: ScenarioRun | None = None
    """Its run going on now."""
    order_id: str | None = None
    """The order of that run."""
    busy: bool = False
    """Between taking an order and its report."""
    scopes: ScopeLedger = field(default_factory=lambda: ScopeLedger(per_worker=True))
    last_run: tuple[Config, str | None] | None = None
    """The config and parent run of its last scenario run: its ``after_all`` hooks'."""


class _Worker:
    def __init__(self, root: Path, out: TextIO) -> None:
        self.root = root
        self.out = out
        self.lanes: dict[int, _Lane] = {}
        self.orders: asyncio.Queue[JSONObject | None] = asyncio.Queue()
        self.write_lock = threading.Lock()
        self.orphaned = False  # the orchestrator is gone: reports go nowhere
        self.cancelled_orders: set[str] = set()
        self.stopping = False
        """SIGTERM, or the orchestrator gone: nothing more starts."""
        self.pipe: OrderPipe
        self.held = False
        """A run ordered with ``stopOnFailure`` did not complete: no queued run starts."""
        self.index: ProjectIndex
        self.config: Config
        self.early: asyncio.Task[Playwright] | BaseException | None = None
        """The driver's start begun before the imports (:mod:`runner.workers.main`), or
        why it could not begin."""
        self.endpoint: int | None = None
        """The browser endpoint (its index in ``wsEndpoint``) this worker's browser
        comes from; None for a browser launched here."""
        self.lost: str | None = None
        """Why the endpoint went down under this worker (it ends then)."""
        self.playwright: Playwright
        self.browser: Browser
        self.browser_lock = asyncio.Lock()
        """Held while the browser is replaced: the lanes wait for the new one."""
        self.exit_code: int | None = None
        """Set by a lane when the worker must end (its browser cannot be replaced, its
        endpoint went down)."""

    async def _start_driver(self) -> Playwright:
        """The driver started early, else a new one (:class:`DriverStartError` when
        it does not start)."""
        early, self.early = self.early, None
        if isinstance(early, BaseException):
            raise early
        if early is None:
            node_cache.enable()
            return await started_driver(async_playwright().start())
        return await started_driver(early)

    async def _stop_early_driver(self) -> None:
        early, self.early = self.early, None
        if isinstance(early, asyncio.Task):
            with contextlib.suppress(BaseException):
                await (await early).stop()

    def send(self, message: messages.Report, lane: int | None = None) -> None:
        """One report; one on a run of a lane (``lane``) says whose run it is."""
        data: Mapping[str, object] = message if lane is None else {**message, "lane": lane}
        with self.write_lock:
            if self.orphaned:
                return
            try:
                self.out.write(json.dumps(data, ensure_ascii=True) + "\n")
                self.out.flush()
            except (OSError, ValueError):
                # The orchestrator died (kill -9): its end of the pipe is closed. Its
                # stdin end-of-file stops this worker; until then the scenario must
                # still end its run directory, so this is no error. stdout now points
                # at /dev/null, so that the text left in its buffer does not fail again
                # at exit ("Exception ignored ... BrokenPipeError").
                self.orphaned = True
                with contextlib.suppress(OSError, ValueError):
                    devnull = os.open(os.devnull, os.O_WRONLY)
                    os.dup2(devnull, self.out.fileno())
                    os.close(devnull)

    def _receive(self, order: JSONObject | None) -> None:
        if order is not None and order.get("type") == "abort" and "orderId" in order:
            self._abort_order(str(order["orderId"]))
            return
        aborting = order is None or order.get("type") == "abort"
        if aborting:
            for lane in self.lanes.values():
                if lane.run is not None:
                    lane.run.abort("abort")
        if order is None:
            # Stopping (SIGTERM, or the orchestrator gone): the runs ordered ahead of
            # time never start; whoever sent them sees this worker end without them.
            self.stopping = True
            while not self.orders.empty():
                self.orders.get_nowait()
            self._drop_queued()
        self.orders.put_nowait(order)

    def _drop_queued(self) -> None:
        """Every lane's queued runs dropped, unreported (its reader requeues them when
        the worker ends), and the lane told to end after its run in flight: a stop that
        comes while the lanes are stopping must not take away the end they wait for."""
        for lane in self.lanes.values():
            while not lane.orders.empty():
                lane.orders.get_nowait()
                lane.orders.task_done()
            lane.orders.put_nowait(None)

    def _abort_order(self, order_id: str) -> None:
        """Abort the run of one order: a running one, or one still queued (the
        reader that sent both may not know whether it started; ids are never reused)."""
        run = next((lane.run for lane in self.lanes.values() if lane.order_id == order_id), None)
        if run is not None:
            run.abort("abort")
        else:
            self.cancelled_orders.add(order_id)

    async def serve(self) -> int:
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(quiet_driver_loss)
        loop.add_signal_handler(signal.SIGTERM, self._receive, None)
        self.pipe = OrderPipe(0, self._receive)
        self.pipe.start(loop)
        project = Project(self.root)
        try:
            self._load(project)
        except Exception as err:
            # The orchestrator says why ("the worker did not start" otherwise).
            await self._stop_early_driver()
            self.send(messages.fatal_report(str(err)))
            return 2
        except BaseException:
            await self._stop_early_driver()
            raise
        try:
            playwright = await self._start_driver()
        except Exception as err:
            self.send(messages.fatal_report(str(err)))
            return 2
        async with _stopped_at_the_end(playwright):
            self.playwright = playwright
            try:
                self.browser = await self._launch(playwright, self.config)
            except Exception as err:
                self.send(messages.fatal_report(str(err), self._refused_by(err)))
                return 2
            self.send(messages.ready_report(os.getpid(), self.endpoint))
            try:
                return await self._take_orders(project)
            finally:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(self.browser.close(), 10)

    async def _take_orders(self, project: Project) -> int:
        """Hand each run order to its lane, until ``exit``, the end of the orders, or a
        lane that says the worker must end: the exit code."""
        while True:
            order = await self.orders.get()
            kind = None if order is None else order.get("type")
            if self.exit_code is not None:
                await self._stop_lanes()
                return self.exit_code
            if order is None or kind == "exit":
                await self._stop_lanes()
                if self.exit_code is not None:
                    return self.exit_code
                await self._close_scopes(project, self.browser)
                return 0
            if kind == "reload":
                await self._lanes_idle()
                await self._close_scopes(project, self.browser)  # entered again
                self._reload(project)
            elif kind == _BROWSER_LOST and not any(lane.busy for lane in self.lanes.values()):
                # Warm for the next run. A lane's run in flight on it reports its end
                # first (a browser that cannot come back ends the worker after that).
                await self._live_browser()
            elif kind == "run":
                self._lane(order, project).orders.put_nowait(order)

    def _lane(self, order: JSONObject, project: Project) -> _Lane:
        """The lane of a run order (its task started with its first order); without
        one, the worker's own index (a worker of ``unotest watch``'s pool)."""
        index = order.get("lane")
        if not isinstance(index, int):
            own = os.environ.get("UNOTEST_WORKER_INDEX", "")
            index = int(own) if own.isdigit() else 0
        lane = self.lanes.get(index)
        if lane is None:
            lane = self.lanes[index] = _Lane(index)
            lane.task = asyncio.ensure_future(self._drive_lane(lane, project))
        return lane

    async def _drive_lane(self, lane: _Lane, project: Project) -> None:
        try:
            await self._drive_orders(lane, project)
        except Exception as err:
            # A lane that broke ends the worker, as the worker's one loop did: its
            # reader sees the run in flight end with the worker and requeues the rest.
            self._end(messages.fatal_report(f"worker lane {lane.index}: {err}"))
            raise

    async def _drive_orders(self, lane: _Lane, project: Project) -> None:
        while (order := await lane.orders.get()) is not None:
            lane.busy = True
            browser = await self._live_browser()
            if browser is None:
                return
            try:
                await self._run(project, browser, order, lane)
            finally:
                lane.busy = False
                lane.orders.task_done()
            if self.lost is not None:
                # Said with the run it cost; the orders queued here never start.
                self._end(messages.fatal_report(self.lost, self.endpoint))
                return

    def _end(self, fatal: messages.FatalReport) -> None:
        """A lane found the worker must end: said once, and the order loop stops."""
        if self.exit_code is None:
            self.exit_code = 2
            self.stopping = True
            self.send(fatal)
            self._drop_queued()
            self.orders.put_nowait({"type": "exit"})

    async def _lanes_idle(self) -> None:
        """Every lane's orders so far run (a reload must not change what a run reads)."""
        for lane in list(self.lanes.values()):
            if lane.task is not None and not lane.task.done():
                # A lane that ended (the worker must end) never empties its queue.
                joined = asyncio.ensure_future(lane.orders.join())
                await asyncio.wait([joined, lane.task], return_when=asyncio.FIRST_COMPLETED)
                joined.cancel()

    async def _stop_lanes(self) -> None:
        """Each lane's runs ordered so far end (or never start, when stopping)."""
        for lane in self.lanes.values():
            lane.orders.put_nowait(None)
        tasks = [lane.task for lane in self.lanes.values() if lane.task is not None]
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _live_browser(self) -> Browser | None:
        """The browser, or a new one when it crashed (or was killed), during a scenario
        or between two: that scenario paid for it; the next ones get a new browser
        instead of failing one after another on the dead one. None when none could be
        launched: the worker ends."""
        async with self.browser_lock:
            if self.exit_code is not None:
                return None
            if not self.browser.is_connected():
                try:
                    self.browser = await self._relaunch(self.playwright)
                except Exception as err:
                    self._end(messages.fatal_report(str(err), self._refused_by(err)))
                    return None
            return self.browser

    def _load(self, project: Project) -> None:
        """The project and its config, read (again: a ``reload`` order) from disk."""
        # Helpers only: each scenario is parsed when it is ordered to run (the
        # orchestrator has found and checked them all already).
        self.index = ProjectIndex.load_helpers(project)
        self.config = replace(load_config(self.root, os.environ), web_server=None)
        endpoints = self.config.endpoints
        if self.endpoint is None or self.endpoint >= len(endpoints):
            self.endpoint = worker_endpoint(endpoints, os.environ)

    def _reload(self, project: Project) -> None:
        """A project or config that no longer loads keeps the last good one: whoever
        ordered the reload (the watch daemon) reports the problem and keeps the
        scenarios it concerns from running."""
        with contextlib.suppress(Exception):
            self._load(project)

    async def _relaunch(self, playwright: Playwright) -> Browser:
        browser = await self._launch(playwright, self.config)
        self.send(messages.relaunched_report("the browser was gone; a new one was launched"))
        return browser

    async def _launch(self, playwright: Playwright, config: Config) -> Browser:
        """A browser that tells the order loop when it disconnects, so that a browser
        killed between two scenarios is replaced at once (warm for the next one)."""
        endpoint = config.endpoints[self.endpoint] if self.endpoint is not None else None
        browser = await launch_browser(
            playwright,
            browser=config.browser,
            headless=config.headless,
            executable_path=config.executable_path,
            ws_endpoint=endpoint.url if endpoint is not None else None,
            headed_by=config.headed_by,
            ws_headers=endpoint.headers if endpoint is not None else (),
        )
        browser.on("disconnected", lambda _: self.orders.put_nowait({"type": _BROWSER_LOST}))
        return browser

    def _refused_by(self, err: Exception) -> int | None:
        """The endpoint a launch error says is down (it refused the connection)."""
        return self.endpoint if isinstance(err, BrowserConnectError) else None

    def _shown_endpoint(self) -> str | None:
        if self.endpoint is None:
            return None
        return self.config.endpoints[self.endpoint].shown

    async def _check_endpoint(self, browser: Browser) -> str | None:
        """After a run that did not pass on a server's browser: was the connection lost?
        Then connect again; a server that refuses is down: why (for the run's report's
        ``browserLost``; the worker ends after it). One that accepts lost only its
        browser, as a local one that crashed."""
        if self.endpoint is None or self.stopping or not await _dropped(browser):
            return None
        try:
            self.browser = await self._relaunch(self.playwright)
        except Exception as err:
            self.lost = str(err)
        return self.lost

    async def _run(
        self, project: Project, browser: Browser, order: JSONObject, lane: _Lane
    ) -> None:
        """One run order: run it, or report that it did not start (aborted while it
        waited in the queue, or held back by an earlier run's failure under --bail)."""
        name = str(order.get("scenario"))
        order_id = order.get("orderId")
        # An abort the orchestrator wrote while the last run ended is read before this
        # one starts, not after (it may be this run's: Ctrl-C, --bail).
        self.pipe.read_now()
        cancelled = isinstance(order_id, str) and order_id in self.cancelled_orders
        if self.held or self.stopping or cancelled:
            self.cancelled_orders.discard(str(order_id))
            aborted = unfinished_report(name, None, "aborted before it started", "AbortError")
            self.send(aborted, lane.index)
            return
        try:
            config = run_config(self.config, order, self.root)
        except ConfigError as err:  # the orchestrator checked the same: hardly ever
            self.send(unfinished_report(name, None, str(err), "ConfigError"), lane.index)
            completed = False
        else:
            completed = await self._run_one(project, browser, order, config, lane)
        if not completed and order.get("stopOnFailure") is True:
            # Held before its report is even read: the orders queued behind this one
            # must not start (``--bail`` with one worker starts nothing after a failure).
            self.held = True

    async def _run_one(
        self, project: Project, browser: Browser, order: JSONObject, config: Config, lane: _Lane
    ) -> bool:
        """True when the scenario completed (with the index last loaded, and ``config``:
        the one last loaded with the order's collection settings, :func:`run_config`)."""
        index = self.index
        name = str(order.get("scenario"))
        problems = len(index.errors)
        scenario = index.load_scenario(name)
        if scenario is None:
            message = f"scenario '{name}' cannot be loaded"
            if len(index.errors) > problems:  # its syntax error, where it is
                problem = index.errors[-1]
                message += f": {problem.file}:{problem.line}:{problem.col}: {problem.message}"
            self.send(unfinished_report(name, None, message, "Error"), lane.index)
            return False
        return await self._run_scenario(project, browser, order, config, lane, scenario)

    async def _run_scenario(
        self,
        project: Project,
        browser: Browser,
        order: JSONObject,
        config: Config,
        lane: _Lane,
        scenario: ScenarioFile,
    ) -> bool:
        name = str(order.get("scenario"))
        order_id = order.get("orderId")
        parent_run_id = order.get("parentRunId")
        index = self.index
        failed = lane.scopes.failure_for(hook_scopes(scenario, index.helper_table))
        if failed is not None:  # said once, in the run where it failed; not tried again
            error = f"before_all failed: {failed[0]}"
            self.send(unfinished_report(name, None, error, failed[1]), lane.index)
            return False
        lane.last_run = (config, parent_run_id if isinstance(parent_run_id, str) else None)
        masker = SecretMasker()
        environment = RunEnvironment.of_project(self.root, masker)
        with open(os.devnull, "w") as devnull:
            run = ScenarioRun(
                ScenarioInputs(project, scenario, index.helper_table, config, masker, environment),
                RunOptions(
                    out=devnull,
                    quiet=True,
                    log_stream=line_stream(
                        lambda line: self.send(messages.output_report(name, line), lane.index)
                    ),
                    parent_run_id=parent_run_id if isinstance(parent_run_id, str) else None,
                    shared_browser=browser,
                    handle_signals=False,
                    on_started=lambda run_id: self.send(
                        messages.started_report(name, run_id), lane.index
                    ),
                    browser_endpoint=self._shown_endpoint(),
                    # The scenario sees its lane as the worker it runs on.
                    extra_env={"UNOTEST_WORKER_INDEX": str(lane.index)},
                    scopes=lane.scopes,
                ),
            )
            lane.run = run
            lane.order_id = order_id if isinstance(order_id, str) else None
            try:
                result = await run.run_async()
            except Exception as err:
                # The run may have started (its run directory and "started" report exist):
                # its id lets the orchestrator close the scenario-started it announced.
                run_id = run.rundir.run_id if run.rundir is not None else None
                unfinished = unfinished_report(
                    name, run_id, masker.mask(str(err)), type(err).__name__
                )
                lost = await self._check_endpoint(browser)
                if lost is not None:
                    unfinished["browserLost"] = lost
                self.send(unfinished, lane.index)
                return False
            finally:
                lane.run = None
                lane.order_id = None
        finished = finished_report(name, result, masker)
        # Only a failure can be the connection's: a pass or an abort is what it says.
        broke = result.outcome in ("failed", "interrupted")
        lost = await self._check_endpoint(browser) if broke else None
        if lost is not None:
            finished["browserLost"] = lost
        self.send(finished, lane.index)
        return result.outcome == "completed"

    async def _close_scopes(self, project: Project, browser: Browser) -> None:
        """Each lane's scopes left (:meth:`_close_lane_scopes`), the lanes side by side,
        as their scenarios ran: a worker's end has the time one lane's hooks take."""
        lanes = sorted(self.lanes.values(), key=lambda lane: lane.index)
        await asyncio.gather(*(self._close_lane_scopes(project, browser, lane) for lane in lanes))

    async def _close_lane_scopes(self, project: Project, browser: Browser, lane: _Lane) -> None:
        """The ``after_all`` hooks of every scope ``lane`` entered, inner first, in a
        run of their own on this browser (with the lane's last scenario's config and
        parent); a failure is one line on stderr and a ``teardown`` report (the
        collection, if it still reads, fails on it; the watch pool ignores it). Only when
        the browser is still there (a lost one took the scopes' state along)."""
        worker = f"worker {lane.index}"
        teardown = lane.scopes.close(worker)
        if teardown is None or lane.last_run is None or not browser.is_connected():
            return
        config, parent_run_id = lane.last_run
        if config.storage_state is not None:
            try:
                read_storage_state(self.root, config.storage_state)
            except ConfigError:
                # Not written (the setup failed): the hooks still run, signed out, as
                # scopes entered must be left.
                config = replace(config, storage_state=None)
        masker = SecretMasker()
        environment = RunEnvironment.of_project(self.root, masker)
        inputs = ScenarioInputs(
            project, teardown, self.index.helper_table, config, masker, environment
        )
        with open(os.devnull, "w") as devnull:
            run = ScenarioRun(
                inputs,
                RunOptions(
                    out=devnull,
                    quiet=True,
                    log_stream=devnull,
                    parent_run_id=parent_run_id,
                    shared_browser=browser,
                    handle_signals=False,
                    extra_env={"UNOTEST_WORKER_INDEX": str(lane.index)},
                    scopes=lane.scopes,
                ),
            )
            # Not the current run: the end of the orders (the orchestrator closes them
            # right after its exit order) must not abort it. It has the scenario timeout,
            # and whoever reaps the worker kills it after a while.
            try:
                result = await run.run_async()
            except Exception as err:
                self._teardown_failed(f"{worker}: {TEARDOWN_NAME} did not run: {err}")
                return
        if result.outcome != "completed":
            error = masker.mask(result.error["error"] if result.error else result.outcome)
            place = error_location(result.error) if result.error else None
            where = f"{place}: " if place else ""
            self._teardown_failed(
                f"{worker}: {TEARDOWN_NAME} {result.outcome}: {where}{error} "
                f"(its run: {result.run_dir})"
            )

    def _teardown_failed(self, sentence: str) -> None:
        print(f"unotest: {sentence}", file=sys.stderr, flush=True)
        self.send(messages.teardown_report(sentence))


async def _dropped(browser: Browser) -> bool:
    """Whether ``browser``'s connection to its server is gone: a round trip (a context
    opened and closed) tells, as the disconnect may be told after the run's error."""
    if not browser.is_connected():
        return True
    try:
        context = await asyncio.wait_for(browser.new_context(), PROBE_TIMEOUT_S)
    except Exception:
        return True
    with contextlib.suppress(Exception):
        await asyncio.wait_for(context.close(), PROBE_TIMEOUT_S)
    return not browser.is_connected()


def run_config(config: Config, order: JSONObject, root: Path) -> Config:
    """The config a run order's scenario runs with: the collection's settings (``use``:
    its context keys) over the worker's config, and no storage state for one of its
    setup scenarios (which writes it). Raises :class:`ConfigError` for settings that
    no longer check (the orchestrator checked the same values first)."""
    setup = order.get("setup") is True
    use = order.get("use")
    if use is None:
        return replace(config, storage_state=None) if setup else config
    return with_collection(config, CollectionUse.from_json(use, root), setup=setup)


@contextlib.asynccontextmanager
async def _stopped_at_the_end(playwright: Playwright) -> AsyncIterator[None]:
    try:
        yield
    finally:
        with contextlib.suppress(Exception):
            await playwright.stop()


def finished_report(name: str, result: RunResult, masker: SecretMasker) -> messages.FinishedReport:
    """``finished`` with the run's result (its error masked, as in every report)."""
    error = masker.mask_error(result.error) if result.error else None
    return messages.finished_report(name, replace(result, error=error).to_json())


def unfinished_report(
    name: str, run_id: str | None, message: str, error_name: str
) -> messages.UnfinishedReport:
    """``finished`` without a result: the scenario did not load, or its run failed in
    the runner itself (``run_id`` once its run directory exists)."""
    return messages.unfinished_report(name, run_id, events.run_error(message, error_name))


def main(early: EarlyDriver | None = None) -> int:
    """``early``: Playwright's driver already starting on a loop of its own
    (:mod:`runner.workers.main`), which the worker then runs on and owns."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # A closed terminal sends SIGHUP to the whole group: by default it would kill the
    # worker on the spot, its scenario's directory left without run:finished.
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    root = Path(sys.argv[1]).resolve()
    # Reports go to the real stdout only; anything else printing must not corrupt them.
    out = sys.stdout
    sys.stdout = sys.stderr
    worker = _Worker(root, out)
    if early is None:
        return asyncio.run(worker.serve())
    worker.early = early.task or early.error
    early.task = None
    with asyncio.Runner(loop_factory=lambda: early.loop) as runner:
        return runner.run(worker.serve())


if __name__ == "__main__":
    sys.exit(main())
