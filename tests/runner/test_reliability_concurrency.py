"""Concurrency, proven against the real runner (issue 7, "Reliability, proven by fault
injection"): real Chromium, real ``unotest`` processes, real files.

What is here, and what it adds to the tests that already exist:

* many processes append to one run's ``commands.jsonl`` **while the runner reads it**
  (``unotest e2e --break`` paused at a breakpoint): every command answered exactly
  once in steps.jsonl, none lost, none duplicated, eval payloads intact.
  ``test_command_feed.py`` proves the same of :class:`CommandFeed` alone (8 × 2,000
  lines) and ``test_debugger_e2e.py`` of the runner with 2 × 200 small commands; this
  is the runner with 8 writers and payloads of 10 B to 64 KiB. The writers and the
  checks are ``bench/commands_stress.py``'s, which runs the full size (8 × 10,000,
  ~600 MB) outside the test budget; here the same seeded plan is smaller (8 × 250).
* a reader in **another process** doing 10,000 reads of ``runtime.json`` while it is
  rewritten 10,000 times never sees partial JSON (``test_rundir.py`` reads from a
  thread of the writing process, 2,000 times), with a control showing that the same
  reader does catch a writer that rewrites in place;
* four ``unotest e2e`` of one scenario started at once never share a run directory
  (``test_rundir.py`` proves it of ``RunDirectory.create`` in threads of one process).
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from events import read_events
from procs import stop_tree, wait_for_run_dir
from sites import config_yaml, unotest_env, write_project

from runner import protocol
from runner.store.rundir import RunDirectory

REPO = Path(__file__).resolve().parents[2]
UNOTEST = str(Path(sys.executable).with_name("unotest"))
TIMEOUT_S = 120.0


def _load_bench() -> ModuleType:
    """``bench/commands_stress.py``: its writers and checks are the ones the test uses."""
    path = REPO / "bench" / "commands_stress.py"
    spec = importlib.util.spec_from_file_location("commands_stress", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["commands_stress"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


stress = _load_bench()


def _project(root: Path, base_url: str, chromium: str, scenarios: dict[str, str]) -> Path:
    timeout = {"action": 5000, "expect": 5000, "navigation": 15000, "scenario": 90000}
    return write_project(root, config_yaml(base_url, timeout=timeout, chromium=chromium), scenarios)


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Every ``unotest`` started by a test; stopped, with their whole trees, at teardown."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for proc in started:
        stop_tree(proc, timeout=15)


# --- commands.jsonl: 8 writers while the paused runner reads ------------------------------

WRITERS = 8
PER_WRITER = 250  # the bench runs 10,000 each; the runner needs ~1.5 ms of CPU per command
SEED = 7


def test_eight_appenders_while_the_paused_runner_reads_every_command_answered_once(
    tmp_path: Path,
    static_site: str,
    chromium_path: str,
    processes: list[subprocess.Popen[bytes]],
) -> None:
    (tmp_path / "index.html").write_text(stress.PAGE, encoding="utf-8")
    project = _project(
        tmp_path / "proj", static_site, chromium_path, {stress.SCENARIO_NAME: stress.SCENARIO}
    )
    with open(tmp_path / "err.txt", "wb") as err:
        proc = subprocess.Popen(
            [UNOTEST, "e2e", stress.SCENARIO_NAME, "--break", str(stress.BREAK_LINE)],
            cwd=project,
            env=unotest_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    processes.append(proc)
    run_dir = wait_for_run_dir(project, proc, TIMEOUT_S)
    answers = stress.Answers(run_dir / "steps.jsonl")
    deadline = time.monotonic() + TIMEOUT_S
    while not any(e["kind"] == "paused" for e in answers.events):
        assert time.monotonic() < deadline and proc.poll() is None, "the run never paused"
        answers.poll()
        time.sleep(0.02)

    planned = {p.ident: p for i in range(WRITERS) for p in stress.plan(f"w{i}", PER_WRITER, SEED)}
    sizes = sorted(len(p.line) for p in planned.values())
    assert sizes[0] < 64 and sizes[-1] > 64 * 1024  # both ends of the range are there
    commands = run_dir / protocol.COMMANDS_FILE
    writers = [
        subprocess.Popen(stress.writer_argv(commands, f"w{i}", PER_WRITER, SEED))
        for i in range(WRITERS)
    ]
    try:
        for writer in writers:
            assert writer.wait(timeout=TIMEOUT_S) == 0
    finally:
        for writer in writers:
            if writer.poll() is None:
                writer.kill()
                writer.wait()
    wanted = set(planned)
    evals = {ident for ident, command in planned.items() if command.cmd == "eval"}

    def waiting() -> bool:
        # An eval is answered twice: command:applied, then its command:result line.
        unanswered = answers.answered(wanted) < len(wanted)
        return unanswered or any(not answers.results.get(ident) for ident in evals)

    while waiting() and time.monotonic() < deadline:
        assert proc.poll() is None, "the run ended under the load"
        answers.poll()
        time.sleep(0.05)
    # An answer arriving later would be a duplicate: the check after the run's end (below)
    # sees every answer there will ever be.

    problems = stress.check(answers, planned)
    assert problems == {kind: [] for kind in problems}, {k: v[:5] for k, v in problems.items()}
    kinds = {p.cmd for p in planned.values()}
    assert kinds == {"eval", "set-bp", "clear-bp", "pause", "fly", None}  # every path taken
    lines, bad = stress.intact_lines(commands)
    assert (lines, bad) == (len(planned), [])  # no two appends interleaved
    # The run stayed paused at its breakpoint through all of it.
    assert [e["kind"] for e in answers.events if e["kind"] in ("paused", "resumed")] == ["paused"]

    with open(commands, "ab") as handle:
        handle.write(b'{"id": "t-continue", "cmd": "continue"}\n')
    assert proc.wait(timeout=TIMEOUT_S) == 0, (tmp_path / "err.txt").read_text()[-2000:]
    answers.poll()
    assert answers.answers.pop("t-continue") == ["applied"]
    assert stress.check(answers, planned) == problems  # still once each, at the very end
    assert answers.events[-1]["kind"] == "run:finished"
    assert answers.events[-1]["outcome"] == "completed"
    assert "Traceback" not in (tmp_path / "err.txt").read_text()


# --- runtime.json: a reader in another process --------------------------------------------

READER = r"""
import json, sys, time
path, reads = sys.argv[1], int(sys.argv[2])
bad, seen = [], set()
def read():
    with open(path, "rb") as handle:
        data = handle.read()
    try:
        seen.add(json.loads(data)["updatedAt"])
    except (ValueError, KeyError, TypeError) as err:
        bad.append(f"{err}: {data[:60]!r}")
