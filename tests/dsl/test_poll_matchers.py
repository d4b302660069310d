"""Matchers, ``expect_poll`` with them, ``expect_to_pass``, built-ins as function values
and ``type_of``, in milliseconds (time is fake: only the retries' waits move it).

What a run's transcript shows is in the goldens (``tests/golden/run/matchers``,
``poll_matchers``, ``to_pass``, ``builtin_values``, ``type_of``); here are what a
transcript cannot show: the steps a hook sees (an ``expect_to_pass`` attempt's failed
steps are caught, only its own failure is not), positions of the errors, what ``check``
reports with the real signatures, and the values' Python side.
"""

from __future__ import annotations

import pytest

from dsl.builtins import (
    FUNCTION_AT,
    MATCHERS,
    PURE_OPTIONS,
    PURE_SIGNATURES,
    PureServices,
    make_pure_builtins,
)
from dsl.checker import Arity, check_program, function_references
from dsl.errors import BuiltinError, Interrupt, ScriptError
from dsl.interpreter import Builtin, BuiltinValue, Directive, Interpreter, Step
from dsl.parser import parse_program
from dsl.values import MatcherValue, Value, deep_equal, render, strict_equal

# --- a run with fake time -----------------------------------------------------------------


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0
        self.interrupt_after: int | None = None
        self.sleeps = 0

    def sleep(self, seconds: float) -> None:
        self.sleeps += 1
        if self.interrupt_after is not None and self.sleeps > self.interrupt_after:
            raise Interrupt("aborted")
        self.now += seconds

    def elapsed(self) -> float:
        return self.now

    def clock_ms(self) -> float:
        return 1000.0 + self.now * 1000.0


class Steps:
    """A hook recording each step's end: (line, depth, caught, error name or None)."""

    def __init__(self) -> None:
        self.ended: list[tuple[int, int, bool, str | None]] = []

    def before_statement(self, step: Step) -> Directive:
        return Directive.PROCEED

    def after_statement(self, step: Step, error: ScriptError | None) -> Directive:
        self.ended.append((step.line, step.depth, step.caught, error.name if error else None))
        return Directive.PROCEED

    def failed(self) -> list[tuple[int, int, bool, str | None]]:
        return [end for end in self.ended if end[3] is not None]


def interpreter(
    time: FakeTime, hook: Steps | None = None, logs: list[str] | None = None
) -> Interpreter:
    services = PureServices(
        env=lambda name: None,
        log=(logs if logs is not None else []).append,
        clock_ms=time.clock_ms,
        sleep=time.sleep,
        elapsed=time.elapsed,
    )
    return Interpreter(make_pure_builtins(services), hook=hook)


def run(source: str, hook: Steps | None = None, time: FakeTime | None = None) -> Value:
    program = parse_program(source, "e2e/poll.test.js")
    return interpreter(time or FakeTime(), hook).run(program, "test_main")


def failure(source: str, hook: Steps | None = None) -> ScriptError:
    with pytest.raises(ScriptError) as info:
        run(source, hook)
    return info.value


# --- expect_to_pass: attempts are caught, only the last failure counts -------------------------

SAVED = """\
function saved() {
  let ready = now() >= 1300
  expect_equal(ready, true)
}
function never() {
  fail("not yet")
}
function test_main() {
  expect_to_pass(saved)
  expect_to_pass(never, { timeout: 300, intervals: [100] })
}
"""


def test_the_failed_steps_of_an_attempt_are_caught_and_only_the_give_up_counts() -> None:
    steps = Steps()
    err = failure(SAVED, steps)
    assert (err.name, err.line, err.col) == ("ScenarioError", 10, 2)
    assert err.message == (
        "expect_to_pass(never) gave up after 300 ms (3 calls); the last call failed at "
        "e2e/poll.test.js:6:2: not yet"
    )
    # saved(): two failed attempts (at 1000 and 1100 ms), the third passes (1350 ms);
    # never(): three failed attempts; all caught, one level deeper than the statement.
    assert steps.failed() == [
        (3, 1, True, "AssertionError"),
        (3, 1, True, "AssertionError"),
        (6, 1, True, "ScenarioError"),
        (6, 1, True, "ScenarioError"),
        (6, 1, True, "ScenarioError"),
        (10, 0, False, "ScenarioError"),
    ]
    assert (9, 0, False, None) in steps.ended  # the first expect_to_pass passed


