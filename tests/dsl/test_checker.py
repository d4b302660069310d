"""The static checker (``unotest check``): every problem of a file, in source order.

Unit tests per kind of problem, then golden files: ``tests/golden/check/<case>.test.js``
→ ``<case>.diag`` holds ``str()`` of every Diagnostic, one after the other
(``UPDATE_GOLDEN=1`` rewrites them; read them before keeping them).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dsl.checker import Arity, Diagnostic, check_program
from dsl.errors import ScenarioSyntaxError
from dsl.parser import parse_program

BUILTINS: dict[str, Arity] = {
    "click": (1, 2),
    "log": (0, None),
    "fill": (2, 2),
    "range": (1, 2),
    "now": (0, 0),
    "fail": (1, 1),
    "str": (1, 1),
    "expect_poll": (2, 3),
}
HELPERS: dict[str, Arity] = {"sign_in": (2, 2), "open_menu": (0, 1)}
CONSTS = frozenset({"TODO_ITEMS"})


def check(source: str, file: str = "c.test.js") -> list[Diagnostic]:
    return check_program(parse_program(source, file), HELPERS, BUILTINS, CONSTS)


def check_body(body: str) -> list[Diagnostic]:
    return check("function test_main() {\n" + body + "\n}\n")


def messages(body: str) -> list[str]:
    return [d.message for d in check_body(body)]


def test_a_clean_file_has_no_problems() -> None:
    source = """
function local_helper(a, b) {
  return a + b
}