print("ready", flush=True)
sys.stdin.readline()  # go
# Counted from the writer's first change on: on a loaded machine this process could
# otherwise do all its reads before the writer runs at all, and see nothing.
deadline = time.monotonic() + 60
while len(seen) < 2 and not bad and time.monotonic() < deadline:
    read()
for _ in range(reads):
    read()
print(json.dumps({"bad": bad[:5], "bad_count": len(bad), "distinct": len(seen)}), flush=True)
"""


def _state(run_id: str, i: int) -> dict[str, object]:
    """A realistic runtime.json of varying size (the size changes every write)."""
    return {
        "runId": run_id,
        "scenario": "s",
        "testFn": "test_it",
        "state": "running" if i % 2 else "paused-step",
        "current": {"line": i % 100 + 1, "col": 0},
        "vars": {"i": str(i), "pad": json.dumps("v" * (i % 7 * 300))},
        "callStack": [],
        "lastFailure": None,
        "updatedAt": i,
    }


def _read_while(path: Path, reads: int, write: Any) -> dict[str, Any]:
    """Start the reader process, let it and ``write()`` go at the same moment."""
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, str(path), str(reads)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert reader.stdout is not None and reader.stdin is not None
        assert reader.stdout.readline() == "ready\n"
        reader.stdin.write("go\n")
        reader.stdin.flush()
        write()
        out, _ = reader.communicate(timeout=TIMEOUT_S)
    finally:
        if reader.poll() is None:
            reader.kill()
            reader.wait()
    assert reader.returncode == 0
    result: dict[str, Any] = json.loads(out)
    return result


def test_runtime_json_never_seen_partial_by_a_reader_process(tmp_path: Path) -> None:
    rounds = 10_000
    run = RunDirectory.create(tmp_path / "runs", "scenario", "s")
    try:
        run.write_runtime(_state(run.run_id, 0))
        target = run.path / protocol.RUNTIME_FILE

        def rewrite() -> None:
            for i in range(1, rounds + 1):
                run.write_runtime(_state(run.run_id, i))

        result = _read_while(target, rounds, rewrite)
        assert (result["bad_count"], result["bad"]) == (0, [])
        # The reads overlapped the rewrites: the reader saw many versions of the file.
        assert result["distinct"] > 10, result
        assert json.loads(target.read_bytes())["updatedAt"] == rounds
        assert not [p.name for p in run.path.iterdir() if p.name.endswith(".tmp")]
    finally:
        run.close()

    # Control: the same reader catches a writer that rewrites the file in place, so a
    # clean result above means something.
    naive = tmp_path / "naive.json"
    naive.write_bytes(json.dumps(_state("r", 0)).encode())

    def rewrite_in_place() -> None:
        for i in range(1, 1001):
            data = json.dumps(_state("r", i)).encode()
            with open(naive, "r+b") as handle:
                handle.truncate(0)
                handle.write(data[: len(data) // 2])
                handle.flush()
                time.sleep(0.0005)
                handle.write(data[len(data) // 2 :])

    control = _read_while(naive, 1000, rewrite_in_place)
    assert control["bad_count"] > 0, control


# --- two runs of one scenario at once -------------------------------------------------------

QUICK = """\
// id-same
// Four at once
// #0891b2
function test_same() {
  goto("/index.html")
  expect_visible(css("h1"))
}
"""


def test_four_runs_of_one_scenario_started_at_once_never_share_a_directory(
    tmp_path: Path,
    static_site: str,
    chromium_path: str,
    processes: list[subprocess.Popen[bytes]],
) -> None:
    (tmp_path / "index.html").write_text("<!doctype html><title>T</title><h1>Hi</h1>", "utf-8")
    project = _project(tmp_path / "proj", static_site, chromium_path, {"same": QUICK})
    procs = [
        subprocess.Popen(
            [UNOTEST, "e2e", "same"],
            cwd=project,
            env=unotest_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for _ in range(4)
    ]
    processes.extend(procs)
    outputs = [proc.communicate(timeout=TIMEOUT_S) for proc in procs]
    for proc, (out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, (out, err)
        assert b"Traceback" not in err

    run_dirs = sorted((project / "unotest" / ".runs").iterdir())
    assert len(run_dirs) == 4, run_dirs
    owners = {}
    for run_dir in run_dirs:
        manifest = json.loads((run_dir / "manifest.json").read_text())
        owners[manifest["pid"]] = run_dir
        events = read_events(run_dir)
        # One run's events only: one start naming this directory, one end.
        assert [e["kind"] for e in events].count("run:started") == 1
        assert events[0]["runId"] == run_dir.name
        assert [e["kind"] for e in events].count("run:finished") == 1
        assert events[-1] == {**events[-1], "kind": "run:finished", "outcome": "completed"}
        assert [e["kind"] for e in events].count("step:started") == 2
        runtime = json.loads((run_dir / "runtime.json").read_text())
        assert (runtime["runId"], runtime["state"]) == (run_dir.name, "completed")
    assert sorted(owners) == sorted(proc.pid for proc in procs)  # one directory each
    for proc, (out, _) in zip(procs, outputs, strict=True):
        assert f"unotest/.runs/{owners[proc.pid].name}" in out.decode()
