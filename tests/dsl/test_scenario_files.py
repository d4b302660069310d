"""Scenario and helper files (language.md §1): header, test function, helper rules.

The failing cases are golden files (tests/golden/syntax/); these are the accepted
shapes and the details a golden file does not pin down.
"""

from __future__ import annotations

import pytest

from dsl.errors import ScenarioSyntaxError
from dsl.scenario import (
    ScenarioHeader,
    build_helper_table,
    load_helper,
    load_scenario,
    parse_header,
)
from dsl.values import is_frozen

HEADER = "// id-smoke-welcome\n// Welcome page greets a new visitor\n// #4f46e5\n"
BODY = 'function test_welcome() {\n  goto("/")\n}\n'


def test_a_complete_scenario() -> None:
    scenario = load_scenario(HEADER + BODY, "e2e/smoke-welcome.test.js", "smoke-welcome")
    assert scenario.header == ScenarioHeader(
        "smoke-welcome", "Welcome page greets a new visitor", "#4f46e5"
    )
    assert scenario.name == "smoke-welcome"
    assert scenario.file == "e2e/smoke-welcome.test.js"
    assert scenario.test_fn.name == "test_welcome"
    assert scenario.test_fn.name_span.line == 4


def test_local_functions_beside_the_test_function() -> None:
    source = HEADER + "function open_menu() {\n}\n" + BODY + "function close_menu() {\n}\n"
    scenario = load_scenario(source, "s.test.js", "s")
    assert [f.name for f in scenario.program.functions] == [
        "open_menu",
        "test_welcome",
        "close_menu",
    ]
    assert scenario.test_fn.name == "test_welcome"


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("// id-a\n// T\n// #AABBCC\n", ScenarioHeader("a", "T", "#AABBCC")),
        ("\ufeff// id-a-1-b\n// T\n// #aabbcc\n", ScenarioHeader("a-1-b", "T", "#aabbcc")),
        (
            "// id-a\r\n//   Spaced  title  \r\n// #012345\r\n",
            ScenarioHeader("a", "Spaced  title", "#012345"),
        ),
        ("// id-a  \n//T\n// #abcdef \n", ScenarioHeader("a", "T", "#abcdef")),
    ],
)
def test_header_variants(header: str, expected: ScenarioHeader) -> None:
    assert parse_header(header + BODY, "h.test.js") == expected
    assert load_scenario(header + BODY, "h.test.js", "h").header == expected


@pytest.mark.parametrize(
    ("first_line", "ok"),
    [
        ("// id-a", True),
        ("// id-a1-b2-c3", True),
        ("// id-", False),
        ("// id-a--b", False),
        ("// id--a", False),
        ("// id-a-", False),
        ("// id-A", False),
        ("// id-a_b", False),
        ("// id-a b", False),
        ("//id-a", False),
        ("// ID-a", False),
    ],
)
def test_id_slugs(first_line: str, ok: bool) -> None:
    source = first_line + "\n// T\n// #4f46e5\n" + BODY
    if ok:
        assert parse_header(source, "s.test.js").id == first_line.removeprefix("// id-")
    else:
        with pytest.raises(ScenarioSyntaxError) as info:
            parse_header(source, "s.test.js")
        assert (info.value.line, info.value.col) == (1, 0)
        assert "kebab-slug" in info.value.message


@pytest.mark.parametrize("colour", ["#4f46e", "#4f46e5f", "4f46e5", "#gggggg", "# 4f46e5", ""])
def test_bad_colours(colour: str) -> None:
    with pytest.raises(ScenarioSyntaxError) as info:
        parse_header(f"// id-a\n// T\n// {colour}\n" + BODY, "s.test.js")
    assert info.value.line == 3
    assert "#RRGGBB" in info.value.message


def test_the_header_is_checked_before_the_code() -> None:
    with pytest.raises(ScenarioSyntaxError) as info:
        load_scenario("// id-a\n// T\nfunction test_a( {\n", "s.test.js", "s")
    assert info.value.line == 3 and "#RRGGBB" in info.value.message


def test_syntax_errors_after_the_header_name_the_file() -> None:
    with pytest.raises(ScenarioSyntaxError) as info:
        load_scenario(HEADER + "function test_a() {\n  click(\n}\n", "dir/s.test.js", "dir/s")
    assert info.value.file == "dir/s.test.js"
    assert info.value.line == 6


def test_a_test_function_needs_a_name() -> None:
    with pytest.raises(ScenarioSyntaxError, match="needs a name"):
        load_scenario(HEADER + "function test_() {\n}\n", "s.test.js", "s")


# --- helpers -----------------------------------------------------------------------------


