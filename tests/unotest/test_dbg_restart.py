"""``unotest dbg <runId> restart`` as a person types it in another terminal: real
Chromium, a real ``unotest e2e --debug`` paused at a breakpoint, ``unotest dbg`` run as
a subprocess.

The answer is the new run's id (``restarted as <newRunId>``, exit 0), the run to drive
from then on: the test drives it with that id. A restart that cannot happen (the file
no longer parses) prints the reason (``not restarted: <file:line:col> …``, exit 1) and
the run ends with nothing after it. ``--json`` prints the answers, the result's
``value`` the new id.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import run
from events import is_kind, read_events, wait_for_event
from net import serve_directory
from sites import config_yaml, unotest_env, write_project

SITE = Path(__file__).resolve().parents[1] / "runner" / "site_debugger"
RUN_TIMEOUT_S = 90
FLOW_FILE = "unotest/e2e/flows/again.test.js"
FLOW = """\
// id-flows-again
// Started again from another terminal
// #2563eb
function test_again() {
  goto("/index.html")
  let a = 1
  log("@ logged " + a)
  let b = a + 1
  expect_equal(b, 2)
}
"""


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    with serve_directory(SITE, "dbg-restart-site") as url:
        timeout = {"action": 2000, "expect": 2000, "navigation": 15000, "scenario": 60000}
        yield write_project(
            tmp_path / "proj", config_yaml(url, timeout=timeout), {"flows/again": FLOW}
        )


@pytest.fixture
def runner(project: Path) -> Iterator[subprocess.Popen[bytes]]:
    """``unotest e2e flows/again --debug --break 8:2``, no terminal (no prompt)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "unotest", "e2e", "flows/again", "--debug", "--break", "8:2"],
        cwd=project,
        env=unotest_env(NO_COLOR="1"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            for run_dir in (project / "unotest" / ".runs").glob("*"):  # nothing left paused
                with open(run_dir / "commands.jsonl", "a") as commands:
                    commands.write(json.dumps({"id": "test-cleanup", "cmd": "abort"}) + "\n")
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def only_run(project: Path) -> Path:
    runs = list((project / "unotest" / ".runs").iterdir())
    assert len(runs) == 1, runs
    return runs[0]


def first_run(project: Path, proc: subprocess.Popen[bytes]) -> Path:
    runs_dir = project / "unotest" / ".runs"
    for _ in range(RUN_TIMEOUT_S * 10):
        if runs_dir.is_dir() and any(runs_dir.iterdir()):
            return only_run(project)
        assert proc.poll() is None, "the run ended before it made its directory"
        time.sleep(0.1)
    raise AssertionError("no run directory")


def test_dbg_restart_prints_the_new_run_id_to_drive_next(
    project: Path, runner: subprocess.Popen[bytes]
) -> None:
    old_dir = first_run(project, runner)
    wait_for_event(old_dir, is_kind("paused", line=8, col=2), timeout=RUN_TIMEOUT_S)

    answer = run(project, "dbg", old_dir.name, "restart")
    assert answer.code == 0, (answer.out, answer.err)
    lines = answer.out.splitlines()
    assert len(lines) == 1 and lines[0].startswith("restarted as "), answer.out
    new_id = lines[0].removeprefix("restarted as ")
    new_dir = old_dir.parent / new_id
    assert new_id != old_dir.name
    assert json.loads((new_dir / "manifest.json").read_text())["restartOf"] == old_dir.name
    assert read_events(old_dir, finished=True)[-1]["outcome"] == "aborted"

    # The id printed is the one to drive: the kept breakpoint, then continue by it.
    wait_for_event(new_dir, is_kind("paused", line=8, col=2), timeout=RUN_TIMEOUT_S)
    answer = run(project, "dbg", "--json", new_id, "restart")
    assert answer.code == 0, (answer.out, answer.err)
    answers = json.loads(answer.out)
    assert [a["kind"] for a in answers] == ["command:applied", "command:result"]
    newest = answers[1]["value"]
    assert answers[1]["ok"] is True and (old_dir.parent / newest).is_dir()
    wait_for_event(old_dir.parent / newest, is_kind("paused", line=8, col=2))
    answer = run(project, "dbg", newest, "continue")
    assert (answer.code, answer.out.strip()) == (0, "applied: continue")
    assert runner.wait(timeout=RUN_TIMEOUT_S) == 0
    done = read_events(old_dir.parent / newest, finished=True)
    assert done[-1]["kind"] == "run:finished" and done[-1]["outcome"] == "completed"


def test_dbg_restart_refused_prints_the_reason_and_exits_1(
    project: Path, runner: subprocess.Popen[bytes]
) -> None:
    old_dir = first_run(project, runner)
    wait_for_event(old_dir, is_kind("paused", line=8, col=2), timeout=RUN_TIMEOUT_S)
    (project / FLOW_FILE).write_text(FLOW.replace("let b = a + 1", "let b = = 1"))

    answer = run(project, "dbg", old_dir.name, "restart")
    assert answer.code == 1, (answer.out, answer.err)
    lines = answer.out.splitlines()
    assert len(lines) == 1, answer.out
    assert lines[0].startswith(f"not restarted: {FLOW_FILE}:8:"), answer.out
    assert "SyntaxError" in lines[0]
    assert runner.wait(timeout=RUN_TIMEOUT_S) == 130  # aborted, and nothing followed it
    assert only_run(project) == old_dir

    answer = run(project, "dbg", old_dir.name, "restart")  # a finished run: a usage error
    assert answer.code == 2 and "has finished" in answer.err, (answer.out, answer.err)
