"""What a browser pool costs: one collection with local browsers and over ``playwright
run-server`` hosts, same flows, same site, same Chromium, same worker count.

1. ``unotest collection bench --workers N`` with a browser launched by each worker on
   this machine (``executablePath``);
2. the same with ``wsEndpoint`` a list of ``--servers`` ``playwright run-server
   --unsafe`` processes on loopback ports (three hosts, here all on this machine): each
   worker connects to one through Playwright's ``connect``, which launches its browser
   there with the same ``executablePath``.

The flows are ``bench/collection.py``'s 24 (three flows in eight variants). The two run
``--repeat`` times each, interleaved (local, pool, local, pool, ...), after one warm-up
run of each; medians. Printed: wall times, the ratio pool / local (median and per
round: each round runs both back to back, so its own ratio is the least touched by the
machine's drift), the startup (launch to the first ``scenario-started``), the warm
time per scenario, which endpoints the runs used (from their manifests'
``browserEndpoint``), and the machine's load average before and after.

On one machine the pool can only cost: the same browsers, plus a WebSocket hop and a
server process per host. What it buys is browsers on other machines.

    .venv/bin/python bench/pool.py [--workers 3] [--servers 3] [--repeat 3] [--scenarios 24]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench_common import UNOTEST, run_timed, serve, spread
from collection import SITE, collection_events, make_flows, make_project

from runner.browser.launch import resolve_executable

HERE = Path(__file__).resolve().parent


class _Server:
    """``playwright run-server --unsafe`` on a free loopback port, in a session of its own."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [
                *(sys.executable, "-m", "playwright", "run-server", "--unsafe"),
                *("--host", "127.0.0.1", "--port", "0"),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            text=True,
        )
        found = threading.Event()
        self.endpoint = ""

        def read() -> None:
            assert self.process.stdout is not None
            for line in self.process.stdout:
                match = re.search(r"Listening on (ws://\S+)", line)
                if match and not found.is_set():
                    self.endpoint = match.group(1)
                    found.set()

        threading.Thread(target=read, daemon=True).start()
        if not found.wait(30):
            self.stop()
            sys.exit("playwright run-server did not start")

    def stop(self) -> None:
        """Ctrl+C to its group, as a person stops it, then SIGKILL after a grace."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGINT)
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


def _analyse(project: Path, launched_ms: float, wall_s: float, workers: int) -> dict[str, Any]:
    """Startup, warm time per scenario and the endpoints used, from the run directories."""
    runs, _, starts = collection_events(project)
    startup_s = (starts[0]["t"] - launched_ms) / 1000
    endpoints: dict[str, int] = {}
    for event in starts:
        manifest = json.loads((runs / event["scenarioRunId"] / "manifest.json").read_text())
        where = manifest.get("browserEndpoint", "local")
        endpoints[where] = endpoints.get(where, 0) + 1
    return {
        "startup_s": startup_s,
        "warm_ms": (wall_s - startup_s) * 1000 / (len(starts) / workers),
        "endpoints": endpoints,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=24)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--servers", type=int, default=3, help="run-server hosts in the pool")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each, interleaved")
    args = parser.parse_args()
    flows = make_flows(args.scenarios)
    executable = resolve_executable("chromium", None)
    if executable is None:
        sys.exit("the bench sends executablePath to the servers: install a system Chromium")
    load_before = os.getloadavg()
    servers = [_Server() for _ in range(args.servers)]
    try:
        with tempfile.TemporaryDirectory(prefix="unotest-bench-pool-") as tmp:
            base = Path(tmp)
            server, base_url = serve(SITE)
            common = (
                f"baseURL: {base_url}\nheadless: true\ntrace: off\nexecutablePath: {executable}\n"
            )
            pool = "wsEndpoint:\n" + "".join(f"  - {s.endpoint}\n" for s in servers)
            projects = {"local": base / "local", "pool": base / "pool"}
            make_project(projects["local"], common, flows)
            make_project(projects["pool"], common + pool, flows)
            command = [UNOTEST, "collection", "bench", "--workers", str(args.workers)]
            for project in projects.values():  # warm-up: file caches, each server's driver
                run_timed(command, project)
            times: dict[str, list[float]] = {name: [] for name in projects}
            stats: dict[str, dict[str, Any]] = {}
            for _ in range(args.repeat):
                for name, project in projects.items():
                    shutil.rmtree(project / "unotest" / ".runs", ignore_errors=True)
                    launched_ms = time.time() * 1000
                    elapsed, _ = run_timed(command, project)
                    times[name].append(elapsed)
                    if name not in stats or elapsed <= min(times[name]):
                        stats[name] = _analyse(project, launched_ms, elapsed, args.workers)
            server.shutdown()
    finally:
        for running in servers:
            running.stop()
    load_after = os.getloadavg()
    _report(args, executable, times, stats, load_before, load_after)


def _report(
    args: argparse.Namespace,
    executable: str,
    times: dict[str, list[float]],
    stats: dict[str, dict[str, Any]],
    load_before: tuple[float, float, float],
    load_after: tuple[float, float, float],
) -> None:
    local, pool = statistics.median(times["local"]), statistics.median(times["pool"])
    print(
        f"{args.scenarios} scenarios, --workers {args.workers}, Chromium {executable}; "
        f"pool: {args.servers} playwright run-server on loopback"
    )
    print(f"medians of {args.repeat} runs each, interleaved")
    print(f"local browsers:  {local:7.2f} s{spread(times['local'])}")
    print(f"browser pool:    {pool:7.2f} s{spread(times['pool'])}")
    paired = [p / loc for loc, p in zip(times["local"], times["pool"], strict=True)]
    print(
        f"ratio pool / local: {pool / local:5.2f}x; per round: median "
        f"{statistics.median(paired):.2f}x, {min(paired):.2f}x to {max(paired):.2f}x"
    )
    for name in ("local", "pool"):
        data = stats[name]
        used = ", ".join(f"{where} ×{n}" for where, n in sorted(data["endpoints"].items()))
        print(
            f"{name}: startup (launch to first scenario) {data['startup_s']:.2f} s, "
            f"warm per scenario {data['warm_ms']:.0f} ms; runs on: {used}"
        )
    print(
        "load average (1, 5, 15 min): before "
        + ", ".join(f"{x:.2f}" for x in load_before)
        + "; after "
        + ", ".join(f"{x:.2f}" for x in load_after)
        + f" ({os.cpu_count()} cores)"
    )


if __name__ == "__main__":
    main()
