"""The watch daemon: saves in, batches of affected scenarios on warm workers, events out.

It keeps the parsed project (its dependency graph) and a pool of warm workers, watches
``unotest/e2e/**`` and ``unotest.config.yaml`` (watchfiles), gathers saves into batches
(:class:`runner.watch.batches.Debouncer`), selects what they affect with the reasons
(:mod:`runner.watch.selection`) and runs it (:class:`runner.watch.batches.Batch`).
Everything it has to say is one event on one bus (:mod:`runner.watch.bus`); the
socket, ``--json`` and the readable lines are subscribers. Nothing a save can do
stops it: a file that does not parse, a config that does not load, a crashed browser
or worker each become an ``error`` event saying what took over.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import threading
import time
from collections.abc import Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from runner.errors import ConfigError, UnotestError, UsageError
from runner.project.config import Config, load_config
from runner.project.index import CONFIG_FILE, LoadMemo, Project, ProjectIndex
from runner.project.secrets import project_masker
from runner.text import did_you_mean
from runner.watch.batches import Batch, Debouncer
from runner.watch.bus import EventBus
from runner.watch.daemon_events import (
    PROTOCOL_VERSION,
    Event,
    Trigger,
    batch_started,
    daemon_started,
    daemon_stopped,
    error,
    watch_change,
)
from runner.watch.discovery import (
    ProjectClaimed,
    claim_project,
    claimed_by,
    remove_discovery,
    write_discovery,
)
from runner.watch.graph import DependencyGraph, absolute
from runner.watch.pool import WarmPool
from runner.watch.results import ScenarioJob
from runner.watch.saves import watch_project
from runner.watch.selection import Change, Selection, select, select_manual
from runner.watch.socket_channel import SocketChannel
from runner.watch.state import DaemonState
from runner.webserver.server import WebServer
from runner.workers.pool import BrowserPool

__all__ = ["DaemonOptions", "ManualKind", "WatchDaemon"]

ManualKind = Literal["last", "all", "failed"]


@dataclass(frozen=True)
class DaemonOptions:
    root: Path
    collection: str | None = None
    workers: int = 1
    host: str = "127.0.0.1"
    port: int | None = 0
    """None: no socket (``server`` is null in ``daemon.started``)."""
    idle_ms: int = 150
    max_ms: int = 1500
    version: str = "0.0.0"


class _FrozenHeap:
    """What a load keeps, frozen out of the garbage collector's scans (``gc.freeze``
    after each batch has started): at 10,000 scenarios the syntax trees the ``LoadMemo``
    holds are about 1.5 million objects, which every full collection walked (0.5 to
    0.8 s at random saves) and which slowed the collections of the young ones in
    between. Each freeze but the first follows a full collection, which walks only
    what is not frozen yet: no cycle of the daemon's other work (a failed batch's
    traceback, a replaced worker's transports) is frozen with the rest. Reference
    counting still frees what a later load drops; what a frozen object left in a cycle
    holds is collected when, at every ``CHECK_EVERY``-th load, the frozen count has grown
    by a quarter since the last full collection (counting them walks them all, 0.1 s:
    not at every save)."""

    GROWTH = 1.25
    CHECK_EVERY = 32

    def __init__(self) -> None:
        self._after_collect = 0
        self._loads = 0

    def settle(self) -> None:
        self._loads += 1
        if self._loads > 1:
            gc.collect()
        if self._loads % self.CHECK_EVERY == 0:
            count = gc.get_freeze_count()
            if count > self._after_collect * self.GROWTH:
                gc.unfreeze()
                gc.collect()
                self._after_collect = 0
            else:  # a project that shrank: its smaller heap is the measure now
                self._after_collect = min(self._after_collect, count)
        gc.freeze()
        if not self._after_collect:
            self._after_collect = gc.get_freeze_count()


class WatchDaemon:
    def __init__(self, options: DaemonOptions) -> None:
        self.options = options
        self.root = options.root.resolve()
        self.project = Project(self.root)
        self.bus = EventBus()
        self.state = DaemonState()
        self.bus.listen(self.state)
        self.bus.listen(self._remember_statuses)
        self.socket = SocketChannel(self.bus, self.state.snapshot_state)
        self.pool = WarmPool(self.root, options.workers, self._degraded)
        self.graph = DependencyGraph()
        self.config: Config | None = None
        self.web_server: WebServer | None = None
        self.debouncer = Debouncer(options.idle_ms / 1000, options.max_ms / 1000, self._fire)
        self.batch: Batch | None = None
        self.batch_count = 0
        self.last_scenarios: list[str] = []
        self.statuses: dict[str, str] = {}
        self.stopped = asyncio.Event()
        self.address: tuple[str, int] | None = None
        self.tasks: set[asyncio.Task[None]] = set()
        self.lock = asyncio.Lock()
        self.memo = LoadMemo()
        """What the last load read, parsed and checked: a save re-reads and re-parses
        only the files it changed (10,000 scenarios: seconds saved on every save)."""
        self.heap = _FrozenHeap()
        self.claimed = False
        """This daemon holds the project's claim (so its discovery file is its own)."""
        self.announced = False
        """``daemon.started`` was published (so ``daemon.stopped`` will be)."""

    # --- start and stop ------------------------------------------------------------

    def _load(self, changed: list[str] | None = None, added: bool = True) -> ProjectIndex:
        """The project as it is now (in a thread: one load at a time, under the lock or
        before any save is taken); ``changed``: the files the watcher saw change,
        project-relative (the others are taken as they were, without a ``stat`` each);
        ``added``: one was added or removed (else the folders are not listed again)."""
        self.memo.only_changed(changed, added)
        return ProjectIndex.load(self.project, memo=self.memo)

    async def start(self) -> None:
        """Index, config, webServer, warm workers, socket, discovery file,
        ``daemon.started``; raises (one sentence) when the daemon cannot serve."""
        index = await asyncio.to_thread(self._load)
        self.graph = DependencyGraph.build(index)
        self.heap.settle()
        self._check_collection(index)
        self._use_collection(index)
        self.config = load_config(self.root, os.environ)
        # Once the options are known to be good (a bad one is its own one sentence, not
        # "another daemon is starting"), the project is this daemon's or another's.
        if claim_project(self.root) is None:
            raise ProjectClaimed(claimed_by(self.root))
        self.claimed = True
        # The socket first: a --port that cannot be had stops the daemon before it starts
        # a webServer or a browser.
        server = await self._listen()
        if self.config.web_server is not None:
            self.web_server = await asyncio.to_thread(
                WebServer.from_config,
                self.config.web_server,
                mask=project_masker(self.root).mask,
                cancel=threading.Event(),
            )
        self.pool.browsers = BrowserPool(self.config.endpoints, self.options.workers)
        await self.pool.start()
        started = int(time.time() * 1000)
        if self.address is not None:
            write_discovery(
                self.root, *self.address, self.options.version, PROTOCOL_VERSION, started
            )
        config_path = self.root / CONFIG_FILE
        self.bus.publish(
            daemon_started(
                os.getpid(),
                self.root.as_posix(),
                self.options.version,
                server,
                config_path.as_posix() if config_path.is_file() else None,
                len(index.files),
            )
        )
        self.announced = True
        self._spawn(watch_project(self.root, self._changed, self.stopped, self._known_files))

    async def _listen(self) -> dict[str, Any] | None:
        """The socket, or None (``server: null``) when it is off or cannot be opened:
        the daemon then serves stdout alone, and says so."""
        if self.options.port is None:
            return None
        try:
            self.address = await self.socket.start(self.options.host, self.options.port)
        except OSError as err:
            where = f"{self.options.host}:{self.options.port}"
            if self.options.port != 0:
                # A port the user asked for: without it the viewer finds no daemon and a
                # second `unotest watch` would start another; one sentence, exit 2.
                raise UsageError(
                    f"--port {self.options.port}: cannot listen on {where} "
                    f"({err.strerror or err}): choose another port, or leave --port out"
                ) from None
            self.bus.publish(
                error(
                    "socket",
                    f"cannot listen on {where}",
                    err.strerror or str(err),
                    "no socket and no discovery file: the events go to stdout only",
                )
            )
            return None
        return {"host": self.address[0], "port": self.address[1]}

    def _check_collection(self, index: ProjectIndex) -> None:
        name = self.options.collection
        if name is not None and name not in self.graph.collections:
            # A file that is there but does not load is its problem, where it is.
            for problem in index.errors_in([self.project.collection_file(name)]):
                raise ConfigError(problem.head)
            hint = did_you_mean(name, self.graph.collections)
            raise UsageError(f"collection '{name}' does not exist{hint}")

    def candidates(self) -> list[str] | None:
        name = self.options.collection
        if name is None:
            return None
        return [s for s in self.graph.collections.get(name, []) if s in self.graph.scenario_files]

    async def stop(self, reason: str) -> None:
        """The running batch cancelled, workers and browsers closed, the socket and the
        discovery file gone, ``daemon.stopped`` last."""
        self.stopped.set()
        self.debouncer.cancel()
        batch = self.batch
        if batch is not None and batch.task is not None and not batch.task.done():
            batch.cancel(f"the watch stopped ({reason}) before this scenario ran")
            self.pool.abort_running()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(batch.task), 20)
        await self.pool.close()
        if self.web_server is not None:
            await asyncio.to_thread(self.web_server.stop)
        if self.claimed:  # the discovery file of another daemon is not this one's
            remove_discovery(self.root)
        if self.announced:
            self.bus.publish(daemon_stopped(reason))
        await self.socket.close()
        for task in list(self.tasks):
            task.cancel()

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(coroutine)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    # --- events in -------------------------------------------------------------------

    def _known_files(self) -> list[str]:
        """The scenario and helper files of the graph (what a folder moved away held)."""
        return [*self.graph.scenario_files.values(), *self.graph.helper_files()]

    def _changed(self, changes: list[Change]) -> None:
        for change in changes:
            self.bus.publish(watch_change(absolute(self.root, change.rel), change.kind))
        self.debouncer.add(changes)

    def _fire(self, changes: list[Change], trigger: Trigger) -> None:
        self._spawn(self._guarded(self._on_saves(changes, trigger)))

    def trigger(self, kind: ManualKind) -> None:
        """A key (Enter, ``a``, ``f``) or a client asked for a batch now."""
        self._spawn(self._guarded(self._on_manual(kind)))

    async def _guarded(self, work: Coroutine[Any, Any, None]) -> None:
        """Whatever goes wrong in one batch is an ``error`` event, never the daemon's end."""
        try:
            await work
        except asyncio.CancelledError:
            raise
        except Exception as err:
            self.bus.publish(
                error(
                    "batch",
                    f"the batch could not run: {err}",
                    type(err).__name__,
                    "the daemon keeps watching; the next save starts a new batch",
                )
            )

    def _degraded(self, scope: str, message: str, detail: str | None, to: str) -> None:
        self.bus.publish(error(scope, message, detail, to))

    def _remember_statuses(self, event: Event) -> None:
        if event["type"] == "run.finished":
            self.statuses[event["result"]["scenario"]] = event["result"]["status"]

    # --- batches ---------------------------------------------------------------------

    async def _on_saves(self, changes: list[Change], trigger: Trigger) -> None:
        async with self.lock:
            old = self.graph
            added = any(c.kind != "change" for c in changes)  # a file added or removed
            index = await asyncio.to_thread(self._load, [c.rel for c in changes], added)
            self.graph = DependencyGraph.build(index, previous=old)
            self._keep_watched_collection(old, index)
            self._use_collection(index)
            selection = select(
                self.root, old, self.graph, changes, self.candidates(), self.options.collection
            )
            blocked = await self._reload_config(changes)
            for note in selection.notes:
                self.bus.publish(error(note.scope, note.message, note.detail, note.degraded_to))
            changed = [absolute(self.root, c.rel) for c in changes]
            await self._run_batch(selection, changed, trigger, blocked)
            self.heap.settle()  # once batch.started is out: not in a save's answer

    def _use_collection(self, index: ProjectIndex) -> None:
        """The watched collection's context keys and ``storageState`` for its scenarios'
        runs (its ``setup:`` scenarios are not run: the state a collection run saved is
        used). A collection that no longer loads keeps the settings it had."""
        name = self.options.collection
        entry = index.collections.get(name) if name is not None else None
        if entry is not None:
            self.pool.use = entry.use.to_json() if entry.use is not None else None

    def _keep_watched_collection(self, old: DependencyGraph, index: ProjectIndex) -> None:
        """The collection ``--collection`` watches no longer loads (a slip while editing
        its YAML): its last list stays in force, and the daemon says why. Without it, a
        scenario it lists was "not in the collection" until the file was fixed."""
        name = self.options.collection
        if name is None or name in self.graph.collections or name not in old.collections:
            return
        self.graph.collections[name] = old.collections[name]
        path = self.project.collection_file(name)
        problems = index.errors_in([path])
        detail = problems[0].head if problems else "the file is gone"
        self.bus.publish(
            error(
                f"collection:{path}",
                f"{path} does not load",
                detail,
                "the last list of scenarios that loaded is kept",
            )
        )

    async def _reload_config(self, changes: list[Change]) -> str | None:
        """After a save of the config: the workers read it again, or (when it does not
        load) keep the last good one; the answer is why scenarios cannot run, if so."""
        if not any(c.rel == CONFIG_FILE for c in changes):
            self.pool.reload()
            return None
        before = self.config.web_server if self.config is not None else None
        try:
            self.config = load_config(self.root, os.environ)
        except UnotestError as err:
            self.bus.publish(
                error(
                    "config",
                    f"{CONFIG_FILE} does not load",
                    str(err),
                    "the workers keep the last configuration that loaded",
                )
            )
            return f"{CONFIG_FILE} does not load: {err}"
        if self.config.web_server != before:
            await self._start_web_server("the config's webServer changed")
        self.pool.reload()
        return None

    async def _check_web_server(self) -> None:
        """Before a batch: a webServer that exited since is started again (every run
        would otherwise fail to reach the site, with nothing saying why)."""
        server = self.web_server
        code = server.exit_code() if server is not None else None
        if code is not None:
            await self._start_web_server(f"the webServer exited (code {code})")

    async def _start_web_server(self, why: str) -> None:
        """Stop the webServer there is, start the config's own; say why, and say so when
        it does not start (the scenarios then run without it)."""
        old, self.web_server = self.web_server, None
        if old is not None:
            await asyncio.to_thread(old.stop)
        wanted = self.config.web_server if self.config is not None else None
        if wanted is None:
            return
        try:
            self.web_server = await asyncio.to_thread(
                WebServer.from_config,
                wanted,
                mask=project_masker(self.root).mask,
                cancel=threading.Event(),
            )
        except UnotestError as err:
            self.bus.publish(
                error("webServer", f"{why}; it does not start", str(err), "runs go on without it")
            )
            return
        self.bus.publish(error("webServer", why, None, "started again"))

    async def _on_manual(self, kind: ManualKind) -> None:
        async with self.lock:
            allowed = self.candidates()
            every = list(self.graph.scenario_files) if allowed is None else allowed
            if kind == "all":
                names, message = every, "all scenarios (a) asked for"
            elif kind == "failed":
                names = [n for n in every if self.statuses.get(n) in ("failed", "errored")]
                message = "the failed scenarios (f) asked for"
            else:
                names, message = self.last_scenarios, "the last batch again (Enter) asked for"
            if not names:
                # Said, not an empty batch that reads as if something ran and was skipped.
                why = {
                    "all": "the project has no scenario to run",
                    "failed": "no scenario failed in this daemon's runs",
                }.get(kind, "no batch has run yet")
                self.bus.publish(error("keys", f"nothing to run: {why}", None, None))
                return
            selection = select_manual(self.root, self.graph, names, message)
            await self._run_batch(selection, [], "manual", None)

    async def _run_batch(
        self, selection: Selection, changed: list[str], trigger: Trigger, blocked_all: str | None
    ) -> None:
        await self._cancel_running()
        await self._check_web_server()
        self.batch_count += 1
        batch_id = f"batch-{self.batch_count}"
        plan = selection.plan(self.graph)
        self.bus.publish(batch_started(batch_id, changed, trigger, plan, selection.unmatched))
        jobs = [
            ScenarioJob(name, absolute(self.root, self.graph.scenario_files[name]), reasons)
            for name, reasons in selection.reasons.items()
        ]
        blocked = {}
        for job in jobs:
            problems = self.graph.problems_for(job.name)
            if blocked_all is not None:
                problems = [blocked_all, *problems]
            if problems or job.name not in self.graph.reach:
                blocked[job.name] = _cannot_run(job.name, problems)
        if jobs:
            self.last_scenarios = [job.name for job in jobs]
        self.batch = Batch(batch_id, jobs, blocked, self.bus.publish)
        self.batch.start(self.pool.run)

    async def _cancel_running(self) -> None:
        """A newer batch makes the running one obsolete: cancel it and wait for it."""
        batch = self.batch
        if batch is None or batch.task is None or batch.task.done():
            return
        batch.cancel()
        self.pool.abort_running()
        await asyncio.shield(batch.task)


def _cannot_run(name: str, problems: list[str]) -> str:
    if not problems:
        return f"scenario '{name}' does not load"
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return f"scenario '{name}' cannot run: {problems[0]}{more}"
