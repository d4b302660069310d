"""The debugger end to end: real Chromium, ``unotest e2e --debug`` driven like a person.

Each test builds a small project in ``tmp_path`` (``unotest.config.yaml`` with short
timeouts and the baseURL of ``site_debugger/`` served on 127.0.0.1, scenarios, a
helper, sometimes ``unotest/.debugger.json``), starts ``unotest e2e ... --debug`` as
a subprocess and drives it the two ways runner.md §3 offers: through
``commands.jsonl`` (``unotest dbg`` subprocesses, or JSON lines appended directly)
while reading ``steps.jsonl`` / ``runtime.json``, and through the terminal prompt on
a pseudo-terminal. Independent runs of one test are started together; every
process is stopped in a fixture's teardown whatever happens.

Covered: breakpoints from ``--break L:C``, ``--break L`` and ``.debugger.json``
(scenario and ``_helpers/<name>`` keys) and the warning for one that matches no
statement; the ``paused`` snapshot and runtime.json while paused (schema and keys);
``step`` into / ``step-over`` / ``step-out`` of a helper; ``pause`` while running;
``continue`` and the ``resumed`` events (``by`` + ``cmd``); ``abort`` during an
auto-wait (fast, no Chromium left); pause on failure with ``retry`` / ``skip`` /
``continue``; ``eval`` (read, assign, drive the page, errors); malformed and
concurrent ``commands.jsonl`` writers; ``--step``; the heartbeat and the scenario
timeout while paused; ``unotest inspect`` / ``unotest dbg``; the prompt on a TTY and
no prompt without one.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from events import append_command, append_raw, is_kind, read_events, wait_for_event
from net import serve_directory
from procs import alive as _alive
from procs import cmdline as _cmdline
from procs import descendants as _descendants
from procs import stop_tree, wait_for_run_dir
from protocol_keys import (
    ADDITIVE_KINDS,
    RUNTIME_ADDITIVE_KEYS,
    RUNTIME_IN_A_CALL_KEYS,
    RUNTIME_KEYS,
)
from protocol_schemas import validate
from sites import config_yaml, unotest_env, write_project

SITE = Path(__file__).resolve().parent / "site_debugger"
RUN_TIMEOUT_S = 90
EVENT_TIMEOUT_S = 45

_BIN = Path(sys.executable).with_name("unotest")
UNOTEST = [str(_BIN)] if _BIN.is_file() else [sys.executable, "-m", "unotest"]

MAIN_FILE = "unotest/e2e/flows/main.test.js"
NOTES_FILE = "unotest/e2e/_helpers/notes.js"
NOTES = """\
// Notes: a helper with two steps, to step into, over and out of.

function note(text) {
  let shout = text + "!"
  log(shout)
}
"""

MAIN = """\
// id-flows-main
// The debugger's main flow
// #2563eb
function test_main() {
  goto("/index.html")
  const save = role("button", "Save")
  let expected = 2
  let n = 1; let label = "start"
  note(label)
  note("again")
  note("third")
  expect_equal(expected + n, 6)
  click(save)
  expect_text(css("#status"), "saved")
}
"""

STORED_FILE = "unotest/e2e/flows/stored.test.js"
STORED = """\
// id-flows-stored
// Breakpoints stored in .debugger.json
// #16a34a
function test_stored() {
  goto("/index.html")
  let a = 1
  note("from stored")
  let b = a + 1; let c = b + 1
  expect_equal(c, 3)
}
"""

FAILING = """\
// id-flows-failing
// Fails until the page is fixed
// #dc2626
function test_failing() {
  goto("/index.html")
  let n = 1
  expect_visible(css("#ready"))
  n = n + 1
  log("n is " + n)
}
"""

WAITS = """\
// id-flows-waits
// Long steps to pause in the middle of
// #7c3aed
function test_waits() {
  goto("/index.html")
  wait(1500)
  wait(1500)
  let done = 1
}
"""

QUICK = """\
// id-flows-quick
// Shorter than its scenario timeout, unless a pause counted
// #0ea5e9
function test_quick() {
  goto("/index.html")
  let x = 1
  wait(1000)
  let y = x + 1
}
"""

HANG = """\
// id-flows-hang
// Waits for something that never appears
// #f59e0b
function test_hang() {
  goto("/index.html")
  wait_for(css("#never"))
}
"""

STEPS = """\
// id-flows-steps
// Three plain steps
// #64748b
function test_steps() {
  goto("/index.html")
  let k = 1
  expect_equal(k, 1)
}
"""

SAVE_LOCATOR = '<Locator role=button name="Save">'


class _AnyInt:
    def __eq__(self, other: object) -> bool:
        return isinstance(other, int)


ANY_INT = _AnyInt()


# --- site, projects, processes ----------------------------------------------------------


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    """``site_debugger/`` at ``http://127.0.0.1:PORT``."""
    with serve_directory(SITE, "debugger-site") as url:
        yield url


def make_project(
    root: Path,
    site: str,
    scenarios: dict[str, str],
    *,
    action: int = 2000,
    scenario: int = 60000,
    debugger: dict[str, Any] | None = None,
) -> Path:
    timeout = {"action": action, "expect": action, "navigation": 15000, "scenario": scenario}
    files = {} if debugger is None else {"unotest/.debugger.json": json.dumps(debugger)}
    return write_project(
        root,
        config_yaml(site, timeout=timeout),
        scenarios,
        helpers={"notes": NOTES},
        files=files,
    )


