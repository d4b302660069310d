"""``runner.store.runs``: RunMeta from run directories, and ``unotest runs`` as a user runs it."""

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from runner import protocol
from runner.processes import process_start_time
from runner.store.run_list import list_runs
from runner.store.rundir import RunDirectory
from runner.store.runs import read_events, run_meta

Validate = Callable[[str, object], None]
HAS_PROC = Path("/proc/self/stat").exists()
T0 = 1_700_000_000_000


@pytest.fixture
def runs_dir(tmp_path: Path) -> Path:
    return tmp_path / "unotest" / ".runs"


def make_run(
    runs_dir: Path,
    events: list[dict[str, object]],
    *,
    ref: str = "smoke",
    kind: str = "scenario",
    manifest: dict[str, object] | None = None,
    drop: tuple[str, ...] = (),
    heartbeat_age: float = 0.0,
    tail: bytes = b"",
) -> Path:
    """A run directory written by hand, so every manifest variant can be tested. Its id
    holds its start (``run:started``, else the manifest's) as a runner's does: runs are
    listed newest first by the time in their ids."""
    kinds = ("run:started", "collection-run:started")
    starts = [e["t"] for e in events if e.get("kind") in kinds and "t" in e]
    made = starts[0] if starts else (manifest or {}).get("startedAt", T0)
    assert isinstance(made, int)
    run_id = protocol.make_run_id(ref, now_ms=made)
    path = runs_dir / run_id
    path.mkdir(parents=True)
    data: dict[str, object] = {
        "schemaVersion": 1,
        "kind": kind,
        "ref": ref,
        "adapter": protocol.ADAPTER_NAME,
        "startedAt": T0,
        "pid": os.getpid(),
        "hostname": socket.gethostname(),
    }
    start = process_start_time(os.getpid())
    if start is not None:
        data["pidStartTime"] = start
    data.update(manifest or {})
    for key in drop:
        data.pop(key, None)
    (path / protocol.RUN_MANIFEST_FILE).write_text(json.dumps(data))
    lines = b"".join(json.dumps(e).encode() + b"\n" for e in events)
    (path / protocol.STEPS_FILE).write_bytes(lines + tail)
    heartbeat = path / protocol.HEARTBEAT_FILE
    heartbeat.touch()
    when = time.time() - heartbeat_age
    os.utime(heartbeat, (when, when))
    (path / protocol.COMMANDS_FILE).touch()
    return path


def finished(outcome: str, base: int = T0) -> list[dict[str, object]]:
    return [
        {"kind": "run:started", "runId": "x", "scenario": "smoke", "t": base + 5},
        {"kind": "step:started", "line": 1, "col": 0, "text": "a", "t": base + 6},
        {"kind": "run:finished", "outcome": outcome, "t": base + 1505},
    ]


STARTED = [{"kind": "run:started", "runId": "x", "scenario": "smoke", "t": T0 + 5}]


@pytest.fixture
def dead_process() -> Iterator[tuple[int, int]]:
    """The pid and start time of a process that has exited (and been reaped)."""
    if not HAS_PROC:
        pytest.skip("needs /proc")
    proc = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE
    )
    start = process_start_time(proc.pid)
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait(timeout=30)
    assert start is not None
    yield proc.pid, start


# --- read_events ------------------------------------------------------------------


def test_read_events_splits_on_newline_only_and_ignores_the_tail(tmp_path: Path) -> None:
    steps = tmp_path / "steps.jsonl"
    steps.write_bytes(
        b'{"kind":"a","s":"x\\u2028y"}\n'
        + '{"kind":"b","s":"raw\u2028sep\u0085nel"}\n'.encode()
        + b"\n"
        + b"not json\n"
        + b"[1,2]\n"
        + b'"str"\n'
        + b"\xff\xfe\n"
        + b'{"kind":"c"}\r\n'
        + b'{"kind":"tail","t":1'
    )
    events = read_events(steps)
    assert [e["kind"] for e in events] == ["a", "b", "c"]
    assert events[1]["s"] == "raw\u2028sep\u0085nel"
    assert read_events(tmp_path / "missing.jsonl") == []


