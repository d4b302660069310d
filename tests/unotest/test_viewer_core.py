"""The viewer's core: a real server on a free port, a real HTTP client (httpx).

Security (token, Host, Origin, body bounds) and every project endpoint, against a
project built in ``tmp_path``; shapes validated against the 0.5.0 JSON Schemas.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import threading
import time
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import uvicorn
import websockets
from sites import collection_yaml, scenario_source, write_project
from starlette.routing import BaseRoute, WebSocketRoute
from starlette.websockets import WebSocket

from runner.errors import UsageError
from unotest.viewer.app import ROUTE_MODULES, build_app
from unotest.viewer.context import ViewerContext
from unotest.viewer.security import FILE_BODY_LIMIT, allowed_hosts, cookie_name, new_token
from unotest.viewer.server import bind, serve

Validate = Callable[[str, object], None]
BODY = '  const a = 1\n  if (a) {\n    log("x")\n  }\n'
SMOKE = "unotest/e2e/smoke.test.js"


@dataclass
class Viewer:
    ctx: ViewerContext
    base: str
    client: httpx.Client
    """Carries the token as ``Authorization: Bearer``."""

    @property
    def root(self) -> Path:
        return self.ctx.root


def make_project(root: Path) -> Path:
    return write_project(
        root,
        "headless: true\n",
        {"smoke": scenario_source("smoke", BODY), "auth/login": scenario_source("login", BODY)},
        helpers={"auth": 'function sign_in() {\n  log("in")\n}\n'},
        collections={"all": collection_yaml(["smoke", "ghost"])},
        files={"unotest/.env": "# comment\nUSER=ann\nAPI_TOKEN='s3 cret'\n# OLD=1\nDEBUG=0\n"},
    )


async def _echo(websocket: WebSocket) -> None:
    await websocket.accept()
    await websocket.send_text(await websocket.receive_text())
    await websocket.close()


def _echo_routes(ctx: ViewerContext) -> list[BaseRoute]:
    return [WebSocketRoute("/test-echo", _echo)]


ECHO = types.ModuleType("echo_routes")
ECHO.routes = _echo_routes  # type: ignore[attr-defined]


@pytest.fixture
def viewer(tmp_path: Path) -> Iterator[Viewer]:
    root = make_project(tmp_path / "proj")
    ctx = ViewerContext(root=root, token=new_token())
    sock = bind("127.0.0.1", 0)
    ctx.port = sock.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(build_app(ctx, (*ROUTE_MODULES, ECHO)), log_level="warning", lifespan="on")
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.01)
    base = f"http://127.0.0.1:{ctx.port}"
    headers = {"Authorization": f"Bearer {ctx.token}"}
    with httpx.Client(base_url=base, headers=headers, timeout=20) as client:
        yield Viewer(ctx, base, client)
    server.should_exit = True
    thread.join(20)
    sock.close()


def error_of(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert list(body) == ["error"] and isinstance(body["error"], str) and body["error"]
    return str(body["error"])


# --- security ------------------------------------------------------------------


def test_without_the_token_every_request_is_refused(viewer: Viewer) -> None:
    with httpx.Client(base_url=viewer.base, timeout=20) as anonymous:
        error_of(anonymous.get("/api/scenarios"), 401)
        error_of(anonymous.get("/api/scenarios", params={"token": "x" * 32}), 401)
        error_of(anonymous.get("/nowhere"), 401)
        token = viewer.ctx.token
        # One character off (a token ending in "A" made "A" the right one: 1 run in 64).
        wrong = {"Authorization": "Bearer " + token[:-1] + ("B" if token[-1] == "A" else "A")}
        error_of(anonymous.get("/api/project", headers=wrong), 401)
        error_of(anonymous.put(SMOKE.replace("unotest", "/api/files/unotest"), json={}), 401)


def test_the_token_in_the_url_becomes_a_strict_httponly_cookie(viewer: Viewer) -> None:
    with httpx.Client(base_url=viewer.base, timeout=20) as browser:
        first = browser.get("/api/project", params={"token": viewer.ctx.token})
        assert first.status_code == 200
        cookie = first.headers["set-cookie"]
        assert cookie.startswith(f"{cookie_name(viewer.ctx.port)}={viewer.ctx.token};")
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        assert browser.get("/api/scenarios").status_code == 200  # the cookie alone


def test_no_page_may_frame_the_viewer_and_no_request_sends_its_address(viewer: Viewer) -> None:
    """Every answer, a refusal included: a page of another local server (cookies ignore
    ports) must not show the logged-in viewer in a frame, and the first load's address
    holds the token."""
    with httpx.Client(base_url=viewer.base, timeout=20) as browser:
        answers = [
            browser.get("/api/project", params={"token": viewer.ctx.token}),
            browser.get("/api/scenarios"),
            browser.get("/nowhere"),
            httpx.get(viewer.base + "/api/project", timeout=20),  # no token: 401
        ]
    assert [a.status_code for a in answers] == [200, 200, 404, 401]
    for answer in answers:
        assert answer.headers["x-frame-options"] == "DENY"
        assert answer.headers["content-security-policy"] == "frame-ancestors 'none'"
        assert answer.headers["referrer-policy"] == "no-referrer"
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert len(answer.headers.get_list("x-frame-options")) == 1


@pytest.mark.parametrize("host", ["evil.example:{port}", "127.0.0.1:1", "localhost", ""])
def test_a_foreign_host_header_is_refused(viewer: Viewer, host: str) -> None:
    headers = {"Host": host.format(port=viewer.ctx.port)}
    error_of(viewer.client.get("/api/project", headers=headers), 403)


def test_allowed_hosts_are_the_bound_one_and_loopback_names(tmp_path: Path) -> None:
    ctx = ViewerContext(root=tmp_path, token="t", host="192.168.1.5", port=8080)
    assert allowed_hosts(ctx) == {
        "localhost:8080",
        "127.0.0.1:8080",
        "[::1]:8080",
        "192.168.1.5:8080",
    }
    on_80 = ViewerContext(root=tmp_path, token="t", host="::1", port=80)
    assert allowed_hosts(on_80) == {"localhost:80", "127.0.0.1:80", "[::1]:80"} | {
        "localhost",
        "127.0.0.1",
        "[::1]",
    }
    wildcard = ViewerContext(root=tmp_path, token="t", host="0.0.0.0", port=8080)
    hosts = allowed_hosts(wildcard)
    assert {"localhost:8080", f"{socket.gethostname()}:8080".lower()} <= hosts
    assert "0.0.0.0:8080" not in hosts and "evil.example:8080" not in hosts
    assert len(new_token()) >= 32 and new_token() != new_token()  # 192 bits, fresh each time


def test_localhost_by_name_is_accepted(viewer: Viewer) -> None:
    headers = {"Host": f"localhost:{viewer.ctx.port}"}
    assert viewer.client.get("/api/project", headers=headers).status_code == 200


def test_a_foreign_origin_is_refused_over_http_and_websocket(viewer: Viewer) -> None:
    error_of(viewer.client.get("/api/project", headers={"Origin": "http://evil.example"}), 403)
    own = {"Origin": f"http://localhost:{viewer.ctx.port}"}
    assert viewer.client.get("/api/project", headers=own).status_code == 200

    async def handshake(origin: str | None, token: str = viewer.ctx.token) -> int | str:
        url = f"ws://127.0.0.1:{viewer.ctx.port}/test-echo?token={token}"
        given = None if origin is None else websockets.Origin(origin)
        try:
            async with websockets.connect(url, origin=given) as ws:
                await ws.send("hello")
                return str(await ws.recv())
        except websockets.InvalidStatus as err:
            return err.response.status_code

    assert asyncio.run(handshake("http://evil.example")) == 403
    assert asyncio.run(handshake(f"http://127.0.0.1:{viewer.ctx.port}", token="nope")) == 403
    assert asyncio.run(handshake(f"http://127.0.0.1:{viewer.ctx.port}")) == "hello"
    assert asyncio.run(handshake(None)) == "hello"  # not a browser: the token suffices


def test_the_full_app_serves_ws_events_of_a_saved_file(
    viewer: Viewer, protocol_validate: Validate
) -> None:
    async def saved_then_heard() -> dict[str, object]:
        url = f"ws://127.0.0.1:{viewer.ctx.port}/ws?token={viewer.ctx.token}"
        origin = websockets.Origin(f"http://127.0.0.1:{viewer.ctx.port}")
        async with websockets.connect(url, origin=origin) as ws:
            text = scenario_source("smoke", '  log("saved")\n')
            async with httpx.AsyncClient(base_url=viewer.base, headers=viewer.client.headers) as c:
                assert (await c.put(f"/api/files/{SMOKE}", json={"text": text})).status_code == 200
            while True:
                message = json.loads(await asyncio.wait_for(ws.recv(), 20))
                if message.get("kind") == "fs:scenarios-changed":
                    return dict(message)

    message = asyncio.run(saved_then_heard())
    protocol_validate("WsMessage", message)


def test_the_full_app_serves_the_runs_routes(viewer: Viewer) -> None:
    assert viewer.client.get("/api/runs").json() == []
    error_of(viewer.client.post("/api/runs", json={"kind": "teleport"}), 400)
    error_of(viewer.client.get("/api/runs/nope-1-abcdef"), 404)


def test_bodies_are_bounded(viewer: Viewer) -> None:
    big = json.dumps({"version": 1, "scenarios": {}, "pad": "x" * (1024 * 1024)})
    error_of(viewer.client.put("/api/breakpoints", content=big), 413)
    text = scenario_source("smoke", BODY) + "// " + "y" * (2 * 1024 * 1024) + "\n"
    assert viewer.client.put(f"/api/files/{SMOKE}", json={"text": text}).status_code == 200
    huge = json.dumps({"text": "z" * FILE_BODY_LIMIT})
    error_of(viewer.client.put(f"/api/files/{SMOKE}", content=huge), 413)
    assert (viewer.root / SMOKE).read_text(encoding="utf-8") == text


def test_unknown_paths_and_bad_json_answer_in_json(viewer: Viewer) -> None:
    error_of(viewer.client.get("/api/nothing"), 404)
    error_of(viewer.client.post("/api/project"), 405)
    error_of(viewer.client.put("/api/breakpoints", content=b"{not json"), 400)


# --- the project ---------------------------------------------------------------


def test_project_summary(viewer: Viewer) -> None:
    body = viewer.client.get("/api/project").json()
    assert body["root"] == str(viewer.root)
    assert body["name"] == "proj"
    assert body["protocolVersion"] == "0.5.0"
    assert body["adapter"] == "@unotest/web"
    assert body["config"]["headless"] is True and body["configError"] is None


def test_scenarios_helpers_collections_in_protocol_shapes(
    viewer: Viewer, protocol_validate: Validate
) -> None:
    scenarios = viewer.client.get("/api/scenarios").json()
    assert sorted(s["name"] for s in scenarios) == ["auth/login", "smoke"]
    for meta in scenarios:
        protocol_validate("ScenarioMeta", meta)
    helpers = viewer.client.get("/api/helpers").json()
    assert helpers == [{"name": "auth", "path": "unotest/e2e/_helpers/auth.js"}]
    protocol_validate("HelperMeta", helpers[0])
    collections = viewer.client.get("/api/collections").json()
    assert collections[0]["scenarios"] == ["smoke", "ghost"]  # the orphan is kept
    protocol_validate("CollectionMeta", collections[0])


def test_problems_name_path_line_col_message(viewer: Viewer) -> None:
    assert viewer.client.get("/api/problems").json() == []
    seen = viewer.ctx.index.generation
    (viewer.root / "unotest/e2e/broken.test.js").write_text(
        scenario_source("broken", "  nope()\n"), encoding="utf-8"
    )
    deadline = time.monotonic() + 20  # the index is loaded again once the watcher saw it
    while viewer.ctx.index.generation == seen and time.monotonic() < deadline:
        time.sleep(0.02)
    problems = viewer.client.get("/api/problems").json()
    assert [(p["path"], p["line"], p["col"]) for p in problems] == [
        ("unotest/e2e/broken.test.js", 5, 2)
    ]
    assert "nope" in problems[0]["message"]


def test_a_file_with_its_statements_and_problems(viewer: Viewer) -> None:
    body = viewer.client.get(f"/api/files/{SMOKE}").json()
    assert body["path"] == SMOKE
    assert body["text"] == (viewer.root / SMOKE).read_text(encoding="utf-8")
    assert body["statements"] == [
        {"line": 5, "col": 2},
        {"line": 6, "col": 2},
        {"line": 7, "col": 4},
    ]
    assert body["problems"] == []
    collection = viewer.client.get("/api/files/unotest/e2e/_collections/all.yaml").json()
    assert collection["statements"] == [] and "ghost" in collection["text"]


def test_saving_a_file_keeps_its_mode_and_answers_the_new_problems(viewer: Viewer) -> None:
    path = viewer.root / SMOKE
    os.chmod(path, 0o640)
    text = scenario_source("smoke", "  missing_helper()\n")
    body = viewer.client.put(f"/api/files/{SMOKE}", json={"text": text}).json()
    assert path.read_text(encoding="utf-8") == text
    assert path.stat().st_mode & 0o777 == 0o640
    assert [(p["line"], p["col"]) for p in body["problems"]] == [(5, 2)]
    assert body["statements"] == [{"line": 5, "col": 2}]
    error_of(viewer.client.put(f"/api/files/{SMOKE}", json={"text": 3}), 400)


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("unotest/e2e/%2e%2e/%2e%2e/unotest.config.yaml", 404),
        ("unotest/.env", 404),
        ("unotest.config.yaml", 404),
        ("unotest/e2e/nope.test.js", 404),
        ("unotest/e2e/smoke%00.test.js", 400),
        ("%2Fetc%2Fpasswd", 400),
    ],
)
def test_paths_outside_e2e_are_refused(viewer: Viewer, path: str, status: int) -> None:
    error_of(viewer.client.get(f"/api/files/{path}"), status)
    if "nope" not in path:  # a missing source under e2e/ is created by PUT
        error_of(viewer.client.put(f"/api/files/{path}", json={"text": "x"}), status)
    assert (viewer.root / "unotest.config.yaml").read_text(encoding="utf-8") == "headless: true\n"


def test_a_symlink_out_of_e2e_is_not_served(viewer: Viewer, tmp_path: Path) -> None:
    secret = tmp_path / "secret.test.js"
    secret.write_text("the secret", encoding="utf-8")
    (viewer.root / "unotest/e2e/link.test.js").symlink_to(secret)
    error_of(viewer.client.get("/api/files/unotest/e2e/link.test.js"), 404)
    error_of(viewer.client.put("/api/files/unotest/e2e/link.test.js", json={"text": "x"}), 404)
    assert secret.read_text(encoding="utf-8") == "the secret"


def test_breakpoints_land_on_statements_and_the_answer_says_so(
    viewer: Viewer, protocol_validate: Validate
) -> None:
    assert viewer.client.get("/api/breakpoints").json() == {"version": 1, "scenarios": {}}
    sent = {"version": 1, "scenarios": {"smoke": [{"line": 6, "col": 2}, {"line": 7, "col": 1}]}}
    body = viewer.client.put("/api/breakpoints", json=sent).json()
    assert body["scenarios"] == {"smoke": [{"line": 6, "col": 2}, {"line": 7, "col": 4}]}
    assert body["notes"] == ["smoke: 7:1 is no statement start; moved to 7:4"]
    protocol_validate("BreakpointsFile", body)
    on_disk = json.loads((viewer.root / "unotest/.debugger.json").read_text(encoding="utf-8"))
    assert on_disk == {"version": 1, "scenarios": body["scenarios"]}
    assert viewer.client.get("/api/breakpoints").json() == on_disk
    error_of(viewer.client.put("/api/breakpoints", json={"version": 2}), 400)


def test_collections_are_created_and_replaced(viewer: Viewer, protocol_validate: Validate) -> None:
    new = {"name": "nightly", "description": "Every night", "scenarios": ["smoke", "auth/login"]}
    created = viewer.client.post("/api/collections", json=new)
    assert created.status_code == 201
    protocol_validate("CollectionMeta", created.json())
    assert created.json()["path"] == "unotest/e2e/_collections/nightly.yaml"
    error_of(viewer.client.post("/api/collections", json=new), 409)
    error_of(viewer.client.post("/api/collections", json={**new, "name": "a/b"}), 400)
    replaced = viewer.client.put(
        "/api/collections/nightly", json={"description": None, "scenarios": ["smoke"]}
    )
    assert replaced.status_code == 200
    listed = {c["name"]: c for c in viewer.client.get("/api/collections").json()}
    assert listed["nightly"] == {
        "name": "nightly",
        "path": "unotest/e2e/_collections/nightly.yaml",
        "description": None,
        "scenarios": ["smoke"],
    }


def test_env_is_read_and_only_values_change(viewer: Viewer, protocol_validate: Validate) -> None:
    env = viewer.client.get("/api/env").json()
    protocol_validate("EnvFile", env)
    by_key = {v["key"]: v for v in env["vars"]}
    assert by_key["API_TOKEN"]["secret"] is True and by_key["API_TOKEN"]["value"] == "s3 cret"
    assert by_key["DEBUG"]["bool"] is True and by_key["OLD"]["commented"] is True
    update = {"version": 1, "values": {"USER": "bob", "API_TOKEN": "new one"}}
    changed = viewer.client.put("/api/env", json=update).json()
    protocol_validate("EnvFile", changed)
    assert (viewer.root / "unotest/.env").read_text(encoding="utf-8") == (
        "# comment\nUSER=bob\nAPI_TOKEN='new one'\n# OLD=1\nDEBUG=0\n"
    )
    error_of(viewer.client.put("/api/env", json={"version": 1, "values": {"OLD": "2"}}), 400)
    error_of(viewer.client.put("/api/env", json={"version": 1, "values": {"NEW": "2"}}), 400)


# --- serving -------------------------------------------------------------------


def test_serve_stops_gracefully_on_sigterm_and_says_so(tmp_path: Path) -> None:
    ctx = ViewerContext(root=make_project(tmp_path / "proj"), token=new_token())
    sock = bind("127.0.0.1", 0)
    answers: list[int] = []

    def ready() -> None:
        def ask_then_stop() -> None:
            with httpx.Client(timeout=20) as client:
                url = f"http://127.0.0.1:{ctx.port}/api/project?token={ctx.token}"
                answers.append(client.get(url).status_code)
            os.kill(os.getpid(), signal.SIGTERM)

        threading.Thread(target=ask_then_stop, daemon=True).start()

    previous = signal.getsignal(signal.SIGTERM)
    assert serve(ctx, sock, ready) == signal.SIGTERM
    assert answers == [200]
    assert signal.getsignal(signal.SIGTERM) == previous
    sock.close()


def test_a_failed_startup_is_an_error_not_a_silent_exit(tmp_path: Path) -> None:
    async def startup(ctx: ViewerContext) -> None:
        raise RuntimeError("the watcher cannot start")

    broken = types.ModuleType("broken_routes")
    broken.routes = lambda ctx: []  # type: ignore[attr-defined]
    broken.startup = startup  # type: ignore[attr-defined]
    ctx = ViewerContext(root=make_project(tmp_path / "proj"), token=new_token())
    sock = bind("127.0.0.1", 0)
    ready: list[bool] = []
    with pytest.raises(UsageError, match="did not start"):
        serve(ctx, sock, lambda: ready.append(True), modules=(broken,))
    assert ready == []
    sock.close()
