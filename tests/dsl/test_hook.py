"""The statement hook: what the debugger will stand on (before/after every step)."""

from __future__ import annotations

import pytest

from dsl import ast
from dsl.builtins import PureServices, make_pure_builtins
from dsl.errors import Interrupt, ScenarioSyntaxError, ScriptError
from dsl.interpreter import Directive, FunctionRef, Interpreter, Step
from dsl.parser import parse_program

SCENARIO = """\
function test_main() {
  let total = 0
  for (const n of [1, 2]) {
    total += add_one(n)
  }
  if (total > 3) {
    log("big", total)
  }
  return total
}
function add_one(x) {
  const y = x + 1
  return y
}
"""


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, int, int, int, str]] = []
        self.snapshots: list[dict[str, object]] = []
        self.frames: list[tuple[tuple[str, str, int], ...]] = []

    def before_statement(self, step: Step) -> Directive:
        self.events.append(("before", step.line, step.col, step.depth, step.text))
        self.snapshots.append(dict(step.variables()))
        self.frames.append(tuple((f.fn, f.file, f.line) for f in step.frames()))
        return Directive.PROCEED

    def after_statement(self, step: Step, error: ScriptError | None) -> Directive:
        self.events.append(
            ("after" if error is None else "fail", step.line, step.col, step.depth, step.text)
        )
        return Directive.PROCEED


def _interp(hook: object = None, logs: list[str] | None = None) -> Interpreter:
    sink = logs if logs is not None else []
    builtins = make_pure_builtins(PureServices(env=lambda name: None, log=sink.append))
    return Interpreter(builtins, hook=hook)  # type: ignore[arg-type]


def test_hook_sees_every_step_with_positions_depth_and_text() -> None:
    program = parse_program(SCENARIO, "e2e/main.test.js")
    recorder = Recorder()
    assert _interp(recorder).run(program, "test_main") == 5.0
    befores = [
        (line, col, depth, text)
        for kind, line, col, depth, text in recorder.events
        if kind == "before"
    ]
    assert befores == [
        (2, 2, 0, "let total = 0"),
        (3, 2, 0, "for (const n of [1, 2])"),
        (4, 4, 0, "total += add_one(n)"),
        (12, 2, 1, "const y = x + 1"),
        (13, 2, 1, "return y"),
        (3, 2, 0, "for (const n of [1, 2])"),
        (4, 4, 0, "total += add_one(n)"),
        (12, 2, 1, "const y = x + 1"),
        (13, 2, 1, "return y"),
        (3, 2, 0, "for (const n of [1, 2])"),
        (6, 2, 0, "if (total > 3)"),
        (7, 4, 0, 'log("big", total)'),
        (9, 2, 0, "return total"),
    ]
    # Every step is closed by exactly one "after", nested steps inside their caller's.
    assert sum(1 for e in recorder.events if e[0] == "after") == len(befores)


def test_hook_sees_variables_and_call_stack_inside_a_helper() -> None:
    program = parse_program(SCENARIO, "e2e/main.test.js")
    recorder = Recorder()
    _interp(recorder).run(program, "test_main")
    befores = [e for e in recorder.events if e[0] == "before"]
    inside = befores.index(("before", 13, 2, 1, "return y"))
    assert recorder.snapshots[inside] == {"x": 1.0, "y": 2.0}
    assert recorder.frames[inside] == (
        ("test_main", "e2e/main.test.js", 4),
        ("add_one", "e2e/main.test.js", 13),
    )
    loop_body = befores.index(("before", 4, 4, 0, "total += add_one(n)"))
    assert recorder.snapshots[loop_body] == {"total": 0.0, "n": 1.0}