@dataclass
class Run:
    proc: subprocess.Popen[bytes]
    project: Path
    out_path: Path | None
    err_path: Path | None
    _run_dir: Path | None = None

    @property
    def stdout(self) -> str:
        return self.out_path.read_text(errors="replace") if self.out_path else ""

    @property
    def stderr(self) -> str:
        return self.err_path.read_text(errors="replace") if self.err_path else ""

    @property
    def run_dir(self) -> Path:
        """The run directory whose manifest names this process (waits for it)."""
        if self._run_dir is None:
            self._run_dir = wait_for_run_dir(
                self.project, self.proc, EVENT_TIMEOUT_S, lambda: f"{self.stdout}\n{self.stderr}"
            )
        return self._run_dir

    @property
    def run_id(self) -> str:
        return self.run_dir.name

    def wait(self, timeout: float = RUN_TIMEOUT_S) -> int:
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(
                f"unotest did not end within {timeout} s\n{self.stdout}\n{self.stderr}"
            ) from None
        assert "Traceback" not in self.stderr, self.stderr
        assert "Traceback" not in self.stdout, self.stdout
        return code


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM (the runner closes its browser), then SIGKILL the whole tree.

    A runner already reaped is left alone: its pid may name another process by now.
    """
    if proc.poll() is None:
        stop_tree(proc)


@pytest.fixture
def launch(tmp_path: Path) -> Iterator[Callable[..., Run]]:
    """``launch(project, *args)`` starts ``unotest ...``; everything is stopped at teardown."""
    started: list[subprocess.Popen[bytes]] = []
    counter = iter(range(1000))

    def start(
        project: Path,
        *args: str,
        stdin: Any = subprocess.DEVNULL,
        stdout: Any = None,
        close_stdin: bool = False,
    ) -> Run:
        index = next(counter)
        out_path = err_path = None
        if stdout is None:
            out_path = tmp_path / f"run{index}.out"
            err_path = tmp_path / f"run{index}.err"
            out_file, err_file = open(out_path, "wb"), open(err_path, "wb")  # noqa: SIM115
        else:
            out_file = err_file = stdout
        argv = [*UNOTEST, *args]
        if close_stdin:  # exec'd by the shell, so the pid is the runner's own
            argv = ["/bin/sh", "-c", 'exec "$0" "$@" <&-', *argv]
            stdin = None
        try:
            proc = subprocess.Popen(
                argv,
                cwd=project,
                env=unotest_env(NO_COLOR="1"),
                stdin=stdin,
                stdout=out_file,
                stderr=err_file,
            )
        finally:
            if stdout is None:
                out_file.close()
                err_file.close()
        started.append(proc)
        return Run(proc, project, out_path, err_path)

    try:
        yield start
    finally:
        for proc in started:
            _stop(proc)


def dbg_all(project: Path, *commands: tuple[str, ...]) -> list[subprocess.CompletedProcess[str]]:
    """Run several ``unotest`` commands at once (each start costs a Python import)."""
    procs = [
        subprocess.Popen(
            [*UNOTEST, *words],
            cwd=project,
            env=unotest_env(NO_COLOR="1"),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for words in commands
    ]
    done = []
    try:
        for proc in procs:
            out, err = proc.communicate(timeout=60)
            done.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return done


def dbg(project: Path, *words: str) -> subprocess.CompletedProcess[str]:
    return dbg_all(project, words)[0]


# --- reading and writing the run directory -------------------------------------------------


def is_answer(event: dict[str, Any]) -> bool:
    return event["kind"] in ("command:applied", "command:rejected")


def wait_paused(run: Run, after: int = 0, **fields: Any) -> tuple[int, dict[str, Any]]:
    return wait_for_event(run.run_dir, is_kind("paused", **fields), after=after)


def send(run: Run, cmd: str, **fields: Any) -> int:
    """Append a command, wait for its ``command:applied``; returns that event's index."""
    ident = append_command(run.run_dir, cmd, **fields)
    index, event = wait_for_event(
        run.run_dir, lambda e: e.get("id") == ident and e["kind"].startswith("command:")
    )
    assert event["kind"] == "command:applied", event
    return index


def runtime(run: Run) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((run.run_dir / "runtime.json").read_text())
    return data


