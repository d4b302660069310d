"""runner.webserver.server with real processes on loopback: start, wait, reuse, stop, errors."""

from __future__ import annotations

import json
import os
import shlex
import socket
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from net import free_port, serve_statuses

from runner.errors import WebServerError
from runner.project.config import WebServerConfig, load_config
from runner.webserver import server as ws_module
from runner.webserver.server import WebServer, command_not_found, url_answers
from unotest.exit_codes import exit_code_for

PY = shlex.quote(sys.executable)

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/stat").exists() or not hasattr(os, "killpg"),
    reason="needs POSIX process groups and /proc",
)


def _port_free(port: int) -> bool:
    """Nothing listens and a server could bind it again (as servers do, SO_REUSEADDR:
    the connections the test made leave TIME_WAIT entries behind)."""
    with socket.socket() as probe:
        probe.settimeout(2)
        if probe.connect_ex(("127.0.0.1", port)) == 0:
            return False
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
            sock.listen()
        except OSError:
            return False
        return True


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for init to reap it is not)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return text[text.rfind(")") + 2 :].split()[0] != "Z"


def _group(pgid: int) -> set[int]:
    members = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                text = (entry / "stat").read_text()
            except OSError:
                continue
            fields = text[text.rfind(")") + 2 :].split()
            if fields[2] == str(pgid) and fields[0] != "Z":
                members.add(int(entry.name))
    return members


def _http_server(port: int) -> str:
    return f"exec {PY} -m http.server {port} --bind 127.0.0.1"


def _start(command: str, url: str, cwd: Path, **kwargs: Any) -> WebServer:
    options: dict[str, Any] = {"timeout_ms": 15_000, "reuse_existing_server": False}
    options.update(kwargs)
    return WebServer.start(command, url, cwd=cwd, **options)