def test_a_callers_frame_has_its_own_variables_and_evaluates_in_its_scope() -> None:
    program = parse_program(SCENARIO, "e2e/main.test.js")
    seen: list[tuple[dict[str, object], dict[str, object], object, object]] = []

    class AtReturnY(Recorder):
        def before_statement(self, step: Step) -> Directive:
            if step.text == "return y" and not seen:
                seen.append(
                    (
                        dict(step.variables(0)),
                        dict(step.variables(1)),
                        step.evaluate("total + n", 0),
                        step.evaluate("x + y", 1),
                    )
                )
                with pytest.raises(ScriptError, match="x"):
                    step.evaluate("x", 0)  # the callee's local is not the caller's
                with pytest.raises(ValueError, match="no frame 2"):
                    step.variables(2)
            return super().before_statement(step)

    _interp(AtReturnY()).run(program, "test_main")
    assert seen == [({"total": 0.0, "n": 1.0}, {"x": 1.0, "y": 2.0}, 1.0, 3.0)]


def test_skip_and_retry_directives() -> None:
    source = 'function test_main() {\n  let n = 0\n  fail("boom")\n  n += 1\n  return n\n}\n'
    program = parse_program(source, "f.js")

    class SkipFailures(Recorder):
        def after_statement(self, step: Step, error: ScriptError | None) -> Directive:
            super().after_statement(step, error)
            return Directive.SKIP if error is not None else Directive.PROCEED

    assert _interp(SkipFailures()).run(program, "test_main") == 1.0

    class RetryOnce(Recorder):
        retried = False

        def after_statement(self, step: Step, error: ScriptError | None) -> Directive:
            super().after_statement(step, error)
            if error is not None and not self.retried:
                self.retried = True
                return Directive.RETRY
            return Directive.PROCEED

    retry = RetryOnce()
    with pytest.raises(ScriptError) as caught:
        _interp(retry).run(program, "test_main")
    assert (caught.value.name, caught.value.line, caught.value.col) == ("ScenarioError", 3, 2)
    assert [e[0] for e in retry.events if e[1] == 3] == ["before", "fail", "before", "fail"]

    class SkipBefore(Recorder):
        def before_statement(self, step: Step) -> Directive:
            super().before_statement(step)
            return Directive.SKIP if step.line == 3 else Directive.PROCEED

    assert _interp(SkipBefore()).run(program, "test_main") == 1.0


def test_eval_reads_and_assigns_in_the_paused_scope() -> None:
    source = "function test_main() {\n  let n = 2\n  log(n)\n  return n\n}\n"
    program = parse_program(source, "f.js")
    logs: list[str] = []
    results: list[object] = []

    class Evaluator(Recorder):
        def before_statement(self, step: Step) -> Directive:
            if step.line == 3:
                results.append(step.evaluate("n * 10"))
                step.evaluate("n = 7")
                results.append(step.evaluate("`n is ${n}`"))
            return Directive.PROCEED

    assert _interp(Evaluator(), logs).run(program, "test_main") == 7.0
    assert results == [20.0, "n is 7"]
    assert logs == ["7"]


def test_an_eval_cut_short_says_what_is_missing() -> None:
    """``1 +`` typed at a pause is an expression cut short, not a statement that
    "cannot start with '1'"; what is a statement keeps the statement's message."""
    program = parse_program("function test_main() {\n  let n = 2\n  log(n)\n}\n", "f.js")
    errors: dict[str, str] = {}

    class Evaluator(Recorder):
        def before_statement(self, step: Step) -> Directive:
            if step.line == 3:
                for source in ("1 +", "(n", "let = 3"):
                    with pytest.raises(ScenarioSyntaxError) as caught:
                        step.evaluate(source)
                    errors[source] = str(caught.value).splitlines()[0]
            return Directive.PROCEED

    _interp(Evaluator()).run(program, "test_main")
    assert errors["1 +"] == (
        "<eval>:1:3: SyntaxError: unexpected end of file: expected an expression or a statement"
    )
    assert "missing ')'" in errors["(n"]
    assert "cannot start with" not in errors["let = 3"]


