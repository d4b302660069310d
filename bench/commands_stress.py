"""commands.jsonl under load: many processes append while the real runner reads it.

runner.md §3: ``commands.jsonl`` is appended by others (the viewer, ``unotest dbg``,
agents) and read by the runner by byte offset, whole lines only; every command is
answered once (``command:applied`` or ``command:rejected``, plus ``command:result``
for ``eval``) and applied at most once. This script checks that at full size: it
starts the real product, ``unotest e2e stress --break 6`` (the console script next
to this Python) on a throw-away project, waits for the breakpoint's ``paused``, then
lets ``--writers`` processes append ``--per-writer`` commands each at once, and
reads steps.jsonl until every command id has its answer. Then ``continue`` ends the
run, which must complete.

Each command carries a payload of 10 B to 64 KiB, log-uniform (most are small, as
real commands are; the first of each writer is 10 B, the second 64 KiB), so a line
is the payload plus ~40 B of JSON. With the defaults (8 × 10,000) that is ~600 MB
written to commands.jsonl: the project lives in a temporary directory that is
removed at the end. The mix of commands (seeded, reproducible):

* ``eval`` of ``"<payload>".length``: applied, then a ``command:result`` whose value
  must be the payload's length (the line reached the runner whole);
* ``set-bp`` / ``clear-bp`` of a statement: applied (clear-bp may be rejected when
  its breakpoint is not set at that moment: writers race, both answers count);
* ``pause`` (already paused), ``fly`` (unknown) and a command without ``cmd``:
  rejected.

Checked: no command lost, none answered twice, every eval result right, every line
of commands.jsonl intact (no two appends interleaved), the run completes. Printed:
sizes, the append time and the time until the last answer.

    .venv/bin/python bench/commands_stress.py [--writers 8] [--per-writer 10000] [--seed 1]

``tests/runner/test_reliability_concurrency.py`` runs the same writers (this file's
``write`` mode, the same generator) at a size that fits the test budget.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # a test loads this file by its path, bench/ not on sys.path
    sys.path.append(str(HERE))

from bench_common import (  # noqa: E402
    UNOTEST,
    LineTail,
    append_command,
    clean_env,
    run_dir_of,
    serve_page,
    stop,
    write_project,
)

MIN_PAYLOAD = 10
MAX_PAYLOAD = 64 * 1024
SCENARIO_NAME = "stress"
BREAK_LINE = 6
SCENARIO = """\
// id-stress
// Paused at line 6 while commands pour in
// #be123c
function test_stress() {
  goto("/index.html")
  let x = 1
  expect_visible(css("h1"))
  x += 1
}
"""
# set-bp / clear-bp targets: statements the run has passed by the time it pauses at
# line 6 (a pause there is not taken again), so that ``continue`` ends the run.
STATEMENTS = ((5, 2), (6, 2))
PAGE = "<!doctype html><html><head><title>Stress</title></head><body><h1>Hi</h1></body></html>"
# (cmd, weight); None: a command without "cmd"
MIX: tuple[tuple[str | None, int], ...] = (
    ("eval", 30),
    ("set-bp", 15),
    ("clear-bp", 15),
    ("pause", 15),
    ("fly", 15),
    (None, 10),
)


@dataclass(frozen=True)
class Planned:
    """One command a writer appends, and the answer it must get."""

    ident: str
    cmd: str | None
    line: bytes
    eval_value: str | None  # the command:result value an eval must produce


def payload_size(rng: random.Random, n: int) -> int:
    """10 B to 64 KiB, log-uniform; the first two of a writer are the two extremes."""
    if n == 0:
        return MIN_PAYLOAD
    if n == 1:
        return MAX_PAYLOAD
    return int(math.exp(rng.uniform(math.log(MIN_PAYLOAD), math.log(MAX_PAYLOAD))))


def plan(prefix: str, count: int, seed: int) -> Iterator[Planned]:
    """The commands of one writer, deterministic in (prefix, count, seed), so that the
    checker can recompute what each must be answered with."""
    rng = random.Random(f"{prefix}/{seed}")
    cmds = [cmd for cmd, _ in MIX]
    weights = [weight for _, weight in MIX]
    for n in range(count):
        size = payload_size(rng, n)
        cmd = rng.choices(cmds, weights)[0]
        pad = rng.randbytes((size + 1) // 2).hex()[:size]
        ident = f"{prefix}-{n}"
        data: dict[str, Any] = {"id": ident}
        value = None
        if cmd is not None:
            data["cmd"] = cmd
        if cmd == "eval":
            data["expr"] = f'"{pad}".length'
            value = str(size)
        else:
            data["pad"] = pad
        if cmd in ("set-bp", "clear-bp"):
            data["line"], data["col"] = rng.choice(STATEMENTS)
        line = json.dumps(data, separators=(",", ":")).encode("ascii") + b"\n"
        yield Planned(ident, cmd, line, value)


def write(path: Path, prefix: str, count: int, seed: int) -> None:
    """Append the planned commands, one ``os.write`` per line on an ``O_APPEND``
    descriptor (a short write, which a regular file never makes, is completed)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        for planned in plan(prefix, count, seed):
            view = memoryview(planned.line)
            while view:
                view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def writer_argv(path: Path, prefix: str, count: int, seed: int) -> list[str]:
    return [sys.executable, str(Path(__file__).resolve()), "write", str(path), prefix,
            str(count), str(seed)]  # fmt: skip


