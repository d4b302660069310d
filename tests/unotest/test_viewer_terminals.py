"""Terminals on ``/ws/terminal``: a real uvicorn server on a free port, a real WebSocket client.

Nothing here asserts a duration: every wait is for a message (or for ``/proc`` to empty),
with a generous timeout that only bounds a failure.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import uvicorn
from websockets import InvalidStatus, Origin
from websockets.sync.client import ClientConnection
from websockets.sync.client import connect as ws_connect

from unotest.viewer import routes_terminal
from unotest.viewer.app import build_app
from unotest.viewer.context import ViewerContext
from unotest.viewer.terminals import (
    FrameError,
    parse_client_frame,
    session_groups,
    terminal_error,
    terminal_exit,
    terminal_frame,
    terminal_output,
)

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/stat").exists(), reason="process checks read /proc"
)

TIMEOUT = 20.0
TOKEN = "terminal-test-token-0123456789abcdef"
Frame = dict[str, object]


class Server:
    """A real uvicorn server on a free port: the viewer's app (security and all) with the
    terminal routes, rooted at ``root``, in a thread of its own."""

    def __init__(self, root: Path) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        self.url = f"ws://127.0.0.1:{port}/ws/terminal"
        ctx = ViewerContext(root=root, token=TOKEN, port=port)
        config = uvicorn.Config(build_app(ctx, (routes_terminal,)), log_level="warning")
        self._server = uvicorn.Server(config)
        self._sock = sock
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + TIMEOUT
        while not self._server.started:
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.01)

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(TIMEOUT)
        assert not self._thread.is_alive(), "the server did not stop"
        self._sock.close()


@pytest.fixture
def live(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Server]:
    monkeypatch.setenv("SHELL", "/bin/sh")
    monkeypatch.setenv("ENV", "")  # no rc file for an interactive sh
    running = Server(tmp_path)
    yield running
    running.stop()


@pytest.fixture
def server(live: Server) -> str:
    """``ws://`` URL of ``/ws/terminal`` on a real server."""
    return live.url


def connect(url: str, token: str = TOKEN) -> ClientConnection:
    """A client as the page is one: the token in the query, the viewer's own Origin."""
    origin = Origin(url.replace("ws://", "http://").split("/ws/")[0])
    return ws_connect(f"{url}?token={token}", origin=origin, open_timeout=TIMEOUT, close_timeout=1)


def wire(data: Frame) -> str:
    return json.dumps({"event": "terminal", "data": data})


def send(ws: ClientConnection, data: Frame) -> None:
    ws.send(wire(data))


def recv(ws: ClientConnection) -> Frame:
    frame = json.loads(ws.recv(timeout=TIMEOUT))
    assert frame["event"] == "terminal"
    data = frame["data"]
    assert isinstance(data, dict)
    return data


def wait_for(ws: ClientConnection, match: Callable[[Frame], bool]) -> Frame:
    """The first frame ``match`` accepts (frames before it are skipped)."""
    while True:
        data = recv(ws)
        if match(data):
            return data


def wait_output(ws: ClientConnection, terminal_id: str, pattern: str) -> re.Match[str]:
    """Read ``terminal_id``'s output until ``pattern`` matches what it printed so far."""
    printed = ""
    while True:
        data = recv(ws)
        assert data["type"] != "exit" or data["id"] != terminal_id, printed
        if data["type"] == "output" and data["id"] == terminal_id:
            printed += str(data["data"])
            found = re.search(pattern, printed)
            if found:
                return found


def spawn(ws: ClientConnection, terminal_id: str, kind: str = "local") -> None:
    send(ws, {"type": "spawn", "id": terminal_id, "kind": kind, "cols": 80, "rows": 24})


def type_line(ws: ClientConnection, terminal_id: str, line: str) -> None:
    send(ws, {"type": "data", "id": terminal_id, "data": line + "\n"})


