"""Serving the viewer: uvicorn in this process on a socket bound beforehand.

Binding first (port 0 lets the OS choose) means the URL is known before the server
runs; ``serve`` calls ``on_ready`` once uvicorn listens (the lock file is written
then) and returns after a graceful stop on SIGINT or SIGTERM, with the signal that
stopped it, so the caller can clean up and choose the exit code.
"""

from __future__ import annotations

import asyncio
import signal
import socket
from collections.abc import Callable
from types import FrameType

import uvicorn

from runner.errors import UsageError
from unotest.viewer.app import build_app
from unotest.viewer.context import ViewerContext

__all__ = ["bind", "serve", "viewer_url"]


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (IPv6 when ``host`` holds a colon)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError as err:
        sock.close()
        raise UsageError(f"cannot listen on {host}:{port}: {err.strerror or err}") from None
    sock.set_inheritable(False)
    return sock


def viewer_url(ctx: ViewerContext, *, with_token: bool = True) -> str:
    """The URL to open: a wildcard bind is reached through 127.0.0.1 on this machine."""
    host = "127.0.0.1" if ctx.host in ("0.0.0.0", "::", "") else ctx.host
    if ":" in host:
        host = f"[{host}]"
    base = f"http://{host}:{ctx.port}/"
    return f"{base}?token={ctx.token}" if with_token else base


class _Signals:
    """Records SIGINT/SIGTERM while serving; uvicorn installs its own handlers on top,
    stops gracefully and re-raises the signal into these after restoring them."""

    def __init__(self) -> None:
        self.received: int | None = None
        self._old: dict[int, object] = {}

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.received = self.received or signum

    def __enter__(self) -> _Signals:
        for sig in (signal.SIGINT, signal.SIGTERM):
            self._old[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)  # type: ignore[arg-type]


async def _serve(server: uvicorn.Server, sock: socket.socket, on_ready: Callable[[], None]) -> None:
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started and not task.done():
        await asyncio.sleep(0.02)
    if server.started:
        on_ready()
    await task


def serve(ctx: ViewerContext, sock: socket.socket, on_ready: Callable[[], None]) -> int | None:
    """Serve until SIGINT/SIGTERM (or the server fails to start); the signal, if any."""
    ctx.port = sock.getsockname()[1]
    config = uvicorn.Config(
        build_app(ctx),
        log_level="warning",
        lifespan="on",
        ws="websockets-sansio",
        timeout_graceful_shutdown=5,
    )
    server = uvicorn.Server(config)
    with _Signals() as signals:
        asyncio.run(_serve(server, sock, on_ready))
    return signals.received