def test_an_eval_cannot_declare_a_name_the_paused_scope_has() -> None:
    """``const n = 3`` typed at a pause would make the scenario's ``let n`` a const for
    the rest of the run; a new name may be declared (and read back)."""
    program = parse_program("function test_main() {\n  let n = 2\n  log(n)\n  n = 5\n}\n", "f.js")
    errors: list[str] = []
    results: list[object] = []

    class Evaluator(Recorder):
        def before_statement(self, step: Step) -> Directive:
            if step.line == 3:
                for source in ("const n = 3", "let n = 4"):
                    with pytest.raises(ScriptError) as caught:
                        step.evaluate(source)
                    errors.append(str(caught.value).splitlines()[0])
                step.evaluate("let fresh = n + 1")
                results.append(step.evaluate("fresh"))
            return Directive.PROCEED

    _interp(Evaluator()).run(program, "test_main")  # n = 5 still assigns: no const
    assert all("'n' is already declared here: assign it instead (n = ...)" in e for e in errors)
    assert results == [3.0]


def test_interrupt_passes_through_catch_and_finally() -> None:
    source = (
        'function test_main() {\n  try {\n    log("in")\n  } catch (e) {\n    log("caught")\n'
        '  } finally {\n    log("finally")\n  }\n}\n'
    )
    program = parse_program(source, "f.js")
    logs: list[str] = []

    class Abort(Recorder):
        def before_statement(self, step: Step) -> Directive:
            if step.line == 3:
                raise Interrupt("abort")
            return Directive.PROCEED

    with pytest.raises(Interrupt):
        _interp(Abort(), logs).run(program, "test_main")
    assert logs == []


def test_caught_flag_tells_the_debugger_a_catch_is_waiting() -> None:
    source = (
        'function test_main() {\n  try {\n    fail("x")\n  } catch (e) {\n  }\n  fail("y")\n}\n'
    )
    program = parse_program(source, "f.js")
    seen: list[tuple[int, bool]] = []

    class Flags(Recorder):
        def after_statement(self, step: Step, error: ScriptError | None) -> Directive:
            if error is not None:
                seen.append((step.line, step.caught))
            return Directive.PROCEED

    with pytest.raises(ScriptError):
        _interp(Flags()).run(program, "test_main")
    assert seen == [(3, True), (6, False)]


def test_a_finally_that_returns_counts_as_catching_what_its_block_throws() -> None:
    """JavaScript discards the error when ``finally`` returns: the run passed, yet the
    throw was a failed step and ``--debug`` paused on it as a failure. So for a throw
    from the handler. A ``return`` that may not run (inside an ``if``) catches nothing:
    the statement that threw stays where the run fails."""
    source = (
        'function swallowed() {\n  try {\n    throw "a"\n  } finally {\n'
        '    return "kept"\n  }\n}\n'
        'function rethrown() {\n  try {\n    throw "b"\n  } catch (e) {\n'
        '    throw "c"\n  } finally {\n    return "also kept"\n  }\n}\n'
        'function maybe(c) {\n  try {\n    throw "d"\n  } finally {\n'
        "    if (c) {\n      return 1\n    }\n  }\n}\n"
        "function test_main() {\n  log(swallowed(), rethrown())\n  maybe(false)\n}\n"
    )
    program = parse_program(source, "f.js")
    seen: list[tuple[int, bool]] = []

    class Flags(Recorder):
        def after_statement(self, step: Step, error: ScriptError | None) -> Directive:
            if error is not None and isinstance(step.stmt, ast.Throw):
                seen.append((step.line, step.caught))
            return Directive.PROCEED

    logs: list[str] = []
    with pytest.raises(ScriptError) as raised:
        _interp(Flags(), logs).run(program, "test_main")
    assert seen == [(3, True), (10, True), (12, True), (19, False)]
    assert logs == ["kept also kept"]
    assert raised.value.line == 19


