"""``step(title, fn, {args})`` and soft assertions (``{soft: true}``), in milliseconds.

No browser: the real interpreter with the pure built-ins (time is fake where a retry
waits), ``check`` with the real signatures, and the pure pieces of the runner that
carry the two features: :func:`runner.run.steps.static_title` (the title
``step:started`` says), :meth:`StepRecord.soft_verdict` (the error a run with soft
failures ends with), :func:`runner.store.step_titles.titled_steps` (the tree of titled
steps the reports show), and :class:`runner.run.hook_chain.HookChain` driving a real
run directory around the interpreter with a stand-in debugger (a soft failure goes on,
``retry`` and ``skip`` at its pause forget it, ``continue`` keeps it).

Real Chromium, the console, ``steps.jsonl``, bundles, JUnit and ``--debug`` through the
CLI are in tests/runner/test_steps_soft_e2e.py.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from events import read_events

from dsl import ast
from dsl.builtins import PURE_OPTIONS, PURE_SIGNATURES, PureServices, make_pure_builtins
from dsl.checker import check_program
from dsl.errors import BuiltinError, ScriptError
from dsl.interpreter import Builtin, Directive, Interpreter, Step
from dsl.parser import parse_program
from dsl.values import Value
from runner.browser.bridge import LoopBridge
from runner.run.console import ConsoleOutput
from runner.run.hook_chain import HookChain, record_steps
from runner.run.steps import FailurePoint, StepRecord, static_title
from runner.store.rundir import RunDirectory
from runner.store.step_titles import titled_steps

FILE = "unotest/e2e/shop.test.js"

# --- running a scenario with the pure built-ins ---------------------------------------------


class FakeTime:
    """The clock of a retry: only the waits between attempts move it."""

    def __init__(self) -> None:
        self.now = 0.0

    def sleep(self, seconds: float) -> None:
        self.now += seconds

    def elapsed(self) -> float:
        return self.now

    def clock_ms(self) -> float:
        return 1000.0 + self.now * 1000.0


@dataclass
class Ended:
    """One statement's end as a hook saw it."""

    line: int
    depth: int
    caught: bool
    error: str | None
    soft: bool


@dataclass
class Recorder:
    """A hook that records every step's end and does what the language alone does
    with a failure (raise it), unless ``soft_goes_on``: then a soft failure is skipped
    past, as the runner's hook chain does."""

    soft_goes_on: bool = False
    ended: list[Ended] = field(default_factory=list)

    def before_statement(self, step: Step) -> Directive:
        return Directive.PROCEED

    def after_statement(self, step: Step, error: ScriptError | None) -> Directive:
        name = error.name if error is not None else None
        soft = error is not None and error.soft
        self.ended.append(Ended(step.line, step.depth, step.caught, name, soft))
        if soft and self.soft_goes_on:
            return Directive.SKIP
        return Directive.PROCEED

    def failed(self) -> list[Ended]:
        return [end for end in self.ended if end.error is not None]


@dataclass
class Session:
    """What one run of the pure built-ins told the outside: titles and log lines."""

    titles: list[str] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)
    time: FakeTime = field(default_factory=FakeTime)

    def interpreter(self, hook: Recorder | None = None) -> Interpreter:
        services = PureServices(
            env=lambda name: None,
            log=self.logs.append,
            clock_ms=self.time.clock_ms,
            sleep=self.time.sleep,
            elapsed=self.time.elapsed,
            titled=self.titles.append,
        )
        return Interpreter(make_pure_builtins(services), hook=hook)

    def run(self, source: str, hook: Recorder | None = None) -> Value:
        interp = self.interpreter(hook)
        try:
            return interp.run(parse_program(source, FILE), "test_main")
        finally:
            assert interp._retry_depth == 0 and interp._try_depth == 0

    def failure(self, source: str, hook: Recorder | None = None) -> ScriptError:
        with pytest.raises(ScriptError) as info:
            self.run(source, hook)
        return info.value


def scenario(body: str, functions: str = "") -> str:
    """``functions`` (each ending with its newline) then ``test_main`` with ``body``."""
    return f"{functions}function test_main() {{\n{body}\n}}\n"


ADD = "function add(a, b) {\n  return a + b\n}\n"  # three lines
NONE = "function none() {\n  return 7\n}\n"  # three lines


# --- step(): its value, its args, its title, its children ------------------------------------


