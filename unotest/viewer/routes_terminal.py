"""``/ws/terminal``: the socket of the viewer's terminals (``terminals.TerminalHub``).

Each socket gets a hub of its own; its frames are ``{"event": "terminal", "data": ...}``
both ways. When the socket closes, for whatever reason, its terminals end with it. The
token, ``Host`` and ``Origin`` checks are the app's, around every route.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from typing import TypeVar

from starlette.routing import BaseRoute, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from unotest.viewer.context import ViewerContext
from unotest.viewer.terminals import TerminalHub

TERMINAL_PATH = "/ws/terminal"
T = TypeVar("T")


def routes(ctx: ViewerContext) -> list[BaseRoute]:
    async def terminal_socket(websocket: WebSocket) -> None:
        await websocket.accept()
        hub = TerminalHub(ctx.root)
        sender = asyncio.create_task(hub.send_loop(websocket.send_text))
        try:
            await _receive_frames(websocket, hub, sender)
        finally:
            sender.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await sender
            await hub.close()

    return [WebSocketRoute(TERMINAL_PATH, terminal_socket)]


async def _receive_frames(
    websocket: WebSocket, hub: TerminalHub, sender: asyncio.Task[None]
) -> None:
    """Hand every text frame to the hub until the client leaves or the sender fails.

    Each wait races the sender: a client that stops reading and then vanishes fails the
    sender, which must end a handler waiting for room in the outbox too.
    """
    while True:
        message = await _unless_done(websocket.receive(), sender)
        if message is None or message["type"] == "websocket.disconnect":
            return
        text = message.get("text")
        if text is None:  # a binary frame: read as the same JSON text
            text = bytes(message.get("bytes") or b"").decode("utf-8", errors="replace")
        try:
            if await _unless_done(_handled(hub, text), sender) is None:
                return
        except WebSocketDisconnect:
            return


async def _handled(hub: TerminalHub, text: str) -> bool:
    await hub.receive(text)
    return True


async def _unless_done(work: Awaitable[T], sender: asyncio.Task[None]) -> T | None:
    """``work``'s result, or None (``work`` cancelled) once ``sender`` has ended."""
    task = asyncio.ensure_future(work)
    await asyncio.wait({task, sender}, return_when=asyncio.FIRST_COMPLETED)
    if not task.done():
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return None
    return task.result()
