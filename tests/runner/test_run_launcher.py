"""runner.launch.launcher: a child in its own session, started once its run has, its output
followed line by line. The child here is a small stand-in for ``unotest e2e`` that
writes a run directory as the runner does (the real one is driven in
tests/unotest/test_viewer_runs.py and tests/unotest/test_mcp.py)."""

from __future__ import annotations

import asyncio
import os
import sys
import textwrap
from pathlib import Path

import pytest

from runner.errors import UsageError
from runner.launch.launcher import _LogReader, launch_run

FAKE_RUN = textwrap.dedent(
    """
    import json, os, sys, time
    root = sys.argv[sys.argv.index("--root") + 1]
    mode = sys.argv[1]
    print("early out", flush=True)
    print("early err", file=sys.stderr, flush=True)
    if mode == "fail":
        print("no scenario named 'nope' (token=SECRETVALUE)", file=sys.stderr)
        sys.exit(2)
    if mode == "hang":
        time.sleep(60)
    run = os.path.join(root, "unotest", ".runs", "fake-run-1")
    os.makedirs(run)
    with open(os.path.join(run, "manifest.json"), "w") as f:
        json.dump({"schemaVersion": 1, "kind": "scenario", "ref": "fake", "pid": os.getpid(),
                   "adapter": "@unotest/web", "startedAt": 1}, f)
    if os.environ.get("UNOTEST_OUTPUT_TO_RUN_DIR") == "1":
        for stream, name in ((sys.stdout, "stdout.log"), (sys.stderr, "stderr.log")):
            fd = os.open(os.path.join(run, name), os.O_WRONLY | os.O_CREAT | os.O_APPEND)
            os.dup2(fd, stream.fileno())
    with open(os.path.join(run, "steps.jsonl"), "a") as f:
        f.write(json.dumps({"kind": "run:started", "runId": "fake-run-1", "t": 1}) + "\\n")
    time.sleep(0.3)
    print("owner=" + os.environ.get("UNOTEST_OWNER_PID", "none"), flush=True)
    print("sid=" + str(os.getsid(0) == os.getpid()), flush=True)
    print("warning SECRETVALUE", file=sys.stderr, flush=True)
    sys.stdout.write("last without newline")
    """
)


def _mask(text: str) -> str:
    return text.replace("SECRETVALUE", "***")


@pytest.fixture
def fake(tmp_path: Path) -> Path:
    (tmp_path / "unotest").mkdir()
    script = tmp_path / "fake_run.py"
    script.write_text(FAKE_RUN)
    return script


def test_a_run_starts_in_its_own_session_and_its_output_is_followed(
    tmp_path: Path, fake: Path
) -> None:
    lines: list[tuple[str, str]] = []

    async def main() -> None:
        run = await launch_run(
            tmp_path,
            [sys.executable, str(fake), "ok"],
            "scenario",
            env={"UNOTEST_OWNER_PID": "123456"},  # dropped: the owner is launch_run's to set
            on_line=lambda run_id, stream, text: lines.append((stream, f"{run_id}|{text}")),
            mask=_mask,
        )
        assert run.run_id == "fake-run-1"
        assert run.run_dir == tmp_path / "unotest" / ".runs" / "fake-run-1"
        assert run.follower is not None
        await asyncio.wait_for(run.follower, 30)

    asyncio.run(main())
    assert all(text.startswith("fake-run-1|") for _, text in lines)
    lines = [(stream, text.removeprefix("fake-run-1|")) for stream, text in lines]
    assert lines[:2] == [("stdout", "early out"), ("stderr", "early err")]
    assert ("stdout", "owner=none") in lines
    assert ("stdout", "sid=True") in lines
    assert ("stderr", "warning ***") in lines
    assert ("stdout", "last without newline") in lines
    stdout_log = (tmp_path / "unotest/.runs/fake-run-1/stdout.log").read_text()
    assert "owner=none\n" in stdout_log


def test_an_owned_run_names_its_owner(tmp_path: Path, fake: Path) -> None:
    lines: list[str] = []

    async def main() -> None:
        run = await launch_run(
            tmp_path,
            [sys.executable, str(fake), "ok"],
            "scenario",
            owner_pid=os.getpid(),
            on_line=lambda _run_id, _stream, text: lines.append(text),
        )
        assert run.follower is not None
        await asyncio.wait_for(run.follower, 30)

    asyncio.run(main())
    assert f"owner={os.getpid()}" in lines


