"""Parameterised scenarios and folder hooks files in the language: ``const CASES`` and the
test that takes a case, the cases' names and values, ``_hooks.js`` files (hooks,
functions and consts, no test), and every file-level problem at its line and column.

Pure ``dsl``: no project, no runner (the runner's side is tests/runner/test_cases_e2e.py
and tests/runner/test_folder_hooks_e2e.py).
"""

from __future__ import annotations

import pytest

from dsl.errors import ScenarioSyntaxError
from dsl.scenario import (
    CASES_CONST,
    HOOK_NAMES,
    build_helper_table,
    hooks_const_clashes,
    load_helper,
    load_hooks_file,
    load_scenario,
)
from dsl.values import FrozenDict, FrozenList

HEADER = "// id-pay\n// Pays by card @smoke\n// #4f46e5\n"
FILE = "unotest/e2e/shop/pay.test.js"
HOOKS = "unotest/e2e/shop/_hooks.js"
BUILTINS = {"log", "goto", "click"}


def scenario(body: str) -> str:
    return HEADER + body


def refused(source: str, file: str = FILE) -> ScenarioSyntaxError:
    with pytest.raises(ScenarioSyntaxError) as caught:
        load_scenario(source, file, "shop/pay")
    return caught.value


def hooks_refused(source: str) -> ScenarioSyntaxError:
    with pytest.raises(ScenarioSyntaxError) as caught:
        load_hooks_file(source, HOOKS, "shop", BUILTINS)
    return caught.value


PAY = scenario(
    'const CASES = [{ name: "visa", card: "4242" }, { name: "master", card: "5555" }, 7]\n'
    "\n"
    "function test_pay(c) {\n"
    "  log(c)\n"
    "}\n"
)


# --- cases ---------------------------------------------------------------------------------


def test_cases_are_named_by_their_name_field_else_their_index() -> None:
    loaded = load_scenario(PAY, FILE, "shop/pay")
    assert [(c.name, c.index) for c in loaded.cases] == [("visa", 0), ("master", 1), ("2", 2)]
    first = loaded.cases[0]
    assert isinstance(first.value, FrozenDict) and first.value["card"] == "4242"
    assert (first.span.line, first.span.col) == (4, 15)


def test_each_case_is_a_scenario_of_its_own() -> None:
    loaded = load_scenario(PAY, FILE, "shop/pay")
    made = loaded.each_case()
    assert [s.name for s in made] == ["shop/pay[visa]", "shop/pay[master]", "shop/pay[2]"]
    assert [s.header.title for s in made] == [
        "Pays by card @smoke [visa]",
        "Pays by card @smoke [master]",
        "Pays by card @smoke [2]",
    ]
    assert {s.header.id for s in made} == {"pay"}
    assert [s.base_name for s in made] == ["shop/pay"] * 3
    assert [s.file for s in made] == [FILE] * 3
    assert made[2].test_args() == (7,)
    assert made[0].test_args()[0] == {"name": "visa", "card": "4242"}
    # Every case sees CASES (frozen), and the file alone makes no scenario of its own.
    cases = made[0].consts()[CASES_CONST]
    assert isinstance(cases, FrozenList) and len(cases) == 3


def test_a_scenario_without_cases_is_itself() -> None:
    plain = load_scenario(scenario('function test_it() {\n  log("x")\n}\n'), FILE, "smoke")
    assert plain.each_case() == (plain,)
    assert (plain.cases, plain.case, plain.test_args(), plain.consts()) == ((), None, (), {})
    assert plain.base_name == "smoke"


@pytest.mark.parametrize(
    ("body", "where", "message"),
    [
        (
            'const CASES = [{ name: "a" }, { name: "a" }]\nfunction test_it(c) {\n}\n',
            (4, 30),
            "case 'a' is already the name of case 0 of CASES: each case needs a name of its own",
        ),
        (
            'const CASES = ["x", { name: "0" }]\nfunction test_it(c) {\n}\n',
            (4, 20),
            "case '0' is already the name of case 0 of CASES",
        ),
        (
            "const CASES = [1, 2]\nfunction test_it() {\n}\n",
            (5, 9),
            "test_it() takes one parameter, the case: it runs once per case of CASES (line 4)",
        ),
        (
            "const CASES = [1]\nfunction test_it(a, b) {\n}\n",
            (5, 9),
            "test_it() takes one parameter, the case",
        ),
        (
            "function test_it(c) {\n}\n",
            (4, 9),
            "test_it() takes no parameters, unless the file declares 'const CASES = [...]'",
        ),
        (
            "const CASES = { visa: 1 }\nfunction test_it(c) {\n}\n",
            (4, 14),
            "CASES is a literal array of at least one case",
        ),
        ("const CASES = []\nfunction test_it(c) {\n}\n", (4, 14), "at least one case"),
        (
            'const CASES = [{ name: "a", n: len("x") }]\nfunction test_it(c) {\n}\n',
            (4, 31),
            "a case holds a literal: a number, a string",
        ),
        (
            'const CASES = [{ name: "a/b" }]\nfunction test_it(c) {\n}\n',
            (4, 15),
            "case 0's name must be text of 1 to 100 characters, without '[', ']', '/'",
        ),
        (
            "const CASES = [{ name: 3 }]\nfunction test_it(c) {\n}\n",
            (4, 15),
            "case 0's name must be text",
        ),
        (
            'const CASES = [{ name: " visa" }]\nfunction test_it(c) {\n}\n',
            (4, 15),
            "blanks around it",
        ),
        (
            "const CASES = [1]\nconst MORE = 2\nfunction test_it(c) {\n}\n",
            (5, 0),
            "its one top-level const can be CASES",
        ),
        (
            "const CASES = [1]\nconst CASES = [2]\nfunction test_it(c) {\n}\n",
            (5, 0),
            "CASES is already declared at line 4",
        ),
    ],
)
def test_bad_cases_are_refused_where_they_are(
    body: str, where: tuple[int, int], message: str
) -> None:
    err = refused(scenario(body))
    assert (err.file, err.line, err.col) == (FILE, *where)
    assert message in err.message, err.message


