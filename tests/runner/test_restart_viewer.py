"""``restart`` of a run the viewer started: a real uvicorn server with the viewer's runs
REST routes and ``/ws``, a real HTTP client and a real WebSocket client, real Chromium.

``POST /api/runs`` starts ``unotest e2e`` as the viewer does (``runner.launch.launcher``:
its own session, ``UNOTEST_OUTPUT_TO_RUN_DIR=1``); it pauses at its breakpoint; ``POST
/api/runs/<runId>/commands {"cmd": "restart"}``; the new run reaches the WebSocket
client as any run does (``fs:run-started`` with the new run id, its steps, its pause at
the kept breakpoint), the old one ends ``aborted``, and the new one, continued over
REST, ends ``completed`` with its output in its own run directory.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from net import serve_directory
from sites import config_yaml, write_project
from viewer_serving import paused_in, receive_until, serving
from websockets.asyncio.client import connect

from runner import protocol
from unotest.viewer.context import ViewerContext

SITE = Path(__file__).resolve().parent / "site_debugger"
WAIT_S = 90
SCENARIO = """\
// id-flows-again
// Started again from the viewer
// #2563eb
function test_again() {
  goto("/index.html")
  let a = 1
  log("@ logged " + a)
  let b = a + 1
  expect_equal(b, 2)
}
"""
Message = dict[str, Any]


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    with serve_directory(SITE, "restart-viewer-site") as url:
        timeout = {"action": 2000, "expect": 2000, "navigation": 15000, "scenario": 60000}
        yield write_project(
            tmp_path / "proj", config_yaml(url, timeout=timeout), {"flows/again": SCENARIO}
        )


def test_restart_of_a_run_the_viewer_started(project: Path) -> None:
    runs = project / "unotest" / ".runs"

    async def drive() -> list[Message]:
        ctx = ViewerContext(root=project.resolve(), token="t" * 32)
        seen: list[Message] = []
        async with serving(ctx) as port:
            base = f"http://127.0.0.1:{port}"
            async with (
                connect(f"ws://127.0.0.1:{port}/ws") as ws,
                httpx.AsyncClient(base_url=base, timeout=WAIT_S) as http,
            ):
                request = {
                    "kind": "scenario",
                    "scenario": "flows/again",
                    "debug": True,
                    "breakpoints": ["8:2"],
                }
                started = await http.post("/api/runs", json=request)
                assert started.status_code == 201, started.text
                old_id = started.json()["runId"]
                try:
                    await receive_until(ws, seen, paused_in(old_id), WAIT_S)
                    restart = await http.post(
                        f"/api/runs/{old_id}/commands", json={"cmd": "restart"}
                    )
                    assert restart.status_code == 202, restart.text
                    new = await receive_until(
                        ws,
                        seen,
                        lambda m: m["kind"] == "fs:run-started" and m["runId"] != old_id,
                        WAIT_S,
                    )
                    await receive_until(ws, seen, paused_in(new["runId"]), WAIT_S)
                    go = await http.post(
                        f"/api/runs/{new['runId']}/commands", json={"cmd": "continue"}
                    )
                    assert go.status_code == 202, go.text
                    await receive_until(
                        ws,
                        seen,
                        lambda m: m["kind"] == "fs:run-finished" and m["runId"] == new["runId"],
                        WAIT_S,
                    )
                finally:
                    for run_dir in runs.iterdir():  # nothing left paused if this failed
                        line = json.dumps({"id": "test-cleanup", "cmd": "abort"}) + "\n"
                        with open(run_dir / protocol.COMMANDS_FILE, "a") as commands:
                            commands.write(line)
        return seen

    seen = asyncio.run(drive())
    started = [m for m in seen if m["kind"] == "fs:run-started"]
    assert [m["scenario"] for m in started] == ["flows/again", "flows/again"]
    old_id, new_id = (m["runId"] for m in started)
    finished = {m["runId"]: m["outcome"] for m in seen if m["kind"] == "fs:run-finished"}
    assert finished == {old_id: "aborted", new_id: "completed"}
    manifest = json.loads((runs / new_id / "manifest.json").read_text())
    assert manifest["restartOf"] == old_id
    results = [
        m["event"]
        for m in seen
        if m["kind"] == "fs:run-step" and m["event"]["kind"] == "command:result"
    ]
    assert [(r["ok"], r["value"]) for r in results] == [(True, new_id)]
    new_paused = [m["event"] for m in seen if paused_in(new_id)(m)]
    assert [(e["line"], e["col"]) for e in new_paused] == [(8, 2)]  # the breakpoint kept
    assert "@ logged 1" in (runs / new_id / "stdout.log").read_text()
