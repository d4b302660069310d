"""Failures name their chain; caught failures are not failures; paused time is not a
step's duration; the console names helper files and prints calls before their steps.

In-process and without a browser: the real interpreter runs a scenario and a helper
file (pure built-ins only) with the real :class:`StepReporter` as its hook, writing a
real run directory in ``tmp_path``; then the run's error goes through every report
that prints it (summary, JUnit, the JSON report, pytest's failure representation,
``unotest inspect``). The same with real Chromium through the CLI is in
test_failure_chain_e2e.py.
"""

from __future__ import annotations

import asyncio
import io
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from events import read_events

from dsl.builtins import PureServices, make_pure_builtins
from dsl.errors import BuiltinError, Interrupt, ScriptError
from dsl.interpreter import Builtin, Directive, FunctionRef, Interpreter, Step
from dsl.parser import parse_program
from runner.browser.bridge import LoopBridge
from runner.collection.orchestrator import CollectionResult, ScenarioOutcome
from runner.project.index import Project
from runner.run import steps as steps_module
from runner.run.console import ConsoleOutput
from runner.run.hook_chain import HookChain, record_steps
from runner.run.result import (
    RunResult,
    chain_text,
    error_location,
    script_error_info,
    summary_lines,
    timeout_error_info,
)
from runner.run.steps import StepRecord
from runner.store.rundir import RunDirectory
from unotest.commands.collection import json_report, junit_xml

Validate = Callable[[str, object], None]

FILE = "unotest/e2e/smoke.test.js"
HELPER = "unotest/e2e/_helpers/todo.js"

HELPERS = """\
function add_and_check(item) {
  log("adding " + item)
  check_items([item])
}

function check_items(items) {
  expect_equal(items[0], "milk")
}

function safe_check(item) {
  try {
    check_items([item])
  } catch (e) {
    throw e
  }
}
"""
ADD_AND_CHECK_LINE, CHECK_ITEMS_LINE, SAFE_THROW_LINE = 3, 7, 14


def scenario(body: str) -> str:
    """The test function ``test_smoke`` on line 1, ``body`` from line 2."""
    return f"function test_smoke() {{\n{body}}}\n"


# A caught failure first (lines 3-7), then one two helpers deep (line 8).
CAUGHT_THEN_DEEP = scenario(
    """\
  let n = 1
  try {
    check_items(["nope"])
  } catch (e) {
    log("caught: " + e.message)
  }
  add_and_check("bread")
"""
)


def place(file: str, line: int, col: int, fn: str) -> dict[str, Any]:
    return {"file": file, "line": line, "col": col, "fn": fn}


