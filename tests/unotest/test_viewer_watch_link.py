"""The viewer sees the watch daemon (issue 17, item 5): a real ``unotest watch`` and a real
``unotest view`` on one test project, real HTTP and WebSocket clients, and the page in
real Chromium.

``GET /api/watch`` follows the discovery file (``not-running``, ``unreadable``, ``stale``,
``running``); a saved helper's batch reaches ``/ws`` as ``watch:event`` messages carrying
the daemon's events (the reasons with their chains); the daemon stopping and a new one
starting are seen without restarting the viewer; the sidebar says the daemon is watching
and, after a save, shows each re-run scenario's status and why it ran.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from net import free_port
from playwright.sync_api import Page, expect
from sites import unotest_env
from viewer_page import (
    Viewer,
    browser_type_launch_args,
    guard_page,
    page_project,
    running_viewer,
    scenario_source,
    served_site,
)
from websockets import Origin
from websockets.sync.client import ClientConnection
from websockets.sync.client import connect as ws_connect

from runner.browser.launch import playwright_browser_path, resolve_executable
from runner.errors import BrowserNotFound
from runner.watch.discovery import discovery_path, read_discovery

__all__ = ["browser_type_launch_args"]  # the fixture, imported for pytest to find here

Message = dict[str, Any]
WAIT_S = 60.0
H = "unotest/e2e/_helpers"
E = "unotest/e2e"
AUTH = 'function sign_in(user) {\n  goto("/")\n  log(user)\n}\n'
CART = 'function open_cart() {\n  sign_in("bob")\n  expect_text(css("h1"), "Welcome")\n}\n'


def chromium() -> str:
    try:
        resolved = resolve_executable("chromium", None, headless=True)
    except BrowserNotFound as exc:
        pytest.fail(f"this test needs Chromium: {exc} (run 'bash .ci/setup')", pytrace=False)
    path = resolved or playwright_browser_path("chromium", headless=True)
    assert path, "Playwright's own Chromium was reported but its path is unknown"
    return path


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    """login calls sign_in; shop/cart calls open_cart, which calls sign_in; plain calls
    neither."""
    with served_site(tmp_path / "site") as url:
        yield page_project(
            tmp_path / "proj",
            url,
            scenarios={
                "login": scenario_source("login", '  sign_in("ana")\n', fn="test_login"),
                "shop/cart": scenario_source("shop-cart", "  open_cart()\n", fn="test_cart"),
                "plain": '  goto("/")\n',
            },
            helpers={"auth": AUTH, "cart": CART},
            chromium=chromium(),
        )


class Daemon:
    """``python -m unotest watch --json`` with short debounce windows, stopped by SIGINT."""

    def __init__(self, root: Path) -> None:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "unotest",
                "watch",
                "--json",
                "--idle-ms",
                "80",
                "--max-ms",
                "1000",
            ],
            cwd=root,
            env=unotest_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert self.proc.stdout is not None
        first = self.proc.stdout.readline()
        if not first:
            assert self.proc.stderr is not None
            self.stop()
            pytest.fail(f"the daemon did not start: {self.proc.stderr.read().decode()}")
        started = json.loads(first)
        assert started["type"] == "daemon.started"
        self.pid = int(started["pid"])
        self.port = int(started["server"]["port"])
        # Its stdout is read to the end so the daemon never blocks on a full pipe.
        threading.Thread(target=self.proc.stdout.read, daemon=True).start()

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            return self.proc.wait(timeout=WAIT_S)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()


@contextlib.contextmanager
def watching(root: Path) -> Iterator[Daemon]:
    daemon = Daemon(root)
    try:
        yield daemon
    finally:
        daemon.stop()


class Live:
    """A real WebSocket client of the viewer's ``/ws``, as the page is one; every
    message, parsed, in a queue."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.messages: queue.Queue[Message | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        with contextlib.suppress(Exception):  # closed: by the test, or the viewer
            while True:
                self.messages.put(json.loads(self.ws.recv()))
        self.messages.put(None)

    def until(self, wanted: Callable[[Message], bool]) -> list[Message]:
        """Every message up to and including the first ``wanted`` one."""
        seen: list[Message] = []
        deadline = time.monotonic() + WAIT_S
        while True:
            left = deadline - time.monotonic()
            assert left > 0, f"never came; got {[describe(m) for m in seen]}"
            try:
                message = self.messages.get(timeout=left)
            except queue.Empty:
                continue
            assert message is not None, "the viewer closed /ws"
            seen.append(message)
            if wanted(message):
                return seen


