"""commands.jsonl as the runner reads it: by byte offset, whole lines only (runner.md §3).

A trailing ``\\r`` (a writer with CRLF line ends) stays on the line: it is JSON
whitespace, so ``json.loads`` and the controller accept the command as it is.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from runner.debug.command_feed import (
    IDLE_POLL_SECONDS,
    MAX_PENDING_BYTES,
    POLL_SECONDS,
    CommandFeed,
)
from runner.debug.file_changes import FileChanges

WAIT = 10.0


class Lines:
    """What the feed delivered, in order, from its thread."""

    def __init__(self) -> None:
        self.items: list[bytes] = []
        self.cond = threading.Condition()
        self.threads: set[str] = set()

    def __call__(self, line: bytes) -> None:
        with self.cond:
            self.items.append(line)
            self.threads.add(threading.current_thread().name)
            self.cond.notify_all()

    def wait(self, count: int, timeout: float = WAIT) -> list[bytes]:
        deadline = time.monotonic() + timeout
        with self.cond:
            while len(self.items) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"{len(self.items)} of {count} lines delivered")
                self.cond.wait(left)
            return list(self.items)


class PolledFeed(CommandFeed):
    """The feed under test, counting the polls (``read_new`` calls) its thread completes:
    a test that must show that nothing (more) was delivered waits for polls instead of
    sleeping."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.polls = 0
        self._polled = threading.Condition()

    def read_new(self) -> None:
        try:
            super().read_new()
        finally:
            with self._polled:
                self.polls += 1
                self._polled.notify_all()

    def wait_polls(self, count: int, timeout: float = WAIT) -> None:
        """Until ``count`` more polls have completed. The first of them may have begun
        before this call, so ``count`` >= 2 guarantees a whole poll after it."""
        with self._polled:
            target = self.polls + count
            if not self._polled.wait_for(lambda: self.polls >= target, timeout):
                raise AssertionError(f"{target - self.polls} of {count} polls missing")