def test_helper_files_and_table() -> None:
    auth = load_helper(
        "function sign_in(user, password) {\n}\n\nfunction sign_out() {\n}\n",
        "_helpers/auth.js",
        "auth",
        {"click"},
    )
    cart = load_helper("function add_to_cart2(item) {\n}\n", "_helpers/cart.js", "cart", {"click"})
    assert auth.file == "_helpers/auth.js" and auth.name == "auth"
    table, errors = build_helper_table([auth, cart])
    assert errors == []
    assert sorted(table) == ["add_to_cart2", "sign_in", "sign_out"]
    assert table["sign_in"].decl.params == ("user", "password")
    assert table["add_to_cart2"].program is cart.program


@pytest.mark.parametrize("name", ["signIn", "Sign_in", "sign__in", "_sign", "sign_", "test-x"])
def test_helper_names_must_be_snake_case(name: str) -> None:
    source = f"function {name}() {{\n}}\n"
    with pytest.raises(ScenarioSyntaxError) as info:
        load_helper(source, "_helpers/h.js", "h", set())
    if "-" not in name:
        assert "snake_case" in info.value.message
        assert (info.value.line, info.value.col) == (1, 9)


def test_helpers_cannot_shadow_builtins() -> None:
    with pytest.raises(ScenarioSyntaxError, match="shadow the built-in click"):
        load_helper("function click(t) {\n}\n", "_helpers/h.js", "h", {"click", "log"})


def test_every_duplicate_helper_is_reported_with_both_files() -> None:
    first = load_helper("function a() {\n}\nfunction b() {\n}\n", "_helpers/one.js", "one", ())
    second = load_helper("\nfunction b() {\n}\n", "_helpers/two.js", "two", ())
    third = load_helper("function a() {\n}\n", "_helpers/three.js", "three", ())
    table, errors = build_helper_table([first, second, third])
    assert sorted(table) == ["a", "b"]
    assert table["b"].program is first.program  # the first declaration wins
    assert [(e.file, e.line) for e in errors] == [("_helpers/two.js", 2), ("_helpers/three.js", 1)]
    assert "_helpers/one.js:3 and _helpers/two.js:2" in errors[0].message
    assert "_helpers/one.js:1 and _helpers/three.js:1" in errors[1].message


def test_a_function_named_like_a_const_of_an_earlier_file_keeps_the_name() -> None:
    """One error for the clash; calls to the function then check as calls (not as one
    "is a variable, not a function" more in every scenario that calls it)."""
    extra = load_helper("const greet = 1\n", "_helpers/extra.js", "extra", ())
    greeting = load_helper("function greet(n) {\n}\n", "_helpers/greeting.js", "greeting", ())
    table, errors = build_helper_table([extra, greeting])
    assert "greet" in table and "greet" not in table.consts
    assert len(errors) == 1 and "names both a helper const" in errors[0].message


def test_duplicate_function_in_one_helper_file() -> None:
    with pytest.raises(ScenarioSyntaxError, match="already declared at line 1"):
        load_helper("function a() {\n}\nfunction a() {\n}\n", "_helpers/h.js", "h", ())


# --- hooks and helper consts ---------------------------------------------------------------


def test_hooks_of_a_scenario_and_of_the_project() -> None:
    scenario = load_scenario(
        HEADER + "function after_each() {\n}\nfunction test_a() {\n}\n", "s.test.js", "s"
    )
    assert scenario.hook("before_each") is None
    after = scenario.hook("after_each")
    assert after is not None and after.program is scenario.program
    hooks = load_helper(
        "function before_each() {\n}\nfunction sign_in() {\n}\n", "_helpers/h.js", "h", ()
    )
    table, errors = build_helper_table([hooks])
    assert errors == []
    project_before = table.hook("before_each")
    assert project_before is not None and project_before.program is hooks.program
    assert table.hook("after_each") is None and table.hook("sign_in") is None


def test_helper_consts_are_frozen_literals_in_the_table() -> None:
    helper = load_helper(
        'const ITEMS = ["a", { k: [1, -2] }]\nconst limit = 3\nfunction f() {\n}\n',
        "_helpers/data.js",
        "data",
        (),
    )
    table, errors = build_helper_table([helper])
    assert errors == []
    assert table.const_values() == {"ITEMS": ["a", {"k": [1.0, -2.0]}], "limit": 3.0}
    items = table.consts["ITEMS"]
    assert (items.file, items.line, items.name_span.col) == ("_helpers/data.js", 1, 6)
    assert is_frozen(items.value) and is_frozen(items.value[1])  # type: ignore[index]
    assert sorted(table) == ["f"]
