"""``bench/scale.py watch``: the watch daemon on a project of 10,000 scenarios.

The project is ``scale_scenarios``'s (each scenario calls the helper ``open_form``);
its ``baseURL`` answers nothing, so the runs fail fast: what is timed is the daemon's
answer to a save, not the flows. ``unotest watch --json --idle-ms 100`` starts on it;
then, from just before the write, until its ``batch.started`` on the daemon's socket:

- a save of one scenario (``--saves`` times, each batch let finish): the project
  reloaded through the daemon's ``LoadMemo`` (only the saved file read and parsed), the
  dependency graph, the selection;
- a save of the helper every scenario calls: the whole project selected.

Printed with the idle window (``--idle-ms``) subtracted, as the target (≤ 250 ms) is
what the daemon adds; the daemon's own start (the first load, cold) too.

    .venv/bin/python bench/scale.py watch [--count 10000] [--saves 5] [--dir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from typing import IO, Any

import scale_scenarios

IDLE_MS = 100


def _until(events: IO[bytes], kind: str) -> tuple[dict[str, Any], float]:
    while True:
        line = events.readline()
        if not line:
            raise SystemExit(f"the daemon closed its socket before {kind}")
        event = json.loads(line)
        if event["type"] == kind:
            return event, time.perf_counter()
        if event["type"] == "error":
            print(f"  (error: {json.dumps(event)[:300]})")


def watch_part(args: argparse.Namespace) -> None:
    print(f"load before: {scale_scenarios.load()}")
    with scale_scenarios.project(args) as root:
        env = {**os.environ, "PYTHONSAFEPATH": "1"}
        began = time.perf_counter()
        daemon = subprocess.Popen(
            [sys.executable, "-m", "unotest", "watch", "--json", "--idle-ms", str(IDLE_MS)],
            cwd=root,
            stdout=subprocess.PIPE,
            env=env,
        )
        try:
            assert daemon.stdout is not None
            started = json.loads(daemon.stdout.readline())
            assert started["type"] == "daemon.started", started
            print(f"daemon started (the first load, cold): {time.perf_counter() - began:.1f} s")
            # --json prints every event too: a pipe left unread would stop the daemon
            threading.Thread(target=daemon.stdout.read, daemon=True).start()
            port = started["server"]["port"]
            events = socket.create_connection(("127.0.0.1", port)).makefile("rb")
            json.loads(events.readline())  # the snapshot
            one = root / "unotest" / "e2e" / f"{scale_scenarios.scenario_name(42, 100)}.test.js"
            times = []
            for number in range(args.saves):
                t0 = time.perf_counter()
                one.write_text(scale_scenarios.scenario_text(42, f"  // save {number}\n"))
                batch, t1 = _until(events, "batch.started")
                assert len(batch["plan"][0]["scenarios"]) == 1, batch["plan"]
                times.append(t1 - t0 - IDLE_MS / 1000)
                _until(events, "batch.finished")
            print(
                f"save of one scenario → batch.started, minus the idle window: "
                f"p50 {statistics.median(times) * 1000:.0f} ms "
                f"(min {min(times) * 1000:.0f}, {args.saves} saves)"
            )
            helper = root / "unotest" / "e2e" / "_helpers" / "nav.js"
            t0 = time.perf_counter()
            # A change to the function itself (a comment alone changes no function: the
            # daemon would select only what failed last)
            helper.write_text(helper.read_text().replace('"Bench shop"', '"Bench shop!"'))
            batch, t1 = _until(events, "batch.started")
            selected = len(batch["plan"][0]["scenarios"])
            print(
                f"save of the helper every scenario calls → batch.started: "
                f"{(t1 - t0) * 1000 - IDLE_MS:.0f} ms ({selected:,} selected)"
            )
        finally:
            daemon.send_signal(2)
            try:
                daemon.wait(60)
            except subprocess.TimeoutExpired:
                daemon.kill()
    print(f"load after: {scale_scenarios.load()}")


def add_parser(parts: Any) -> None:
    """``watch`` as a subcommand of ``bench/scale.py``."""
    sub = parts.add_parser("watch", help="10,000 scenarios: a save → batch.started")
    sub.add_argument("--count", type=int, default=10_000, help="scenarios")
    sub.add_argument("--per-folder", type=int, default=100, help="scenarios per folder")
    sub.add_argument("--saves", type=int, default=5, help="saves of one scenario")
    sub.add_argument("--dir", help="generate here (kept, reused when it holds --count)")
    sub.set_defaults(run=watch_part)


if __name__ == "__main__":
    sys.exit("run it as: .venv/bin/python bench/scale.py watch")