def append(path: Path, data: bytes) -> None:
    """As ``unotest dbg`` does: one write on an O_APPEND descriptor."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    target = tmp_path / "commands.jsonl"
    target.write_bytes(b"")
    return target


@pytest.fixture
def feed_of(path: Path) -> Iterator[Callable[..., tuple[PolledFeed, Lines]]]:
    feeds: list[CommandFeed] = []

    def make(
        on_line: Callable[[bytes], None] | None = None, target: Path | None = None, **kw: object
    ) -> tuple[PolledFeed, Lines]:
        lines = Lines()
        feed = PolledFeed(target or path, on_line or lines, poll=0.002, **kw)
        feeds.append(feed)
        feed.start()
        return feed, lines

    yield make
    for feed in feeds:
        feed.stop()


def test_a_line_written_in_two_halves_is_delivered_once_and_whole(
    path: Path, feed_of: Callable[..., tuple[PolledFeed, Lines]]
) -> None:
    feed, lines = feed_of()
    append(path, b'{"id": "a", "cmd": "st')
    feed.wait_polls(24)  # dozens of polls see the half line
    assert lines.items == []
    append(path, b'ep"}\n')
    assert lines.wait(1) == [b'{"id": "a", "cmd": "step"}']
    feed.wait_polls(2)
    assert len(lines.items) == 1
    assert lines.threads == {"unotest-commands"}


def test_many_lines_in_one_write_arrive_in_order(
    path: Path, feed_of: Callable[..., tuple[PolledFeed, Lines]]
) -> None:
    _, lines = feed_of()
    sent = [json.dumps({"id": f"m{i}", "cmd": "pause"}).encode() for i in range(500)]
    append(path, b"\n".join(sent) + b"\n")
    assert lines.wait(500) == sent


def test_blank_lines_are_skipped(
    path: Path, feed_of: Callable[..., tuple[PolledFeed, Lines]]
) -> None:
    feed, lines = feed_of()
    append(path, b'\n  \n{"id": "b"}\n\r\n\n{"id": "c"}\n')
    assert lines.wait(2) == [b'{"id": "b"}', b'{"id": "c"}']
    feed.wait_polls(2)
    assert len(lines.items) == 2


def test_crlf_keeps_the_carriage_return_which_json_accepts(
    path: Path, feed_of: Callable[..., tuple[PolledFeed, Lines]]
) -> None:
    _, lines = feed_of()
    append(path, b'{"id": "r1", "cmd": "step"}\r\n{"id": "r2", "cmd": "step"}\r\n')
    got = lines.wait(2)
    assert got == [b'{"id": "r1", "cmd": "step"}\r', b'{"id": "r2", "cmd": "step"}\r']
    assert [json.loads(line)["id"] for line in got] == ["r1", "r2"]


def test_a_64_kib_line_is_delivered_intact_even_written_in_pieces(
    path: Path, feed_of: Callable[..., tuple[PolledFeed, Lines]]
) -> None:
    _, lines = feed_of()
    expr = "".join(chr(ord("a") + i % 26) for i in range(64 * 1024))
    line = json.dumps({"id": "big", "cmd": "eval", "expr": expr}).encode()
    append(path, line + b"\n")
    for start in range(0, len(line), 7000):  # and again, in slow pieces
        append(path, line[start : start + 7000])
        time.sleep(0.005)
    append(path, b"\n")
    got = lines.wait(2)
    assert got == [line, line]
    assert json.loads(got[1])["expr"] == expr


def test_a_missing_file_is_waited_for(
    tmp_path: Path, feed_of: Callable[..., tuple[PolledFeed, Lines]]
) -> None:
    target = tmp_path / "later" / "commands.jsonl"
    feed, lines = feed_of(target=target)
    feed.wait_polls(2)
    assert feed._thread.is_alive()
    assert lines.items == []
    target.parent.mkdir()
    append(target, b'{"id": "late"}\n')
    assert lines.wait(1) == [b'{"id": "late"}']


def test_a_vanished_file_stops_nothing(
    path: Path, feed_of: Callable[..., tuple[PolledFeed, Lines]]
) -> None:
    feed, lines = feed_of()
    append(path, b'{"id": "first one"}\n')
    lines.wait(1)
    path.unlink()
    feed.wait_polls(2)
    assert feed._thread.is_alive()
    # A new file (shorter, as the inode number may be reused): read from its start.
    append(path, b'{"id": "2"}\n')
    assert lines.wait(2) == [b'{"id": "first one"}', b'{"id": "2"}']
    path.write_bytes(b"")  # truncated in place, then a shorter line
    append(path, b'{"id":3}\n')
    assert lines.wait(3)[-1] == b'{"id":3}'
    feed.wait_polls(2)
    assert len(lines.items) == 3


def test_a_failing_consumer_loses_no_later_line(
    path: Path, feed_of: Callable[..., tuple[PolledFeed, Lines]]
) -> None:
    lines = Lines()
    warnings: list[str] = []

    def on_line(line: bytes) -> None:
        lines(line)
        if line.startswith(b"boom"):
            raise (OSError if line == b"boom-os" else ValueError)("consumer failed")

    feed_of(on_line, warn=warnings.append)
    append(path, b"boom-os\nafter-1\nboom-value\nafter-2\n")
    assert lines.wait(4) == [b"boom-os", b"after-1", b"boom-value", b"after-2"]
    append(path, b"later\n")
    assert lines.wait(5)[-1] == b"later"
    assert len(warnings) == 2 and all("consumer failed" in w for w in warnings)


def test_an_endless_line_is_handed_over_once_and_its_rest_dropped(
    path: Path, feed_of: Callable[..., tuple[PolledFeed, Lines]]
) -> None:
    feed, lines = feed_of()
    append(path, b'{"id": "before"}\n' + b"x" * (MAX_PENDING_BYTES + 10))
    lines.wait(2)  # handed over before its end was written
    append(path, b'y" , "id": "forged", "cmd": "abort"}\n{"id": "after"}\n')
    got = lines.wait(3)
    assert got[0] == b'{"id": "before"}'
    assert len(got[1]) > MAX_PENDING_BYTES and set(got[1]) == {ord("x")}
    assert got[2] == b'{"id": "after"}'
    feed.wait_polls(2)
    assert len(lines.items) == 3  # the tail of the long line was not taken for a command


def test_stop_ends_the_thread_and_hands_on_nothing_after_it(path: Path) -> None:
    """stop() does not join the thread (it runs on the run's event loop); the thread
    ends on its own at once, closing its wake-up pipe, and a command written after
    stop() returned is never handed on."""
    lines = Lines()
    feed = CommandFeed(path, lines, poll=30.0)
    feed.start()
    append(path, b'{"id": "s"}\n')
    assert lines.wait(1) == [b'{"id": "s"}']
    assert feed._wake is not None
    feed.stop()
    append(path, b'{"id": "late"}\n')
    feed._thread.join(timeout=5)
    assert not feed._thread.is_alive()
    assert feed._wake is None  # its pipe closed by the thread as it ended
    time.sleep(0.1)
    assert lines.items == [b'{"id": "s"}']
    feed.stop()  # idempotent
    CommandFeed(path, lines).stop()  # never started: nothing to wait for


def test_read_new_without_the_thread(path: Path) -> None:
    lines = Lines()
    feed = CommandFeed(path, lines)
    feed.read_new()
    append(path, b'{"id": "1"}\n{"id": "2"}\n{"id"')
    feed.read_new()
    assert lines.items == [b'{"id": "1"}', b'{"id": "2"}']
    append(path, b': "3"}\n')
    feed.read_new()
    feed.read_new()
    assert lines.items == [b'{"id": "1"}', b'{"id": "2"}', b'{"id": "3"}']


# --- many writers at once --------------------------------------------------------------

WRITER = r"""
import json, math, os, random, sys, zlib
path, writer, count, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rng = random.Random(seed)
fd = os.open(path, os.O_WRONLY | os.O_APPEND)
for n in range(count):
    # 10 B to 64 KiB, log-uniform (mostly small, as commands are), both ends included.
    if n == 0:
        size = 10
    elif n == 1:
        size = 65536
    else:
        size = int(math.exp(rng.uniform(math.log(10), math.log(65536))))
    pad = os.urandom((size + 1) // 2).hex()[:size]
    line = json.dumps(
        {"id": f"{writer}-{n}", "cmd": "eval", "sum": zlib.crc32(pad.encode()), "expr": pad},
        separators=(",", ":"),
    ).encode() + b"\n"
    view = memoryview(line)
    while view:  # one os.write per line; a short write (never, on a file) is completed
        view = view[os.write(fd, view):]
os.close(fd)
"""


def test_concurrent_appenders_every_line_exactly_once_and_intact(
    path: Path, feed_of: Callable[..., tuple[PolledFeed, Lines]]
) -> None:
    writers, per_writer = 8, 2000
    bad: list[bytes] = []
    seen: dict[str, int] = {}
    lock = threading.Lock()

    def on_line(line: bytes) -> None:
        try:
            data = json.loads(line)
            ok = zlib.crc32(data["expr"].encode()) == data["sum"]
        except (ValueError, KeyError, TypeError):
            ok = False
        with lock:
            if not ok:
                bad.append(line[:200])
                return
            seen[data["id"]] = seen.get(data["id"], 0) + 1

    feed, _ = feed_of(on_line)
    started = time.monotonic()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), f"w{i}", str(per_writer), str(i)]
        )
        for i in range(writers)
    ]
    for proc in procs:
        assert proc.wait(timeout=60) == 0
    total = writers * per_writer
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with lock:
            if len(seen) + len(bad) >= total:
                break
        time.sleep(0.01)
    feed.wait_polls(2)  # a whole poll after the last line: anything more would be a duplicate
    feed.stop()
    assert bad == []
    expected = {f"w{i}-{n}" for i in range(writers) for n in range(per_writer)}
    assert set(seen) == expected, f"lost {len(expected - set(seen))}"
    duplicated = {k: v for k, v in seen.items() if v != 1}
    assert duplicated == {}
    assert feed._offset == path.stat().st_size
    assert feed._pending == b""
    size_mb = path.stat().st_size / 1e6
    print(f"{total} lines, {size_mb:.1f} MB in {time.monotonic() - started:.1f} s")


def test_a_run_nobody_debugs_looks_less_often_until_its_first_command(path: Path) -> None:
    """A run without --debug (a collection's scenario) is only driven if a viewer pauses
    or aborts it: it looks every IDLE_POLL_SECONDS, and from its first command on as
    often as a debug run, whose feed looks every POLL_SECONDS from the start."""
    lines = Lines()
    assert CommandFeed(path, lines).poll == POLL_SECONDS
    feed = CommandFeed(path, lines, idle_poll=IDLE_POLL_SECONDS)
    assert feed.poll == IDLE_POLL_SECONDS > POLL_SECONDS
    feed.read_new()
    assert feed.poll == IDLE_POLL_SECONDS  # nothing came
    append(path, b'{"id": "p", "cmd": "pause"}\n')
    feed.read_new()
    assert lines.items == [b'{"id": "p", "cmd": "pause"}']
    assert feed.poll == POLL_SECONDS


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")
def test_the_feed_waits_on_a_watch_of_the_file_and_reads_each_write(
    path: Path, feed_of: Callable[..., tuple[PolledFeed, Lines]]
) -> None:
    """Woken by the kernel on each write (no 4 ms polling): it watches the file, not its
    folder, so the run's own writes beside it (steps.jsonl) wake nobody."""
    feed, lines = feed_of()
    feed.wait_polls(2)
    assert feed.watching
    append(path, b'{"id": "w1"}\n')
    assert lines.wait(1) == [b'{"id": "w1"}']
    polls = feed.polls
    for n in range(50):
        append(path.with_name("steps.jsonl"), b'{"kind": "step:ok"}\n' * (n + 1))
    feed.wait_polls(1)  # the fallback look (or a write of this file), not 50 wake-ups
    assert feed.polls - polls < 25
    feed.stop()
    feed._thread.join(timeout=5)
    assert not feed._thread.is_alive()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")
def test_a_file_replaced_under_the_watch_is_watched_again(
    path: Path, feed_of: Callable[..., tuple[PolledFeed, Lines]]
) -> None:
    feed, lines = feed_of()
    append(path, b'{"id": "old"}\n')
    lines.wait(1)
    other = path.with_name("other.jsonl")
    other.write_bytes(b'{"id": "new"}\n')
    os.replace(other, path)
    assert lines.wait(2)[-1] == b'{"id": "new"}'
    for n in range(3):  # the new file's writes reach the feed too
        append(path, b'{"id": "after-%d"}\n' % n)
        assert lines.wait(3 + n)[-1] == b'{"id": "after-%d"}' % n
    assert feed.watching


def test_without_a_watch_the_feed_polls(
    path: Path, feed_of: Callable[..., tuple[PolledFeed, Lines]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where writes cannot be watched (macOS, Windows), every ``poll`` as before."""
    monkeypatch.setattr(FileChanges, "open", classmethod(lambda cls, path: None))
    feed, lines = feed_of()
    feed.wait_polls(2)
    assert not feed.watching
    append(path, b'{"id": "polled"}\n')
    assert lines.wait(1) == [b'{"id": "polled"}']
