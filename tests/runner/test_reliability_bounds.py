"""Resource bounds of a run, proven on real runs (issue 7 "Reliability").

* ``steps.jsonl`` grows in proportion to the number of steps: the bytes per step of a
  200-step and a 400-step run agree (a generous factor), even though a variable grows
  at every step (an event that carried the scope would grow with the run).
* ``runtime.json`` stays small whatever the scenario holds: every variable is cut to
  4 KB (runner.md §2), and so is the last failure's message, so a 1 MB string, a
  20,000-item list and an object holding both cost a few KB per rewrite.
* ``steps.jsonl`` values are cut too: ``step:started.text`` at 200 characters
  (runner.md §1), the paused snapshot's variables and an ``eval`` result at 4 KB,
  ``step:fail``'s message at 4 KB; ``error.json`` keeps at most 64 KB of a message and
  ``console.json`` 4 KB of each console message (the page here logs a megabyte).

Runner memory over a long run (1,000 steps) is measured by ``bench/rss.py``, not
asserted here. The scenarios are mostly pure steps (``let``, ``push``, ``log``) plus a
few browser steps against a page served on 127.0.0.1 by the test, on real Chromium.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from events import answer_to, append_command, read_events, read_lines, wait_for_event
from procs import outlivers, stop_tree, wait_for_run_dir
from sites import config_yaml, unotest_env, write_project

UNOTEST = Path(sys.executable).with_name("unotest")
RUN_TIMEOUT_S = 90
EVENT_TIMEOUT_S = 45
MAX_VAR = 4096
MARKER_VAR = "RELIABILITY_TEST_MARKER"

PAGE = """\
<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Bounds</title>
<link rel="icon" href="data:,"></head>
<body><h1>Bounds</h1><label>Item <input id="item"></label>
<p id="out"></p>
<script>
  if (location.search === "?huge") {
    // A page that logs a megabyte: the bundle's console.json keeps 4 KB of it.
    console.log("huge " + "m".repeat(1024 * 1024));
  }
  document.getElementById("item").addEventListener("input", (e) => {
    document.getElementById("out").textContent = "got " + e.target.value;
  });
</script></body></html>
"""

FIXED_STEPS = 6  # goto, fill, expect_text, let items, the for's last step, expect_count-like


def long_scenario(iterations: int) -> str:
    """3 steps per iteration (the ``for`` binding, ``push``, ``log``) + 6 fixed steps."""
    return f"""\
