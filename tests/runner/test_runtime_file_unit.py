"""runtime.json's writer: at once when the meaning changes, at most every interval while
running, the last progress state always written, an older state never over a newer one.

The writer under test writes into a list (what ``RunDirectory.write_runtime`` would
write); the reporter's own tests cover runtime.json on disk.
"""

from __future__ import annotations

import threading
import time
from typing import Any, cast

from runner import protocol
from runner.store.runtime_file import RuntimeFile


class Sink:
    def __init__(self) -> None:
        self.written: list[tuple[str, int]] = []
        self.changed = threading.Event()

    def __call__(self, state: protocol.RuntimeStateFile) -> None:
        current = state["current"]
        self.written.append((state["state"], current["line"] if current else 0))
        self.changed.set()


def state(kind: str, line: int) -> protocol.RuntimeStateFile:
    data: dict[str, Any] = {
        "runId": "r",
        "scenario": "s",
        "testFn": "test_s",
        "state": kind,
        "current": {"line": line, "col": 2} if line else None,
        "vars": {},
        "callStack": [],
        "lastFailure": None,
        "updatedAt": 0,
    }
    return cast(protocol.RuntimeStateFile, data)


def progress(writer: RuntimeFile, line: int) -> None:
    """What the reporter does for a step: at once when due, else for the timer."""
    number = writer.number()
    if writer.due():
        writer.write_now(number, state("running", line))
    else:
        writer.progress(number, state("running", line))


def wait_for(sink: Sink, expected: tuple[str, int]) -> None:
    deadline = time.monotonic() + 10
    while expected not in sink.written:
        assert time.monotonic() < deadline, sink.written
        sink.changed.wait(0.05)
        sink.changed.clear()


def test_steps_within_the_interval_are_written_once_then_the_last_by_the_timer() -> None:
    sink = Sink()
    writer = RuntimeFile(sink, interval=0.3)
    for line in (3, 4, 5, 6):
        progress(writer, line)
    assert sink.written == [("running", 3)]  # the leading edge only, so far
    wait_for(sink, ("running", 6))  # the trailing edge: the step that runs on is shown
    assert sink.written == [("running", 3), ("running", 6)]  # 4 and 5 were never news
    writer.close()


def test_a_state_other_than_running_makes_the_next_step_news() -> None:
    sink = Sink()
    writer = RuntimeFile(sink, interval=60)
    writer.write_now(writer.number(), state("starting", 0))
    progress(writer, 3)  # the first step after starting: at once
    progress(writer, 4)  # within the interval: kept
    writer.write_now(writer.number(), state("paused", 4))
    progress(writer, 5)  # after the pause (and its resume): at once
    assert sink.written == [("starting", 0), ("running", 3), ("paused", 4), ("running", 5)]
    writer.close()


def test_an_older_pending_state_never_replaces_a_later_one() -> None:
    sink = Sink()
    writer = RuntimeFile(sink, interval=0.2)
    progress(writer, 3)
    older = writer.number()  # built before the end, kept for the timer after it
    writer.write_now(writer.number(), state("completed", 0))
    writer.progress(older, state("running", 4))
    time.sleep(0.5)  # past the interval: a timer, had one been armed, has run
    assert sink.written == [("running", 3), ("completed", 0)]
    writer.close()


def test_close_drops_what_is_pending() -> None:
    sink = Sink()
    writer = RuntimeFile(sink, interval=0.2)
    progress(writer, 3)
    progress(writer, 4)
    writer.close()
    time.sleep(0.5)
    assert sink.written == [("running", 3)]


def test_a_failing_write_in_the_timer_is_dropped_quietly() -> None:
    calls: list[int] = []

    def broken(data: protocol.RuntimeStateFile) -> None:
        calls.append(1)
        if len(calls) > 1:
            raise OSError("the run directory is gone")

    writer = RuntimeFile(broken, interval=0.1)
    progress(writer, 3)
    progress(writer, 4)
    deadline = time.monotonic() + 10
    while len(calls) < 2:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    writer.close()