def shell_pid(ws: ClientConnection, terminal_id: str) -> int:
    """The shell's pid (its process group and session), printed by the shell itself."""
    type_line(ws, terminal_id, "echo pid-$$-end")
    return int(wait_output(ws, terminal_id, r"pid-(\d+)-end")[1])


def wait_session_gone(session: int) -> None:
    deadline = time.monotonic() + TIMEOUT
    while session_groups(session):
        assert time.monotonic() < deadline, f"processes of session {session} are still alive"
        time.sleep(0.05)


def test_a_local_terminal_runs_the_shell_in_the_project_root(server: str, tmp_path: Path) -> None:
    with connect(server) as ws:
        spawn(ws, "t1")
        type_line(ws, "t1", "echo hello-$((6*7))")
        wait_output(ws, "t1", "hello-42")
        type_line(ws, "t1", "pwd")
        wait_output(ws, "t1", re.escape(str(tmp_path.resolve())))


def test_resize_sets_the_window_size_the_child_sees(server: str) -> None:
    with connect(server) as ws:
        spawn(ws, "t1")
        send(ws, {"type": "resize", "id": "t1", "cols": 120, "rows": 40})
        type_line(ws, "t1", "stty size")
        wait_output(ws, "t1", r"(?<![0-9])40 120\r?\n")


def test_close_ends_the_process_group_and_reports_exit(server: str) -> None:
    with connect(server) as ws:
        spawn(ws, "t1")
        type_line(ws, "t1", "sleep 1000 &")
        pid = shell_pid(ws, "t1")
        assert session_groups(pid)
        send(ws, {"type": "close", "id": "t1"})
        exit_frame = wait_for(ws, lambda d: d["type"] == "exit")
        assert exit_frame["id"] == "t1"
        assert isinstance(exit_frame["exitCode"], int)
        wait_session_gone(pid)
        # the id is free again, and the socket still works
        spawn(ws, "t1")
        type_line(ws, "t1", "echo again-$((1+1))")
        wait_output(ws, "t1", "again-2")


def test_a_child_that_exits_reports_its_code(server: str) -> None:
    with connect(server) as ws:
        spawn(ws, "t1")
        type_line(ws, "t1", "exit 7")
        exit_frame = wait_for(ws, lambda d: d["type"] == "exit")
        assert exit_frame == {"type": "exit", "id": "t1", "exitCode": 7}


def test_a_closed_socket_ends_its_terminals(server: str) -> None:
    with connect(server) as ws:
        spawn(ws, "a")
        spawn(ws, "b")
        type_line(ws, "a", "sleep 1000 &")
        first = shell_pid(ws, "a")
        second = shell_pid(ws, "b")
    wait_session_gone(first)
    wait_session_gone(second)


def test_a_stopping_server_ends_every_terminal(live: Server) -> None:
    with connect(live.url) as ws:
        spawn(ws, "t1")
        type_line(ws, "t1", "sleep 1000 &")
        pid = shell_pid(ws, "t1")
        live.stop()
    wait_session_gone(pid)


