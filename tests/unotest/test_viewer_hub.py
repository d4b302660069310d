"""unotest/viewer/hub.py: a client that never reads is dropped with a reason; the
others get every message, in order, without waiting for it."""

from __future__ import annotations

import asyncio
import threading

from runner import ws_messages
from runner.ws_messages import WsMessage
from unotest.viewer.hub import Closed, Hub, Subscription


async def _read(subscription: Subscription, count: int, got: list[WsMessage | Closed]) -> None:
    while len(got) < count:
        got.append(await subscription.next())


def test_a_client_that_never_reads_is_closed_and_the_other_gets_everything() -> None:
    async def scenario() -> tuple[list[WsMessage | Closed], Subscription, Hub]:
        hub = Hub(queue_size=10)
        fast, slow = hub.subscribe(), hub.subscribe()
        got: list[WsMessage | Closed] = []
        reader = asyncio.create_task(_read(fast, 100, got))
        for i in range(100):
            hub.publish(ws_messages.log_line("r1", "stdout", f"line {i}"))
            await asyncio.sleep(0)  # the fast reader takes what is there
        await asyncio.wait_for(reader, 5)
        return got, slow, hub

    got, slow, hub = asyncio.run(scenario())
    assert got == [ws_messages.log_line("r1", "stdout", f"line {i}") for i in range(100)]
    assert slow.dropped.is_set()
    assert "fell behind by 10 messages" in slow.reason
    # what the slow one holds is only the reason to close, nothing it fell behind on
    assert slow.queue.qsize() == 1
    assert slow.queue.get_nowait() == Closed(slow.reason)
    assert hub.clients == 1


def test_publish_from_another_thread_reaches_clients_and_close_all_drops_them() -> None:
    async def scenario() -> tuple[WsMessage | Closed, WsMessage | Closed]:
        hub = Hub()
        hub.bind(asyncio.get_running_loop())
        client = hub.subscribe()
        thread = threading.Thread(target=hub.publish_threadsafe, args=(ws_messages.bp_changed(),))
        thread.start()
        thread.join()
        first = await asyncio.wait_for(client.next(), 5)
        hub.close_all("the viewer is stopping")
        assert hub.clients == 0
        return first, await client.next()

    first, last = asyncio.run(scenario())
    assert first == {"kind": "fs:bp-changed"}
    assert last == Closed("the viewer is stopping")
