"""A pause without a terminal says so: one line on stderr per pause (issue 13, item 9).

Real ``unotest e2e`` subprocesses on real Chromium. Without a TTY on stdin (a CI job, a
run started by an agent) no prompt runs, and each pause prints one line on stderr:
where (file:line:col), why (breakpoint, step, failure), the run id and the two ways to
resume (``unotest dbg <runId> continue``, the viewer), with the idle timeout. With the
prompt on a terminal the line is not printed: the prompt shows the pause itself.
"""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from events import append_command, is_kind, read_events, wait_for_event
from procs import stop_tree, wait_for_run_dir
from sites import config_yaml, scenario_source, unotest_env, write_project

_BIN = Path(sys.executable).with_name("unotest")
UNOTEST = [str(_BIN)] if _BIN.is_file() else [sys.executable, "-m", "unotest"]
FILE = "unotest/e2e/waits.test.js"
BODY = "  let a = 1\n  let b = a + 1\n  expect_equal(b, 3)\n  log('after')\n"
LINE_A, LINE_B, LINE_EXPECT = 5, 6, 7  # the header's 3 lines, then the function line


def project(root: Path, chromium: str, extra: str = "") -> Path:
    return write_project(
        root,
        config_yaml(None, chromium=chromium, extra=extra),
        {"waits": scenario_source("waits", BODY)},
    )


def pause_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if "paused (" in line]


def wait_for_text(path: Path, needle: str, proc: subprocess.Popen[bytes]) -> str:
    deadline = time.monotonic() + 45
    while needle not in (text := path.read_text(errors="replace")):
        assert proc.poll() is None or needle in path.read_text(errors="replace"), text
        assert time.monotonic() < deadline, f"{needle!r} never showed in\n{text}"
        time.sleep(0.05)
    return text


def test_each_pause_without_a_tty_is_one_line_on_stderr(tmp_path: Path, chromium_path: str) -> None:
    root = project(tmp_path / "proj", chromium_path)
    out, err = tmp_path / "out", tmp_path / "err"
    with open(out, "wb") as out_file, open(err, "wb") as err_file:
        proc = subprocess.Popen(
            [*UNOTEST, "e2e", "waits", "--break", str(LINE_A)],
            cwd=root,
            env=unotest_env(NO_COLOR="1"),
            stdin=subprocess.DEVNULL,
            stdout=out_file,
            stderr=err_file,
        )
    try:
        run_dir = wait_for_run_dir(root, proc, describe=lambda: err.read_text())
        run_id = run_dir.name
        wait_for_event(run_dir, is_kind("paused", reason="breakpoint"))
        text = wait_for_text(err, "paused (breakpoint)", proc)
        assert pause_lines(text) == [
            f"unotest: paused (breakpoint) at {FILE}:{LINE_A}:2 in run {run_id}; to resume: "
            f"unotest dbg {run_id} continue, or the viewer "
            "(aborted after 30 min without a command)"
        ], text

        at = len(read_events(run_dir))
        append_command(run_dir, "step")
        wait_for_event(run_dir, is_kind("paused", reason="step"), after=at)
        wait_for_text(err, "paused (step)", proc)
        at = len(read_events(run_dir))
        append_command(run_dir, "continue")  # to the failing expect_equal: a failure pause
        wait_for_event(run_dir, is_kind("paused", reason="failure"), after=at)
        wait_for_text(err, "paused (failure)", proc)
        append_command(run_dir, "continue")  # ends the run as failed
        assert proc.wait(timeout=60) == 1
    finally:
        if proc.poll() is None:
            stop_tree(proc)
    lines = pause_lines(err.read_text())
    assert [re.sub(r" in run .*", "", line) for line in lines] == [
        f"unotest: paused (breakpoint) at {FILE}:{LINE_A}:2",
        f"unotest: paused (step) at {FILE}:{LINE_B}:2",
        # What failed, in the same line: a log or an agent learns it without asking.
        f"unotest: paused (failure) at {FILE}:{LINE_EXPECT}:2 "
        "(AssertionError: expected 3, received 2)",
    ]
    assert all(f"unotest dbg {run_id} continue, or the viewer" in line for line in lines[:2])
    assert f"unotest dbg {run_id} retry" in lines[2]
    assert f"unotest dbg {run_id} continue to end the run as failed" in lines[2]
    assert "paused (" not in out.read_text()  # stderr only: stdout stays the run's output