DEEP_CHAIN = [
    place(FILE, 8, 2, "test_smoke"),
    place(HELPER, ADD_AND_CHECK_LINE, 2, "add_and_check"),
    place(HELPER, CHECK_ITEMS_LINE, 2, "check_items"),
]


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@dataclass
class Run:
    """One scenario run in-process: what the hook chain wrote and how the run ended."""

    hook: HookChain
    steps: StepRecord
    rundir: RunDirectory
    out: io.StringIO
    error: ScriptError | None
    project: Project
    interrupted: Interrupt | None = None

    def events(self) -> list[dict[str, Any]]:
        return read_events(self.rundir.path)

    def runtime(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((self.rundir.path / "runtime.json").read_text())
        return data

    def lines(self) -> list[str]:
        return self.out.getvalue().splitlines()

    def run_error(self) -> Any:
        assert self.error is not None
        return script_error_info(self.error, self.steps.failure_for(self.error), "smoke")

    def result(self) -> RunResult:
        return RunResult(
            self.rundir.run_id, "unotest/.runs/x", "smoke", "failed", 12, 9, self.run_error()
        )


@dataclass
class Clock:
    """``time.perf_counter`` for the steps: moves only when told."""

    now: float = 100.0

    def perf_counter(self) -> float:
        return self.now


@dataclass
class Debugger:
    """What the hook chain and the steps ask of a debugger. A failure pause (once per error, as the
    real one) adds ``pause_s`` to the paused seconds and to the ``clock``, as a person
    resuming later would, without waiting for it."""

    clock: Clock = field(default_factory=Clock)
    pause_s: float = 0.0
    paused_s: float = 0.0
    failures: list[int] = field(default_factory=list)
    seen: list[ScriptError] = field(default_factory=list)
    breakpoints: Any = field(default_factory=lambda: SimpleNamespace(active=lambda: {}))
    pause_on_failure: bool = True

    def before(self, step: Step) -> Directive:
        return Directive.PROCEED

    def after_failure(self, step: Step, error: ScriptError) -> Directive:
        self.failures.append(step.line)
        if not any(e is error for e in self.seen):
            self.seen.append(error)
            self.paused_s += self.pause_s
            self.clock.now += self.pause_s
        return Directive.PROCEED

    def paused_for(self) -> float:
        return self.paused_s


@pytest.fixture
def run(tmp_path: Path) -> Iterator[Callable[..., Run]]:
    loops: list[tuple[RunDirectory, asyncio.AbstractEventLoop]] = []

    def start(
        source: str,
        *,
        stream: io.StringIO | None = None,
        debugger: Debugger | None = None,
        extra: Callable[[HookChain], dict[str, Builtin]] | None = None,
    ) -> Run:
        for rel, text in ((FILE, source), (HELPER, HELPERS)):
            (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / rel).write_text(text)
        rundir = RunDirectory.create(tmp_path / "unotest" / ".runs", "scenario", "smoke")
        loop = asyncio.new_event_loop()
        loops.append((rundir, loop))
        out = io.StringIO() if stream is None else stream
        console = ConsoleOutput(out, lambda text: text)
        steps, _ = record_steps(
            rundir,
            "smoke",
            "test_smoke",
            console,
            breakpoints=debugger.breakpoints.active if debugger is not None else None,
            paused_for=debugger.paused_for if debugger is not None else lambda: 0.0,
        )
        hook = HookChain(steps, LoopBridge(loop), debugger)  # type: ignore[arg-type]
        builtins = make_pure_builtins(PureServices(env=lambda name: None, log=console.line))
        builtins.update(extra(hook) if extra is not None else {})
        helper_program = parse_program(HELPERS, HELPER)
        helpers = {f.name: FunctionRef(f, helper_program) for f in helper_program.functions}
        interpreter = Interpreter(builtins, helpers, hook=hook)
        error, interrupted = None, None
        try:
            interpreter.run(parse_program(source, FILE), "test_smoke")
        except ScriptError as err:
            error = err
        except Interrupt as stop:
            interrupted = stop
        return Run(hook, steps, rundir, out, error, Project(tmp_path), interrupted)

    yield start
    for rundir, loop in loops:
        rundir.close()
        loop.close()


def validate_run(r: Run, validate: Validate) -> None:
    for event in r.events():
        validate("RunArtifact", event)
    validate("RuntimeStateFile", r.runtime())


# --- 6. a failure names its chain ------------------------------------------------------------


def test_a_failure_two_helpers_deep_is_placed_at_the_scenario_line_first(
    run: Callable[..., Run], protocol_validate: Validate
) -> None:
    r = run(CAUGHT_THEN_DEEP)
    assert r.error is not None and r.error.name == "AssertionError"

    point = r.steps.failure_for(r.error)
    assert point is not None and point.chain == DEEP_CHAIN
    error = r.run_error()
    # file/line/col stay where the error happened; `at` is the scenario's own line.
    assert (error["file"], error["line"], error["col"]) == (HELPER, CHECK_ITEMS_LINE, 2)
    assert error["at"] == DEEP_CHAIN[0]
    assert error["chain"] == DEEP_CHAIN
    assert error["stepLine"] == CHECK_ITEMS_LINE and error["step"].startswith("expect_equal(")

    text = f"{FILE}:8:2 → {HELPER}:3:2 add_and_check → {HELPER}:7:2 check_items"
    assert chain_text(error["chain"]) == text == error_location(error)
    summary = summary_lines(r.result())
    assert summary[1].startswith(f"  {text}: AssertionError: ")

    failure = r.runtime()["lastFailure"]
    assert (failure["line"], failure["col"], failure["file"]) == (CHECK_ITEMS_LINE, 2, HELPER)
    assert failure["stack"] == DEEP_CHAIN
    validate_run(r, protocol_validate)


def test_a_failure_in_the_scenario_itself_has_a_chain_of_one_place(
    run: Callable[..., Run],
) -> None:
    r = run(scenario("  let n = 1\n  expect_equal(n, 2)\n"))
    error = r.run_error()
    assert error["chain"] == [place(FILE, 3, 2, "test_smoke")] and error["at"] == error["chain"][0]
    # One place reads as it always did: file:line:col.
    assert error_location(error) == f"{FILE}:3:2"
    assert summary_lines(r.result())[1].startswith(f"  {FILE}:3:2: AssertionError: ")
    assert r.runtime()["lastFailure"]["stack"] == error["chain"]


def test_an_error_record_without_a_chain_reads_as_before() -> None:
    old = {"error": "boom", "errorName": "Error", "file": FILE, "line": 4, "col": 2}
    assert error_location(old) == f"{FILE}:4:2"
    assert error_location({"error": "boom", "errorName": "Error"}) is None
    broken = {**old, "chain": [{"file": FILE, "line": "4"}, "x"]}
    assert error_location(broken) == f"{FILE}:4:2"  # a chain that is not one is ignored


def test_junit_and_the_json_report_carry_the_chain(run: Callable[..., Run]) -> None:
    r = run(CAUGHT_THEN_DEEP)
    outcome = ScenarioOutcome(
        "smoke", "failed", 0, r.rundir.run_id, "unotest/.runs/x", 12, 9, r.run_error(), "b/1"
    )
    result = CollectionResult("c-1", "unotest/.runs/c-1", "c", "failed", 20, [outcome])
    text = f"{FILE}:8:2 → {HELPER}:3:2 add_and_check → {HELPER}:7:2 check_items"

    failure = ET.fromstring(junit_xml(result, 0.0)).find("./testsuite/testcase/failure")
    assert failure is not None and failure.get("type") == "AssertionError"
    message = failure.get("message") or ""
    assert message.startswith(f"{text}: expected ") and "milk" in message
    assert failure.text is not None
    assert f"\nat {text}\n" in failure.text
    assert 'step: expect_equal(items[0], "milk")' in failure.text

    [end] = [e["data"] for e in json_report(result) if e["type"] == "test_end"]
    assert end["location"] == f"{HELPER}:7:2"  # the error's own place, as before
    assert end["chain"] == DEEP_CHAIN


def test_pytest_shows_one_traceback_entry_per_place(run: Callable[..., Run]) -> None:
    from _pytest._io import TerminalWriter

    from unotest.pytest_plugin import _failure_repr

    r = run(CAUGHT_THEN_DEEP)
    shown = io.StringIO()
    _failure_repr(r.project, r.result()).toterminal(TerminalWriter(shown))
    text = shown.getvalue()
    # Python's order: the scenario's line, the helper that called, the failing line.
    scenario_at = text.index('> 8 |   add_and_check("bread")')
    caller_at = text.index("> 3 |   check_items([item])")
    failing_at = text.index('> 7 |   expect_equal(items[0], "milk")')
    assert scenario_at < caller_at < failing_at
    assert f"{FILE}:8:2: in test_smoke" in text
    assert f"{HELPER}:3:2: in add_and_check" in text
    assert f"{HELPER}:7:2: AssertionError" in text
    chain = f"{FILE}:8:2 → {HELPER}:3:2 add_and_check → {HELPER}:7:2 check_items"
    assert f"E   at {chain}" in text


def test_a_timeout_is_placed_with_the_chain_of_the_step_it_stopped(
    run: Callable[..., Run], protocol_validate: Validate
) -> None:
    def timeout_at_log(hook: HookChain) -> dict[str, Builtin]:
        # the scenario timeout lands while add_and_check logs: the next step stops
        stop = Builtin("log", lambda *args: hook.bridge.interrupt("timeout"), 0, None)
        return {"log": stop}

    r = run(scenario('  add_and_check("milk")\n'), extra=timeout_at_log)
    assert isinstance(r.interrupted, Interrupt) and r.error is None
    stopped = r.steps.open[-1]
    error = timeout_error_info("took too long", "smoke", stopped)
    chain = [place(FILE, 2, 2, "test_smoke"), place(HELPER, ADD_AND_CHECK_LINE, 2, "add_and_check")]
    assert error["chain"] == chain and error["at"] == chain[0]
    assert (error["file"], error["line"]) == (HELPER, ADD_AND_CHECK_LINE)
    r.steps.close_open_steps("took too long", "TimeoutError")
    validate_run(r, protocol_validate)


# --- 7. caught failures ----------------------------------------------------------------------


def test_a_caught_failure_is_written_caught_and_is_no_failure_of_the_run(
    run: Callable[..., Run], protocol_validate: Validate
) -> None:
    r = run(
        scenario(
            """\
  try {
    add_and_check("nope")
  } catch (e) {
    log("caught")
  }
"""
        )
    )
    assert r.error is None
    fails = [e for e in r.events() if e["kind"] == "step:fail"]
    # the failing helper step, the helper call in it, the scenario's call: all caught
    assert len(fails) == 3 and all(e["caught"] is True for e in fails)
    assert r.steps.failures == {} and r.steps.last_failure is None
    assert r.runtime()["lastFailure"] is None
    lines = r.lines()
    caught = [line for line in lines if line.lstrip().startswith("○")]
    assert len(caught) == 3 and all("(caught AssertionError, " in line for line in caught)
    assert not any(line.lstrip().startswith("✗") for line in lines)
    validate_run(r, protocol_validate)


def test_after_a_caught_failure_the_uncaught_one_is_the_last_failure(
    run: Callable[..., Run],
) -> None:
    r = run(CAUGHT_THEN_DEEP)
    fails = [e for e in r.events() if e["kind"] == "step:fail"]
    assert [e.get("caught", False) for e in fails] == [True, True, False, False, False]
    assert len(r.steps.failures) == 1
    assert r.runtime()["lastFailure"]["stack"] == DEEP_CHAIN


def test_a_rethrown_failure_is_the_runs_failure_at_the_throw(run: Callable[..., Run]) -> None:
    r = run(
        scenario(
            """\
  try {
    check_items(["nope"])
  } catch (e) {
    throw e
  }
"""
        )
    )
    assert r.error is not None and r.error.line == 5
    error = r.run_error()
    assert error["chain"] == [place(FILE, 5, 4, "test_smoke")]
    assert error["error"] == r.error.message and "milk" in error["error"]
    fails = [e for e in r.events() if e["kind"] == "step:fail"]
    # the failing step and the call in the try were caught; the throw is the failure
    assert [e.get("caught", False) for e in fails] == [True, True, False]
    failure = r.runtime()["lastFailure"]
    assert (failure["line"], failure["col"], failure["file"]) == (5, 4, FILE)


def test_a_failure_rethrown_in_a_helper_names_the_helpers_throw(run: Callable[..., Run]) -> None:
    r = run(scenario('  let n = 1\n  safe_check("nope")\n'))
    error = r.run_error()
    assert error["chain"] == [
        place(FILE, 3, 2, "test_smoke"),
        place(HELPER, SAFE_THROW_LINE, 4, "safe_check"),
    ]
    fails = [e for e in r.events() if e["kind"] == "step:fail"]
    # check_items's step and the call to it were caught; the throw and its caller not
    assert [e.get("caught", False) for e in fails] == [True, True, False, False]


def test_try_with_only_finally_catches_nothing(run: Callable[..., Run]) -> None:
    r = run(
        scenario(
            """\
  try {
    check_items(["nope"])
  } finally {
    log("cleanup")
  }
"""
        )
    )
    assert r.error is not None
    assert not any(e.get("caught") for e in r.events())
    assert r.run_error()["chain"] == [
        place(FILE, 3, 4, "test_smoke"),
        place(HELPER, CHECK_ITEMS_LINE, 2, "check_items"),
    ]
    assert "cleanup" in r.lines()


def test_a_caught_failure_never_pauses_the_debugger(run: Callable[..., Run]) -> None:
    debugger = Debugger()
    r = run(CAUGHT_THEN_DEEP, debugger=debugger)
    # only the uncaught failure is offered to the debugger (it pauses at the innermost)
    assert debugger.failures == [CHECK_ITEMS_LINE, ADD_AND_CHECK_LINE, 8]
    assert r.runtime()["lastFailure"]["stack"] == DEEP_CHAIN


# --- 8. the console and paused time ----------------------------------------------------------


def _shown(lines: list[str]) -> list[str]:
    return [re.sub(r"\d+ ms\)", "N ms)", line) for line in lines]


def test_off_a_terminal_a_call_prints_its_start_before_its_steps_and_helpers_their_file(
    run: Callable[..., Run],
) -> None:
    r = run(CAUGHT_THEN_DEEP)
    caught = next(e["error"] for e in r.events() if e.get("caught"))
    assert _shown(r.lines()) == [
        "  ✓ 2:2  let n = 1  (N ms)",
        "  ✓ 3:2  try  (N ms)",
        '  … 4:4  check_items(["nope"])',
        '    ○ _helpers/todo.js:7:2  expect_equal(items[0], "milk")  (caught AssertionError, N ms)',
        '  ○ 4:4  check_items(["nope"])  (caught AssertionError, N ms)',
        f"caught: {caught}",
        '  ✓ 6:4  log("caught: " + e.message)  (N ms)',
        '  … 8:2  add_and_check("bread")',
        "adding bread",
        '    ✓ _helpers/todo.js:2:2  log("adding " + item)  (N ms)',
        "    … _helpers/todo.js:3:2  check_items([item])",
        '      ✗ _helpers/todo.js:7:2  expect_equal(items[0], "milk")  (N ms)',
        "    ✗ _helpers/todo.js:3:2  check_items([item])  (N ms)",
        '  ✗ 8:2  add_and_check("bread")  (N ms)',
    ]


def test_on_a_terminal_the_running_call_stays_on_its_line_once(run: Callable[..., Run]) -> None:
    r = run(scenario('  add_and_check("milk")\n'), stream=Terminal())
    screen = r.out.getvalue()
    # the call's running line is ended by its first step's, never printed twice
    assert screen.count('… 2:2  add_and_check("milk")') == 1
    assert screen.startswith(
        '  … 2:2  add_and_check("milk")\n    … _helpers/todo.js:2:2  log("adding " + item)\n'
        "adding milk\n"
    )
    last = screen.splitlines()[-1]
    assert re.fullmatch(r'  ✓ 2:2  add_and_check\("milk"\)  \(\d+ ms\)', last), last


PAUSING = """\
function test_smoke() {
  work()
  outer()
}
function outer() {
  work()
  slow_fail()
}
"""


def test_time_spent_paused_is_left_out_of_durations_and_written_as_paused_ms(
    run: Callable[..., Run], monkeypatch: pytest.MonkeyPatch, protocol_validate: Validate
) -> None:
    clock = Clock()
    monkeypatch.setattr(steps_module, "time", clock)
    debugger = Debugger(clock, pause_s=2.0)

    def work_and_fail(hook: HookChain) -> dict[str, Builtin]:
        def work() -> None:
            clock.now += 1.0

        def slow_fail() -> None:
            clock.now += 0.5
            raise BuiltinError("Error", "broken")

        return {
            "work": Builtin("work", work, 0, 0),
            "slow_fail": Builtin("slow_fail", slow_fail, 0, 0),
        }

    r = run(PAUSING, debugger=debugger, extra=work_and_fail)
    assert r.error is not None
    ends = [e for e in r.events() if e["kind"] in ("step:ok", "step:fail")]
    assert [(e["kind"], e.get("durationMs"), e.get("pausedMs")) for e in ends] == [
        ("step:ok", 1000.0, None),  # work() at 2:2
        ("step:ok", 1000.0, None),  # work() in outer
        # slow_fail() is closed before its failure pause: the pause is not its time
        ("step:fail", 500.0, None),
        ("step:fail", 1500.0, 2000.0),  # outer(): the pause of the step it called
    ]
    assert r.lines()[-2:] == [
        "    ✗ 7:2  slow_fail()  (500 ms)",
        "  ✗ 3:2  outer()  (1.50 s, paused 2.00 s)",
    ]
    validate_run(r, protocol_validate)
