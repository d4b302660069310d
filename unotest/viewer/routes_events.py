"""``/api/events``: the version-1 event envelopes of every run, live, as server-sent
events whose event name is the envelope's ``type`` (docs/reporting.md).

Each ``unotest e2e`` and ``collection`` appends its envelopes to ``events.ndjson`` in
its run directory as it emits them (:class:`runner.store.event_log.LiveFile`). A client
here gets every line appended from the moment it connects, from every run, in the
order each run wrote them: the files present at connection are read from their end,
the ones that appear later from their start. ``curl -N`` prints them as they come.
A comment line every few seconds keeps idle proxies from closing the stream.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path

from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import BaseRoute, Route

from runner.store import envelope
from runner.store.envelope import Envelope
from runner.store.event_log import LIVE_EVENTS_FILE
from runner.store.tail import LineTailer
from unotest.viewer.context import ViewerContext

__all__ = ["POLL_S", "routes"]

POLL_S = 0.2
KEEPALIVE_S = 15.0


def routes(ctx: ViewerContext) -> list[BaseRoute]:
    async def endpoint(request: Request) -> StreamingResponse:
        return StreamingResponse(
            _stream(ctx.project.runs_dir, request),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    return [Route("/api/events", endpoint, methods=["GET"], name="events")]


def _live_files(runs_dir: Path) -> list[tuple[Path, int]]:
    """Every run's ``events.ndjson`` and its size, the oldest written first."""
    found: list[tuple[float, Path, int]] = []
    try:
        entries = list(os.scandir(runs_dir))
    except OSError:
        return []
    for entry in entries:
        path = Path(entry.path) / LIVE_EVENTS_FILE
        try:
            stat = path.stat()
        except OSError:
            continue
        found.append((stat.st_mtime, path, stat.st_size))
    return [(path, size) for _, path, size in sorted(found)]


class _Follower:
    """The tailers of every live file, and the envelopes they have added since."""

    def __init__(self, runs_dir: Path) -> None:
        self.runs_dir = runs_dir
        self.tailers: dict[Path, LineTailer] = {}
        for path, size in _live_files(runs_dir):
            self.tailers[path] = LineTailer(path, size)  # what was there before is not live

    def new_envelopes(self) -> list[Envelope]:
        """Only files that grew are opened; a file that went (pruned) is forgotten."""
        files = _live_files(self.runs_dir)
        present = {path for path, _ in files}
        for path in [p for p in self.tailers if p not in present]:
            del self.tailers[path]
        found: list[Envelope] = []
        for path, size in files:
            tailer = self.tailers.setdefault(path, LineTailer(path))
            if size == tailer.offset:
                continue
            for line in tailer.read():
                event = _envelope(line)
                if event is not None:
                    found.append(event)
        return found


def _envelope(line: bytes) -> Envelope | None:
    """A line that is a version-1 envelope; anything else (another version, a cut
    line) is not ours to pass on."""
    try:
        value = json.loads(line)
    except ValueError:
        return None
    if not isinstance(value, dict) or value.get("protocol_version") != envelope.PROTOCOL_VERSION:
        return None
    if not isinstance(value.get("type"), str) or not isinstance(value.get("data"), dict):
        return None
    return value  # type: ignore[return-value]


async def _stream(runs_dir: Path, request: Request) -> AsyncIterator[str]:
    follower = await asyncio.to_thread(_Follower, runs_dir)
    yield ": unotest events, protocol version 1\n\n"
    quiet_since = time.monotonic()
    while not await request.is_disconnected():
        events = await asyncio.to_thread(follower.new_envelopes)
        for event in events:
            yield envelope.sse_frame(event)
        if events:
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since > KEEPALIVE_S:
            quiet_since = time.monotonic()
            yield ": keep-alive\n\n"
        await asyncio.sleep(POLL_S)