def test_step_returns_the_value_of_its_function_called_with_its_args() -> None:
    session = Session()
    source = scenario(
        '  const sum = step("Add", add, {args: [2, 3]})\n  return [sum, step("Seven", none)]',
        ADD + NONE,
    )
    assert session.run(source) == [5.0, 7.0]
    assert session.titles == ["Add", "Seven"]


def test_a_step_without_args_or_with_null_options_calls_its_function_without_arguments() -> None:
    session = Session()
    assert session.run(scenario('  return step("Seven", none, null)', NONE)) == 7.0
    assert session.titles == ["Seven"]


def test_the_statements_of_a_step_are_its_children_and_a_step_inside_nests() -> None:
    functions = """\
function outer(n) {
  log("outer " + n)
  return step(`Inner ${n + 1}`, inner, {args: [n + 1]})
}
function inner(m) {
  log("inner " + m)
  return m * 10
}
"""
    # outer: lines 1-4, inner: lines 5-8, test_main: line 9, its body line 10
    session = Session()
    hook = Recorder()
    source = scenario('  return step("Outer", outer, {args: [1]})', functions)
    assert session.run(source, hook) == 20.0
    # Titles are told when each step runs, outer first; a template title is its value.
    assert session.titles == ["Outer", "Inner 2"]
    assert session.logs == ["outer 1", "inner 2"]
    # Each function's statements are one level deeper than the statement calling it.
    assert [(end.line, end.depth) for end in hook.ended] == [
        (2, 1),
        (6, 2),
        (7, 2),
        (3, 1),
        (10, 0),
    ]


def test_a_failure_inside_a_step_is_placed_where_it_happened() -> None:
    functions = 'function pay(card) {\n  log(card)\n  expect_equal(card, "visa")\n}\n'
    session = Session()
    hook = Recorder()
    err = session.failure(scenario('  step("Pay", pay, {args: ["amex"]})', functions), hook)
    assert (err.name, err.file, err.line, err.col) == ("AssertionError", FILE, 3, 2)
    assert err.message == 'expected "visa", received "amex"'
    assert [c.fn for c in err.call_chain] == ["test_main", "pay"]
    # The step's statement fails with its function's error after it.
    assert [(end.line, end.depth, end.error) for end in hook.failed()] == [
        (3, 1, "AssertionError"),
        (6, 0, "AssertionError"),
    ]


@pytest.mark.parametrize(
    ("call", "col", "message"),
    [
        ('step("", none)', 9, 'step() needs a title, a string that is not empty, got ""'),
        ('step("   ", none)', 9, 'step() needs a title, a string that is not empty, got "   "'),
        ("step(3, none)", 9, "step() needs a title, a string that is not empty, got 3"),
        ("step(null, none)", 9, "step() needs a title, a string that is not empty, got null"),
        (
            'step("Pay", 3)',
            9,
            "step() needs a function passed by name (of the scenario's file, a helper or a "
            'built-in: step("Log in", log_in)), got number',
        ),
        (
            'step("Pay", "none")',
            9,
            "step() needs a function passed by name (of the scenario's file, a helper or a "
            'built-in: step("Log in", log_in)), got string',
        ),
        (
            'step("Pay", none())',
            9,
            "step() needs a function passed by name (of the scenario's file, a helper or a "
            'built-in: step("Log in", log_in)), got number',
        ),
        (
            'step("Pay", add)',
            9,
            "step() calls add() without arguments, but it takes 2 arguments: give them in its "
            "options ({args: [...]}) or run a function without parameters",
        ),
        (
            'step("Pay", add, {args: [1, 2, 3]})',
            9,
            "step() calls add() with 3 arguments (its args), but it takes 2 arguments",
        ),
        (
            'step("Pay", none, {args: [1]})',
            9,
            "step() calls none() with 1 argument (its args), but it takes 0 arguments",
        ),
        (
            'step("Pay", add, [1, 2])',
            9,
            "step() takes its options as an object {args}, got array",
        ),
        (
            'step("Pay", add, {arg: [1, 2]})',
            9,
            "step() has no option 'arg' (its only option: args)",
        ),
        (
            'step("Pay", add, {args: 1})',
            9,
            "step()'s args are an array of the function's arguments, got number",
        ),
        ('step("Pay")', 9, "step() takes 2 to 3 arguments but got 1"),
    ],
)
def test_a_wrong_step_call_is_one_type_error_at_the_call(call: str, col: int, message: str) -> None:
    session = Session()
    err = session.failure(scenario(f"  return {call}", ADD + NONE))
    assert (err.name, err.line, err.col, err.message, err.soft) == (
        "TypeError",
        8,
        col,
        message,
        False,
    )
    assert session.titles == []  # refused before it ran: no title told