# --- run_meta -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("outcome", "status"),
    [("completed", "passed"), ("failed", "failed"), ("aborted", "aborted")],
)
def test_finished_runs(
    runs_dir: Path, outcome: str, status: str, protocol_validate: Validate
) -> None:
    path = make_run(runs_dir, finished(outcome))
    meta = run_meta(path)
    assert meta == {
        "runId": path.name,
        "kind": "scenario",
        "ref": "smoke",
        "startedAt": T0 + 5,
        "finishedAt": T0 + 1505,
        "durationMs": 1500,
        "status": status,
        "outcome": outcome,
    }
    protocol_validate("RunMeta", meta)


def test_finished_run_of_a_dead_runner_keeps_its_outcome(
    runs_dir: Path, dead_process: tuple[int, int]
) -> None:
    pid, start = dead_process
    path = make_run(runs_dir, finished("completed"), manifest={"pid": pid, "pidStartTime": start})
    meta = run_meta(path)
    assert meta is not None
    assert meta["status"] == "passed"


def test_running_with_own_pid(runs_dir: Path, protocol_validate: Validate) -> None:
    path = make_run(runs_dir, STARTED)
    meta = run_meta(path)
    assert meta is not None
    assert meta["status"] == "running"
    assert meta["outcome"] is None
    assert meta["finishedAt"] is None
    assert meta["durationMs"] is None
    assert meta["startedAt"] == T0 + 5
    protocol_validate("RunMeta", meta)


@pytest.mark.skipif(not HAS_PROC, reason="needs /proc")
def test_live_pid_decides_even_with_a_stale_heartbeat(runs_dir: Path) -> None:
    path = make_run(runs_dir, STARTED, heartbeat_age=600)
    meta = run_meta(path)
    assert meta is not None and meta["status"] == "running"


def test_dead_pid_is_interrupted_at_once(
    runs_dir: Path, dead_process: tuple[int, int], protocol_validate: Validate
) -> None:
    pid, start = dead_process
    # the heartbeat is fresh: only the pid can tell, and it tells now, not in 30 s
    path = make_run(runs_dir, STARTED, manifest={"pid": pid, "pidStartTime": start})
    meta = run_meta(path)
    assert meta is not None
    assert meta["status"] == "interrupted"
    assert meta["outcome"] is None
    assert meta["finishedAt"] is None
    protocol_validate("RunMeta", meta)


@pytest.mark.skipif(not HAS_PROC, reason="needs /proc")
def test_reused_pid_is_interrupted(runs_dir: Path) -> None:
    start = process_start_time(os.getpid())
    assert start is not None
    path = make_run(runs_dir, STARTED, manifest={"pidStartTime": start + 12345})
    meta = run_meta(path)
    assert meta is not None and meta["status"] == "interrupted"