def wait_runtime(run: Run, predicate: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    deadline = time.monotonic() + EVENT_TIMEOUT_S
    while True:
        state = runtime(run)
        if predicate(state):
            return state
        assert time.monotonic() < deadline, state
        time.sleep(0.02)


def resumes(events: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(e["by"], e["cmd"]) for e in events if e["kind"] == "resumed"]


def check_runtime_paused(
    data: dict[str, Any], validate: Callable[[str, object], None], **expected: Any
) -> None:
    """runtime.json while paused: every key of runner.md §2 (ours included), then the schema."""
    # frameVars (ours) only at a pause inside a helper call
    known = RUNTIME_KEYS | RUNTIME_ADDITIVE_KEYS
    assert known <= set(data) <= known | RUNTIME_IN_A_CALL_KEYS, data
    assert isinstance(data["updatedAt"], int) and isinstance(data["vars"], dict)
    assert all(isinstance(v, str) for v in data["vars"].values()), data["vars"]
    for frame in data["callStack"]:
        assert set(frame) == {"fn", "file", "line"}, frame
    for key, value in expected.items():
        assert data[key] == value, (key, data[key], value)
    validate("RuntimeStateFile", data)


# --- 1. breakpoint, snapshot, runtime.json, inspect, eval, stepping -----------------------


def test_breakpoint_snapshot_inspect_eval_and_stepping(
    tmp_path: Path,
    site: str,
    launch: Callable[..., Run],
) -> None:
    project = make_project(tmp_path / "proj", site, {"flows/main": MAIN})
    run = launch(project, "e2e", "flows/main", "--break", "9:2")
    index, paused = wait_paused(run)

    # The inline snapshot: vars as JSON text, Locators readable; no frame at top level.
    variables = {"save": SAVE_LOCATOR, "expected": "2", "n": "1", "label": '"start"'}
    assert paused == {
        "kind": "paused",
        "reason": "breakpoint",
        "line": 9,
        "col": 2,
        "snapshot": {"vars": variables, "callStack": []},
        "t": paused["t"],
    }
    validate("RunArtifact", paused)
    events = read_events(run.run_dir)
    started = [(e["line"], e["col"]) for e in events[:index] if e["kind"] == "step:started"]
    assert started == [(5, 2), (6, 2), (7, 2), (8, 2), (8, 13)]  # before 9:2, not after

    state = runtime(run)
    check_runtime_paused(
        state,
        validate,
        runId=run.run_id,
        scenario="flows/main",
        testFn="test_main",
        state="paused-breakpoint",
        current={"line": 9, "col": 2},
        file=MAIN_FILE,
        vars=variables,
        callStack=[],
        lastFailure=None,
        page={"url": f"{site}/index.html", "title": "Debugger home"},
        breakpoints={MAIN_FILE: ["9:2"]},
    )

    # `unotest inspect`, readable and as JSON; `unotest dbg eval` prints the value.
    human, as_json, plus_one, broken = dbg_all(
        project,
        ("inspect", run.run_id),
        ("inspect", run.run_id, "--json"),
        ("dbg", run.run_id, "eval", "expected + 1"),
        ("dbg", run.run_id, "eval", "no_such_fn(1)"),
    )
    assert human.returncode == 0, human.stderr
    lines = human.stdout.splitlines()
    assert f"run       {run.run_id}  (flows/main, test_main)" in lines
    assert "state     paused-breakpoint" in lines
    assert f"at        {MAIN_FILE}:9:2" in lines
    assert "          note(label)" in lines
    assert "stack     (test function)" in lines
    assert f"page      Debugger home  {site}/index.html" in lines
    assert f"  save     = {SAVE_LOCATOR}" in lines and '  label    = "start"' in lines
    assert f"breaks    {MAIN_FILE} 9:2" in lines
    # (the evals ran at the same time and may have rewritten runtime.json since)
    assert as_json.returncode == 0
    assert json.loads(as_json.stdout) in (state, {**runtime(run), "updatedAt": ANY_INT})
    assert (plus_one.returncode, plus_one.stdout) == (0, "3\n"), plus_one
    assert broken.returncode == 1 and broken.stdout.startswith("error: "), broken
    events = read_events(run.run_dir)
    results = sorted(
        (e for e in events if e["kind"] == "command:result"), key=lambda e: not e["ok"]
    )
    assert [(r["ok"], r.get("value")) for r in results] == [(True, "3"), (False, None)]
    assert "no_such_fn" in results[1]["error"]
    applied = [e["cmd"] for e in events if e["kind"] == "command:applied"]
    assert applied == ["eval", "eval"]

    # step INTO the helper: the call stack grows by the helper's frame.
    stepped = dbg(project, "dbg", run.run_id, "step")
    assert (stepped.returncode, stepped.stdout) == (0, "applied: step\n"), stepped
    index, paused = wait_paused(run, index + 1, reason="step")
    assert (paused["line"], paused["col"]) == (4, 2)
    assert paused["snapshot"] == {
        "vars": {"text": '"start"'},
        "callStack": [{"fn": "note", "file": NOTES_FILE, "line": 4}],
    }
    state = runtime(run)
    check_runtime_paused(
        state,
        validate,
        state="paused-step",
        current={"line": 4, "col": 2},
        file=NOTES_FILE,
        callStack=[{"fn": "note", "file": NOTES_FILE, "line": 4}],
    )
    send(run, "step")
    index, paused = wait_paused(run, index + 1, reason="step", line=5)
    assert paused["snapshot"]["callStack"] == [{"fn": "note", "file": NOTES_FILE, "line": 5}]
    assert paused["snapshot"]["vars"] == {"text": '"start"', "shout": '"start!"'}
    send(run, "step")  # the helper's last statement: next stop is back in the caller
    index, paused = wait_paused(run, index + 1, reason="step")
    assert (paused["line"], paused["col"], paused["snapshot"]["callStack"]) == (10, 2, [])

    # step-over runs the whole helper call without pausing inside it.
    send(run, "step-over")
    over_from = index
    index, paused = wait_paused(run, index + 1, reason="step")
    assert (paused["line"], paused["col"]) == (11, 2)
    between = read_events(run.run_dir)[over_from + 1 : index]
    assert [(e["file"], e["line"], e["depth"]) for e in between if e["kind"] == "step:started"] == [
        (MAIN_FILE, 10, 0),
        (NOTES_FILE, 4, 1),
        (NOTES_FILE, 5, 1),
    ]

    # step into the third call, then step-out: the next pause is back in the caller.
    send(run, "step")
    index, paused = wait_paused(run, index + 1, reason="step")
    assert (paused["line"], paused["snapshot"]["callStack"][0]["fn"]) == (4, "note")
    send(run, "step-out")
    index, paused = wait_paused(run, index + 1, reason="step")
    assert (paused["line"], paused["col"], paused["snapshot"]["callStack"]) == (12, 2, [])
    assert runtime(run)["state"] == "paused-step"

    # eval assigns a variable: runtime.json shows it and the scenario now passes
    # (expect_equal(expected + n, 6) fails with the scenario's own values).
    ident = append_command(run.run_dir, "eval", expr="expected = 5")
    _, result = wait_for_event(run.run_dir, is_kind("command:result", id=ident), after=index)
    assert result["ok"] is True and result["value"] == "null"
    state = wait_runtime(run, lambda s: s["vars"].get("expected") == "5")
    assert state["state"] == "paused-step" and state["current"] == {"line": 12, "col": 2}

    send(run, "continue")
    assert run.wait() == 0, run.stdout + run.stderr
    events = read_events(run.run_dir)
    assert events[-1]["kind"] == "run:finished" and events[-1]["outcome"] == "completed"
    assert resumes(events) == [
        ("step", "step"),
        ("step", "step"),
        ("step", "step"),
        ("step", "step-over"),
        ("step", "step"),
        ("step", "step-out"),
        ("continue", "continue"),
    ]
    for event in events:
        if event["kind"] in ("paused", "resumed"):
            validate("RunArtifact", event)
    # Every resume follows the command:applied of the command that caused it.
    for position, event in enumerate(events):
        if event["kind"] == "resumed":
            previous = events[position - 1]
            assert (previous["kind"], previous["cmd"]) == ("command:applied", event["cmd"])
    assert "start!" in run.stdout and "third!" in run.stdout
    assert runtime(run)["state"] == "completed"

    # A finished run cannot be driven: exit 2 and one sentence.
    late = dbg(project, "dbg", run.run_id, "step")
    assert late.returncode == 2, late
    assert late.stdout == ""
    assert late.stderr.count("\n") == 1 and "finished" in late.stderr, late.stderr


# --- 2. stored breakpoints, helper frames, resolution of --break ----------------------------


def test_stored_breakpoints_helper_frames_and_break_resolution(
    tmp_path: Path,
    site: str,
    launch: Callable[..., Run],
) -> None:
    debugger = {
        "version": 1,
        "scenarios": {
            "flows/stored": [{"line": 6, "col": 2}],
            "_helpers/notes": [{"line": 5, "col": 2}],
            "flows/other": [{"line": 9, "col": 2}],  # another scenario's: ignored here
        },
    }
    validate("BreakpointsFile", debugger)
    project = make_project(tmp_path / "proj", site, {"flows/stored": STORED}, debugger=debugger)
    # --break 8: the first statement that starts on line 8 (8:2, not 8:17);
    # --break 9:5 matches nothing: warned with the nearest start, and kept.
    run = launch(project, "e2e", "flows/stored", "--debug", "--break", "8", "--break", "9:5")

    index, paused = wait_paused(run, reason="breakpoint")
    assert (paused["line"], paused["col"]) == (6, 2)
    assert paused["snapshot"] == {"vars": {}, "callStack": []}
    assert re.search(rf"{re.escape(STORED_FILE)}:9:5 .*nearest is 9:2", run.stderr), run.stderr
    state = runtime(run)
    check_runtime_paused(
        state,
        validate,
        state="paused-breakpoint",
        current={"line": 6, "col": 2},
        file=STORED_FILE,
        breakpoints={STORED_FILE: ["6:2", "8:2", "9:5"], NOTES_FILE: ["5:2"]},
    )

    # Two `continue` in one write (a viewer click and a prompt `c` at once): the first
    # resumes, the second must not linger and resume the *next* pause by itself.
    first, second = "dup-continue-1", "dup-continue-2"
    append_raw(
        run.run_dir,
        (
            json.dumps({"id": first, "cmd": "continue"})
            + "\n"
            + json.dumps({"id": second, "cmd": "continue"})
            + "\n"
        ).encode(),
    )
    _, rejected = wait_for_event(run.run_dir, lambda e: e.get("id") == second, after=index)
    assert rejected["kind"] == "command:rejected", rejected

    # The helper's breakpoint (from its `_helpers/notes` key): the frame names its file.
    index, paused = wait_paused(run, index + 1, reason="breakpoint")
    assert (paused["line"], paused["col"]) == (5, 2)
    frames = [{"fn": "note", "file": NOTES_FILE, "line": 5}]
    assert paused["snapshot"]["callStack"] == frames
    check_runtime_paused(
        runtime(run), validate, state="paused-breakpoint", file=NOTES_FILE, callStack=frames
    )
    assert runtime(run)["current"] == {"line": 5, "col": 2}
    events = read_events(run.run_dir)
    assert [e.get("id") for e in events if e["kind"] == "command:applied"] == [first]

    send(run, "continue")
    index, paused = wait_paused(run, index + 1, reason="breakpoint")
    assert (paused["line"], paused["col"], paused["snapshot"]["callStack"]) == (8, 2, [])
    assert paused["snapshot"]["vars"] == {"a": "1"}
    send(run, "continue")
    assert run.wait() == 0, run.stdout + run.stderr
    events = read_events(run.run_dir)
    assert [(e["line"], e["col"]) for e in events if e["kind"] == "paused"] == [
        (6, 2),
        (5, 2),
        (8, 2),
    ]
    assert resumes(events) == [("continue", "continue")] * 3
    assert events[-1] == {**events[-1], "kind": "run:finished", "outcome": "completed"}


# --- 3. pause on failure: retry after fixing the page, skip, continue ----------------------


def test_failure_pause_retry_skip_and_continue(
    tmp_path: Path,
    site: str,
    launch: Callable[..., Run],
) -> None:
    project = make_project(tmp_path / "proj", site, {"flows/failing": FAILING}, action=1000)
    retry, skip, cont = (launch(project, "e2e", "flows/failing", "--debug") for _ in range(3))
    at_failure: dict[int, int] = {}
    for run in (retry, skip, cont):
        index, paused = wait_paused(run, reason="failure")
        at_failure[run.proc.pid] = index
        assert (paused["line"], paused["col"]) == (7, 2)
        assert paused["snapshot"] == {"vars": {"n": "1"}, "callStack": []}
        events = read_events(run.run_dir)
        # The failed step is closed before its pause (a 0.5.0 reader pairs every
        # step:started with its step:ok or step:fail), then the pause says why.
        kinds = [e["kind"] for e in events[:index] if e["kind"] != "page:image"]  # ours
        assert kinds[-2:] == ["step:started", "step:fail"]
        state = runtime(run)
        check_runtime_paused(state, validate, state="paused-failure", current={"line": 7, "col": 2})
        failure = state["lastFailure"]
        assert (failure["line"], failure["col"]) == (7, 2)
        assert failure["error"]["message"] and failure["error"]["name"], failure

    # retry at a breakpoint-less failure: fix the page through eval, then re-run it.
    fixed = dbg(project, "dbg", retry.run_id, "eval", 'click("Enable")')
    assert fixed.returncode == 0, fixed
    send(retry, "retry")
    # skip: the failed statement is left, and the next one is paused before.
    send(skip, "skip")
    index, paused = wait_paused(skip, at_failure[skip.proc.pid] + 1)
    assert (paused["reason"], paused["line"], paused["col"]) == ("step", 8, 2)
    assert runtime(skip)["state"] == "paused-step"
    # skip at a step pause: `n = n + 1` never runs, and the next one is paused before.
    send(skip, "skip")
    wait_paused(skip, index + 1, line=9)
    send(skip, "continue")
    # continue at a failure pause: the run ends as failed.
    send(cont, "continue")

    assert retry.wait() == 0, retry.stdout + retry.stderr
    assert skip.wait() == 0, skip.stdout + skip.stderr
    assert cont.wait() == 1, cont.stdout + cont.stderr

    events = read_events(retry.run_dir)
    assert resumes(events) == [("continue", "retry")]
    after = events[at_failure[retry.proc.pid] :]
    kinds = [e["kind"] for e in after]
    assert "step:fail" not in kinds  # the failed attempt was closed before its pause
    seven = [e for e in events if e["kind"] == "step:started" and e["line"] == 7]
    assert len(seven) == 2  # the failed attempt and the retry
    assert "n is 2" in retry.stdout
    assert events[-1]["outcome"] == "completed"

    events = read_events(skip.run_dir)
    assert resumes(events) == [("step", "skip"), ("step", "skip"), ("continue", "continue")]
    skipped = [e for e in events if e["kind"] == "step:skipped"]
    # The failed statement has its step:started; the one that never ran says its text.
    assert [(e["line"], e["col"], e.get("text")) for e in skipped] == [
        (7, 2, None),
        (8, 2, "n = n + 1"),
    ]
    # The failed attempt closed as failed before the pause; our step:skipped follows.
    kinds = [e["kind"] for e in events]
    assert kinds.count("step:fail") == 1
    failed_at = kinds.index("step:fail")
    assert (events[failed_at - 1]["kind"], events[failed_at - 1]["line"]) == ("step:started", 7)
    assert kinds.index("step:fail") < kinds.index("paused") < kinds.index("step:skipped")
    assert "n is 1" in skip.stdout and events[-1]["outcome"] == "completed"
    # A pass with a failure skipped by a person does not read as a clean pass.
    assert "note: 1 failed step was skipped at the debugger's failure pause" in skip.stdout
    assert "skipped at the debugger" not in retry.stdout
    assert re.search(r"↷ 7:2\s+expect_visible", skip.stdout), skip.stdout
    assert re.search(r"↷ 8:2\s+n = n \+ 1", skip.stdout), skip.stdout

    events = read_events(cont.run_dir)
    assert resumes(events) == [("continue", "continue")]
    kinds = [e["kind"] for e in events]
    assert kinds.index("step:fail") < kinds.index("paused")
    assert kinds[-3:] == ["resumed", "failure-bundle:written", "run:finished"]
    assert events[-1]["outcome"] == "failed" and runtime(cont)["state"] == "failed"
    assert "n is" not in cont.stdout


def test_an_abort_at_a_failure_pause_keeps_the_failure_and_its_bundle(
    tmp_path: Path,
    site: str,
    launch: Callable[..., Run],
) -> None:
    """The step had failed before anyone aborted: its step:fail says what failed (not
    "the run was aborted"), and the page at the pause is the failure's own, so the run
    keeps its failure bundle; it still ends as aborted."""
    nested = (
        FAILING.replace("flows-failing", "flows-nested").replace(
            '  expect_visible(css("#ready"))\n', "  check_ready()\n"
        )
        + 'function check_ready() {\n  expect_visible(css("#ready"))\n}\n'
    )
    project = make_project(
        tmp_path / "proj", site, {"flows/failing": FAILING, "flows/nested": nested}, action=1000
    )
    top = launch(project, "e2e", "flows/failing", "--debug")
    inner = launch(project, "e2e", "flows/nested", "--debug")
    for run in (top, inner):
        wait_paused(run, reason="failure")
        aborted = dbg(project, "dbg", run.run_id, "abort")
        assert aborted.returncode == 0, aborted
    for run, chain in ((top, 1), (inner, 2)):
        assert run.wait() == 130, run.stdout + run.stderr
        events = read_events(run.run_dir)
        kinds = [e["kind"] for e in events]
        failed = [e for e in events if e["kind"] == "step:fail"]
        # The failed step and, in a function, the call to it: each says what failed.
        assert [e["errorName"] for e in failed] == ["AssertionError"] * chain, failed
        assert all("#ready" in e["error"] for e in failed), failed
        assert kinds.count("failure-bundle:written") == 1, kinds
        bundle = events[kinds.index("failure-bundle:written")]
        assert kinds.index("failure-bundle:written") > max(
            i for i, kind in enumerate(kinds) if kind == "step:fail"
        ), kinds
        assert (project / bundle["bundlePath"] / "error.json").is_file(), bundle
        assert events[-1]["kind"] == "run:finished" and events[-1]["outcome"] == "aborted"
        for event in events:
            if event["kind"] not in ADDITIVE_KINDS:  # ours are not 0.5.0's
                validate("RunArtifact", event)


# --- 4. pause while running; the scenario timeout and the heartbeat while paused --------------


def test_pause_while_running_heartbeat_and_timeout_while_paused(
    tmp_path: Path,
    site: str,
    launch: Callable[..., Run],
) -> None:
    waits_project = make_project(tmp_path / "waits", site, {"flows/waits": WAITS})
    quick_project = make_project(tmp_path / "quick", site, {"flows/quick": QUICK}, scenario=3000)
    waits = launch(waits_project, "e2e", "flows/waits", "--debug")
    quick = launch(quick_project, "e2e", "flows/quick", "--break", "6:2")

    # `pause` during wait(1500) on line 6: the pause comes before line 7.
    index, _ = wait_for_event(waits.run_dir, is_kind("step:started", line=6))
    applied = send(waits, "pause")
    index, paused = wait_paused(waits, applied + 1)
    assert (paused["reason"], paused["line"], paused["col"]) == ("step", 7, 2)
    between = [e["kind"] for e in read_events(waits.run_dir)[applied + 1 : index]]
    assert between == ["step:ok"]  # the running wait finished, nothing else started
    check_runtime_paused(runtime(waits), validate, state="paused-step")

    # The quick scenario is paused at 6:2 for 5 s, longer than its 3 s timeout.
    _, paused = wait_paused(quick, reason="breakpoint")
    began = time.monotonic()
    beat = (quick.run_dir / "heartbeat").stat().st_mtime
    send(waits, "continue")
    assert waits.wait() == 0, waits.stdout + waits.stderr
    time.sleep(max(0.0, 3.2 - (time.monotonic() - began)))
    later_beat = (quick.run_dir / "heartbeat").stat().st_mtime
    assert later_beat - beat >= 1.5, (beat, later_beat)  # touched at least every 2 s
    assert runtime(quick)["state"] == "paused-breakpoint"
    time.sleep(max(0.0, 5.0 - (time.monotonic() - began)))
    send(quick, "continue")
    assert quick.wait() == 0, quick.stdout + quick.stderr
    events = read_events(quick.run_dir)
    assert events[-1]["outcome"] == "completed"
    assert resumes(events) == [("continue", "continue")]
    assert resumes(read_events(waits.run_dir)) == [("continue", "continue")]


# --- 5. abort during an auto-wait; no prompt without a terminal -----------------------------


def test_abort_during_auto_wait_and_no_prompt_without_a_tty(
    tmp_path: Path,
    site: str,
    launch: Callable[..., Run],
) -> None:
    project = make_project(
        tmp_path / "proj",
        site,
        {"flows/hang": HANG, "flows/steps": STEPS},
        action=30000,
        scenario=120000,
    )
    hang = launch(project, "e2e", "flows/hang", "--debug")
    devnull = launch(project, "e2e", "flows/steps", "--break", "6:2")  # stdin /dev/null
    closed = launch(project, "e2e", "flows/steps", "--step", close_stdin=True)

    wait_for_event(hang.run_dir, is_kind("step:started", line=6))
    time.sleep(0.3)  # well inside the auto-waiting action
    tree = _descendants(hang.proc.pid)
    profiles = {
        m.group(1) for pid in tree if (m := re.search(r"--user-data-dir=(\S+)", _cmdline(pid)))
    }
    assert profiles, "no Chromium among the runner's processes"
    aborted = dbg(project, "dbg", hang.run_id, "abort")
    assert (aborted.returncode, aborted.stdout) == (0, "applied: abort\n"), aborted
    assert hang.wait(timeout=15) == 130, hang.stdout + hang.stderr
    events = read_events(hang.run_dir)
    applied = next(e for e in events if e["kind"] == "command:applied")
    assert applied["cmd"] == "abort"
    assert events[-1]["kind"] == "run:finished" and events[-1]["outcome"] == "aborted"
    # runner.md §3: the abort ends the auto-waiting action at once (about 1 s with the
    # browser closed on a quiet machine). The action's own timeout is 30 s: an abort that
    # waited for it would take that long, while a loaded CI machine took 2.3 s once.
    assert events[-1]["t"] - applied["t"] < 10_000, (applied, events[-1])
    assert [e["errorName"] for e in events if e["kind"] == "step:fail"] == ["AbortError"]
    assert runtime(hang)["state"] == "aborted"
    deadline = time.monotonic() + 10
    while True:
        left = [pid for pid, start in tree.items() if _alive(pid, start)]
        left += [
            int(p.name)
            for p in Path("/proc").iterdir()
            if p.name.isdigit() and any(prof in _cmdline(int(p.name)) for prof in profiles)
        ]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert not left, [(pid, _cmdline(pid)[:120]) for pid in left]

    # Without a terminal there is no prompt and nothing reads stdin: the pauses are
    # driven through commands.jsonl alone.
    for run, line in ((devnull, 6), (closed, 5)):
        _, paused = wait_paused(run)
        assert paused["line"] == line
        send(run, "continue")
        assert run.wait() == 0, run.stdout + run.stderr
        assert "(unotest)" not in run.stdout and "paused (" not in run.stdout


# --- 6. --step, malformed commands, concurrent writers -----------------------------------------

WRITER = """\
import json, os, sys
path, prefix = sys.argv[1], sys.argv[2]
fd = os.open(path, os.O_WRONLY | os.O_APPEND)
for i in range(200):
    cmd = {"id": f"{prefix}-{i}", "cmd": "set-bp" if i % 2 == 0 else "clear-bp", "line": 5}
    if i % 4 < 2:
        cmd["col"] = 2
    os.write(fd, (json.dumps(cmd) + "\\n").encode())
os.close(fd)
"""


def test_step_first_malformed_commands_and_concurrent_writers(
    tmp_path: Path,
    site: str,
    launch: Callable[..., Run],
) -> None:
    project = make_project(tmp_path / "proj", site, {"flows/steps": STEPS})
    run = launch(project, "e2e", "flows/steps", "--step")
    index, paused = wait_paused(run)
    assert (paused["reason"], paused["line"], paused["col"]) == ("step", 5, 2)
    assert not any(e["kind"] == "step:started" for e in read_events(run.run_dir))
    check_runtime_paused(runtime(run), validate, state="paused-step", current={"line": 5, "col": 2})
    run_dir = run.run_dir

    garbage = [
        b"this is not JSON",
        b'["a", "json", "array"]',
        b'{"cmd": "step"}',
        b'{"id": "g-unknown", "cmd": "fly"}',
        b'{"id": "g-noline", "cmd": "set-bp"}',
        b'{"id": "g-dup", "cmd": "set-bp", "line": 6, "col": 2}',
        b'{"id": "g-dup", "cmd": "continue"}',
        b'{"id": "g-retry", "cmd": "retry"}',
        b'{"id": "g-pause", "cmd": "pause"}',
        b'{"id": "g-clear", "cmd": "clear-bp", "line": 7, "col": 2}',
        b'{"id": "g-eval", "cmd": "eval"}',
    ]
    # Half a line is not read until its end arrives: it comes in the same write as the
    # garbage and stays unanswered while the ten answers to the garbage come.
    append_raw(run_dir, b"\n".join(garbage) + b"\n" + b'{"id": "g-split", "cmd": "ev')
    after = index + 1
    for _ in range(10):  # g-dup's `continue` is only warned about
        at, _ = wait_for_event(run_dir, is_answer, after=after)
        after = at + 1
    assert not any(e.get("id") == "g-split" for e in read_events(run_dir))
    append_raw(run_dir, b'al", "expr": "40 + 2"}\n')
    _, result = wait_for_event(run_dir, is_kind("command:result", id="g-split"))
    assert result["ok"] is True and result["value"] == "42"
    events = read_events(run_dir)[index + 1 :]
    answers = [e for e in events if e["kind"] in ("command:applied", "command:rejected")]
    # Sorted: commands valid only at a pause are answered by the scenario thread.
    summary = sorted(
        (e["kind"].split(":")[1], e.get("id") or "", e.get("cmd") or "") for e in answers
    )
    assert summary == sorted(
        [
            ("rejected", "", ""),
            ("rejected", "", ""),
            ("rejected", "", "step"),
            ("rejected", "g-unknown", "fly"),
            ("rejected", "g-noline", "set-bp"),
            ("applied", "g-dup", "set-bp"),
            ("rejected", "g-retry", "retry"),
            ("rejected", "g-pause", "pause"),
            ("rejected", "g-clear", "clear-bp"),
            ("rejected", "g-eval", "eval"),
            ("applied", "g-split", "eval"),
        ]
    ), summary
    assert all(e["reason"] for e in answers if e["kind"] == "command:rejected")
    # A reused id is never applied again (the `continue` did not resume) and answered
    # once in all: it is only warned about.
    assert "command id 'g-dup' was already used" in run.stderr, run.stderr
    assert run.stderr.count("unotest: commands.jsonl: ") >= 7, run.stderr
    assert not any(e["kind"] == "resumed" for e in read_events(run_dir))
    assert runtime(run)["breakpoints"] == {"unotest/e2e/flows/steps.test.js": ["6:2"]}
    send(run, "clear-bp", line=6)
    assert wait_runtime(run, lambda s: s["breakpoints"] == {})

    # Two processes append 200 set-bp / clear-bp each at once: each id answered once.
    seen_from = len(read_events(run_dir))
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(run_dir / "commands.jsonl"), prefix])
        for prefix in ("w1", "w2")
    ]
    try:
        assert [w.wait(timeout=30) for w in writers] == [0, 0]
    finally:
        for writer in writers:
            if writer.poll() is None:
                writer.kill()
    wanted = {f"{prefix}-{i}" for prefix in ("w1", "w2") for i in range(200)}
    deadline = time.monotonic() + 30
    while True:
        answered = [
            e["id"]
            for e in read_events(run_dir)[seen_from:]
            if e["kind"] in ("command:applied", "command:rejected") and "id" in e
        ]
        if set(answered) >= wanted or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert sorted(answered) == sorted(wanted), len(answered)
    lines = (run_dir / "commands.jsonl").read_bytes().split(b"\n")
    assert all(json.loads(line)["cmd"] for line in lines[-401:-1])  # never interleaved

    send(run, "continue")
    assert run.wait() == 0, run.stdout + run.stderr
    events = read_events(run_dir)
    assert [e["kind"] for e in events].count("paused") == 1
    assert events[-1]["outcome"] == "completed"