# --- soft: the flag a failure carries ---------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ("expect_equal(1, 2, {soft: true})", "expected 2, received 1"),
        ("expect_not_equal(1, 1, {soft: true})", "expected a value other than 1, received 1"),
        (
            "expect_equal([3], [greater_than(4)], {soft: true})",
            "expected [greater_than(4)], received [3]",
        ),
    ],
)
def test_a_soft_assertion_fails_with_a_soft_error_at_its_call(call: str, message: str) -> None:
    err = Session().failure(scenario(f"  let n = 1\n  {call}"))
    assert (err.name, err.line, err.col, err.message, err.soft) == (
        "AssertionError",
        3,
        2,
        message,
        True,
    )


@pytest.mark.parametrize(
    "options", ["", ", null", ", {}", ", {soft: false}"], ids=["none", "null", "empty", "false"]
)
def test_without_soft_true_a_failure_is_not_soft(options: str) -> None:
    err = Session().failure(scenario(f"  expect_equal(1, 2{options})"))
    assert (err.name, err.line, err.col, err.soft) == ("AssertionError", 2, 2, False)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ("expect_equal(1, 1, {soft: 1})", "expect_equal()'s soft is true or false, got 1"),
        (
            'expect_not_equal(1, 2, {soft: "yes"})',
            'expect_not_equal()\'s soft is true or false, got "yes"',
        ),
        ("expect_equal(1, 2, {soft: 1})", "expect_equal()'s soft is true or false, got 1"),
        (
            "expect_poll(none, 7, {soft: 1})",
            "expect_poll()'s soft is true or false, got 1",
        ),
        (
            "expect_to_pass(none, {soft: null})",
            "expect_to_pass()'s soft is true or false, got null",
        ),
        (
            "expect_equal(1, 2, {sof: true})",
            "expect_equal() has no option 'sof' (its only option: soft)",
        ),
        (
            "expect_equal(1, 2, true)",
            "expect_equal() takes its options as an object {soft}, got boolean",
        ),
    ],
)
def test_a_wrong_soft_option_is_a_type_error_never_soft(call: str, message: str) -> None:
    """Even where the assertion itself would fail (``expect_equal(1, 2, {soft: 1})``):
    the option is read first, and a wrong argument is no soft failure."""
    err = Session().failure(scenario(f"  {call}", NONE))
    assert (err.name, err.line, err.col, err.message, err.soft) == (
        "TypeError",
        5,
        2,
        message,
        False,
    )


def test_expect_poll_and_expect_to_pass_giving_up_softly_are_soft() -> None:
    functions = NONE + "function never() {\n  fail('not yet')\n}\n"  # never: lines 4-6
    session = Session()
    poll = session.failure(
        scenario("  expect_poll(none, 8, {soft: true, timeout: 300, intervals: [100]})", functions)
    )
    assert (poll.name, poll.line, poll.col, poll.soft) == ("AssertionError", 8, 2, True)
    assert (
        poll.message == "expect_poll(none) gave up after 300 ms: expected 8, last got 7 (3 calls)"
    )
    to_pass = session.failure(
        scenario("  expect_to_pass(never, {soft: true, timeout: 100})", functions)
    )
    assert (to_pass.name, to_pass.line, to_pass.col, to_pass.soft) == ("ScenarioError", 8, 2, True)
    assert to_pass.message.startswith("expect_to_pass(never) gave up after 100 ms (1 call); ")
    assert to_pass.message.endswith(f"the last call failed at {FILE}:5:2: not yet")


def test_a_soft_failure_inside_expect_to_pass_fails_the_attempt_which_is_retried() -> None:
    """Playwright's expect.soft inside toPass: the attempt fails (not softly, caught) and
    is retried; here the third call passes, and nothing soft is left."""
    functions = "function third() {\n  expect_equal(now() >= 1300, true, {soft: true})\n}\n"
    session = Session()
    hook = Recorder(soft_goes_on=True)
    source = scenario("  expect_to_pass(third)\n  return now()", functions)
    assert session.run(source, hook) == 1350.0  # waited 100, then 250 ms
    assert [(e.line, e.depth, e.caught, e.error, e.soft) for e in hook.failed()] == [
        (2, 1, True, "AssertionError", False),
        (2, 1, True, "AssertionError", False),
    ]


