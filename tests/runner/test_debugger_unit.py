"""The step debugger without a browser: a real interpreter, a real DebugController.

The scenario runs in a thread of its own, as in a run; its hook is a small adapter
that does what ``runner.run.hook_chain.HookChain`` does with the controller (``before``
each step, then check for an interrupt; ``after_failure`` on a failure). ``emit``
collects the events and ``write_state`` the runtime.json states; the test thread
plays the viewer, submitting commands and waiting for their answers.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dsl.builtins import PureServices, make_pure_builtins
from dsl.errors import BuiltinError, Interrupt, ScriptError
from dsl.interpreter import Builtin, Directive, FunctionRef, Interpreter, Step
from dsl.parser import parse_program
from runner.debug.breakpoints import Breakpoints
from runner.debug.controller import DebugController
from runner.errors import ConfigError
from runner.project.breakpoints_file import load_breakpoints_file
from runner.project.positions import statement_starts
from runner.run.steps import render_var

WAIT = 5.0
FILE = "unotest/e2e/t.test.js"
HELPER_FILE = "unotest/e2e/_helpers/util.js"


# --- the harness ----------------------------------------------------------------------


class Hook:
    """What HookChain does with the controller (pause on failure on), nothing else."""

    def __init__(self, harness: Harness) -> None:
        self.harness = harness

    def before_statement(self, step: Step) -> Directive:
        self.harness.steps.append((step.line, step.col, step.depth))
        if self.harness.controller.before(step) is Directive.SKIP:
            return Directive.SKIP
        self.harness.check()  # HookChain's bridge.check() once the step is open
        return Directive.PROCEED

    def after_statement(self, step: Step, error: ScriptError | None) -> Directive:
        if error is not None:
            return self.harness.controller.after_failure(step, error)
        return Directive.PROCEED


class Harness:
    def __init__(
        self,
        source: str,
        *,
        helper: str | None = None,
        step_first: bool = False,
        breaks: tuple[tuple[int, int], ...] = (),
    ) -> None:
        self.program = parse_program(source, FILE)
        programs = {FILE: self.program}
        helpers: dict[str, FunctionRef] = {}
        if helper is not None:
            helper_program = parse_program(helper, HELPER_FILE)
            programs[HELPER_FILE] = helper_program
            helpers = {f.name: FunctionRef(f, helper_program) for f in helper_program.functions}
        self.breakpoints = Breakpoints({f: statement_starts(p) for f, p in programs.items()})
        for position in breaks:
            self.breakpoints.add(FILE, position)
        self.events: list[dict[str, Any]] = []
        self.states: list[tuple[str, tuple[int, int] | None]] = []
        self.interrupts: list[str] = []
        self.warnings: list[str] = []
        self.steps: list[tuple[int, int, int]] = []
        self.probes: list[Any] = []
        self.gate = threading.Event()
        self.in_gate = threading.Event()
        self.interrupted: str | None = None
        self.cond = threading.Condition()
        self.cursor = 0
        self.ids = itertools.count(1)
        self.controller = DebugController(
            emit=self._emit,
            write_state=self._write_state,
            interrupt=self._interrupt,
            render=render_var,
            breakpoints=self.breakpoints,
            file_keys={"": FILE, "t": FILE, "_helpers/util": HELPER_FILE, HELPER_FILE: HELPER_FILE},
            warn=self.warnings.append,
            step_first=step_first,
        )
        builtins = make_pure_builtins(PureServices(env=lambda name: None, log=lambda line: None))
        builtins["probe"] = Builtin("probe", self._probe, 1, 1)
        builtins["gate"] = Builtin("gate", self._gate, 0, 0)
        self.interpreter = Interpreter(builtins, helpers, hook=Hook(self))
        self.result: Any = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="scenario", daemon=True)

    # callbacks ---------------------------------------------------------------------

    def _emit(self, event: dict[str, Any]) -> None:
        json.dumps(event, allow_nan=False)  # every event must be a steps.jsonl line
        record = dict(event)
        # the constructors stamp ``t`` (the run directory stamps only raw mappings)
        assert isinstance(record.pop("t"), int)
        with self.cond:
            self.events.append(record)
            self.cond.notify_all()

    def _write_state(self, state: str, step: Step | None) -> None:
        with self.cond:
            self.states.append((state, (step.line, step.col) if step is not None else None))
            self.cond.notify_all()

    def _interrupt(self, reason: str) -> None:
        self.interrupts.append(reason)
        self.interrupted = reason
        self.gate.set()

    def _probe(self, value: Any) -> Any:
        self.probes.append(value)
        return value

    def _gate(self) -> Any:
        self.in_gate.set()
        if not self.gate.wait(WAIT):
            raise BuiltinError("Error", "gate never opened")
        return None

    def check(self) -> None:
        if self.interrupted is not None:
            raise Interrupt(self.interrupted)

    def _run(self) -> None:
        try:
            self.result = self.interpreter.run(self.program, "test_x")
        except BaseException as err:
            self.error = err

    # driving -----------------------------------------------------------------------

    def start(self) -> Harness:
        self.thread.start()
        return self

    def join(self) -> None:
        self.thread.join(WAIT)
        assert not self.thread.is_alive(), f"the scenario is stuck; events: {self.events}"

    def send(self, cmd: str, **fields: Any) -> str:
        ident = f"c{next(self.ids)}"
        self.controller.submit_data({"id": ident, "cmd": cmd, **fields})
        return ident

    def wait_event(self, match: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """The first event from the cursor on that matches; the cursor moves past it."""
        deadline = time.monotonic() + WAIT
        with self.cond:
            while True:
                for i in range(self.cursor, len(self.events)):
                    if match(self.events[i]):
                        self.cursor = i + 1
                        return self.events[i]
                left = deadline - time.monotonic()
                if left <= 0 or (not self.thread.is_alive() and self.thread.ident is not None):
                    # One last look: the thread may have emitted just before ending.
                    for i in range(self.cursor, len(self.events)):
                        if match(self.events[i]):
                            self.cursor = i + 1
                            return self.events[i]
                    raise AssertionError(
                        f"no matching event; after cursor {self.cursor}: "
                        f"{self.events[self.cursor :]}; error: {self.error!r}"
                    )
                self.cond.wait(min(left, 0.05))

    def paused(self) -> dict[str, Any]:
        return self.wait_event(lambda e: e["kind"] == "paused")

    def answer(self, ident: str) -> dict[str, Any]:
        return self.wait_event(
            lambda e: e.get("id") == ident and e["kind"] in ("command:applied", "command:rejected")
        )

    def answers(self, ident: str) -> list[dict[str, Any]]:
        with self.cond:
            return [e for e in self.events if e.get("id") == ident]

    def kinds(self) -> list[str]:
        with self.cond:
            return [e["kind"] for e in self.events]

    def resume(self, cmd: str, **fields: Any) -> dict[str, Any]:
        ident = self.send(cmd, **fields)
        applied = self.answer(ident)
        assert applied["kind"] == "command:applied", applied
        return self.wait_event(lambda e: e["kind"] == "resumed")


def at(event: dict[str, Any]) -> tuple[int, int]:
    return event["line"], event["col"]


# --- statement_starts ---------------------------------------------------------------

NESTED = """\
function test_x() {
  let x = 1
  if (x > 0) {
    x = 2
  } else if (x < 0) {
    x = 3
  } else {
    x = 4
  }
  for (const i of range(2)) {
    if (i > 0) { x += i }
  }
  while (x > 100) {
    x = 0
  }
  try {
    x = 5
  } catch (e) {
    x = 6
  } finally {
    x = 7
  }
  let a = 1; let b = 2
}

