"""Serving the viewer: uvicorn in this process on a socket bound beforehand.

Binding first (port 0 lets the OS choose) means the URL is known before the server
runs; ``bind_preferring`` takes the last viewer's port when it is free and no port was
asked for (so pages left open on that viewer reconnect to this one). ``serve`` calls
``on_ready`` once uvicorn listens (the lock file is written then) and returns after a
graceful stop on SIGINT or SIGTERM, with the signal that stopped it, so the caller can
clean up and choose the exit code.
"""

from __future__ import annotations

import asyncio
import signal
import socket
import threading
from collections.abc import Callable
from types import FrameType, ModuleType

import uvicorn

from runner.errors import UsageError
from unotest.viewer.app import ROUTE_MODULES, build_app
from unotest.viewer.context import ViewerContext

__all__ = ["bind", "bind_preferring", "serve", "viewer_url"]

_NOT_STARTED = "the viewer did not start (its startup failed; see the messages above)"


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (IPv6 when ``host`` holds a colon)."""
    if not 0 <= port <= 65535:
        raise UsageError(f"--port {port}: a port is a number from 0 (any free one) to 65535")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named, not left 0: asyncio sets TCP_NODELAY only on sockets whose
    # proto says TCP, and an accepted socket takes its listener's. Without it a small
    # answer on a kept-alive connection (headers and body, two writes) waited about
    # 40 ms for the client's delayed ACK (Nagle's algorithm).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except (OSError, UnicodeError) as err:  # UnicodeError: a host name IDNA refuses
        sock.close()
        reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        raise UsageError(f"cannot listen on {host}:{port}: {reason}") from None
    sock.set_inheritable(False)
    return sock


def bind_preferring(host: str, port: int, preferred: int | None) -> socket.socket:
    """:func:`bind`, except that ``port`` 0 (any free one) tries ``preferred`` first and
    falls back to any free port when it is taken; an explicit ``port`` is taken or
    refused as it is."""
    if port == 0 and preferred is not None:
        try:
            return bind(host, preferred)
        except UsageError:
            pass  # in use by another program: any free port, as without a preference
    return bind(host, port)


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
        if threading.current_thread() is not threading.main_thread():
            return self  # signals reach the main thread only (a test's server thread)
        for sig in (signal.SIGINT, signal.SIGTERM):
            self._old[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)  # type: ignore[arg-type]


async def _serve(
    ctx: ViewerContext, server: uvicorn.Server, sock: socket.socket, on_ready: Callable[[], None]
) -> None:
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started and not task.done():
        await asyncio.sleep(0.02)
    if not server.started:
        await task
        raise UsageError(_NOT_STARTED)
    on_ready()
    for later in ctx.when_serving:
        later()
    await task


def serve(
    ctx: ViewerContext,
    sock: socket.socket,
    on_ready: Callable[[], None],
    modules: tuple[ModuleType, ...] = ROUTE_MODULES,
) -> int | None:
    """Serve until SIGINT/SIGTERM; the signal that stopped it. A server that cannot
    start (a route module's startup failed) raises ``UsageError``."""
    ctx.port = sock.getsockname()[1]
    config = uvicorn.Config(
        build_app(ctx, modules),
        log_level="warning",
        lifespan="on",
        ws="websockets-sansio",
        timeout_graceful_shutdown=5,
    )
    server = uvicorn.Server(config)
    with _Signals() as signals:
        try:
            asyncio.run(_serve(ctx, server, sock, on_ready))
        except SystemExit:  # uvicorn's way of saying the lifespan's startup failed
            if server.started:
                raise
            raise UsageError(_NOT_STARTED) from None
    return signals.received
