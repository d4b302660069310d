"""``runner.store.rundir``: what a reader of ``unotest/.runs/<runId>/`` may see at any instant."""

import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from runner import protocol
from runner.errors import RunWriteError
from runner.files import json_safe
from runner.processes import process_start_time, read_proc_stat
from runner.store.rundir import RunDirectory
from runner.store.runs import read_events

REPO = Path(__file__).resolve().parents[2]
Validate = Callable[[str, object], None]
T0 = 1_700_000_000_000


@pytest.fixture
def runs_dir(tmp_path: Path) -> Path:
    return tmp_path / "unotest" / ".runs"


@pytest.fixture
def run(runs_dir: Path) -> Iterator[RunDirectory]:
    rd = RunDirectory.create(runs_dir, "scenario", "shop/checkout")
    yield rd
    rd.close()


def lines_of(path: Path) -> list[bytes]:
    data = path.read_bytes()
    assert data == b"" or data.endswith(b"\n")
    return data.split(b"\n")[:-1]


# --- creation ------------------------------------------------------------------


def test_create_lays_out_the_directory(
    run: RunDirectory, runs_dir: Path, protocol_validate: Validate
) -> None:
    assert run.path == runs_dir / run.run_id
    assert run.run_id.startswith("shop-checkout-")
    assert sorted(os.listdir(run.path)) == sorted(
        [
            protocol.RUN_MANIFEST_FILE,
            protocol.STEPS_FILE,
            protocol.HEARTBEAT_FILE,
            protocol.COMMANDS_FILE,
        ]
    )
    assert not (run.path / protocol.RUNTIME_FILE).exists()
    for name in (protocol.STEPS_FILE, protocol.COMMANDS_FILE):
        assert (run.path / name).read_bytes() == b""
    manifest = json.loads((run.path / protocol.RUN_MANIFEST_FILE).read_text())
    protocol_validate("RunManifest", manifest)
    assert manifest["schemaVersion"] == 1
    assert manifest["kind"] == "scenario"
    assert manifest["ref"] == "shop/checkout"
    assert manifest["adapter"] == "@unotest/web"
    assert "parentRunId" not in manifest
    assert isinstance(manifest["startedAt"], int)
    assert manifest["pid"] == os.getpid()
    assert isinstance(manifest["hostname"], str)
    if sys.platform.startswith("linux"):
        assert manifest["pidStartTime"] == process_start_time(os.getpid())


def test_collection_child_manifest_has_parent(runs_dir: Path, protocol_validate: Validate) -> None:
    parent = RunDirectory.create(runs_dir, "collection", "nightly", now_ms=lambda: T0)
    with (
        parent,
        RunDirectory.create(runs_dir, "scenario", "s", parent_run_id=parent.run_id) as child,
    ):
        manifest = json.loads((child.path / protocol.RUN_MANIFEST_FILE).read_text())
    protocol_validate("RunManifest", manifest)
    assert manifest["parentRunId"] == parent.run_id
    assert parent.run_id.startswith("nightly-" + protocol.to_base36(T0) + "-")


