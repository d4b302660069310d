"""Hostile input that needs a real run: real Chromium, a page on 127.0.0.1, the CLI.

Issue 7, "reliability proven by fault injection". Each case is ``python -m unotest
e2e NAME`` as a user runs it; each must end with a clear message and the right exit
code (1 for a failing scenario), never a traceback, and leave a run directory that
ends with ``run:finished`` (except where the disk itself refuses the bytes, where
every line that *is* there must still be whole JSON):

* 10,000-deep recursion and 10,000 chained unary operators: a RangeError step
  failure at the statement's line:col, not a crash;
* ``.env`` lines without ``=``: a warning naming file:line, the run goes on;
* NaN, Infinity, U+2028 and 1 MB strings as variables and log lines: artifacts stay
  single-line JSON that validates, runtime.json keeps the 4 KB per-value cut, and the
  log line reaches stdout.log whole;
* a ``--debug`` run paused at a breakpoint for longer than ``timeout.scenario`` is not
  timed out: the pause does not count (runner.md §7);
* ``RLIMIT_FSIZE`` reached while steps.jsonl grows: the run stops with one sentence.

``while (true) {}`` stopped by the scenario timeout is proven by
``tests/runner/test_e2e_run.py::test_scenario_timeout_and_web_server``.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from protocol_schemas import validate
from test_e2e_run import (
    check_run_dir,
    finish,
    make_project,
    read_ascii_events,
    run_dir_of,
    start,
)

Validate = Callable[[str, object], None]
HEADER = "// id-{0}\n// {0}\n// #0ea5e9\n"
PAGE = "<!doctype html><title>Hostile</title><h1>Hostile input</h1>\n"


def config(base_url: str, *, scenario_ms: int = 60000) -> str:
    return (
        f"baseURL: {base_url}\nheadless: true\n"
        f"timeout: {{action: 5000, expect: 5000, navigation: 15000, scenario: {scenario_ms}}}\n"
    )


RECURSION = HEADER.format("recursion") + (
    "function down(n) {\n"
    "  if (n == 0) { return 0 }\n"
    "  return 1 + down(n - 1)\n"
    "}\n"
    "function test_recursion() {\n"
    '  goto("/index.html")\n'
    "  let depth = down(10000)\n"
    "}\n"
)
UNARY = HEADER.format("unary") + (
    'function test_unary() {\n  goto("/index.html")\n  let x = ' + "!" * 10_000 + "true\n}\n"
)
# 2^20 characters by doubling (there is no String.repeat in the language).
DOUBLINGS = "[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20]"
AWKWARD_BODY = (
    '  goto("/index.html")\n'
    "  let nan = 0 / 0\n"
    "  let inf = -1 / 0\n"
    '  let seps = "a\\u2028b\\u2029c\\u0000d"\n'
    '  let big = "x"\n'
    "  for (const i of DOUBLINGS) { big = big + big }\n"
    "  let all = { nan: nan, inf: inf, seps: seps, size: big.length }\n"
    '  log("values", nan, inf, seps, big)\n'
)
AWKWARD = HEADER.format("awkward") + (
    "function test_awkward() {\n"
    + AWKWARD_BODY.replace("DOUBLINGS", DOUBLINGS)
    + "  expect_equal(nan, inf)\n}\n"
)
AWKWARD_FAIL_LINE = 13
# Paused: 8 KB is enough to show the 4 KB cut, and keeps the run before the pause short.
PAUSED = HEADER.format("paused") + (
    "function test_paused() {\n"
    + AWKWARD_BODY.replace(", big)", ", big.length)").replace(
        "DOUBLINGS", "[1,2,3,4,5,6,7,8,9,10,11,12,13]"
    )
    + '  log("after the pause")\n}\n'
)
PAUSE_LINE = 13  # the last log() of PAUSED
DOTENV_OK = HEADER.format("dotenv") + (
    'function test_dotenv() {\n  goto("/index.html")\n  expect_equal(env("GOOD"), "yes")\n}\n'
)
FILLER = HEADER.format("filler") + (
    "function test_filler() {\n"
    '  goto("/index.html")\n'
    "  let n = 0\n"
    "  while (true) {\n"
    "    n += 1\n"
    "  }\n"
    "}\n"
)


@pytest.fixture
def site(static_site: str, tmp_path: Path) -> str:
    (tmp_path / "index.html").write_text(PAGE, encoding="utf-8")
    return static_site


@pytest.fixture
def browser(chromium_path: str) -> Iterator[None]:
    """Fails with conftest's message when there is no Chromium at all."""
    yield


def _single_line_json(path: Path) -> Any:
    data = path.read_bytes()
    assert data.count(b"\n") <= 1 and data.isascii(), path  # ensure_ascii: no raw U+2028
    return json.loads(data)


