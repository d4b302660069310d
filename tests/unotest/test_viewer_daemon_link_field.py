"""Each viewer server owns its link to the watch daemon (``ViewerContext.daemon_link``).

Two real servers in one process, on two projects, real HTTP clients: each server's
lifespan makes its own link on its own project, ``GET /api/watch`` of each answers from
its own project's discovery file, and stopping one server stops and clears only its
link while the other keeps answering.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import uvicorn
from sites import scenario_source, write_project

from runner.watch.discovery import discovery_path
from unotest.viewer.app import build_app
from unotest.viewer.context import ViewerContext
from unotest.viewer.daemon_link import DaemonLink
from unotest.viewer.security import new_token
from unotest.viewer.server import bind

WAIT_S = 20.0


def _project(root: Path) -> Path:
    return write_project(root, "headless: true\n", {"smoke": scenario_source("smoke", "")})


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _stale_discovery(root: Path) -> None:
    """A discovery file naming a process that has exited: the link says ``stale``."""
    info = {
        "pid": _dead_pid(),
        "host": "127.0.0.1",
        "port": 9,
        "root": root.as_posix(),
        "version": "0.1.0",
        "protocolVersion": 1,
        "startedAt": 1,
    }
    discovery_path(root).write_text(json.dumps(info), encoding="utf-8")


@contextlib.contextmanager
def _serving(ctx: ViewerContext) -> Iterator[httpx.Client]:
    sock = bind("127.0.0.1", 0)
    ctx.port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(build_app(ctx), log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + WAIT_S
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.01)
    headers = {"Authorization": f"Bearer {ctx.token}"}
    base = f"http://127.0.0.1:{ctx.port}"
    try:
        with httpx.Client(base_url=base, headers=headers, timeout=WAIT_S) as client:
            yield client
    finally:
        server.should_exit = True
        thread.join(WAIT_S)
        sock.close()
    assert not thread.is_alive(), "the server did not stop"


def _status(client: httpx.Client, wanted: str) -> dict[str, object]:
    """``GET /api/watch`` until its status is ``wanted`` (the link reads once a second)."""
    deadline = time.monotonic() + WAIT_S
    while True:
        answer: dict[str, object] = client.get("/api/watch").json()
        if answer["status"] == wanted:
            return answer
        assert time.monotonic() < deadline, f"never {wanted}: {answer}"
        time.sleep(0.05)


def test_two_servers_in_one_process_each_have_their_own_link(tmp_path: Path) -> None:
    stale_root = _project(tmp_path / "stale")
    quiet_root = _project(tmp_path / "quiet")
    _stale_discovery(stale_root)
    stale = ViewerContext(root=stale_root, token=new_token())
    quiet = ViewerContext(root=quiet_root, token=new_token())
    assert stale.daemon_link is None and quiet.daemon_link is None

    with _serving(stale) as stale_client:
        with _serving(quiet) as quiet_client:
            links = (stale.daemon_link, quiet.daemon_link)
            assert all(isinstance(link, DaemonLink) for link in links)
            assert links[0] is not links[1]
            assert [link.root for link in links if link is not None] == [stale_root, quiet_root]
            assert _status(stale_client, "stale")["connected"] is False
            assert _status(quiet_client, "not-running")["daemon"] is None
        # The second server's shutdown stopped and cleared its own link only.
        assert quiet.daemon_link is None
        assert stale.daemon_link is links[0]
        assert _status(stale_client, "stale")["status"] == "stale"
    assert stale.daemon_link is None
