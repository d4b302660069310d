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
import statistics
import sys
import time
from typing import Any

import scale_scenarios
from bench_common import watch_daemon

IDLE_MS = 100


def watch_part(args: argparse.Namespace) -> None:
    print(f"load before: {scale_scenarios.load()}")
    with (
        scale_scenarios.project(args) as root,
        watch_daemon(root, "--idle-ms", str(IDLE_MS)) as daemon,
    ):
        print(f"daemon started (the first load, cold): {daemon.started_s:.1f} s")
        one = root / "unotest" / "e2e" / f"{scale_scenarios.scenario_name(42, 100)}.test.js"
        times = []
        for number in range(args.saves):
            t0 = time.perf_counter()
            one.write_text(scale_scenarios.scenario_text(42, f"  // save {number}\n"))
            batch, t1 = daemon.until("batch.started")
            assert len(batch["plan"][0]["scenarios"]) == 1, batch["plan"]
            times.append(t1 - t0 - IDLE_MS / 1000)
            daemon.until("batch.finished")
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
        batch, t1 = daemon.until("batch.started")
        selected = len(batch["plan"][0]["scenarios"])
        print(
            f"save of the helper every scenario calls → batch.started: "
            f"{(t1 - t0) * 1000 - IDLE_MS:.0f} ms ({selected:,} selected)"
        )
    print(f"load after: {scale_scenarios.load()}")


def add_parser(parts: Any) -> None:
    """``watch`` as a subcommand of ``bench/scale.py``."""
    summary = "10,000 scenarios: a save → batch.started"
    sub = scale_scenarios.project_subcommand(parts, "watch", summary, watch_part)
    sub.add_argument("--saves", type=int, default=5, help="saves of one scenario")


if __name__ == "__main__":
    sys.exit("run it as: .venv/bin/python bench/scale.py watch")
