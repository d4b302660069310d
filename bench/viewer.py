"""The viewer's live messages: how fast a change reaches a ``/ws`` client, and what tailing
a long run costs the server.

The server (``/ws`` of :mod:`unotest.viewer.routes_ws` on uvicorn, its watcher on a
generated project) runs in a child process of this script, so its memory is its own;
a ``websockets`` client here measures:

1. *save → fs:helpers-changed*: a helper file rewritten, until its message arrives;
2. *append → fs:run-step*: one line appended to a live run's ``steps.jsonl``, until its
   message arrives;
3. *memory while tailing*: the server's RSS before, at its peak and after 100,000
   ``steps.jsonl`` lines are appended (in bursts) and all their messages received.

Prints p50/p99 (target: p50 ≤ 50 ms) and the ratios; asserts nothing.

    .venv/bin/python bench/viewer.py [--saves 40] [--appends 100] [--lines 100000]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

from bench_common import rss_kib, stop
from websockets.asyncio.client import ClientConnection, connect

TARGET_P50_MS = 50.0
GAP_S = 0.25
"""Between two measured changes: longer than the watcher's debounce, so each is alone."""


def serve(root: Path, port: int) -> None:
    """The child: ``/ws`` and its watcher on ``root`` until killed."""
    import uvicorn
    from starlette.applications import Starlette

    from unotest.viewer import routes_ws
    from unotest.viewer.context import ViewerContext

    ctx = ViewerContext(root=root, token="bench")

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        await routes_ws.startup(ctx)
        try:
            yield
        finally:
            await routes_ws.shutdown(ctx)

    app = Starlette(routes=routes_ws.routes(ctx), lifespan=lifespan)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def make_project(root: Path) -> Path:
    e2e = root / "unotest" / "e2e"
    (e2e / "_helpers").mkdir(parents=True)
    (e2e / "smoke.test.js").write_text("// id-smoke\n// Smoke\n// #000000\nfunction t() {\n}\n")
    (e2e / "_helpers" / "login.js").write_text("function login() {\n}\n")
    return root


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def wait_for(client: ClientConnection, kind: str) -> dict[str, object]:
    while True:
        message: dict[str, object] = json.loads(await client.recv())
        if message["kind"] == kind:
            return message


async def save_latencies(client: ClientConnection, root: Path, count: int) -> list[float]:
    helper = root / "unotest" / "e2e" / "_helpers" / "login.js"
    times = []
    for i in range(count):
        await asyncio.sleep(GAP_S)
        start = time.perf_counter()
        helper.write_text(f"function login() {{\n  log({i})\n}}\n")
        await asyncio.wait_for(wait_for(client, "fs:helpers-changed"), 10)
        times.append((time.perf_counter() - start) * 1000)
    return times


def new_run(root: Path, run_id: str) -> Path:
    run_dir = root / "unotest" / ".runs" / run_id
    run_dir.mkdir(parents=True)
    manifest = {"schemaVersion": 1, "kind": "scenario", "ref": "smoke", "adapter": "@unotest/web"}
    manifest |= {"startedAt": int(time.time() * 1000), "pid": os.getpid()}
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    return run_dir


def step_line(i: int) -> bytes:
    event = {"kind": "step:started", "line": i, "col": 2, "text": f"click('#b{i}')", "t": 1}
    return json.dumps(event).encode() + b"\n"


def append(path: Path, data: bytes) -> None:
    with open(path, "ab") as handle:
        handle.write(data)


async def append_latencies(client: ClientConnection, root: Path, count: int) -> list[float]:
    steps = new_run(root, "bench-latency") / "steps.jsonl"
    await asyncio.wait_for(wait_for(client, "fs:run-started"), 10)
    times = []
    for i in range(count):
        await asyncio.sleep(GAP_S / 5)
        start = time.perf_counter()
        append(steps, step_line(i))
        await asyncio.wait_for(wait_for(client, "fs:run-step"), 10)
        times.append((time.perf_counter() - start) * 1000)
    return times


async def tail_memory(
    client: ClientConnection, root: Path, pid: int, lines: int
) -> tuple[int, int, int, int, str]:
    """(RSS before, peak, after in KB; the file's size in bytes; how it ended)."""
    steps = new_run(root, "bench-memory") / "steps.jsonl"
    await asyncio.wait_for(wait_for(client, "fs:run-started"), 10)
    before = peak = rss_kib(pid)
    received, written, burst = 0, 0, 1000
    ended = "every line received"
    try:
        while received < lines:
            if written < lines and written - received < 5 * burst:
                append(steps, b"".join(step_line(i) for i in range(written, written + burst)))
                written += burst
            with contextlib.suppress(TimeoutError):
                while True:
                    await asyncio.wait_for(client.recv(), 0.01)
                    received += 1
            peak = max(peak, rss_kib(pid))
    except Exception as exc:  # the server dropped us: the numbers so far still count
        ended = f"ended after {received} messages: {exc}"
    return before, peak, rss_kib(pid), steps.stat().st_size, ended


def report(name: str, times: list[float]) -> None:
    p50, p99 = percentile(times, 0.5), percentile(times, 0.99)
    print(
        f"{name:34} n={len(times):4}  p50 {p50:7.1f} ms  p99 {p99:7.1f} ms  "
        f"p50/target {p50 / TARGET_P50_MS:5.2f}"
    )


async def measure(args: argparse.Namespace, root: Path, port: int, pid: int) -> None:
    for _ in range(200):
        try:
            client = await connect(f"ws://127.0.0.1:{port}/ws", max_size=None)
            break
        except OSError:
            await asyncio.sleep(0.05)
    else:
        raise SystemExit("the server never listened")
    async with client:
        report("save -> fs:helpers-changed", await save_latencies(client, root, args.saves))
        report("append -> fs:run-step", await append_latencies(client, root, args.appends))
        before, peak, after, size, ended = await tail_memory(client, root, pid, args.lines)
    print(
        f"server RSS tailing {args.lines} lines ({size / 1e6:.1f} MB): before {before / 1024:.1f}"
        f" MB, peak {peak / 1024:.1f} MB, after {after / 1024:.1f} MB; "
        f"peak growth / file size {(peak - before) * 1024 / size:.2f} ({ended})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--saves", type=int, default=40)
    parser.add_argument("--appends", type=int, default=100)
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--serve", nargs=2, metavar=("ROOT", "PORT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(Path(args.serve[0]), int(args.serve[1]))
        return
    with tempfile.TemporaryDirectory(prefix="unotest-bench-viewer-") as tmp:
        root = make_project(Path(tmp))
        port = free_port()
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
        child = subprocess.Popen(
            [sys.executable, __file__, "--serve", str(root), str(port)], env=env
        )
        try:
            asyncio.run(measure(args, root, port, child.pid))
        finally:
            stop(child)


if __name__ == "__main__":
    main()
