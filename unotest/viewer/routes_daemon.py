"""``GET /api/watch``: whether a watch daemon (``unotest watch``) runs on this project,
and what its last batch chose and why, from the viewer's link to it.

``startup`` starts the link (:class:`unotest.viewer.daemon_link.DaemonLink`) on
``ctx.hub`` and keeps it in ``ctx.daemon_link`` (one per server, never module state),
so its ``watch:event``/``watch:status`` messages reach every ``/ws`` client;
``shutdown`` stops it and clears the field. The route only reads the link's folded
state: it never waits on the daemon.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from runner.watch.discovery import read_discovery
from unotest.viewer.answers import json_response
from unotest.viewer.context import ViewerContext
from unotest.viewer.daemon_link import DaemonLink, watch_view

__all__ = ["routes", "shutdown", "startup"]


def routes(ctx: ViewerContext) -> list[BaseRoute]:
    def watch(request: Request) -> Response:
        link = ctx.daemon_link
        if link is None:  # no lifespan started it (an app built without one): the file alone
            return json_response(watch_view(ctx.root, read_discovery(ctx.root), None))
        return json_response(link.view())

    return [Route("/api/watch", watch, methods=["GET"])]


async def startup(ctx: ViewerContext) -> None:
    link = DaemonLink(ctx.root, ctx.hub)
    ctx.daemon_link = link
    link.start()


async def shutdown(ctx: ViewerContext) -> None:
    link, ctx.daemon_link = ctx.daemon_link, None
    if link is not None:
        await link.stop()