def test_a_child_that_exits_before_its_run_starts_raises_what_it_said(
    tmp_path: Path, fake: Path
) -> None:
    with pytest.raises(UsageError) as caught:
        asyncio.run(
            launch_run(tmp_path, [sys.executable, str(fake), "fail"], "scenario", mask=_mask)
        )
    assert "no scenario named 'nope' (token=***)" in str(caught.value)
    assert "SECRETVALUE" not in str(caught.value)


def test_a_child_that_does_not_start_in_time_is_stopped(tmp_path: Path, fake: Path) -> None:
    with pytest.raises(UsageError, match=r"did not start within 0\.5 s"):
        asyncio.run(
            launch_run(tmp_path, [sys.executable, str(fake), "hang"], "scenario", timeout=0.5)
        )
    assert not list((tmp_path / "unotest").glob(".runs/*"))


def test_the_log_reader_takes_whole_lines_and_cuts_an_overlong_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("runner.launch.launcher.MAX_LINE_BYTES", 10)
    log = tmp_path / "stdout.log"
    log.write_bytes(b"one\ntw")
    reader = _LogReader(log)
    assert reader.read() == ["one"]
    with log.open("ab") as f:
        f.write(b"o\n" + b"x" * 25 + b"\nthree\n")
    assert list(reader.lines()) == ["two", "x" * 10, "three"]
    with log.open("ab") as f:
        f.write(b"tail")
    assert list(reader.lines()) == []
    assert list(reader.lines(final=True)) == ["tail"]


FAKE_RESTART = textwrap.dedent(
    """
    import json, os, sys, time
    root = sys.argv[sys.argv.index("--root") + 1]
    runs = os.path.join(root, "unotest", ".runs")

    def make(run_id, **extra):
        run = os.path.join(runs, run_id)
        os.makedirs(run)
        manifest = {"schemaVersion": 1, "kind": "scenario", "ref": "fake", "pid": os.getpid(),
                    "adapter": "@unotest/web", "startedAt": 1, **extra}
        with open(os.path.join(run, "manifest.json"), "w") as f:
            json.dump(manifest, f)
        return run

    def event(run, **data):
        with open(os.path.join(run, "steps.jsonl"), "a") as f:
            f.write(json.dumps(data) + "\\n")

    def capture(run):
        for stream, name in ((sys.stdout, "stdout.log"), (sys.stderr, "stderr.log")):
            stream.flush()
            fd = os.open(os.path.join(run, name), os.O_WRONLY | os.O_CREAT | os.O_APPEND)
            os.dup2(fd, stream.fileno())
            os.close(fd)

    first = make("fake-1")
    capture(first)
    event(first, kind="run:started", runId="fake-1", t=1)
    time.sleep(0.3)
    print("in the first run", flush=True)
    # an eval whose answer looks like a run id is no restart
    event(first, kind="command:result", id="e1", ok=True, value="fake-0")
    time.sleep(0.2)
    second = make("fake-2", restartOf="fake-1")
    event(first, kind="command:result", id="r1", ok=True, value="fake-2")
    print("the first run's last line", flush=True)
    event(first, kind="run:finished", outcome="aborted", t=2)
    capture(second)
    event(second, kind="run:started", runId="fake-2", t=3)
    time.sleep(0.2)
    print("in the second run", flush=True)
    print("a warning of the second run", file=sys.stderr, flush=True)
    time.sleep(0.2)
    third = make("fake-3", restartOf="fake-2")
    event(second, kind="command:result", id="r2", ok=True, value="fake-3")
    event(second, kind="run:finished", outcome="aborted", t=4)
    capture(third)
    event(third, kind="run:started", runId="fake-3", t=5)
    sys.stdout.write("the third run ends without a newline")
    """
)


def test_the_output_follows_the_run_through_its_restarts(tmp_path: Path) -> None:
    """A ``restart`` goes on in the same process as a new run directory: its lines come
    under the new run id, and a line the old run writes late still comes, under the old."""
    (tmp_path / "unotest").mkdir()
    script = tmp_path / "fake_restart.py"
    script.write_text(FAKE_RESTART)
    lines: list[tuple[str, str, str]] = []

    async def main() -> None:
        run = await launch_run(
            tmp_path,
            [sys.executable, str(script)],
            "scenario",
            on_line=lambda run_id, stream, text: lines.append((run_id, stream, text)),
        )
        assert run.run_id == "fake-1" and run.follower is not None
        await asyncio.wait_for(run.follower, 30)

    asyncio.run(main())
    assert sorted(lines) == sorted(
        [
            ("fake-1", "stdout", "in the first run"),
            ("fake-1", "stdout", "the first run's last line"),
            ("fake-2", "stdout", "in the second run"),
            ("fake-2", "stderr", "a warning of the second run"),
            ("fake-3", "stdout", "the third run ends without a newline"),
        ]
    )
