"""The watch daemon's bus, socket, snapshot state, debounce and discovery file.

The socket is served for real on 127.0.0.1 (port 0) and read by a real TCP client;
the discovery file's states are made with real processes (this one, a finished one).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from runner.watch.batches import Debouncer
from runner.watch.bus import EventBus
from runner.watch.daemon_events import Trigger, batch_started, daemon_started, watch_change
from runner.watch.discovery import discovery_path, read_discovery, write_discovery
from runner.watch.selection import Change
from runner.watch.socket_channel import SocketChannel
from runner.watch.state import DaemonState


async def _read_event(reader: asyncio.StreamReader) -> dict[str, Any]:
    line = await asyncio.wait_for(reader.readline(), 10)
    assert line.endswith(b"\n")
    event = json.loads(line)
    assert isinstance(event, dict)
    return event


def test_every_event_gets_the_next_seq_and_a_timestamp() -> None:
    bus = EventBus(clock=lambda: 1730000000.5)
    seen: list[dict[str, Any]] = []
    bus.listen(seen.append)
    bus.publish(watch_change("/p/a.js", "change"))
    bus.publish(watch_change("/p/b.js", "add"))
    assert [(e["type"], e["seq"], e["timestamp"]) for e in seen] == [
        ("watch.change", 1, 1730000000500),
        ("watch.change", 2, 1730000000500),
    ]
    assert list(seen[0])[:3] == ["type", "seq", "timestamp"]


def test_the_socket_sends_the_snapshot_first_then_the_same_events() -> None:
    async def scenario() -> None:
        bus = EventBus()
        state = DaemonState()
        bus.listen(state)
        channel = SocketChannel(bus, state.snapshot_state)
        host, port = await channel.start("127.0.0.1", 0)
        assert host == "127.0.0.1" and port > 0
        bus.publish(daemon_started(1, "/p", "0.1.0", {"host": host, "port": port}, None, 3))
        bus.publish(batch_started("batch-1", ["/p/a.js"], "idle", [], []))
        reader, writer = await asyncio.open_connection(host, port)
        first = await _read_event(reader)
        assert first["type"] == "snapshot"
        assert first["seq"] == 2  # the last event it already includes
        assert first["state"]["daemon"]["indexedFiles"] == 3
        assert first["state"]["running"] is True
        assert first["state"]["lastBatch"]["batchId"] == "batch-1"
        published = bus.publish(watch_change("/p/b.js", "unlink"))
        assert await _read_event(reader) == published
        writer.close()
        await channel.close()

    asyncio.run(scenario())


def test_a_slow_client_is_dropped_and_never_blocks_the_bus() -> None:
    async def scenario() -> None:
        bus = EventBus()
        channel = SocketChannel(bus, DaemonState().snapshot_state)
        host, port = await channel.start("127.0.0.1", 0)
        reader, writer = await asyncio.open_connection(host, port)
        assert (await _read_event(reader))["type"] == "snapshot"
        (subscription,) = bus.subscriptions
        # The client reads nothing while the bus publishes more than its queue and the
        # socket buffers hold: publish returns every time, and the client is dropped.
        big = "x" * 20000
        for _ in range(subscription.queue.maxsize + 200):
            bus.publish({"type": "test.noise", "pad": big})
        assert bus.subscriptions == []
        assert subscription.dropped is not None and "behind" in subscription.dropped
        lines = []
        while line := await asyncio.wait_for(reader.readline(), 10):
            lines.append(json.loads(line))
        assert lines[-1]["type"] == "error" and lines[-1]["scope"] == "socket"
        assert lines[-1]["degradedTo"]
        writer.close()
        await channel.close()

    asyncio.run(scenario())


def _debounced(feed: list[float], idle: float, most: float) -> list[tuple[list[str], Trigger]]:
    """Changes ``a0, a1, ...`` fed after the given pauses (seconds); the batches fired."""

    async def scenario() -> list[tuple[list[str], Trigger]]:
        fired: list[tuple[list[str], Trigger]] = []
        done = asyncio.Event()

        def fire(changes: list[Change], trigger: Trigger) -> None:
            fired.append(([c.rel for c in changes], trigger))
            done.set()

        debouncer = Debouncer(idle, most, fire)
        for number, pause in enumerate(feed):
            await asyncio.sleep(pause)
            debouncer.add([Change(f"a{number}", "change"), Change("same", "change")])
        await asyncio.wait_for(done.wait(), 30)
        await asyncio.sleep(min(idle, most) * 2)  # time for a wrong second batch
        debouncer.cancel()
        return fired

    return asyncio.run(scenario())


def test_a_quiet_pause_closes_the_batch_with_trigger_idle() -> None:
    fired = _debounced([0, 0.01], idle=0.3, most=30)
    assert fired == [(["a0", "a1", "same"], "idle")]


def test_a_busy_disk_closes_the_batch_at_the_maximum_window() -> None:
    # A change every 20 ms, for longer than the maximum window: the idle window of
    # 10 s never passes quietly, so only the maximum window can close the batch.
    fired = _debounced([0.02] * 40, idle=10, most=0.3)
    assert fired[0][1] == "maxWindow"
    assert fired[0][0][0] == "a0"


# --- discovery -------------------------------------------------------------------------


def test_no_file_is_not_running(tmp_path: Path) -> None:
    assert read_discovery(tmp_path).status == "not-running"


def test_this_process_is_running_and_its_file_says_where(tmp_path: Path) -> None:
    info = write_discovery(tmp_path, "127.0.0.1", 4321, "0.1.0", 1, 1730000000000)
    found = read_discovery(tmp_path)
    assert found.status == "running"
    assert found.info == info
    data = json.loads(discovery_path(tmp_path).read_text())
    for key in ("pid", "host", "port", "root", "version", "protocolVersion", "startedAt"):
        assert key in data
    assert data["pid"] == os.getpid() and data["root"] == tmp_path.as_posix()


def test_a_gone_process_or_a_reused_pid_is_stale(tmp_path: Path) -> None:
    write_discovery(tmp_path, "127.0.0.1", 4321, "0.1.0", 1, 1)
    path = discovery_path(tmp_path)
    data = json.loads(path.read_text())
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    data["pid"] = int(done.stdout)
    path.write_text(json.dumps(data))
    gone = read_discovery(tmp_path)
    assert gone.status == "stale" and gone.reason is not None and "gone" in gone.reason
    if "pidStartTime" not in data:
        pytest.skip("no /proc: a reused pid cannot be told from the daemon")
    data["pid"] = os.getpid()
    data["pidStartTime"] += 1  # this pid, but not the process that wrote the file
    path.write_text(json.dumps(data))
    reused = read_discovery(tmp_path)
    assert reused.status == "stale" and reused.reason is not None and "reused" in reused.reason


@pytest.mark.parametrize("text", ["{not json", '{"pid": "12"}', "[]", '{"pid": 1}'])
def test_a_file_that_is_not_a_discovery_file_is_unreadable(tmp_path: Path, text: str) -> None:
    path = discovery_path(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(text)
    found = read_discovery(tmp_path)
    assert found.status == "unreadable" and found.reason


def test_readable_lines_show_the_chain_the_runs_and_what_took_over() -> None:
    import io

    from runner.watch.lines import LinePrinter

    out = io.StringIO()
    printer = LinePrinter(Path("/p"), out)
    bus = EventBus()
    bus.listen(printer)
    reason = {
        "kind": "importer",
        "changedFile": "/p/unotest/e2e/_helpers/auth.js",
        "sourceFile": "/p/unotest/e2e/login.test.js",
        "depth": 1,
        "chain": ["/p/unotest/e2e/_helpers/auth.js", "/p/unotest/e2e/login.test.js"],
        "via": ["sign_in", "test_it"],
    }
    plan = [{"runnerKey": "unotest", "adapterId": "e2e", "scenarios": ["login"],
             "testFiles": ["/p/unotest/e2e/login.test.js"],
             "reasons": {"/p/unotest/e2e/login.test.js": [reason]}}]
    bus.publish(batch_started("batch-1", ["/p/unotest/e2e/_helpers/auth.js"], "idle", plan,
                              [{"file": "/p/x.yaml", "reason": "a collection file"}]))
    bus.publish({"type": "some.future.event"})
    bus.publish({"type": "error", "scope": "worker:0", "message": "browser gone",
                 "detail": None, "degradedTo": "a new browser"})
    text = out.getvalue()
    assert "batch-1 (idle): 1 scenario(s)" in text
    assert (
        "login  ← unotest/e2e/_helpers/auth.js → unotest/e2e/login.test.js (sign_in, test_it)"
        in text
    )
    assert "nothing for x.yaml: a collection file" in text
    assert "! worker:0: browser gone; a new browser" in text
    assert "future" not in text
