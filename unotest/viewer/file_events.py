"""The project watched for the viewer: file changes and runs become ``WsMessage``s.

Two ``watchfiles.awatch`` (inotify on Linux), debounced: one over ``unotest/e2e/`` and
every folder in it, one over ``unotest/`` and ``unotest/.runs/`` themselves (not the
folders below them: a watch over every run directory costs a watch each, seconds to set
up at 100,000 runs and past many systems' limit). The project's ``.git``,
``node_modules`` and virtualenvs sit outside them and any inside are ignored too. What a
change means is decided by :func:`classify`: a scenario, helper or collection file →
``fs:*-changed``; ``unotest/.debugger.json`` → ``fs:bp-changed``; ``unotest/.env`` →
``fs:env-changed`` (ours: the Env page follows the file); a run directory made or
removed goes to :class:`runner.store.tail.RunsTailer`, which tails each live run's
``steps.jsonl`` by offset, and to :class:`unotest.viewer.run_logs.RunLogs`, which tails
the logs of the runs it follows (``log:line``, whoever started the run, this viewer or
one before it). The runs that run now are read every :data:`LIVE_S` (none is read while
none runs), and a ticker asks every followed run whether its runner still lives
(``interrupted`` otherwise) and catches anything a missed event left behind.

The viewer's loaded project index (:class:`unotest.viewer.project_index.ViewerIndex`),
when given, is told whether the watch is in place and, before the ``fs:*`` message is
published, that a scenario, helper, hooks or collection file changed.

A path under ``e2e/`` counts as a folder when it is one; a path that is gone (removed, or
the old name of a move) may have been one unless its name ends as a project file does
(``.js``, ``.yaml``, ``.yml``): a folder moved or removed takes its files with it, and a
watcher reports the folder alone. So a folder named ``v1.2`` counts, and a removed file
of another kind (``notes.md``) marks the scenarios as changed too (a needless reload,
never a stale one).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePath

import watchfiles

from runner import protocol, ws_messages
from runner.project.index import SCENARIO_SUFFIX, Project
from runner.project.root import HOOKS_FILE
from runner.store.tail import RunsTailer
from runner.ws_messages import WsMessage
from unotest.viewer.hub import Hub
from unotest.viewer.project_index import ViewerIndex
from unotest.viewer.run_logs import RunLogs

__all__ = ["IGNORED_DIRS", "FileEventBatch", "FileEvents", "Target", "classify"]

IGNORED_DIRS = frozenset(
    {".git", "node_modules", ".venv", "venv", "env", "__pycache__", ".mypy_cache", ".tox"}
)
DEBOUNCE_MS = 150
"""The longest a burst of changes is held before it is sent."""
STEP_MS = 15
"""A burst ends after this long without a change."""
TICK_S = 1.0
"""How often followed runs are asked whether their runner lives."""
LIVE_S = 0.03
"""How often the runs that run now are read for new lines (nothing is read while none
runs): a step reaches a client within about this long, as with a file event."""
YIELD_EVERY = 200
"""Messages published between two turns of the event loop (a long backlog never holds it)."""

_TOP_RUNS = protocol.RUNS_SUBDIR
_DEBUGGER = PurePath(protocol.DEBUGGER_FILE).name
_ENV = PurePath(protocol.ENV_FILE).name
_INDEX_KINDS = frozenset({"scenarios", "helpers", "collections"})
"""The kinds of change that change the project index (hooks files count as helpers)."""
_FILE_SUFFIXES = (".js", ".yaml", ".yml", SCENARIO_SUFFIX, HOOKS_FILE)
"""How the names of the project's files under ``e2e/`` end: a gone path named otherwise
may have been a folder."""
_RUN_FILES = (
    protocol.RUN_MANIFEST_FILE,
    protocol.STEPS_FILE,
    protocol.STDOUT_FILE,
    protocol.STDERR_FILE,
)


@dataclass(frozen=True)
class Target:
    """What one changed path is: a kind of project file, or a run (``run`` set)."""

    kind: str
    """``scenarios``, ``helpers``, ``collections``, ``bp``, ``env`` or ``run``."""
    run: str = ""


def classify(unotest_dir: Path, path: str) -> Target | None:
    """What a change at ``path`` means to the viewer; ``None``: nothing."""
    try:
        parts = PurePath(path).relative_to(unotest_dir).parts
    except ValueError:
        return None
    if not parts or any(part in IGNORED_DIRS for part in parts):
        return None
    if parts[0] == _TOP_RUNS:
        if len(parts) == 2 or (len(parts) == 3 and parts[2] in _RUN_FILES):
            return Target("run", parts[1])
        return None
    if parts == (_DEBUGGER,):
        return Target("bp")
    if parts == (_ENV,):
        return Target("env")
    if parts[0] != protocol.E2E_SUBDIR or len(parts) < 2:
        return None
    return _e2e_target(path, parts[1:])


def _e2e_target(path: str, parts: tuple[str, ...]) -> Target | None:
    name = parts[-1]
    if name.startswith(".") or name.endswith("~") or (name[0] == "#" and name[-1] == "#"):
        return None  # editors' swap, backup and auto-save files
    folder = _folder(path, name)
    if parts[0] == protocol.HELPERS_SUBDIR:
        return Target("helpers") if folder or name.endswith(".js") else None
    if parts[0] == protocol.COLLECTIONS_SUBDIR:
        return Target("collections") if folder or name.endswith((".yaml", ".yml")) else None
    if name == HOOKS_FILE:
        return Target("helpers")  # a folder's hooks, listed with the helpers
    return Target("scenarios") if folder or name.endswith(SCENARIO_SUFFIX) else None


def _folder(path: str, name: str) -> bool:
    """Whether a changed path is, or may have been, a folder (moved or removed, its files
    went with it, and the watcher reports the folder alone). Its name cannot say: a
    folder may be ``v1.2``, a file ``README``."""
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except (OSError, ValueError):
        return not name.endswith(_FILE_SUFFIXES)  # gone: a folder unless named as a file


@dataclass
class FileEventBatch:
    """One debounced burst of changes, reduced to what must be sent."""

    kinds: set[str] = field(default_factory=set)
    runs: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, unotest_dir: Path, paths: Iterable[str]) -> FileEventBatch:
        batch = cls()
        for path in paths:
            target = classify(unotest_dir, path)
            if target is None:
                continue
            if target.kind == "run":
                batch.runs.add(target.run)
            else:
                batch.kinds.add(target.kind)
        return batch

    def file_messages(self) -> list[WsMessage]:
        made: dict[str, WsMessage] = {
            "bp": ws_messages.bp_changed(),
            "collections": ws_messages.collections_changed(),
            "env": ws_messages.env_changed(),
            "helpers": ws_messages.helpers_changed(),
            "scenarios": ws_messages.scenarios_changed(),
        }
        return [message for kind, message in made.items() if kind in self.kinds]


class FileEvents:
    """Watches one project for one hub, from :meth:`start` to :meth:`stop`."""

    def __init__(self, root: Path, hub: Hub, index: ViewerIndex | None = None) -> None:
        self.project = Project(root)
        self.hub = hub
        self.index = index
        self.runs = RunsTailer(self.project.runs_dir)
        self.logs = RunLogs(root)
        self._stop = asyncio.Event()
        self._publishing = asyncio.Lock()
        self._tasks: list[asyncio.Task[None]] = []
        self.ready = asyncio.Event()
        """Set once the file watches are in place (changes before them may be missed)."""
        self._sources_ready = False
        self._top_ready = False

    def prime(self) -> None:
        """Take the runs already there (a live one followed from its files' current ends)."""
        self.runs.prime()
        self.logs.prime(self.runs.live)

    def start(self) -> None:
        self.prime()
        self._tasks = [
            asyncio.create_task(self._watch_sources(), name="viewer-watch-sources"),
            asyncio.create_task(self._watch_top(), name="viewer-watch-runs"),
            asyncio.create_task(self._tick(), name="viewer-runs-tick"),
            asyncio.create_task(self._follow_live(), name="viewer-runs-live"),
        ]

    async def stop(self) -> None:
        self._stop.set()
        self._watching(False)
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks = []

    async def _publish(self, messages: Iterator[WsMessage] | list[WsMessage]) -> None:
        """Publish ``messages`` whole before any other batch: the file watch and the
        ticker both drain the same runs, and a batch that yields the loop half way
        (every :data:`YIELD_EVERY`) would otherwise let the other publish later lines
        of a run before the rest of this one's earlier lines. A page that met such a
        line took it as its next one and dropped the earlier ones as seen."""
        async with self._publishing:
            for count, message in enumerate(messages, 1):
                self.hub.publish(message)
                if count % YIELD_EVERY == 0:
                    await asyncio.sleep(0)

    async def _watch_sources(self) -> None:
        """``unotest/e2e/`` and every folder in it (scenarios, helpers, hooks,
        collections): the index trusts what it keeps only while this watch is in place."""
        e2e = self.project.e2e_dir
        while not self._stop.is_set():
            if not e2e.is_dir():
                self._watching(False)
                self._sources_ready = True  # nothing to watch yet: a later one is found
                self._maybe_ready()
                await self._sleep(1.0)
                continue
            try:
                await self._watch_once([e2e], recursive=True, sources=True)
            except Exception as exc:  # the watch failed (a limit, a vanished dir): restart it
                self._watching(False)
                self.hub.publish(ws_messages.error(f"file watcher restarted: {exc}"))
                await self._sleep(1.0)

    async def _watch_top(self) -> None:
        """``unotest/`` and ``unotest/.runs/`` themselves, not what is below them: the
        ``.env`` and ``.debugger.json`` files, and each run directory made or removed.
        A run's own files are read by :meth:`_follow_live` while it runs: a watch over
        every run directory would cost a watch each (seconds to set up at 100,000 runs,
        and past many systems' limit of watches)."""
        unotest_dir = self.project.unotest_dir
        runs_dir = self.project.runs_dir
        while not self._stop.is_set():
            if not unotest_dir.is_dir():
                self.hub.publish(ws_messages.error(f"nothing to watch: {unotest_dir} is missing"))
                await self._sleep(5.0)
                continue
            paths = [unotest_dir, runs_dir] if runs_dir.is_dir() else [unotest_dir]
            try:
                await self._watch_once(paths, recursive=False, sources=False)
            except Exception as exc:  # the watch failed (a vanished dir): restart it
                self.hub.publish(ws_messages.error(f"file watcher restarted: {exc}"))
                await self._sleep(1.0)

    async def _watch_once(self, paths: list[Path], *, recursive: bool, sources: bool) -> None:
        """Watch ``paths`` until the viewer stops, or until ``.runs/`` appears while the
        top watch goes without it (then watched again, with it)."""
        unotest_dir = self.project.unotest_dir
        runs_dir = str(self.project.runs_dir)
        runs_unwatched = not sources and self.project.runs_dir not in paths
        made: list[bool] = []

        def wanted(_change: watchfiles.Change, path: str) -> bool:
            if runs_unwatched and path == runs_dir:
                made.append(True)
            return classify(unotest_dir, path) is not None

        changes = watchfiles.awatch(
            *paths,
            watch_filter=wanted,
            debounce=DEBOUNCE_MS,
            step=STEP_MS,
            stop_event=self._stop,
            rust_timeout=200,
            yield_on_timeout=True,
            recursive=recursive,
        )
        in_place = False
        async with contextlib.aclosing(changes):
            async for batch in changes:
                if not in_place:  # the watch's first answer: it is in place from here on
                    in_place = True
                    if sources:
                        self._watching(True)
                        self._sources_ready = True
                    elif self._top_ready:
                        # Watched again, .runs/ with it: a run made before this watch
                        # was in place is found now, not at the next tick.
                        await self._publish(self.runs.scan(force=True))
                    else:
                        self._top_ready = True
                    self._maybe_ready()
                if batch:
                    paths_changed = (path for _, path in batch)
                    await self.changed(FileEventBatch.of(unotest_dir, paths_changed))
                if made:
                    return

    def _maybe_ready(self) -> None:
        if self._sources_ready and self._top_ready:
            self.ready.set()

    async def _follow_live(self) -> None:
        """The runs that run now, read every :data:`LIVE_S` for their new lines (a step
        appended reaches a client as soon as a file event would bring it), and not at
        all while none runs."""
        while not self._stop.is_set():
            await self._sleep(LIVE_S)
            if self.runs.live or self.runs.waiting:
                await self._publish(self.runs.open_waiting())
                await self._publish(self.runs.poll_all())
                self.logs.sync(self.runs)
                for run_id in list(self.logs.followed):  # an ended one's grace: the tick's
                    await self._publish(self.logs.poll(run_id))

    async def changed(self, batch: FileEventBatch) -> None:
        """Publish what one burst of file changes means (the index told first)."""
        if self.index is not None and batch.kinds & _INDEX_KINDS:
            self.index.changed()
        await self._publish(batch.file_messages())
        for run_id in sorted(batch.runs):
            await self._publish(self.runs.poll(run_id))
            self.logs.sync(self.runs)
            await self._publish(self.logs.poll(run_id))

    def _watching(self, on: bool) -> None:
        if self.index is not None:
            self.index.watching(on)

    async def _tick(self) -> None:
        while not self._stop.is_set():
            await self._sleep(TICK_S)
            await self.tick()

    async def tick(self) -> None:
        """Publish new runs, lines a missed file event left behind, and runs whose
        runner died."""
        await self._publish(self.runs.scan())
        await self._publish(self.runs.poll_all())
        await self._publish(self.runs.check_alive())
        self.logs.sync(self.runs)
        await self._publish(self.logs.tick())

    async def _sleep(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stop.wait(), seconds)
