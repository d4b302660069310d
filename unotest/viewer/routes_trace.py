"""Playwright's own trace viewer, served by this viewer: ``GET /trace/<path>``.

A run with a ``trace.zip`` (``trace: on``, or its failure bundle's with ``on-failure``)
opens in the trace viewer that ships inside the installed ``playwright`` package (its
static build, ``driver/package/lib/<bundler>/traceViewer/``), so nothing is fetched
from the network and no ``playwright show-trace`` process is started. The page links to
``/trace/index.html?trace=/api/runs/<runId>/files/trace.zip``: the trace viewer
registers its service worker (``sw.bundle.js``, scope ``/trace/``), which fetches that
URL, same-origin, with the viewer's cookie, and serves the snapshots from it.

The folder is found at run time from where the ``playwright`` package is installed
(never a fixed path, and without importing Playwright into the server); a Playwright
without one answers 404 in one sentence. A client's path is resolved under that folder
as the page's own files are (``routes_static.resolve_static``: no ``..``, no hidden
name, no link out, known types only). These routes sit behind the security middleware
like every other (the token, ``Host``, ``Origin``), whose policy for this path
(``security.trace_policy``) allows what the trace viewer needs and nothing besides;
``index.html`` carries its one inline script's hash in that policy.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import re
from functools import cache
from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import BaseRoute, Route

from unotest.viewer.answers import error_response
from unotest.viewer.context import ViewerContext
from unotest.viewer.routes_static import CONTENT_TYPES, resolve_static
from unotest.viewer.security import TRACE_PREFIX, trace_policy

__all__ = ["TRACE_TYPES", "inline_script_hashes", "routes", "trace_viewer_root"]

TRACE_TYPES = {
    **CONTENT_TYPES,
    ".ttf": "font/ttf",
    ".webmanifest": "application/manifest+json",
}
"""The page's types and the two more the trace viewer ships (its icon font, its manifest)."""
_HEADERS = {"Cache-Control": "no-cache"}
_INLINE_SCRIPT = re.compile(rb"<script>(.*?)</script>", re.DOTALL)


@cache
def trace_viewer_root() -> Path | None:
    """The installed ``playwright`` package's static trace viewer, or None: found from
    the package's place (``importlib`` finds it without importing it), in whichever
    bundler's folder this version ships it (``lib/vite/``, ``lib/webpack/`` before)."""
    spec = importlib.util.find_spec("playwright")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        lib = Path(location) / "driver" / "package" / "lib"
        for index in sorted(lib.glob("*/traceViewer/index.html")):
            return index.parent.resolve()
    return None


def inline_script_hashes(html: bytes) -> list[str]:
    """The base64 SHA-256 of each inline ``<script>`` of ``html``, for a CSP that allows
    exactly these (the trace viewer's ``index.html`` has one: its ``file://`` notice)."""
    return [
        base64.b64encode(hashlib.sha256(body).digest()).decode("ascii")
        for body in _INLINE_SCRIPT.findall(html)
    ]


def _index(root: Path) -> Response:
    """``index.html`` with the policy that allows its inline script by hash."""
    html = (root / "index.html").read_bytes()
    policy = trace_policy(inline_script_hashes(html))
    headers = {**_HEADERS, "Content-Security-Policy": policy}
    return Response(html, media_type=TRACE_TYPES[".html"], headers=headers)


def routes(ctx: ViewerContext) -> list[BaseRoute]:
    del ctx  # the same trace viewer for every project; the run's trace comes by its URL

    async def trace(request: Request) -> Response:
        root = trace_viewer_root()
        if root is None:
            return error_response(404, "the installed Playwright has no trace viewer")
        relative = str(request.path_params.get("path", "")) or "index.html"
        path = resolve_static(relative, root, TRACE_TYPES)
        if path is None:
            return error_response(404, "nothing is served at this path")
        if path == root / "index.html":
            return _index(root)
        return FileResponse(path, media_type=TRACE_TYPES[path.suffix], headers=_HEADERS)

    # ``{path:path}`` matches the empty path too: ``/trace/`` is ``index.html``.
    return [Route(TRACE_PREFIX + "{path:path}", trace, methods=["GET", "HEAD"], name="trace")]