def test_manifest_is_written_first_and_atomically(
    runs_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    order: list[str] = []
    real_open, real_replace, real_fsync = os.open, os.replace, os.fsync

    def spy_open(path: object, flags: int, *args: object, **kw: object) -> int:
        if flags & os.O_CREAT:
            order.append(f"open {Path(str(path)).name}")
        return real_open(path, flags, *args, **kw)  # type: ignore[arg-type]

    def spy_replace(src: object, dst: object) -> None:
        order.append(f"replace {Path(str(dst)).name}")
        real_replace(src, dst)  # type: ignore[arg-type]

    def spy_fsync(fd: int) -> None:
        order.append("fsync")
        real_fsync(fd)

    monkeypatch.setattr(os, "open", spy_open)
    monkeypatch.setattr(os, "replace", spy_replace)
    monkeypatch.setattr(os, "fsync", spy_fsync)
    RunDirectory.create(runs_dir, "scenario", "s").close()
    monkeypatch.undo()
    names = [e for e in order if not e.startswith("open .")]  # temp files start with "."
    assert names == [
        "fsync",
        "replace manifest.json",
        "open steps.jsonl",
        "open heartbeat",
        "open commands.jsonl",
    ]
    assert order[0].startswith("open .manifest.json.")


def test_same_ref_same_ms_same_random_never_share_a_directory(
    runs_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suffixes = iter(["aaaaaa", "aaaaaa", "aaaaaa", "bbbbbb"])
    monkeypatch.setattr(os, "urandom", lambda n: bytes.fromhex(next(suffixes)))
    fixed = lambda: 1_700_000_000_123  # noqa: E731
    first = RunDirectory.create(runs_dir, "scenario", "s", now_ms=fixed)
    second = RunDirectory.create(runs_dir, "scenario", "s", now_ms=fixed)
    try:
        assert first.run_id.endswith("-aaaaaa")
        assert second.run_id.endswith("-bbbbbb")
        assert first.path != second.path
        assert first.run_id.split("-")[:2] == second.run_id.split("-")[:2]
        manifest = json.loads((first.path / protocol.RUN_MANIFEST_FILE).read_text())
        assert manifest["startedAt"] == 1_700_000_000_123
    finally:
        first.close()
        second.close()


def test_concurrent_creates_get_distinct_directories(runs_dir: Path) -> None:
    made: list[RunDirectory] = []
    lock = threading.Lock()

    def make() -> None:
        rd = RunDirectory.create(runs_dir, "scenario", "same", now_ms=lambda: 42)
        with lock:
            made.append(rd)

    threads = [threading.Thread(target=make) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({rd.path for rd in made}) == 16
    for rd in made:
        rd.close()


# --- steps.jsonl ----------------------------------------------------------------

SCENARIO_EVENTS: list[dict[str, object]] = [
    {"kind": "run:started", "runId": "r", "scenario": "shop/checkout"},
    {"kind": "step:started", "line": 3, "col": 2, "text": 'goto("/")', "file": "x", "depth": 0},
    {"kind": "step:ok", "durationMs": 12.5},
    {"kind": "step:fail", "error": "boom", "errorName": "TimeoutError", "trace": "at x"},
    {"kind": "screenshot", "path": "unotest/.runs/r/screenshot/1.png"},
    {"kind": "failure-bundle:written", "bundlePath": ".unotest/failures/x", "screenshotPath": "a"},
    {
        "kind": "paused",
        "reason": "breakpoint",
        "line": 3,
        "col": 2,
        "snapshot": {"vars": {"a": "1"}, "callStack": [{"fn": "f", "file": "h.js", "line": 2}]},
    },
    {"kind": "resumed", "by": "step", "cmd": "step-over"},
    {"kind": "run:finished", "outcome": "completed"},
]

COLLECTION_EVENTS: list[dict[str, object]] = [
    {"kind": "collection-run:started", "runId": "c", "collection": "n", "scenarios": ["a"]},
    {"kind": "collection-run:scenario-started", "scenarioRunId": "x", "scenario": "a"},
    {
        "kind": "collection-run:scenario-finished",
        "scenarioRunId": "x",
        "scenario": "a",
        "outcome": "interrupted",
    },
    {"kind": "collection-run:finished", "outcome": "failed"},
]


def test_events_round_trip_and_validate(runs_dir: Path, protocol_validate: Validate) -> None:
    clock = iter(range(1000, 2000))
    with RunDirectory.create(runs_dir, "scenario", "s", now_ms=lambda: next(clock)) as rd:
        for event in SCENARIO_EVENTS:
            rd.append(event)
        rd.append({"kind": "command:applied", "id": "1", "cmd": "step", "t": 5})
        events = read_events(rd.path / protocol.STEPS_FILE)
    assert len(events) == len(SCENARIO_EVENTS) + 1
    for written, read in zip(SCENARIO_EVENTS, events[:-1], strict=True):
        assert read == {**written, "t": read["t"]}
        assert isinstance(read["t"], int)
        protocol_validate("RunArtifact", read)
    assert [e["t"] for e in events[:-1]] == sorted(e["t"] for e in events[:-1])
    assert events[-1]["t"] == 5  # an explicit t is kept
    assert "t" not in SCENARIO_EVENTS[0]  # the caller's dict is not touched


def test_collection_events_validate(runs_dir: Path, protocol_validate: Validate) -> None:
    with RunDirectory.create(runs_dir, "collection", "n") as rd:
        for event in COLLECTION_EVENTS:
            rd.append(event)
        events = read_events(rd.path / protocol.STEPS_FILE)
    assert [e["kind"] for e in events] == [e["kind"] for e in COLLECTION_EVENTS]
    for event in events:
        protocol_validate("CollectionRunArtifact", event)


def test_awkward_values_give_single_line_json(run: RunDirectory) -> None:
    big = "x" * (1024 * 1024)
    odd = "line\u2028sep\u2029para\nnew\rret\x00nul \U0001f600 \ud800"

    class Thing:
        def __str__(self) -> str:
            return "<thing>"

    cyclic: list[object] = [1]
    cyclic.append(cyclic)
    run.append(
        {
            "kind": "step:ok",
            "durationMs": float("nan"),
            "vals": [float("inf"), float("-inf"), 1.5, (1, 2), {1: "a", None: "b"}],
            "odd": odd,
            "thing": Thing(),
            "cyclic": cyclic,
        }
    )
    run.append({"kind": "step:fail", "error": big})
    lines = lines_of(run.path / protocol.STEPS_FILE)
    assert len(lines) == 2
    for line in lines:
        line.decode("ascii")  # ensure_ascii: no raw U+2028 a JS reader would split on
        assert b"NaN" not in line.replace(b'"NaN"', b"")
    first = json.loads(lines[0])
    assert first["durationMs"] == "NaN"
    assert first["vals"] == ["Infinity", "-Infinity", 1.5, [1, 2], {"1": "a", "None": "b"}]
    assert first["odd"] == odd
    assert first["thing"] == "<thing>"
    assert first["cyclic"] == [1, "[Circular]"]
    assert json.loads(lines[1])["error"] == big


def test_json_safe_is_idempotent_on_plain_json() -> None:
    value: dict[str, object] = {"a": [1, 2.5, None, True, "s", {"b": []}]}
    assert json_safe(value) == value


def test_mask_sees_every_event_and_runtime(runs_dir: Path) -> None:
    def mask(data: object) -> object:
        return json.loads(json.dumps(data).replace("hunter22", "********"))

    with RunDirectory.create(runs_dir, "scenario", "s", mask=mask) as rd:
        rd.append({"kind": "step:fail", "error": "password hunter22 rejected"})
        rd.write_runtime({"state": "failed", "vars": {"pw": '"hunter22"'}})
        steps = (rd.path / protocol.STEPS_FILE).read_text()
        runtime = (rd.path / protocol.RUNTIME_FILE).read_text()
    assert "hunter22" not in steps and "********" in steps
    assert "hunter22" not in runtime and "********" in runtime


def test_many_threads_append_whole_lines(run: RunDirectory) -> None:
    threads_n, per_thread = 8, 500

    def worker(n: int) -> None:
        for i in range(per_thread):
            pad = "y" * (70_000 if i % 97 == 0 else i % 50)
            run.append({"kind": "step:ok", "durationMs": i, "thread": n, "i": i, "pad": pad})

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(threads_n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lines = lines_of(run.path / protocol.STEPS_FILE)
    assert len(lines) == threads_n * per_thread
    seen: dict[int, list[int]] = {n: [] for n in range(threads_n)}
    for line in lines:
        event = json.loads(line)
        seen[event["thread"]].append(event["i"])
    for n in range(threads_n):
        assert seen[n] == list(range(per_thread))


def test_append_after_close_is_a_clear_error(runs_dir: Path) -> None:
    rd = RunDirectory.create(runs_dir, "scenario", "s")
    rd.close()
    rd.close()  # idempotent
    with pytest.raises(RunWriteError, match="closed"):
        rd.append({"kind": "step:ok", "durationMs": 1})


def test_disk_full_mid_line_raises_and_leaves_whole_lines(
    run: RunDirectory, monkeypatch: pytest.MonkeyPatch
) -> None:
    run.append({"kind": "step:ok", "durationMs": 1})
    real_write = os.write
    calls = 0

    def full_disk(fd: int, data: bytes) -> int:
        nonlocal calls
        calls += 1
        if calls == 1:
            return real_write(fd, bytes(data)[:7])  # a short write
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", full_disk)
    with pytest.raises(RunWriteError) as caught:
        run.append({"kind": "step:fail", "error": "e" * 100})
    monkeypatch.undo()
    assert str(caught.value) == (
        f"cannot write unotest/.runs/{run.run_id}/steps.jsonl: No space left on device"
    )
    assert isinstance(caught.value, OSError)
    assert caught.value.errno == 28
    lines = lines_of(run.path / protocol.STEPS_FILE)
    assert [json.loads(line)["kind"] for line in lines] == ["step:ok"]
    run.append({"kind": "run:finished", "outcome": "failed"})  # space came back
    assert [e["kind"] for e in read_events(run.path / protocol.STEPS_FILE)] == [
        "step:ok",
        "run:finished",
    ]


def test_short_writes_are_completed(run: RunDirectory, monkeypatch: pytest.MonkeyPatch) -> None:
    real_write = os.write
    monkeypatch.setattr(os, "write", lambda fd, data: real_write(fd, bytes(data)[:3]))
    run.append({"kind": "step:ok", "durationMs": 1, "pad": "z" * 100})
    monkeypatch.undo()
    assert json.loads(lines_of(run.path / protocol.STEPS_FILE)[0])["pad"] == "z" * 100


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")
def test_file_size_limit_is_a_clear_error_not_a_crash(runs_dir: Path) -> None:
    code = textwrap.dedent(
        f"""
        import resource, signal, sys
        from pathlib import Path
        from runner.errors import RunWriteError
        from runner.store.rundir import RunDirectory
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        rd = RunDirectory.create(Path({str(runs_dir)!r}), "scenario", "big")
        print(rd.run_id, flush=True)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4000, resource.RLIM_INFINITY))
        try:
            for i in range(100):
                rd.append({{"kind": "step:ok", "durationMs": i, "pad": "p" * 900}})
        except RunWriteError as err:
            print(err, flush=True)
            rd.close()
            sys.exit(0)
        sys.exit(3)
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    run_id, message = proc.stdout.splitlines()
    assert message == f"cannot write unotest/.runs/{run_id}/steps.jsonl: File too large"
    lines = lines_of(runs_dir / run_id / protocol.STEPS_FILE)
    assert len(lines) == 4
    assert [json.loads(line)["durationMs"] for line in lines] == [0, 1, 2, 3]


# --- runtime.json -----------------------------------------------------------------


def runtime_state(run_id: str, i: int) -> dict[str, object]:
    return {
        "runId": run_id,
        "scenario": "s",
        "testFn": "test_it",
        "state": "running" if i % 2 else "paused-step",
        "current": {"line": i % 100 + 1, "col": 0},
        "vars": {"i": str(i), "pad": json.dumps("v" * (i % 7 * 3000))},
        "callStack": [],
        "lastFailure": None,
        "updatedAt": i,
    }


def test_runtime_json_validates(run: RunDirectory, protocol_validate: Validate) -> None:
    state = runtime_state(run.run_id, 3)
    del state["updatedAt"]
    run.write_runtime({**state, "vars": {"x": float("nan")}})
    written = json.loads((run.path / protocol.RUNTIME_FILE).read_text())
    assert written["vars"] == {"x": "NaN"}
    assert isinstance(written["updatedAt"], int)
    protocol_validate("RuntimeStateFile", written)


def test_runtime_json_is_never_seen_partial(run: RunDirectory) -> None:
    rounds = 2000
    run.write_runtime(runtime_state(run.run_id, 0))
    target = run.path / protocol.RUNTIME_FILE
    bad: list[str] = []
    reads = 0

    def reader() -> None:
        nonlocal reads
        for _ in range(rounds):
            data = target.read_bytes()
            try:
                json.loads(data)
            except ValueError as err:
                bad.append(f"{err}: {data[:80]!r}")
            reads += 1

    thread = threading.Thread(target=reader)
    thread.start()
    for i in range(1, rounds + 1):
        run.write_runtime(runtime_state(run.run_id, i))
    thread.join()
    assert reads == rounds
    assert bad == []
    assert json.loads(target.read_bytes())["updatedAt"] == rounds
    assert sorted(os.listdir(run.path)) == sorted(
        [
            protocol.RUN_MANIFEST_FILE,
            protocol.STEPS_FILE,
            protocol.HEARTBEAT_FILE,
            protocol.COMMANDS_FILE,
            protocol.RUNTIME_FILE,
        ]
    )  # no temp file left behind


def test_write_text_and_bytes_files(run: RunDirectory) -> None:
    png = run.write_bytes_file("screenshot/1.png", b"\x89PNG")
    assert png == run.path / "screenshot" / "1.png"
    assert png.read_bytes() == b"\x89PNG"
    note = run.write_text_file("notes/a.txt", "é")
    assert note.read_text(encoding="utf-8") == "é"
    for bad in ("../escape", "/abs", "", "a/../../b"):
        with pytest.raises(ValueError):
            run.write_text_file(bad, "x")


# --- heartbeat ------------------------------------------------------------------


def _unbeaten(heartbeat: Path, for_s: float) -> bool:
    """Whether nothing touches ``heartbeat`` for ``for_s`` seconds (``pytest.approx`` of
    an mtime near 1.7e9 would let about 1,700 s pass)."""
    old = time.time() - 60
    os.utime(heartbeat, (old, old))
    time.sleep(for_s)
    return abs(heartbeat.stat().st_mtime - old) < 1  # a touch would be 60 s later


def test_heartbeat_advances_and_stops(run: RunDirectory) -> None:
    heartbeat = run.path / protocol.HEARTBEAT_FILE
    old = time.time() - 60
    os.utime(heartbeat, (old, old))
    run.start_heartbeat(interval=0.05)
    [beating] = [t for t in threading.enumerate() if t.name == f"unotest-heartbeat-{run.run_id}"]
    try:
        first = heartbeat.stat().st_mtime
        assert first > old + 50  # touched at once
        os.utime(heartbeat, (old, old))
        deadline = time.monotonic() + 5
        while heartbeat.stat().st_mtime < old + 50:
            assert time.monotonic() < deadline, "heartbeat did not beat"
            time.sleep(0.01)
    finally:
        run.stop_heartbeat()
    assert not beating.is_alive()  # stopped: nothing touches the heartbeat any more
    assert _unbeaten(heartbeat, 0.3)
    run.close()  # stopping twice is fine


def test_heartbeat_beats_while_the_main_thread_is_blocked(run: RunDirectory) -> None:
    heartbeat = run.path / protocol.HEARTBEAT_FILE
    run.start_heartbeat(interval=0.05)
    old = time.time() - 60
    os.utime(heartbeat, (old, old))
    threading.Event().wait(0.5)  # a paused interpreter waiting for a command
    assert heartbeat.stat().st_mtime > old + 50
    run.close()
    assert not any(t.name.startswith("unotest-heartbeat-") for t in threading.enumerate())


def test_own_start_time_is_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each run's manifest records this process's start time: read from /proc once."""
    from runner import processes

    reads: list[int] = []

    def counted(pid: int) -> int | None:
        reads.append(pid)
        return 4242

    monkeypatch.setattr(processes, "_OWN_START", {})
    monkeypatch.setattr(processes, "process_start_time", counted)
    assert processes.own_start_time() == 4242
    assert processes.own_start_time() == 4242
    assert reads == [os.getpid()]


# --- /proc ----------------------------------------------------------------------


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_proc_stat_survives_odd_process_names(tmp_path: Path) -> None:
    odd = tmp_path / "a b) (c"
    odd.symlink_to(sys.executable)
    proc = subprocess.Popen([str(odd), "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        stat = read_proc_stat(proc.pid)
        assert stat is not None
        assert b") (" in Path(f"/proc/{proc.pid}/stat").read_bytes()
        state, start = stat
        assert state in "RSD"
        assert start >= (process_start_time(os.getpid()) or 0)
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=30)
    assert read_proc_stat(proc.pid) is None or read_proc_stat(proc.pid) != stat
    assert read_proc_stat(-1) is None
    assert read_proc_stat(0) is None


def test_atomic_write_keeps_the_permission_bits_of_the_file_it_replaces(tmp_path: Path) -> None:
    """A 0600 unotest/.env saved by the viewer stays 0600, from the temp file on."""
    import stat

    from runner.files import atomic_write

    secret = tmp_path / ".env"
    secret.write_text("TOKEN=1\n")
    secret.chmod(0o600)
    atomic_write(secret, b"TOKEN=2\n")
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    assert secret.read_text() == "TOKEN=2\n"
    fresh = tmp_path / "new.json"
    atomic_write(fresh, b"{}")
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o644 & ~_umask()


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
