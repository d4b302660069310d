"""The viewer's guard, one ASGI middleware in front of every route.

Eval and terminals are code execution, so (Jupyter's model):

- every HTTP and WebSocket request carries the viewer's token (made at launch, or kept from
  the last viewer on the same port: ``unotest/.cache/viewer.json``): ``?token=`` (answered
  with an HttpOnly, SameSite=Strict cookie so the page's later requests need no query),
  the cookie, or ``Authorization: Bearer``; otherwise 401;
- ``Host`` names the bound host, ``localhost``, ``127.0.0.1`` or ``[::1]`` with the
  bound port (a DNS-rebound name is refused, 403); a wildcard bind (``--host 0.0.0.0``)
  also accepts this machine's own names and addresses;
- an ``Origin``, when sent (browsers always send one on a WebSocket), is the viewer's
  own origin (403 otherwise);
- bodies are bounded: ``PUT /api/files/…`` a source file and some JSON around it,
  every other body 1 MB (413);
- no page may frame the viewer (``X-Frame-Options: DENY``, CSP ``frame-ancestors
  'none'``): cookies ignore ports, so a page another local server serves (the app
  under test) would otherwise show the logged-in viewer in a frame and click its Run
  or terminal buttons for the user; and no request the page makes carries its
  address, whose first load holds the token (``Referrer-Policy: no-referrer``);
- Playwright's trace viewer (``/trace/``, :mod:`unotest.viewer.routes_trace`) runs
  under a policy of its own, on that path only (:func:`trace_policy`): everything from
  this origin and nothing from anywhere else (no network), styles inline (React's),
  images and media from ``data:``/``blob:`` (screenshots), its service worker and its
  snapshot frames from ``/trace/`` (a blank snapshot is a ``data:`` frame, which has
  no origin); ``frame-ancestors 'none'`` and the other guards stay. Its service
  worker (scope ``/trace/``: it sees no other path's requests) fetches the run's
  ``trace.zip`` same-origin, so with the cookie, as the page's own requests are.
"""

from __future__ import annotations

import contextlib
import secrets
import socket
from collections.abc import Iterable
from urllib.parse import parse_qs, urlsplit

from starlette.datastructures import Headers
from starlette.requests import cookie_parser
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from runner.project.index import MAX_SOURCE_BYTES
from unotest.viewer.answers import error_response
from unotest.viewer.context import ViewerContext

__all__ = [
    "FILE_BODY_LIMIT",
    "OTHER_BODY_LIMIT",
    "TRACE_PREFIX",
    "SecurityMiddleware",
    "cookie_name",
    "new_token",
    "trace_policy",
]