def test_helpers_resolve_after_local_functions_and_before_builtins() -> None:
    helper = parse_program(
        "function shout(s) {\n  return s.toUpperCase()\n}\nfunction len(x) {\n  return 0\n}\n",
        "_helpers/h.js",
    )
    main = parse_program('function test_main() {\n  return shout("a") + len("abc")\n}\n', "main.js")
    builtins = make_pure_builtins(PureServices(env=lambda name: None, log=lambda line: None))
    helpers = {fn.name: FunctionRef(fn, helper) for fn in helper.functions if fn.name == "shout"}
    assert Interpreter(builtins, helpers).run(main, "test_main") == "A3"
    local = parse_program(
        'function test_main() {\n  return shout("a")\n}\n'
        'function shout(s) {\n  return "local"\n}\n',
        "m.js",
    )
    assert Interpreter(builtins, helpers).run(local, "test_main") == "local"


POLLED = """\
function test_main() {
  expect_poll(count, 2)
  log(LIMIT)
}
function count() {
  calls.n += 1
  return calls.n
}
"""


def test_a_polled_function_runs_as_ordinary_steps_one_level_deeper() -> None:
    """expect_poll's calls are steps of the function (the debugger can step into them);
    the helpers' consts are visible but not among a step's variables."""
    program = parse_program(POLLED.replace("calls.n", "COUNTER.n"), "e2e/poll.test.js")
    recorder = Recorder()
    logs: list[str] = []
    slept: list[float] = []
    builtins = make_pure_builtins(
        PureServices(env=lambda name: None, log=logs.append, sleep=slept.append)
    )
    interp = Interpreter(builtins, hook=recorder, consts={"LIMIT": 3.0, "COUNTER": {"n": 0.0}})
    interp.run(program, "test_main")
    befores = [(line, depth) for kind, line, _, depth, _ in recorder.events if kind == "before"]
    assert befores == [(2, 0), (6, 1), (7, 1), (6, 1), (7, 1), (3, 0)]
    assert slept == [0.1]  # one wait, the first of Playwright's intervals
    assert recorder.frames[1] == (
        ("test_main", "e2e/poll.test.js", 2),
        ("count", "e2e/poll.test.js", 6),
    )
    assert logs == ["3"]
    assert all("LIMIT" not in snapshot for snapshot in recorder.snapshots)


def test_an_interrupt_during_the_poll_wait_ends_the_poll() -> None:
    program = parse_program(POLLED.replace("calls.n", "COUNTER.n"), "e2e/poll.test.js")

    def interrupted(seconds: float) -> None:
        raise Interrupt("aborted")

    builtins = make_pure_builtins(
        PureServices(env=lambda name: None, log=lambda line: None, sleep=interrupted)
    )
    interp = Interpreter(builtins, consts={"LIMIT": 3.0, "COUNTER": {"n": -5.0}})
    with pytest.raises(Interrupt):
        interp.run(program, "test_main")


def test_an_eval_that_never_ends_is_stopped_and_the_pause_goes_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``while (true) {}`` typed at a pause held the scenario's thread for good: no
    answer, and every later command unanswered. It ends with a RangeError at the loop's
    statement; the paused scope keeps what it did; the next eval has its own time."""
    import dsl.interpreter

    monkeypatch.setattr(dsl.interpreter, "EVAL_LIMIT_S", 0.05)
    source = "function test_main() {\n  let n = 2\n  log(n)\n  return n\n}\n"
    program = parse_program(source, "f.js")
    logs: list[str] = []
    errors: list[ScriptError] = []
    results: list[object] = []

    class Evaluator(Recorder):
        def before_statement(self, step: Step) -> Directive:
            if step.line == 3:
                for _ in range(2):
                    try:
                        step.evaluate("while (true) {\n  n = n + 1\n}")
                    except ScriptError as err:
                        errors.append(err)
                results.append(step.evaluate("n > 2"))
            return Directive.PROCEED

    assert _interp(Evaluator(), logs).run(program, "test_main") > 2
    # At whichever of the loop's statements ran when the time was up (its header is a
    # statement of each iteration too).
    assert [e.name for e in errors] == ["RangeError"] * 2
    assert {(e.line, e.col) for e in errors} <= {(1, 0), (2, 2)}
    assert "the eval ran longer than 0.05 s and was stopped here" in errors[0].message
    assert results == [True]
