"""Debugger command latency: from the append to commands.jsonl to its effect.

Runs the real product, as a user (or the viewer) drives it: ``unotest e2e bench
--step`` (the console script next to this Python) on a throw-away project whose
scenario opens one page served by this script on 127.0.0.1 and then loops over ~500
cheap statements. The run pauses before its first statement; this script then sends
``step`` commands one at a time (one ``os.write`` on an ``O_APPEND`` descriptor, as
``unotest dbg`` does) and times, for each, the append to

* the matching ``command:applied`` in steps.jsonl (the command landed), and
* the ``resumed`` event that follows it (the scenario moved on),

then waits for the next ``paused`` before sending the next one. steps.jsonl is read
by byte offset, polled every 0.2 ms, so the figures include at most that much of the
bench's own lag. runner.md §3 targets a p50 of at most 20 ms.

Then, on a third project, a loop of 20,000 cheap statements run with ``--debug``
and never paused: ``set-bp``/``clear-bp`` sent one at a time while it runs, each
timed from the append to its ``command:applied`` (issue 19: p50 at most 5 ms, p99 at
most 25 ms); and the same loop, shorter, run with and without ``--debug`` a few
times: the interpreter's time (first step's start to last step's end, from
steps.jsonl) of each, and what ``--debug`` with no breakpoint hit costs (at most 5 %).

Then ``reload`` (issue 16, target at most 100 ms): a second scenario of 500 lines
(twenty functions of loops, branches and a ``try``, and a test calling them) paused
before its first statement; the bench rewrites the file, one statement edited in the
middle, alternately two versions, and times each ``reload`` from the append to its
``command:result`` (read, parse and check of the scenario and its helper, the frames
mapped, the breakpoints moved).

    .venv/bin/python bench/debug_latency.py [--commands 200] [--reloads 20] [--running 100]
        [--cost-repeat 5]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench_common import UNOTEST, LineTail, append_command, serve_page, stop, write_project

PAGE = "<!doctype html><html><head><title>Latency</title></head><body><h1>Hi</h1></body></html>"
LOOP = 250
SCENARIO = f"""\
// id-bench-debug-latency
// Step through a loop of cheap statements
// #0f766e
function test_latency() {{
  goto("/index.html")
  let x = 0
  for (const i of range({LOOP})) {{
    x += i
  }}
  log(`sum ${{x}}`)
}}
"""
POLL = 0.0002
RUNNING_LOOP = 20000
COST_LOOP = 3000
NEVER_LINE = 5  # the line of log("never"): a breakpoint there is never hit


def running_scenario(loop: int) -> str:
    """A loop of cheap statements that never pauses, and a function never called (the
    breakpoints the bench sets and clears while the loop runs are in it)."""
    return f"""\
