"""The runs REST routes: listing and reading runs, their files, starting runs, driving them.

* ``GET /api/runs?limit=&before=&scenario=&status=`` → ``RunMeta[]``, newest first, a
  page at a time (:class:`runner.store.run_list.RunLister`: about a page's reads, whatever
  the number of runs): ``limit`` runs (default 100, at most 1,000), older than the run
  ``before``, of one scenario or collection (``scenario``, or ``ref`` as before), with
  one status; when older runs match too, a ``Link: </api/runs?…&before=<runId>>;
  rel="next"`` header names the next page. A ``before`` whose run is gone is placed by
  the time in its id; one that names no run and has no such time is refused (400), as a
  ``limit`` that is not a whole number from 1. ``?latest=1``: the newest run of each
  scenario and collection instead (the tree's badges);
* ``GET /api/runs/<runId>`` → ``{meta, manifest, events, runtime, children, files, bundle,
  attemptChain, restartOf, restartedAs, latestRestart, request}`` (``files``: the run directory's
  own files, ours; ``eventsOmitted`` and ``lineCount``, the whole lines of steps.jsonl
  read, which ``fs:run-step``'s ``lineIndex`` is compared with; the links as
  :func:`runner.store.links.run_links` gives them; ``staleSources``, the files a live
  scenario run uses that changed on disk since it read them; ``request``, what this
  viewer started the run with, or null: see below);
* ``GET /api/runs/<runId>/files/<name>`` → a file of the run directory (or its
  ``screenshot/`` and ``pages/`` folders) or of its failure bundle, nothing else;
* ``GET /api/runs/<runId>/page-log?network=<offset>&console=<offset>`` → ``{network,
  console}``, each the entries of the run's ``network.jsonl`` / ``console.jsonl`` from
  that byte offset (default 0) and where to ask from next
  (:func:`runner.store.page_log.read_page_log`): the page follows a run's requests and
  console messages with it, live or over;
* ``POST /api/runs`` with a ``RunRequest`` → ``201 {runId}`` (a
  :class:`runner.launch.request.LaunchRequest` started by
  :func:`runner.launch.start.start_run`; the run's output lines go to ``/ws`` as
  ``log:line``, read from its logs by :mod:`unotest.viewer.run_logs`). Besides the
  protocol's fields a request may carry ``retries`` (``--retries N``, the CLI's option)
  and ``step``. What the run was started with is
  kept in its directory as ``request.json`` (ours: the runner records none of its
  options), so "Run again" repeats it;
* ``POST /api/runs/<runId>/commands`` with a ``DbgCommand`` without an ``id`` →
  ``202 {id}``: one whole line appended to the run's ``commands.jsonl``; a collection
  run takes ``abort`` alone (its process is stopped, as ``unotest dbg RUN abort`` does).

Each handler checks its input, calls the engine (``runner.store.detail`` reads a run,
``runner.launch.start`` starts one, ``runner.debug.client`` drives one) and shapes the
answer. What is served from a run goes through the project's secret
masker once more (runs are masked when written: this is the second lock). Errors are
``{"error": "<one sentence>"}`` with 400, 404 or 409, answered here, so the routes need
nothing of the application around them.
"""

from __future__ import annotations

import contextlib
import re
import threading
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import cast
from urllib.parse import urlencode

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import BaseRoute, Route

from runner import protocol
from runner.debug.client import append_command, send_command
from runner.errors import UnotestError, UsageError
from runner.launch.request import LaunchRequest
from runner.launch.start import start_run
from runner.project.secrets import EnvSecrets, SecretMasker
from runner.protocol import JSONObject
from runner.store.detail import exact_run_dir, run_detail, run_file
from runner.store.page_log import read_page_log
from runner.store.run_list import STATUSES, RunLister, RunQuery
from runner.store.runs import run_meta
from unotest.viewer.answers import error_response, json_body, json_response, status_for
from unotest.viewer.context import ViewerContext

__all__ = ["MAX_EVENTS", "routes", "startup"]

RUNS_PAGE = 100
"""``GET /api/runs`` gives this many runs when no ``limit`` is asked for."""
MAX_RUNS_PAGE = 1_000
"""... and at most this many (a larger ``limit`` gives this many, and the next page)."""

_ID_TAIL = re.compile(r"-[0-9a-z]{8}-[0-9a-f]{6}\Z")
"""How the ids :func:`runner.protocol.make_run_id` makes end: the time the run's directory
was made (8 base-36 digits), 3 random bytes. A ``before`` so named is placed by that time,
its directory there or gone."""

