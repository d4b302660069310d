"""A run ends with the process that owns it (``UNOTEST_OWNER_PID``, issue 13 item 9).

``unotest mcp`` names itself in the environment of the runs it starts without
``detach``; a run watches its *parent*, so an owner killed with SIGKILL is noticed as
surely as one that exits. Here: which processes watch (only the owner's children),
the real kernel reparenting after a SIGKILL, and the command feed telling its run once.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

from runner.debug.command_feed import CommandFeed
from runner.processes import OWNER_ENV, OwnerWatch


def test_only_a_child_of_the_owner_watches_it() -> None:
    assert OwnerWatch.from_environ({}) is None
    assert OwnerWatch.from_environ({OWNER_ENV: "not a pid"}) is None
    assert OwnerWatch.from_environ({OWNER_ENV: "1"}) is None  # init owns nothing
    parent = OwnerWatch.from_environ({OWNER_ENV: str(os.getppid())})
    assert parent is not None and not parent.gone()
    # A live process that is not our parent: the variable was only inherited.
    assert OwnerWatch.from_environ({OWNER_ENV: str(os.getpid())}) is None


def test_an_owner_already_dead_is_gone_at_once() -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    watch = OwnerWatch.from_environ({OWNER_ENV: str(dead.pid)})
    assert watch is not None and watch.gone()


CHILD = textwrap.dedent(
    """\
    import os, sys, time
    from runner.processes import OwnerWatch
    watch = OwnerWatch.from_environ(os.environ)
    print("watching" if watch is not None else "not watching", flush=True)
    while watch is not None and not watch.gone():
        time.sleep(0.05)
    print("gone", flush=True)
    """
)
OWNER = textwrap.dedent(
    """\
    import os, subprocess, sys
    env = {**os.environ, "UNOTEST_OWNER_PID": str(os.getpid())}
    subprocess.Popen([sys.executable, "-c", sys.argv[1]], env=env, stdout=sys.stdout)
    sys.stdin.read()  # until killed
    """
)


def test_a_child_sees_its_owner_killed_with_sigkill(tmp_path: Path) -> None:
    out = tmp_path / "child.out"
    with open(out, "wb") as sink:
        owner = subprocess.Popen(
            [sys.executable, "-c", OWNER, CHILD],
            stdin=subprocess.PIPE,
            stdout=sink,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        )
    try:
        deadline = time.monotonic() + 30
        while "watching" not in out.read_text():
            assert time.monotonic() < deadline, out.read_text()
            time.sleep(0.05)
        assert out.read_text().splitlines() == ["watching"]
        os.kill(owner.pid, signal.SIGKILL)
        owner.wait()
        while "gone" not in out.read_text():
            assert time.monotonic() < deadline, out.read_text()
            time.sleep(0.05)
    finally:
        if owner.poll() is None:
            owner.kill()
            owner.wait()
    assert out.read_text().splitlines() == ["watching", "gone"]


class _FakeOwner(OwnerWatch):
    def __init__(self) -> None:
        super().__init__(pid=12345)
        self.dead = threading.Event()

    def gone(self) -> bool:
        return self.dead.is_set()


def test_the_feed_tells_its_run_once_when_the_owner_is_gone(tmp_path: Path) -> None:
    commands = tmp_path / "commands.jsonl"
    commands.write_bytes(b"")
    told: list[str] = []
    owner = _FakeOwner()
    feed = CommandFeed(
        commands, lambda line: None, owner=owner, on_owner_gone=lambda: told.append("gone")
    )
    feed.start()
    try:
        time.sleep(0.6)  # a few of the owner's checks go by while it lives
        assert told == []
        owner.dead.set()
        deadline = time.monotonic() + 10
        while not told:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        time.sleep(0.6)  # and more after it is gone
    finally:
        feed.stop()
    assert told == ["gone"]