function local_helper() {
  return 1
}
"""


def test_statement_starts_cover_every_nested_block_and_function() -> None:
    starts = statement_starts(parse_program(NESTED, FILE))
    assert starts == [
        (2, 2),
        (3, 2),
        (4, 4),
        (5, 9),  # the `if` of `else if`
        (6, 4),
        (8, 4),
        (10, 2),
        (11, 4),
        (11, 17),
        (13, 2),
        (14, 4),
        (16, 2),
        (17, 4),
        (19, 4),
        (21, 4),
        (23, 2),
        (23, 13),
        (27, 2),
    ]


def test_statement_starts_are_where_the_interpreter_steps() -> None:
    """Every position the hook is shown is a statement start (breakpoints can hold)."""
    harness = Harness(NESTED).start()
    harness.join()
    assert harness.error is None
    starts = set(statement_starts(harness.program))
    assert {(line, col) for line, col, _ in harness.steps} <= starts


# --- Breakpoints.resolve ---------------------------------------------------------------


def _breakpoints() -> Breakpoints:
    return Breakpoints({FILE: statement_starts(parse_program(NESTED, FILE)), "empty.js": []})


def test_resolve_line_takes_the_first_statement_on_it() -> None:
    bp = _breakpoints()
    assert bp.resolve(FILE, 23, None) == ((23, 2), None)
    assert bp.resolve(FILE, 11, None) == ((11, 4), None)
    assert bp.resolve(FILE, 5, None) == ((5, 9), None)


def test_resolve_line_and_column_exact() -> None:
    bp = _breakpoints()
    assert bp.resolve(FILE, 23, 13) == ((23, 13), None)
    assert bp.resolve(FILE, 11, 17) == ((11, 17), None)


def test_resolve_no_match_is_kept_with_the_nearest_statement() -> None:
    bp = _breakpoints()
    position, note = bp.resolve(FILE, 23, 5)
    assert position == (23, 5)
    assert note is not None
    assert f"{FILE}:23:5" in note and "nearest is 23:2" in note and "kept" in note
    position, note = bp.resolve(FILE, 24, None)  # the closing brace: no statement
    assert position == (24, 0)
    assert note is not None and "nearest is 23:2" in note
    position, note = bp.resolve(FILE, 1, None)  # the function header
    assert position == (1, 0)
    assert note is not None and "nearest is 2:2" in note


def test_resolve_in_a_file_without_statements() -> None:
    position, note = _breakpoints().resolve("empty.js", 3, 1)
    assert position == (3, 1)
    assert note == "empty.js has no statements"


def test_breakpoints_add_remove_active() -> None:
    bp = _breakpoints()
    bp.add(FILE, (4, 4))
    bp.add(FILE, (2, 2))
    bp.add(HELPER_FILE, (3, 2))
    assert bp.active() == {HELPER_FILE: ["3:2"], FILE: ["2:2", "4:4"]}
    assert bp.hit(FILE, 4, 4) and not bp.hit(FILE, 4, 5)
    assert bp.remove(FILE, (4, 4))
    assert not bp.remove(FILE, (4, 4))
    bp.remove(HELPER_FILE, (3, 2))
    assert bp.active() == {FILE: ["2:2"]}


# --- load_breakpoints_file ---------------------------------------------------------------


def test_load_breakpoints_file_absent_is_empty(tmp_path: Path) -> None:
    assert load_breakpoints_file(tmp_path / ".debugger.json") == {}


def test_load_breakpoints_file_valid(tmp_path: Path) -> None:
    path = tmp_path / ".debugger.json"
    path.write_text(
        json.dumps(
            {
                "version": 1,
                "scenarios": {
                    "shop/cart": [{"line": 3, "col": 2}, {"line": 10, "col": 0}],
                    "_helpers/auth": [{"line": 1, "col": 4, "note": "extra keys are fine"}],
                    "empty": [],
                },
            }
        )
    )
    assert load_breakpoints_file(path) == {
        "shop/cart": [(3, 2), (10, 0)],
        "_helpers/auth": [(1, 4)],
        "empty": [],
    }


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json", "invalid JSON"),
        ("[]", "expected"),
        ('{"scenarios": {}}', "expected"),
        ('{"version": 2, "scenarios": {}}', "expected"),
        ('{"version": 1, "scenarios": []}', "expected"),
        ('{"version": 1}', "expected"),
        ('{"version": 1, "scenarios": {"a": {"line": 1, "col": 0}}}', "must be a list"),
        ('{"version": 1, "scenarios": {"a": [3]}}', "each breakpoint is"),
        ('{"version": 1, "scenarios": {"a": [{"line": 1}]}}', "each breakpoint is"),
        ('{"version": 1, "scenarios": {"a": [{"col": 1}]}}', "each breakpoint is"),
        ('{"version": 1, "scenarios": {"a": [{"line": 0, "col": 0}]}}', "each breakpoint is"),
        ('{"version": 1, "scenarios": {"a": [{"line": 1, "col": -1}]}}', "each breakpoint is"),
        ('{"version": 1, "scenarios": {"a": [{"line": 1.5, "col": 0}]}}', "each breakpoint is"),
        ('{"version": 1, "scenarios": {"a": [{"line": 2.0, "col": 0}]}}', "each breakpoint is"),
        ('{"version": 1, "scenarios": {"a": [{"line": true, "col": 0}]}}', "each breakpoint is"),
        ('{"version": 1, "scenarios": {"a": [{"line": 1, "col": false}]}}', "each breakpoint is"),
        ('{"version": 1, "scenarios": {"a": [{"line": "1", "col": 0}]}}', "each breakpoint is"),
    ],
)
def test_load_breakpoints_file_invalid(tmp_path: Path, content: str, expected: str) -> None:
    path = tmp_path / ".debugger.json"
    path.write_text(content)
    with pytest.raises(ConfigError) as info:
        load_breakpoints_file(path)
    _one_sentence(str(info.value), expected)


def test_load_breakpoints_file_unreadable(tmp_path: Path) -> None:
    path = tmp_path / ".debugger.json"
    path.write_bytes(b'{"version": 1, "scenarios": {"\xff": []}}')
    with pytest.raises(ConfigError) as info:
        load_breakpoints_file(path)
    _one_sentence(str(info.value), "cannot read it")
    path.unlink()
    path.mkdir()
    with pytest.raises(ConfigError) as info:
        load_breakpoints_file(path)
    _one_sentence(str(info.value), "cannot read it")


def _one_sentence(message: str, expected: str) -> None:
    assert message.startswith("unotest/.debugger.json")
    assert expected in message
    assert "\n" not in message
    assert "Traceback" not in message


# --- where to stop --------------------------------------------------------------------

CALLS = """\
function test_x() {
  let x = 1
  x = outer(x)
  x = x + 1
  probe(x)
}