def test_a_soft_failure_in_a_function_expect_to_pass_gives_up_on_is_its_last_error() -> None:
    functions = "function never() {\n  expect_equal(1, 2, {soft: true})\n}\n"
    err = Session().failure(
        scenario("  expect_to_pass(never, {timeout: 100, intervals: [100]})", functions)
    )
    assert (err.name, err.line, err.col, err.soft) == ("AssertionError", 5, 2, False)
    assert err.message == (
        "expect_to_pass(never) gave up after 100 ms (1 call); the last call failed at "
        f"{FILE}:2:2: expected 2, received 1"
    )


def test_the_language_alone_treats_a_soft_failure_as_an_ordinary_one() -> None:
    """With no hook, nothing records a soft failure: a ``try`` catches it, and without
    one the scenario ends there."""
    caught = scenario(
        "  try {\n    expect_equal(1, 2, {soft: true})\n  } catch (e) {\n    return e.message\n  }"
    )
    assert Session().run(caught) == "expected 2, received 1"
    err = Session().failure(scenario('  expect_equal(1, 2, {soft: true})\n  log("after")'))
    assert err.soft and err.line == 2


def test_a_hook_that_goes_on_past_soft_failures_is_not_stopped_by_a_try() -> None:
    """The runner's contract with the interpreter: the hook answers SKIP to a soft
    failure, so the statement is left as failed and the next one runs; the ``catch``
    never runs, and the step is seen as caught (a ``try`` is around it) yet soft."""
    session = Session()
    hook = Recorder(soft_goes_on=True)
    source = scenario(
        "  try {\n"
        "    expect_equal(1, 2, {soft: true})\n"
        '    log("after it")\n'
        "  } catch (e) {\n"
        '    log("caught")\n'
        "  }\n"
        "  expect_not_equal(3, 3, {soft: true})\n"
        '  return "went on"'
    )
    assert session.run(source, hook) == "went on"
    assert session.logs == ["after it"]
    assert [(e.line, e.caught, e.error, e.soft) for e in hook.failed()] == [
        (3, True, "AssertionError", True),
        (8, False, "AssertionError", True),
    ]


def test_builtin_errors_are_not_soft_unless_told() -> None:
    assert not BuiltinError("AssertionError", "x").soft
    assert BuiltinError("AssertionError", "x", soft=True).soft
    assert not ScriptError("AssertionError", "x", FILE, 1, 0).soft
    assert ScriptError("AssertionError", "x", FILE, 1, 0, soft=True).soft


# --- static_title: the title step:started can say ------------------------------------------------


def _statement(line: str) -> ast.Stmt:
    program = parse_program(scenario(f"  {line}", NONE), FILE)
    test = next(fn for fn in program.functions if fn.name == "test_main")
    return test.body.body[0]


@pytest.mark.parametrize(
    ("line", "title"),
    [
        ('step("Log in", none)', "Log in"),
        ('const who = step("Log in", none)', "Log in"),
        ('let who = step("Log in", none, {args: []})', "Log in"),
        ('who = step("Log in", none)', "Log in"),
        ('return step("Log in", none)', "Log in"),
        ("step(`Log in`, none)", "Log in"),
        ("step(`Add ${1 + 1}`, none)", None),
        ("let t = `x`; step(t, none)", None),
        ('log("Log in")', None),
        ('log(step("Log in", none))', None),
        ("return", None),
        ("let who", None),
        ('if (true) { step("Log in", none) }', None),
        ("step()", None),
    ],
)
def test_static_title_is_a_literal_title_of_a_step_statement(line: str, title: str | None) -> None:
    assert static_title(_statement(line)) == title


# --- check: the function a step runs ----------------------------------------------------------

CHECK_FUNCTIONS = """\
function one(a) {
  return a
}
function none() {
  return 1
}
"""


def problems(body: str) -> list[tuple[int, int, str]]:
    """What ``check`` reports of ``test_main``'s body, lines counted from the body."""
    program = parse_program(scenario(body, CHECK_FUNCTIONS), "c.test.js")
    found = check_program(program, {}, PURE_SIGNATURES, (), PURE_OPTIONS)
    return [(d.line - 7, d.col, d.message) for d in found]


