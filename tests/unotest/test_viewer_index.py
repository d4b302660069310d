"""The viewer's kept project index (``unotest/viewer/project_index.py``): a real server on
a free port (uvicorn in a thread, its real file watcher), a real HTTP client.

``/api/scenarios`` (and helpers, collections, problems) are answered from one load per
generation of the project's files: a file added, changed or removed on disk is seen once
the watcher has reported it, a save through the viewer's own routes at once, and answers
in one generation are the same bytes, not loaded again (``ctx.index.loads`` counts the
loads). Without a watcher every request loads.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import httpx
import uvicorn
from sites import collection_yaml, scenario_source, write_project

from unotest.viewer import routes_ws
from unotest.viewer.app import ROUTE_MODULES, build_app
from unotest.viewer.context import ViewerContext
from unotest.viewer.security import new_token
from unotest.viewer.server import bind

E2E = "unotest/e2e"
ROUTES = ("/api/scenarios", "/api/helpers", "/api/collections", "/api/problems")


@dataclass
class Server:
    ctx: ViewerContext
    client: httpx.Client

    def names(self) -> list[str]:
        answer = self.client.get("/api/scenarios")
        assert answer.status_code == 200, answer.text
        return sorted(meta["name"] for meta in answer.json())


def make_project(root: Path) -> Path:
    body = '  sign_in()\n  goto("/")\n'
    return write_project(
        root,
        "headless: true\n",
        {"smoke": scenario_source("smoke", body), "shop/cart": scenario_source("cart", body)},
        helpers={"auth": 'function sign_in() {\n  log("in")\n}\n'},
        collections={"all": collection_yaml(["smoke", "shop/cart"])},
    )


@contextmanager
def serving(root: Path, modules: tuple[ModuleType, ...] = ROUTE_MODULES) -> Iterator[Server]:
    ctx = ViewerContext(root=root, token=new_token())
    sock = bind("127.0.0.1", 0)
    ctx.port = sock.getsockname()[1]
    config = uvicorn.Config(build_app(ctx, modules), log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    until(lambda: bool(server.started) or not thread.is_alive(), "the server to start")
    assert thread.is_alive(), "the server did not start"
    headers = {"Authorization": f"Bearer {ctx.token}"}
    base = f"http://127.0.0.1:{ctx.port}"
    try:
        with httpx.Client(base_url=base, headers=headers, timeout=30) as client:
            yield Server(ctx, client)
    finally:
        server.should_exit = True
        thread.join(20)
        sock.close()


def until(done: Callable[[], bool], what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, f"waited {timeout} s for {what}"
        time.sleep(0.02)


def watching(server: Server) -> None:
    """Wait for the watch to be in place (it moves the generation on when it is)."""
    until(lambda: server.ctx.index.generation > 0, "the file watch")


def reported(server: Server, change: Callable[[], object]) -> None:
    """Make ``change`` on disk and wait until the watcher has reported it (the index's
    generation moved on)."""
    seen = server.ctx.index.generation
    change()
    until(lambda: server.ctx.index.generation != seen, "the watcher to report the change")


def test_one_generation_is_loaded_once_and_answered_with_the_same_bytes(tmp_path: Path) -> None:
    with serving(make_project(tmp_path / "proj")) as server:
        watching(server)
        first = {route: server.client.get(route).content for route in ROUTES}
        loads = server.ctx.index.loads
        assert loads >= 1
        for _ in range(3):
            for route in ROUTES:
                assert server.client.get(route).content == first[route]
        assert server.ctx.index.loads == loads  # nothing loaded again
        assert b'"shop/cart"' in first["/api/scenarios"]
        assert b'"auth"' in first["/api/helpers"]
        assert first["/api/problems"] == b"[]"

        # A change reported by the watcher: one load more, whatever the routes asked.
        path = server.ctx.root / E2E / "smoke.test.js"
        reported(server, lambda: path.write_text(scenario_source("smoke", "  nope()\n")))
        problems = server.client.get("/api/problems").json()
        assert [p["path"] for p in problems] == [f"{E2E}/smoke.test.js"]
        changed = server.ctx.index.loads
        assert changed > loads
        for _ in range(2):
            for route in ROUTES:
                server.client.get(route)
        assert server.ctx.index.loads == changed


def test_files_added_changed_and_removed_on_disk_are_seen_once_reported(tmp_path: Path) -> None:
    with serving(make_project(tmp_path / "proj")) as server:
        watching(server)
        e2e = server.ctx.root / E2E
        assert server.names() == ["shop/cart", "smoke"]
        added = e2e / "shop" / "pay.test.js"
        reported(server, lambda: added.write_text(scenario_source("pay", '  goto("/")\n')))
        assert server.names() == ["shop/cart", "shop/pay", "smoke"]

        retitled = scenario_source("pay", '  goto("/pay")\n', title="Pay by card")
        reported(server, lambda: added.write_text(retitled))
        titles = {m["name"]: m["title"] for m in server.client.get("/api/scenarios").json()}
        assert titles["shop/pay"] == "Pay by card"

        reported(server, (e2e / "smoke.test.js").unlink)
        assert server.names() == ["shop/cart", "shop/pay"]
        collections = server.client.get("/api/collections").json()
        reported(server, lambda: (e2e / "_collections" / "all.yaml").unlink())
        assert collections and server.client.get("/api/collections").json() == []


def test_a_save_through_the_viewer_is_seen_at_once(tmp_path: Path) -> None:
    # No watcher runs (no routes_ws), but the index is told one is in place: what it
    # keeps is trusted until something says the project changed, which only the
    # viewer's own saves do here.
    modules = tuple(m for m in ROUTE_MODULES if m is not routes_ws)
    with serving(make_project(tmp_path / "proj"), modules) as server:
        server.ctx.index.watching(True)
        assert server.names() == ["shop/cart", "smoke"]
        e2e = server.ctx.root / E2E
        (e2e / "behind.test.js").write_text(scenario_source("behind", "  log(1)\n"))
        assert server.names() == ["shop/cart", "smoke"]  # kept: nobody reported it
        text = scenario_source("saved", '  goto("/")\n')
        put = server.client.put(f"/api/files/{E2E}/saved.test.js", json={"text": text})
        assert put.status_code == 200, put.text
        assert server.names() == ["behind", "saved", "shop/cart", "smoke"]
        made = server.client.post(
            "/api/collections", json={"name": "nightly", "scenarios": ["saved"]}
        )
        assert made.status_code == 201, made.text
        names = [c["name"] for c in server.client.get("/api/collections").json()]
        assert sorted(names) == ["all", "nightly"]


def test_without_the_watcher_every_request_loads_what_is_on_disk(tmp_path: Path) -> None:
    modules = tuple(m for m in ROUTE_MODULES if m is not routes_ws)
    with serving(make_project(tmp_path / "proj"), modules) as server:
        assert server.names() == ["shop/cart", "smoke"]
        loads = server.ctx.index.loads
        (server.ctx.root / E2E / "late.test.js").write_text(scenario_source("late", "  log(1)\n"))
        assert server.names() == ["late", "shop/cart", "smoke"]
        assert server.ctx.index.loads == loads + 1