@contextlib.contextmanager
def live_ws(viewer: Viewer) -> Iterator[Live]:
    ws_url = viewer.base.replace("http://", "ws://") + f"/ws?token={viewer.token}"
    with ws_connect(ws_url, origin=Origin(viewer.base), close_timeout=1) as ws:
        yield Live(ws)


def describe(message: Message) -> str:
    if message["kind"] == "watch:event":
        return f"watch:event {message['event']['type']}"
    if message["kind"] == "watch:status":
        return f"watch:status {message['status']} {message['connected']}"
    return str(message["kind"])


def daemon_event(kind: str) -> Callable[[Message], bool]:
    return lambda m: m["kind"] == "watch:event" and m["event"]["type"] == kind


def watch_state(viewer: Viewer, check: Callable[[Message], bool]) -> Message:
    """``GET /api/watch`` until ``check`` accepts it (the link polls once a second)."""
    deadline = time.monotonic() + WAIT_S
    while True:
        answer: Message = viewer.api("GET", "/api/watch")
        if check(answer):
            return answer
        assert time.monotonic() < deadline, f"/api/watch never got there: {answer}"
        time.sleep(0.1)


def dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def write_discovery_file(root: Path, pid: int, port: int) -> None:
    info = {
        "pid": pid,
        "host": "127.0.0.1",
        "port": port,
        "root": root.as_posix(),
        "version": "0.1.0",
        "protocolVersion": 1,
        "startedAt": 1,
    }
    discovery_path(root).write_text(json.dumps(info), encoding="utf-8")


def save(root: Path, rel: str) -> None:
    path = root / rel
    path.write_text(path.read_text(encoding="utf-8") + "\n", encoding="utf-8")


def test_api_watch_follows_the_discovery_file(project: Path) -> None:
    with running_viewer(project) as viewer:
        answer = viewer.api("GET", "/api/watch")
        assert answer["status"] == "not-running" and answer["connected"] is False
        assert answer["daemon"] is None and answer["files"] == {} and answer["lastBatch"] is None
        discovery_path(project).write_text("{not json", encoding="utf-8")
        unreadable = watch_state(viewer, lambda a: a["status"] == "unreadable")
        assert "is not JSON" in unreadable["reason"]
        gone = dead_pid()
        write_discovery_file(project, gone, 9)
        stale = watch_state(viewer, lambda a: a["status"] == "stale")
        assert stale["daemon"]["pid"] == gone and f"process {gone} is gone" in stale["reason"]
        assert stale["connected"] is False and stale["files"] == {}
        write_discovery_file(project, os.getpid(), free_port())  # runs, but listens nowhere
        refused = watch_state(viewer, lambda a: a["status"] == "running")
        assert refused["connected"] is False and refused["daemon"]["pid"] == os.getpid()
        time.sleep(1.5)  # a connection is tried and fails, more than once: still no answer
        assert viewer.api("GET", "/api/watch")["connected"] is False
        discovery_path(project).unlink()  # else the daemon would think one runs already
        with watching(project) as daemon:
            running = watch_state(viewer, lambda a: a["connected"])
            assert running["status"] == "running"
            assert running["daemon"]["pid"] == daemon.pid
            assert running["daemon"]["port"] == daemon.port
            assert running["running"] is False and running["lastBatch"] is None
            assert running["totals"]["batches"] == 0
        assert read_discovery(project).status == "not-running"
        after = watch_state(viewer, lambda a: a["status"] == "not-running")
        assert after["connected"] is False and after["daemon"] is None


