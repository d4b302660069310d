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
import functools
import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

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


def _serve(directory: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


def _events(run_dir: Path) -> list[dict[str, object]]:
    data = (run_dir / "steps.jsonl").read_bytes()
    return [json.loads(line) for line in data.split(b"\n")[:-1]]


def _run_dir(project: Path, pid: int, proc: subprocess.Popen[bytes]) -> Path:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for manifest in (project / "unotest" / ".runs").glob("*/manifest.json"):
            try:
                if json.loads(manifest.read_text())["pid"] == pid:
                    return manifest.parent
            except (OSError, ValueError):
                continue
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
    line = json.dumps({"id": uuid.uuid4().hex[:12], "cmd": "continue"}).encode() + b"\n"
    fd = os.open(run_dir / "commands.jsonl", os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    args = parser.parse_args()
    iterations = max(20, (args.steps - FIXED) // STEPS_PER_ITERATION)
    # The iteration where about 10 %, 50 % and 100 % of the steps have run.
    checkpoints = [max(1, iterations // 10), iterations // 2, iterations - 1]
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        site = base / "site"
        site.mkdir()
        (site / "index.html").write_text(PAGE)
        server, base_url = _serve(site)
        project = base / "project"
        (project / "unotest" / "e2e").mkdir(parents=True)
        source, line = scenario(iterations, checkpoints)
        (project / "unotest" / "e2e" / "rss.test.js").write_text(source)
        (project / "unotest.config.yaml").write_text(f"baseURL: {base_url}\ntrace: off\n")
        command = [str(Path(sys.executable).with_name("unotest")), "e2e", "rss", "--debug"]
        command += ["--break", str(line)]
        env = {k: v for k, v in os.environ.items() if not k.startswith("UNOTEST_")}
        proc = subprocess.Popen(
            command,
            cwd=project,
            env=env,
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
                readings.append((steps, _rss_kib(proc.pid), size))
                _continue(run_dir)
            _, stderr = proc.communicate(timeout=120)
            total = sum(e["kind"] == "step:started" for e in _events(run_dir))
        finally:
            if proc.poll() is None:
                proc.terminate()
                proc.wait(timeout=20)
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
