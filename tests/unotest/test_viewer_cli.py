"""``unotest view`` as a user runs it: the URL, the lock file's whole life, --stop, --detach.

Every viewer here is a real ``python -m unotest view --no-open`` child on a free port.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from sites import scenario_source, unotest_env, write_project

from unotest.viewer.lockfile import live_lock

Validate = Callable[[str, object], None]
LOCK = "unotest/.viewer.lock"
HAS_PROC = Path("/proc/self/stat").exists()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(
        tmp_path / "proj", "headless: true\n", {"smoke": scenario_source("smoke", '  log("x")\n')}
    )


def view(root: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "unotest", "view", "--no-open", *args],
        cwd=root,
        env=unotest_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


class Served:
    def __init__(self, root: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "unotest", "view", "--no-open"],
            cwd=root,
            env=unotest_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()
        assert self.url.startswith("http://127.0.0.1:"), self.proc.stderr.read()

    def stop(self, sig: int = signal.SIGTERM) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.proc.wait(30)


@pytest.fixture
def served(project: Path) -> Iterator[Callable[[], Served]]:
    started: list[Served] = []

    def start() -> Served:
        started.append(Served(project))
        return started[-1]

    yield start
    for one in started:
        if one.proc.poll() is None:
            one.proc.kill()
        one.proc.wait(30)
        for stream in (one.proc.stdout, one.proc.stderr):
            if stream is not None:
                stream.close()


def read_lock(root: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads((root / LOCK).read_text(encoding="utf-8"))
    return data


def test_the_url_works_and_the_lock_names_this_viewer(
    project: Path, served: Callable[[], Served], protocol_validate: Validate
) -> None:
    viewer = served()
    lock = read_lock(project)
    protocol_validate("LockFile", lock)
    assert lock["pid"] == viewer.proc.pid and lock["url"] == viewer.url
    assert (project / LOCK).stat().st_mode & 0o077 == 0  # the URL holds the token
    with httpx.Client(timeout=20) as browser:
        assert browser.get(viewer.url.replace("/?", "/api/scenarios?")).status_code == 200
        assert browser.get(viewer.url.split("?")[0] + "api/scenarios").status_code == 200
    assert viewer.stop() == 0
    assert not (project / LOCK).exists()


def test_a_second_viewer_prints_the_first_ones_url(
    project: Path, served: Callable[[], Served]
) -> None:
    viewer = served()
    second = view(project)
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip() == viewer.url
    assert "already serves" in second.stderr
    assert read_lock(project)["pid"] == viewer.proc.pid


def test_the_url_is_opened_in_the_browser_unless_no_open(
    project: Path, served: Callable[[], Served], tmp_path: Path
) -> None:
    viewer = served()
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\nprintf "%s\\n" "$1" >> {opened}\n', encoding="utf-8")
    browser.chmod(0o755)
    env = unotest_env(DISPLAY=":0", BROWSER=f"{browser} %s")
    for extra in (["--no-open"], []):
        proc = subprocess.run(
            [sys.executable, "-m", "unotest", "view", *extra],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 0, proc.stderr
    assert opened.read_text(encoding="utf-8") == viewer.url + "\n"  # once: not with --no-open
    headless = unotest_env(drop=("DISPLAY", "WAYLAND_DISPLAY"), BROWSER=f"{browser} %s")
    proc = subprocess.run(
        [sys.executable, "-m", "unotest", "view"],
        cwd=project,
        env=headless,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert opened.read_text(encoding="utf-8") == viewer.url + "\n"  # no display: not opened


def test_sigint_removes_the_lock_and_exits_130(project: Path, served: Callable[[], Served]) -> None:
    viewer = served()
    assert viewer.stop(signal.SIGINT) == 130
    assert not (project / LOCK).exists()


def test_a_killed_viewers_lock_is_stale_and_overwritten(
    project: Path, served: Callable[[], Served]
) -> None:
    first = served()
    first.proc.kill()
    first.proc.wait(30)
    assert read_lock(project)["pid"] == first.proc.pid  # kill -9 leaves it behind
    assert live_lock(project) is None
    second = served()
    assert second.url == first.url  # its port was free: taken again, and its token kept
    assert read_lock(project)["pid"] == second.proc.pid


@pytest.mark.skipif(not HAS_PROC, reason="process start times come from /proc")
def test_a_reused_pid_is_stale(project: Path, served: Callable[[], Served]) -> None:
    (project / LOCK).write_text(
        json.dumps(
            {
                "pid": os.getpid(),  # alive, but not a viewer started at that time
                "url": "http://127.0.0.1:1/?token=old",
                "startedAt": "2020-01-01T00:00:00.000Z",
                "pidStartTime": 1,
            }
        ),
        encoding="utf-8",
    )
    viewer = served()
    assert viewer.url != "http://127.0.0.1:1/?token=old"
    assert read_lock(project)["pid"] == viewer.proc.pid


def test_stop_ends_the_viewer_the_lock_names(project: Path, served: Callable[[], Served]) -> None:
    viewer = served()
    stopped = view(project, "--stop")
    assert stopped.returncode == 0, stopped.stderr
    assert f"stopped the viewer (pid {viewer.proc.pid})" in stopped.stdout
    assert viewer.proc.wait(30) == 0
    assert not (project / LOCK).exists()
    again = view(project, "--stop")
    assert again.returncode == 0 and "no viewer" in again.stdout


def test_detach_serves_in_the_background(project: Path) -> None:
    started = view(project, "--detach")
    assert started.returncode == 0, started.stderr
    (url,) = started.stdout.splitlines()  # the URL alone, for URL=$(unotest view --detach)
    assert "viewer running in the background (pid " in started.stderr
    lock = read_lock(project)
    try:
        assert lock["url"] == url
        with httpx.Client(timeout=20) as browser:
            assert browser.get(url.replace("/?", "/api/project?")).status_code == 200
    finally:
        stopped = view(project, "--stop")
    assert stopped.returncode == 0, stopped.stderr
    assert not (project / LOCK).exists()
    log = project / "unotest/.viewer.log"
    assert url in log.read_text(encoding="utf-8")
    assert log.stat().st_mode & 0o077 == 0  # it holds the token


def test_a_wildcard_host_is_warned_about(project: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "unotest", "view", "--no-open", "--host", "0.0.0.0"],
        cwd=project,
        env=unotest_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stderr is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert "warning: --host 0.0.0.0 serves the viewer to every network" in err
    assert proc.returncode == 0


def test_a_port_in_use_is_a_usage_error(project: Path, served: Callable[[], Served]) -> None:
    viewer = served()
    port = viewer.url.split(":")[2].split("/")[0]
    (project / LOCK).unlink()  # as if another program held the port
    taken = view(project, "--port", port)
    assert taken.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}" in taken.stderr


def test_init_keeps_secrets_and_the_viewers_files_out_of_git(tmp_path: Path) -> None:
    from unotest.commands.init import scaffold

    (tmp_path / ".gitignore").write_text("node_modules/\nunotest/.env\n", encoding="utf-8")
    scaffold(tmp_path, port=8123)
    lines = (tmp_path / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert lines.count("unotest/.env") == 1
    for line in ("node_modules/", "unotest/.runs/", "unotest/.viewer.lock", "unotest/.viewer.log"):
        assert line in lines


def test_detach_says_so_when_the_server_cannot_start(
    project: Path, served: Callable[[], Served]
) -> None:
    viewer = served()
    port = viewer.url.split(":")[2].split("/")[0]
    (project / LOCK).unlink()  # as if another program held the port
    failed = view(project, "--detach", "--port", port)
    assert failed.returncode == 2
    assert "the viewer did not start (see " in failed.stderr
    log = (project / "unotest/.viewer.log").read_text(encoding="utf-8")
    assert f"cannot listen on 127.0.0.1:{port}" in log


def test_no_project_is_a_usage_error(tmp_path: Path) -> None:
    nowhere = view(tmp_path, "--root", str(tmp_path / "missing"))
    assert nowhere.returncode == 2
    assert "no such directory" in nowhere.stderr


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--port", "70000"], "--port 70000: a port is a number from 0"),
        (["--host", "no.such.host.invalid"], "cannot listen on no.such.host.invalid:0"),
    ],
)
def test_a_bad_address_is_a_usage_error(project: Path, args: list[str], says: str) -> None:
    refused = view(project, *args)
    assert refused.returncode == 2, refused.stderr
    assert says in refused.stderr
    assert "Traceback" not in refused.stderr and not (project / LOCK).exists()
