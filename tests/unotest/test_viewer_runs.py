"""unotest/viewer/routes_runs.py: the runs REST routes, on a Starlette app made of just
them, driven with httpx. Hand-made run directories for reading; one real debug run in
real Chromium, started by ``POST /api/runs``, paused at a breakpoint and driven to its end
through ``POST /api/runs/<runId>/commands``."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from net import serve_directory
from sites import config_yaml, scenario_source, write_project
from starlette.applications import Starlette
from viewer_serving import paused_in, receive_until, serving
from websockets.asyncio.client import connect as ws_connect

from runner import protocol
from runner.project.secrets import MASK
from unotest.viewer.context import ViewerContext
from unotest.viewer.hub import Closed
from unotest.viewer.routes_runs import routes
from unotest.viewer.routes_ws import startup as watch_project

SECRET = "sup3r-s3cret-v4lue"
Client = httpx.AsyncClient


def _ctx(root: Path) -> ViewerContext:
    return ViewerContext(root=root, token="t" * 32)


def _drive(root: Path, body: Callable[[Client, ViewerContext], Awaitable[None]]) -> None:
    ctx = _ctx(root)
    app = Starlette(routes=routes(ctx))

    async def main() -> None:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            try:
                await body(client, ctx)
            finally:
                await ctx.hub.stop()

    asyncio.run(main())


def _run(
    root: Path,
    run_id: str,
    *,
    kind: str = "scenario",
    ref: str = "smoke",
    started: int = 1_000,
    finished: int | None = 2_000,
    parent: str | None = None,
    pid: int | None = None,
    extra_events: list[dict[str, Any]] | None = None,
) -> Path:
    run_dir = root / "unotest" / ".runs" / run_id
    run_dir.mkdir(parents=True)
    manifest: dict[str, Any] = {
        "schemaVersion": 1,
        "kind": kind,
        "ref": ref,
        "adapter": "@unotest/web",
        "startedAt": started,
    }
    if parent is not None:
        manifest["parentRunId"] = parent
    if pid is not None:
        manifest["pid"] = pid
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    first = "run:started" if kind == "scenario" else "collection-run:started"
    events: list[dict[str, Any]] = [{"kind": first, "runId": run_id, "t": started}]
    events += extra_events or []
    if finished is not None:
        last = "run:finished" if kind == "scenario" else "collection-run:finished"
        events.append({"kind": last, "runId": run_id, "t": finished, "outcome": "failed"})
    (run_dir / "steps.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    return run_dir


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = write_project(
        tmp_path / "project", None, files={"unotest/.env": f"API_TOKEN={SECRET}\n"}
    )
    bundle = project / ".unotest" / "failures" / "smoke__x__3"
    bundle.mkdir(parents=True)
    (bundle / "screenshot.png").write_bytes(b"\x89PNG\r\n\x1a\nfake")
    (bundle / "network.json").write_text(json.dumps([{"url": f"/login?t={SECRET}"}]))
    (bundle / "page.aria.yaml").write_text("- button: Save\n")
    written = {"kind": "failure-bundle:written", "runId": "smoke-b", "t": 1_500}
    written["bundlePath"] = ".unotest/failures/smoke__x__3"
    leak = {"kind": "step:ok", "runId": "smoke-b", "t": 1_400, "line": 5, "text": SECRET}
    run_b = _run(project, "smoke-b", started=2_000, finished=3_000, extra_events=[leak, written])
    (run_b / "stdout.log").write_text(f"hello\ntoken {SECRET}\n")
    (run_b / "runtime.json").write_text(json.dumps({"state": "failed", "current": None}))
    _run(project, "smoke-a", started=1_000)
    _run(project, "other-c", ref="other", started=3_000)
    _run(project, "night-d", kind="collection", ref="night", started=4_000)
    _run(project, "smoke-e", parent="night-d", started=4_100)
    (tmp_path / "outside.txt").write_text("not served")
    (run_b / "escape.txt").symlink_to(tmp_path / "outside.txt")
    return project


# ---------------------------------------------------------------------------
# reading runs
# ---------------------------------------------------------------------------


def test_runs_are_listed_newest_first_by_ref_and_limit(
    root: Path, protocol_validate: Callable[[str, object], None]
) -> None:
    async def body(client: Client, _ctx: ViewerContext) -> None:
        every = (await client.get("/api/runs")).json()
        assert [m["runId"] for m in every] == [
            "smoke-e",
            "night-d",
            "other-c",
            "smoke-b",
            "smoke-a",
        ]
        for meta in every:
            protocol_validate("RunMeta", meta)
        smoke = (await client.get("/api/runs", params={"ref": "smoke", "limit": "2"})).json()
        assert [m["runId"] for m in smoke] == ["smoke-e", "smoke-b"]
        refused = await client.get("/api/runs", params={"limit": "-1"})
        assert refused.status_code == 400
        assert refused.json() == {"error": "limit must be a whole number from 1"}

    _drive(root, body)


def test_a_run_in_detail_masked_with_its_bundle(root: Path) -> None:
    async def body(client: Client, _ctx: ViewerContext) -> None:
        answer = await client.get("/api/runs/smoke-b")
        assert answer.status_code == 200
        assert SECRET not in answer.text
        detail = answer.json()
        assert set(detail) >= {"meta", "manifest", "events", "runtime", "children", "bundle"}
        assert detail["meta"]["status"] == "failed"
        assert detail["manifest"]["ref"] == "smoke"
        assert [e["kind"] for e in detail["events"]] == [
            "run:started",
            "step:ok",
            "failure-bundle:written",
            "run:finished",
        ]
        assert detail["lineCount"] == 4  # what fs:run-step's lineIndex is compared with
        assert detail["runtime"] == {"state": "failed", "current": None}
        assert detail["children"] == []
        assert detail["bundle"] == {
            "path": ".unotest/failures/smoke__x__3",
            "files": ["network.json", "page.aria.yaml", "screenshot.png"],
        }

    _drive(root, body)


def test_a_runs_line_count_counts_lines_that_do_not_parse_and_not_a_partial_one(
    root: Path,
) -> None:
    steps = root / "unotest" / ".runs" / "smoke-a" / "steps.jsonl"
    before = steps.read_bytes().count(b"\n")
    with steps.open("ab") as out:
        out.write(b'not json\n{"kind": "step:ok", "durationMs": 1, "t": 1}\n{"kind": "st')

    async def body(client: Client, _ctx: ViewerContext) -> None:
        detail = (await client.get("/api/runs/smoke-a")).json()
        assert detail["lineCount"] == before + 2
        assert detail["events"][-1] == {"kind": "step:ok", "durationMs": 1, "t": 1}

    _drive(root, body)


def test_a_collection_run_lists_its_children(root: Path) -> None:
    async def body(client: Client, _ctx: ViewerContext) -> None:
        detail = (await client.get("/api/runs/night-d")).json()
        assert [m["runId"] for m in detail["children"]] == ["smoke-e"]
        assert detail["bundle"] is None
        assert detail["runtime"] is None

    _drive(root, body)


def test_files_of_the_run_and_its_bundle_and_nothing_else(root: Path) -> None:
    async def body(client: Client, _ctx: ViewerContext) -> None:
        shot = await client.get("/api/runs/smoke-b/files/screenshot.png")
        assert (shot.status_code, shot.headers["content-type"]) == (200, "image/png")
        assert shot.content == b"\x89PNG\r\n\x1a\nfake"
        log = await client.get("/api/runs/smoke-b/files/stdout.log")
        assert log.headers["content-type"] == "text/plain; charset=utf-8"
        assert log.text == f"hello\ntoken {MASK}\n"
        network = await client.get("/api/runs/smoke-b/files/network.json")
        assert network.headers["content-type"] == "application/json"
        assert SECRET not in network.text
        aria = await client.get("/api/runs/smoke-b/files/page.aria.yaml")
        assert aria.text == "- button: Save\n"
        steps = await client.get("/api/runs/smoke-b/files/steps.jsonl")
        assert steps.headers["content-type"] == "application/x-ndjson"
        for name in ("escape.txt", ".env", "nope.json", "a%5Cb", "%00"):
            refused = await client.get(f"/api/runs/smoke-b/files/{name}")
            assert refused.status_code == 404, name
            assert "error" in refused.json()
        # A path with a slash matches no route at all (the app answers 404 for it).
        escape = await client.get("/api/runs/smoke-b/files/..%2Fsmoke-a%2Fmanifest.json")
        assert escape.status_code == 404
        for path in ("/api/runs/nope", "/api/runs/..", "/api/runs/smoke-b%00/files/x"):
            assert (await client.get(path)).status_code == 404, path

    _drive(root, body)


# ---------------------------------------------------------------------------
# starting and driving
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("payload", "status", "message"),
    [
        (
            {"kind": "device", "scenario": "smoke"},
            400,
            "the runner adapter @unotest/web cannot run a run of kind 'device'",
        ),
        ({"kind": "scenario"}, 400, "a scenario run needs a scenario name"),
        ([1, 2], 400, "the body must be a JSON object"),
        (
            {"kind": "collection", "collection": "nightly", "retries": -1},
            400,
            "retries must be a whole number from 0 to 10",
        ),
        (
            {"kind": "scenario", "scenario": "smoke", "retries": True},
            400,
            "retries must be a whole number from 0 to 10",
        ),
    ],
)
def test_a_run_request_that_cannot_be_run_is_refused(
    root: Path, payload: object, status: int, message: str
) -> None:
    async def body(client: Client, _ctx: ViewerContext) -> None:
        answer = await client.post("/api/runs", json=payload)
        assert (answer.status_code, answer.json()) == (status, {"error": message})

    _drive(root, body)


def test_a_run_that_cannot_start_answers_what_the_runner_said(root: Path) -> None:
    broken = root / "unotest" / "e2e" / "broken.test.js"
    broken.write_text("// id-broken\n// Broken\n// #dc2626\nfunction test_broken() {\n  log(\n}\n")

    async def body(client: Client, _ctx: ViewerContext) -> None:
        answer = await client.post("/api/runs", json={"kind": "scenario", "scenario": "nope"})
        assert answer.status_code == 400
        assert "nope" in answer.json()["error"]
        # The syntax error's code frame keeps its lines (it was one line of "\x0a").
        answer = await client.post("/api/runs", json={"kind": "scenario", "scenario": "broken"})
        assert answer.status_code == 400
        error = answer.json()["error"]
        assert "unotest/e2e/broken.test.js:6:0: SyntaxError" in error and "\n    ^" in error
        assert "\\x0a" not in error

    _drive(root, body)


def test_a_command_gets_a_fresh_id_and_one_whole_line(root: Path) -> None:
    run_dir = _run(root, "live-f", started=5_000, finished=None, pid=os.getpid())

    async def body(client: Client, _ctx: ViewerContext) -> None:
        first = await client.post("/api/runs/live-f/commands", json={"cmd": "step"})
        second = await client.post(
            "/api/runs/live-f/commands", json={"cmd": "set-bp", "line": 7, "col": 3}
        )
        assert (first.status_code, second.status_code) == (202, 202)
        ids = [first.json()["id"], second.json()["id"]]
        assert ids[0] != ids[1]
        lines = (run_dir / "commands.jsonl").read_text().splitlines()
        assert [json.loads(line) for line in lines] == [
            {"id": ids[0], "cmd": "step"},
            {"id": ids[1], "cmd": "set-bp", "line": 7, "col": 3},
        ]
        refusals = {
            "/api/runs/live-f/commands": ({"id": "x", "cmd": "step"}, 400),
            "/api/runs/smoke-b/commands": ({"cmd": "step"}, 409),
            "/api/runs/night-d/commands": ({"cmd": "step"}, 409),
            "/api/runs/ghost/commands": ({"cmd": "step"}, 404),
        }
        for path, (payload, status) in refusals.items():
            answer = await client.post(path, json=payload)
            assert answer.status_code == status, path
            assert set(answer.json()) == {"error"}
        bad = await client.post("/api/runs/live-f/commands", json={"cmd": 3})
        assert bad.status_code == 400
        assert len((run_dir / "commands.jsonl").read_text().splitlines()) == 2

    _drive(root, body)


STOPPABLE = """
import json, signal, sys, time
steps = sys.argv[1]
def stop(*_):
    with open(steps, "a") as out:
        out.write(json.dumps({"kind": "collection-run:finished", "outcome": "aborted", "t": 9})
                  + "\\n")
    sys.exit(0)