def test_a_saved_helpers_batch_reaches_ws_and_api_watch_with_its_reasons(
    project: Path, protocol_validate: Callable[[str, object], None]
) -> None:
    root = project.as_posix()
    with running_viewer(project) as viewer, watching(project) as daemon, live_ws(viewer) as live:
        watch_state(viewer, lambda a: a["connected"])
        save(project, f"{H}/auth.js")
        seen = live.until(daemon_event("batch.finished"))
        events = [m["event"] for m in seen if m["kind"] == "watch:event"]
        started = next(e for e in events if e["type"] == "batch.started")
        (entry,) = started["plan"]
        assert sorted(entry["scenarios"]) == ["login", "shop/cart"]
        cart = entry["reasons"][f"{root}/{E}/shop/cart.test.js"][0]
        assert cart["kind"] == "importer" and cart["depth"] == 2
        assert cart["via"] == ["sign_in", "open_cart", "test_cart"]
        assert cart["chain"] == [
            f"{root}/{H}/auth.js",
            f"{root}/{H}/cart.js",
            f"{root}/{E}/shop/cart.test.js",
        ]
        finished = [e for e in events if e["type"] == "run.finished"]
        assert sorted(e["result"]["scenario"] for e in finished) == ["login", "shop/cart"]
        assert {e["result"]["status"] for e in finished} == {"passed"}
        assert [e["type"] for e in events if e["type"] == "run.started"] == ["run.started"] * 2
        seqs = [e["seq"] for e in events]
        assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
        for message in seen:  # the protocol's own messages stay valid next to ours
            if not message["kind"].startswith("watch:"):
                protocol_validate("WsMessage", message)

        answer = watch_state(viewer, lambda a: (a["lastBatch"] or {}).get("result") is not None)
        assert answer["lastBatch"]["batchId"] == started["batchId"]
        assert answer["lastBatch"]["result"]["status"] == "passed"
        assert answer["running"] is False and answer["totals"]["batches"] == 1
        files = answer["files"]
        assert set(files) == {"unotest/e2e/login.test.js", "unotest/e2e/shop/cart.test.js"}
        login = files["unotest/e2e/login.test.js"]
        assert login["status"] == "passed" and login["scenario"] == "login"
        chain = [f"{root}/{H}/auth.js", f"{root}/{E}/login.test.js"]
        assert login["reasons"][0]["chain"] == chain
        run_ids = {e["result"]["runId"] for e in finished}
        assert {f["runId"] for f in files.values()} == run_ids
        assert all((project / "unotest" / ".runs" / run_id).is_dir() for run_id in run_ids)

        assert daemon.stop() == 0
        gone = live.until(lambda m: m["kind"] == "watch:status" and not m["connected"])
        assert any(daemon_event("daemon.stopped")(m) for m in gone)
        assert watch_state(viewer, lambda a: a["status"] == "not-running")["files"] == {}

        with watching(project) as again:  # a new daemon is found without a new viewer
            back = live.until(daemon_event("snapshot"))[-1]["event"]
            assert back["state"]["daemon"]["pid"] == again.pid
            assert back["state"]["lastBatch"] is None
            answer = watch_state(viewer, lambda a: a["connected"])
            assert answer["daemon"]["pid"] == again.pid and answer["files"] == {}


def snapshot_line(files: dict[str, Any]) -> bytes:
    state = {"daemon": {}, "running": False, "lastBatch": None, "files": files, "totals": {}}
    event = {"type": "snapshot", "seq": 0, "timestamp": 1, "state": state}
    return json.dumps(event).encode() + b"\n"


