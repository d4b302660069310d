"""One webServer for every unotest run that wants it, stopped by its starter last.

Runs are separate processes (the viewer and MCP start one per request, a person may
run two terminals): each test here runs real processes that start a real
``http.server`` through :class:`runner.webserver.server.WebServer`, as a run does, with the
lease folder under ``tmp_path`` (their ``TMPDIR``). ``reuseExistingServer`` is off
throughout: a stranger on the port is refused (``test_webserver.py``), another run's
server of the same entry is not.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from net import free_port

from runner.webserver.server import url_answers

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/stat").exists() or not hasattr(os, "killpg"),
    reason="needs POSIX process groups and /proc",
)

REPO = Path(__file__).resolve().parents[2]
TIMEOUT_S = 30

# A run's use of the server: start (or share) it, say so, wait for "stop" on stdin,
# stop (or leave) it, then what the CLI does last.
HOLDER = """\
import signal
import sys
from runner.webserver.server import WebServer, stop_lingering
# Ctrl-C as the CLI takes it, even when this suite runs with SIGINT ignored (a shell's
# background job): Python then installs no KeyboardInterrupt of its own.
signal.signal(signal.SIGINT, signal.default_int_handler)
command, url, cwd = sys.argv[1:4]
server = WebServer.start(command, url, cwd=cwd, timeout_ms=20000, reuse_existing_server=False)
print("up", "shared" if server.reused else "started", flush=True)
sys.stdin.readline()
server.stop()
print("left", flush=True)
stop_lingering(lambda text: print("says", text, flush=True))
print("done", flush=True)
"""


class Run:
    """One holder process and its lines."""

    def __init__(self, tmp_path: Path, command: str, url: str) -> None:
        script = tmp_path / "holder.py"
        script.write_text(HOLDER)
        self.process = subprocess.Popen(
            [sys.executable, str(script), command, url, str(tmp_path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=REPO,
            env={**os.environ, "TMPDIR": str(tmp_path), "PYTHONPATH": str(REPO)},
        )

    def line(self) -> str:
        assert self.process.stdout is not None
        text = self.process.stdout.readline().strip()
        assert text, f"the run ended early (code {self.process.wait()})"
        return text

    def stop(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write("stop\n")
        self.process.stdin.flush()


@pytest.fixture
def runs(tmp_path: Path) -> Iterator[list[Run]]:
    started: list[Run] = []
    yield started
    for run in started:
        if run.process.poll() is None:
            run.process.kill()
        run.process.wait(TIMEOUT_S)


def _server(port: int, delay_s: float = 0.0) -> tuple[str, str]:
    serve = f"exec {shlex.quote(sys.executable)} -m http.server {port} --bind 127.0.0.1"
    command = f"sleep {delay_s}; {serve}" if delay_s else serve
    return command, f"http://127.0.0.1:{port}/"


def _servers_on(port: int) -> int:
    """How many ``http.server`` processes for ``port`` run now."""
    count = 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"http.server" in argv and str(port).encode() in argv:
                count += 1
    return count


def _leases(tmp_path: Path) -> list[Path]:
    return list(tmp_path.glob("unotest-*/webserver/*.json"))


def _until_down(url: str) -> bool:
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        if not url_answers(url):
            return True
        time.sleep(0.05)
    return False


def test_a_run_uses_the_server_another_run_started_which_stops_it_when_both_are_done(
    tmp_path: Path, runs: list[Run]
) -> None:
    port = free_port()
    command, url = _server(port)
    first = Run(tmp_path, command, url)
    runs.append(first)
    assert first.line() == "up started"
    second = Run(tmp_path, command, url)
    runs.append(second)
    assert second.line() == "up shared"  # not "already used", not a second server
    assert _servers_on(port) == 1
    assert len(_leases(tmp_path)) == 1

    first.stop()  # the starter's run ends first: the server stays for the other
    assert first.line() == "left"
    says = first.line()
    assert says.startswith(f"says webServer {url} is still used by 1 other unotest run(s)")
    time.sleep(0.5)
    assert url_answers(url)
    assert first.process.poll() is None

    second.stop()
    assert [second.line(), second.line()] == ["left", "done"]
    assert first.line() == "done"  # its last user gone: stopped by its starter
    assert first.process.wait(TIMEOUT_S) == 0
    assert _until_down(url)
    assert _servers_on(port) == 0
    assert _leases(tmp_path) == []


def test_a_run_waits_for_the_server_another_run_is_starting_instead_of_starting_one(
    tmp_path: Path, runs: list[Run]
) -> None:
    port = free_port()
    command, url = _server(port, delay_s=1.0)  # slow to answer: both ask meanwhile
    both = [Run(tmp_path, command, url), Run(tmp_path, command, url)]
    runs.extend(both)
    assert sorted(run.line() for run in both) == ["up shared", "up started"]
    assert _servers_on(port) == 1
    for run in both:
        run.stop()
    for run in both:
        assert run.process.wait(TIMEOUT_S) == 0
    assert _until_down(url)
    assert _leases(tmp_path) == []


def test_a_run_killed_with_sigkill_does_not_keep_the_server_up(
    tmp_path: Path, runs: list[Run]
) -> None:
    port = free_port()
    command, url = _server(port)
    first = Run(tmp_path, command, url)
    runs.append(first)
    assert first.line() == "up started"
    second = Run(tmp_path, command, url)
    runs.append(second)
    assert second.line() == "up shared"
    second.process.kill()
    second.process.wait(TIMEOUT_S)

    first.stop()  # nobody alive uses it: stopped at once, without a word
    assert [first.line(), first.line()] == ["left", "done"]
    assert _until_down(url)
    assert _leases(tmp_path) == []


def test_ctrl_c_stops_a_server_left_up_for_another_run_at_once(
    tmp_path: Path, runs: list[Run]
) -> None:
    port = free_port()
    command, url = _server(port)
    first = Run(tmp_path, command, url)
    runs.append(first)
    assert first.line() == "up started"
    second = Run(tmp_path, command, url)
    runs.append(second)
    assert second.line() == "up shared"
    first.stop()
    assert first.line() == "left"
    assert first.line().startswith("says ")
    first.process.send_signal(signal.SIGINT)
    assert first.line() == "done"
    assert _until_down(url)
    assert second.process.poll() is None  # the other run goes on (and would fail)
    assert _leases(tmp_path) == []
