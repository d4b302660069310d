"""``restart`` end to end: real Chromium, ``unotest e2e`` subprocesses driven through
``commands.jsonl``.

A restart ends the run ``aborted`` and starts the scenario again in the same process
and the same browser (a fresh context): the test counts the runner's Chromium browser
processes (descendants of the runner with no ``--type=`` switch, read from /proc)
before and after, and requires the very same one (pid and start time). Covered: the
runs linked both ways (``restartOf`` in the new manifest, the old run's
``command:result`` naming the new run id), the breakpoints in effect at the restart
(``--break`` and one set by a command) kept, the file re-read (an edit counts), the
exit code of the last run, a restart while running (not paused), a run started as the
viewer and the MCP server start them (``UNOTEST_OUTPUT_TO_RUN_DIR=1``: each run's
output in its own directory), a restart refused when the edited file no longer
parses or the run is a collection worker's, and a restart before the browser is up
(during a slow webServer start): the webServer started once and kept, the new run
launching the browser itself.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from events import append_command, is_kind, read_events, wait_for_event
from net import free_port, serve_directory
from procs import cmdline, descendants, stop_tree, wait_for_run_dir
from protocol_keys import ADDITIVE_KINDS
from sites import collection_yaml, config_yaml, unotest_env, write_project

from runner.store.tail import RunsTailer

SITE = Path(__file__).resolve().parent / "site_debugger"
RUN_TIMEOUT_S = 90
_BIN = Path(sys.executable).with_name("unotest")
UNOTEST = [str(_BIN)] if _BIN.is_file() else [sys.executable, "-m", "unotest"]

FLOW_FILE = "unotest/e2e/flows/again.test.js"
FLOW = """\
// id-flows-again
// Started again by restart
// #2563eb
function test_again() {
  goto("/index.html")
  let a = 1
  log("@ version one")
  let b = a + 1
  expect_equal(b, 2)
}
"""

SLOW = """\
// id-flows-slow
// Long steps to restart in the middle of
// #7c3aed
function test_slow() {
  goto("/index.html")
  wait(400)
  log("@ slow done")
  wait(400)
}
"""


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    with serve_directory(SITE, "restart-site") as url:
        yield url


def make_project(root: Path, site: str, scenarios: dict[str, str]) -> Path:
    timeout = {"action": 2000, "expect": 2000, "navigation": 15000, "scenario": 60000}
    return write_project(root, config_yaml(site, timeout=timeout), scenarios)


@dataclass
class Runner:
    proc: subprocess.Popen[bytes]
    project: Path
    out: Path
    err: Path

    @property
    def stdout(self) -> str:
        return self.out.read_text(errors="replace")

    @property
    def stderr(self) -> str:
        return self.err.read_text(errors="replace")

    def first_run_dir(self) -> Path:
        return wait_for_run_dir(self.project, self.proc, 45, lambda: self.stderr)

    def wait(self) -> int:
        try:
            code = self.proc.wait(timeout=RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"unotest did not end\n{self.stdout}\n{self.stderr}") from None
        assert "Traceback" not in self.stderr + self.stdout, self.stderr
        return code


@pytest.fixture
def launch(tmp_path: Path) -> Iterator[Callable[..., Runner]]:
    started: list[subprocess.Popen[bytes]] = []

    def start(project: Path, *args: str, tty: int | None = None, **env: str) -> Runner:
        """``tty``: a pseudo-terminal's end as stdin and stdout (the prompt runs)."""
        out, err = tmp_path / f"out{len(started)}", tmp_path / f"err{len(started)}"
        with open(out, "wb") as out_file, open(err, "wb") as err_file:
            proc = subprocess.Popen(
                [*UNOTEST, *args],
                cwd=project,
                env=unotest_env(NO_COLOR="1", **env),
                stdin=subprocess.DEVNULL if tty is None else tty,
                stdout=out_file if tty is None else tty,
                stderr=err_file,
            )
        started.append(proc)
        return Runner(proc, project, out, err)

    try:
        yield start
    finally:
        for proc in started:
            if proc.poll() is None:
                stop_tree(proc)


def browsers_of(pid: int) -> dict[int, int]:
    """The Chromium browser processes under ``pid`` (pid → start time): Chromium's own
    children (renderer, GPU, zygote, utility) all carry a ``--type=`` switch."""
    found = {}
    for child, started in descendants(pid).items():
        line = cmdline(child)
        if "chrom" in line.lower() and "--type=" not in line:
            found[child] = started
    return found