# --- reading the answers ---------------------------------------------------------------


class Answers:
    """steps.jsonl read by byte offset, whole lines only; answers gathered per id."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.tail = LineTail(path)
        self.answers: dict[str, list[str]] = {}  # id -> applied / rejected, in order
        self.results: dict[str, list[Any]] = {}  # id -> command:result values
        self.anonymous = 0  # answers without an id (none expected)
        self.events: list[dict[str, Any]] = []  # everything that is not an answer

    def poll(self) -> None:
        for line in self.tail.read():
            event = json.loads(line)
            kind = event["kind"]
            ident = event.get("id")
            if kind in ("command:applied", "command:rejected"):
                if ident is None:
                    self.anonymous += 1
                else:
                    self.answers.setdefault(ident, []).append(kind.split(":")[1])
            elif kind == "command:result":
                self.results.setdefault(ident, []).append(event.get("value", event))
            else:
                self.events.append(event)

    def answered(self, wanted: set[str]) -> int:
        return sum(1 for ident in wanted if ident in self.answers)


def check(answers: Answers, planned: dict[str, Planned]) -> dict[str, list[str]]:
    """Every way the answers can be wrong, by kind (empty lists: all is well)."""
    problems: dict[str, list[str]] = {
        "lost": [],
        "duplicated": [],
        "unexpected": [],
        "wrong answer": [],
        "wrong eval result": [],
    }
    for ident, got in answers.answers.items():
        if ident not in planned:
            problems["unexpected"].append(ident)
        elif len(got) != 1:
            problems["duplicated"].append(f"{ident}: {got}")
    for ident, command in planned.items():
        got = answers.answers.get(ident)
        if not got:
            problems["lost"].append(ident)
            continue
        expected = {
            "eval": {"applied"},
            "set-bp": {"applied"},
            "clear-bp": {"applied", "rejected"},
        }.get(command.cmd or "", {"rejected"})
        if got[0] not in expected:
            problems["wrong answer"].append(f"{ident} ({command.cmd}): {got[0]}")
        results = answers.results.get(ident, [])
        if command.cmd == "eval" and results != [command.eval_value]:
            problems["wrong eval result"].append(f"{ident}: {str(results)[:200]}")
        elif command.cmd != "eval" and results:
            problems["wrong eval result"].append(f"{ident} is no eval: {results}")
    if answers.anonymous:
        problems["unexpected"].append(f"{answers.anonymous} answers without an id")
    return problems


def intact_lines(path: Path) -> tuple[int, list[str]]:
    """(number of lines, the ones that are not one whole JSON object with an id)."""
    count, bad = 0, []
    with open(path, "rb") as handle:
        for line in handle:
            count += 1
            try:
                ok = line.endswith(b"\n") and isinstance(json.loads(line)["id"], str)
            except (ValueError, KeyError, TypeError):
                ok = False
            if not ok:
                bad.append(repr(line[:80]))
    return count, bad


# --- the bench ---------------------------------------------------------------------------


def _project(root: Path, base_url: str) -> None:
    config = (
        f"baseURL: {base_url}\nheadless: true\ntrace: off\n"
        "timeout: {action: 5000, expect: 5000, navigation: 15000, scenario: 60000}\n"
    )
    write_project(root, config, {SCENARIO_NAME: SCENARIO})


def _run_dir(project: Path, pid: int, deadline: float) -> Path:
    while time.monotonic() < deadline:
        found = run_dir_of(project / "unotest" / ".runs", pid)
        if found is not None:
            return found
        time.sleep(0.02)
    raise SystemExit("the run never made its directory")


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of one process so far (Linux /proc)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = stat[stat.rfind(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bench(writers: int, per_writer: int, seed: int, timeout: float) -> int:
    work = Path(tempfile.mkdtemp(prefix="unotest-commands-stress-"))
    server, base_url = serve_page(work, PAGE)
    project = work / "project"
    _project(project, base_url)
    with open(work / "stderr.txt", "wb") as err:
        proc = subprocess.Popen(
            [UNOTEST, "e2e", SCENARIO_NAME, "--break", str(BREAK_LINE)],
            cwd=project,
            env=clean_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    try:
        deadline = time.monotonic() + timeout
        run_dir = _run_dir(project, proc.pid, deadline)
        answers = Answers(run_dir / "steps.jsonl")
        while not any(e["kind"] == "paused" for e in answers.events):
            if time.monotonic() > deadline or proc.poll() is not None:
                raise SystemExit("the run never paused")
            answers.poll()
            time.sleep(0.02)
        planned = {p.ident: p for i in range(writers) for p in plan(f"w{i}", per_writer, seed)}
        total_bytes = sum(len(p.line) for p in planned.values())
        print(
            f"{writers} writers x {per_writer} commands, {total_bytes / 1e6:.0f} MB "
            f"(payloads {MIN_PAYLOAD} B .. {MAX_PAYLOAD // 1024} KiB, log-uniform)"
        )
        commands = run_dir / "commands.jsonl"
        cpu_before = _cpu_seconds(proc.pid)
        started = time.monotonic()
        procs = [
            subprocess.Popen(writer_argv(commands, f"w{i}", per_writer, seed))
            for i in range(writers)
        ]
        for writer in procs:
            if writer.wait(timeout=timeout) != 0:
                raise SystemExit("a writer failed")
        appended = time.monotonic() - started
        wanted = set(planned)
        while answers.answered(wanted) < len(wanted) and time.monotonic() < deadline:
            answers.poll()
            time.sleep(0.05)
        answered = time.monotonic() - started
        cpu = _cpu_seconds(proc.pid) - cpu_before
        time.sleep(0.5)  # anything more now would be a duplicate
        answers.poll()
        problems = check(answers, planned)
        lines, bad_lines = intact_lines(commands)
        append_command(commands, {"id": "bench-continue", "cmd": "continue"})
        code = proc.wait(timeout=timeout)
        print(f"appended in {appended:.1f} s; last answer after {answered:.1f} s")
        print(f"{len(wanted) / answered:,.0f} commands/s, {total_bytes / 1e6 / answered:.0f} MB/s")
        print(f"runner CPU: {cpu:.1f} s ({cpu / len(wanted) * 1e6:,.0f} us per command)")
        print(f"commands.jsonl: {lines} lines, {len(bad_lines)} not whole")
        for kind, found in problems.items():
            print(f"{kind}: {len(found)} {found[:3] if found else ''}")
        print(f"run exit code: {code} (0 expected)")
        ok = not any(problems.values()) and not bad_lines and lines == len(wanted)
        ok = ok and code == 0
        print("OK" if ok else "FAILED")
        return 0 if ok else 1
    finally:
        stop(proc, grace=15)
        server.shutdown()
        server.server_close()
        shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "write":
        path, prefix, count, seed = sys.argv[2:6]
        write(Path(path), prefix, int(count), int(seed))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--per-writer", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=1800.0)
    args = parser.parse_args()
    return bench(args.writers, args.per_writer, args.seed, args.timeout)


if __name__ == "__main__":
    sys.exit(main())
