"""The runs REST routes: listing and reading runs, their files, starting runs, driving them.

* ``GET /api/runs?limit=&ref=`` → ``RunMeta[]``, newest first;
* ``GET /api/runs/<runId>`` → ``{meta, manifest, events, runtime, children, files, bundle,
  attemptChain, restartOf, restartedAs, latestRestart, request}`` (``files``: the run directory's
  own files, ours; ``eventsOmitted`` and ``lineCount``, the whole lines of steps.jsonl
  read, which ``fs:run-step``'s ``lineIndex`` is compared with; the links as
  :func:`runner.run_links.run_links` gives them; ``staleSources``, the files a live
  scenario run uses that changed on disk since it read them; ``request``, what this
  viewer started the run with, or null: see below);
* ``GET /api/runs/<runId>/files/<name>`` → a file of the run directory (or its
  ``screenshot/`` folder) or of its failure bundle, nothing else;
* ``POST /api/runs`` with a ``RunRequest`` → ``201 {runId}`` (through
  :class:`runner.run_adapter.RunnerAdapter` and :func:`runner.run_launcher.launch_run`;
  the run's output lines go to ``/ws`` as ``log:line``). Besides the protocol's fields a
  request may carry ``retries`` (``--retries N``, the CLI's option; the adapter knows
  none). What the run was started with is kept in its directory as ``request.json``
  (ours: the runner records none of its options), so "Run again" repeats it;
* ``POST /api/runs/<runId>/commands`` with a ``DbgCommand`` without an ``id`` →
  ``202 {id}``: one whole line appended to the run's ``commands.jsonl``; a collection
  run takes ``abort`` alone (its process is stopped, as ``unotest dbg RUN abort`` does).

Each handler checks its input, calls the engine (``runner.runs``, ``runner.rundir``)
and shapes the answer. What is served from a run goes through the project's secret
masker once more (runs are masked when written: this is the second lock). Errors are
``{"error": "<one sentence>"}`` with 400, 404 or 409, answered here, so the routes need
nothing of the application around them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import cast

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import BaseRoute, Route

from runner import protocol, ws_messages
from runner.config import MAX_RETRIES
from runner.errors import UnotestError, UsageError
from runner.project import Project
from runner.protocol import JSONObject
from runner.run_adapter import RunnerAdapter
from runner.run_launcher import Stream, launch_run
from runner.run_links import run_links
from runner.rundir import append_line, atomic_write
from runner.runs import list_runs, read_events, read_events_counted, run_meta, send_command
from runner.secrets import RunEnvironment, SecretMasker
from unotest.viewer.answers import error_response, json_body, json_response, status_for
from unotest.viewer.context import ViewerContext

__all__ = ["MAX_EVENTS", "routes"]

MAX_EVENTS = 5_000
"""``GET /api/runs/<runId>`` gives the last this many events (``eventsOmitted`` says how
many came before); the page follows the rest live on ``/ws``."""
MAX_MASKED_BYTES = 32 * 1024 * 1024
"""A text file up to this is masked again when served; a bigger one is served as
written (masked by its writer)."""
_RUN_ID_RE = re.compile(r"[A-Za-z0-9_-]+")
REQUEST_FILE = "request.json"
"""In a run directory this viewer started: the request it was started with (ours)."""
_REQUEST_KEYS = {
    "scenario": ("kind", "scenario", "headed", "debug", "breakpoints", "retries"),
    "collection": ("kind", "collection", "headed", "workers", "bail", "retries"),
}
"""The fields of a request that are kept: the protocol's and ``retries``."""
_SCREENSHOTS = "screenshot"
"""The one folder of a run directory whose files are served: a scenario's screenshots."""
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