def test_start_and_stop_http_server(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("<title>served</title>", encoding="utf-8")
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    logs: list[str] = []
    server = _start(_http_server(port), url, tmp_path, log=logs.append)
    assert not server.reused
    pid = server.pid
    assert pid is not None and _alive(pid)
    assert url_answers(url)
    with urllib.request.urlopen(url + "index.html", timeout=5) as response:
        assert b"served" in response.read()
    members = _group(pid)
    assert pid in members

    server.stop()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert not any(_alive(p) for p in members)
    assert _port_free(port)
    assert not url_answers(url)
    server.stop()  # idempotent
    assert any("starting" in line for line in logs)
    assert any("answered" in line for line in logs)
    assert any("stopped" in line for line in logs)


def test_context_manager_stops_the_whole_group(tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    # a child the shell leaves behind: stopping must reach it through the group
    command = f"sleep 300 & {_http_server(port)}"
    with _start(command, url, tmp_path) as server:
        assert server.pid is not None
        members = _group(server.pid)
        assert len(members) >= 2, members
    assert not any(_alive(p) for p in members)
    assert _port_free(port)


def test_stop_escalates_to_sigkill(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ws_module, "STOP_GRACE_S", 0.5)
    port = free_port()
    server = _start(f"trap '' TERM; {_http_server(port)}", f"http://127.0.0.1:{port}/", tmp_path)
    assert server.pid is not None
    members = _group(server.pid)
    started = time.monotonic()
    server.stop()
    assert time.monotonic() - started < 5
    assert not any(_alive(p) for p in members)
    assert _port_free(port)


def test_cwd_and_env_reach_the_command(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    port = free_port()
    command = f'printf \'%s|%s\' "$GREETING" "$BROWSER" > greeting.txt && {_http_server(port)}'
    url = f"http://127.0.0.1:{port}/"
    with (
        _start(command, url, site, env={"GREETING": "hello"}),
        urllib.request.urlopen(url + "greeting.txt", timeout=5) as response,
    ):
        assert response.read() == b"hello|none"


def test_reuse_existing_server(static_site: str, tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("up", encoding="utf-8")
    marker = tmp_path / "started"
    server = _start(
        f"touch {shlex.quote(str(marker))}; sleep 30",
        static_site,
        tmp_path,
        reuse_existing_server=True,
    )
    assert server.reused
    assert server.pid is None
    server.stop()
    with server:
        pass
    assert url_answers(static_site)  # not ours: left running
    assert not marker.exists()  # the command never ran


def test_url_in_use_without_reuse_is_an_error(static_site: str, tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("up", encoding="utf-8")
    marker = tmp_path / "started"
    with pytest.raises(WebServerError) as caught:
        _start(f"touch {shlex.quote(str(marker))}", static_site, tmp_path)
    message = str(caught.value)
    assert f"{static_site} is already used" in message
    assert "reuseExistingServer: true" in message
    assert exit_code_for(caught.value) == 2
    assert not marker.exists()


def test_command_that_exits_first(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/"
    started = time.monotonic()
    with pytest.raises(WebServerError) as caught:
        _start("echo boom >&2; exit 3", url, tmp_path)
    assert time.monotonic() - started < 5
    message = str(caught.value)
    assert "exited with code 3" in message
    assert "boom" in message
    assert url in message
    assert "\n" not in message


def test_timeout_kills_the_command(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/"
    pid_file = tmp_path / "pid"
    command = f"echo $$ > {shlex.quote(str(pid_file))}; echo waiting; exec sleep 30"
    started = time.monotonic()
    with pytest.raises(WebServerError) as caught:
        _start(command, url, tmp_path, timeout_ms=1000)
    elapsed = time.monotonic() - started
    assert 0.9 <= elapsed < 5, elapsed
    message = str(caught.value)
    assert f"webServer '{command}' did not answer at {url} within 1000 ms" in message
    assert "last output: waiting" in message
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_bad_url_and_cwd(tmp_path: Path) -> None:
    with pytest.raises(WebServerError, match="not an http"):
        _start("true", "ftp://127.0.0.1/", tmp_path)
    with pytest.raises(WebServerError, match="not a directory"):
        _start("true", f"http://127.0.0.1:{free_port()}/", tmp_path / "missing")


# --- what counts as up (Playwright Test: 200-403, / falls back to /index.html) ----------


@pytest.fixture
def status_server() -> Iterator[tuple[str, dict[str, int]]]:
    with serve_statuses() as served:
        yield served


def test_what_counts_as_up(status_server: tuple[str, dict[str, int]]) -> None:
    base, statuses = status_server
    for status, up in [
        (200, True),
        (204, True),
        (302, True),
        (401, True),
        (403, True),
        (404, False),
        (500, False),
        (503, False),
    ]:
        statuses["/health"] = status
        assert url_answers(f"{base}/health") is up, status
    statuses.clear()
    statuses["/index.html"] = 200
    assert url_answers(f"{base}/")  # 404 at / but /index.html answers
    assert url_answers(base)
    assert not url_answers(f"{base}/app")  # the fallback is for / only
    assert not url_answers(f"http://127.0.0.1:{free_port()}/")  # refused


def test_a_server_error_is_not_ready(
    status_server: tuple[str, dict[str, int]], tmp_path: Path
) -> None:
    base, statuses = status_server
    statuses["/"] = 500
    with pytest.raises(WebServerError, match="did not answer"):
        _start("sleep 30", f"{base}/", tmp_path, timeout_ms=500)


# --- webServer.env and a command whose program is not there ------------------------------


def test_web_server_env_from_the_config_reaches_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``webServer.env`` (Playwright Test's) is set for the command, over the run's own
    environment: it was refused as an unknown key and never reached the server."""
    monkeypatch.setenv("GREETING", "from the shell")
    monkeypatch.setenv("KEPT", "kept")
    site = tmp_path / "site"
    site.mkdir()
    port = free_port()
    command = 'printf \'%s|%s|%s\' "$GREETING" "$PORT" "$KEPT" > env.txt && ' + _http_server(port)
    (tmp_path / "unotest.config.yaml").write_text(
        "webServer:\n"
        f"  command: {json.dumps(command)}\n"
        f"  url: http://127.0.0.1:{port}/\n"
        "  cwd: site\n"
        "  env:\n"
        "    GREETING: hello\n"
        f"    PORT: {port}\n"
    )
    config = load_config(tmp_path, {})
    assert config.web_server is not None
    url = f"http://127.0.0.1:{port}/"
    with (
        WebServer.from_config(config.web_server, mask=lambda text: text),
        urllib.request.urlopen(url + "env.txt", timeout=5) as response,
    ):
        assert response.read() == f"hello|{port}|kept".encode()


def _server(tmp_path: Path, command: str, **env: str) -> WebServerConfig:
    return WebServerConfig(command, "http://127.0.0.1:1/", cwd=tmp_path, env=tuple(env.items()))


def test_a_command_whose_program_is_not_there_is_named(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    script = tmp_path / "bin" / "serve.sh"
    script.write_text("#!/bin/sh\n")
    assert command_not_found(_server(tmp_path, "no-such-program-xyz --port 3000")) == (
        "'no-such-program-xyz' (the start of its command) is not found on PATH"
    )
    assert command_not_found(_server(tmp_path, "./missing.sh")) == (
        f"./missing.sh (the start of its command) is not there in {tmp_path}"
    )
    assert command_not_found(_server(tmp_path, "bin/serve.sh")) == (
        f"bin/serve.sh (the start of its command) in {tmp_path} is not executable: "
        "'chmod +x bin/serve.sh', or start it with 'sh bin/serve.sh'"
    )
    script.chmod(0o755)
    assert command_not_found(_server(tmp_path, "bin/serve.sh --port 1")) is None
    # Looked for on the PATH the command gets (webServer.env over ours), relative
    # entries in webServer.cwd.
    assert command_not_found(_server(tmp_path, "serve.sh", PATH="bin")) is None
    assert command_not_found(_server(tmp_path, "sh -c 'exit 0'")) is None


@pytest.mark.parametrize(
    "command",
    [
        "cd site && npm start",  # a shell builtin
        "PORT=3000 npm-xyz start",  # an assignment first
        "$SERVER --port 1",  # an expansion
        "(cd site; serve-xyz)",  # a subshell
        "'quoted-xyz' --port 1",  # quoting
        "exec serve-xyz",
    ],
)
def test_a_shell_construct_is_not_looked_for(tmp_path: Path, command: str) -> None:
    assert command_not_found(_server(tmp_path, command)) is None