MAX_EVENTS = 5_000
"""``GET /api/runs/<runId>`` gives the last this many events (``eventsOmitted`` says how
many came before); the page follows the rest live on ``/ws``."""
MAX_MASKED_BYTES = 32 * 1024 * 1024
"""A text file up to this is masked again when served; a bigger one is served as
written (masked by its writer)."""
_TEXT_TYPES = {
    ".json": "application/json",
    ".jsonl": "application/x-ndjson",
    ".log": "text/plain; charset=utf-8",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".txt": "text/plain; charset=utf-8",
    "": "text/plain; charset=utf-8",  # heartbeat
}
_BINARY_TYPES = {".png": "image/png", ".zip": "application/zip", ".jpeg": "image/jpeg"}


class _Refused(Exception):
    """An answer other than 2xx: its status and its one sentence."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


Handler = Callable[[Request], Awaitable[Response]]


def _answering(handler: Handler) -> Handler:
    """The handler with every refusal and engine error answered as ``{"error": …}``."""

    async def answer(request: Request) -> Response:
        try:
            return await handler(request)
        except _Refused as refused:
            return error_response(refused.status, str(refused))
        except UnotestError as err:
            return error_response(status_for(err), str(err))

    return answer


def _object(data: object) -> JSONObject:
    if not isinstance(data, dict):
        raise _Refused(400, "the body must be a JSON object")
    return data


class RunRoutes:
    """The runs routes of one server: the project and the live hub come from ``ctx``."""

    def __init__(self, ctx: ViewerContext) -> None:
        self.ctx = ctx
        runs_dir = ctx.project.runs_dir
        self.lister = RunLister.of(runs_dir)  # the one run_detail's queries use too
        self.newest = ctx.newest_runs
        self.secrets = EnvSecrets(ctx.root)  # .env read again only when it changed

    # --- shared -------------------------------------------------------------------

    def masker(self) -> SecretMasker:
        return self.secrets.masker()

    def run_dir(self, run_id: str) -> Path:
        """The directory of an exact run id; 404 for anything else."""
        return exact_run_dir(self.ctx.project, run_id)

    # --- reading --------------------------------------------------------------------

    async def list(self, request: Request) -> Response:
        if request.query_params.get("latest") in ("1", "true"):
            return json_response(await run_in_threadpool(self.newest.latest))
        query = _run_query(request.query_params)
        if query.before is not None:
            await run_in_threadpool(self._placeable, query.before)
        page = await run_in_threadpool(self.lister.page, query)
        response = json_response(page.runs)
        if page.next_before is not None:
            asked = {"limit": str(query.limit), "scenario": query.ref, "status": query.status}
            kept = {k: v for k, v in asked.items() if v is not None}
            following = urlencode({**kept, "before": page.next_before})
            response.headers["Link"] = f'</api/runs?{following}>; rel="next"'
        return response

    def _placeable(self, before: str) -> None:
        """Refuse a ``before`` the lister could only place before every run: one that
        names no run directory and no time (a run removed by hand from a folder of its
        own naming, a typo). It answered an empty last page, as if no run were older."""
        if _ID_TAIL.search(before) or any(c in before for c in "/\\\0") or before in (".", ".."):
            return  # placed by its id's time; or no run id, which the lister refuses
        if before.startswith(".") or not (self.ctx.project.runs_dir / before).is_dir():
            raise _Refused(
                400,
                f"before={before!r} names no run here, nor a time to page from "
                "(a run id ends in -<time>-<6 hex digits>)",
            )

    async def detail(self, request: Request) -> Response:
        run_dir = self.run_dir(request.path_params["run_id"])
        return json_response(await run_in_threadpool(self._detail, run_dir))

    def _detail(self, run_dir: Path) -> JSONObject:
        detail = run_detail(self.ctx.project, run_dir, MAX_EVENTS)
        return cast(JSONObject, self.masker().mask_data(detail))

    async def file(self, request: Request) -> Response:
        run_dir = self.run_dir(request.path_params["run_id"])
        name = request.path_params["name"]
        path = await run_in_threadpool(run_file, self.ctx.root, run_dir, name)
        suffix = path.suffix.lower()
        if suffix in _BINARY_TYPES:
            return FileResponse(path, media_type=_BINARY_TYPES[suffix])
        media = _TEXT_TYPES.get(suffix, "text/plain; charset=utf-8")
        if path.stat().st_size > MAX_MASKED_BYTES:
            return FileResponse(path, media_type=media)
        text = await run_in_threadpool(path.read_text, "utf-8", "replace")
        return Response(self.masker().mask(text), media_type=media)

    async def page_log(self, request: Request) -> Response:
        run_dir = self.run_dir(request.path_params["run_id"])
        starts: dict[str, int] = {}
        for kind in ("network", "console"):
            text = request.query_params.get(kind, "0")
            if not (text.isascii() and text.isdigit()):
                raise _Refused(400, f"{kind} must be a byte offset (a whole number from 0)")
            starts[kind] = int(text)
        return json_response(await run_in_threadpool(self._page_log, run_dir, starts))

    def _page_log(self, run_dir: Path, starts: dict[str, int]) -> JSONObject:
        answer = {
            "network": read_page_log(run_dir, "network", starts["network"]),
            "console": read_page_log(run_dir, "console", starts["console"]),
        }
        return cast(JSONObject, self.masker().mask_data(answer))

    # --- starting and driving -----------------------------------------------------------

    async def start(self, request: Request) -> Response:
        body = _object(await json_body(request))
        run = await start_run(
            self.ctx.root,
            LaunchRequest.from_json(body),
            mask=self.masker().mask,
        )
        return json_response({"runId": run.run_id}, 201)

    async def command(self, request: Request) -> Response:
        run_dir = self.run_dir(request.path_params["run_id"])
        body = _object(await json_body(request))
        if "id" in body:
            raise _Refused(400, "leave the id out: the server gives every command a fresh one")
        if not isinstance(body.get("cmd"), str):
            raise _Refused(400, 'a command needs a "cmd" string')
        ident = f"viewer-{uuid.uuid4().hex[:12]}"
        await run_in_threadpool(self._append_command, run_dir, {"id": ident, **body})
        return json_response({"id": ident}, 202)

    def _append_command(self, run_dir: Path, command: JSONObject) -> None:
        meta = run_meta(run_dir)
        if meta is not None and meta["kind"] == "collection":
            self._abort_collection(run_dir, meta, command)
            return
        if meta is None or meta["status"] != "running":
            raise _Refused(409, f"run {run_dir.name} has finished: there is nothing to drive")
        append_command(run_dir, command)

    @staticmethod
    def _abort_collection(run_dir: Path, meta: protocol.RunMeta, command: JSONObject) -> None:
        """A collection run has no debugger: ``abort`` stops it as ``unotest dbg RUN abort``
        does (SIGTERM to its process, then its ``collection-run:finished`` awaited, through
        the engine's ``send_command``); any other command is refused."""
        if command.get("cmd") != "abort":
            raise _Refused(
                409,
                f"run {run_dir.name} is a collection run: it takes 'abort' only; the "
                "debugger's other commands go to one of its scenarios' runs",
            )
        if meta["status"] != "running":
            raise _Refused(409, f"run {run_dir.name} has finished: there is nothing to stop")
        try:
            send_command(run_dir, {"cmd": "abort"})
        except UsageError as err:
            raise _Refused(409, str(err)) from None


def _run_query(params: QueryParams) -> RunQuery:
    """``GET /api/runs``'s parameters checked, as a page of runs to read."""
    text = params.get("limit", "")
    digits = text.lstrip("0")
    if text and not (text.isascii() and text.isdigit() and digits):
        raise _Refused(400, "limit must be a whole number from 1")
    limit = RUNS_PAGE
    if text:  # int() refuses past 4,300 digits: so many is more than the most anyway
        limit = min(int(digits), MAX_RUNS_PAGE) if len(digits) <= 7 else MAX_RUNS_PAGE
    status = params.get("status") or None
    if status is not None and status not in STATUSES:
        raise _Refused(400, f"status must be one of {', '.join(STATUSES)}")
    before = params.get("before") or None
    return RunQuery(
        limit=limit,
        before=before,
        ref=params.get("scenario") or params.get("ref") or None,
        status=next((s for s in STATUSES if s == status), None),
    )


async def startup(ctx: ViewerContext) -> None:
    """Each scenario's newest run found ahead, in a daemon thread, once the server
    listens: at 100,000 runs the first answer takes about a second, which the tree's
    badges would otherwise wait for when the page opens (a request meanwhile waits for
    this one's answer, not for a second pass)."""
    ctx.when_serving.append(lambda: _start_newest_ahead(ctx))


def _start_newest_ahead(ctx: ViewerContext) -> None:
    threading.Thread(target=_newest_ahead, args=(ctx,), name="viewer-newest", daemon=True).start()


def _newest_ahead(ctx: ViewerContext) -> None:
    with contextlib.suppress(Exception):  # the request that asks says what fails
        ctx.newest_runs.latest()


def routes(ctx: ViewerContext) -> list[BaseRoute]:
    runs = RunRoutes(ctx)
    return [
        Route("/api/runs", _answering(runs.list), methods=["GET"]),
        Route("/api/runs", _answering(runs.start), methods=["POST"]),
        Route("/api/runs/{run_id}", _answering(runs.detail), methods=["GET"]),
        Route("/api/runs/{run_id}/files/{name:path}", _answering(runs.file), methods=["GET"]),
        Route("/api/runs/{run_id}/page-log", _answering(runs.page_log), methods=["GET"]),
        Route("/api/runs/{run_id}/commands", _answering(runs.command), methods=["POST"]),
    ]