def test_check_knows_what_the_step_function_is_called_with() -> None:
    body = """\
  step("A", one)
  step("B", one, {args: [1, 2]})
  step("C", none, {args: [1]})
  step("D", one, {args: [1]})
  let v = step("E", none)
  step("F", one, {arg: [1]})
  step("G", one, {args: many})
  step("H")
  step(`I ${v}`, one, {args: [v]})"""
    assert problems(body) == [
        (
            1,
            12,
            "TypeError: step() calls one() without arguments, but it takes 1 argument: give "
            "them in its options ({args: [...]}) or run a function without parameters",
        ),
        (
            2,
            12,
            "TypeError: step() calls one() with 2 arguments (its args), but it takes 1 argument",
        ),
        (
            3,
            12,
            "TypeError: step() calls none() with 1 argument (its args), but it takes 0 arguments",
        ),
        (
            6,
            12,
            "TypeError: step() calls one() without arguments, but it takes 1 argument: give "
            "them in its options ({args: [...]}) or run a function without parameters",
        ),
        (6, 18, "TypeError: step() has no option 'arg' (did you mean 'args'?) (its options: args)"),
        (7, 24, "ReferenceError: 'many' is not defined"),
        (8, 2, "TypeError: step() takes 2 to 3 arguments but got 1"),
    ]


def test_check_says_the_step_function_is_passed_without_calling_it() -> None:
    found = problems('  step("E", none())')
    assert [(line, col) for line, col, _ in found] == [(1, 12)]
    assert found[0][2].startswith("TypeError: step() takes the function itself: write ")
    assert found[0][2].endswith(" without the ()")


def test_check_suggests_a_step_call_with_its_title_first() -> None:
    (found,) = problems('  step("E", none())')
    assert "write step(..., none, ...) without the ()" in found[2]


# --- the run's verdict on its soft failures ---------------------------------------------------


def _point(line: int, message: str, index: int) -> FailurePoint:
    error = ScriptError("AssertionError", message, FILE, line, 2, soft=True)
    return FailurePoint(error, index, line, 2, FILE, f"expect_equal(x{line})", [], {})


def _record(*points: FailurePoint) -> StepRecord:
    record = StepRecord("test_main", lambda text: text)
    record.soft_failures.extend(points)
    return record


def test_no_soft_failure_leaves_the_ending_as_it_is() -> None:
    ending = ScriptError("TypeError", "boom", FILE, 9, 2)
    assert _record().soft_verdict(None) is None
    assert _record().soft_verdict(ending) is ending and ending.message == "boom"


def test_soft_failures_alone_end_the_run_with_one_error_listing_them_placed_at_the_first() -> None:
    first, second = _point(4, "expected 2, received 1\nmore", 3), _point(7, "expected b", 5)
    record = _record(first, second)
    verdict = record.soft_verdict(None)
    assert verdict is not None and not verdict.soft
    assert (verdict.name, verdict.file, verdict.line, verdict.col) == ("AssertionError", FILE, 4, 2)
    assert verdict.message == (
        "2 soft assertions failed:\n"
        f"  {FILE}:4:2: AssertionError: expected 2, received 1\n"
        f"  {FILE}:7:2: AssertionError: expected b"
    )
    # The verdict's failure point is the first soft failure's: its step, its bundle.
    found = record.failure_for(verdict)
    assert found is not None and found.step_index == 3
    assert record.last_failure is not None and record.last_failure["line"] == 4
    assert record.soft_failures == []  # told once
    assert record.soft_verdict(None) is None


def test_a_hard_failure_after_soft_ones_says_how_many_failed_before_it() -> None:
    ending = ScriptError("TimeoutError", "no #pay", FILE, 12, 2)
    verdict = _record(_point(4, "expected 2, received 1", 3)).soft_verdict(ending)
    assert verdict is ending
    assert ending.message == (
        "no #pay\n(1 soft assertion failed before it:\n"
        f"  {FILE}:4:2: AssertionError: expected 2, received 1)"
    )


# --- the titled steps the reports show --------------------------------------------------------


def started(title: str | None = None) -> dict[str, Any]:
    line: dict[str, Any] = {"kind": "step:started", "line": 1, "col": 2, "text": "x", "depth": 0}
    if title is not None:
        line["title"] = title
    return line


