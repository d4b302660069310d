"""``restart`` against a cold ``unotest e2e`` of the same scenario, as a ratio.

Runs the real product on a throw-away project whose scenario opens one page served by
this script on 127.0.0.1, clicks, checks and loops a little, then reaches its last
statement, where a breakpoint (``--break``) holds it. Both paths are timed to the same
point, the ``paused`` event at that last statement:

* **cold**: from just before spawning ``unotest e2e bench --debug --break L:C`` (the
  console script next to this Python) to its pause: Python start-up and imports, the
  project index, Playwright's driver, Chromium, the context, the scenario;
* **restart**: from the append of ``{"cmd": "restart"}`` to the paused run's
  commands.jsonl (one ``os.write`` on an ``O_APPEND`` descriptor, as ``unotest dbg``
  does) to the new run's pause at the same breakpoint (kept across the restart): the
  old run's end, the files read and parsed again, a fresh context of the same browser
  (a debug run opens it ahead, so its renderer is already up), the scenario.

Each is measured ``--rounds`` times (cold runs one after the other, restarts chained in
one process), the medians compared; issue 16 targets restart ≤ 0.3 × cold. The last
line is that ratio; the one before it compares the start-up alone (up to the first
statement's ``step:started``: what a restart saves), since the scenario's own time is
in both and no restart makes it shorter (on a loaded machine it dominates).

    .venv/bin/python bench/restart.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_common import (
    UNOTEST,
    append_command,
    read_events,
    run_dir_of,
    serve_page,
    write_project,
)

PAGE = """<!doctype html><html><head><title>Restart</title></head><body>
<button id="go" onclick="document.getElementById('out').textContent='done'">Go</button>
<p id="out"></p></body></html>"""
SCENARIO = """\
// id-bench-restart
// Started again and again
// #0f766e
function test_restart() {
  goto("/index.html")
  click(css("#go"))
  expect_text(css("#out"), "done")
  let x = 0
  for (const i of range(5)) {
    x += i
  }
  let last = x
}
"""
LAST = "12:2"
TARGET = 0.3
POLL = 0.001
TIMEOUT = 90.0


def _events(run_dir: Path) -> list[dict[str, Any]]:
    return read_events(run_dir / "steps.jsonl")


def _wait(what: str, process: subprocess.Popen[bytes], found: Any) -> Any:
    """Poll ``found()`` until it answers something; exit when the runner ends first."""
    deadline = time.monotonic() + TIMEOUT
    while True:
        value = found()
        if value is not None:
            return value
        if process.poll() is not None:
            sys.exit(f"the runner ended (exit {process.returncode}) waiting for {what}")
        if time.monotonic() > deadline:
            sys.exit(f"no {what} within {TIMEOUT:g} s")
        time.sleep(POLL)


def _paused_at_last(run_dir: Path) -> bool | None:
    line, col = (int(part) for part in LAST.split(":"))
    paused = any(
        e.get("kind") == "paused" and (e.get("line"), e.get("col")) == (line, col)
        for e in _events(run_dir)
    )
    return True if paused else None


def _answer(run_dir: Path, ident: str) -> dict[str, Any] | None:
    """The restart's ``command:result`` (or its rejection), once written."""
    answers = ("command:result", "command:rejected")
    return next(
        (e for e in _events(run_dir) if e.get("id") == ident and e.get("kind") in answers), None
    )


def _first_step_ms(run_dir: Path) -> float:
    """When the run's first statement started (epoch ms, the event's ``t``)."""
    return float(next(e["t"] for e in _events(run_dir) if e.get("kind") == "step:started"))


def _append(run_dir: Path, command: dict[str, str]) -> tuple[float, float]:
    """``append_command`` to the run's commands.jsonl: perf_counter and epoch ms just
    before the write."""
    return append_command(run_dir / "commands.jsonl", command)


