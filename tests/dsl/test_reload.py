"""Edit and continue in the language alone (dsl/reload.py, Interpreter.reload).

A hook pauses nowhere: when the run reaches a chosen statement (before it, or after
it failed) it reloads there, in the interpreter's own thread, exactly where the
debugger's ``reload`` runs. ``probe(x)`` records what ran, so each test says which
statements of which version ran, in which order, with which variables.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from dsl import ast
from dsl.builtins import PureServices, make_pure_builtins
from dsl.errors import ScriptError
from dsl.interpreter import Builtin, Directive, FunctionRef, Interpreter, ReloadOutcome, Step
from dsl.parser import parse_program
from dsl.reload import ReloadError, StatementMap, changed_functions, map_program

FILE = "unotest/e2e/t.test.js"
HELPER = "unotest/e2e/_helpers/util.js"


def helpers_of(*programs: ast.Program) -> dict[str, FunctionRef]:
    return {fn.name: FunctionRef(fn, p) for p in programs for fn in p.functions}


@dataclass
class Reloader:
    """Reload once, at the first step whose text is ``at`` (before it, or after it
    failed when ``on_failure``), to ``new`` (file → source)."""

    at: str
    new: dict[str, str]
    on_failure: bool = False
    nth: int = 1
    """Reload the nth time the step is seen (a loop's header once per iteration)."""
    outcome: ReloadOutcome | None = None
    error: ReloadError | None = None
    seen: list[tuple[str, int, str]] = field(default_factory=list)
    """Each step's file, line and text as the hook saw it (before it ran)."""
    programs: dict[str, ast.Program] = field(default_factory=dict)

    def reload(self, step: Step) -> Directive:
        programs = {file: parse_program(source, file) for file, source in self.new.items()}
        helper_programs = [p for f, p in programs.items() if f != FILE]
        try:
            self.outcome = step.reload(programs, helpers_of(*helper_programs), {})
        except ReloadError as err:
            self.error = err
        self.programs = programs
        return Directive.RETRY


class Hook:
    def __init__(self, reloader: Reloader) -> None:
        self.reloader = reloader
        self.done = False
        self.count = 0

    def before_statement(self, step: Step) -> Directive:
        if not self.done and not self.reloader.on_failure and step.text == self.reloader.at:
            self.count += 1
            if self.count == self.reloader.nth:
                self.done = True
                self.reloader.reload(step)
        self.reloader.seen.append((step.file, step.line, step.text))
        return Directive.PROCEED

    def after_statement(self, step: Step, error: ScriptError | None) -> Directive:
        if error is None or self.done or not self.reloader.on_failure:
            return Directive.PROCEED
        if step.text != self.reloader.at:
            return Directive.PROCEED
        self.done = True
        return self.reloader.reload(step)


class Run:
    def __init__(self, source: str, helper: str | None = None) -> None:
        self.program = parse_program(source, FILE)
        self.helper = parse_program(helper, HELPER) if helper is not None else None
        self.probes: list[Any] = []

    def go(self, reloader: Reloader, fn: str = "test_x") -> Interpreter:
        builtins = dict(make_pure_builtins(PureServices(env=lambda n: None, log=lambda s: None)))
        builtins["probe"] = Builtin("probe", self._probe, 1, 1)
        helpers = helpers_of(self.helper) if self.helper is not None else {}
        interpreter = Interpreter(builtins, helpers, hook=Hook(reloader))
        interpreter.run(self.program, fn)
        return interpreter

    def _probe(self, value: Any) -> Any:
        self.probes.append(value)
        return value


def body(*lines: str, name: str = "test_x", params: str = "") -> str:
    return f"function {name}({params}) {{\n" + "".join(f"  {line}\n" for line in lines) + "}\n"


# --- the current block ----------------------------------------------------------------


def test_inserted_above_is_skipped_and_counted_inserted_below_runs() -> None:
    run = Run(body('probe("a")', 'probe("b")', 'probe("c")'))
    new = body('probe("a")', 'probe("above")', 'probe("b")', 'probe("below")', 'probe("c")')
    reloader = Reloader('probe("b")', {FILE: new})
    run.go(reloader)
    assert run.probes == ["a", "b", "below", "c"]
    assert reloader.outcome == ReloadOutcome(skipped=1, running=("test_x",))
    # the paused statement is the new version, at its new line
    assert (FILE, 4, 'probe("b")') in reloader.seen
    assert (FILE, 5, 'probe("below")') in reloader.seen


def test_removed_before_keeps_the_place() -> None:
    run = Run(body('probe("a")', 'probe("gone")', 'probe("b")', 'probe("c")'))
    reloader = Reloader('probe("b")', {FILE: body('probe("a")', 'probe("b")', 'probe("c")')})
    run.go(reloader)
    assert run.probes == ["a", "gone", "b", "c"]
    assert reloader.outcome is not None and reloader.outcome.skipped == 0


def test_the_paused_statement_runs_as_edited_and_locals_keep_their_values() -> None:
    run = Run(body("let x = 41", "probe(x)", 'probe("end")'))
    new = body("let x = 1", "let y = 2", "probe(x + 1)", "probe(y)")
    reloader = Reloader("probe(x)", {FILE: new})
    with pytest.raises(ScriptError, match="'y' is not defined"):
        run.go(reloader)  # y's declaration was inserted above: never run
    assert run.probes == [42]
    assert reloader.outcome is not None and reloader.outcome.skipped == 1


def test_a_failed_statement_edited_then_retried_runs_the_new_version() -> None:
    run = Run(body("let total = 40 + 2", "expect_equal(total, 40)", 'probe("after")'))
    new = body("let total = 40 + 2", "expect_equal(total, 42)", 'probe("after")', 'probe("new")')
    reloader = Reloader("expect_equal(total, 40)", {FILE: new}, on_failure=True)
    run.go(reloader)
    assert run.probes == ["after", "new"]
    assert reloader.outcome == ReloadOutcome(skipped=0, running=("test_x",))
    assert [text for _, _, text in reloader.seen].count("expect_equal(total, 42)") == 1


def test_a_statement_replaced_by_another_kind_runs_as_the_new_kind() -> None:
    run = Run(body('probe("a")', 'probe("b")'))
    reloader = Reloader('probe("a")', {FILE: body('let a = probe("A")', 'probe("b")')})
    run.go(reloader)
    assert run.probes == ["A", "b"]


# --- blocks inside the function -------------------------------------------------------------

LOOP = body(
    "let seen = []",
    "for (const i of [1, 2, 3]) {",
    '  probe("i" + i)',
    "  seen.push(i)",
    "}",
    "probe(seen)",
)


def test_a_loop_goes_on_in_its_new_body_without_starting_over() -> None:
    run = Run(LOOP)
    new = LOOP.replace("  seen.push(i)\n", "  seen.push(i * 10)\n")
    reloader = Reloader('probe("i" + i)', {FILE: new})
    run.go(reloader)
    assert run.probes == ["i1", "i2", "i3", [10.0, 20.0, 30.0]]


def test_a_for_of_whose_iterable_changed_while_it_runs_is_refused_and_nothing_changes() -> None:
    run = Run(LOOP)
    new = LOOP.replace("[1, 2, 3]", "[4, 5]").replace("seen.push(i)", "seen.push(0)")
    reloader = Reloader('probe("i" + i)', {FILE: new})
    run.go(reloader)
    assert reloader.error is not None and reloader.outcome is None
    assert "for (const i of [1, 2, 3])" in reloader.error.message
    assert "changed its header" in reloader.error.message
    assert run.probes == ["i1", "i2", "i3", [1.0, 2.0, 3.0]]  # the old code went on


def test_paused_at_a_for_of_header_mid_loop_the_loop_goes_on_as_edited() -> None:
    run = Run(LOOP)
    new = LOOP.replace('probe("i" + i)', 'probe("new i" + i)')
    reloader = Reloader("for (const i of [1, 2, 3])", {FILE: new}, nth=2)
    run.go(reloader)
    assert reloader.error is None
    assert run.probes == ["i1", "new i2", "new i3", [1.0, 2.0, 3.0]]
    headers = [line for _, line, text in reloader.seen if text.startswith("for (")]
    assert headers == [3, 3, 3, 3]  # the first check, then one per item (no restart)


def test_paused_at_a_while_test_the_new_test_decides() -> None:
    old = body("let n = 0", "while (n < 5) {", "  probe(n)", "  n += 1", "}")
    run = Run(old)
    reloader = Reloader("while (n < 5)", {FILE: old.replace("n < 5", "n < 3")}, nth=2)
    run.go(reloader)
    assert run.probes == [0.0, 1.0, 2.0]


def test_paused_at_an_else_if_test_it_runs_as_edited() -> None:
    old = body(
        "let x = 2",
        "if (x == 1) {",
        '  probe("one")',
        "} else if (x == 3) {",
        '  probe("three")',
        "}",
    )
    new = old.replace("x == 3", "x == 2").replace('"three"', '"two"')
    run = Run(old)
    reloader = Reloader("if (x == 3)", {FILE: new})
    run.go(reloader)
    assert reloader.error is None and run.probes == ["two"]


def test_two_reloads_in_a_row() -> None:
    run = Run(body('probe("a")', 'probe("b")', 'probe("c")'))
    first = body('probe("a")', 'probe("b1")', 'probe("c")')
    second = body('probe("a")', 'probe("x")', 'probe("b2")', 'probe("c2")')

    class Twice(Reloader):
        def reload(self, step: Step) -> Directive:
            super().reload(step)
            self.new = {FILE: second}
            super().reload(step)
            return Directive.PROCEED

    reloader = Twice('probe("b")', {FILE: first})
    run.go(reloader)
    assert run.probes == ["a", "b2", "c2"]
    assert reloader.outcome is not None and reloader.outcome.skipped == 1


def test_a_while_loop_reads_its_new_test_and_body() -> None:
    old = body("let n = 0", "while (n < 10) {", '  probe("n" + n)', "  n += 1", "}")
    new = body("let n = 0", "while (n < 3) {", '  probe("n" + n)', "  n += 2", "}")
    run = Run(old)
    reloader = Reloader('probe("n" + n)', {FILE: new})
    run.go(reloader)
    assert run.probes == ["n0", "n2"]


def test_the_else_if_branch_holding_the_pause_goes_on() -> None:
    old = body(
        "let x = 2",
        "if (x == 1) {",
        '  probe("one")',
        "} else if (x == 2) {",
        '  probe("two")',
        '  probe("two again")',
        "} else {",
        '  probe("other")',
        "}",
        'probe("end")',
    )
    new = old.replace('probe("two again")', 'probe("two, edited")')
    run = Run(old)
    reloader = Reloader('probe("two")', {FILE: new})
    run.go(reloader)
    assert run.probes == ["two", "two, edited", "end"]


def test_a_deleted_block_holding_the_pause_is_refused() -> None:
    old = body("let x = 1", "if (x == 1) {", '  probe("in")', '  probe("in 2")', "}")
    new = body("let x = 1", 'probe("in")', 'probe("in 2")')
    run = Run(old)
    reloader = Reloader('probe("in")', {FILE: new})
    run.go(reloader)
    assert reloader.error is not None
    assert "if (x == 1)" in reloader.error.message
    assert run.probes == ["in", "in 2"]


def test_a_removed_else_block_holding_the_pause_is_refused_with_its_name() -> None:
    old = body("if (false) {", '  probe("a")', "} else {", '  probe("b")', '  probe("c")', "}")
    new = body("if (false) {", '  probe("a")', "}", 'probe("b")')
    reloader = Reloader('probe("b")', {FILE: new})
    Run(old).go(reloader)
    assert reloader.error is not None and "else block" in reloader.error.message


def test_a_try_that_lost_its_catch_is_refused_one_whose_catch_changed_uses_the_new_one() -> None:
    old = body(
        "try {",
        '  probe("try")',
        '  fail("boom")',
        "} catch (e) {",
        '  probe("old catch")',
        "}",
    )
    run = Run(old)
    edited = old.replace('probe("old catch")', 'probe("new catch: " + e.message)')
    reloader = Reloader('probe("try")', {FILE: edited})
    run.go(reloader)
    assert reloader.error is None
    assert run.probes == ["try", "new catch: boom"]

    run = Run(old)
    no_catch = body("try {", '  probe("try")', '  fail("boom")', "} finally {", "  probe(1)", "}")
    reloader = Reloader('probe("try")', {FILE: no_catch})
    run.go(reloader)
    assert reloader.error is not None and "catch/finally" in reloader.error.message
    assert run.probes == ["try", "old catch"]


def test_the_current_statement_removed_is_refused() -> None:
    run = Run(body('probe("a")', 'probe("b")'))
    reloader = Reloader('probe("a")', {FILE: body("if (true) {", '  probe("b")', "}")})
    run.go(reloader)
    assert reloader.error is not None
    assert "was removed" in reloader.error.message and ":2:2" in reloader.error.message


# --- frames and functions -------------------------------------------------------------------

CALLER = body("let x = 1", "x = step_up(x)", "probe(x)", 'probe("done")')
HELPER_SOURCE = body("let y = a + 1", 'probe("helper")', "return y", name="step_up", params="a")


def test_a_helper_frame_on_the_stack_goes_on_in_its_new_body_and_the_caller_too() -> None:
    run = Run(CALLER, HELPER_SOURCE)
    new_helper = body(
        "let y = a + 1",
        'probe("inserted above")',
        'probe("helper")',
        "y = y * 100",
        "return y",
        name="step_up",
        params="a",
    )
    new_caller = CALLER.replace('probe("done")', 'probe("caller edited")')
    reloader = Reloader('probe("helper")', {FILE: new_caller, HELPER: new_helper})
    run.go(reloader)
    assert run.probes == ["helper", 200.0, "caller edited"]
    assert reloader.outcome == ReloadOutcome(skipped=1, running=("test_x", "step_up"))


def test_a_function_not_on_the_stack_is_replaced_for_its_next_call() -> None:
    source = body("probe(twice(1))", "probe(twice(2))") + body(
        "return n * 2", name="twice", params="n"
    )
    run = Run(source)
    new = source.replace("return n * 2", "return n * 3")
    reloader = Reloader("probe(twice(2))", {FILE: new})
    run.go(reloader)
    assert run.probes == [2.0, 6.0]


def test_a_helper_not_on_the_stack_is_replaced_and_its_const_too() -> None:
    caller = body('probe("before")', "probe(greet())")
    helper = "const WHO = 'old'\n" + body("return 'hi ' + WHO", name="greet")
    run = Run(caller, helper)
    programs: dict[str, ast.Program] = {}

    class ConstReloader(Reloader):
        def reload(self, step: Step) -> Directive:
            new = parse_program(helper.replace("'old'", "'new'").replace("hi", "hello"), HELPER)
            programs[HELPER] = new
            self.outcome = step.reload({HELPER: new}, helpers_of(new), {"WHO": "new"})
            return Directive.PROCEED

    reloader = ConstReloader('probe("before")', {})
    run.go(reloader)
    assert run.probes == ["before", "hello new"]
    assert reloader.outcome == ReloadOutcome(skipped=0, running=())


def test_a_function_running_that_is_gone_from_its_file_is_refused() -> None:
    run = Run(CALLER, HELPER_SOURCE)
    reloader = Reloader('probe("helper")', {HELPER: body("return 1", name="other")})
    run.go(reloader)
    assert reloader.error is not None
    assert "step_up" in reloader.error.message and HELPER in reloader.error.message


def test_run_of_a_reloaded_file_calls_the_new_version() -> None:
    source = body('probe("test")') + body('probe("old after")', name="after_each")
    run = Run(source)
    reloader = Reloader('probe("test")', {FILE: source.replace("old after", "new after")})
    interpreter = run.go(reloader)
    interpreter.run(run.program, "after_each")  # the runner still holds the old program
    assert run.probes == ["test", "new after"]


def test_a_function_value_taken_before_a_reload_calls_the_new_version() -> None:
    source = body("let f = count", 'probe("x")', "expect_poll(f, 7)") + body(
        "return 5", name="count"
    )
    run = Run(source)
    reloader = Reloader('probe("x")', {FILE: source.replace("return 5", "return 7")})
    run.go(reloader)
    assert reloader.error is None


# --- the statement map (breakpoints) --------------------------------------------------------


def _stmt_at(program: ast.Program, line: int) -> ast.Stmt:
    found: list[ast.Stmt] = []

    def walk(stmts: tuple[ast.Stmt, ...]) -> None:
        for stmt in stmts:
            if stmt.span.line == line:
                found.append(stmt)
            for block in (getattr(stmt, a, None) for a in ("consequent", "alternate", "body")):
                if isinstance(block, ast.Block):
                    walk(block.body)

    for fn in program.functions:
        walk(fn.body.body)
    return found[0]


def test_the_statement_map_follows_statements_down_and_marks_new_ones() -> None:
    old = parse_program(body('probe("a")', "if (true) {", '  probe("b")', "}"), FILE)
    new = parse_program(
        body("let n = 1", 'probe("a")', "if (true) {", "  n += 1", '  probe("b")', "}"), FILE
    )
    statements: StatementMap = map_program(old, new)
    mapped: Callable[[int], int | None] = lambda line: (  # noqa: E731
        s.span.line if (s := statements.get(_stmt_at(old, line))) is not None else None
    )
    assert [mapped(line) for line in (2, 3, 4)] == [3, 4, 6]
    assert statements.is_new(_stmt_at(new, 2)) and statements.is_new(_stmt_at(new, 5))
    assert not statements.is_new(_stmt_at(new, 3))


def test_changed_functions_are_new_or_edited_ones() -> None:
    old = parse_program(body("probe(1)") + body("return 1", name="a") + body("", name="b"), FILE)
    new = parse_program(
        body("probe(1)")
        + body("return  1", name="a")
        + body("probe(2)", name="b")
        + body("return 3", name="c"),
        FILE,
    )
    assert changed_functions(old, new) == ["b", "c"]
