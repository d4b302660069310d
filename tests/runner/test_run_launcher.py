"""runner.launch.launcher: a child in its own session, started once its run has, its output
in the run's logs (what it printed before them too). The child here is a small stand-in
for ``unotest e2e`` that writes a run directory as the runner does (the real one is
driven in tests/unotest/test_viewer_runs.py and tests/unotest/test_mcp.py)."""

from __future__ import annotations

import asyncio
import os
import sys
import textwrap
from pathlib import Path

import pytest

from runner.errors import UsageError
from runner.launch.launcher import LaunchedRun, launch_run

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


def _finished(run: LaunchedRun) -> dict[str, str]:
    """The run's two logs once its process has ended."""
    run.process.wait(30)
    return {name: (run.run_dir / f"{name}.log").read_text() for name in ("stdout", "stderr")}


def test_a_run_starts_in_its_own_session_its_output_in_its_logs(
    tmp_path: Path, fake: Path
) -> None:
    async def main() -> LaunchedRun:
        return await launch_run(
            tmp_path,
            [sys.executable, str(fake), "ok"],
            "scenario",
            env={"UNOTEST_OWNER_PID": "123456"},  # dropped: the owner is launch_run's to set
            mask=_mask,
        )

    run = asyncio.run(main())
    assert run.run_id == "fake-run-1"
    assert run.run_dir == tmp_path / "unotest" / ".runs" / "fake-run-1"
    # What it printed before its run directory took its output: kept, masked, and in its
    # logs for any reader (the viewer's run_logs, get_run).
    assert run.early_output == [("stdout", "early out"), ("stderr", "early err")]
    logs = _finished(run)
    assert logs["stdout"].startswith("early out\n")
    assert "owner=none\n" in logs["stdout"] and "sid=True\n" in logs["stdout"]
    assert logs["stdout"].endswith("last without newline")
    assert "early err\n" in logs["stderr"] and "warning SECRETVALUE" in logs["stderr"]


def test_an_owned_run_names_its_owner(tmp_path: Path, fake: Path) -> None:
    async def main() -> LaunchedRun:
        return await launch_run(
            tmp_path, [sys.executable, str(fake), "ok"], "scenario", owner_pid=os.getpid()
        )

    assert f"owner={os.getpid()}\n" in _finished(asyncio.run(main()))["stdout"]


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
