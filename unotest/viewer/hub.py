"""The live hub: every ``WsMessage`` goes to every connected client, none waits for another.

Each client has a bounded queue. :meth:`Hub.publish` never blocks: a client whose queue
is full has fallen behind, so its queue is emptied and replaced by a :class:`Closed`
with the reason; its socket is closed and it resyncs over REST. The others go on.
``publish`` is for the event loop's thread; :meth:`Hub.publish_threadsafe` for others
(a launcher's reader thread).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from runner.ws_messages import WsMessage

__all__ = ["QUEUE_SIZE", "Closed", "Hub", "Subscription"]

QUEUE_SIZE = 1000
"""Messages one client may have waiting before it counts as fallen behind."""


@dataclass(frozen=True)
class Closed:
    """The last thing a dropped client's queue holds: why its socket closes."""

    reason: str


class Subscription:
    """One client's view of the hub: its queue and whether it was dropped."""

    def __init__(self, size: int) -> None:
        self.queue: asyncio.Queue[WsMessage | Closed] = asyncio.Queue(maxsize=size)
        self.dropped = asyncio.Event()
        self.reason = ""

    async def next(self) -> WsMessage | Closed:
        """The next message, or :class:`Closed` once the client was dropped."""
        return await self.queue.get()

    def offer(self, message: WsMessage) -> bool:
        """Queue ``message``; false (and the queue emptied) when the client is behind."""
        if self.dropped.is_set():
            return False
        try:
            self.queue.put_nowait(message)
        except asyncio.QueueFull:
            self.drop(f"fell behind by {self.queue.maxsize} messages; resync over REST")
            return False
        return True

    def drop(self, reason: str) -> None:
        if self.dropped.is_set():
            return
        while not self.queue.empty():
            self.queue.get_nowait()
        self.reason = reason
        self.queue.put_nowait(Closed(reason))
        self.dropped.set()


class Hub:
    """The clients of one viewer server."""

    def __init__(self, queue_size: int = QUEUE_SIZE) -> None:
        self.queue_size = queue_size
        self._clients: set[Subscription] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stoppers: list[Callable[[], Awaitable[None]]] = []

    @property
    def clients(self) -> int:
        return len(self._clients)

    def subscribe(self) -> Subscription:
        self._loop = asyncio.get_running_loop()
        subscription = Subscription(self.queue_size)
        self._clients.add(subscription)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        self._clients.discard(subscription)

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        """The loop :meth:`publish_threadsafe` hands messages to (set at startup)."""
        self._loop = loop

    def publish(self, message: WsMessage) -> None:
        """Send ``message`` to every client now; a client behind is dropped, not waited for."""
        for subscription in list(self._clients):
            if not subscription.offer(message):
                self._clients.discard(subscription)

    def publish_threadsafe(self, message: WsMessage) -> None:
        """:meth:`publish` from another thread (a no-op before any loop is known)."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self.publish, message)

    def close_all(self, reason: str) -> None:
        """Drop every client (the server is stopping)."""
        for subscription in list(self._clients):
            subscription.drop(reason)
        self._clients.clear()

    def on_stop(self, stopper: Callable[[], Awaitable[None]]) -> None:
        """Something feeding the hub (the watcher) to stop with it."""
        self._stoppers.append(stopper)

    async def stop(self, reason: str = "the viewer is stopping") -> None:
        """Stop what feeds the hub (last registered first), then drop every client."""
        while self._stoppers:
            await self._stoppers.pop()()
        self.close_all(reason)