function outer(a) {
  let b = inner(a)
  return b + 1
}

function inner(c) {
  let d = c * 2
  return d
}
"""
# Steps of CALLS: (line, col, depth)
CALL_STEPS = [(2, 2, 0), (3, 2, 0), (9, 2, 1), (14, 2, 2), (15, 2, 2), (10, 2, 1), (4, 2, 0)]


def test_no_debugger_activity_runs_straight_through() -> None:
    harness = Harness(CALLS).start()
    harness.join()
    assert harness.error is None
    assert harness.events == []
    assert harness.probes == [4.0]
    assert [s for s in harness.steps][:7] == CALL_STEPS


def test_breakpoint_pauses_before_the_statement_with_a_snapshot() -> None:
    harness = Harness(CALLS, breaks=((14, 2),)).start()
    paused = harness.paused()
    assert paused["reason"] == "breakpoint"
    assert at(paused) == (14, 2)
    assert paused["snapshot"]["vars"] == {"c": "1"}
    assert paused["snapshot"]["callStack"] == [
        {"fn": "outer", "file": FILE, "line": 9},
        {"fn": "inner", "file": FILE, "line": 14},
    ]
    assert harness.states[-1] == ("paused-breakpoint", (14, 2))
    assert harness.probes == []  # really paused: the rest has not run
    resumed = harness.resume("continue")
    assert resumed == {"kind": "resumed", "by": "continue", "cmd": "continue"}
    harness.join()
    assert harness.error is None
    assert harness.probes == [4.0]
    assert harness.kinds().count("paused") == 1
    assert ("running", (14, 2)) in harness.states


def test_step_stops_at_every_statement_and_steps_into_calls() -> None:
    harness = Harness(CALLS, step_first=True).start()
    seen = []
    for _ in CALL_STEPS:
        paused = harness.paused()
        assert paused["reason"] == "step"
        seen.append(at(paused))
        resumed = harness.resume("step")
        assert resumed == {"kind": "resumed", "by": "step", "cmd": "step"}
    assert seen == [(line, col) for line, col, _ in CALL_STEPS]
    assert at(harness.paused()) == (5, 2)
    harness.resume("continue")
    harness.join()
    assert harness.error is None


def test_step_over_does_not_stop_inside_calls() -> None:
    harness = Harness(CALLS, step_first=True).start()
    assert at(harness.paused()) == (2, 2)
    harness.resume("step-over")
    assert at(harness.paused()) == (3, 2)
    resumed = harness.resume("step-over")
    assert resumed == {"kind": "resumed", "by": "step", "cmd": "step-over"}
    paused = harness.paused()
    assert at(paused) == (4, 2)  # outer() and inner() ran without a pause
    assert paused["snapshot"]["vars"]["x"] == "3"
    harness.resume("continue")
    harness.join()
    assert harness.kinds().count("paused") == 3


def test_step_over_inside_a_helper_stops_at_the_same_or_a_shallower_depth() -> None:
    harness = Harness(CALLS, breaks=((9, 2),)).start()
    assert at(harness.paused()) == (9, 2)  # depth 1, about to call inner()
    harness.resume("step-over")
    assert at(harness.paused()) == (10, 2)  # same depth, inner() ran through
    harness.resume("step-over")  # the return: the next statement is shallower
    assert at(harness.paused()) == (4, 2)
    harness.resume("continue")
    harness.join()
    assert harness.error is None


def test_step_out_stops_only_when_the_depth_decreases() -> None:
    harness = Harness(CALLS, breaks=((14, 2),)).start()
    assert at(harness.paused()) == (14, 2)  # depth 2
    resumed = harness.resume("step-out")
    assert resumed == {"kind": "resumed", "by": "step", "cmd": "step-out"}
    assert at(harness.paused()) == (10, 2)  # depth 1; (15, 2) at depth 2 ran through
    harness.resume("step-out")
    assert at(harness.paused()) == (4, 2)  # depth 0
    harness.resume("step-out")  # nothing shallower than the test function
    harness.join()
    assert harness.error is None
    assert harness.kinds().count("paused") == 3


def test_step_out_still_stops_at_a_breakpoint() -> None:
    harness = Harness(CALLS, breaks=((14, 2), (15, 2))).start()
    assert at(harness.paused()) == (14, 2)
    harness.resume("step-out")
    paused = harness.paused()
    assert at(paused) == (15, 2)
    assert paused["reason"] == "breakpoint"
    harness.resume("continue")
    harness.join()


def test_step_into_a_helper_file() -> None:
    source = "function test_x() {\n  let v = twice(2)\n  probe(v)\n}\n"
    helper = "function twice(n) {\n  const m = n * 2\n  return m\n}\n"
    harness = Harness(source, helper=helper, step_first=True).start()
    assert at(harness.paused()) == (2, 2)
    harness.resume("step")
    paused = harness.paused()
    assert at(paused) == (2, 2)
    assert paused["snapshot"]["callStack"] == [{"fn": "twice", "file": HELPER_FILE, "line": 2}]
    assert paused["snapshot"]["vars"] == {"n": "2"}
    harness.resume("continue")
    harness.join()
    assert harness.probes == [4.0]


def test_pause_while_running_pauses_before_the_next_statement() -> None:
    source = "function test_x() {\n  gate()\n  probe(1)\n  probe(2)\n}\n"
    harness = Harness(source).start()
    assert harness.in_gate.wait(WAIT)
    ident = harness.send("pause")
    assert harness.answer(ident) == {"kind": "command:applied", "cmd": "pause", "id": ident}
    harness.gate.set()
    paused = harness.paused()
    assert paused["reason"] == "step"
    assert at(paused) == (3, 2)
    assert harness.states[-1] == ("paused-step", (3, 2))
    assert harness.probes == []
    harness.resume("continue")
    harness.join()
    assert harness.probes == [1.0, 2.0]


def test_set_and_clear_breakpoints_by_command() -> None:
    source = "function test_x() {\n  gate()\n  probe(1)\n  probe(2)\n  probe(3)\n}\n"
    harness = Harness(source).start()
    assert harness.in_gate.wait(WAIT)
    # While running: set-bp on line 3 (no column: the first statement there) and 5.
    ident = harness.send("set-bp", line=3)
    assert harness.answer(ident)["kind"] == "command:applied"
    ident = harness.send("set-bp", line=5, col=2, file="t")
    assert harness.answer(ident)["kind"] == "command:applied"
    ident = harness.send("set-bp", line=3, col=9)  # no statement there: kept, warned
    applied = harness.answer(ident)
    assert applied["kind"] == "command:applied"
    assert any("nearest is 3:2" in w for w in harness.warnings)
    # ...and said to whoever sent it (an agent over MCP sees no runner's stderr)
    assert "matches no statement start; the nearest is 3:2" in applied["note"]
    ident = harness.send("set-bp", line=5)
    assert "note" not in harness.answer(ident)
    assert harness.breakpoints.active() == {FILE: ["3:2", "3:9", "5:2"]}
    ident = harness.send("set-bp", line=1, file="nope")
    rejected = harness.answer(ident)
    assert rejected["kind"] == "command:rejected"
    assert "no scenario or helper file 'nope'" in rejected["reason"]
    harness.gate.set()
    paused = harness.paused()
    assert (paused["reason"], at(paused)) == ("breakpoint", (3, 2))
    # At a pause: clearing rewrites runtime.json (its breakpoints list).
    states_before = len(harness.states)
    ident = harness.send("clear-bp", line=5, col=2)
    assert harness.answer(ident)["kind"] == "command:applied"
    assert harness.states[states_before:] == [("paused-breakpoint", (3, 2))]
    ident = harness.send("clear-bp", line=4)
    rejected = harness.answer(ident)
    assert rejected == {
        "kind": "command:rejected",
        "cmd": "clear-bp",
        "id": ident,
        "reason": f"no breakpoint at {FILE}:4:2",
    }
    harness.resume("continue")
    harness.join()
    assert harness.kinds().count("paused") == 1
    assert harness.probes == [1.0, 2.0, 3.0]


def test_set_bp_in_a_helper_file() -> None:
    source = "function test_x() {\n  gate()\n  let v = twice(2)\n}\n"
    helper = "function twice(n) {\n  const m = n * 2\n  return m\n}\n"
    harness = Harness(source, helper=helper).start()
    assert harness.in_gate.wait(WAIT)
    ident = harness.send("set-bp", line=3, file="_helpers/util")
    assert harness.answer(ident)["kind"] == "command:applied"
    harness.gate.set()
    paused = harness.paused()
    assert at(paused) == (3, 2)
    assert paused["snapshot"]["vars"] == {"n": "2", "m": "4"}
    harness.resume("continue")
    harness.join()


# --- at a failure ----------------------------------------------------------------------

FAILING = """\
function test_x() {
  let ok = false
  let n = 0
  assert(probe(ok), "not yet")
  n += 1
  probe(n)
}
"""


def test_a_failure_pauses_with_reason_failure() -> None:
    harness = Harness(FAILING).start()
    paused = harness.paused()
    assert (paused["reason"], at(paused)) == ("failure", (4, 2))
    assert harness.states[-1] == ("paused-failure", (4, 2))
    assert harness.probes == [False]


def _finish(harness: Harness) -> None:
    harness.resume("continue")
    harness.join()


def test_retry_runs_the_failed_statement_again_then_continues() -> None:
    harness = Harness(FAILING).start()
    assert harness.paused()["reason"] == "failure"
    ident = harness.send("eval", expr="ok = true")
    assert harness.wait_event(lambda e: e["kind"] == "command:result") == {
        "kind": "command:result",
        "id": ident,
        "ok": True,
        "value": "null",
    }
    resumed = harness.resume("retry")
    assert resumed == {"kind": "resumed", "by": "continue", "cmd": "retry"}
    harness.join()
    assert harness.error is None
    assert harness.probes == [False, True, 1.0]
    assert harness.kinds().count("paused") == 1


def test_retry_that_fails_again_pauses_again() -> None:
    harness = Harness(FAILING).start()
    harness.paused()
    harness.resume("retry")
    paused = harness.paused()
    assert (paused["reason"], at(paused)) == ("failure", (4, 2))
    assert harness.probes == [False, False]
    harness.resume("continue")
    harness.join()
    assert isinstance(harness.error, ScriptError)


def test_skip_at_a_failure_goes_on_and_pauses_before_the_next_statement() -> None:
    harness = Harness(FAILING).start()
    harness.paused()
    resumed = harness.resume("skip")
    assert resumed == {"kind": "resumed", "by": "step", "cmd": "skip"}
    paused = harness.paused()
    assert (paused["reason"], at(paused)) == ("step", (5, 2))
    harness.resume("continue")
    harness.join()
    assert harness.error is None
    assert harness.probes == [False, 1.0]


@pytest.mark.parametrize("cmd", ["continue", "step"])
def test_continue_or_step_at_a_failure_ends_the_run_failed(cmd: str) -> None:
    source = "function test_x() {\n  boom()\n  probe(1)\n}\n\nfunction boom() {\n  fail('x')\n}\n"
    harness = Harness(source).start()
    paused = harness.paused()
    assert (paused["reason"], at(paused)) == ("failure", (7, 2))  # the innermost step
    harness.resume(cmd)
    harness.join()
    assert isinstance(harness.error, ScriptError)
    assert harness.error.message == "x"
    assert harness.kinds().count("paused") == 1  # not again at the caller's statement
    assert harness.probes == []


def test_a_caught_failure_does_not_pause() -> None:
    source = """\
