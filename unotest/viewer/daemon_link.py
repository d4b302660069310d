"""The viewer's link to the project's watch daemon (``unotest watch``), when one runs.

The daemon says where it listens in ``unotest/.daemon.json``; this link reads that file
(:func:`runner.watch.discovery.read_discovery`, once a second at most while it has no
connection), connects when its state is ``running``, and reads the daemon's NDJSON: a
``snapshot`` first, then every event. It folds them as the daemon's own state keeper
does (:class:`runner.watch.state.DaemonState`, plus ``running`` per file between
``run.started`` and ``run.finished``), so ``GET /api/watch`` answers at once, and
forwards each event to the page as ``watch:event`` (``watch:status`` when the daemon
comes or goes). A daemon that stops, restarts or appears later is found again by the
same loop; a connection that fails waits a backoff (1 s doubling to 5 s) unless the
discovery file names another daemon. Everything runs as one task of the server's event
loop and never waits on the daemon outside ``await``: the server is never blocked.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner import ws_messages
from runner.watch.discovery import DaemonInfo, Discovery, read_discovery
from runner.watch.state import DaemonState
from unotest.viewer.hub import Hub

__all__ = ["POLL_S", "DaemonLink", "LinkState", "watch_view"]

POLL_S = 1.0
"""How often the discovery file is read while no daemon is connected."""
BACKOFF_S = (1.0, 5.0)
"""The first and the longest wait after a failed connection to the same daemon."""
CONNECT_TIMEOUT_S = 3.0
SNAPSHOT_TIMEOUT_S = 10.0
"""How long a new connection may stay silent before its first line (the snapshot)."""
LINE_LIMIT = 32 * 1024 * 1024
"""The longest line read (a ``batch.finished`` carries every run's result)."""


@dataclass(frozen=True)
class _Failure:
    info: DaemonInfo
    wait: float
    until: float
    """The event loop's time before which this daemon is not tried again."""


class LinkState(DaemonState):
    """The daemon's state as its snapshot says, moved on by each later event."""

    @classmethod
    def from_snapshot(cls, state: dict[str, Any]) -> LinkState:
        folded = cls()
        folded.daemon = dict(state.get("daemon") or {})
        folded.running = bool(state.get("running"))
        folded.last_batch = state.get("lastBatch")
        folded.files = dict(state.get("files") or {})
        folded.totals = dict(state.get("totals") or folded.totals)
        return folded

    def __call__(self, event: dict[str, Any]) -> None:
        super().__call__(event)
        if event["type"] == "run.started":
            for test_file in event.get("testFiles", []):
                entry = self.files.setdefault(test_file, {})
                entry.update(status="running", runId=event.get("runId"))


class DaemonLink:
    """One viewer's link, from :meth:`start` to :meth:`stop`."""

    def __init__(self, root: Path, hub: Hub) -> None:
        self.root = root
        self.hub = hub
        self.discovery = Discovery("not-running")
        self.state: LinkState | None = None
        """The folded state while connected; ``None`` otherwise."""
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._failed: _Failure | None = None
        """The daemon a connection last failed to, and the wait before trying it again."""

    @property
    def connected(self) -> bool:
        return self.state is not None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="viewer-daemon-link")

    async def stop(self) -> None:
        self._stop.set()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
            self._task = None

    async def _run(self) -> None:
        while not self._stop.is_set():
            self._set_discovery(read_discovery(self.root))
            info = self.discovery.info
            if self.discovery.status == "running" and info is not None:
                wait = self._backoff_for(info)
                if wait == 0.0:
                    await self._session(info)
                    continue  # read the file again at once: the daemon may be restarting
            await self._sleep(POLL_S)

    def _backoff_for(self, info: DaemonInfo) -> float:
        """0 when it is time to connect; else keep waiting (polled, once a second)."""
        if self._failed is None or self._failed.info != info:
            return 0.0
        return max(0.0, self._failed.until - asyncio.get_running_loop().time())

    def _set_discovery(self, found: Discovery) -> None:
        before = (self.discovery.status, self.connected)
        self.discovery = found
        if found.status != "running":
            self.state = None
        if (found.status, self.connected) != before:
            self.hub.publish(ws_messages.watch_status(found.status, self.connected))

    async def _session(self, info: DaemonInfo) -> None:
        """One connection: the snapshot, then events until the daemon closes it."""
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(info["host"], info["port"], limit=LINE_LIMIT),
                CONNECT_TIMEOUT_S,
            )
        except (OSError, TimeoutError):
            self._note_failure(info)
            return
        snapshot = False
        try:
            snapshot = await self._read(reader)
        except Exception:  # a broken line, connection or event shape
            pass  # a fresh connection (a fresh snapshot) after the backoff; the link lives on
        finally:
            if not snapshot:
                self._note_failure(info)
            writer.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writer.wait_closed(), 1.0)
            self._disconnected()

    def _note_failure(self, info: DaemonInfo) -> None:
        """Wait before trying this daemon again: 1 s, then twice the last wait, 5 s at most."""
        wait = BACKOFF_S[0]
        if self._failed is not None and self._failed.info == info:
            wait = min(BACKOFF_S[1], 2 * self._failed.wait)
        self._failed = _Failure(info, wait, asyncio.get_running_loop().time() + wait)

    async def _read(self, reader: asyncio.StreamReader) -> bool:
        """Fold every line until the daemon closes the connection (it stopped, or dropped
        this client for falling behind); whether a snapshot came."""
        while True:
            if self.state is None:  # the daemon sends it at once; a silent one is not one
                line = await asyncio.wait_for(reader.readline(), SNAPSHOT_TIMEOUT_S)
            else:
                line = await reader.readline()
            if not line:
                return self.state is not None
            event = json.loads(line)
            if isinstance(event, dict) and isinstance(event.get("type"), str):
                self._take(event)

    def _take(self, event: dict[str, Any]) -> None:
        if event["type"] == "snapshot":
            was = self.connected
            self.state = LinkState.from_snapshot(event.get("state") or {})
            self._failed = None
            if not was:
                self.hub.publish(ws_messages.watch_status(self.discovery.status, True))
        elif self.state is not None:
            self.state(event)
        else:
            return  # nothing before the snapshot is expected; it would fold into nothing
        self.hub.publish(ws_messages.watch_event(event))

    def _disconnected(self) -> None:
        if self.state is None:
            return
        self.state = None
        self.hub.publish(ws_messages.watch_status(self.discovery.status, False))

    def view(self) -> dict[str, Any]:
        """What ``GET /api/watch`` answers now."""
        return watch_view(self.root, self.discovery, self.state)

    async def _sleep(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stop.wait(), seconds)


def watch_view(root: Path, found: Discovery, state: DaemonState | None) -> dict[str, Any]:
    """``GET /api/watch``'s answer (docs/viewer.md): the discovery file's status and, while
    connected, the daemon's folded state; ``files`` keyed by project-relative path (as
    ``/api/scenarios`` names them), their contents as the daemon sent them."""
    daemon_root = found.info["root"] if found.info is not None else root.as_posix()
    prefix = daemon_root.rstrip("/") + "/"
    files = {
        (path[len(prefix) :] if path.startswith(prefix) else path): entry
        for path, entry in (state.files.items() if state is not None else ())
    }
    return {
        "status": found.status,
        "connected": state is not None,
        "reason": found.reason,
        "daemon": dict(found.info) if found.info is not None else None,
        "running": state.running if state is not None else False,
        "lastBatch": state.last_batch if state is not None else None,
        "files": files,
        "totals": state.totals if state is not None else None,
    }