def _start(project: Path, log: Path) -> tuple[subprocess.Popen[bytes], float, float]:
    with open(log, "ab") as out:
        started, wall = time.perf_counter(), time.time() * 1000
        process = subprocess.Popen(
            [UNOTEST, "e2e", "bench", "--debug", "--break", LAST],
            cwd=project,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    return process, started, wall


def _end(process: subprocess.Popen[bytes], run_dir: Path | None) -> None:
    """Abort the paused run and wait for the runner; terminate it if it does not end."""
    if run_dir is not None and process.poll() is None:
        _append(run_dir, {"id": f"bench-abort-{time.monotonic_ns()}", "cmd": "abort"})
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.terminate()
        process.wait(timeout=10)


Timing = tuple[float, float]
"""(seconds to the pause at the last statement, seconds to the first statement)."""


def _to_pause(
    what: str, process: subprocess.Popen[bytes], run_dir: Path, started: float, wall: float
) -> Timing:
    """Wait for ``run_dir``'s pause at the last statement: the seconds to it since
    ``started`` (perf_counter), and to its first statement since ``wall`` (epoch ms)."""
    _wait(what, process, lambda: _paused_at_last(run_dir))
    total = time.perf_counter() - started
    return total, (_first_step_ms(run_dir) - wall) / 1000


def _cold(project: Path, rounds: int, log: Path) -> list[Timing]:
    runs = project / "unotest" / ".runs"
    times = []
    for _ in range(rounds):
        process, started, wall = _start(project, log)
        run_dir = None
        try:
            run_dir = _wait("a run directory", process, lambda p=process: run_dir_of(runs, p.pid))
            times.append(
                _to_pause("the pause at the last statement", process, run_dir, started, wall)
            )
        finally:
            _end(process, run_dir)
    return times


def _restarts(project: Path, rounds: int, log: Path) -> list[Timing]:
    runs = project / "unotest" / ".runs"
    process, _, _ = _start(project, log)
    run_dir = None
    times = []
    try:
        run_dir = _wait("a run directory", process, lambda: run_dir_of(runs, process.pid))
        _wait("the first pause", process, lambda: _paused_at_last(run_dir))
        for n in range(rounds):
            ident = f"bench-restart-{n}"
            sent, wall = _append(run_dir, {"id": ident, "cmd": "restart"})
            result = _wait(
                f"the answer to {ident}", process, lambda d=run_dir, i=ident: _answer(d, i)
            )
            if result.get("ok") is not True:
                sys.exit(f"restart refused: {result.get('error') or result.get('reason')}")
            run_dir = runs / result["value"]
            times.append(_to_pause("the new run's pause", process, run_dir, sent, wall))
    finally:
        _end(process, run_dir)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="cold runs and restarts each")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="unotest-bench-") as tmp:
        base = Path(tmp)
        server, base_url = serve_page(base, PAGE)
        config = f"baseURL: {base_url}\nheadless: true\ntrace: off\n"
        project = write_project(base / "project", config, {"bench": SCENARIO})
        log = base / "runner.log"
        try:
            cold = _cold(project, args.rounds, log)
            restart = _restarts(project, args.rounds, log)
        except SystemExit:
            print(log.read_text(errors="replace")[-4000:], file=sys.stderr)
            raise
        finally:
            server.shutdown()
    cold_ms = statistics.median(t for t, _ in cold) * 1000
    restart_ms = statistics.median(t for t, _ in restart) * 1000
    ratio = restart_ms / cold_ms
    print(f"cold unotest e2e to the last statement: median {cold_ms:.0f} ms  {_all(cold)}")
    print(f"restart to the same point:              median {restart_ms:.0f} ms  {_all(restart)}")
    print(
        "  of which before the first statement (start-up): "
        f"cold median {_median_ms(cold)} ms, restart median {_median_ms(restart)} ms"
    )
    startup = float(_median_ms(restart)) / float(_median_ms(cold))
    print(f"restart / cold, start-up alone = {startup:.2f}x ({_verdict(startup)})")
    print(f"restart / cold = {ratio:.2f}x ({_verdict(ratio)})")


def _verdict(ratio: float) -> str:
    return f"{'meets' if ratio <= TARGET else 'misses'} the target of {TARGET}x"


def _median_ms(times: list[Timing]) -> str:
    return f"{statistics.median(s for _, s in times) * 1000:.0f}"


def _all(times: list[Timing]) -> str:
    return "(" + ", ".join(f"{t * 1000:.0f}" for t, _ in times) + " ms)"


if __name__ == "__main__":
    main()
