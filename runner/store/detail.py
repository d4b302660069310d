"""A run's detail for the front ends that show it: the viewer and the MCP server.

What a run is (``RunMeta``), what it wrote (its events, ``runtime.json``, its own files,
its output), how it failed (its failure bundle, or a collection's scenarios that did
not pass), how it links to other runs (attempts, restarts) and what it was started
with (``request.json``): each read here, from the run directory's file names in
``runner.protocol``, so that no front end opens a run's files on its own. Nothing here
masks: a front end masks what it serves once more (runs are masked when written).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from runner import protocol
from runner.errors import UnotestError
from runner.files import atomic_write
from runner.project.editing import FileMissing
from runner.project.root import Project
from runner.protocol import JSONObject
from runner.store.links import run_links
from runner.store.run_list import RunQuery, runs_page
from runner.store.runs import (
    Stream,
    output_path,
    read_events,
    read_events_counted,
    run_meta,
)

__all__ = [
    "REQUEST_FILE",
    "FailureBundle",
    "PageImage",
    "Stream",
    "bundle_dir",
    "collection_failures",
    "exact_run_dir",
    "is_paused",
    "output_tail",
    "pause_image",
    "read_bundle",
    "record_request",
    "recorded_request",
    "run_detail",
    "run_file",
    "runtime_of",
    "stale_sources",
    "step_image",
]

REQUEST_FILE = "request.json"
"""In a run directory a front end started: the request it was started with (ours)."""
SCREENSHOTS = "screenshot"
"""A folder of a run directory whose files are served: a scenario's screenshots."""
PAGES = "pages"
"""The other: the page's images at pauses and after steps (``runner.run.page_images``)."""
_RUN_ID_RE = re.compile(r"[A-Za-z0-9_-]+")


def _read_json(path: Path) -> object:
    """The JSON value in ``path``; ``None`` when it is missing or does not parse."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


# --- finding a run and its files ------------------------------------------------------------


def exact_run_dir(project: Project, run_id: str) -> Path:
    """The directory of exactly ``run_id`` (no prefix, no other path); ``FileMissing``
    for anything else."""
    path = project.runs_dir / run_id
    if not _RUN_ID_RE.fullmatch(run_id) or not (path / protocol.RUN_MANIFEST_FILE).is_file():
        raise FileMissing(f"there is no run {run_id!r}")
    return path


def bundle_dir(root: Path, events: list[JSONObject]) -> Path | None:
    """The run's (last) failure bundle, if it is a folder inside the project."""
    written = [e for e in events if e.get("kind") == "failure-bundle:written"]
    relative = written[-1].get("bundlePath") if written else None
    if not isinstance(relative, str):
        return None
    inside = root.resolve()
    path = (inside / relative).resolve()
    return path if path.is_relative_to(inside) and path.is_dir() else None


def run_file(root: Path, run_dir: Path, name: str) -> Path:
    """``name`` in the run directory, else in its failure bundle, or
    ``screenshot/<name>`` (a scenario's ``screenshot()``) or ``pages/<name>`` (the
    page's images); ``FileMissing`` for anything else (another path, a hidden or
    temporary file, a symlink out, a folder)."""
    missing = FileMissing(f"run {run_dir.name} has no file {name!r}")
    folder_name, _, base = name.rpartition("/")
    if folder_name not in ("", SCREENSHOTS, PAGES) or base.startswith(".") or name[:1] == "/":
        raise missing
    if "\\" in base or "\0" in base:
        raise missing
    folders = [run_dir / folder_name] if folder_name else [run_dir]
    bundle = bundle_dir(root, read_events(run_dir / protocol.STEPS_FILE))
    if bundle is not None and not folder_name:
        folders.append(bundle)
    for folder in folders:
        path = (folder / base).resolve()
        inside = folder.resolve() == run_dir.resolve() / folder_name if folder_name else True
        if inside and path.parent == folder.resolve() and path.is_file():
            return path
    raise missing