def ok(ms: float, title: str | None = None) -> dict[str, Any]:
    line: dict[str, Any] = {"kind": "step:ok", "durationMs": ms}
    if title is not None:
        line["title"] = title
    return line


def fail(message: str, *, title: str | None = None, soft: bool = False) -> dict[str, Any]:
    line: dict[str, Any] = {"kind": "step:fail", "error": message, "errorName": "AssertionError"}
    line.update({"durationMs": 5.0} if title is None else {"durationMs": 9.0, "title": title})
    if soft:
        line["soft"] = True
    return line


def test_titled_steps_nest_and_a_step_inside_a_plain_statement_moves_up() -> None:
    lines = [
        started("Log in"),
        started(),
        ok(1.0),
        ok(12.5, "Log in"),
        started(),  # a helper call, no step of its own
        started(),  # the titled step inside it, its title known when it ran
        started("Fill"),
        started(),
        ok(1.0),
        ok(3.0, "Fill"),
        ok(4.0, "Add pen"),
        ok(5.0),
        started("Pay"),
        started("Card"),
        fail("expected visa", title="Card"),
        fail("expected visa", title="Pay"),
    ]
    leaf = {"status": "passed", "steps": []}
    assert titled_steps(lines) == [
        {**leaf, "title": "Log in", "duration_ms": 12.5},
        {
            **leaf,
            "title": "Add pen",
            "duration_ms": 4.0,
            "steps": [{**leaf, "title": "Fill", "duration_ms": 3.0}],
        },
        {
            "title": "Pay",
            "status": "failed",
            "duration_ms": 9.0,
            "error": "AssertionError: expected visa",
            "steps": [
                {
                    "title": "Card",
                    "status": "failed",
                    "duration_ms": 9.0,
                    "error": "AssertionError: expected visa",
                    "steps": [],
                }
            ],
        },
    ]


def test_a_run_killed_inside_titled_steps_keeps_the_ones_that_ended() -> None:
    lines = [started("Outer"), started("Done"), ok(2.0, "Done"), started("Never ends")]
    assert titled_steps(lines) == [
        {"title": "Done", "status": "passed", "duration_ms": 2.0, "steps": []}
    ]
    assert titled_steps([started(), ok(1.0)]) == []


def test_a_titled_step_with_a_soft_failure_inside_is_failed() -> None:
    """As Playwright's reports (>= 1.30, microsoft/playwright#19973) mark it."""
    lines = [started("Check"), started(), fail("expected 2", soft=True), ok(7.0, "Check")]
    (check,) = titled_steps(lines)
    assert check["status"] == "failed"
    assert "expected 2" in check["error"]
    plain = [started("Check"), started(), fail("expected 2"), ok(7.0, "Check")]
    assert titled_steps(plain)[0]["status"] == "passed"  # a caught hard failure


# --- the hook chain around the interpreter: soft failures and the debugger ------------------


@dataclass
class Debugger:
    """What the hook chain asks of a debugger; answers each failure pause in turn."""

    answers: list[Directive]
    pauses: list[tuple[int, bool]] = field(default_factory=list)
    pause_on_failure: bool = True

    def before(self, step: Step) -> Directive:
        return Directive.PROCEED

    def after_failure(self, step: Step, error: ScriptError) -> Directive:
        self.pauses.append((step.line, error.soft))
        return self.answers.pop(0)


@dataclass
class ChainRun:
    steps: StepRecord
    rundir: RunDirectory
    out: io.StringIO
    bundles: list[tuple[int, int]]
    logs: list[str]
    error: ScriptError | None

    def events(self) -> list[dict[str, Any]]:
        return read_events(self.rundir.path)


SOFT_RUN = """\
function counted() {
  return tick()
}
function check() {
  expect_equal(counted(), 3, {soft: true})
  log("in check")
}
function test_main() {
  try {
    expect_equal(tick(), 5, {soft: true})
  } catch (e) {
    log("caught")
  }
  const n = step("Check", check)
  expect_not_equal(tick(), greater_than(0), {soft: true})
  log("done")
}
"""
# tick() gives 1, 2, 3, ...: line 10 fails (1 != 5); line 5 fails (2 != 3), and passes
# when retried (3); line 15 always fails.


