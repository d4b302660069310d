"""The page itself: ``GET /`` is ``index.html``, ``GET /static/<path>`` its modules,
styles and vendored files, all from the package (``unotest/viewer/static/``), so a
``pip install`` serves the page with no build step and no Node.

A client's path is resolved once under the static folder: ``..``, a hidden name, a
symlink leading out or anything but a regular file is 404. Content types come from one
table (``.js``/``.mjs`` as ``text/javascript``, which module scripts require), not from
the platform's mimetypes, which differ between systems. ``Cache-Control: no-cache``
makes the browser revalidate, so a new version of the page is seen at the next load.
These routes sit behind the security middleware like every other: ``/?token=`` sets the
cookie that the page's later requests and WebSockets carry.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import BaseRoute, Route

from unotest.viewer.answers import error_response
from unotest.viewer.context import ViewerContext

__all__ = ["CONTENT_TYPES", "STATIC_ROOT", "resolve_static", "routes"]

STATIC_ROOT = Path(__file__).resolve().parent / "static"

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".txt": "text/plain; charset=utf-8",
    ".woff2": "font/woff2",
}
_HEADERS = {"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"}


def resolve_static(
    relative: str, root: Path = STATIC_ROOT, types: Mapping[str, str] = CONTENT_TYPES
) -> Path | None:
    """The file ``relative`` names under ``root``, or None: an empty, hidden, ``..`` or
    backslashed part, a symlink leading out, a folder or a type not in ``types`` is not
    served (``routes_trace`` serves Playwright's trace viewer with this rule too)."""
    parts = relative.split("/")
    if not relative or any(p in ("", ".", "..") or p.startswith(".") or "\\" in p for p in parts):
        return None
    if "\x00" in relative:
        return None
    path = root.joinpath(*parts)
    try:
        resolved = path.resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    if not resolved.is_relative_to(root.resolve()) or not resolved.is_file():
        return None
    return resolved if resolved.suffix in types else None


def _file(path: Path) -> Response:
    return FileResponse(path, media_type=CONTENT_TYPES[path.suffix], headers=_HEADERS)


def routes(ctx: ViewerContext) -> list[BaseRoute]:
    del ctx  # the page is the same for every project; the middleware has checked the token

    async def index(request: Request) -> Response:
        return _file(STATIC_ROOT / "index.html")

    async def static(request: Request) -> Response:
        path = resolve_static(str(request.path_params["path"]))
        if path is None:
            return error_response(404, "nothing is served at this path")
        return _file(path)

    return [
        Route("/", index, methods=["GET", "HEAD"], name="index"),
        Route("/static/{path:path}", static, methods=["GET", "HEAD"], name="static"),
    ]