def test_a_passing_retry_leaves_no_uncaught_failure_and_try_depth_is_restored() -> None:
    steps = Steps()
    time = FakeTime()
    interp = interpreter(time, steps)
    program = parse_program(SAVED.replace("  expect_to_pass(never, ", "  log(1, "), "p.test.js")
    assert interp.run(program, "test_main") is None
    assert [end for end in steps.failed() if not end[2]] == []
    assert interp._try_depth == 0
    assert time.now == pytest.approx(0.35)  # waited 100 then 250 ms


def test_expect_to_pass_in_a_try_is_caught_there() -> None:
    source = """\
function never() {
  fail("no")
}
function test_main() {
  try {
    expect_to_pass(never, { timeout: 100 })
  } catch (e) {
    return e.name + ": " + e.message
  }
}
"""
    steps = Steps()
    assert run(source, steps) == (
        "ScenarioError: expect_to_pass(never) gave up after 100 ms (1 call); the last call "
        "failed at e2e/poll.test.js:2:2: no"
    )
    assert all(caught for _, _, caught, name in steps.ended if name)


def test_an_interrupt_while_retrying_passes_through_and_restores_the_depth() -> None:
    time = FakeTime()
    time.interrupt_after = 2
    interp = interpreter(time)
    program = parse_program(SAVED.replace("now() >= 1300", "false"), "p.test.js")
    with pytest.raises(Interrupt):
        interp.run(program, "test_main")
    assert interp._try_depth == 0


def test_a_failure_inside_a_polled_function_is_not_caught() -> None:
    """expect_poll fails at once where its function failed (Playwright's throwing
    callback); expect_to_pass is the one that retries failures."""
    source = (
        "function broken() {\n  fail('x')\n}\nfunction test_main() {\n  expect_poll(broken, 1)\n}\n"
    )
    steps = Steps()
    err = failure(source, steps)
    assert (err.name, err.line, err.col, err.message) == ("ScenarioError", 2, 2, "x")
    assert steps.failed() == [(2, 1, False, "ScenarioError"), (5, 0, False, "ScenarioError")]


# --- built-ins as function values -------------------------------------------------------------


def test_a_built_in_is_a_value_where_a_function_is_passed() -> None:
    source = """\
function twice(fn) {
  return [type_of(fn), `${fn}`]
}
function test_main() {
  expect_poll(now, greater_than(1000))
  expect_to_pass(now)
  return twice(now)
}
"""
    assert run(source) == ["function", "<built-in now>"]


@pytest.mark.parametrize(
    ("line", "col"),
    [("  let f = now", 10), ("  log(now)", 6), ("  expect_poll(range, now)", 21)],
)
def test_a_built_in_is_no_value_anywhere_else(line: str, col: int) -> None:
    err = failure(f"function test_main() {{\n{line}\n}}\n")
    assert (err.name, err.line, err.col) == ("TypeError", 2, col)
    assert err.message.startswith("'now' is a built-in: call it as now(...); a built-in is a")


def test_a_variable_or_a_file_function_named_like_a_built_in_wins() -> None:
    source = """\
function now() {
  return 7
}
function show(v) {
  return `${v}`
}
function test_main() {
  let log = 3
  return [show(log), show(now), show(range)]
}
"""
    assert run(source) == ["3", "<function now>", "<built-in range>"]


def test_a_built_in_value_checks_its_arity_and_keeps_its_errors() -> None:
    builtin = Builtin("num", lambda v: 1.0 if v == "1" else [][0], 1, 1)
    value = BuiltinValue(builtin)
    assert value.arity() == (1, 1) and value.render() == "<built-in num>"
    assert value.call(["1"]) == 1.0
    with pytest.raises(BuiltinError, match=r"num\(\) takes 1 argument but got 0"):
        value.call([])
    with pytest.raises(BuiltinError, match=r"num\(\): IndexError"):
        value.call(["2"])
    assert value.same_as(BuiltinValue(builtin)) and not value.same_as(
        MatcherValue("x", (), bool, "")
    )