OTHER_BODY_LIMIT = 1024 * 1024
FILE_BODY_LIMIT = MAX_SOURCE_BYTES + 64 * 1024
"""A source file of the largest size, with room for its JSON quoting and key."""
_LOCAL_NAMES = ("localhost", "127.0.0.1", "[::1]")
_GUARD_HEADERS = (
    (b"x-frame-options", b"DENY"),
    (b"content-security-policy", b"frame-ancestors 'none'"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-content-type-options", b"nosniff"),
)
"""On every HTTP answer, a refusal included."""
TRACE_PREFIX = "/trace/"
"""Where Playwright's trace viewer is served: the one path with a policy of its own."""


def trace_policy(script_hashes: Iterable[str] = ()) -> str:
    """The Content-Security-Policy of the trace viewer's path: what Playwright's static
    trace viewer needs from this origin and nothing from another; ``script_hashes``
    (base64 SHA-256 digests) allow the inline scripts of the page that carries them
    (its ``index.html``), instead of ``'unsafe-inline'``."""
    scripts = " ".join(["'self'", *(f"'sha256-{digest}'" for digest in script_hashes)])
    return "; ".join(
        (
            "default-src 'self'",
            f"script-src {scripts}",
            "style-src 'self' 'unsafe-inline'",
            "img-src 'self' data: blob:",
            "media-src 'self' data: blob:",
            "font-src 'self' data:",
            "connect-src 'self'",
            "worker-src 'self'",
            "frame-src 'self' data:",
            "object-src 'none'",
            "base-uri 'self'",
            "form-action 'none'",
            "frame-ancestors 'none'",
        )
    )


_TRACE_GUARD_HEADERS = tuple(
    (name, trace_policy().encode() if name == b"content-security-policy" else value)
    for name, value in _GUARD_HEADERS
)


def _guard_headers(path: str) -> tuple[tuple[bytes, bytes], ...]:
    """The guard headers of an answer at ``path``: the trace viewer's path has its own
    policy (which keeps ``frame-ancestors 'none'``); every other path the plain one."""
    return _TRACE_GUARD_HEADERS if path.startswith(TRACE_PREFIX) else _GUARD_HEADERS


def new_token() -> str:
    """192 random bits, URL-safe."""
    return secrets.token_urlsafe(24)


def cookie_name(port: int) -> str:
    """Cookies ignore ports: two viewers on one machine each keep their own."""
    return f"unotest_token_{port}"


_WILDCARDS = ("0.0.0.0", "::", "")


def _machine_names() -> set[str]:
    """This machine's host names and addresses: how another machine reaches a wildcard bind."""
    names = {socket.gethostname(), socket.getfqdn()}
    for name in list(names):
        with contextlib.suppress(OSError, UnicodeError):
            names.update(str(info[4][0]) for info in socket.getaddrinfo(name, None))
    return {n for n in names if n}


def allowed_hosts(ctx: ViewerContext) -> set[str]:
    """``name:port`` for the bound host and the loopback names (a bare name on port 80,
    which a browser leaves out of ``Host``); a wildcard bind adds this machine's names
    and addresses, which is how other machines reach it."""
    names = {*_LOCAL_NAMES, ctx.host}
    if ctx.host in _WILDCARDS:
        names |= _machine_names()
    names = {f"[{n}]" if ":" in n and not n.startswith("[") else n for n in names - {*_WILDCARDS}}
    hosts = {f"{name}:{ctx.port}".lower() for name in names}
    return hosts | ({name.lower() for name in names} if ctx.port == 80 else set())


class SecurityMiddleware:
    def __init__(self, app: ASGIApp, ctx: ViewerContext) -> None:
        self.app = app
        self.ctx = ctx
        self._hosts: tuple[int, set[str]] | None = None

    def hosts(self) -> set[str]:
        """``allowed_hosts``, computed once per bound port (name lookups are not free)."""
        if self._hosts is None or self._hosts[0] != self.ctx.port:
            self._hosts = (self.ctx.port, allowed_hosts(self.ctx))
        return self._hosts[1]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        if scope["type"] == "http":
            send = _guarded(send, _guard_headers(str(scope.get("path", ""))))
        refusal = self._refusal(scope, headers)
        if refusal is not None:
            await self._refuse(scope, receive, send, *refusal)
            return
        query_token = self._query_token(scope)
        if scope["type"] == "websocket":
            await self.app(scope, receive, send)
            return
        body = await _bounded_body(receive, _limit(scope))
        if body is None:
            await self._refuse(scope, receive, send, 413, "the request body is too large")
            return
        replay = _replay(body, receive)
        await self.app(scope, replay, self._with_cookie(send) if query_token else send)

    def _refusal(self, scope: Scope, headers: Headers) -> tuple[int, str] | None:
        hosts = self.hosts()
        if headers.get("host", "").lower() not in hosts:
            return 403, "the Host header does not name this viewer"
        origin = headers.get("origin")
        if origin is not None:
            parts = urlsplit(origin)
            if parts.scheme != "http" or parts.netloc.lower() not in hosts:
                return 403, "the Origin is not this viewer's own"
        if not self._has_token(scope, headers):
            return 401, "a valid token is required (open the URL 'unotest view' printed)"
        return None

    def _has_token(self, scope: Scope, headers: Headers) -> bool:
        given = [self._query_token(scope)]
        given.append(cookie_parser(headers.get("cookie", "")).get(cookie_name(self.ctx.port)))
        auth = headers.get("authorization", "")
        if auth[:7].lower() == "bearer ":
            given.append(auth[7:].strip())
        expected = self.ctx.token.encode()
        return any(g is not None and secrets.compare_digest(g.encode(), expected) for g in given)

    @staticmethod
    def _query_token(scope: Scope) -> str | None:
        query = scope.get("query_string", b"").decode("latin-1")
        values = parse_qs(query).get("token")
        return values[0] if values else None

    def _with_cookie(self, send: Send) -> Send:
        cookie = f"{cookie_name(self.ctx.port)}={self.ctx.token}; Path=/; HttpOnly; SameSite=Strict"

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [*message.get("headers", []), (b"set-cookie", cookie.encode())]
                message = {**message, "headers": headers}
            await send(message)

        return sending

    @staticmethod
    async def _refuse(scope: Scope, receive: Receive, send: Send, status: int, text: str) -> None:
        if scope["type"] == "websocket":
            # Closing before accepting: the server answers the handshake with 403.
            await send({"type": "websocket.close", "code": 1008, "reason": text})
            return
        await error_response(status, text)(scope, receive, send)


def _guarded(send: Send, guards: tuple[tuple[bytes, bytes], ...]) -> Send:
    """``send`` adding the guard headers to the answer's start (once each: a route's own
    policy is kept, as the trace viewer's ``index.html`` adds its script's hash to
    :func:`trace_policy`)."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            given = list(message.get("headers", []))
            names = {name.lower() for name, _ in given}
            given += [(name, value) for name, value in guards if name not in names]
            message = {**message, "headers": given}
        await send(message)

    return sending


def _limit(scope: Scope) -> int:
    if scope.get("method") == "PUT" and str(scope.get("path", "")).startswith("/api/files/"):
        return FILE_BODY_LIMIT
    return OTHER_BODY_LIMIT


async def _bounded_body(receive: Receive, limit: int) -> bytes | None:
    """The whole body, or None once it passes ``limit`` (the rest is never read)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    """The body read once, then the real channel (which reports the disconnect)."""
    sent = False

    async def replaying() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replaying