@pytest.fixture
def chain_run(tmp_path: Path) -> Iterator[Callable[[Debugger | None], ChainRun]]:
    made: list[tuple[RunDirectory, asyncio.AbstractEventLoop]] = []

    def start(debugger: Debugger | None) -> ChainRun:
        rundir = RunDirectory.create(tmp_path / f"runs{len(made)}", "scenario", "shop")
        loop = asyncio.new_event_loop()
        made.append((rundir, loop))
        out = io.StringIO()
        console = ConsoleOutput(out, lambda text: text)
        steps, _ = record_steps(rundir, "shop", "test_main", console)
        bundles: list[tuple[int, int]] = []
        hook = HookChain(
            steps,
            LoopBridge(loop),
            debugger,  # type: ignore[arg-type]  # a stand-in with what the chain asks
            on_soft_failure=lambda err, point: bundles.append((err.line, point.step_index)),
        )
        logs: list[str] = []
        ticks = iter(range(1, 100))
        builtins = make_pure_builtins(
            PureServices(env=lambda name: None, log=logs.append, titled=steps.titled)
        )
        builtins["tick"] = Builtin("tick", lambda: float(next(ticks)), 0, 0)
        interp = Interpreter(builtins, hook=hook)
        error = None
        try:
            interp.run(parse_program(SOFT_RUN, FILE), "test_main")
        except ScriptError as err:
            error = err
        verdict = steps.soft_verdict(error)
        return ChainRun(steps, rundir, out, bundles, logs, verdict)

    yield start
    for rundir, loop in made:
        rundir.close()
        loop.close()


def _soft_fails(run: ChainRun) -> list[tuple[int, str]]:
    """(line, error) of every soft step:fail, the line from its step:started."""
    events, found, open_lines = run.events(), [], []
    for event in events:
        if event["kind"] == "step:started":
            open_lines.append(event["line"])
        elif event["kind"] in ("step:ok", "step:fail"):
            line = open_lines.pop()
            if event.get("soft"):
                assert "caught" not in event and event["errorName"] == "AssertionError"
                assert isinstance(event["durationMs"], float)
                found.append((line, event["error"]))
    return found


def test_soft_failures_are_recorded_bundled_and_gone_past(
    chain_run: Callable[[Debugger | None], ChainRun],
) -> None:
    run = chain_run(None)
    assert run.logs == ["in check", "done"]  # the catch never ran, the scenario went on
    assert _soft_fails(run) == [
        (10, "expected 5, received 1"),
        (5, "expected 3, received 2"),
        (15, "expected not a value greater than 0, received 3"),
    ]
    assert [line for line, _ in run.bundles] == [10, 5, 15]  # one bundle each
    assert len({index for _, index in run.bundles}) == 3  # each at its own step
    assert run.error is not None and run.error.message.startswith("3 soft assertions failed:\n")
    assert (run.error.line, run.error.col) == (10, 4)
    # The step statement is titled on every event of it, and passed: it went on.
    titled = [e for e in run.events() if e.get("title") == "Check"]
    assert [e["kind"] for e in titled] == ["step:started", "step:ok"]
    text = run.out.getvalue()
    assert "Check" in text and 'step("Check", check)' not in text
    assert "(soft AssertionError" in text and "caught AssertionError" not in text


def test_at_a_soft_failure_retry_and_skip_forget_it_and_continue_keeps_it(
    chain_run: Callable[[Debugger | None], ChainRun],
) -> None:
    debugger = Debugger([Directive.SKIP, Directive.RETRY, Directive.PROCEED])
    run = chain_run(debugger)
    # Every soft failure paused, the retried one once (its retry passed).
    assert debugger.pauses == [(10, True), (5, True), (15, True)]
    assert run.logs == ["in check", "done"]
    assert [line for line, _ in run.bundles] == [15]  # only the one kept
    assert run.error is not None
    assert run.error.message == (
        "1 soft assertion failed:\n"
        f"  {FILE}:15:2: AssertionError: expected not a value greater than 0, received 4"
    )
    assert run.steps.failures_skipped == 1
    kinds = [e["kind"] for e in run.events()]
    assert kinds.count("step:skipped") == 1


def test_when_every_soft_failure_is_forgotten_the_run_passes(
    chain_run: Callable[[Debugger | None], ChainRun],
) -> None:
    debugger = Debugger([Directive.SKIP, Directive.SKIP, Directive.SKIP])
    run = chain_run(debugger)
    assert run.error is None and run.bundles == [] and run.logs == ["in check", "done"]