@pytest.mark.skipif(not HAS_PROC, reason="needs /proc")
def test_zombie_runner_is_interrupted(runs_dir: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        start = process_start_time(proc.pid)
        deadline = time.monotonic() + 30
        while Path(f"/proc/{proc.pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0] != b"Z":
            assert time.monotonic() < deadline
            time.sleep(0.01)
        path = make_run(runs_dir, STARTED, manifest={"pid": proc.pid, "pidStartTime": start})
        meta = run_meta(path)
        assert meta is not None and meta["status"] == "interrupted"
    finally:
        proc.wait(timeout=30)


def test_without_pid_info_a_stale_heartbeat_means_interrupted(runs_dir: Path) -> None:
    stale = make_run(runs_dir, STARTED, drop=("pid", "pidStartTime", "hostname"), heartbeat_age=60)
    fresh = make_run(runs_dir, STARTED, drop=("pid", "pidStartTime", "hostname"))
    stale_meta, fresh_meta = run_meta(stale), run_meta(fresh)
    assert stale_meta is not None and stale_meta["status"] == "interrupted"
    assert fresh_meta is not None and fresh_meta["status"] == "running"
    # now_ms is the reader's clock
    later = run_meta(fresh, now_ms=time.time_ns() // 1_000_000 + 31_000)
    assert later is not None and later["status"] == "interrupted"


def test_pid_of_another_host_falls_back_to_the_heartbeat(
    runs_dir: Path, dead_process: tuple[int, int]
) -> None:
    pid, start = dead_process
    other = {"pid": pid, "pidStartTime": start, "hostname": "elsewhere.invalid"}
    fresh = make_run(runs_dir, STARTED, manifest=other)
    stale = make_run(runs_dir, STARTED, manifest=other, heartbeat_age=60)
    fresh_meta, stale_meta = run_meta(fresh), run_meta(stale)
    assert fresh_meta is not None and fresh_meta["status"] == "running"
    assert stale_meta is not None and stale_meta["status"] == "interrupted"


def test_dead_pid_without_start_time_is_interrupted_at_once(
    runs_dir: Path, dead_process: tuple[int, int]
) -> None:
    pid, _start = dead_process
    path = make_run(runs_dir, STARTED, manifest={"pid": pid}, drop=("pidStartTime",))
    meta = run_meta(path)
    assert meta is not None and meta["status"] == "interrupted"


def test_unterminated_finish_is_not_finished(runs_dir: Path) -> None:
    tail = json.dumps({"kind": "run:finished", "outcome": "completed", "t": T0 + 9}).encode()
    path = make_run(runs_dir, STARTED, tail=tail)
    meta = run_meta(path)
    assert meta is not None
    assert meta["status"] == "running"
    assert meta["outcome"] is None and meta["finishedAt"] is None


def test_started_falls_back_to_the_manifest(runs_dir: Path) -> None:
    path = make_run(runs_dir, [])
    meta = run_meta(path)
    assert meta is not None and meta["startedAt"] == T0


def test_collection_run_and_parent(runs_dir: Path, protocol_validate: Validate) -> None:
    coll = make_run(
        runs_dir,
        [
            {"kind": "collection-run:started", "runId": "c", "collection": "n", "scenarios": []},
            {"kind": "collection-run:finished", "outcome": "failed", "t": T0 + 100},
        ],
        kind="collection",
        ref="nightly",
    )
    child = make_run(runs_dir, finished("completed"), manifest={"parentRunId": coll.name})
    coll_meta, child_meta = run_meta(coll), run_meta(child)
    assert coll_meta is not None and child_meta is not None
    assert coll_meta["kind"] == "collection"
    assert coll_meta["startedAt"] == T0  # the started event has no t: the manifest's
    assert coll_meta["status"] == "failed"
    assert coll_meta["durationMs"] == 100
    assert "parentRunId" not in coll_meta
    assert child_meta["parentRunId"] == coll.name
    protocol_validate("RunMeta", coll_meta)
    protocol_validate("RunMeta", child_meta)


def test_unreadable_manifests_are_not_runs(runs_dir: Path) -> None:
    no_manifest = runs_dir / "half-made"
    no_manifest.mkdir(parents=True)
    assert run_meta(no_manifest) is None
    broken = make_run(runs_dir, STARTED)
    (broken / protocol.RUN_MANIFEST_FILE).write_text('{"kind": "scen')
    assert run_meta(broken) is None
    wrong = make_run(runs_dir, STARTED, manifest={"kind": "mobile"})
    assert run_meta(wrong) is None
    listed = list_runs(runs_dir)
    assert listed == []


def test_list_runs_newest_first_with_a_real_writer(runs_dir: Path) -> None:
    assert list_runs(runs_dir) == []  # no folder yet
    clock = iter([T0, T0 + 1, T0 + 2, T0 + 10_000, T0 + 10_001, T0 + 10_002])
    older = RunDirectory.create(runs_dir, "scenario", "older", now_ms=lambda: next(clock))
    older.append({"kind": "run:started", "runId": older.run_id, "scenario": "older"})
    older.append({"kind": "run:finished", "outcome": "completed"})
    older.close()
    newer = RunDirectory.create(runs_dir, "scenario", "newer", now_ms=lambda: next(clock))
    newer.append({"kind": "run:started", "runId": newer.run_id, "scenario": "newer"})
    (runs_dir / "stray-file").write_text("x")
    try:
        metas = list_runs(runs_dir)
    finally:
        newer.close()
    assert [(m["ref"], m["status"]) for m in metas] == [("newer", "running"), ("older", "passed")]
    assert metas[1]["durationMs"] == 1
    assert metas[1]["startedAt"] == T0 + 1


# --- unotest runs ---------------------------------------------------------------


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "unotest", "runs", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        timeout=60,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "internal error" not in proc.stderr, proc.stderr
    return proc


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "unotest" / "e2e").mkdir(parents=True)
    return tmp_path


def test_cli_no_runs(project: Path) -> None:
    proc = cli(project)
    assert proc.returncode == 0
    assert proc.stdout.startswith("no runs yet in unotest/.runs")
    proc = cli(project, "--json")
    assert proc.returncode == 0
    assert json.loads(proc.stdout) == []


def test_cli_json_and_table(project: Path, protocol_validate: Validate) -> None:
    runs_dir = project / "unotest" / ".runs"
    done = make_run(runs_dir, finished("completed"), ref="shop/checkout")
    failed = make_run(runs_dir, finished("failed", T0 - 1000), ref="odd\nref")
    live = make_run(runs_dir, [], ref="live", manifest={"startedAt": T0 + 50_000})
    stale = make_run(
        runs_dir,
        [],
        ref="gone",
        manifest={"startedAt": T0 + 40_000},
        drop=("pid", "pidStartTime"),
        heartbeat_age=120,
    )

    proc = cli(project, "--json")
    assert proc.returncode == 0, proc.stderr
    metas = json.loads(proc.stdout)
    for meta in metas:
        protocol_validate("RunMeta", meta)
    # the subprocess is not the runner: our own pid is, and we are alive
    assert [(m["runId"], m["status"]) for m in metas] == [
        (live.name, "running"),
        (stale.name, "interrupted"),
        (done.name, "passed"),
        (failed.name, "failed"),
    ]

    proc = cli(project)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["RUN", "ID", "KIND", "REF", "STATUS", "STARTED", "DURATION"]
    assert len(lines) == 5
    assert live.name in lines[1] and "running" in lines[1]
    assert "shop/checkout" in lines[3] and "passed" in lines[3] and "1.5 s" in lines[3]
    assert "odd\\nref" in lines[4]

    proc = cli(project, "--limit", "1", "--json")
    assert [m["runId"] for m in json.loads(proc.stdout)] == [live.name]
    proc = cli(project, "--limit", "2")
    assert len(proc.stdout.splitlines()) == 4
    assert "2 of 4 runs shown" in proc.stdout


def test_cli_root_and_usage_errors(project: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    proc = cli(elsewhere, "--root", str(project))
    assert proc.returncode == 0
    assert proc.stdout.startswith("no runs yet")
    proc = cli(elsewhere)
    assert proc.returncode == 2
    assert "no unotest project found" in proc.stderr
    proc = cli(project, "--limit", "0")
    assert proc.returncode == 2
    assert "--limit" in proc.stderr


# --- links between runs: restarts and retries (additive RunMeta fields) -----------------


def _finish(run: RunDirectory, outcome: str) -> None:
    run.append({"kind": "run:started", "runId": run.run_id, "scenario": "cart"})
    run.append({"kind": "run:finished", "outcome": outcome})
    run.close()


def test_run_meta_carries_restart_and_retry_links(
    project: Path, protocol_validate: Validate
) -> None:
    """Real writers link the runs (``RunDirectory.create(restart_of=…)``,
    ``retries.mark_attempt``); ``run_meta``, ``list_runs`` and ``unotest runs --json``
    show the links, still valid RunMeta."""
    from runner.store.retries import mark_attempt

    runs_dir = project / "unotest" / ".runs"
    clock = iter(range(T0, T0 + 100))
    first = RunDirectory.create(runs_dir, "scenario", "cart", now_ms=lambda: next(clock))
    _finish(first, "aborted")
    restarted = RunDirectory.create(
        runs_dir, "scenario", "cart", restart_of=first.run_id, now_ms=lambda: next(clock)
    )
    _finish(restarted, "failed")
    retry = RunDirectory.create(runs_dir, "scenario", "cart", now_ms=lambda: next(clock))
    mark_attempt(retry.path, 2, restarted.run_id)
    _finish(retry, "completed")

    plain, by_restart, by_retry = (run_meta(r.path) for r in (first, restarted, retry))
    assert plain is not None and by_restart is not None and by_retry is not None
    assert not {"restartOf", "attempt", "retryOf"} & set(plain)
    assert by_restart["restartOf"] == first.run_id
    assert not {"attempt", "retryOf"} & set(by_restart)
    assert (by_retry["attempt"], by_retry["retryOf"]) == (2, restarted.run_id)
    assert "restartOf" not in by_retry
    for meta in (plain, by_restart, by_retry):
        protocol_validate("RunMeta", meta)
    assert list_runs(runs_dir) == [by_retry, by_restart, plain]

    proc = cli(project, "--json")
    assert proc.returncode == 0, proc.stderr
    listed = {m["runId"]: m for m in json.loads(proc.stdout)}
    assert listed[restarted.run_id]["restartOf"] == first.run_id
    assert listed[retry.run_id]["retryOf"] == restarted.run_id
    assert listed[retry.run_id]["attempt"] == 2
    for meta in listed.values():
        protocol_validate("RunMeta", meta)


def test_run_meta_ignores_malformed_links(runs_dir: Path) -> None:
    """A hand-edited manifest's links of the wrong type are left out, not passed on."""
    odd = make_run(
        runs_dir,
        finished("completed"),
        manifest={"restartOf": 12, "attempt": "2", "retryOf": "first"},
    )
    no_number = make_run(runs_dir, finished("completed"), manifest={"retryOf": "first"})
    for path in (odd, no_number):
        meta = run_meta(path)
        assert meta is not None
        assert not {"restartOf", "attempt", "retryOf"} & set(meta)


# --- send_command: a restart's answer comes late ---------------------------------------


def _answering_runner(run_dir: Path, answers: list[tuple[float, dict[str, object]]]) -> None:
    """A stand-in runner: once a command is in commands.jsonl, write ``answers`` (each
    after its delay) with that command's id, as the debugger answers."""
    import threading

    def run() -> None:
        commands = run_dir / protocol.COMMANDS_FILE
        deadline = time.monotonic() + 30
        while not commands.read_text() and time.monotonic() < deadline:
            time.sleep(0.01)
        ident = json.loads(commands.read_text().splitlines()[0])["id"]
        for delay, event in answers:
            time.sleep(delay)
            answer = str(event["kind"]).startswith("command:")
            line = json.dumps({**event, "id": ident} if answer else event)
            with open(run_dir / protocol.STEPS_FILE, "a") as steps:
                steps.write(line + "\n")

    threading.Thread(target=run, daemon=True).start()


def test_send_restart_waits_past_the_acknowledgement_for_the_new_run_id(runs_dir: Path) -> None:
    from runner.debug.client import send_command

    run_dir = make_run(runs_dir, STARTED)
    applied = {"kind": "command:applied", "cmd": "restart"}
    result = {"kind": "command:result", "ok": True, "value": "smoke-next"}
    _answering_runner(run_dir, [(0.0, applied), (1.0, result)])
    answers = send_command(run_dir, {"cmd": "restart"}, timeout=0.2)
    assert [(a["kind"], a.get("value")) for a in answers] == [
        ("command:applied", None),
        ("command:result", "smoke-next"),
    ]


def test_send_stops_waiting_once_the_run_has_finished(runs_dir: Path) -> None:
    """No ``command:result`` comes after ``run:finished``: the sender does not wait on."""
    from runner.debug.client import send_command

    run_dir = make_run(runs_dir, STARTED)
    applied = {"kind": "command:applied", "cmd": "restart"}
    finished = {"kind": "run:finished", "outcome": "aborted", "t": T0 + 10}
    late = {"kind": "command:result", "ok": True, "value": "never-taken"}
    _answering_runner(run_dir, [(0.0, applied), (0.0, finished), (3.0, late)])
    answers = send_command(run_dir, {"cmd": "restart"})
    assert [a["kind"] for a in answers] == ["command:applied"]


def test_a_command_to_a_run_whose_runner_died_is_refused_at_once_and_not_written(
    runs_dir: Path,
) -> None:
    """It waited 5 s, said "is it running with --debug?", and appended the command to a
    dead run's commands.jsonl."""
    from runner.debug.client import send_command
    from runner.errors import UsageError

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    run_dir = make_run(
        runs_dir, STARTED, manifest={"pid": dead.pid}, drop=("pidStartTime",), heartbeat_age=120
    )
    with pytest.raises(UsageError, match="was interrupted: its runner is gone"):
        send_command(run_dir, {"cmd": "step"})
    assert (run_dir / protocol.COMMANDS_FILE).read_text() == ""


def test_a_collection_run_takes_abort_only(runs_dir: Path) -> None:
    from runner.debug.client import send_command
    from runner.errors import UsageError

    run_dir = make_run(runs_dir, [], kind="collection")
    with pytest.raises(UsageError, match="is a collection: it takes 'abort' only"):
        send_command(run_dir, {"cmd": "pause"})
    assert (run_dir / protocol.COMMANDS_FILE).read_text() == ""


def test_an_ambiguous_prefix_names_the_newest_runs_first(runs_dir: Path) -> None:
    """It listed the five oldest of the matches (sorted by id), not those one means."""
    from runner.errors import UsageError
    from runner.project.root import Project
    from runner.store.runs import find_run_dir

    made = []
    for age in range(7, 0, -1):  # oldest first
        path = make_run(runs_dir, finished("completed"))
        when = time.time() - age * 60
        os.utime(path / protocol.RUN_MANIFEST_FILE, (when, when))
        made.append(path.name)
    with pytest.raises(UsageError) as caught:
        find_run_dir(Project(runs_dir.parent.parent), "smoke")
    newest = ", ".join(reversed(made[-5:]))
    assert f"matches 7 runs (newest first: {newest}); give more of the id" in str(caught.value)


def test_inspect_of_a_collection_run_says_what_to_inspect(runs_dir: Path) -> None:
    collection = make_run(runs_dir, [], ref="nightly", kind="collection")
    done = subprocess.run(
        [sys.executable, "-m", "unotest", "inspect", collection.name],
        cwd=runs_dir.parent.parent,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONSAFEPATH": "1"},
    )
    assert done.returncode == 2
    assert done.stderr == (
        f"unotest: run {collection.name} is a collection's: inspect one of its scenarios' "
        "runs ('unotest runs' lists them)\n"
    )


def _inspect(run_dir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "unotest", "inspect", run_dir.name],
        cwd=run_dir.parent.parent.parent,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONSAFEPATH": "1"},
    )


def test_inspect_of_a_run_whose_runner_died_says_so(runs_dir: Path) -> None:
    """runtime.json still said "running": inspect showed a live run."""
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    run_dir = make_run(
        runs_dir, STARTED, manifest={"pid": dead.pid}, drop=("pidStartTime",), heartbeat_age=120
    )
    runtime = {"runId": run_dir.name, "scenario": "smoke", "testFn": "test_smoke",
               "state": "running", "current": {"line": 3, "col": 2}, "vars": {}}  # fmt: skip
    (run_dir / protocol.RUNTIME_FILE).write_text(json.dumps(runtime))
    done = _inspect(run_dir)
    assert done.returncode == 0, done
    assert (
        "state     running  (interrupted: its runner is gone; this is where it was)\n"
        in done.stdout
    ), done.stdout


def test_inspect_of_a_runtime_json_of_another_shape_is_one_sentence(runs_dir: Path) -> None:
    run_dir = make_run(runs_dir, STARTED)
    for text, said in (
        ("[1, 2]", "not a JSON object"),
        ('{"current": 5}', "not in the protocol's RuntimeState shape"),
    ):
        (run_dir / protocol.RUNTIME_FILE).write_text(text)
        done = _inspect(run_dir)
        assert done.returncode == 2, done
        assert done.stderr.startswith("unotest: cannot read ") and said in done.stderr, done
        assert done.stderr.count("\n") == 1


def test_dbg_takes_its_options_after_the_run_id_too(runs_dir: Path, tmp_path: Path) -> None:
    """``dbg RUN --json eval x`` said "unknown debugger command '--json eval x'"."""
    run_dir = make_run(runs_dir, STARTED)
    root = runs_dir.parent.parent
    for args, cwd in (
        (["--json", "frobnicate"], root),
        (["--root", str(root), "frobnicate"], tmp_path),
        (["--json", "--root", str(root), "frobnicate"], tmp_path),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "unotest", "dbg", run_dir.name, *args],
            cwd=cwd, capture_output=True, text=True, timeout=60,
            env={**os.environ, "PYTHONSAFEPATH": "1"},
        )  # fmt: skip
        assert done.returncode == 2, done
        assert done.stderr.startswith("unotest: unknown debugger command 'frobnicate'"), done