def test_a_cli_not_on_path_is_a_friendly_error(
    server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with connect(server) as ws:
        spawn(ws, "c1", kind="codex")
        assert recv(ws) == {
            "type": "error",
            "id": "c1",
            "message": "codex is not installed (not on PATH): install it, or open a local terminal",
        }
        spawn(ws, "c2", kind="claude")
        assert recv(ws)["message"] == (
            "claude is not installed (not on PATH): install it, or open a local terminal"
        )


def test_a_cli_on_path_runs_in_the_terminal(
    server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "claude"
    fake.write_text("#!/bin/sh\necho fake-claude-$((20+1))\n", encoding="utf-8")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    with connect(server) as ws:
        spawn(ws, "c1", kind="claude")
        wait_output(ws, "c1", "fake-claude-21")
        assert wait_for(ws, lambda d: d["type"] == "exit")["exitCode"] == 0


@pytest.mark.parametrize(
    ("raw", "terminal_id", "words"),
    [
        ("not json", "", "not JSON"),
        (json.dumps({"event": "other", "data": {}}), "", '"event": "terminal"'),
        (wire({"type": "bogus", "id": "x"}), "x", "bogus"),
        (wire({"type": "data", "id": "nope", "data": "ls"}), "nope", "no open terminal"),
        (wire({"type": "spawn", "id": "s", "kind": "zsh", "cols": 80, "rows": 24}), "s", "zsh"),
        (wire({"type": "resize", "id": "r", "cols": True, "rows": 24}), "r", "cols and rows"),
    ],
)
def test_a_bad_frame_is_answered_and_the_socket_stays_usable(
    server: str, raw: str, terminal_id: str, words: str
) -> None:
    with connect(server) as ws:
        ws.send(raw)
        error = recv(ws)
        assert error["type"] == "error"
        assert error["id"] == terminal_id
        assert words in str(error["message"])
        spawn(ws, "t1")
        type_line(ws, "t1", "echo ok-$((2*3))")
        wait_output(ws, "t1", "ok-6")


def test_a_second_spawn_with_the_same_id_is_refused(server: str) -> None:
    with connect(server) as ws:
        spawn(ws, "t1")
        spawn(ws, "t1")
        error = wait_for(ws, lambda d: d["type"] == "error")
        assert error["id"] == "t1" and "already open" in str(error["message"])


def test_a_flooding_terminal_stalls_no_other_client(server: str) -> None:
    """One client floods and never reads; another still gets its output."""
    with connect(server) as flooder, connect(server) as other:
        spawn(flooder, "flood")
        type_line(flooder, "flood", "yes flood-flood-flood-flood")
        spawn(other, "t1")
        for n in range(3):
            type_line(other, "t1", f"echo round-$(({n}+100))")
            wait_output(other, "t1", f"round-{n + 100}")
        # the flooder's terminal is paused, not lost: its output is still there to read
        assert recv(flooder)["type"] == "output"


def test_a_client_that_stops_reading_and_leaves_ends_its_terminals(server: str) -> None:
    with connect(server) as ws:
        spawn(ws, "flood")
        pid = shell_pid(ws, "flood")
        type_line(ws, "flood", "yes flood-flood-flood-flood")
        for _ in range(200):  # more frames than the outbox lets through while nobody reads
            type_line(ws, "flood", "")
    wait_session_gone(pid)


def test_the_terminal_socket_needs_the_token(server: str) -> None:
    with pytest.raises(InvalidStatus) as refused:
        connect(server, token="wrong").close()
    assert refused.value.response.status_code in (401, 403)  # refused before the handshake


def test_utf8_split_across_reads_is_decoded_whole(server: str) -> None:
    with connect(server) as ws:
        spawn(ws, "t1")
        type_line(ws, "t1", "printf 'caf\\303\\251-%s\\n' done")
        wait_output(ws, "t1", "café-done")


def test_the_typed_constructors_and_parser_mirror_the_protocol() -> None:
    assert terminal_output("a", "x") == {"type": "output", "id": "a", "data": "x"}
    assert terminal_exit("a", None) == {"type": "exit", "id": "a", "exitCode": None}
    assert terminal_error("a", "m") == {"type": "error", "id": "a", "message": "m"}
    assert terminal_frame(terminal_exit("a", 0)) == {
        "event": "terminal",
        "data": {"type": "exit", "id": "a", "exitCode": 0},
    }
    spawn_frame = {"type": "spawn", "id": "a", "kind": "claude", "cols": 80, "rows": 24}
    assert parse_client_frame(json.dumps({"event": "terminal", "data": spawn_frame})) == (
        spawn_frame
    )
    with pytest.raises(FrameError) as caught:
        parse_client_frame(json.dumps({"event": "terminal", "data": {"type": "close", "id": ""}}))
    assert caught.value.terminal_id == ""