// id-bench-running
// A loop of cheap statements, never paused
// #0f766e
function never_called() {{
  log("never")
}}
function test_running() {{
  let x = 0
  for (const i of range({loop})) {{
    x += i
  }}
  log(`sum ${{x}}`)
}}
"""


TIMEOUT = 60.0
BIG_FUNCTIONS = 18


def big_scenario(variant: int) -> str:
    """A scenario of about 500 lines; ``variant`` changes one statement in the middle."""
    lines = [
        "// id-bench-reload",
        "// Five hundred lines to reload",
        "// #0f766e",
        "function test_reload() {",
        '  goto("/index.html")',
        "  let total = 0",
        *(f"  total += part_{n}({n})" for n in range(BIG_FUNCTIONS)),
        "  log(`total ${total}`)",
        "}",
    ]
    for n in range(BIG_FUNCTIONS):
        edited = n == BIG_FUNCTIONS // 2 and variant % 2 == 1
        lines += [
            "",
            f"function part_{n}(seed) {{",
            "  let acc = seed",
            "  let names = []",
            "  for (const i of range(3)) {",
            "    acc += i",
            '    names.push("item " + i)',
            "    if (acc > 100) {",
            "      acc = acc - 100",
            "    } else if (acc < 0) {",
            "      acc = 0",
            "    } else {",
            f"      acc = acc + {2 if edited else 1}",
            "    }",
            "  }",
            "  let k = 0",
            "  while (k < 2) {",
            "    k += 1",
            "    acc += k",
            "  }",
            "  try {",
            "    expect_equal(len(names), 3)",
            "  } catch (e) {",
            '    log("unexpected " + e.message)',
            "  }",
            "  return acc",
            "}",
        ]
    return "\n".join(lines) + "\n"


class Events:
    """steps.jsonl, read by byte offset, whole lines only."""

    def __init__(self, path: Path, process: subprocess.Popen[bytes]) -> None:
        self.tail = LineTail(path)
        self.process = process
        self.unread: list[tuple[dict[str, Any], float]] = []

    def poll(self) -> None:
        lines = self.tail.read()
        seen = self.tail.read_at
        self.unread.extend((json.loads(line), seen) for line in lines if line.strip())

    def wait_for(self, match: Any, what: str) -> tuple[dict[str, Any], float]:
        """The next event ``match`` accepts (earlier ones are dropped), and when it was
        first seen (perf_counter)."""
        deadline = time.monotonic() + TIMEOUT
        while True:
            while self.unread:
                event, seen = self.unread.pop(0)
                if match(event):
                    return event, seen
            self.poll()
            if self.unread:
                continue
            if self.process.poll() is not None:
                sys.exit(f"the run ended (exit {self.process.returncode}) waiting for {what}")
            if time.monotonic() > deadline:
                sys.exit(f"no {what} within {TIMEOUT:g} s")
            time.sleep(POLL)


def _append(path: Path, command: dict[str, Any]) -> float:
    """``append_command``: the perf_counter just before the write."""
    return append_command(path, command)[0]


@contextmanager
def _runner(project: Path, log: Path, *args: str) -> Iterator[subprocess.Popen[bytes]]:
    """``unotest e2e *args`` on ``project``, its output in ``log`` (no TTY: no terminal
    prompt); stopped when the block ends, if it has not ended by then."""
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [UNOTEST, "e2e", *args],
            cwd=project,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        yield process
    finally:
        stop(process)


def _run_dir(runs: Path, process: subprocess.Popen[bytes]) -> Path:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        if runs.is_dir():
            found = [p for p in runs.iterdir() if (p / "steps.jsonl").exists()]
            if found:
                return found[0]
        if process.poll() is not None:
            sys.exit(f"unotest e2e exited early ({process.returncode})")
        time.sleep(0.01)
    sys.exit("no run directory appeared")


def _percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


@contextmanager
def _stepped(project: Path, log: Path, name: str) -> Iterator[tuple[Path, Events]]:
    """``unotest e2e <name> --step``, paused before its first statement: its
    commands.jsonl and its events; continued to its end when the block ends."""
    with _runner(project, log, name, "--step") as process:
        run_dir = _run_dir(project / "unotest" / ".runs", process)
        commands = run_dir / "commands.jsonl"
        events = Events(run_dir / "steps.jsonl", process)
        events.wait_for(lambda e: e.get("kind") == "paused", "the first pause")
        yield commands, events
        _append(commands, {"id": f"{name}-end", "cmd": "continue"})
        events.wait_for(lambda e: e.get("kind") == "run:finished", "run:finished")
        process.wait(timeout=TIMEOUT)


def _send(events: Events, commands: Path, ident: str, cmd: str, answer: str) -> tuple[float, float]:
    """``cmd`` appended, and its ``answer`` waited for (a rejection ends the bench):
    when it was sent and when the answer was seen (perf_counter)."""
    sent = _append(commands, {"id": ident, "cmd": cmd})
    event, seen = events.wait_for(
        lambda e: e.get("id") == ident and e.get("kind") in (answer, "command:rejected"),
        f"the answer to {ident}",
    )
    if event["kind"] != answer:
        sys.exit(f"{ident} was rejected: {event.get('reason')}")
    return sent, seen


def _measure(project: Path, count: int, log: Path) -> tuple[list[float], list[float], list[float]]:
    applied: list[float] = []
    resumed: list[float] = []
    repaused: list[float] = []
    with _stepped(project, log, "bench") as (commands, events):
        for n in range(count):
            sent, seen = _send(events, commands, f"bench-{n}", "step", "command:applied")
            applied.append(seen - sent)
            _, seen = events.wait_for(lambda e: e.get("kind") == "resumed", "resumed")
            resumed.append(seen - sent)
            _, seen = events.wait_for(lambda e: e.get("kind") == "paused", "the next pause")
            repaused.append(seen - sent)
    return applied, resumed, repaused


def _measure_reload(project: Path, count: int, log: Path) -> list[float]:
    """``count`` reloads of the big scenario, paused before its first statement: the
    append of each ``reload`` to its ``command:result``."""
    scenario = project / "unotest" / "e2e" / "big.test.js"
    times: list[float] = []
    with _stepped(project, log, "big") as (commands, events):
        for n in range(count):
            scenario.write_text(big_scenario(n + 1))
            sent, seen = _send(events, commands, f"reload-{n}", "reload", "command:result")
            times.append(seen - sent)
    return times


class Answers:
    """The ``command:*`` lines of a busy steps.jsonl (tens of thousands of step lines,
    skipped unparsed), read by byte offset."""

    def __init__(self, path: Path) -> None:
        self.tail = LineTail(path)

    def poll(self) -> list[tuple[dict[str, Any], float]]:
        lines = self.tail.read()
        seen = self.tail.read_at
        return [(json.loads(line), seen) for line in lines if b'"command:' in line]


def _measure_running(project: Path, count: int, log: Path) -> list[float]:
    """``set-bp``/``clear-bp`` (alternately, in a function never called) sent one at a
    time to a ``--debug`` run busy in its loop: the append of each to its
    ``command:applied``. The run is never paused; it ends on its own."""
    with _runner(project, log, "running", "--debug") as process:
        run_dir = _run_dir(project / "unotest" / ".runs", process)
        commands = run_dir / "commands.jsonl"
        steps = run_dir / "steps.jsonl"
        deadline = time.monotonic() + TIMEOUT
        while b'"step:started"' not in steps.read_bytes()[:65536]:  # the loop has begun
            if time.monotonic() > deadline or process.poll() is not None:
                sys.exit("the running scenario never started its steps")
            time.sleep(0.005)
        answers = Answers(steps)
        times: list[float] = []
        for n in range(count):
            ident = f"running-{n}"
            cmd = "set-bp" if n % 2 == 0 else "clear-bp"
            sent = _append(commands, {"id": ident, "cmd": cmd, "line": NEVER_LINE})
            answer = None
            while answer is None:
                answer = next(
                    ((event, seen) for event, seen in answers.poll() if event.get("id") == ident),
                    None,
                )
                if answer is None:
                    if process.poll() is not None:
                        return times  # the loop ended first: what was measured
                    if time.monotonic() > deadline + TIMEOUT:
                        sys.exit(f"no answer to {ident}")
                    time.sleep(POLL)
            event, seen = answer
            if event["kind"] != "command:applied":
                sys.exit(f"{ident} was not applied: {event}")
            times.append(seen - sent)
        process.wait(timeout=TIMEOUT * 4)
        return times


def _interpreter_seconds(project: Path, debug: bool, log: Path) -> float:
    """One run of the cost scenario, with or without ``--debug``: the time from its first
    step's start to its last step's end, as steps.jsonl stamps them (the interpreter's
    time, without the browser's start and end)."""
    runs = project / "unotest" / ".runs"
    before = set(runs.iterdir()) if runs.is_dir() else set()
    with open(log, "wb") as out:
        done = subprocess.run(
            [UNOTEST, "e2e", "running", *(["--debug"] if debug else [])],
            cwd=project,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            check=False,
            timeout=TIMEOUT * 4,
        )
    if done.returncode != 0:
        sys.exit(f"the cost run failed ({done.returncode})")
    [run_dir] = set(runs.iterdir()) - before
    first = last = None
    with open(run_dir / "steps.jsonl", "rb") as handle:
        for line in handle:
            if b'"step:' not in line:
                continue
            event = json.loads(line)
            if first is None and event["kind"] == "step:started":
                first = event["t"]
            if event["kind"] in ("step:ok", "step:fail"):
                last = event["t"]
    if first is None or last is None:
        sys.exit("the cost run wrote no steps")
    return float(last - first) / 1000


def _measure_cost(project: Path, repeat: int, log: Path) -> tuple[float, float]:
    """The fastest of ``repeat`` runs each, plain and ``--debug``, interleaved: on a
    shared machine the fastest run is the one its neighbours disturbed least."""
    plain: list[float] = []
    debug: list[float] = []
    for _ in range(repeat):
        plain.append(_interpreter_seconds(project, False, log))
        debug.append(_interpreter_seconds(project, True, log))
    return min(plain), min(debug)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commands", type=int, default=200, help="step commands to send")
    parser.add_argument("--reloads", type=int, default=20, help="reload commands to send")
    parser.add_argument(
        "--running", type=int, default=100, help="set-bp/clear-bp commands to a running run"
    )
    parser.add_argument(
        "--cost-repeat", type=int, default=5, help="runs each with and without --debug"
    )
    args = parser.parse_args()
    if args.commands > 2 * LOOP:
        parser.error(f"at most {2 * LOOP} commands (the scenario has about that many steps)")
    with tempfile.TemporaryDirectory(prefix="unotest-bench-") as tmp:
        base = Path(tmp)
        server, base_url = serve_page(base, PAGE)
        try:
            config = f"baseURL: {base_url}\ntrace: off\n"
            project = write_project(base / "project", config, {"bench": SCENARIO})
            # a project of its own: its only run is the one to find
            big = write_project(base / "big", config, {"big": big_scenario(0)})
            # a loop that never pauses, with and without --debug
            running = write_project(base / "running", config, {})
            running_file = running / "unotest" / "e2e" / "running.test.js"
            log = base / "run.log"
            try:
                applied, resumed, repaused = _measure(project, args.commands, log)
                reloads = _measure_reload(big, args.reloads, log) if args.reloads else []
                running_file.write_text(running_scenario(RUNNING_LOOP))
                live = _measure_running(running, args.running, log) if args.running else []
                running_file.write_text(running_scenario(COST_LOOP))
                cost = _measure_cost(running, args.cost_repeat, log) if args.cost_repeat else None
            except SystemExit:
                print(log.read_text(errors="replace")[-4000:], file=sys.stderr)
                raise
        finally:
            server.shutdown()
            server.server_close()

    def ms(values: list[float], p: float) -> str:
        return f"{_percentile(values, p) * 1000:7.2f} ms"

    print(f"commands sent:              {len(applied)} (step, one at a time)")
    print(f"append -> command:applied   p50 {ms(applied, 50)}   p99 {ms(applied, 99)}")
    print(f"append -> resumed           p50 {ms(resumed, 50)}   p99 {ms(resumed, 99)}")
    print(f"append -> next paused       p50 {ms(repaused, 50)}   p99 {ms(repaused, 99)}")
    print(f"(mean applied {statistics.mean(applied) * 1000:.2f} ms; target p50 <= 20 ms)")
    if reloads:
        size = len(big_scenario(0).splitlines())
        print(f"reloads sent:               {len(reloads)} ({size}-line scenario, paused)")
        print(f"append -> command:result    p50 {ms(reloads, 50)}   p99 {ms(reloads, 99)}")
        print("(target: reload <= 100 ms)")
    if live:
        print(f"commands to a running run:  {len(live)} (set-bp/clear-bp, --debug, not paused)")
        print(f"append -> command:applied   p50 {ms(live, 50)}   p99 {ms(live, 99)}")
        print("(target: p50 <= 5 ms, p99 <= 25 ms)")
    if cost is not None:
        plain, debug = cost
        steps = 2 * COST_LOOP + 2
        print(
            f"interpreter time, {steps} steps, no breakpoint hit (fastest of {args.cost_repeat}):"
        )
        print(f"  plain run {plain:.3f} s, --debug {debug:.3f} s")
        print(f"  --debug costs {(debug / plain - 1) * 100:+.1f} % (target <= 5 %)")


if __name__ == "__main__":
    main()
