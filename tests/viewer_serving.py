"""A real uvicorn with some of the viewer's routes, and reading ``/ws`` until a message.

For tests that drive the runs routes and ``/ws`` without the whole ``unotest view``
process (``from viewer_serving import serving, receive_until, paused_in``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import uvicorn
from net import free_port
from starlette.applications import Starlette
from websockets.asyncio.client import ClientConnection

from unotest.viewer import routes_runs, routes_ws
from unotest.viewer.context import ViewerContext

Message = dict[str, Any]


@contextlib.asynccontextmanager
async def serving(ctx: ViewerContext) -> AsyncIterator[int]:
    """The runs routes and ``/ws`` (its watcher started and stopped) on a free port."""

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        await routes_ws.startup(ctx)
        try:
            yield
        finally:
            await routes_ws.shutdown(ctx)

    app = Starlette(routes=[*routes_runs.routes(ctx), *routes_ws.routes(ctx)], lifespan=lifespan)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    task = asyncio.create_task(server.serve())
    try:
        while not server.started:
            assert not task.done(), "the server did not start"
            await asyncio.sleep(0.02)
        yield port
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 10)


async def receive_until(
    ws: ClientConnection, seen: list[Message], wanted: Callable[[Message], bool], timeout_s: float
) -> Message:
    """Messages into ``seen`` until one is ``wanted``; what came instead when none did."""

    async def loop() -> Message:
        while True:
            message: Message = json.loads(await ws.recv())
            seen.append(message)
            if wanted(message):
                return message

    try:
        return await asyncio.wait_for(loop(), timeout_s)
    except TimeoutError:
        shown = [(m["kind"], m.get("runId"), m.get("line")) for m in seen[-40:]]
        raise AssertionError(f"never came; the last messages: {shown}") from None


def paused_in(run_id: str) -> Callable[[Message], bool]:
    return lambda m: (
        m["kind"] == "fs:run-step" and m["runId"] == run_id and m["event"]["kind"] == "paused"
    )
