"""runner/store/tail.py: whole lines from a byte offset, truncation and replacement, flat
memory over 100,000 lines, and a run directory followed from its manifest to its end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from runner.processes import process_start_time
from runner.store import tail as tail_module
from runner.store.run_index import finished_line, note_lines, started_line
from runner.store.tail import LineTailer, RunsTailer, RunTail


def append(path: Path, data: bytes) -> None:
    with open(path, "ab") as handle:
        handle.write(data)


def test_only_whole_lines_and_a_partial_tail_waits_for_its_newline(tmp_path: Path) -> None:
    path = tmp_path / "steps.jsonl"
    tailer = LineTailer(path)
    assert tailer.read() == []  # no file yet
    append(path, b'{"a": 1}\n{"b":')
    assert tailer.read() == [b'{"a": 1}']
    assert tailer.pending == len(b'{"b":')
    assert tailer.read() == []
    append(path, b" 2}\n\n")
    assert tailer.read() == [b'{"b": 2}', b""]
    assert tailer.pending == 0
    assert tailer.offset == path.stat().st_size


def test_a_truncated_or_replaced_file_is_read_again_from_its_start(tmp_path: Path) -> None:
    path = tmp_path / "steps.jsonl"
    path.write_bytes(b"one\ntwo\n")
    tailer = LineTailer(path)
    assert tailer.read() == [b"one", b"two"]
    path.write_bytes(b"x\n")  # truncated below the offset
    assert tailer.read() == [b"x"]
    other = tmp_path / "other"
    other.write_bytes(b"new\n")
    os.replace(other, path)  # another file at the path, longer than nothing
    assert tailer.read() == [b"new"]


def test_reads_a_bounded_batch_and_catches_up_on_later_calls(tmp_path: Path) -> None:
    path = tmp_path / "steps.jsonl"
    path.write_bytes(b"".join(b"%05d\n" % i for i in range(1000)))
    tailer = LineTailer(path)
    first = tailer.read(max_bytes=600)
    assert first == [b"%05d" % i for i in range(100)]
    rest: list[bytes] = []
    while batch := tailer.read(max_bytes=600):
        rest.extend(batch)
    assert first + rest == [b"%05d" % i for i in range(1000)]


def test_an_overlong_partial_line_is_dropped_up_to_its_newline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tail_module, "MAX_LINE_BYTES", 10)
    path = tmp_path / "steps.jsonl"
    path.write_bytes(b"short\n" + b"y" * 50)
    tailer = LineTailer(path)
    assert tailer.read() == [b"short"]
    assert tailer.pending == 0
    append(path, b"yyy\nafter\n")
    assert tailer.read() == [b"after"]


def _step_line(i: int) -> bytes:
    return json.dumps({"kind": "step:ok", "durationMs": i, "t": 1}).encode() + b"\n"


def test_memory_stays_flat_while_tailing_100000_lines(tmp_path: Path) -> None:
    path = tmp_path / "steps.jsonl"
    with open(path, "wb") as handle:
        handle.writelines(_step_line(i) for i in range(100_000))
    size = path.stat().st_size
    tailer = LineTailer(path)
    tracemalloc.start()
    try:
        count = 0
        while batch := tailer.read(max_bytes=256 * 1024):
            count += len(batch)
            del batch
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 100_000
    assert tailer.offset == size
    # one batch of lines and a chunk at a time, never the file (several MB)
    assert peak < size / 4, (peak, size)


def _manifest(run_dir: Path, kind: str, ref: str, pid: int | None = None) -> None:
    run_dir.mkdir(parents=True)
    manifest: dict[str, object] = {
        "schemaVersion": 1,
        "kind": kind,
        "ref": ref,
        "adapter": "@unotest/web",
        "startedAt": 1,
    }
    if pid is not None:
        manifest["pid"] = pid
        start = process_start_time(pid)
        if start is not None:
            manifest["pidStartTime"] = start
    (run_dir / "manifest.json").write_text(json.dumps(manifest))


def test_a_run_is_followed_from_its_manifest_to_run_finished(tmp_path: Path) -> None:
    runs = tmp_path / ".runs"
    watcher = RunsTailer(runs)
    assert list(watcher.scan()) == []  # no runs dir yet
    run_dir = runs / "r1"
    run_dir.mkdir(parents=True)
    assert list(watcher.scan()) == []  # no manifest yet: waits
    (run_dir / "manifest.json").write_text(
        json.dumps({"schemaVersion": 1, "kind": "scenario", "ref": "smoke", "startedAt": 1})
    )
    append(run_dir / "steps.jsonl", b'{"kind":"run:started","runId":"r1","scenario":"smoke"')
    assert list(watcher.scan()) == [{"kind": "fs:run-started", "runId": "r1", "scenario": "smoke"}]
    append(run_dir / "steps.jsonl", b',"t":1}\nnot json\n')
    assert [m["kind"] for m in watcher.poll("r1")] == ["fs:run-step"]
    append(run_dir / "steps.jsonl", b'{"kind":"run:finished","outcome":"failed","t":2}\n')
    assert list(watcher.poll("r1")) == [
        {
            "kind": "fs:run-step",
            "runId": "r1",
            "event": {"kind": "run:finished", "outcome": "failed", "t": 2},
            "lineIndex": 2,  # after run:started and the line that is not JSON
        },
        {"kind": "fs:run-finished", "runId": "r1", "outcome": "failed"},
    ]
    assert watcher.live == {}
    append(run_dir / "steps.jsonl", b'{"kind":"step:ok","durationMs":1,"t":3}\n')
    assert list(watcher.poll("r1")) == []


def test_a_collection_run_sends_collection_steps(tmp_path: Path) -> None:
    run_dir = tmp_path / ".runs" / "c1"
    _manifest(run_dir, "collection", "nightly")
    (run_dir / "steps.jsonl").write_bytes(
        b'{"kind":"collection-run:started","runId":"c1","collection":"nightly",'
        b'"scenarios":["a"],"t":1}\n{"kind":"collection-run:finished","outcome":"completed","t":2}\n'
    )
    tail = RunTail.open(run_dir)
    assert tail is not None
    kinds = [m["kind"] for m in tail.drain()]
    assert kinds == [
        "fs:run-started",
        "fs:collection-run-step",
        "fs:collection-run-step",
        "fs:run-finished",
    ]
    assert tail.outcome == "completed"


def test_a_dead_runner_without_run_finished_is_interrupted(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    run_dir = tmp_path / ".runs" / "r2"
    _manifest(run_dir, "scenario", "smoke", pid=proc.pid)
    (run_dir / "steps.jsonl").write_bytes(
        b'{"kind":"run:started","runId":"r2","scenario":"smoke","t":1}\n'
    )
    watcher = RunsTailer(tmp_path / ".runs")
    assert [m["kind"] for m in watcher.scan()] == ["fs:run-started", "fs:run-step"]
    assert list(watcher.check_alive()) == [
        {"kind": "fs:run-finished", "runId": "r2", "outcome": "interrupted"}
    ]
    assert watcher.live == {}


def test_a_live_runner_is_not_interrupted_and_primed_runs_follow_from_their_end(
    tmp_path: Path,
) -> None:
    runs = tmp_path / ".runs"
    _manifest(runs / "live", "scenario", "smoke", pid=os.getpid())
    (runs / "live" / "steps.jsonl").write_bytes(_step_line(1))
    watcher = RunsTailer(runs)
    watcher.prime()
    assert list(watcher.check_alive()) == []
    assert list(watcher.scan()) == []  # known, not new
    append(runs / "live" / "steps.jsonl", _step_line(2))
    messages = list(watcher.poll("live"))
    assert [m["kind"] for m in messages] == ["fs:run-step"]
    assert messages[0]["event"]["durationMs"] == 2  # type: ignore[typeddict-item]
    assert messages[0]["lineIndex"] == 1  # type: ignore[typeddict-item]  # counted from the start


def test_lines_are_numbered_from_the_file_start_whatever_the_offset(tmp_path: Path) -> None:
    """The numbers a page compares with the whole lines a REST read of the file found."""
    path = tmp_path / "steps.jsonl"
    path.write_bytes(b"zero\none\ntw")
    assert LineTailer(path).read_numbered() == [(0, b"zero"), (1, b"one")]
    # Opened at the end, in the middle of line 2: its rest is line 2, then 3.
    tailer = LineTailer(path, path.stat().st_size)
    append(path, b"o\nthree\n")
    assert tailer.read_numbered() == [(2, b"o"), (3, b"three")]
    path.write_bytes(b"again\n")  # truncated: numbered from 0 again
    assert tailer.read_numbered() == [(0, b"again")]


def test_an_overlong_line_dropped_still_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tail_module, "MAX_LINE_BYTES", 10)
    path = tmp_path / "steps.jsonl"
    path.write_bytes(b"short\n" + b"y" * 50 + b"\nafter\n")
    tailer = LineTailer(path)  # the long line comes over several reads: dropped
    lines = [line for _ in range(20) for line in tailer.read_numbered(max_bytes=8)]
    assert lines == [(0, b"short"), (2, b"after")]


def _peak_following(tmp_path: Path, name: str, lines: int) -> tuple[int, int]:
    """(messages, peak traced bytes) following a run of ``lines`` steps to its end."""
    run_dir = tmp_path / ".runs" / name
    _manifest(run_dir, "scenario", "smoke")
    with open(run_dir / "steps.jsonl", "wb") as handle:
        handle.writelines(_step_line(i) for i in range(lines))
        handle.write(b'{"kind":"run:finished","outcome":"completed","t":2}\n')
    watcher = RunsTailer(tmp_path / ".runs")
    tracemalloc.start()
    try:
        count = sum(1 for _ in watcher.scan())  # each message dropped once counted
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return count, peak


def test_following_a_run_of_100000_steps_holds_no_more_than_one_of_10000(
    tmp_path: Path,
) -> None:
    small_count, small_peak = _peak_following(tmp_path / "a", "small", 10_000)
    big_count, big_peak = _peak_following(tmp_path / "b", "big", 100_000)
    assert (small_count, big_count) == (10_003, 100_003)  # started, steps, finished x2
    # one batch of parsed lines at a time: ten times the lines, not ten times the memory
    assert big_peak < small_peak * 1.5, (small_peak, big_peak)


def test_priming_asks_only_runs_the_index_has_not_seen_end_whether_they_live(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A viewer starting on a project of many runs asks their runners whether they live
    only for the runs the run index has no finish line of: a live one is followed, a
    finished one is left to REST, and one without index lines is asked (its directory
    is the truth); a file that is not a run directory is no run."""
    runs = tmp_path / "unotest" / ".runs"
    _manifest(runs / "live", "scenario", "smoke", pid=os.getpid())
    (runs / "live" / "steps.jsonl").write_bytes(_step_line(1))
    _manifest(runs / "unindexed", "scenario", "smoke", pid=os.getpid())
    (runs / "unindexed" / "steps.jsonl").write_bytes(_step_line(1))
    for n in range(5):
        _manifest(runs / f"ended-{n}", "scenario", "smoke")
    (runs / "stray.txt").write_text("not a run")
    note_lines(
        runs,
        [started_line("live", kind="scenario", ref="smoke", started_at=1)]
        + [started_line(f"ended-{n}", kind="scenario", ref="smoke", started_at=1) for n in range(5)]
        + [finished_line(f"ended-{n}", 2, "completed") for n in range(5)],
    )
    asked: list[str] = []
    real = tail_module.runner_alive

    def counting(run_dir: Path, now_ms: int | None = None) -> bool:
        asked.append(run_dir.name)
        return real(run_dir, now_ms)

    monkeypatch.setattr(tail_module, "runner_alive", counting)
    watcher = RunsTailer(runs)
    watcher.prime()
    assert sorted(asked) == ["live", "unindexed"]
    assert sorted(watcher.live) == ["live", "unindexed"]
    assert watcher.known == {"live", "unindexed", *(f"ended-{n}" for n in range(5))}


