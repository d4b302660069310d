"""``/ws``: the live ``WsMessage`` stream, and the watcher that feeds it.

A client connects and receives every message the hub publishes from then on, one JSON
text frame each; it sends nothing (what it sends is read and ignored, so a close is
seen). A client that falls behind is closed with code 1013 and the reason, and resyncs
over REST. ``startup`` starts the project watcher (:mod:`unotest.viewer.file_events`) on
``ctx.hub``; ``shutdown`` stops it and closes every client.
"""

from __future__ import annotations

import asyncio
import contextlib
import json

from starlette.routing import BaseRoute, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketState

from unotest.viewer.context import ViewerContext
from unotest.viewer.file_events import FileEvents
from unotest.viewer.hub import Closed, Subscription

__all__ = ["BEHIND_CLOSE_CODE", "routes", "shutdown", "startup"]

BEHIND_CLOSE_CODE = 1013
""""Try again later": the client fell behind (or the server stops); resync over REST."""
_CLOSE_WAIT_S = 30.0
"""How long a dropped client that does not read has to take its close frame."""
_READY_WAIT_S = 5.0


def routes(ctx: ViewerContext) -> list[BaseRoute]:
    async def endpoint(websocket: WebSocket) -> None:
        await _serve(ctx, websocket)

    return [WebSocketRoute("/ws", endpoint, name="ws")]


async def startup(ctx: ViewerContext) -> None:
    """Start watching the project for ``ctx.hub`` (back once the watch is in place)."""
    ctx.hub.bind(asyncio.get_running_loop())
    watcher = FileEvents(ctx.root, ctx.hub, ctx.index)
    watcher.start()
    ctx.hub.on_stop(watcher.stop)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(watcher.ready.wait(), _READY_WAIT_S)


async def shutdown(ctx: ViewerContext) -> None:
    await ctx.hub.stop()


async def _serve(ctx: ViewerContext, websocket: WebSocket) -> None:
    await websocket.accept()
    subscription = ctx.hub.subscribe()
    tasks = [
        asyncio.create_task(_send(websocket, subscription)),
        asyncio.create_task(_drain_client(websocket)),
        asyncio.create_task(subscription.dropped.wait()),
    ]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        ctx.hub.unsubscribe(subscription)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
    if subscription.dropped.is_set():
        await _close(websocket, subscription.reason)


async def _send(websocket: WebSocket, subscription: Subscription) -> None:
    while True:
        message = await subscription.next()
        if isinstance(message, Closed):
            return
        try:
            await websocket.send_text(json.dumps(message, ensure_ascii=False))
        except (WebSocketDisconnect, RuntimeError, OSError):
            return


async def _drain_client(websocket: WebSocket) -> None:
    """Read until the client goes (the protocol has no client-to-server message here)."""
    while True:
        message = await websocket.receive()
        if message["type"] == "websocket.disconnect":
            return


async def _close(websocket: WebSocket, reason: str) -> None:
    """Close with the reason, not waiting long on a client that does not read."""
    if websocket.application_state != WebSocketState.CONNECTED:
        return
    with contextlib.suppress(Exception):
        await asyncio.wait_for(
            websocket.close(code=BEHIND_CLOSE_CODE, reason=reason[:120]), _CLOSE_WAIT_S
        )