# --- what a run wrote -------------------------------------------------------------------------


@dataclass(frozen=True)
class PageImage:
    """One image of the page (a ``page:image`` line), its JPEG and, at a pause, the text
    of its aria snapshot (masked when written)."""

    event: JSONObject
    jpeg: Path
    aria: str | None


def pause_image(root: Path, run_dir: Path) -> PageImage | None:
    """The page as it is at the run's pause now: the newest image taken since the last
    ``paused`` line, when nothing has resumed the run since; ``None`` otherwise."""
    events = read_events(run_dir / protocol.STEPS_FILE)
    newest: JSONObject | None = None
    for event in events:
        kind = event.get("kind")
        if kind in ("paused", "resumed", "run:finished"):
            newest = None
        elif kind == "page:image" and event.get("after") in ("pause", "eval"):
            newest = event
    return _page_image(root, run_dir, newest)


def step_image(root: Path, run_dir: Path, step: int) -> PageImage | None:
    """The page after step ``step`` (0-based, in ``step:started`` order, as the image
    lines number them): its own image, else the newest taken before it ended (a step
    that touched nothing of the page left the page as it was)."""
    open_steps: list[int] = []
    started = 0
    newest: JSONObject | None = None
    after: JSONObject | None = None
    for event in read_events(run_dir / protocol.STEPS_FILE):
        kind = event.get("kind")
        if kind == "step:started":
            open_steps.append(started)
            started += 1
        elif kind in ("step:ok", "step:fail") and open_steps:
            if open_steps.pop() == step:
                after = newest
        elif kind == "page:image" and event.get("after") == "step":
            newest = event
            if event.get("step") == step:
                after = event
    return _page_image(root, run_dir, after)


def _page_image(root: Path, run_dir: Path, event: JSONObject | None) -> PageImage | None:
    """The files an image line names, when they are the run's own ``pages/`` files."""
    if event is None:
        return None
    try:
        jpeg = run_file(root, run_dir, f"{PAGES}/{Path(str(event.get('path'))).name}")
    except FileMissing:
        return None
    aria: str | None = None
    if isinstance(event.get("aria"), str):
        with contextlib.suppress(FileMissing, OSError, UnicodeDecodeError):
            aria_file = run_file(root, run_dir, f"{PAGES}/{Path(str(event['aria'])).name}")
            aria = aria_file.read_text(encoding="utf-8")
    return PageImage(event, jpeg, aria)


def runtime_of(run_dir: Path) -> JSONObject | None:
    """``runtime.json``, or ``None`` before there is one (or a collection's run)."""
    data = _read_json(run_dir / protocol.RUNTIME_FILE)
    return data if isinstance(data, dict) else None


def is_paused(run_dir: Path, runtime: JSONObject | None) -> bool:
    """runtime.json says paused and no ``resumed`` (or the end) followed the last pause."""
    state = runtime.get("state") if runtime is not None else None
    if not (isinstance(state, str) and state.startswith("paused")):
        return False
    last = None
    for event in read_events(run_dir / protocol.STEPS_FILE):
        if event.get("kind") in ("paused", "resumed", "run:finished"):
            last = event.get("kind")
    return last == "paused"