def test_deep_recursion_unary_chains_awkward_values_and_dotenv(
    tmp_path: Path, site: str, browser: None
) -> None:
    """Four real runs at once; each failure is a scenario failure (exit 1) with a clear
    RangeError or AssertionError, and every run directory ends with run:finished."""
    recursion = make_project(
        tmp_path / "rec", config(site), {"recursion": RECURSION}, helpers=False
    )
    unary = make_project(tmp_path / "unary", config(site), {"unary": UNARY}, helpers=False)
    awkward = make_project(tmp_path / "awk", config(site), {"awkward": AWKWARD}, helpers=False)
    dotenv = make_project(
        tmp_path / "env",
        config(site),
        {"dotenv": DOTENV_OK},
        helpers=False,
        dotenv="JUST_A_NAME\nGOOD=yes\n=no-name\n\x1b[31mRED\n",
    )
    began = time.monotonic()
    procs = [
        start(recursion, "e2e", "recursion"),
        start(unary, "e2e", "unary"),
        start(awkward, "e2e", "awkward", env={"UNOTEST_OUTPUT_TO_RUN_DIR": "1"}),
        start(dotenv, "e2e", "dotenv"),
    ]
    rec, una, awk, env = (finish(proc, began) for proc in procs)

    # 10,000-deep recursion: the call-depth limit, at the call, as a RangeError.
    assert rec.code == 1, rec
    # the chain from the scenario's own line down to the call that went too deep,
    # the 198 repeated frames written once
    assert "recursion.test.js:6:2 down ×198 → " in rec.stdout
    assert "recursion.test.js:6:13 down: RangeError: call depth exceeds 200" in rec.stdout
    check_run_dir(
        run_dir_of(recursion, rec.pid), recursion, ref="recursion", pid=rec.pid,
        outcome="failed", validate=validate,
    )  # fmt: skip

    # 10,000 chained `!`: parses, then Python's stack runs out: the statement's RangeError.
    assert una.code == 1, una
    assert "unary.test.js:6:2: RangeError: the statement nests expressions" in una.stdout
    events = check_run_dir(
        run_dir_of(unary, una.pid), unary, ref="unary", pid=una.pid,
        outcome="failed", validate=validate,
    )  # fmt: skip
    [fail] = [e for e in events if e["kind"] == "step:fail"]
    assert fail["errorName"] == "RangeError"

    # NaN, -Infinity, U+2028, NUL, 1 MB: the log line whole in stdout.log, JSON intact;
    # one line, as language.md says of log(): line separators and controls escaped.
    assert awk.code == 1, awk
    run = run_dir_of(awkward, awk.pid)
    events = check_run_dir(
        run, awkward, ref="awkward", pid=awk.pid, outcome="failed", validate=validate
    )
    stdout_log = (run / "stdout.log").read_text(encoding="utf-8")
    [logged] = [line for line in stdout_log.split("\n") if line.startswith("values ")]
    assert "NaN" in logged and "-Infinity" in logged and "a\\u2028b\\u2029c\\u0000d" in logged
    assert logged.endswith(" " + "x" * 2**20), len(logged)  # the 1 MB value, whole
    assert f"awkward.test.js:{AWKWARD_FAIL_LINE}:2: AssertionError" in stdout_log
    for event in events:
        assert len(json.dumps(event)) < 2000, event["kind"]  # a 1 MB value is not copied
    [written] = [e for e in events if e["kind"] == "failure-bundle:written"]
    error = json.loads((awkward / written["bundlePath"] / "error.json").read_text())
    # What they are (JSON.stringify would write null, which a person reads as null).
    assert error["vars"]["nan"] == "NaN" and error["vars"]["inf"] in ("Infinity", "-Infinity")
    assert json.loads(error["vars"]["seps"]) == "a\u2028b\u2029c\x00d"
    assert len(error["vars"]["big"]) <= 4096
    runtime = _single_line_json(run / "runtime.json")
    validate("RuntimeStateFile", runtime)

    # .env lines without '=': a warning each, naming file:line, escaped; the run passes.
    assert env.code == 0, env
    assert "warning: unotest/.env:1: 'JUST_A_NAME' has no '=value'; ignored" in env.stderr
    assert "warning: unotest/.env:3:" in env.stderr
    assert "warning: unotest/.env:4: '\\x1b[31mRED' has no '=value'" in env.stderr
    assert "\x1b" not in env.stderr
    check_run_dir(
        run_dir_of(dotenv, env.pid), dotenv, ref="dotenv", pid=env.pid,
        outcome="completed", validate=validate,
    )  # fmt: skip


def _wait_for(predicate: Callable[[], bool], what: str, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 90
    while not predicate():
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"the run ended before {what}: {proc.returncode}\n{out}\n{err}")
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"no {what} within 90 s")
        time.sleep(0.1)


def _runtime(project: Path, pid: int) -> dict[str, Any] | None:
    try:
        data: dict[str, Any] = json.loads(
            (run_dir_of(project, pid) / "runtime.json").read_text(encoding="utf-8")
        )
    except (AssertionError, OSError, ValueError):
        return None  # not there yet, or between two writes
    return data