function test_main() {
  let total = local_helper(1, 2)
  const items = [1, 2]
  for (const item of items) {
    if (item > 1) { break } else { continue }
  }
  while (total < 10) { total += 1 }
  try { fail("x") } catch (e) { log(e.message) } finally { log("done") }
  click("Save")
  click("Save", { force: true })
  sign_in("a", "b")
  open_menu()
  log()
  log(1, 2, 3, 4, 5, `${total}`)
  now()
  return total
}
"""
    assert check(source) == []


# --- unknown names ---------------------------------------------------------------------


def test_unknown_function_with_did_you_mean() -> None:
    (diag,) = check_body('  clik("Save")')
    assert diag.message == (
        "ReferenceError: 'clik' is not a function, helper or built-in (did you mean 'click'?)"
    )
    assert (diag.file, diag.line, diag.col) == ("c.test.js", 2, 2)
    assert diag.source_line == '  clik("Save")'
    assert str(diag) == (
        "c.test.js:2:2: ReferenceError: 'clik' is not a function, helper or built-in "
        "(did you mean 'click'?)\n"
        '      clik("Save")\n'
        "      ^"
    )


def test_unknown_function_suggests_helpers_and_local_functions() -> None:
    assert messages('  sign_inn("a", "b")') == [
        "ReferenceError: 'sign_inn' is not a function, helper or built-in (did you mean 'sign_in'?)"
    ]
    source = "function fill_form() {\n}\nfunction test_main() {\n  fil_form()\n}\n"
    (diag,) = check(source)
    assert diag.message.endswith("(did you mean 'fill_form'?)")
    assert (diag.line, diag.col) == (4, 2)


def test_unknown_function_without_a_close_match() -> None:
    assert messages("  zzz()") == ["ReferenceError: 'zzz' is not a function, helper or built-in"]


def test_unknown_variable_with_did_you_mean() -> None:
    (diag,) = check_body("  let total = 1\n  log(totl)")
    assert diag.message == "ReferenceError: 'totl' is not defined (did you mean 'total'?)"
    assert (diag.line, diag.col) == (3, 6)


def test_variables_are_block_scoped() -> None:
    body = "  if (true) {\n    let inner = 1\n  }\n  log(inner)"
    assert messages(body) == ["ReferenceError: 'inner' is not defined"]
    # Used before its declaration in the same block: the block's own from its start, as
    # in JavaScript, even when an outer block has one of that name (it printed the outer).
    before = (
        "ReferenceError: 'later' is used before its declaration at line 3: a let or const "
        "is the block's own from the block's start (declare it earlier, or rename one of "
        "the two)"
    )
    assert messages("  log(later)\n  let later = 1") == [before]
    body = "  let later = 0\n  if (true) {\n    log(later)\n    later = 2\n    let later = 1\n  }"
    assert messages(body) == [before.replace("line 3", "line 6")] * 2
    assert messages("  let x = 1\n  if (true) {\n    let y = x\n  }\n  let z = x") == []
    # Parameters, loop variables and catch parameters are visible in their bodies only.
    body = "  for (const x of [1]) { log(x) }\n  try {} catch (e) { log(e) }\n  log(x, e)"
    assert messages(body) == [
        "ReferenceError: 'x' is not defined",
        "ReferenceError: 'e' is not defined",
    ]


def test_unknown_names_inside_templates_members_and_objects() -> None:
    body = "  log(`${a}`, b.c, d[0], { k: e }, [f], g ? 1 : 2, -h, i && 1)"
    assert [m.split("'")[1] for m in messages(body)] == ["a", "b", "d", "e", "f", "g", "h", "i"]


# --- arity --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ("click()", "TypeError: click() takes 1 to 2 arguments but got 0"),
        ('click("a", {}, 3)', "TypeError: click() takes 1 to 2 arguments but got 3"),
        ('fill("a")', "TypeError: fill() takes 2 arguments but got 1"),
        ("fail()", "TypeError: fail() takes 1 argument but got 0"),
        ("now(1)", "TypeError: now() takes 0 arguments but got 1"),
        ('sign_in("a")', "TypeError: sign_in() takes 2 arguments but got 1"),
        ("open_menu(1, 2)", "TypeError: open_menu() takes 0 to 1 arguments but got 2"),
    ],
)
def test_wrong_arity_of_builtins_and_helpers(call: str, message: str) -> None:
    (diag,) = check_body("  " + call)
    assert diag.message == message
    assert (diag.line, diag.col) == (2, 2)


def test_at_least_arity() -> None:
    source = "function test_main() {\n  log()\n}\n"
    (diag,) = check_program(parse_program(source, "c.js"), {}, {"log": (1, None)})
    assert diag.message == "TypeError: log() takes at least 1 argument but got 0"


def test_wrong_arity_of_a_local_function() -> None:
    source = "function pair(a, b) {\n  return [a, b]\n}\nfunction test_main() {\n  pair(1)\n}\n"
    (diag,) = check(source)
    assert diag.message == "TypeError: pair() takes 2 arguments but got 1"
    assert (diag.line, diag.col) == (5, 2)


def test_local_functions_shadow_helpers_and_builtins() -> None:
    source = "function click() {\n}\nfunction test_main() {\n  click()\n  click(1)\n}\n"
    (diag,) = check(source)
    assert diag.message == "TypeError: click() takes 0 arguments but got 1"
    assert diag.line == 5


# --- assignments ------------------------------------------------------------------------


def test_assignment_to_undeclared() -> None:
    (diag,) = check_body("  let count = 0\n  coutn = 1")
    assert diag.message == (
        "ReferenceError: 'coutn' is not declared: declare it with let (did you mean 'count'?)"
    )
    assert (diag.line, diag.col) == (3, 2)
    assert messages("  total += 1") == [
        "ReferenceError: 'total' is not declared: declare it with let"
    ]


def test_assignment_to_const() -> None:
    (diag,) = check_body("  const limit = 3\n  limit = 4")
    assert diag.message == "TypeError: 'limit' is a const and cannot be reassigned"
    assert (diag.line, diag.col) == (3, 2)
    assert messages("  for (const x of [1]) {\n    x += 1\n  }") == [
        "TypeError: 'x' is a const and cannot be reassigned"
    ]


def test_assignment_to_an_inner_let_shadowing_a_const_is_fine() -> None:
    assert messages("  const a = 1\n  if (true) {\n    let a = 2\n    a = 3\n  }") == []


def test_member_and_index_assignment_check_the_object() -> None:
    assert messages("  o.k = 1\n  a[0] = 2") == [
        "ReferenceError: 'o' is not defined",
        "ReferenceError: 'a' is not defined",
    ]
    assert messages("  const o = {}\n  o.k = 1") == []  # a const's properties can change


# --- control flow --------------------------------------------------------------------------


def test_break_and_continue_outside_a_loop() -> None:
    body = "  break\n  if (true) {\n    continue\n  }\n  while (true) {\n    break\n  }"
    assert messages(body) == [
        "SyntaxError: 'break' can only be used inside a loop",
        "SyntaxError: 'continue' can only be used inside a loop",
    ]
    assert [d.line for d in check_body(body)] == [2, 4]


def test_break_inside_nested_blocks_of_a_loop_is_fine() -> None:
    body = "  for (const x of [1]) {\n    try {\n      if (x) { break }\n    } finally {}\n  }"
    assert messages(body) == []


# --- functions and values --------------------------------------------------------------------


def test_a_variable_called_as_a_function() -> None:
    (diag,) = check_body("  let total = 1\n  total()")
    assert diag.message == (
        "TypeError: 'total' is a variable, not a function: calls name their function "
        "(a function it holds is called by its own name)"
    )
    assert (diag.line, diag.col) == (3, 2)


def test_a_built_in_is_not_a_value_but_a_helper_or_local_function_is() -> None:
    assert messages("  let f = click\n  log(sign_in)\n  log(test_main)") == [
        "TypeError: 'click' is a built-in: call it as click(...); a built-in is a value only "
        "where a function is passed: expect_poll(click, ...), expect_to_pass(click), "
        'step("...", click), or an '
        "argument of a function of the scenario's file or of a helper",
    ]


def test_hooks_are_neither_called_nor_values() -> None:
    source = (
        "function before_each() {\n}\n"
        "function test_main() {\n  before_each()\n  log(after_each)\n  log(before_each)\n}\n"
    )
    found = check(source)
    assert [(d.line, d.col, d.message) for d in found] == [
        (
            4,
            2,
            "TypeError: before_each() is a hook: unotest runs it around each test, "
            "it cannot be called",
        ),
        (
            5,
            6,
            "TypeError: 'after_each' is a hook: unotest runs it around each test, "
            "it is not a value",
        ),
        (
            6,
            6,
            "TypeError: 'before_each' is a hook: unotest runs it around each test, "
            "it is not a value",
        ),
    ]


def test_expect_poll_takes_a_function_without_parameters_by_name() -> None:
    source = (
        "function count() {\n  return 1\n}\n"
        "function test_main() {\n"
        "  expect_poll(count, 1)\n"
        "  expect_poll(count(), 1)\n"
        "  expect_poll(sign_in, 1)\n"
        "  let count2 = count\n"
        "  expect_poll(count2, 1, { timeout: 10 })\n"
        "}\n"
    )
    assert [(d.line, d.col, d.message) for d in check(source)] == [
        (
            6,
            14,
            "TypeError: expect_poll() takes the function itself: write "
            "expect_poll(count, ...) without the ()",
        ),
        (
            7,
            14,
            "TypeError: expect_poll() calls sign_in() without arguments, but it takes 2 "
            "arguments: give them in its options ({args: [...]}) or poll a function without "
            "parameters",
        ),
    ]


def test_polling_what_a_call_returns_is_fine_when_the_call_can_give_a_function() -> None:
    """``pick()`` returns a function value: polling its result is right, and `check`
    refused it (so the scenario could not run); a helper's body is not known here."""
    source = (
        "function count() {\n  return 1\n}\n"
        "function pick() {\n  if (true) {\n    return count\n  }\n  return null\n}\n"
        "function test_main() {\n"
        "  expect_poll(pick(), 1)\n"
        "  expect_poll(sign_in(1, 2), 1)\n"
        "}\n"
    )
    assert check(source) == []