# --- hooks -----------------------------------------------------------------------------------


def test_every_hook_is_a_hook_and_takes_no_parameters() -> None:
    assert set(HOOK_NAMES) == {"before_each", "after_each", "before_all", "after_all"}
    err = refused(scenario("function before_all(page) {\n}\nfunction test_it() {\n}\n"))
    assert (err.line, err.col) == (4, 9)
    assert err.message == (
        "before_all() is a hook and takes no parameters: unotest calls it once per worker"
    )


@pytest.mark.parametrize(
    ("name", "meant"),
    [
        ("beforeAll", "before_all"),
        ("afterAll", "after_all"),
        ("beforeEach", "before_each"),
        ("afterEach", "after_each"),
    ],
)
def test_another_runners_hook_name_says_ours(name: str, meant: str) -> None:
    err = hooks_refused(f"function {name}() {{\n}}\n")
    assert err.message == f"'{name}' would never run: name it {meant}()"


def test_a_hook_declared_twice_in_one_file_is_refused_at_the_second() -> None:
    err = hooks_refused('function before_each() {\n  log("a")\n}\nfunction before_each() {\n}\n')
    assert (err.file, err.line, err.col) == (HOOKS, 4, 9)
    assert err.message == (
        "hook 'before_each' is already declared at line 1: a file has at most one of each hook"
    )
    # In a scenario file too.
    twice = "function after_all() {\n}\nfunction after_all() {\n}\nfunction test_it() {\n}\n"
    assert refused(scenario(twice)).message.startswith("hook 'after_all' is already declared")


def test_a_hooks_file_holds_hooks_functions_and_consts() -> None:
    hooks = load_hooks_file(
        'const HOME = "/index.html"\n'
        "function before_all() {\n  open_home()\n}\n"
        "function open_home() {\n  goto(HOME)\n}\n",
        HOOKS,
        "shop",
        BUILTINS,
    )
    assert (hooks.folder, hooks.file) == ("shop", HOOKS)
    assert [c.name for c in hooks.consts] == ["HOME"]
    before = hooks.hook("before_all")
    assert before is not None and before.program is hooks.program
    assert hooks.hook("after_all") is None
    assert hooks.covers("shop/pay") and hooks.covers("shop/cards/visa")
    assert not hooks.covers("shopping/pay") and not hooks.covers("pay")


def test_a_test_in_a_hooks_file_is_misplaced() -> None:
    err = hooks_refused("function before_each() {\n}\n\nfunction test_oops() {\n}\n")
    assert (err.line, err.col) == (4, 9)
    assert err.message == (
        "a _hooks.js holds the hooks of the scenarios in its folder, not a test: move "
        "test_oops() to a scenario file (<name>.test.js) of the folder"
    )


def test_a_statement_in_a_hooks_file_is_a_syntax_error() -> None:
    err = hooks_refused('goto("/")\n')
    assert "statements must be inside a function" in err.message


def test_a_hooks_const_holds_a_literal_and_shadows_nothing() -> None:
    assert "a hooks const holds a literal" in hooks_refused("const A = len(1)\n").message
    assert "would shadow the built-in log()" in hooks_refused("const log = 1\n").message
    helpers = load_helper('const BASE = "/x"\nfunction sign_in() {\n}\n', "h.js", "h", BUILTINS)
    table, errors = build_helper_table([helpers])
    assert errors == []
    outer = load_hooks_file('const ROOT = "/"\n', "unotest/e2e/_hooks.js", "", BUILTINS)
    inner = load_hooks_file(
        "const BASE = 1\nconst ROOT = 2\nconst sign_in = 3\nconst OWN = 4\n",
        HOOKS,
        "shop",
        BUILTINS,
    )
    clashes = hooks_const_clashes(inner, table, [outer])
    assert [(e.line, e.col) for e in clashes] == [(1, 6), (2, 6), (3, 6)]
    assert clashes[0].message == (
        "hooks const 'BASE' is already a helper const (h.js:1): the scenarios of this folder "
        "see both; give it a name of its own"
    )
    assert "is already a hooks const (unotest/e2e/_hooks.js:1)" in clashes[1].message
    assert "is already a helper (h.js:2)" in clashes[2].message