function test_x() {
  try {
    fail("inside try")
  } catch (e) {
    probe(e.message)
  }
}
"""
    harness = Harness(source).start()
    harness.join()
    assert harness.error is None
    assert harness.events == []
    assert harness.probes == ["inside try"]


def test_every_skipped_failure_pauses_even_when_error_objects_are_recycled() -> None:
    """Each new failure pauses; the controller must not confuse it with an old one."""
    source = """\
function test_x() {
  for (const i of range(30)) {
    fail(`boom ${i}`)
  }
  probe("done")
}
"""
    harness = Harness(source).start()
    for i in range(30):
        paused = harness.paused()
        assert (paused["reason"], at(paused)) == ("failure", (3, 4)), (i, harness.error)
        harness.resume("skip")
        assert harness.paused()["reason"] == "step"
        harness.resume("continue")
    harness.join()
    assert harness.error is None
    assert harness.probes == ["done"]


# --- eval ------------------------------------------------------------------------------

EVAL = """\
function test_x() {
  let x = 2
  let items = ["a", "b"]
  probe(x)
}
"""


def _eval(harness: Harness, expr: str) -> dict[str, Any]:
    ident = harness.send("eval", expr=expr)
    applied = harness.answer(ident)
    assert applied == {"kind": "command:applied", "cmd": "eval", "id": ident}
    result = harness.wait_event(lambda e: e["kind"] == "command:result")
    assert result["id"] == ident
    return result


def test_eval_expressions_assignments_and_errors() -> None:
    harness = Harness(EVAL, breaks=((4, 2),)).start()
    harness.paused()
    assert _eval(harness, "x + 1")["value"] == "3"
    assert _eval(harness, "items")["value"] == '["a", "b"]'
    assert _eval(harness, 'len(items) + "!"')["value"] == '"2!"'
    assert _eval(harness, "x = 40")["ok"] is True
    assert _eval(harness, "x += 2; let y = 1")["ok"] is True
    assert _eval(harness, "x")["value"] == "42"
    result = _eval(harness, "x +* 1")
    assert result["ok"] is False and result["error"].startswith("SyntaxError: ")
    assert "value" not in result
    result = _eval(harness, "nope + 1")
    assert result["ok"] is False
    assert result["error"].startswith("ReferenceError: 'nope' is not defined")
    result = _eval(harness, "fail('from eval')")
    assert result == {**result, "ok": False, "error": "ScenarioError: from eval"}
    result = _eval(harness, "break")
    assert result["ok"] is False
    # Still paused at the same place, runtime.json rewritten after each eval.
    assert harness.controller.current_pause is not None
    assert harness.states[-1] == ("paused-breakpoint", (4, 2))
    assert harness.probes == []
    harness.resume("continue")
    harness.join()
    assert harness.error is None
    assert harness.probes == [42.0]


# --- commands not valid in this state ---------------------------------------------------


def test_pause_while_paused_is_rejected() -> None:
    harness = Harness(CALLS, step_first=True).start()
    harness.paused()
    ident = harness.send("pause")
    rejected = harness.answer(ident)
    assert rejected == {
        "kind": "command:rejected",
        "cmd": "pause",
        "id": ident,
        "reason": "already paused",
    }
    _finish(harness)
    assert harness.kinds().count("paused") == 1  # the rejected pause left no request


@pytest.mark.parametrize("cmd", ["step", "step-over", "step-out", "continue", "skip", "retry"])
def test_resuming_commands_while_running_are_rejected(cmd: str) -> None:
    source = "function test_x() {\n  gate()\n  probe(1)\n}\n"
    harness = Harness(source).start()
    assert harness.in_gate.wait(WAIT)
    ident = harness.send(cmd)
    rejected = harness.answer(ident)
    assert rejected["kind"] == "command:rejected"
    assert rejected["cmd"] == cmd and rejected["id"] == ident
    assert "needs a paused run" in rejected["reason"]
    harness.gate.set()
    harness.join()
    assert harness.events == [rejected]
    assert harness.probes == [1.0]


def test_eval_while_running_is_rejected() -> None:
    source = "function test_x() {\n  gate()\n}\n"
    harness = Harness(source).start()
    assert harness.in_gate.wait(WAIT)
    ident = harness.send("eval", expr="1")
    assert "needs a paused run" in harness.answer(ident)["reason"]
    harness.gate.set()
    harness.join()


def test_retry_at_a_pause_that_is_not_a_failure_is_rejected() -> None:
    harness = Harness(CALLS, step_first=True).start()
    harness.paused()
    ident = harness.send("retry")
    rejected = harness.answer(ident)
    assert rejected["kind"] == "command:rejected"
    assert rejected["cmd"] == "retry" and rejected["id"] == ident
    assert "failure pause" in rejected["reason"]
    assert harness.controller.current_pause is not None  # still paused
    _finish(harness)
    assert harness.error is None


# --- command parsing ---------------------------------------------------------------------


def _rejected_by(harness: Harness, data: object) -> dict[str, Any]:
    before = len(harness.events)
    harness.controller.submit_data(data)
    new = harness.events[before:]
    assert len(new) == 1, new
    assert new[0]["kind"] == "command:rejected"
    assert isinstance(new[0]["reason"], str) and new[0]["reason"]
    return new[0]


@pytest.mark.parametrize(
    ("data", "echo", "reason"),
    [
        ({"cmd": "step"}, {"cmd": "step"}, "non-empty string id"),
        ({"id": "", "cmd": "step"}, {"cmd": "step"}, "non-empty string id"),
        ({"id": 7, "cmd": "step"}, {"cmd": "step"}, "non-empty string id"),
        ({"id": "a1"}, {"id": "a1"}, "unknown command None"),
        ({"id": "a2", "cmd": 5}, {"id": "a2"}, "unknown command 5"),
        ({"id": "a3", "cmd": "jump"}, {"id": "a3", "cmd": "jump"}, "unknown command 'jump'"),
        ({"id": "a4", "cmd": "set-bp"}, {"id": "a4", "cmd": "set-bp"}, "needs a line number"),
        (
            {"id": "a5", "cmd": "set-bp", "line": 0},
            {"id": "a5", "cmd": "set-bp"},
            "needs a line number",
        ),
        (
            {"id": "a6", "cmd": "set-bp", "line": True},
            {"id": "a6", "cmd": "set-bp"},
            "needs a line number",
        ),
        (
            {"id": "a7", "cmd": "set-bp", "line": "3"},
            {"id": "a7", "cmd": "set-bp"},
            "needs a line number",
        ),
        (
            {"id": "a8", "cmd": "set-bp", "line": 3, "col": -1},
            {"id": "a8", "cmd": "set-bp"},
            "needs a column",
        ),
        (
            {"id": "a9", "cmd": "clear-bp", "line": 3, "col": 1.5},
            {"id": "a9", "cmd": "clear-bp"},
            "needs a column",
        ),
        (
            {"id": "b1", "cmd": "set-bp", "line": 3, "file": 3},
            {"id": "b1", "cmd": "set-bp"},
            "file must be a string",
        ),
        ({"id": "b2", "cmd": "eval"}, {"id": "b2", "cmd": "eval"}, "eval needs an expr"),
        ({"id": "b3", "cmd": "eval", "expr": "  "}, {"id": "b3", "cmd": "eval"}, "needs an expr"),
        ({"id": "b4", "cmd": "eval", "expr": 1}, {"id": "b4", "cmd": "eval"}, "needs an expr"),
    ],
)
def test_malformed_commands_are_rejected_with_a_reason(
    data: dict[str, Any], echo: dict[str, Any], reason: str
) -> None:
    harness = Harness(CALLS)
    event = _rejected_by(harness, data)
    assert reason in event["reason"]
    assert {k: v for k, v in event.items() if k in ("id", "cmd")} == echo
    assert harness.warnings  # and a warning on stderr


def test_a_command_that_is_not_an_object_is_rejected() -> None:
    harness = Harness(CALLS)
    for data in (["step"], "step", 3, None):
        event = _rejected_by(harness, data)
        assert set(event) == {"kind", "reason"}


@pytest.mark.parametrize(
    "raw",
    [b"{nope", b"\xff\xfe", b'"just a string"', b"[1, 2]", b'{"cmd": "step"'],
)
def test_malformed_lines_are_rejected_without_an_id(raw: bytes) -> None:
    harness = Harness(CALLS)
    before = len(harness.events)
    harness.controller.submit_line(raw)
    new = harness.events[before:]
    assert len(new) == 1 and new[0]["kind"] == "command:rejected"
    assert "id" not in new[0]
    assert harness.warnings


def test_a_line_with_crlf_is_a_command() -> None:
    harness = Harness(CALLS)
    harness.controller.submit_line(b'{"id": "w1", "cmd": "set-bp", "line": 4}\r')
    assert harness.events == [{"kind": "command:applied", "cmd": "set-bp", "id": "w1"}]


def test_an_overlong_line_is_rejected() -> None:
    harness = Harness(CALLS)
    harness.controller.submit_line(
        b'{"id": "x", "cmd": "eval", "expr": "' + b"1" * 2_000_000 + b'"}'
    )
    assert harness.events[-1]["kind"] == "command:rejected"
    assert "too long" in harness.events[-1]["reason"]


def test_duplicate_ids_are_applied_once() -> None:
    harness = Harness(CALLS)
    harness.controller.submit_data({"id": "d1", "cmd": "set-bp", "line": 4})
    harness.controller.submit_data({"id": "d1", "cmd": "set-bp", "line": 4})
    harness.controller.submit_data({"id": "d1", "cmd": "clear-bp", "line": 4})
    harness.controller.submit_line(b'{"id": "d1", "cmd": "clear-bp", "line": 4}')
    assert harness.events == [{"kind": "command:applied", "cmd": "set-bp", "id": "d1"}]
    assert harness.breakpoints.active() == {FILE: ["4:2"]}
    assert any("already used" in w for w in harness.warnings)


def test_duplicate_resuming_command_moves_the_run_once() -> None:
    harness = Harness(CALLS, step_first=True).start()
    assert at(harness.paused()) == (2, 2)
    harness.controller.submit_data({"id": "s1", "cmd": "step"})
    harness.wait_event(lambda e: e["kind"] == "resumed")
    assert at(harness.paused()) == (3, 2)
    harness.controller.submit_data({"id": "s1", "cmd": "step"})  # a replayed line
    # Commands at a pause are applied in order: once a later one is answered, the
    # replayed line has had its chance to move the run.
    later = harness.send("eval", expr="1")
    harness.wait_event(lambda e: e["kind"] == "command:result" and e.get("id") == later)
    assert harness.controller.current_pause is not None
    assert harness.controller.current_pause.step.line == 3
    assert len(harness.answers("s1")) == 1
    _finish(harness)


# --- abort ------------------------------------------------------------------------------


def test_abort_while_paused_interrupts_the_scenario_thread() -> None:
    harness = Harness(CALLS, step_first=True).start()
    harness.paused()
    ident = harness.send("abort")
    assert harness.answer(ident) == {"kind": "command:applied", "cmd": "abort", "id": ident}
    harness.join()
    assert isinstance(harness.error, Interrupt)
    assert harness.error.reason == "aborted"
    assert harness.interrupts == ["aborted"]
    assert harness.probes == []
    assert "resumed" not in harness.kinds()
    assert harness.controller.current_pause is None


def test_abort_while_running_calls_the_interrupt_callback() -> None:
    source = "function test_x() {\n  gate()\n  probe(1)\n}\n"
    harness = Harness(source).start()
    assert harness.in_gate.wait(WAIT)
    ident = harness.send("abort")
    assert harness.answer(ident)["kind"] == "command:applied"
    assert harness.interrupts == ["aborted"]
    harness.join()  # the callback opened the gate; the hook's check raised
    assert isinstance(harness.error, Interrupt)
    assert harness.probes == []


def test_release_wakes_a_paused_scenario() -> None:
    harness = Harness(CALLS, step_first=True).start()
    harness.paused()
    harness.controller.release()
    harness.join()
    assert isinstance(harness.error, Interrupt)


# --- the scenario timeout's clock ----------------------------------------------------------


def test_paused_for_grows_while_paused_only() -> None:
    harness = Harness(CALLS, step_first=True)
    assert harness.controller.paused_for() == 0.0
    harness.start()
    harness.paused()
    first = harness.controller.paused_for()
    time.sleep(0.06)
    second = harness.controller.paused_for()
    assert second >= first + 0.05
    _finish(harness)
    done = harness.controller.paused_for()
    assert done >= second
    time.sleep(0.06)
    assert harness.controller.paused_for() == done
    assert harness.controller.paused_seconds == done


def test_paused_for_adds_up_several_pauses() -> None:
    harness = Harness(CALLS, step_first=True).start()
    harness.paused()
    time.sleep(0.03)
    harness.resume("step")
    harness.paused()
    time.sleep(0.03)
    _finish(harness)
    assert harness.controller.paused_for() >= 0.06