def output_tail(run_dir: Path, stream: Stream, mask: Callable[[str], str], limit: int) -> str:
    """The end of a run's captured output (the scenario's ``log()`` lines, runner
    warnings), at most ``limit`` characters. Read with a wide margin and cut after
    ``mask``, so a secret split by the cut cannot show in part."""
    try:
        with open(output_path(run_dir, stream), "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - 16 * limit))
            text = handle.read().decode("utf-8", "replace")
    except OSError:
        return ""
    text = mask(text)
    return text if len(text) <= limit else "…" + text[-limit:]


def stale_sources(
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


def run_detail(project: Project, run_dir: Path, max_events: int) -> JSONObject:
    """Everything the viewer shows of a run: ``{meta, manifest, events, eventsOmitted,
    lineCount, runtime, children, files, bundle, attemptChain, restartOf, restartedAs,
    latestRestart, staleSources, request}``, the last ``max_events`` events."""
    events, line_count = read_events_counted(run_dir / protocol.STEPS_FILE)
    shown = events[-max_events:]
    bundle = bundle_dir(project.root, events)
    meta = run_meta(run_dir)
    children = (
        runs_page(project.runs_dir, RunQuery(parent=run_dir.name)).runs
        if meta is not None and meta["kind"] == "collection"
        else []
    )
    return {
        "meta": meta,
        "manifest": _read_json(run_dir / protocol.RUN_MANIFEST_FILE),
        "events": shown,
        "eventsOmitted": len(events) - len(shown),
        "lineCount": line_count,
        "runtime": _read_json(run_dir / protocol.RUNTIME_FILE),
        "children": children,
        "files": sorted(p.name for p in run_dir.iterdir() if p.is_file() and not p.is_symlink()),
        "bundle": None
        if bundle is None
        else {
            "path": project.relative(bundle),
            "files": sorted(p.name for p in bundle.iterdir() if p.is_file()),
        },
        **run_links(run_dir),
        "staleSources": stale_sources(project, run_dir, meta, events),
        "request": recorded_request(run_dir),
    }


# --- how it failed -----------------------------------------------------------------------------


@dataclass(frozen=True)
class FailureBundle:
    """What a failure bundle holds, read: its project-relative path, ``error.json``,
    the objects of ``console.json`` and ``network.json``, the aria snapshot's text and
    the screenshot's path (when there is one)."""

    path: str
    error: object
    console: list[JSONObject]
    network: list[JSONObject]
    aria: str
    screenshot: Path | None


def read_bundle(root: Path, events: list[JSONObject]) -> FailureBundle | None:
    """The run's last failure bundle, read; ``None`` when it wrote none. A bundle path
    outside the project is an error, never read."""
    written = [e for e in events if e.get("kind") == "failure-bundle:written"]
    if not written:
        return None
    relative = str(written[-1]["bundlePath"])
    bundle = (root / relative).resolve()
    if not bundle.is_relative_to(root.resolve()):
        raise UnotestError("the failure bundle is outside the project")
    aria = ""
    if (bundle / "page.aria.yaml").is_file():
        aria = (bundle / "page.aria.yaml").read_text(encoding="utf-8", errors="replace")
    shot = bundle / "screenshot.png"
    return FailureBundle(
        relative,
        _read_json(bundle / "error.json") or {},
        _objects(_read_json(bundle / "console.json")),
        _objects(_read_json(bundle / "network.json")),
        aria,
        shot if shot.is_file() else None,
    )


def _objects(value: object) -> list[JSONObject]:
    """The objects of a JSON array (console.json, network.json); none for anything else."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def collection_failures(events: list[JSONObject]) -> list[JSONObject]:
    """A collection's scenario runs that did not pass: ``{scenario, runId, outcome}``."""
    return [
        {
            "scenario": e.get("scenario"),
            "runId": e.get("scenarioRunId"),
            "outcome": e.get("outcome"),
        }
        for e in events
        if e.get("kind") == "collection-run:scenario-finished" and e.get("outcome") != "completed"
    ]


# --- what it was started with ------------------------------------------------------------------


def record_request(run_dir: Path, request: JSONObject) -> None:
    """Keep the request beside the run (best effort: a run whose request could not be
    written still runs; "Run again" then repeats what its events show)."""
    data = json.dumps(request, ensure_ascii=True).encode()
    with contextlib.suppress(OSError, UnotestError):
        atomic_write(run_dir / REQUEST_FILE, data)


def recorded_request(run_dir: Path) -> JSONObject | None:
    """The request a front end started the run with (``request.json``), or ``None``: a
    run started from the command line, or before requests were kept."""
    data = _read_json(run_dir / REQUEST_FILE)
    return data if isinstance(data, dict) else None
