"""The daemon's socket channel: NDJSON on loopback TCP, a snapshot first.

TCP on 127.0.0.1 (one code path on every platform, debuggable with ``nc``), port 0
by default: the OS picks a free one and the discovery file says which. Each
connection subscribes to the bus *before* its snapshot is taken, in the same turn of
the event loop, so no event falls between the snapshot and the first event after it
and none is sent twice (the snapshot's ``seq`` is the last one it already includes).
A client that reads too slowly fills its bounded queue and is dropped by the bus; the
bus never waits for a socket. Whatever a client sends is read and ignored.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable
from typing import Any

from runner.watch.bus import EventBus, Subscription
from runner.watch.daemon_events import Event, error, snapshot

__all__ = ["SocketChannel", "encode"]


def encode(event: Event) -> bytes:
    """One event, one line."""
    return json.dumps(event, ensure_ascii=True, separators=(",", ":")).encode("ascii") + b"\n"


class SocketChannel:
    def __init__(self, bus: EventBus, state: Callable[[], dict[str, Any]]) -> None:
        self.bus = bus
        self.state = state
        self.server: asyncio.Server | None = None
        self.tasks: set[asyncio.Task[None]] = set()

    async def start(self, host: str, port: int) -> tuple[str, int]:
        """Listen; the address really bound (port 0 becomes the OS's choice)."""
        self.server = await asyncio.start_server(self._serve, host, port)
        name = self.server.sockets[0].getsockname()
        return str(name[0]), int(name[1])

    def snapshot(self) -> Event:
        """The socket-only first event: not published, numbered with the last ``seq``."""
        event = snapshot(self.state())
        return {"type": "snapshot", "seq": self.bus.seq, "timestamp": int(time.time() * 1000)} | {
            k: v for k, v in event.items() if k != "type"
        }

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self.tasks.add(task)
        subscription = self.bus.subscribe()
        first = self.snapshot()
        drain = asyncio.ensure_future(_ignore_input(reader))
        try:
            writer.write(encode(first))
            await self._pump(subscription, writer, drain)
        except (ConnectionError, OSError):
            pass
        finally:
            self.bus.unsubscribe(subscription)
            drain.cancel()
            writer.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writer.wait_closed(), 2)
            if task is not None:
                self.tasks.discard(task)

    async def _pump(
        self, subscription: Subscription, writer: asyncio.StreamWriter, drain: asyncio.Future[None]
    ) -> None:
        while True:
            await writer.drain()
            getting = asyncio.ensure_future(subscription.next())
            waiting: set[asyncio.Future[Any]] = {getting, drain}
            await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            if not getting.done():
                getting.cancel()
                return  # the client closed its end
            event = getting.result()
            if event is None:
                if subscription.dropped is not None:
                    writer.write(encode(self._dropped(subscription.dropped)))
                    await writer.drain()
                return
            writer.write(encode(event))

    def _dropped(self, reason: str) -> Event:
        """The last line a too-slow client gets (not on the bus: only it is concerned)."""
        event = error("socket", reason, None, "this connection is closed: reconnect for a snapshot")
        return {"type": "error", "seq": self.bus.seq, "timestamp": int(time.time() * 1000)} | event

    async def close(self) -> None:
        """Stop listening and end every connection (after what they were sent)."""
        if self.server is not None:
            self.server.close()
        self.bus.close()
        if self.tasks:
            await asyncio.wait(list(self.tasks), timeout=3)
        if self.server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.server.wait_closed(), 3)


async def _ignore_input(reader: asyncio.StreamReader) -> None:
    """Read until the client closes: that end is how we notice it left."""
    with contextlib.suppress(ConnectionError, OSError):
        while await reader.read(65536):
            pass