signal.signal(signal.SIGTERM, stop)
print("ready", flush=True)
time.sleep(60)
"""


def test_a_collection_run_takes_abort_alone(root: Path) -> None:
    """As ``unotest dbg RUN abort``: its process is stopped (SIGTERM), the answer comes
    once the collection has written its end; every other command is refused."""
    run_dir = _run(root, "night-live", kind="collection", ref="night", finished=None)
    proc = subprocess.Popen(
        [sys.executable, "-c", STOPPABLE, str(run_dir / "steps.jsonl")],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        manifest = json.loads((run_dir / "manifest.json").read_text())
        (run_dir / "manifest.json").write_text(json.dumps({**manifest, "pid": proc.pid}))

        async def body(client: Client, _ctx: ViewerContext) -> None:
            step = await client.post("/api/runs/night-live/commands", json={"cmd": "step"})
            assert step.status_code == 409
            assert "takes 'abort' only" in step.json()["error"]
            assert proc.poll() is None
            abort = await client.post("/api/runs/night-live/commands", json={"cmd": "abort"})
            assert abort.status_code == 202, abort.text
            assert abort.json()["id"].startswith("viewer-")
            assert proc.wait(15) == 0  # it had the SIGTERM
            again = await client.post("/api/runs/night-live/commands", json={"cmd": "abort"})
            assert again.status_code == 409
            assert "has finished" in again.json()["error"]

        _drive(root, body)
        assert not (run_dir / "commands.jsonl").exists()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        assert proc.stdout is not None
        proc.stdout.close()


# ---------------------------------------------------------------------------
# a real debug run in Chromium
# ---------------------------------------------------------------------------

SCENARIO = scenario_source(
    "viewer-debug",
    '  goto("/index.html")\n  let n = 1\n  log("n is " + n)\n  n = n + 1\n',
)
RUN_TIMEOUT_S = 90.0


@pytest.fixture
def site_project(tmp_path: Path) -> Iterator[Path]:
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<!doctype html><title>t</title><button>Save</button>")
    with serve_directory(site) as url:
        yield write_project(tmp_path / "project", config_yaml(url), {"debug-me": SCENARIO})


async def _until(
    client: Client, run_id: str, done: Callable[[dict[str, Any]], bool]
) -> dict[str, Any]:
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while True:
        detail: dict[str, Any] = (await client.get(f"/api/runs/{run_id}")).json()
        if done(detail):
            return detail
        if detail["meta"]["status"] != "running" or time.monotonic() > deadline:
            raise AssertionError(f"the run never got there: {json.dumps(detail)[-2000:]}")
        await asyncio.sleep(0.1)


def _state(detail: dict[str, Any]) -> str | None:
    runtime = detail.get("runtime")
    return runtime.get("state") if isinstance(runtime, dict) else None


def test_a_debug_run_started_paused_stepped_and_continued(site_project: Path) -> None:
    async def body(client: Client, ctx: ViewerContext) -> None:
        subscription = ctx.hub.subscribe()
        await watch_project(ctx)  # log:line comes from the run's logs, as file events
        request = {
            "kind": "scenario",
            "scenario": "debug-me",
            "debug": True,
            "breakpoints": ["6:2"],
        }
        started = await client.post("/api/runs", json=request)
        assert started.status_code == 201, started.text
        run_id = started.json()["runId"]
        try:
            paused = await _until(client, run_id, lambda d: _state(d) == "paused-breakpoint")
            assert paused["runtime"]["current"]["line"] == 6
            step = await client.post(f"/api/runs/{run_id}/commands", json={"cmd": "step"})
            assert step.status_code == 202
            stepped = await _until(client, run_id, lambda d: _state(d) == "paused-step")
            assert stepped["runtime"]["current"]["line"] == 7
            go = await client.post(f"/api/runs/{run_id}/commands", json={"cmd": "continue"})
            assert go.status_code == 202
            done = await _until(client, run_id, lambda d: d["meta"]["status"] != "running")
        finally:
            run_dir = site_project / "unotest" / ".runs" / run_id
            line = json.dumps({"id": "test-cleanup", "cmd": "abort"}) + "\n"
            with open(run_dir / protocol.COMMANDS_FILE, "a") as commands:
                commands.write(line)
        assert done["meta"]["status"] == "passed"
        applied = {e["id"] for e in done["events"] if e["kind"] == "command:applied"}
        assert {step.json()["id"], go.json()["id"]} <= applied
        lines = await _log_lines(subscription, run_id, "n is 1")
        assert any("n is 1" in line for line in lines), lines

    _drive(site_project, body)


async def _log_lines(subscription: Any, run_id: str, wanted: str) -> list[str]:
    """The ``log:line`` texts of ``run_id`` the hub sent, up to one holding ``wanted``."""
    lines: list[str] = []
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            message = await asyncio.wait_for(subscription.next(), 1)
        except TimeoutError:
            continue
        assert not isinstance(message, Closed)
        if message["kind"] == "log:line" and message["runId"] == run_id:
            lines.append(message["line"])
            if wanted in message["line"]:
                break
    return lines


def test_screenshots_of_a_run_are_served_and_its_files_listed(root: Path) -> None:
    """``screenshot/<name>`` (a scenario's ``screenshot()``) is the one folder served; the
    detail lists the run directory's files, so the page asks only for those that exist."""
    run_b = root / "unotest" / ".runs" / "smoke-b"
    (run_b / "screenshot").mkdir()
    (run_b / "screenshot" / "home.png").write_bytes(b"\x89PNG\r\n\x1a\nhome")
    (run_b / "screenshot" / "out.png").symlink_to(root.parent / "outside.txt")

    async def body(client: Client, _ctx: ViewerContext) -> None:
        shot = await client.get("/api/runs/smoke-b/files/screenshot/home.png")
        assert (shot.status_code, shot.content) == (200, b"\x89PNG\r\n\x1a\nhome")
        for name in ("screenshot/out.png", "screenshot/.x", "other/home.png", "screenshot"):
            assert (await client.get(f"/api/runs/smoke-b/files/{name}")).status_code == 404
        detail = (await client.get("/api/runs/smoke-b")).json()
        # escape.txt is a symlink out: never served, not listed.
        listed = ["manifest.json", "runtime.json", "stdout.log", "steps.jsonl"]
        assert detail["files"] == listed

    _drive(root, body)


# ---------------------------------------------------------------------------
# links between runs: restarts and retries (issues 16 and 18)
# ---------------------------------------------------------------------------


def _linked_runs(root: Path) -> None:
    """Hand-made runs linked as the runner links them: ``cart-a`` restarted as
    ``cart-b`` (its ``command:result`` names it, ``cart-b``'s manifest names it back),
    ``cart-b`` restarted as ``cart-c``; ``flaky-a`` failed and ``flaky-b`` is its
    second attempt (``attempt``/``retryOf``), passed."""
    result = {"kind": "command:result", "id": "r1", "ok": True, "t": 1_100}
    _run(root, "cart-a", ref="cart", started=10_000, extra_events=[{**result, "value": "cart-b"}])
    _run(root, "cart-b", ref="cart", started=10_100, extra_events=[{**result, "value": "cart-c"}])
    _run(root, "cart-c", ref="cart", started=10_200, finished=None)
    _run(root, "flaky-a", ref="flaky", started=11_000)
    _run(root, "flaky-b", ref="flaky", started=11_100)
    for run_id, extra in (
        ("cart-b", {"restartOf": "cart-a"}),
        ("cart-c", {"restartOf": "cart-b"}),
        ("flaky-b", {"attempt": 2, "retryOf": "flaky-a"}),
    ):
        path = root / "unotest" / ".runs" / run_id / "manifest.json"
        path.write_text(json.dumps({**json.loads(path.read_text()), **extra}))
    steps = root / "unotest" / ".runs" / "flaky-b" / "steps.jsonl"
    steps.write_text(steps.read_text().replace('"failed"', '"completed"'))


def test_a_runs_detail_and_listing_show_its_restarts_and_attempts(
    root: Path, protocol_validate: Callable[[str, object], None]
) -> None:
    _linked_runs(root)

    async def body(client: Client, _ctx: ViewerContext) -> None:
        links = ("restartOf", "restartedAs", "latestRestart")
        first = (await client.get("/api/runs/cart-a")).json()
        assert [first[k] for k in links] == [None, "cart-b", "cart-c"]
        assert first["attemptChain"] == {"attempts": ["cart-a"], "status": "failed"}
        middle = (await client.get("/api/runs/cart-b")).json()
        assert [middle[k] for k in links] == ["cart-a", "cart-c", "cart-c"]
        last = (await client.get("/api/runs/cart-c")).json()
        assert [last[k] for k in links] == ["cart-b", None, None]
        assert last["attemptChain"] == {"attempts": ["cart-c"], "status": None}  # running
        for run_id in ("flaky-a", "flaky-b"):
            detail = (await client.get(f"/api/runs/{run_id}")).json()
            assert detail["attemptChain"] == {"attempts": ["flaky-a", "flaky-b"], "status": "flaky"}
            assert [detail[k] for k in links] == [None, None, None]
        night = (await client.get("/api/runs/night-d")).json()  # a collection run: none
        assert [night[k] for k in ("attemptChain", *links)] == [None, None, None, None]

        listed = {m["runId"]: m for m in (await client.get("/api/runs")).json()}
        assert listed["cart-b"]["restartOf"] == "cart-a"
        assert (listed["flaky-b"]["attempt"], listed["flaky-b"]["retryOf"]) == (2, "flaky-a")
        assert not {"restartOf", "attempt", "retryOf"} & set(listed["cart-a"])
        for meta in listed.values():
            protocol_validate("RunMeta", meta)

    _drive(root, body)


def test_a_restarted_runs_output_reaches_ws_as_log_lines_of_the_new_run(
    site_project: Path,
) -> None:
    """``POST /api/runs``, paused before its ``log()``; ``restart``; the new run, continued,
    logs: its line reaches a ``/ws`` client as ``log:line`` with the new runId (the
    process goes on in a new run directory, whose output the server follows)."""
    runs = site_project / "unotest" / ".runs"

    async def drive() -> tuple[str, str, list[dict[str, Any]]]:
        ctx = ViewerContext(root=site_project.resolve(), token="t" * 32)
        seen: list[dict[str, Any]] = []
        async with (
            serving(ctx) as port,
            ws_connect(f"ws://127.0.0.1:{port}/ws") as ws,
            httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=60) as http,
        ):
            request = {
                "kind": "scenario",
                "scenario": "debug-me",
                "debug": True,
                "breakpoints": ["7:2"],
            }
            started = await http.post("/api/runs", json=request)
            assert started.status_code == 201, started.text
            old_id = started.json()["runId"]
            try:
                await receive_until(ws, seen, paused_in(old_id), RUN_TIMEOUT_S)
                restart = await http.post(f"/api/runs/{old_id}/commands", json={"cmd": "restart"})
                assert restart.status_code == 202, restart.text
                new = await receive_until(
                    ws,
                    seen,
                    lambda m: m["kind"] == "fs:run-started" and m["runId"] != old_id,
                    RUN_TIMEOUT_S,
                )
                new_id = str(new["runId"])
                await receive_until(ws, seen, paused_in(new_id), RUN_TIMEOUT_S)
                go = await http.post(f"/api/runs/{new_id}/commands", json={"cmd": "continue"})
                assert go.status_code == 202, go.text
                await receive_until(
                    ws,
                    seen,
                    lambda m: (
                        m["kind"] == "log:line" and m["runId"] == new_id and "n is 1" in m["line"]
                    ),
                    RUN_TIMEOUT_S,
                )
                await receive_until(
                    ws,
                    seen,
                    lambda m: m["kind"] == "fs:run-finished" and m["runId"] == new_id,
                    RUN_TIMEOUT_S,
                )
                details = [(await http.get(f"/api/runs/{i}")).json() for i in (old_id, new_id)]
            finally:
                for run_dir in runs.iterdir():  # nothing left paused if this failed
                    line = json.dumps({"id": "test-cleanup", "cmd": "abort"}) + "\n"
                    with open(run_dir / protocol.COMMANDS_FILE, "a") as commands:
                        commands.write(line)
        old, new_detail = details
        assert (old["restartedAs"], old["latestRestart"]) == (new_id, new_id)
        assert new_detail["restartOf"] == old_id and new_detail["meta"]["restartOf"] == old_id
        assert new_detail["attemptChain"] == {"attempts": [new_id], "status": "passed"}
        return old_id, new_id, seen

    old_id, new_id, seen = asyncio.run(drive())
    logged = [(m["runId"], m["stream"], m["line"]) for m in seen if m["kind"] == "log:line"]
    assert (new_id, "stdout", "n is 1") in [(r, s, line.strip()) for r, s, line in logged]
    assert not any(r == old_id and "n is 1" in line for r, _, line in logged), logged
    # the old run's own last line (the restart's) came under the old id
    assert any(r == old_id and f"restart: {old_id}" in line for r, _, line in logged), logged
