"""The project's REST routes: what it holds, its problems, its files, breakpoints,
collections, ``unotest/.env``.

Each route checks its input, calls one engine function (``runner.project.editing``,
``runner.project.envfile``) and shapes the answer; the engine's exceptions become
``{"error": …}`` answers in ``answers``. Scenarios, helpers, collections and problems
come from the index the viewer keeps (``ctx.index``, :mod:`unotest.viewer.project_index`)
until a project file changes; a save through these routes says so at once. Disk work runs in the
thread pool (sync endpoints do so by themselves), never on the event loop.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from runner import protocol
from runner.errors import UsageError
from runner.project.breakpoints_file import read_breakpoints, save_breakpoints
from runner.project.editing import (
    UNCHECKED,
    FileConflict,
    FileView,
    Unchecked,
    project_summary,
    save_source,
    source_view,
    write_collection,
)
from runner.project.envfile import read_env_view, save_env_file
from runner.project.index import ProjectIndex
from runner.project.root import hooks_key
from runner.protocol import HelperMeta
from unotest.console import diagnostic_json
from unotest.viewer.answers import json_body, json_response
from unotest.viewer.context import ViewerContext

__all__ = ["routes"]


def _file_json(view: FileView) -> dict[str, object]:
    return {
        "path": view.path,
        "text": view.text,
        "statements": [{"line": line, "col": col} for line, col in view.statements],
        "problems": [diagnostic_json(d) for d in view.problems],
        "version": view.version,
    }


def _base_version(body: dict[str, object]) -> str | Unchecked | None:
    """``baseVersion`` as ``save_source`` takes it: absent → no check (last save wins, as
    curl and older clients expect), ``null`` → the file must not exist yet, a string →
    the version the client read."""
    if "baseVersion" not in body:
        return UNCHECKED
    base = body["baseVersion"]
    if base is not None and not isinstance(base, str):
        raise UsageError("baseVersion must be the version the file was read at, or null")
    return base


def _conflict(err: FileConflict) -> Response:
    """409 with the sentence and what is on disk now, so the client can merge or choose."""
    body = {"error": str(err), "text": err.text, "version": err.version}
    return json_response(body, status=409)


_UPDATE_KEYS = ("version", "values")


def _added(data: object) -> list[tuple[str, str]]:
    """``added`` of an env save: ``[{"key": NAME, "value": TEXT}, ...]``."""
    if not isinstance(data, list):
        raise UsageError('"added" must be a list of {"key", "value"} objects')
    added = []
    for item in data:
        if not isinstance(item, dict) or set(item) != {"key", "value"}:
            raise UsageError('each of "added" is {"key": NAME, "value": TEXT}')
        key, value = item["key"], item["value"]
        if not isinstance(key, str) or not isinstance(value, str):
            raise UsageError("a new variable's key and value are strings")
        added.append((key, value))
    return added


def _object(data: object) -> dict[str, object]:
    if not isinstance(data, dict):
        raise UsageError("the body must be a JSON object")
    return data


class ProjectRoutes:
    """The routes of one server; every handler reads the project through ``ctx``."""

    def __init__(self, ctx: ViewerContext) -> None:
        self.ctx = ctx

    def _answer(self, route: str, make: Callable[[ProjectIndex], object]) -> Response:
        """``make(index)`` as JSON, from the index (and the bytes) this viewer keeps until
        a project file changes (:mod:`unotest.viewer.project_index`)."""
        return Response(self.ctx.index.answer(route, make), media_type="application/json")

    def project(self, request: Request) -> Response:
        return json_response(project_summary(self.ctx.project))

    def scenarios(self, request: Request) -> Response:
        return self._answer("scenarios", lambda index: index.scenario_metas)

    def helpers(self, request: Request) -> Response:
        """The helper files, then each folder's ``_hooks.js`` (named ``shop/_hooks``, as
        ``--break`` and ``.debugger.json`` name it): code that scenarios run."""

        def make(index: ProjectIndex) -> list[HelperMeta]:
            hooks: list[HelperMeta] = [
                {"name": hooks_key(h.folder), "path": h.file}
                for h in sorted(index.hooks_files.values(), key=lambda h: h.file)
            ]
            return [*index.helper_metas(), *hooks]

        return self._answer("helpers", make)

    def collections(self, request: Request) -> Response:
        return self._answer(
            "collections", lambda index: [entry.meta for entry in index.collections.values()]
        )

    def problems(self, request: Request) -> Response:
        return self._answer(
            "problems",
            lambda index: [diagnostic_json(d) for d in self.ctx.index.problems(index)],
        )

    def get_file(self, request: Request) -> Response:
        return json_response(_file_json(source_view(self.ctx.project, request.path_params["path"])))

    async def put_file(self, request: Request) -> Response:
        body = _object(await json_body(request))
        text = body.get("text")
        if not isinstance(text, str):
            raise UsageError('the body must be {"text": "<the whole file>"}')
        base = _base_version(body)
        path = request.path_params["path"]
        try:
            view = await run_in_threadpool(
                lambda: save_source(self.ctx.project, path, text, base_version=base)
            )
        except FileConflict as err:
            return _conflict(err)
        self.ctx.index.changed()  # its client reads back what it wrote, at once
        return json_response(_file_json(view))

    def get_breakpoints(self, request: Request) -> Response:
        return json_response(read_breakpoints(self.ctx.project))

    async def put_breakpoints(self, request: Request) -> Response:
        data = await json_body(request)
        saved = await run_in_threadpool(save_breakpoints, self.ctx.project, data)
        return json_response({**saved.file, "notes": saved.notes})

    async def post_collection(self, request: Request) -> Response:
        body = _object(await json_body(request))
        meta = await run_in_threadpool(
            write_collection,
            self.ctx.project,
            body.get("name"),
            body.get("description"),
            body.get("scenarios"),
            create=True,
        )
        self.ctx.index.changed()
        return json_response(meta, status=201)

    async def put_collection(self, request: Request) -> Response:
        name = request.path_params["name"]
        body = _object(await json_body(request))
        if body.get("name", name) != name:
            raise UsageError("the body's name differs from the path's; rename is not supported")
        meta = await run_in_threadpool(
            write_collection,
            self.ctx.project,
            name,
            body.get("description"),
            body.get("scenarios"),
            create=False,
        )
        self.ctx.index.changed()
        return json_response(meta)

    def get_env(self, request: Request) -> Response:
        """The ``EnvFile`` with, ours, ``exists`` and ``fileVersion`` (null when missing)."""
        return json_response(read_env_view(self.ctx.root / protocol.ENV_FILE))

    async def put_env(self, request: Request) -> Response:
        """An ``EnvUpdate`` with, ours, ``added`` (``[{key, value}]``, appended; a missing
        file is created) and ``baseVersion`` (the ``fileVersion`` read, null when it did
        not exist; absent: no check). 409 ``{error, fileVersion}`` when the file on disk
        is at another version."""
        body = _object(await json_body(request))
        added = _added(body.get("added", []))
        base = _base_version(body)
        update = cast(protocol.EnvUpdate, {k: v for k, v in body.items() if k in _UPDATE_KEYS})
        path = self.ctx.root / protocol.ENV_FILE
        try:
            saved = await run_in_threadpool(save_env_file, path, update, added, base)
        except FileConflict as err:
            return json_response({"error": str(err), "fileVersion": err.version}, status=409)
        return json_response(saved)


def routes(ctx: ViewerContext) -> list[BaseRoute]:
    r = ProjectRoutes(ctx)
    return [
        Route("/api/project", r.project, methods=["GET"]),
        Route("/api/scenarios", r.scenarios, methods=["GET"]),
        Route("/api/helpers", r.helpers, methods=["GET"]),
        Route("/api/collections", r.collections, methods=["GET"]),
        Route("/api/collections", r.post_collection, methods=["POST"]),
        Route("/api/collections/{name}", r.put_collection, methods=["PUT"]),
        Route("/api/problems", r.problems, methods=["GET"]),
        Route("/api/files/{path:path}", r.get_file, methods=["GET"]),
        Route("/api/files/{path:path}", r.put_file, methods=["PUT"]),
        Route("/api/breakpoints", r.get_breakpoints, methods=["GET"]),
        Route("/api/breakpoints", r.put_breakpoints, methods=["PUT"]),
        Route("/api/env", r.get_env, methods=["GET"]),
        Route("/api/env", r.put_env, methods=["PUT"]),
    ]