def test_a_pause_asked_for_by_a_viewer_without_debug_is_announced_too(
    tmp_path: Path, chromium_path: str
) -> None:
    """No ``--debug``: commands.jsonl is still read, and a ``pause`` from a viewer stops
    the run; the line says so, and its idle timeout is the configured one."""
    body = "  for (const i of range(200)) {\n    wait(50)\n  }\n  let done = 1\n"
    root = write_project(
        tmp_path / "proj",
        config_yaml(None, chromium=chromium_path, extra="debug:\n  idleTimeout: 120000\n"),
        {"waits": scenario_source("waits", body)},
    )
    err = tmp_path / "err"
    with open(err, "wb") as err_file:
        proc = subprocess.Popen(
            [*UNOTEST, "e2e", "waits"],
            cwd=root,
            env=unotest_env(NO_COLOR="1"),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err_file,
        )
    try:
        run_dir = wait_for_run_dir(root, proc, describe=lambda: err.read_text())
        wait_for_event(run_dir, is_kind("step:started"))
        append_command(run_dir, "pause")
        _, paused = wait_for_event(run_dir, is_kind("paused", reason="step"))
        text = wait_for_text(err, "paused (step)", proc)
        (line,) = pause_lines(text)
        assert f"at {FILE}:{paused['line']}:{paused['col']} in run {run_dir.name};" in line
        assert line.endswith("(aborted after 2 min without a command)"), line
        append_command(run_dir, "abort")
        assert proc.wait(timeout=60) == 130
    finally:
        if proc.poll() is None:
            stop_tree(proc)


def test_the_prompt_on_a_terminal_shows_the_pause_and_prints_no_such_line(
    tmp_path: Path, chromium_path: str
) -> None:
    root = project(tmp_path / "proj", chromium_path)
    master, slave = pty.openpty()
    proc = None
    try:
        proc = subprocess.Popen(
            [*UNOTEST, "e2e", "waits", "--break", str(LINE_A)],
            cwd=root,
            env=unotest_env(NO_COLOR="1"),
            stdin=slave,
            stdout=slave,
            stderr=slave,
        )
        os.close(slave)
        slave = -1
        seen = read_until(master, "(unotest) ")
        assert f"paused (breakpoint) at {FILE}:{LINE_A}:2" in seen, seen
        os.write(master, b"k\n")  # skip `let a = 1`: the next statement fails at once
        seen += read_until(master, "(unotest) ")
        assert f"paused (step) at {FILE}:{LINE_B}:2" in seen, seen
        os.write(master, b"a\n")
        seen += read_until(master, "aborted  waits")
        assert proc.wait(timeout=60) == 130
    finally:
        if proc is not None and proc.poll() is None:
            stop_tree(proc)
        if slave >= 0:
            os.close(slave)
        os.close(master)
    assert "to resume:" not in seen and "unotest dbg" not in seen, seen
    assert "without a command" not in seen, seen  # nor an idle timeout: a person is there


def read_until(fd: int, needle: str, timeout: float = 45) -> str:
    seen = ""
    deadline = time.monotonic() + timeout
    while needle not in seen:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            pytest.fail(f"{needle!r} never appeared; output:\n{seen}")
        ready, _, _ = select.select([fd], [], [], min(remaining, 0.2))
        if ready:
            try:
                data = os.read(fd, 65536)
            except OSError:  # EIO: the other side is closed
                data = b""
            if not data:
                pytest.fail(f"{needle!r} never appeared; output:\n{seen}")
            seen += data.decode("utf-8", "replace").replace("\r", "")
    return seen