def test_helper_consts_are_seen_everywhere_and_cannot_be_reassigned() -> None:
    source = "function test_main() {\n  log(ITEMS)\n  ITEMS = []\n  log(OTHER)\n}\n"
    found = check_program(parse_program(source, "c.test.js"), HELPERS, BUILTINS, {"ITEMS"})
    assert [(d.line, d.col, d.message) for d in found] == [
        (3, 2, "TypeError: 'ITEMS' is a const and cannot be reassigned"),
        (4, 6, "ReferenceError: 'OTHER' is not defined"),
    ]


# --- all problems, in source order -------------------------------------------------------------

MANY = """function test_main() {
  clik("a")
  const c = 1
  c = 2
  log(undefined_var, click)
  break
}

function helper_after(a) {
  total()
  x = 1
  continue
}
"""


def test_every_problem_is_reported_in_source_order() -> None:
    found = check(MANY)
    assert [(d.line, d.col) for d in found] == [
        (2, 2),
        (4, 2),
        (5, 6),
        (5, 21),
        (6, 2),
        (10, 2),
        (11, 2),
        (12, 2),
    ]
    assert [d.message.split(":")[0] for d in found] == [
        "ReferenceError",
        "TypeError",
        "ReferenceError",
        "TypeError",
        "SyntaxError",
        "ReferenceError",
        "ReferenceError",
        "SyntaxError",
    ]