def test_a_paused_run_outlives_its_scenario_timeout_and_keeps_the_4kb_cut(
    tmp_path: Path, site: str, browser: None
) -> None:
    """Paused at a breakpoint for longer than ``timeout.scenario`` (4 s), then
    continued, the run completes (exit 0): the pause is not run time. While paused,
    runtime.json is one ASCII line that validates, with NaN/Infinity as JSON.stringify
    renders them, U+2028 escaped and an 8 KB string cut to 4 KB."""
    timeout_ms = 4000
    project = make_project(
        tmp_path / "p", config(site, scenario_ms=timeout_ms), {"paused": PAUSED}, helpers=False
    )
    proc = start(
        project, "e2e", "paused", "--break", str(PAUSE_LINE),
        env={"UNOTEST_OUTPUT_TO_RUN_DIR": "1"},  # stdout.log: no pipe to fill while paused
    )  # fmt: skip
    paused_at = 0.0

    def paused() -> bool:
        nonlocal paused_at
        state = _runtime(project, proc.pid)
        if state is not None and state["state"] == "paused-breakpoint":
            paused_at = time.monotonic()
            return True
        return False

    _wait_for(paused, "pause at the breakpoint", proc)
    run = run_dir_of(project, proc.pid)
    runtime = _single_line_json(run / "runtime.json")
    validate("RuntimeStateFile", runtime)
    assert runtime["current"]["line"] == PAUSE_LINE
    values = runtime["vars"]
    assert values["nan"] == "NaN" and values["inf"] in ("Infinity", "-Infinity")
    assert json.loads(values["seps"]) == "a\u2028b\u2029c\x00d"
    assert len(values["big"]) <= 4096 and values["big"].startswith('"xxxx')
    assert all(len(v) <= 4096 for v in values.values())
    # Stay paused for longer than the whole scenario timeout: a timer running now fires.
    while time.monotonic() - paused_at < timeout_ms / 1000 + 1:
        time.sleep(0.1)
    assert proc.poll() is None, "the run ended while paused"
    answer = subprocess.run(
        [sys.executable, "-m", "unotest", "dbg", run.name, "continue"],
        cwd=project,
        env={**os.environ, "PYTHONSAFEPATH": "1"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert answer.returncode == 0, answer
    done = finish(proc)
    assert done.code == 0, (done, (run / "stdout.log").read_text())
    assert "after the pause" in (run / "stdout.log").read_text()
    events = read_ascii_events(run)
    assert events[-1] == {"kind": "run:finished", "outcome": "completed", "t": events[-1]["t"]}
    assert [e["kind"] for e in events].count("paused") == 1
    for event in events:
        if event["kind"] in ("paused", "resumed", "run:finished", "step:started"):
            validate("RunArtifact", event)


def _ignore_sigxfsz() -> None:
    """In the child: a write past RLIMIT_FSIZE fails with EFBIG instead of killing."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def test_file_size_limit_while_steps_grow_is_one_sentence(
    tmp_path: Path, site: str, browser: None
) -> None:
    """``RLIMIT_FSIZE`` reached by steps.jsonl mid-run: the runner stops with one
    sentence naming the file (exit non-zero, no traceback), and every line already in
    steps.jsonl is whole JSON.

    The limit is set on the running runner with ``prlimit`` once the browser is up,
    not in ``preexec_fn``: Chromium would inherit a limit set before it starts and
    fail on its own profile files first, which is a different test.
    """
    project = make_project(tmp_path / "p", config(site), {"filler": FILLER}, helpers=False)
    # Output to files (not unread pipes, which would fill up and block the loop).
    out_path, err_path = tmp_path / "out.txt", tmp_path / "err.txt"
    with out_path.open("w") as out, err_path.open("w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "unotest", "e2e", "filler"],
            cwd=project,
            env={**os.environ, "PYTHONSAFEPATH": "1"},
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            text=True,
            preexec_fn=_ignore_sigxfsz,
        )
    steps: list[Path] = []

    def looping() -> bool:
        try:
            path = run_dir_of(project, proc.pid) / "steps.jsonl"
            steps[:] = [path]
            return b'"text":"n += 1"' in path.read_bytes()
        except (AssertionError, OSError, ValueError):
            return False

    _wait_for(looping, "the loop's first step", proc)
    limit = steps[0].stat().st_size + 20_000
    resource.prlimit(proc.pid, resource.RLIMIT_FSIZE, (limit, limit))
    try:
        code = proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail("the run did not stop after its steps.jsonl hit RLIMIT_FSIZE")
    stdout, stderr = out_path.read_text(), err_path.read_text()
    assert code != 0, (stdout, stderr)
    assert "Traceback" not in stdout + stderr, stderr
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("unotest: cannot write unotest/.runs/"), stderr
    assert "/steps.jsonl: File too large" in last, stderr
    # runtime.json, a small file rewritten whole, still says how the run ended.
    runtime = _single_line_json(steps[0].parent / "runtime.json")
    assert runtime["state"] == "failed", runtime
    data = steps[0].read_bytes()
    assert len(data) <= limit
    for line in data.split(b"\n")[:-1]:
        json.loads(line)  # every terminated line is whole
