"""``/ws/terminal``: the socket of the viewer's terminals (``terminals.TerminalHub``).

Each socket gets a hub of its own; its frames are ``{"event": "terminal", "data": ...}``
both ways. When the socket closes, for whatever reason, its terminals end with it. The
token, ``Host`` and ``Origin`` checks are the app's, around every route.
"""

from __future__ import annotations

import asyncio
import contextlib

from starlette.routing import BaseRoute, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from unotest.viewer.context import ViewerContext
from unotest.viewer.terminals import TerminalHub

TERMINAL_PATH = "/ws/terminal"


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
    """Hand every text frame to the hub until the client leaves or the sender fails."""
    while not sender.done():
        receiving = asyncio.ensure_future(websocket.receive())
        await asyncio.wait({receiving, sender}, return_when=asyncio.FIRST_COMPLETED)
        if not receiving.done():
            receiving.cancel()
            return
        message = receiving.result()
        if message["type"] == "websocket.disconnect":
            return
        text = message.get("text")
        if text is None:  # a binary frame: read as the same JSON text
            text = bytes(message.get("bytes") or b"").decode("utf-8", errors="replace")
        try:
            await hub.receive(text)
        except WebSocketDisconnect:
            return