// id-long-{iterations}
// Many pure steps, a few browser steps, a list that grows at every step
// #334155
function test_long() {{
  goto("/index.html")
  fill(css("#item"), "first")
  expect_text(css("#out"), "got first")
  let items = []
  for (const i of range({iterations})) {{
    items.push(i)
    log("item", i)
  }}
  expect_equal(len(items), {iterations})
}}
"""


HUGE = """\
// id-huge
// Huge values in scope: runtime.json and steps.jsonl stay small
// #9333ea
function test_huge() {
  goto("/index.html?huge")
  fill(css("#item"), "x")
  let big = "abcdefgh"
  for (const i of range(17)) {
    big = big + big
  }
  let list = range(20000)
  let both = { big: big, list: list }
  let long_line = "LONG_LITERAL_START_%s_END"
  expect_equal(big, "short")
}
""" % ("z" * 1000)
HUGE_BREAK = "14:2"  # the failing expect_equal
BIG_CHARS = 8 * 2**17  # 1 MiB


# --- processes ------------------------------------------------------------------------------


@dataclass
class Run:
    proc: subprocess.Popen[bytes]
    project: Path
    err: Path
    _run_dir: Path | None = None

    @property
    def run_dir(self) -> Path:
        """The run directory whose manifest names this process (waits for it)."""
        if self._run_dir is None:
            self._run_dir = wait_for_run_dir(
                self.project,
                self.proc,
                EVENT_TIMEOUT_S,
                lambda: self.err.read_text(errors="replace"),
            )
        return self._run_dir

    def wait(self) -> int:
        code = self.proc.wait(timeout=RUN_TIMEOUT_S)
        stderr = self.err.read_text(errors="replace")
        assert "Traceback" not in stderr, stderr
        return code


@pytest.fixture
def launch(
    tmp_path: Path, chromium_path: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[..., Run]]:
    """``launch(project, *args)`` starts ``unotest ...``; no process of it survives the test.

    Every run carries a marker in its environment, and so does its Chromium: one that
    outlived its runner is found (and killed) at teardown.
    """
    marker = uuid.uuid4().hex
    monkeypatch.setenv(MARKER_VAR, marker)  # unotest_env() copies os.environ
    started: list[subprocess.Popen[bytes]] = []

    def start(project: Path, *args: str) -> Run:
        err = tmp_path / f"run{len(started)}.err"
        with open(err, "wb") as err_file:
            proc = subprocess.Popen(
                [str(UNOTEST), *args],
                cwd=project,
                env=unotest_env(),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err_file,
            )
        started.append(proc)
        return Run(proc, project, err)

    try:
        yield start
    finally:
        for proc in started:  # a run still going (a failed test): SIGTERM, then its tree
            stop_tree(proc)
        left = outlivers(MARKER_VAR, marker)
    assert not left, f"processes left behind: {left}"


@pytest.fixture
def site(static_site: str, tmp_path: Path) -> str:
    (tmp_path / "index.html").write_text(PAGE, encoding="utf-8")
    return static_site


def make_project(root: Path, base_url: str, name: str, source: str) -> Path:
    timeout = {"action": 3000, "expect": 1000, "navigation": 15000, "scenario": 60000}
    return write_project(root, config_yaml(base_url, timeout=timeout), {name: source})


def send(run: Run, cmd: str, **fields: Any) -> dict[str, Any]:
    """Append a command; the last answer to it (``command:result`` for eval)."""
    ident = append_command(run.run_dir, cmd, **fields)
    _, event = wait_for_event(run, answer_to(ident, cmd))
    assert event["kind"] == ("command:result" if cmd == "eval" else "command:applied"), event
    return event


# --- 1. steps.jsonl in proportion to the steps --------------------------------------------------


def test_steps_jsonl_grows_in_proportion_to_the_steps(
    tmp_path: Path, site: str, launch: Callable[..., Run]
) -> None:
    sizes: dict[int, tuple[int, int]] = {}
    runs = {}
    for target in (200, 400):
        iterations = (target - FIXED_STEPS) // 3
        project = make_project(
            tmp_path / f"long{target}", site, f"long{target}", long_scenario(iterations)
        )
        runs[target] = launch(project, "e2e", f"long{target}")  # both run at once
    for target, run in runs.items():
        assert run.wait() == 0
        events = read_events(run.run_dir)
        steps = sum(e["kind"] == "step:started" for e in events)
        assert abs(steps - target) <= 10, (target, steps)
        assert sum(e["kind"] == "step:ok" for e in events) == steps
        sizes[target] = ((run.run_dir / "steps.jsonl").stat().st_size, steps)

    (small_bytes, small_steps), (large_bytes, large_steps) = sizes[200], sizes[400]
    per_step_small = small_bytes / small_steps
    per_step_large = large_bytes / large_steps
    marginal = (large_bytes - small_bytes) / (large_steps - small_steps)
    # Two events per step (started + ok) of a hundred-odd bytes each; the scope, which
    # grows here at every step, is in none of them.
    assert 100 < per_step_small < 600, per_step_small
    assert 1 / 1.5 < per_step_large / per_step_small < 1.5, (per_step_small, per_step_large)
    assert 1 / 1.5 < marginal / per_step_small < 1.5, (per_step_small, marginal)


# --- 2. runtime.json and steps.jsonl with huge values --------------------------------------------


def test_huge_values_are_cut_in_runtime_json_steps_jsonl_and_the_bundle(
    tmp_path: Path, site: str, launch: Callable[..., Run]
) -> None:
    project = make_project(tmp_path / "huge", site, "huge", HUGE)
    run = launch(project, "e2e", "huge", "--debug", "--break", HUGE_BREAK)

    at, paused = wait_for_event(run, lambda e: e["kind"] == "paused")
    runtime_bytes = (run.run_dir / "runtime.json").read_bytes()
    runtime = json.loads(runtime_bytes)
    assert runtime["state"] == "paused-breakpoint"
    assert set(runtime["vars"]) >= {"big", "list", "both", "long_line"}
    for name in ("big", "list", "both"):
        assert len(runtime["vars"][name]) == MAX_VAR and runtime["vars"][name].endswith("…")
        assert len(paused["snapshot"]["vars"][name]) == MAX_VAR
    # Six variables of at most 4 KB each, nothing of the megabyte.
    assert len(runtime_bytes) < 6 * MAX_VAR * 1.2, len(runtime_bytes)

    assert send(run, "eval", expr="len(big)")["value"] == str(BIG_CHARS)
    assert len(send(run, "eval", expr="both")["value"]) == MAX_VAR

    send(run, "continue")
    wait_for_event(run, lambda e: e["kind"] == "paused" and e["reason"] == "failure", after=at + 1)
    failure_runtime = (run.run_dir / "runtime.json").read_bytes()
    message = json.loads(failure_runtime)["lastFailure"]["error"]["message"]
    assert len(message) == MAX_VAR and message.startswith('expected "short", received "abcd')
    assert len(failure_runtime) < 7 * MAX_VAR * 1.2, len(failure_runtime)
    send(run, "continue")
    assert run.wait() == 1

    lines = read_lines(run.run_dir)
    assert max(map(len, lines)) < 6 * MAX_VAR * 1.3  # the largest: a paused snapshot
    events = [json.loads(line) for line in lines]
    texts = [e["text"] for e in events if e["kind"] == "step:started"]
    [long_text] = [t for t in texts if "LONG_LITERAL_START" in t]
    assert len(long_text) == 200 and long_text.endswith("…")
    assert max(map(len, texts)) <= 200
    [fail] = [e for e in events if e["kind"] == "step:fail"]
    assert len(fail["error"]) == MAX_VAR
    assert (run.run_dir / "steps.jsonl").stat().st_size < 100_000

    [bundle] = (project / ".unotest" / "failures").iterdir()
    error = json.loads((bundle / "error.json").read_text())
    assert 60_000 < len(error["error"]) <= 65_536  # a megabyte message, kept to 64 KB
    assert all(len(value) <= MAX_VAR for value in error["vars"].values())
    assert (bundle / "error.json").stat().st_size < 100_000
    console = json.loads((bundle / "console.json").read_text())
    [huge] = [m for m in console if m["text"].startswith("huge ")]
    assert len(huge["text"]) == MAX_VAR and huge["text"].endswith("…")
    assert (bundle / "console.json").stat().st_size < 20_000
