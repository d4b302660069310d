"""The watch daemon's one event bus: every channel is a subscriber of it.

``publish`` stamps each event with the next ``seq`` and a ``timestamp`` (ms since the
epoch) and hands the same object, in the same order, to every subscriber, so the
socket, ``--json`` stdout and the readable lines can never disagree. A listener is
called in line (it must be quick: the state keeper, a printer); a subscription is a
bounded queue that ``publish`` never waits on: a client that falls behind is dropped
with a reason rather than slowing the bus and every other client down.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from runner.watch.daemon_events import Event

__all__ = ["EventBus", "Subscription"]

DEFAULT_QUEUE = 1000


@dataclass
class Subscription:
    """One client's queue; ``None`` in it means "closed" (``dropped`` says why)."""

    queue: asyncio.Queue[Event | None] = field(default_factory=lambda: asyncio.Queue(DEFAULT_QUEUE))
    dropped: str | None = None

    def offer(self, event: Event | None) -> bool:
        try:
            self.queue.put_nowait(event)
        except asyncio.QueueFull:
            return False
        return True

    async def next(self) -> Event | None:
        return await self.queue.get()


class EventBus:
    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.seq = 0
        self.clock = clock
        self.listeners: list[Callable[[Event], None]] = []
        self.subscriptions: list[Subscription] = []

    def listen(self, listener: Callable[[Event], None]) -> None:
        self.listeners.append(listener)

    def subscribe(self, size: int = DEFAULT_QUEUE) -> Subscription:
        subscription = Subscription(asyncio.Queue(size))
        self.subscriptions.append(subscription)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        if subscription in self.subscriptions:
            self.subscriptions.remove(subscription)

    def stamp(self, event: Event) -> Event:
        """``event`` with ``type``, ``seq`` and ``timestamp`` first (readable with nc)."""
        self.seq += 1
        head = {"type": event["type"], "seq": self.seq, "timestamp": int(self.clock() * 1000)}
        return {**head, **event}

    def publish(self, event: Event) -> Event:
        stamped = self.stamp(event)
        for listener in list(self.listeners):
            listener(stamped)
        for subscription in list(self.subscriptions):
            if not subscription.offer(stamped):
                self._drop(subscription)
        return stamped

    def _drop(self, subscription: Subscription) -> None:
        """A full queue: the client is too slow. Its queue is emptied so the close
        marker fits, and it leaves the bus."""
        subscription.dropped = f"the client fell {subscription.queue.maxsize} events behind"
        while not subscription.queue.empty():
            subscription.queue.get_nowait()
        subscription.offer(None)
        self.unsubscribe(subscription)

    def close(self) -> None:
        for subscription in list(self.subscriptions):
            if not subscription.offer(None):
                self._drop(subscription)
            self.unsubscribe(subscription)
