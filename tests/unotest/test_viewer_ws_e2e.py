"""``/ws`` on a real uvicorn server and a real ``websockets`` client while a real
``unotest e2e --break`` run in Chromium, started from the CLI as a terminal would, pauses,
is resumed through its commands.jsonl and finishes: fs:run-started, fs:run-step (the
``paused`` line included) and fs:run-finished arrive, each valid against the protocol's
WsMessage schema. A second client that never reads is closed with a reason while the
first goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from events import append_command
from net import serve_directory
from protocol_keys import ADDITIVE_KINDS, PROTOCOL_KINDS
from sites import config_yaml, scenario_source, unotest_env, write_project
from viewer_serving import receive_until, serving
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from runner import ws_messages
from runner.browser.launch import playwright_browser_path, resolve_executable
from runner.errors import BrowserNotFound
from unotest.viewer import routes_ws
from unotest.viewer.context import ViewerContext

_BIN = Path(sys.executable).with_name("unotest")
UNOTEST = [str(_BIN)] if _BIN.is_file() else [sys.executable, "-m", "unotest"]
BODY = "  goto('/index.html')\n  let a = 1\n  log('after ' + a)\n"
LINE_A = 6  # the header's 3 lines, the function line, goto
WAIT_S = 60

Message = dict[str, Any]


def chromium() -> str:
    try:
        resolved = resolve_executable("chromium", None, headless=True)
    except BrowserNotFound as exc:
        pytest.fail(f"this test needs Chromium: {exc} (run 'bash .ci/setup')", pytrace=False)
    path = resolved or playwright_browser_path("chromium", headless=True)
    assert path, "Playwright's own Chromium was reported but its path is unknown"
    return path


def step_kind(kind: str) -> Callable[[Message], bool]:
    return lambda m: m["kind"] == "fs:run-step" and m["event"]["kind"] == kind


def test_a_cli_run_paused_and_resumed_streams_live_to_ws_clients(
    tmp_path: Path, protocol_validate: Callable[[str, object], None]
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<title>ws</title><h1>hello</h1>")
    with serve_directory(site) as url:
        root = write_project(
            tmp_path / "proj",
            config_yaml(url, chromium=chromium()),
            {"waits": scenario_source("waits", BODY)},
        )
        seen, code = asyncio.run(_drive(root, tmp_path))
    assert code == 0, (tmp_path / "run.err").read_text()
    for message in seen:
        if message["kind"] == "fs:run-step" and message["event"]["kind"] in ADDITIVE_KINDS:
            continue  # ours, not 0.5.0's: checked by the runner's own tests
        protocol_validate("WsMessage", message)
    run_id = seen[0]["runId"]
    assert seen[0] == {"kind": "fs:run-started", "runId": run_id, "scenario": "waits"}
    steps = [m["event"] for m in seen if m["kind"] == "fs:run-step"]
    assert all(m.get("runId") == run_id for m in seen)
    kinds = [e["kind"] for e in steps]
    assert kinds[0] == "run:started" and kinds[-1] == "run:finished", kinds
    paused = next(e for e in steps if e["kind"] == "paused")
    assert (paused["reason"], paused["line"]) == ("breakpoint", LINE_A)
    assert "resumed" in kinds[kinds.index("paused") :]
    assert all(k in PROTOCOL_KINDS or k in ADDITIVE_KINDS for k in kinds), kinds
    lines = (tmp_path / "proj" / "unotest" / ".runs" / run_id / "steps.jsonl").read_bytes()
    assert len(steps) == lines.count(b"\n")  # every line once, none more
    assert seen[-1] == {"kind": "fs:run-finished", "runId": run_id, "outcome": "completed"}


async def _drive(root: Path, tmp_path: Path) -> tuple[list[Message], int | None]:
    ctx = ViewerContext(root=root.resolve(), token="t")
    ctx.hub.queue_size = 20
    async with serving(ctx) as port:
        uri = f"ws://127.0.0.1:{port}/ws"
        async with connect(uri) as client, connect(uri, max_queue=1) as idle:
            await _wait_for_clients(ctx, 2)
            with open(tmp_path / "run.out", "wb") as out, open(tmp_path / "run.err", "wb") as err:
                proc = subprocess.Popen(
                    [*UNOTEST, "e2e", "waits", "--break", str(LINE_A)],
                    cwd=root,
                    env=unotest_env(NO_COLOR="1"),
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=err,
                )
            try:
                seen = await _follow_run(client, idle, root, ctx)
                code = await asyncio.to_thread(proc.wait, WAIT_S)
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
    return seen, code


async def _wait_for_clients(ctx: ViewerContext, count: int) -> None:
    for _ in range(500):
        if ctx.hub.clients >= count:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{ctx.hub.clients} clients connected, not {count}")


async def _follow_run(
    client: ClientConnection, idle: ClientConnection, root: Path, ctx: ViewerContext
) -> list[Message]:
    seen: list[Message] = []
    started = await receive_until(client, seen, lambda m: m["kind"] == "fs:run-started", WAIT_S)
    await receive_until(client, seen, step_kind("paused"), WAIT_S)
    # the page's image at the pause is written just after it: settled before the flood
    await receive_until(client, seen, step_kind("page:image"), WAIT_S)
    await _flood_until_idle_is_dropped(client, ctx, started["runId"])
    # what was already on its way comes first, then the close with its reason
    backlog = 0
    with contextlib.suppress(ConnectionClosed):
        while True:
            await asyncio.wait_for(idle.recv(), WAIT_S)
            backlog += 1
    assert idle.close_code == routes_ws.BEHIND_CLOSE_CODE, (idle.close_code, backlog)
    assert idle.close_reason == f"fell behind by {ctx.hub.queue_size} messages; resync over REST"
    append_command(root / "unotest" / ".runs" / started["runId"], "continue")
    await receive_until(client, seen, lambda m: m["kind"] == "fs:run-finished", WAIT_S)
    return seen


async def _flood_until_idle_is_dropped(
    client: ClientConnection, ctx: ViewerContext, run_id: str
) -> None:
    """Big log lines, each published once the reading client is at most 10 behind,
    until the client that never reads has been dropped; the reader gets every one."""
    big = secrets.token_urlsafe(75_000)  # not compressible: fills the socket
    got: list[Message] = []

    async def read() -> None:
        while True:
            got.append(json.loads(await client.recv()))

    reader = asyncio.create_task(read())
    sent = 0
    try:
        while ctx.hub.clients > 1:
            assert sent < 2000, "the idle client was never dropped"
            if sent - len(got) < 10:
                line = f"{sent} {big}"
                ctx.hub.publish(ws_messages.log_line(run_id, "stdout", line))
                sent += 1
            await asyncio.sleep(0)
        for _ in range(WAIT_S * 100):
            if len(got) >= sent or reader.done():
                break
            await asyncio.sleep(0.01)
    finally:
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reader
    assert [m["line"].split(" ")[0] for m in got] == [str(i) for i in range(sent)]
