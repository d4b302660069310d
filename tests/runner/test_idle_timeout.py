"""``debug.idleTimeout``: a pause no command reaches ends the run ``aborted`` (issue 13, item 9).

Three levels: the key in ``unotest.config.yaml`` (values, defaults, one-sentence errors,
exit 2 from the CLI); the :class:`runner.debug.controller.DebugController` with a real
interpreter and a short timeout, where every command restarts the clock; and real
``unotest e2e`` runs on Chromium, one with a short timeout (it ends aborted and says
why, on stderr and in steps.jsonl) beside one with ``0`` (never), which stays paused
past the other's end and then completes when continued. No test measures how long
anything took: the order of events is the proof.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from events import append_command, is_kind, read_events, wait_for_event
from procs import stop_tree, wait_for_run_dir
from sites import config_yaml, scenario_source, unotest_env, write_project

from dsl.builtins import PureServices, make_pure_builtins
from dsl.errors import Interrupt, ScriptError
from dsl.interpreter import Directive, Interpreter, Step
from dsl.parser import parse_program
from runner.debug.breakpoints import Breakpoints
from runner.debug.controller import DebugController, format_duration
from runner.errors import ConfigError
from runner.project.config import CONFIG_FILE, Config, DebugConfig, load_config
from runner.project.positions import statement_starts
from runner.run.steps import render_var

_BIN = Path(sys.executable).with_name("unotest")
UNOTEST = [str(_BIN)] if _BIN.is_file() else [sys.executable, "-m", "unotest"]
FILE = "unotest/e2e/waits.test.js"
BODY = "  let a = 1\n  let b = a + 1\n  log('b is ' + b)\n"
IDLE_ID = "unotest-idle-timeout"


# --- the key ----------------------------------------------------------------------------


def load(root: Path, text: str) -> Config:
    (root / CONFIG_FILE).write_text(text, encoding="utf-8")
    return load_config(root, {})


def test_the_default_is_thirty_minutes(tmp_path: Path) -> None:
    assert load_config(tmp_path, {}).debug == DebugConfig(idle_timeout=1_800_000)
    assert load(tmp_path, "headless: true\n").debug.idle_timeout == 1_800_000
    assert load(tmp_path, "debug: {}\n").debug.idle_timeout == 1_800_000


@pytest.mark.parametrize(
    ("written", "ms"), [("0", 0), ("1500", 1500), ("1500.2", 1501), ("2147483647", 2**31 - 1)]
)
def test_valid_values(tmp_path: Path, written: str, ms: int) -> None:
    config = load(tmp_path, f"debug:\n  idleTimeout: {written}\n")
    assert config.debug.idle_timeout == ms
    assert config.warnings == ()


def test_an_unknown_key_under_debug_warns(tmp_path: Path) -> None:
    config = load(tmp_path, "debug: {idleTimout: 5}\n")
    assert config.debug == DebugConfig()
    assert config.warnings == (
        f"{CONFIG_FILE}:1: unknown key 'debug.idleTimout' is ignored (did you mean 'idleTimeout'?)",
    )


EXPECTED = "a number of milliseconds, 0 or more (0: a paused run waits forever)"
BAD_VALUES = [
    ("debug: {idleTimeout: 30m}", f"'debug.idleTimeout' must be {EXPECTED}, got \"30m\""),
    ("debug: {idleTimeout: -1}", f"'debug.idleTimeout' must be {EXPECTED}, got -1"),
    ("debug: {idleTimeout: true}", f"'debug.idleTimeout' must be {EXPECTED}, got true"),
    ("debug: {idleTimeout: .inf}", f"'debug.idleTimeout' must be {EXPECTED}, got inf"),
    ("debug: {idleTimeout: }", f"'debug.idleTimeout' must be {EXPECTED}, got nothing"),
    (
        "debug: {idleTimeout: 2147483648}",
        f"'debug.idleTimeout' must be {EXPECTED} up to 2147483647, got 2147483648",
    ),
    ("debug: 5", "'debug' must be a mapping with 'idleTimeout' in milliseconds, got 5"),
    ("debug:", "'debug' must be a mapping with 'idleTimeout' in milliseconds, got nothing"),
]


@pytest.mark.parametrize(("text", "message"), BAD_VALUES)
def test_bad_values_are_one_sentence_naming_the_key(
    tmp_path: Path, text: str, message: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, text + "\n")
    # Pointed at where the value is written (or the key, for an empty one).
    assert str(caught.value).startswith(f"{CONFIG_FILE}:1:"), str(caught.value)
    assert str(caught.value).split(": ", 1)[1].startswith(message), str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_bad_value_stops_the_cli_with_exit_2(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "proj",
        "debug:\n  idleTimeout: half an hour\n",
        {"waits": scenario_source("waits", BODY)},
    )
    done = subprocess.run(
        [*UNOTEST, "e2e", "waits"],
        cwd=root,
        env=unotest_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done
    assert done.stderr.splitlines() == [
        f"unotest: {CONFIG_FILE}:2:15: 'debug.idleTimeout' must be {EXPECTED}, got \"half an hour\""
    ]
    assert not (root / "unotest" / ".runs").exists()  # nothing started


@pytest.mark.parametrize(
    ("seconds", "shown"), [(1800, "30 min"), (120, "2 min"), (90, "90 s"), (1.5, "1500 ms")]
)
def test_durations_as_people_say_them(seconds: float, shown: str) -> None:
    assert format_duration(seconds) == shown


# --- the controller: the clock and what restarts it ------------------------------------


class Paused:
    """A scenario paused before its first statement by a real controller (``--step``),
    with ``idle_s`` as its idle timeout; the events, interrupts and warnings recorded."""

    def __init__(self, idle_s: float | None) -> None:
        program = parse_program("function test_x() {\n  let a = 1\n  let b = 2\n}\n", FILE)
        self.events: list[dict[str, Any]] = []
        self.interrupts: list[str] = []
        self.warnings: list[str] = []
        self.controller = DebugController(
            emit=lambda event: self.events.append(dict(event)),
            write_state=lambda state, step: None,
            interrupt=self.interrupts.append,
            render=render_var,
            breakpoints=Breakpoints({FILE: statement_starts(program)}),
            file_keys={"": FILE},
            warn=self.warnings.append,
            step_first=True,
            idle_timeout_s=idle_s,
        )
        builtins = make_pure_builtins(PureServices(env=lambda name: None, log=lambda line: None))
        interpreter = Interpreter(builtins, {}, hook=self)
        self.error: BaseException | None = None

        def run() -> None:
            try:
                interpreter.run(program, "test_x")
            except BaseException as err:
                self.error = err

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        self.wait_for(lambda e: e["kind"] == "paused")

    def before_statement(self, step: Step) -> Directive:
        directive = self.controller.before(step)
        if self.interrupts:
            raise Interrupt(self.interrupts[0])
        return directive

    def after_statement(self, step: Step, error: ScriptError | None) -> Directive:
        return Directive.PROCEED

    def wait_for(self, match: Any, timeout: float = 10) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            found = [e for e in list(self.events) if match(e)]
            if found:
                return found[0]
            assert time.monotonic() < deadline, self.events
            time.sleep(0.01)

    def idle_aborts(self) -> list[dict[str, Any]]:
        return [e for e in list(self.events) if e.get("id") == IDLE_ID]


def test_a_pause_no_command_reaches_ends_the_run_aborted() -> None:
    run = Paused(idle_s=0.3)
    applied = run.wait_for(lambda e: e.get("id") == IDLE_ID)
    assert {k: v for k, v in applied.items() if k != "t"} == {
        "kind": "command:applied",
        "id": IDLE_ID,
        "cmd": "abort",
    }
    run.thread.join(10)
    assert isinstance(run.error, Interrupt) and run.error.reason == "aborted"
    assert run.interrupts == ["aborted"]
    assert run.warnings == [
        f"the run was paused at {FILE}:2:2 for 300 ms without a command "
        "(debug.idleTimeout in unotest.config.yaml; 0 waits forever): aborting it"
    ]
    assert not [e for e in run.events if e["kind"] == "resumed"]


def test_every_command_restarts_the_clock() -> None:
    """Commands of every kind, each well inside the timeout, keep the pause going for
    many timeouts; once they stop, the same pause ends. Both halves are needed: the
    second shows the clock was running all along."""
    idle = 1.0
    run = Paused(idle_s=idle)
    senders = [
        lambda n: run.controller.submit_line(
            json.dumps({"id": f"e{n}", "cmd": "eval", "expr": "1 + 1"}).encode()
        ),
        lambda n: run.controller.submit_data({"id": f"p{n}", "cmd": "pause"}),  # rejected
        lambda n: run.controller.submit_data(
            {"id": f"b{n}", "cmd": "set-bp", "line": 3}, source="terminal"
        ),
        lambda n: run.controller.submit_line(b"not json"),  # rejected as malformed
    ]
    sent = 0
    while sent < 4 * 10:  # four timeouts' worth, one command every tenth of one
        senders[sent % len(senders)](sent)
        sent += 1
        time.sleep(idle / 10)
        assert not run.idle_aborts(), run.events
    assert run.thread.is_alive() and run.controller.current_pause is not None
    results = [e for e in run.events if e["kind"] == "command:result"]
    assert len(results) == 10 and all(e["ok"] for e in results)
    run.wait_for(lambda e: e.get("id") == IDLE_ID)
    run.thread.join(10)
    assert isinstance(run.error, Interrupt)


def test_no_timeout_without_a_limit_and_a_resume_goes_on() -> None:
    run = Paused(idle_s=None)
    assert run.controller.idle_timeout_s is None
    run.controller.submit_data({"id": "c", "cmd": "continue"})
    run.thread.join(10)
    assert run.error is None and not run.idle_aborts() and run.warnings == []


# --- real runs -------------------------------------------------------------------------


def start(root: Path, err: Path) -> subprocess.Popen[bytes]:
    with open(err, "wb") as err_file:
        return subprocess.Popen(
            [*UNOTEST, "e2e", "waits", "--break", "6"],
            cwd=root,
            env=unotest_env(NO_COLOR="1"),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err_file,
        )


def test_a_short_timeout_aborts_while_zero_waits_past_it(
    tmp_path: Path, chromium_path: str
) -> None:
    projects = {
        idle: write_project(
            tmp_path / f"idle{idle}",
            config_yaml(None, chromium=chromium_path, extra=f"debug:\n  idleTimeout: {idle}\n"),
            {"waits": scenario_source("waits", BODY)},
        )
        for idle in (1000, 0)
    }
    errs = {idle: tmp_path / f"err{idle}" for idle in projects}
    procs = {idle: start(root, errs[idle]) for idle, root in projects.items()}
    try:
        dirs = {
            idle: wait_for_run_dir(root, procs[idle], describe=errs[idle].read_text)
            for idle, root in projects.items()
        }
        _, forever_paused = wait_for_event(dirs[0], is_kind("paused", reason="breakpoint"))

        # The short one ends by itself, aborted, saying why.
        assert procs[1000].wait(timeout=60) == 130
        events = read_events(dirs[1000], finished=True)
        events = [e for e in events if e["kind"] != "page:image"]  # the pause's image
        assert [e["kind"] for e in events[-3:]] == ["paused", "command:applied", "run:finished"]
        assert events[-2]["id"] == IDLE_ID and events[-2]["cmd"] == "abort"
        assert events[-1]["outcome"] == "aborted"
        runtime = json.loads((dirs[1000] / "runtime.json").read_text())
        assert runtime["state"] == "aborted"
        stderr = errs[1000].read_text()
        assert (
            f"unotest: the run was paused at {FILE}:6:2 for 1 s without a command "
            "(debug.idleTimeout in unotest.config.yaml; 0 waits forever): aborting it\n"
        ) in stderr, stderr
        assert "(aborted after 1 s without a command)" in stderr

        # 0: no command for longer than the timeout that ended the other run: still paused.
        time.sleep(1.5)
        assert procs[0].poll() is None
        last = [e for e in read_events(dirs[0]) if e["kind"] != "page:image"][-1]
        assert last == forever_paused
        assert "without a command" not in errs[0].read_text()  # no limit announced
        append_command(dirs[0], "continue")
        assert procs[0].wait(timeout=60) == 0
        assert read_events(dirs[0], finished=True)[-1]["outcome"] == "completed"
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                stop_tree(proc)
