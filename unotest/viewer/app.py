"""The viewer's ASGI application: every route module behind the security middleware.

``ROUTE_MODULES`` is the one list of route modules. Each exposes
``routes(ctx) -> list[BaseRoute]`` and may expose ``startup(ctx)``/``shutdown(ctx)``
coroutines (background tasks: watchers, tailers), run by the application's lifespan in
list order and stopped in reverse.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from types import ModuleType
from typing import Any, cast

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import BaseRoute

from unotest.viewer import (
    routes_daemon,
    routes_events,
    routes_project,
    routes_runs,
    routes_static,
    routes_terminal,
    routes_trace,
    routes_ws,
)
from unotest.viewer.answers import error_handlers
from unotest.viewer.context import ViewerContext
from unotest.viewer.security import SecurityMiddleware

__all__ = ["ROUTE_MODULES", "build_app"]

ROUTE_MODULES: tuple[ModuleType, ...] = (
    routes_project,
    routes_runs,
    routes_ws,
    routes_daemon,
    routes_terminal,
    routes_events,
    routes_trace,
    routes_static,
)

_Hook = Callable[[ViewerContext], Awaitable[None]]


def _hook(module: ModuleType, name: str) -> _Hook | None:
    found = getattr(module, name, None)
    return cast(_Hook, found) if callable(found) else None


def _lifespan(ctx: ViewerContext, modules: tuple[ModuleType, ...]) -> Callable[[Starlette], Any]:
    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        started: list[ModuleType] = []
        try:
            for module in modules:
                start = _hook(module, "startup")
                if start is not None:
                    await start(ctx)
                started.append(module)
            yield
        finally:
            for module in reversed(started):
                stop = _hook(module, "shutdown")
                if stop is not None:
                    await stop(ctx)

    return lifespan


def build_app(ctx: ViewerContext, modules: tuple[ModuleType, ...] = ROUTE_MODULES) -> Starlette:
    routes: list[BaseRoute] = []
    for module in modules:
        routes.extend(module.routes(ctx))
    return Starlette(
        routes=routes,
        middleware=[Middleware(SecurityMiddleware, ctx=ctx)],
        exception_handlers=cast(Any, error_handlers()),
        lifespan=_lifespan(ctx, modules),
    )