def test_a_run_made_before_its_manifest_is_opened_by_its_own_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A viewer reads the runs that run now every few milliseconds: a run directory made
    before its manifest is tried by itself then, the folder is not listed again (at
    100,000 runs that is 100,000 names), and one removed meanwhile is forgotten; a run
    that ended is handed over once to whoever reads its logs."""
    runs = tmp_path / ".runs"
    watcher = RunsTailer(runs)
    (runs / "r1").mkdir(parents=True)
    (runs / "gone").mkdir()
    assert list(watcher.scan()) == []
    assert watcher.waiting
    (runs / "gone").rmdir()
    _manifest_only(runs / "r1")
    started = b'{"kind":"run:started","runId":"r1","scenario":"s","t":1}\n'
    append(runs / "r1" / "steps.jsonl", started)
    listed: list[object] = []
    monkeypatch.setattr(os, "scandir", lambda *a: listed.append(a))
    kinds = [m["kind"] for m in watcher.open_waiting()]
    assert kinds == ["fs:run-started", "fs:run-step"]
    assert listed == [] and not watcher.waiting and list(watcher.live) == ["r1"]
    append(runs / "r1" / "steps.jsonl", b'{"kind":"run:finished","outcome":"completed","t":2}\n')
    assert [m["kind"] for m in watcher.poll_all()] == ["fs:run-step", "fs:run-finished"]
    assert list(watcher.take_ended()) == ["r1"]
    assert watcher.take_ended() == {}


def _manifest_only(run_dir: Path) -> None:
    manifest = {"schemaVersion": 1, "kind": "scenario", "ref": "s", "startedAt": 1}
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