def test_only_expect_poll_expect_to_pass_and_step_take_a_function() -> None:
    builtins = make_pure_builtins(PureServices(env=lambda n: None, log=lambda line: None))
    taking = {name: b.function_at for name, b in builtins.items() if b.function_at is not None}
    assert taking == FUNCTION_AT == {"expect_poll": 0, "expect_to_pass": 0, "step": 1}


# --- matchers as values -----------------------------------------------------------------------


def test_matchers_render_compare_and_nest() -> None:
    made = run(
        "function test_main() {\n"
        "  return [contains('a'), close_to(1, 3), truthy(), matches_object({ a: [1] })]\n}\n"
    )
    assert isinstance(made, list)
    assert [render(m) for m in made] == [
        'contains("a")',
        "close_to(1, 3)",
        "truthy()",
        "matches_object({ a: [1] })",
    ]
    contains_a = made[0]
    assert isinstance(contains_a, MatcherValue) and contains_a.type_name == "matcher"
    assert strict_equal(contains_a, MatcherValue("contains", ("a",), bool, ""))
    assert deep_equal({"items": ["xa", 2.0]}, {"items": [contains_a, 2.0]})
    assert not deep_equal({"items": ["x", 2.0]}, {"items": [contains_a, 2.0]})
    assert deep_equal([float("nan")], [float("nan")])


@pytest.mark.parametrize(
    ("line", "col", "message"),
    [
        (
            "  if (3 > 2 && 3 == greater_than(2)) { log(1) }",
            17,
            "'==' compares values, not with a matcher (greater_than(2)): a matcher is only the "
            "expected value of expect_equal, expect_not_equal or expect_poll "
            "(expect_equal(x, greater_than(2)))",
        ),
        (
            "  log(len(contains('x')))",
            6,
            'len() needs a string, array or object, got matcher (contains("x"): a matcher is '
            "only the expected value of expect_equal, expect_not_equal or expect_poll)",
        ),
        (
            "  assert(truthy())",
            2,
            "assert() takes a condition, not a matcher (truthy()): check a value with "
            "expect_equal(value, truthy())",
        ),
        (
            "  expect_equal(falsy(), 0)",
            2,
            "expect_equal(actual, expected) takes the matcher second: expect_equal(value, falsy())",
        ),
        ("  let m = close_to(1, 0.5)", 10, "close_to() needs a whole number of digits, got 0.5"),
    ],
)
def test_a_misused_matcher_says_what_matchers_are_for(line: str, col: int, message: str) -> None:
    err = failure(f"function test_main() {{\n{line}\n}}\n")
    assert (err.name, err.line, err.col, err.message) == ("TypeError", 2, col, message)


def test_expect_poll_gives_up_naming_the_matcher_and_the_last_value() -> None:
    source = """\
function count_items() {
  return 2
}
function test_main() {
  expect_poll(count_items, greater_than(3))
}
"""
    err = failure(source)
    assert (err.name, err.line, err.col) == ("AssertionError", 5, 2)
    assert err.message == (
        "expect_poll(count_items) gave up after 5000 ms: expected a value greater than 3, "
        "last got 2 (8 calls)"
    )


def test_expect_poll_calls_with_its_args() -> None:
    source = """\
function at_least(n) {
  return now() >= n
}
function test_main() {
  expect_poll(at_least, true, { args: [1300] })
  return now()
}
"""
    assert run(source) == 1350.0


# --- check: arities, options, where a built-in may be a value --------------------------------

CHECK_BUILTINS: dict[str, Arity] = {
    **PURE_SIGNATURES,
    "url": (0, 0),
    "dialog_message": (0, 0),
    "text_of": (1, 1),
}


