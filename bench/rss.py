"""Runner memory over a long scenario: is the RSS of ``unotest e2e`` flat?

Runs one scenario of about ``--steps`` steps (1,000 by default: mostly pure steps, a
``let`` and a ``log`` per loop iteration, plus a browser ``fill`` / ``expect_text``
every 25 iterations against a page served on 127.0.0.1 by this script) through
``unotest e2e --debug`` as a subprocess. Breakpoints inside an ``if`` pause the run
after about 10 %, 50 % and 100 % of its steps; at each pause the script reads the
runner's VmRSS from ``/proc/<pid>/status`` (the Python process only: Chromium and the
Playwright driver are separate processes) and the size of steps.jsonl, then sends
``continue`` through commands.jsonl. It prints the three readings and the ratio of the
last to the first: a runner that kept something per step would show it there.

    .venv/bin/python bench/rss.py [--steps 1000]

Linux only (``/proc``). Nothing is asserted: the figures are for docs/reliability.md.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from bench_common import (
    UNOTEST,
    append_command,
    clean_env,
    read_events,
    rss_kib,
    run_dir_of,
    serve_page,
    stop,
    write_project,
)

PAGE = """<!doctype html>
<html><head><title>RSS</title><link rel="icon" href="data:,"></head><body>
<h1>RSS</h1><label>Item <input id="item"></label><p id="out"></p>
<script>
  document.getElementById("item").addEventListener("input", (e) => {
    document.getElementById("out").textContent = "got " + e.target.value;
  });
</script></body></html>
"""

STEPS_PER_ITERATION = 5  # the for binding, let, log, two ifs (the browser steps aside)
FIXED = 4  # goto, let total, the for's last step, log


def scenario(iterations: int, checkpoints: list[int]) -> tuple[str, int]:
    """The scenario source and the line of the breakpoint (inside the checkpoint ``if``)."""
    condition = " || ".join(f"i == {c}" for c in checkpoints)
    source = f"""\
// id-bench-rss
// A long run: pure steps with a few browser steps
// #475569
function test_rss() {{
  goto("/index.html")
  let total = 0
  for (const i of range({iterations})) {{
    total = total + i
    log("iteration", i, total)
    if (i % 25 == 0) {{
      fill(css("#item"), "item " + i)
      expect_text(css("#out"), "got item " + i)
    }}
    if ({condition}) {{
      log("checkpoint", i)
    }}
  }}
  log("done", total)
}}
"""
    line = source.splitlines().index('      log("checkpoint", i)') + 1
    return source, line


def _events(run_dir: Path) -> list[dict[str, object]]:
    return read_events(run_dir / "steps.jsonl")


def _run_dir(project: Path, pid: int, proc: subprocess.Popen[bytes]) -> Path:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = run_dir_of(project / "unotest" / ".runs", pid)
        if found is not None:
            return found
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    sys.exit("benchmark failed: the run never created its run directory")


def _wait_paused(run_dir: Path, seen: int, proc: subprocess.Popen[bytes]) -> int:
    """Index of the next ``paused`` event after ``seen`` pauses."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        events = _events(run_dir)
        pauses = [i for i, e in enumerate(events) if e["kind"] == "paused"]
        if len(pauses) > seen:
            return pauses[seen]
        if proc.poll() is not None:
            break
        time.sleep(0.02)
    sys.exit("benchmark failed: the run did not pause where expected")


def _continue(run_dir: Path) -> None:
    append_command(run_dir / "commands.jsonl", {"id": uuid.uuid4().hex[:12], "cmd": "continue"})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    args = parser.parse_args()
    iterations = max(20, (args.steps - FIXED) // STEPS_PER_ITERATION)
    # The iteration where about 10 %, 50 % and 100 % of the steps have run.
    checkpoints = [max(1, iterations // 10), iterations // 2, iterations - 1]
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        server, base_url = serve_page(base, PAGE)
        source, line = scenario(iterations, checkpoints)
        config = f"baseURL: {base_url}\ntrace: off\n"
        project = write_project(base / "project", config, {"rss": source})
        command = [UNOTEST, "e2e", "rss", "--debug", "--break", str(line)]
        proc = subprocess.Popen(
            command,
            cwd=project,
            env=clean_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        readings: list[tuple[int, int, int]] = []  # (steps, RSS KiB, steps.jsonl bytes)
        try:
            run_dir = _run_dir(project, proc.pid, proc)
            for seen in range(len(checkpoints)):
                at = _wait_paused(run_dir, seen, proc)
                events = _events(run_dir)[:at]
                steps = sum(e["kind"] == "step:started" for e in events)
                size = (run_dir / "steps.jsonl").stat().st_size
                readings.append((steps, rss_kib(proc.pid), size))
                _continue(run_dir)
            _, stderr = proc.communicate(timeout=120)
            total = sum(e["kind"] == "step:started" for e in _events(run_dir))
        finally:
            stop(proc, grace=20)
            server.shutdown()
        if proc.returncode != 0:
            sys.exit(f"benchmark failed ({proc.returncode}): {stderr.decode(errors='replace')}")
    print(f"scenario: {total} steps ({iterations} iterations, a browser step every 25)")
    print(f"{'after steps':>12}  {'runner RSS':>12}  {'steps.jsonl':>12}  {'bytes/step':>10}")
    for steps, rss, size in readings:
        print(f"{steps:>12}  {rss / 1024:>9.1f} MiB  {size:>12,}  {size / steps:>10.0f}")
    first, last = readings[0][1], readings[-1][1]
    print(f"RSS ratio last / first: {last / first:.3f}  ({(last - first) / 1024:+.1f} MiB)")


if __name__ == "__main__":
    main()