def _read_json(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _stale_sources(
    project: Project, run_dir: Path, meta: protocol.RunMeta | None, events: list[JSONObject]
) -> list[str]:
    """The files a live scenario run executes (its scenario, every helper) that changed
    on disk since it read them: at its start, or at its last reload that was applied.
    The run records no version of its sources, so this goes by modification times
    (a file saved back unchanged counts too: a reload then changes nothing)."""
    if meta is None or meta["kind"] != "scenario" or meta["status"] != "running":
        return []
    manifest = _read_json(run_dir / protocol.RUN_MANIFEST_FILE)
    loaded = manifest.get("startedAt") if isinstance(manifest, dict) else None
    if not isinstance(loaded, int):
        return []
    applied = {
        e.get("id"): e.get("t")
        for e in events
        if e.get("kind") == "command:applied" and e.get("cmd") == "reload"
    }
    for e in events:
        t = applied.get(e.get("id")) if e.get("kind") == "command:result" else None
        if isinstance(t, int) and e.get("ok") is True:
            loaded = max(loaded, t)
    files = [project.root / project.scenario_file(meta["ref"])]
    if project.helpers_dir.is_dir():
        files += sorted(project.helpers_dir.rglob("*.js"))
    stale = []
    for path in files:
        try:
            changed = path.stat().st_mtime_ns // 1_000_000 > loaded
        except OSError:
            continue
        if changed and path.is_file():
            stale.append(project.relative(path))
    return stale


def _retries(request: JSONObject) -> list[str]:
    """``--retries N`` when the request says how many times a failed scenario runs again
    (absent: the project's config decides, as for the CLI without the option)."""
    if "retries" not in request:
        return []
    value = request["retries"]
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_RETRIES:
        raise _Refused(400, f"retries must be a whole number from 0 to {MAX_RETRIES}")
    return ["--retries", str(value)]


def _kept_request(kind: protocol.RunKind, request: JSONObject) -> JSONObject:
    """What ``request.json`` keeps of a run's request: the fields it was started with."""
    return {key: request[key] for key in _REQUEST_KEYS[kind] if key in request}


def _record_request(run_dir: Path, request: JSONObject) -> None:
    """Keep the request beside the run (best effort: a run whose request could not be
    written still runs; "Run again" then repeats what its events show)."""
    data = json.dumps(request, ensure_ascii=True).encode()
    with contextlib.suppress(OSError, UnotestError):
        atomic_write(run_dir / REQUEST_FILE, data)


def _recorded_request(run_dir: Path) -> JSONObject | None:
    """The request this viewer started the run with (``request.json``), or ``None``: a run
    started elsewhere (the CLI, an agent) or before the viewer kept it."""
    data = _read_json(run_dir / REQUEST_FILE)
    return data if isinstance(data, dict) else None


def _object(data: object) -> JSONObject:
    if not isinstance(data, dict):
        raise _Refused(400, "the body must be a JSON object")
    return data


class RunRoutes:
    """The runs routes of one server: the project and the live hub come from ``ctx``."""

    def __init__(self, ctx: ViewerContext) -> None:
        self.ctx = ctx
        self.adapter = RunnerAdapter()
        self.followers: set[asyncio.Task[None]] = set()
        ctx.hub.on_stop(self.stop_following)

    # --- shared -------------------------------------------------------------------

    def masker(self) -> SecretMasker:
        masker = SecretMasker()
        RunEnvironment.of_project(self.ctx.root, masker, {})
        return masker

    def run_dir(self, run_id: str) -> Path:
        """The directory of an exact run id; 404 for anything else."""
        path = self.ctx.project.runs_dir / run_id
        if not _RUN_ID_RE.fullmatch(run_id) or not (path / protocol.RUN_MANIFEST_FILE).is_file():
            raise _Refused(404, f"there is no run {run_id!r}")
        return path

    def bundle_dir(self, events: list[JSONObject]) -> Path | None:
        """The run's (last) failure bundle, if it is a folder inside the project."""
        written = [e for e in events if e.get("kind") == "failure-bundle:written"]
        relative = written[-1].get("bundlePath") if written else None
        if not isinstance(relative, str):
            return None
        root = self.ctx.root.resolve()
        path = (root / relative).resolve()
        return path if path.is_relative_to(root) and path.is_dir() else None

    async def stop_following(self) -> None:
        for task in list(self.followers):
            task.cancel()
        await asyncio.gather(*self.followers, return_exceptions=True)

    # --- reading --------------------------------------------------------------------

    async def list(self, request: Request) -> Response:
        ref = request.query_params.get("ref")
        text = request.query_params.get("limit", "")
        if text and not (text.isdigit() and int(text) >= 1):
            raise _Refused(400, "limit must be a whole number from 1")
        runs = await run_in_threadpool(list_runs, self.ctx.project.runs_dir)
        if ref is not None:
            runs = [m for m in runs if m["ref"] == ref]
        return json_response(runs[: int(text)] if text else runs)

    async def detail(self, request: Request) -> Response:
        run_dir = self.run_dir(request.path_params["run_id"])
        return json_response(await run_in_threadpool(self._detail, run_dir))

    def _detail(self, run_dir: Path) -> JSONObject:
        events, line_count = read_events_counted(run_dir / protocol.STEPS_FILE)
        shown = events[-MAX_EVENTS:]
        bundle = self.bundle_dir(events)
        meta = run_meta(run_dir)
        children = (
            [
                m
                for m in list_runs(self.ctx.project.runs_dir)
                if m.get("parentRunId") == run_dir.name
            ]
            if meta is not None and meta["kind"] == "collection"
            else []
        )
        detail: JSONObject = {
            "meta": meta,
            "manifest": _read_json(run_dir / protocol.RUN_MANIFEST_FILE),
            "events": shown,
            "eventsOmitted": len(events) - len(shown),
            "lineCount": line_count,
            "runtime": _read_json(run_dir / protocol.RUNTIME_FILE),
            "children": children,
            "files": sorted(
                p.name for p in run_dir.iterdir() if p.is_file() and not p.is_symlink()
            ),
            "bundle": None
            if bundle is None
            else {
                "path": self.ctx.project.relative(bundle),
                "files": sorted(p.name for p in bundle.iterdir() if p.is_file()),
            },
            **run_links(run_dir),
            "staleSources": _stale_sources(self.ctx.project, run_dir, meta, events),
            "request": _recorded_request(run_dir),
        }
        return cast(JSONObject, self.masker().mask_data(detail))

    async def file(self, request: Request) -> Response:
        run_dir = self.run_dir(request.path_params["run_id"])
        name = request.path_params["name"]
        path = await run_in_threadpool(self._file_path, run_dir, name)
        suffix = path.suffix.lower()
        if suffix in _BINARY_TYPES:
            return FileResponse(path, media_type=_BINARY_TYPES[suffix])
        media = _TEXT_TYPES.get(suffix, "text/plain; charset=utf-8")
        if path.stat().st_size > MAX_MASKED_BYTES:
            return FileResponse(path, media_type=media)
        text = await run_in_threadpool(path.read_text, "utf-8", "replace")
        return Response(self.masker().mask(text), media_type=media)

    def _file_path(self, run_dir: Path, name: str) -> Path:
        """``name`` in the run directory, else in its failure bundle, or
        ``screenshot/<name>`` (a scenario's ``screenshot()``); 404 for anything else (another
        path, a hidden or temporary file, a symlink out, a folder)."""
        folder_name, _, base = name.rpartition("/")
        if folder_name not in ("", _SCREENSHOTS) or base.startswith(".") or name[:1] == "/":
            raise _Refused(404, f"run {run_dir.name} has no file {name!r}")
        if "\\" in base or "\0" in base:
            raise _Refused(404, f"run {run_dir.name} has no file {name!r}")
        folders = [run_dir / folder_name] if folder_name else [run_dir]
        bundle = self.bundle_dir(read_events(run_dir / protocol.STEPS_FILE))
        if bundle is not None and not folder_name:
            folders.append(bundle)
        for folder in folders:
            path = (folder / base).resolve()
            inside = folder.resolve() == run_dir.resolve() / folder_name if folder_name else True
            if inside and path.parent == folder.resolve() and path.is_file():
                return path
        raise _Refused(404, f"run {run_dir.name} has no file {name!r}")

    # --- starting and driving -----------------------------------------------------------

    async def start(self, request: Request) -> Response:
        body = _object(await json_body(request))
        run_request = cast(protocol.RunRequest, body)
        kind = self.adapter.check_kind(body)
        args = [*self.adapter.build_args(run_request), *_retries(body)]
        argv = [*self.adapter.resolve_bin(), *args]
        run = await launch_run(
            self.ctx.root,
            argv,
            kind,
            env=self.adapter.build_env(run_request),
            on_line=self._publish_line,
            mask=self.masker().mask,
        )
        if run.follower is not None:
            self.followers.add(run.follower)
            run.follower.add_done_callback(self.followers.discard)
        await run_in_threadpool(_record_request, run.run_dir, _kept_request(kind, body))
        return json_response({"runId": run.run_id}, 201)

    def _publish_line(self, run_id: str, stream: Stream, line: str) -> None:
        self.ctx.hub.publish(ws_messages.log_line(run_id, stream, line))

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
        line = json.dumps(command, ensure_ascii=True) + "\n"
        append_line(run_dir / protocol.COMMANDS_FILE, line.encode(), create=True)

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


def routes(ctx: ViewerContext) -> list[BaseRoute]:
    runs = RunRoutes(ctx)
    return [
        Route("/api/runs", _answering(runs.list), methods=["GET"]),
        Route("/api/runs", _answering(runs.start), methods=["POST"]),
        Route("/api/runs/{run_id}", _answering(runs.detail), methods=["GET"]),
        Route("/api/runs/{run_id}/files/{name:path}", _answering(runs.file), methods=["GET"]),
        Route("/api/runs/{run_id}/commands", _answering(runs.command), methods=["POST"]),
    ]