def problems(body: str, extra: str = "") -> list[tuple[int, int, str]]:
    source = f"{extra}function test_main() {{\n{body}\n}}\n"
    program = parse_program(source, "c.test.js")
    found = check_program(program, {"wait_on": (2, 2)}, CHECK_BUILTINS, (), PURE_OPTIONS)
    offset = extra.count("\n") + 1
    return [(d.line - offset, d.col, d.message) for d in found]


def test_check_takes_a_built_in_where_a_function_is_passed() -> None:
    body = """\
  expect_poll(url, contains("/done"))
  expect_poll(dialog_message, "Hello", { timeout: 100 })
  expect_to_pass(url)
  expect_poll(text_of, "x", { args: ["#a"] })
  wait_on(url, 3)
  local(dialog_message)
  expect_equal(len([1, 2]), greater_than(1))
  expect_not_equal(type_of(1), "string")
  expect_poll(url, close_to(1), opts)"""
    local = "function local(fn) {\n  expect_poll(fn, 1)\n}\nlet opts = 1\n"
    assert problems(body, local.replace("let opts = 1\n", "")) == [
        (9, 32, "ReferenceError: 'opts' is not defined"),
    ]


def test_check_refuses_a_built_in_as_a_value_anywhere_else() -> None:
    found = problems(
        "  let f = url\n  log(url)\n  expect_equal(url, 'x')\n  expect_poll(now, url)\n"
        "  return [dialog_message]"
    )
    assert [(line, col) for line, col, _ in found] == [(1, 10), (2, 6), (3, 15), (4, 19), (5, 10)]
    assert found[0][2] == (
        "TypeError: 'url' is a built-in: call it as url(...); a built-in is a value only where "
        "a function is passed: expect_poll(url, ...), expect_to_pass(url), "
        'step("...", url), or an argument of a '
        "function of the scenario's file or of a helper"
    )


def test_check_knows_what_the_polled_function_is_called_with() -> None:
    body = """\
  expect_poll(url(), contains("/done"))
  expect_to_pass(text_of)
  expect_poll(text_of, "x", { args: [1, 2] })
  expect_poll(wait_on, 1, { args: [1, 2] })
  expect_to_pass(wait_on, { args: [1], timeot: 5 })
  expect_poll(text_of, "x", { args: many })"""
    assert problems(body) == [
        (
            1,
            14,
            "TypeError: expect_poll() takes the function itself: write expect_poll(url, ...) "
            "without the ()",
        ),
        (
            2,
            17,
            "TypeError: expect_to_pass() calls text_of() without arguments, but it takes 1 "
            "argument: give them in its options ({args: [...]}) or retry a function without "
            "parameters",
        ),
        (
            3,
            14,
            "TypeError: expect_poll() calls text_of() with 2 arguments (its args), but it "
            "takes 1 argument",
        ),
        (
            5,
            17,
            "TypeError: expect_to_pass() calls wait_on() with 1 argument (its args), but it "
            "takes 2 arguments",
        ),
        (
            5,
            39,
            "TypeError: expect_to_pass() has no option 'timeot' (did you mean 'timeout'?) "
            "(its options: args, intervals, soft, timeout)",
        ),
        (6, 36, "ReferenceError: 'many' is not defined"),
    ]


def test_check_knows_every_new_pure_built_in() -> None:
    assert set(MATCHERS) | {"expect_to_pass", "expect_not_equal", "type_of"} <= set(PURE_SIGNATURES)
    calls = "".join(f"  {name}(1, 2, 3, 4)\n" for name in [*MATCHERS, "type_of", "expect_to_pass"])
    found = problems(calls)
    assert len(found) == len(MATCHERS) + 2
    assert found[0] == (1, 2, "TypeError: contains() takes 1 argument but got 4")
    assert (6, 2, "TypeError: close_to() takes 1 to 2 arguments but got 4") in found
    assert (7, 2, "TypeError: truthy() takes 0 arguments but got 4") in found


def test_the_watch_graph_sees_a_built_in_passed_by_name_as_a_read() -> None:
    program = parse_program(
        "function test_main() {\n  expect_poll(url, contains('x'))\n}\n", "w.test.js"
    )
    (refs,) = function_references(program)
    assert "url" in refs.reads and {"expect_poll", "contains"} <= refs.calls