def test_a_broken_line_from_the_daemon_costs_a_reconnect_not_the_link(project: Path) -> None:
    """A stand-in daemon on a real socket (this process, so its pid runs) sends a snapshot,
    then a line that is not JSON: the link drops that connection and, after its backoff,
    connects again for a fresh snapshot; the viewer answers all along."""
    plain = f"{project.as_posix()}/{E}/plain.test.js"
    connections: queue.Queue[socket.socket] = queue.Queue()
    with socket.create_server(("127.0.0.1", 0)) as server:

        def accept() -> None:
            with contextlib.suppress(OSError):
                while True:
                    connections.put(server.accept()[0])

        threading.Thread(target=accept, daemon=True).start()
        with running_viewer(project) as viewer:
            write_discovery_file(project, os.getpid(), server.getsockname()[1])
            first = connections.get(timeout=WAIT_S)
            first.sendall(snapshot_line({plain: {"status": "failed", "reasons": []}}))
            answer = watch_state(viewer, lambda a: a["connected"])
            assert answer["files"]["unotest/e2e/plain.test.js"]["status"] == "failed"
            first.sendall(b"{this is no event\n")
            first.settimeout(WAIT_S)
            assert first.recv(1) == b"", "the link kept a connection with a broken line"
            first.close()
            second = connections.get(timeout=WAIT_S)
            second.sendall(snapshot_line({plain: {"status": "passed", "reasons": []}}))
            answer = watch_state(
                viewer,
                lambda a: a["files"].get("unotest/e2e/plain.test.js", {}).get("status") == "passed",
            )
            assert answer["status"] == "running" and answer["connected"] is True
            discovery_path(project).unlink()  # first: a closed connection is tried again
            second.close()
            watch_state(viewer, lambda a: a["status"] == "not-running" and not a["connected"])


def test_a_viewer_started_after_a_batch_has_it_from_the_snapshot(project: Path) -> None:
    root = project.as_posix()
    with watching(project) as daemon:
        with socket.create_connection(("127.0.0.1", daemon.port), timeout=WAIT_S) as sock:
            lines = sock.makefile("rb")
            assert json.loads(lines.readline())["type"] == "snapshot"
            save(project, f"{E}/plain.test.js")
            while (event := json.loads(lines.readline()))["type"] != "batch.finished":
                pass
        assert event["result"]["status"] == "passed"
        with running_viewer(project) as viewer:
            answer = watch_state(viewer, lambda a: a["connected"])
            assert answer["lastBatch"]["batchId"] == event["batchId"]
            assert answer["lastBatch"]["result"]["status"] == "passed"
            plain = answer["files"]["unotest/e2e/plain.test.js"]
            assert plain["status"] == "passed" and plain["scenario"] == "plain"
            changed = {"kind": "changed", "changedFile": f"{root}/{E}/plain.test.js"}
            assert plain["reasons"] == [changed]
            assert answer["totals"]["batches"] == 1 and answer["totals"]["passed"] == 1


def test_the_sidebar_shows_the_daemon_watching_and_why_a_scenario_reran(
    project: Path, page: Page
) -> None:
    expect.set_options(timeout=30_000)
    guard = guard_page(page)
    with running_viewer(project) as viewer:
        page.goto(viewer.url)
        tree = page.get_by_role("tree", name="Scenarios")
        expect(tree.get_by_role("treeitem", name="login")).to_be_visible()
        status = page.get_by_role("status", name="Watch daemon")
        expect(status).to_have_count(0)
        with watching(project):
            expect(status).to_have_text("Watching: no batch yet")
            save(project, f"{H}/auth.js")
            expect(status).to_have_text(re.compile(r"Watching: batch-\d+ passed"))
            login = tree.get_by_role("treeitem", name="login")
            badge = login.get_by_role("button", name="watch: passed")
            why = "re-run: _helpers/auth.js → sign_in → test_login"
            expect(badge).to_have_attribute("title", why)
            cart = tree.get_by_role("treeitem", name="shop/cart")
            cart.get_by_role("button", name="watch: passed").click()
            expect(cart.get_by_label("why shop/cart ran")).to_have_text(
                "re-run: _helpers/auth.js → sign_in → open_cart (_helpers/cart.js) → test_cart"
            )
            plain = tree.get_by_role("treeitem", name="plain")
            expect(plain.get_by_role("button", name=re.compile("^watch:"))).to_have_count(0)
            expect(page.get_by_role("tab")).to_have_count(0)  # the badge opened no tab
        expect(status).to_have_count(0)
    guard.check()