# --- 7. the terminal prompt ---------------------------------------------------------------------


class Terminal:
    """The master side of a pseudo-terminal: read until a text shows up, type lines."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.seen = ""
        self.mark = 0

    def read_until(self, needle: str, timeout: float = EVENT_TIMEOUT_S) -> str:
        """The output since the last call, up to and including ``needle``."""
        deadline = time.monotonic() + timeout
        while (found := self.seen.find(needle, self.mark)) < 0:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"{needle!r} never appeared; output:\n{self.seen}")
            ready, _, _ = select.select([self.fd], [], [], min(remaining, 0.2))
            if ready:
                try:
                    data = os.read(self.fd, 65536)
                except OSError:  # EIO: the other side is closed
                    data = b""
                if not data:
                    raise AssertionError(f"{needle!r} never appeared; output:\n{self.seen}")
                self.seen += data.decode("utf-8", "replace").replace("\r", "")
        chunk = self.seen[self.mark : found + len(needle)]
        self.mark = found + len(needle)
        return chunk

    def type(self, line: str) -> str:
        """Type a line and return what it printed up to the next prompt."""
        os.write(self.fd, line.encode() + b"\n")
        return self.read_until("(unotest) ")

    def drain(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.fd], [], [], 0.1)
            if ready:
                try:
                    data = os.read(self.fd, 65536)
                except OSError:
                    return
                if not data:
                    return
                self.seen += data.decode("utf-8", "replace").replace("\r", "")


def test_terminal_prompt_on_a_tty(tmp_path: Path, site: str, launch: Callable[..., Run]) -> None:
    project = make_project(tmp_path / "proj", site, {"flows/main": MAIN})
    master, slave = pty.openpty()
    run: Run | None = None
    try:
        run = launch(project, "e2e", "flows/main", "--break", "9:2", stdin=slave, stdout=slave)
        os.close(slave)
        slave = -1
        term = Terminal(master)
        shown = term.read_until("(unotest) ")
        assert f"paused (breakpoint) at {MAIN_FILE}:9:2" in shown, shown
        assert re.search(r"^ +9 -> +note\(label\)$", shown, re.M), shown
        assert re.search(r"^ +8    +let n = 1; let label = \"start\"$", shown, re.M), shown

        out = term.type("v")
        assert "  expected = 2" in out and f"  save = {SAVE_LOCATOR}" in out, out
        assert '  label = "start"' in out, out
        out = term.type("w")
        assert re.search(rf"test_main +{re.escape(MAIN_FILE)}:9", out), out
        out = term.type("l")
        assert re.search(r"^ +4 +function test_main\(\) \{$", out, re.M), out
        assert re.search(r"^ +9 -> +note\(label\)$", out, re.M), out
        assert re.search(r"^ +14 +expect_text", out, re.M), out
        out = term.type("help")
        assert "s(tep)" in out and "n(ext)" in out and "c(ontinue)" in out, out
        out = term.type("1 + 2")
        assert re.search(r"^3$", out, re.M), out
        # An assignment to a variable whose name is also a command is evaluated, as the
        # help line promises (`n = 3`): with n = 4, expect_equal(expected + n, 6) passes.
        out = term.type("n = 4")
        assert "paused" not in out, out
        out = term.type("v")
        assert "  n = 4" in out, out
        out = term.type("label")
        assert re.search(r'^"start"$', out, re.M), out
        out = term.type("no_such_fn()")
        assert "error: " in out, out

        out = term.type("n")  # step over the helper call
        assert f"paused (step) at {MAIN_FILE}:10:2" in out, out
        assert "start!" in out, out
        out = term.type("s")  # step into it
        assert f"paused (step) at {NOTES_FILE}:4:2" in out, out
        out = term.type("w")
        assert re.search(rf"note +{re.escape(NOTES_FILE)}:4", out), out
        # Ctrl-C at the prompt (the terminal's SIGINT): the run stays paused, as in pdb.
        run.proc.send_signal(signal.SIGINT)
        out = term.read_until("(unotest) ")
        assert "Ctrl-C: the run stays paused" in out, out
        assert runtime(run)["state"] == "paused-step"
        os.write(master, b"c\n")
        term.read_until("passed  flows/main")
        assert run.wait() == 0, term.seen
        term.drain(0.5)
        events = read_events(run.run_dir)
        assert resumes(events) == [
            ("step", "step-over"),
            ("step", "step"),
            ("continue", "continue"),
        ]
        ids = [e["id"] for e in events if e["kind"] in ("command:applied", "command:rejected")]
        assert ids and all(i.startswith("terminal-") for i in ids), ids
        assert len(ids) == len(set(ids))
        assert events[-1]["outcome"] == "completed"
        assert "Traceback" not in term.seen, term.seen
    finally:
        if run is not None:
            _stop(run.proc)  # while its terminal is still open
        if slave >= 0:
            os.close(slave)
        os.close(master)