def restart(run_dir: Path, runner: Runner) -> tuple[str, Path]:
    """Send ``restart``; the new run id from the old run's ``command:result``, once the
    old run has finished (``aborted``), and the new run's directory."""
    ident = append_command(run_dir, "restart")
    wait_for_event(run_dir, lambda e: e.get("id") == ident and e["kind"] == "command:applied")
    _, result = wait_for_event(
        run_dir, lambda e: e.get("id") == ident and e["kind"] == "command:result"
    )
    assert result["ok"] is True, result
    new_id = result["value"]
    _, finished = wait_for_event(run_dir, is_kind("run:finished"))
    assert finished["outcome"] == "aborted"
    new_dir = run_dir.parent / new_id
    assert new_dir.is_dir() and new_id != run_dir.name
    return new_id, new_dir


def manifest(run_dir: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((run_dir / "manifest.json").read_text())
    return data


def test_restart_at_a_pause_reuses_the_browser_links_the_runs_keeps_breakpoints(
    tmp_path: Path,
    site: str,
    launch: Callable[..., Runner],
    protocol_validate: Callable[[str, object], None],
) -> None:
    project = make_project(tmp_path / "proj", site, {"flows/again": FLOW})
    runner = launch(project, "e2e", "flows/again", "--debug", "--break", "7:2")
    old_dir = runner.first_run_dir()
    wait_for_event(old_dir, is_kind("paused", line=7, col=2))
    before = browsers_of(runner.proc.pid)
    assert len(before) == 1, before

    # A breakpoint set by a command, and an edit to the file: both must count.
    ident = append_command(old_dir, "set-bp", line=9, col=2)
    wait_for_event(old_dir, lambda e: e.get("id") == ident and e["kind"] == "command:applied")
    source = project / FLOW_FILE
    source.write_text(FLOW.replace("version one", "version two"))

    new_id, new_dir = restart(old_dir, runner)
    new_manifest = manifest(new_dir)
    assert new_manifest["restartOf"] == old_dir.name
    assert new_manifest["pid"] == runner.proc.pid == manifest(old_dir)["pid"]
    protocol_validate("RunManifest", new_manifest)
    for event in read_events(old_dir, finished=True):
        if event["kind"] not in ADDITIVE_KINDS:  # our additive kinds: not in 0.5.0
            protocol_validate("RunArtifact", event)

    # The new run: same process, same browser, the --break breakpoint first.
    wait_for_event(new_dir, is_kind("run:started", runId=new_id))
    wait_for_event(new_dir, is_kind("paused", line=7, col=2))
    assert browsers_of(runner.proc.pid) == before
    append_command(new_dir, "continue")
    wait_for_event(new_dir, is_kind("paused", line=9, col=2))  # the one set by a command
    append_command(new_dir, "continue")
    assert runner.wait() == 0  # the last run's outcome: completed
    events = read_events(new_dir, finished=True)
    assert events[-1]["kind"] == "run:finished" and events[-1]["outcome"] == "completed"
    assert "@ version two" in runner.stdout  # the file was read again
    assert "@ version one" not in runner.stdout  # the first run paused before its log
    assert f"restart: {old_dir.name} → {new_id}" in runner.stdout
    assert browsers_of(runner.proc.pid) == {}


def test_a_restart_at_a_failure_pause_takes_no_failure_bundle(
    tmp_path: Path, site: str, launch: Callable[..., Runner]
) -> None:
    """Edit, then restart, at a failure: the new run is what the person wants; a bundle
    of the old one (screenshot, aria, trace) would only delay it."""
    failing = FLOW.replace("expect_equal(b, 2)", "expect_equal(b, 3)")
    project = make_project(tmp_path / "proj", site, {"flows/again": failing})
    runner = launch(project, "e2e", "flows/again", "--debug")
    old_dir = runner.first_run_dir()
    wait_for_event(old_dir, is_kind("paused", reason="failure"))
    (project / FLOW_FILE).write_text(FLOW)
    _, new_dir = restart(old_dir, runner)
    old_events = read_events(old_dir, finished=True)
    assert [e["errorName"] for e in old_events if e["kind"] == "step:fail"] == ["AssertionError"]
    assert not any(e["kind"] == "failure-bundle:written" for e in old_events), old_events
    assert runner.wait() == 0
    assert read_events(new_dir, finished=True)[-1]["outcome"] == "completed"


def test_restart_while_running_ends_with_the_last_run(
    tmp_path: Path, site: str, launch: Callable[..., Runner]
) -> None:
    project = make_project(tmp_path / "proj", site, {"flows/slow": SLOW})
    runner = launch(project, "e2e", "flows/slow")  # no --debug: commands are read anyway
    old_dir = runner.first_run_dir()
    wait_for_event(old_dir, is_kind("step:started", line=6))
    before = browsers_of(runner.proc.pid)
    assert len(before) == 1, before

    _, new_dir = restart(old_dir, runner)
    old_events = read_events(old_dir, finished=True)
    assert not any(e["kind"] == "paused" for e in old_events)
    assert not any(e["kind"] == "step:started" and e["line"] == 7 for e in old_events)
    wait_for_event(new_dir, is_kind("step:started", line=6))
    assert browsers_of(runner.proc.pid) == before
    assert runner.wait() == 0
    assert manifest(new_dir)["restartOf"] == old_dir.name
    assert read_events(new_dir, finished=True)[-1]["outcome"] == "completed"
    logged = [line for line in runner.stdout.splitlines() if line.startswith("@ slow done")]
    assert len(logged) == 1, runner.stdout  # the first run never got there


def test_restart_of_a_run_started_like_the_viewer_does(
    tmp_path: Path, site: str, launch: Callable[..., Runner]
) -> None:
    """``UNOTEST_OUTPUT_TO_RUN_DIR=1`` (runner.launch.launcher): each run's output goes to
    its own directory, and the new run reaches a runs watcher (the viewer's
    ``fs:run-started``) as any run does."""
    project = make_project(tmp_path / "proj", site, {"flows/again": FLOW})
    runner = launch(
        project, "e2e", "flows/again", "--debug", "--break", "8:2", UNOTEST_OUTPUT_TO_RUN_DIR="1"
    )
    old_dir = runner.first_run_dir()
    wait_for_event(old_dir, is_kind("paused", line=8))
    watcher = RunsTailer(project / "unotest" / ".runs")
    watcher.prime()
    new_id, new_dir = restart(old_dir, runner)
    wait_for_event(new_dir, is_kind("paused", line=8))
    kinds = [(m["kind"], m.get("runId")) for m in watcher.scan()]
    assert ("fs:run-started", new_id) in kinds, kinds
    append_command(new_dir, "continue")
    assert runner.wait() == 0
    old_out, new_out = (old_dir / "stdout.log").read_text(), (new_dir / "stdout.log").read_text()
    assert "@ version one" in old_out and f"restart: {old_dir.name} → {new_id}" in old_out
    assert "@ version one" in new_out and new_id in new_out and old_dir.name not in new_out
    assert runner.stdout == ""  # everything went to the run directories


def test_restart_refused_when_the_file_no_longer_parses(
    tmp_path: Path, site: str, launch: Callable[..., Runner]
) -> None:
    project = make_project(tmp_path / "proj", site, {"flows/again": FLOW})
    runner = launch(project, "e2e", "flows/again", "--debug", "--break", "8:2")
    old_dir = runner.first_run_dir()
    wait_for_event(old_dir, is_kind("paused", line=8))
    (project / FLOW_FILE).write_text(FLOW.replace("let b = a + 1", "let b = = 1"))
    ident = append_command(old_dir, "restart")
    _, result = wait_for_event(
        old_dir, lambda e: e.get("id") == ident and e["kind"] == "command:result"
    )
    assert result["ok"] is False
    assert result["error"].startswith(f"not restarted: {FLOW_FILE}:8:"), result
    assert runner.wait() == 130  # the run ended aborted, and nothing followed it
    runs = sorted(p.name for p in (project / "unotest" / ".runs").iterdir())
    assert runs == [old_dir.name]
    assert browsers_of(runner.proc.pid) == {}


def read_until(fd: int, needle: str, seen: list[str], timeout: float = 45) -> str:
    """What the terminal printed up to ``needle`` (after what ``seen`` already holds)."""
    deadline = time.monotonic() + timeout
    start = len("".join(seen))
    while needle not in "".join(seen)[start:]:
        left = deadline - time.monotonic()
        assert left > 0, f"{needle!r} never appeared; output:\n{''.join(seen)}"
        ready, _, _ = select.select([fd], [], [], min(left, 0.5))
        if ready:
            try:
                data = os.read(fd, 65536)
            except OSError:
                data = b""
            assert data, f"{needle!r} never appeared; output:\n{''.join(seen)}"
            seen.append(data.decode("utf-8", "replace").replace("\r", ""))
    text = "".join(seen)[start:]
    seen.append("\0")  # a mark: the next read starts after this one's needle
    return text


def test_restart_typed_at_the_prompt_keeps_prompting_on_the_new_run(
    tmp_path: Path, site: str, launch: Callable[..., Runner]
) -> None:
    project = make_project(tmp_path / "proj", site, {"flows/again": FLOW})
    master, slave = pty.openpty()
    try:
        runner = launch(project, "e2e", "flows/again", "--debug", "--break", "8:2", tty=slave)
        os.close(slave)
        slave = -1
        seen: list[str] = []
        shown = read_until(master, "(unotest) ", seen)
        assert f"paused (breakpoint) at {FLOW_FILE}:8:2" in shown, shown
        (project / FLOW_FILE).write_text(FLOW.replace("version one", "version two"))
        os.write(master, b"restart\n")
        shown = read_until(master, "(unotest) ", seen)
        assert re.search(r"restart: \S+ → \S+", shown), shown
        assert f"paused (breakpoint) at {FLOW_FILE}:8:2" in shown, shown
        assert "@ version two" in shown, shown
        os.write(master, b"c\n")
        read_until(master, "passed  flows/again", seen)
        assert runner.wait() == 0
        runs = sorted((project / "unotest" / ".runs").iterdir())
        assert len(runs) == 2
        events = [read_events(run, finished=True) for run in runs]
        ids = [e["id"] for run in events for e in run if e["kind"].startswith("command:")]
        assert ids and all(i.startswith("terminal-") for i in ids), ids
        assert sorted(run[-1]["outcome"] for run in events) == ["aborted", "completed"]
    finally:
        if slave >= 0:
            os.close(slave)
        os.close(master)


def test_restart_before_the_browser_keeps_the_web_server(
    tmp_path: Path, launch: Callable[..., Runner]
) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    serve = (
        f"echo started >> starts.txt; sleep 2; exec {sys.executable} -m http.server {port} "
        f"--bind 127.0.0.1 --directory {SITE}"
    )
    extra = f"webServer:\n  command: {json.dumps(serve)}\n  url: {url}/index.html\n"
    timeout = {"action": 2000, "expect": 2000, "navigation": 15000, "scenario": 60000}
    project = write_project(
        tmp_path / "proj", config_yaml(url, timeout=timeout, extra=extra), {"flows/again": FLOW}
    )
    runner = launch(project, "e2e", "flows/again")
    old_dir = runner.first_run_dir()
    wait_for_event(old_dir, is_kind("run:started"))
    # The webServer is still starting (its command sleeps 2 s before it listens); the
    # browser may already be launching beside it (prelaunch), which is not the point.
    with socket.socket() as sock:
        assert sock.connect_ex(("127.0.0.1", port)) != 0
    _, new_dir = restart(old_dir, runner)
    assert not any(e["kind"] == "step:started" for e in read_events(old_dir, finished=True))
    assert runner.wait() == 0
    assert read_events(new_dir, finished=True)[-1]["outcome"] == "completed"
    assert (project / "starts.txt").read_text() == "started\n"  # one webServer, kept
    assert "@ version one" in runner.stdout


def test_restart_refused_in_a_collection_run(
    tmp_path: Path, site: str, launch: Callable[..., Runner]
) -> None:
    """A worker's scenario does not restart on its own (its orchestrator decides what
    runs): the restart is answered, the run ends aborted, the collection goes on."""
    timeout = {"action": 2000, "expect": 2000, "navigation": 15000, "scenario": 60000}
    project = write_project(
        tmp_path / "proj",
        config_yaml(site, timeout=timeout),
        {"flows/slow": SLOW, "flows/again": FLOW},
        collections={"both": collection_yaml(["flows/slow", "flows/again"])},
    )
    runner = launch(project, "collection", "both", "--workers", "1")
    runs = project / "unotest" / ".runs"
    child = None
    deadline = time.monotonic() + 45
    while child is None:
        assert runner.proc.poll() is None and time.monotonic() < deadline, runner.stderr
        for manifest in runs.glob("flows-slow-*/manifest.json"):
            child = manifest.parent
        time.sleep(0.05)
    wait_for_event(child, is_kind("step:started", line=6))
    ident = append_command(child, "restart")
    _, result = wait_for_event(
        child, lambda e: e.get("id") == ident and e["kind"] == "command:result"
    )
    assert result == {
        "kind": "command:result",
        "id": ident,
        "ok": False,
        "error": "not restarted: a scenario of a collection run restarts with the collection",
        "t": result["t"],
    }
    runner.wait()  # the run's own end comes after its answer: read once the collection ended
    assert read_events(child)[-1]["outcome"] == "aborted"
    refs = sorted(json.loads(m.read_text())["ref"] for m in runs.glob("*/manifest.json"))
    assert refs == ["both", "flows/again", "flows/slow"]  # no run of its own followed
