"""What ``runner.collection.prelaunch`` reads from a command line and a collection file
before the project loads, and how it stops workers nobody adopted. The real runs
(workers adopted, replaced, stopped after a usage error) are in test_collection.py."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from runner.collection import prelaunch as worker_prelaunch
from runner.collection.prelaunch import Prelaunched, plan
from runner.workers.lanes import DEFAULT_LANES

COLLECTIONS = "unotest/e2e/_collections"


def _project(root: Path, collections: dict[str, str]) -> Path:
    (root / COLLECTIONS).mkdir(parents=True)
    for name, text in collections.items():
        (root / COLLECTIONS / f"{name}.yaml").write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return _project(
        tmp_path / "proj",
        {
            "five": "scenarios:\n  - a\n  - b\n  - a\n  - c\n  - d\n  - e\n",
            "one": "description: x\nscenarios: [a]\n",
            "empty": "scenarios: []\n",
            "typed": "scenarios: 3\n",
            "items": "scenarios:\n  - a\n  - 4\n",
            "anchored": "base: &b [a, b]\nscenarios: *b\n",
            "broken": "scenarios: [a\n",
        },
    )


@pytest.mark.parametrize(
    ("argv", "workers"),
    [
        (["five"], 1),
        (["five", "--workers", "2"], 2),
        (["five", "--workers", "9"], 5),  # a, b, c, d, e: the repeated one once
        (["--workers", "3", "five", "--bail", "--retries", "1", "--reporter", "dot"], 3),
        (["five", "--workers", "4", "--shard", "2/2"], 2),  # b, d
        (["five", "--workers", "4", "--shard", "3/3"], 1),  # c
        (["one", "--workers", "4"], 1),
    ],
)
def test_the_workers_a_command_line_wants(root: Path, argv: list[str], workers: int) -> None:
    assert plan(argv, root) == (root, workers, False, DEFAULT_LANES)


def test_headed_root_and_lanes_are_read(root: Path, tmp_path: Path) -> None:
    assert plan(["one", "--headed", "--root", str(root)], tmp_path) == (root, 1, True, 2)
    assert plan(["one"], root / COLLECTIONS) == (root, 1, False, 2)  # found from below
    assert plan(["five", "--workers", "3", "--lanes", "1"], root) == (root, 3, False, 1)
    assert plan(["five", "--lanes", "0"], root) is None  # the command says why


@pytest.mark.parametrize(
    "argv",
    [
        ["empty", "--workers", "2"],  # nothing to run
        ["typed"],
        ["items"],
        ["anchored"],  # the guarded reading decides about anchors
        ["broken"],
        ["nowhere"],
        ["../five"],
        [".hidden"],
        ["five", "--workers", "0"],
        ["five", "--workers", "two"],
        ["five", "--unknown-option"],
        ["five", "extra"],
        [],
    ],
)
def test_anything_unusual_starts_nothing(root: Path, argv: list[str]) -> None:
    assert plan(argv, root) is None


def test_a_large_collection_file_is_left_to_the_project(root: Path) -> None:
    names = "".join(f"  - s{i:06d}\n" for i in range(6000))
    (root / COLLECTIONS / "big.yaml").write_text("scenarios:\n" + names, encoding="utf-8")
    assert plan(["big"], root) is None


def test_output_asked_into_the_run_directory_starts_nothing(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker inherits the orchestrator's stderr: started before the collection's
    directory exists, its output would miss the run's stderr.log."""
    monkeypatch.setenv("UNOTEST_OUTPUT_TO_RUN_DIR", "1")
    assert plan(["five", "--workers", "2"], root) is None


def test_no_project_starts_nothing(tmp_path: Path) -> None:
    assert plan(["five"], tmp_path) is None


def test_start_never_raises_and_starts_nothing_for_a_bad_shard(root: Path) -> None:
    for argv in (["five", "--shard", "0/2"], ["five", "--shard", "x"], ["five", "--shard", "3/2"]):
        worker_prelaunch.start(argv, cwd=root)
        assert worker_prelaunch.take() is None


def _sleeper(*, ignore_term: bool = False) -> subprocess.Popen[bytes]:
    code = "import signal, sys, time\n"
    if ignore_term:
        code += "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    code += "print('up', flush=True)\ntime.sleep(60)\n"
    process = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert process.stdout is not None
    assert process.stdout.readline() == b"up\n"  # its handler is in place
    return process


def test_workers_are_wanted_only_for_the_count_they_were_started_for(tmp_path: Path) -> None:
    first, second = _sleeper(), _sleeper()
    started = Prelaunched(tmp_path, 2, False, 1, {0: first, 1: second})
    try:
        assert not started.wanted(1, 1, False)  # the run wants one worker, not two
        assert not started.wanted(2, 1, True)  # nor headed ones
        assert not started.wanted(2, 2, False)  # nor two lanes to a process
        assert started.wanted(2, 1, False)
        assert started.take(0) is first
        second.kill()
        second.wait()
        assert started.take(1) is None  # dead already: a new one is spawned
    finally:
        started.stop()
        for process in (first, second):
            process.kill()
            process.wait()


def test_stop_ends_every_worker_not_taken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worker_prelaunch, "STOP_GRACE_S", 0.5)
    polite, stubborn = _sleeper(), _sleeper(ignore_term=True)
    started = Prelaunched(tmp_path, 2, False, 1, {0: polite, 1: stubborn})
    started.stop()
    assert polite.returncode == -signal.SIGTERM
    assert stubborn.returncode == -signal.SIGKILL  # after the grace
    assert started.processes == {}