def test_problems_on_one_line_are_ordered_by_column() -> None:
    found = check_body("  log(a, clik(b), c)")
    assert [(d.col, d.message.split("'")[1]) for d in found] == [
        (6, "a"),
        (9, "clik"),
        (14, "b"),
        (18, "c"),
    ]


def test_long_else_if_chains_do_not_exhaust_the_stack() -> None:
    chain = "  if (a) {}" + " else if (a) {}" * 3000 + " else { log(b) }"
    found = check_body("  let a = 1\n" + chain)
    assert [d.message for d in found] == ["ReferenceError: 'b' is not defined"]


def test_diagnostic_from_syntax_error() -> None:
    with pytest.raises(ScenarioSyntaxError) as info:
        parse_program("function f() {\n  x = \n}\n", "s.js")
    diag = Diagnostic.from_syntax_error(info.value)
    assert str(diag) == str(info.value)


# --- golden files ---------------------------------------------------------------------------------

GOLDEN_DIR = Path(__file__).resolve().parents[1] / "golden" / "check"
CASES = sorted(GOLDEN_DIR.glob("*.test.js"))
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"


def test_there_are_golden_cases() -> None:
    assert len(CASES) >= 2


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_golden_check(case: Path) -> None:
    rel = case.relative_to(GOLDEN_DIR).as_posix()
    found = check(case.read_text(encoding="utf-8"), rel)
    actual = "".join(str(d) + "\n" for d in found)
    expected = case.with_name(case.name.removesuffix(".test.js") + ".diag")
    if UPDATE:
        expected.write_text(actual, encoding="utf-8")
        return
    assert actual == expected.read_text(encoding="utf-8")


# --- options objects -----------------------------------------------------------------------

OPTIONS = {"click": frozenset({"button", "force", "timeout"}), "expect_poll": {"timeout"}}


def option_problems(body: str) -> list[Diagnostic]:
    source = "function test_main() {\n" + body + "\n}\n"
    return check_program(parse_program(source, "c.test.js"), HELPERS, BUILTINS, CONSTS, OPTIONS)


def test_an_unknown_key_of_a_literal_options_object_is_placed_at_the_key() -> None:
    (diag,) = option_problems('  click("#go", {force: true, forse: false})')
    assert (diag.line, diag.col) == (2, 29)
    assert diag.message == (
        "TypeError: click() has no option 'forse' (did you mean 'force'?) "
        "(its options: button, force, timeout)"
    )


def test_known_keys_a_variable_and_a_missing_options_object_pass() -> None:
    assert option_problems('  click("#go", {button: "right", timeout: 100})') == []
    assert option_problems('  const o = {nope: 1}\n  click("#go", o)') == []
    assert option_problems('  click("#go")') == []


def test_a_file_function_of_the_same_name_is_not_a_built_in() -> None:
    source = (
        "function click(a, b) {\n  log(a, b)\n}\n"
        "function test_main() {\n  click(1, {anything: 2})\n}\n"
    )
    program = parse_program(source, "c.test.js")
    assert check_program(program, HELPERS, BUILTINS, CONSTS, OPTIONS) == []


def test_without_an_options_table_nothing_is_checked() -> None:
    assert (
        check_program(
            parse_program('function test_main() {\n  click("#go", {x: 1})\n}\n', "c.test.js"),
            HELPERS,
            BUILTINS,
            CONSTS,
        )
        == []
    )
