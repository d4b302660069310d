"""The debugger's vocabulary (runner/debug/commands.py) and positions (runner/project/positions.py).

Every front end reads these tables, so a spelling that works at the prompt works in
``unotest dbg`` and a position that ``--break`` takes lands where MCP's
``set_breakpoints`` lands it. The debugger's own behaviour is in
test_debugger_unit.py; the prompt's in test_prompt_unit.py.
"""

from __future__ import annotations

from typing import Any

import pytest
from protocol_schemas import validate

from dsl.parser import parse_program
from runner.debug.commands import (
    ANYTIME,
    AT_PAUSE,
    COMMANDS,
    NAMES,
    PROTOCOL_NAMES,
    RESULT_WITHIN,
    RESUMING,
    WITH_RESULT,
    Command,
    lookup,
    parse_command,
    parse_words,
    unknown_command,
)
from runner.debug.controller import RUN, STEP, DebugController, StopInfo
from runner.errors import CommandError, UsageError
from runner.project.positions import (
    Landing,
    Position,
    is_col,
    is_line,
    land,
    parse_position,
    statement_starts,
)

# --- the table -------------------------------------------------------------------------------


def test_the_protocols_commands_are_all_there_and_ours_are_additive() -> None:
    assert set(PROTOCOL_NAMES) == {"step", "continue", "pause", "set-bp", "clear-bp", "abort"}
    assert set(PROTOCOL_NAMES) <= set(NAMES)
    assert set(NAMES) - set(PROTOCOL_NAMES) == {
        "step-over",
        "step-out",
        "retry",
        "skip",
        "eval",
        "reload",
        "restart",
        "pick",
    }
    assert len(NAMES) == len(set(NAMES))


def test_each_command_is_at_a_pause_or_at_any_time() -> None:
    assert set(AT_PAUSE) | set(ANYTIME) == set(NAMES)
    assert not set(AT_PAUSE) & set(ANYTIME)
    assert set(ANYTIME) == {"pause", "set-bp", "clear-bp", "abort", "restart"}


def test_which_commands_are_answered_by_a_result_and_how_long_senders_wait() -> None:
    """``restart``'s ``command:result`` (the new run id) comes once the old run has
    ended, well after the acknowledgement: senders (``unotest dbg``, MCP) wait longer;
    ``eval``'s may come as late as its time limit (a loop typed at a pause)."""
    from dsl.interpreter import EVAL_LIMIT_S

    assert set(WITH_RESULT) == {"eval", "reload", "restart", "pick"}
    assert dict(RESULT_WITHIN) == {"restart": 60.0, "eval": 15.0, "pick": 15.0}
    assert RESULT_WITHIN["eval"] > EVAL_LIMIT_S
    assert set(RESULT_WITHIN) <= set(WITH_RESULT)


def test_which_commands_resume_and_the_protocols_by() -> None:
    """runner.md §3: the viewer knows only ``by: step | continue``."""
    assert dict(RESUMING) == {
        "step": "step",
        "step-over": "step",
        "step-out": "step",
        "skip": "step",
        "continue": "continue",
        "retry": "continue",
    }
    assert set(RESUMING) <= set(AT_PAUSE)


def test_every_command_is_a_debugger_method_whose_docstring_is_its_help() -> None:
    for spec in COMMANDS:
        method = getattr(DebugController, spec.method, None)
        assert callable(method), spec.name
        assert (method.__doc__ or "").strip(), f"{spec.method} has no help"
        assert spec.usage


def test_no_word_stands_for_two_commands() -> None:
    words = [word for spec in COMMANDS for word in (spec.name, *spec.aliases)]
    assert len(words) == len(set(words))


@pytest.mark.parametrize(
    ("word", "name"),
    [
        # the prompt's letters (runner.md §3) and unotest dbg's spellings
        ("s", "step"),
        ("step", "step"),
        ("n", "step-over"),
        ("next", "step-over"),
        ("step-over", "step-over"),
        ("o", "step-out"),
        ("out", "step-out"),
        ("step-out", "step-out"),
        ("c", "continue"),
        ("cont", "continue"),
        ("continue", "continue"),
        ("r", "retry"),
        ("retry", "retry"),
        ("k", "skip"),
        ("skip", "skip"),
        ("b", "set-bp"),
        ("break", "set-bp"),
        ("set-bp", "set-bp"),
        ("cl", "clear-bp"),
        ("clear", "clear-bp"),
        ("clear-bp", "clear-bp"),
        ("a", "abort"),
        ("abort", "abort"),
        ("pause", "pause"),
        ("eval", "eval"),
    ],
)
def test_lookup(word: str, name: str) -> None:
    spec = lookup(word)
    assert spec is not None and spec.name == name


@pytest.mark.parametrize("word", ["", "S", "jump", "v", "help", "step ", "p"])
def test_lookup_unknown(word: str) -> None:
    assert lookup(word) is None


# --- parse_words: what a person types ----------------------------------------------------------


@pytest.mark.parametrize(
    ("words", "command"),
    [
        (["step"], {"cmd": "step"}),
        (["n"], {"cmd": "step-over"}),
        (["out"], {"cmd": "step-out"}),
        (["c"], {"cmd": "continue"}),
        (["pause"], {"cmd": "pause"}),
        (["k"], {"cmd": "skip"}),
        (["break", "12:4"], {"cmd": "set-bp", "line": 12, "col": 4}),
        (["b", "12"], {"cmd": "set-bp", "line": 12, "col": 0}),  # col 0: the line
        (["set-bp", " 12:4 "], {"cmd": "set-bp", "line": 12, "col": 4}),
        (
            ["clear", "_helpers/auth:3:2"],
            {"cmd": "clear-bp", "line": 3, "col": 2, "file": "_helpers/auth"},
        ),
        (
            ["cl", "unotest/e2e/_helpers/x.js:3"],
            {"cmd": "clear-bp", "line": 3, "col": 0, "file": "unotest/e2e/_helpers/x.js"},
        ),
        (["b", "0"], {"cmd": "set-bp", "line": 0, "col": 0}),  # the runner answers why not
        (["eval", "x", "+", "1"], {"cmd": "eval", "expr": "x + 1"}),
        (["eval", 'click("Save")'], {"cmd": "eval", "expr": 'click("Save")'}),
        (["pick", "120", "48.5"], {"cmd": "pick", "x": 120.0, "y": 48.5}),
        (["pick", "Add", "to", "cart"], {"cmd": "pick", "name": "Add to cart"}),
        (["pick", "12"], {"cmd": "pick", "name": "12"}),
    ],
)
def test_parse_words(words: list[str], command: dict[str, Any]) -> None:
    assert parse_words(words) == command
    if command["cmd"] in ("set-bp", "clear-bp") and "file" not in command:
        # What unotest dbg appends is the protocol's DbgCommand (col is required).
        validate("DbgCommand", {"id": "c1", **command})


@pytest.mark.parametrize(
    ("words", "message"),
    [
        ([], "which command? s(tep), n(ext)"),
        (["jump"], "unknown debugger command 'jump'"),
        (["step", "2"], "unknown debugger command 'step 2'"),
        (["break"], "break needs a position: LINE[:COL] or FILE:LINE[:COL]"),
        (["b", "x"], "b needs a position"),
        (["cl", "3:x"], "cl needs a position"),
        (["b", "1", "2"], "b needs a position"),
        (["eval"], "eval needs an expression"),
        (["eval", " "], "eval needs an expression"),
        (["pick"], "pick needs a point or a name"),
    ],
)
def test_parse_words_errors(words: list[str], message: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_words(words)
    assert message in str(caught.value)


def test_the_usage_of_which_command_names_every_command() -> None:
    with pytest.raises(UsageError) as caught:
        parse_words([])
    for spec in COMMANDS:
        assert spec.usage in str(caught.value)


# --- parse_command: a commands.jsonl line's fields ------------------------------------------------


def test_parse_command_keeps_the_fields_of_its_command() -> None:
    data = {"cmd": "set-bp", "line": 3, "col": 0, "file": "_helpers/x"}
    assert parse_command(data, "i1") == Command("set-bp", "i1", 3, 0, "_helpers/x")
    eval_data = {"cmd": "eval", "expr": "x"}
    assert parse_command(eval_data, "i2", "terminal") == Command(
        "eval", "i2", expr="x", source="terminal"
    )
    assert parse_command({"cmd": "eval", "expr": "x", "frame": 0}, "i3").frame == 0
    at = parse_command({"cmd": "pick", "x": 10, "y": 2.5}, "i4")
    assert (at.point, at.name, at.role) == ((10.0, 2.5), None, None)
    named = parse_command({"cmd": "pick", "name": "Save", "role": "button"}, "i5")
    assert (named.point, named.name, named.role) == (None, "Save", "button")


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ({"cmd": "s"}, unknown_command("s")),  # aliases are for people, not the file
        ({"cmd": "jump"}, "unknown command 'jump' (known: step, step-over"),
        ({}, "unknown command None"),
        ({"cmd": "set-bp", "line": True}, "set-bp needs a line number (1-based)"),
        ({"cmd": "clear-bp", "line": 0}, "clear-bp needs a line number"),
        ({"cmd": "set-bp", "line": 2, "col": False}, "needs a column (0-based) or none"),
        ({"cmd": "set-bp", "line": 2, "file": ["x"]}, "set-bp: file must be a string"),
        ({"cmd": "eval", "expr": ""}, "eval needs an expr"),
        ({"cmd": "eval", "expr": "x", "frame": -1}, "frame goes with eval"),
        ({"cmd": "step", "frame": 0}, "frame goes with eval"),
        ({"cmd": "pick"}, "pick needs x and y, or a name"),
        ({"cmd": "pick", "x": 3}, "pick needs x and y"),
        ({"cmd": "pick", "x": True, "y": 2}, "pick needs x and y"),
        ({"cmd": "pick", "x": -1, "y": 2}, "pick needs x and y"),
        ({"cmd": "pick", "name": "Save", "role": 3}, "pick's role must be an ARIA role"),
    ],
)
def test_parse_command_errors(data: dict[str, Any], reason: str) -> None:
    with pytest.raises(CommandError) as caught:
        parse_command(data, "i")
    assert reason in str(caught.value)


# --- positions ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "position"),
    [
        ("10", Position(10)),
        ("10:4", Position(10, 4)),
        ("0010:04", Position(10, 4)),
        ("0", Position(0)),  # syntax only: the caller says whether line 0 will do
        ("_helpers/auth:3", Position(3, None, "_helpers/auth")),
        ("_helpers/auth:3:2", Position(3, 2, "_helpers/auth")),
        ("unotest/e2e/a1.test.js:3:2", Position(3, 2, "unotest/e2e/a1.test.js")),
        ("x:1", Position(1, None, "x")),
        ("ten:4", Position(4, None, "ten")),  # a file named ten: MCP refuses any file
    ],
)
def test_parse_position(text: str, position: Position) -> None:
    assert parse_position(text) == position


@pytest.mark.parametrize(
    "text",
    ["", " 10", "10 ", "10:", ":4", "10:4:2", "ten", "10:x", "a b:1", "-1", "1e3", "9" * 5000],
)
def test_parse_position_rejects(text: str) -> None:
    assert parse_position(text) is None


@pytest.mark.parametrize(
    ("value", "line", "col"),
    [(1, True, True), (0, False, True), (-1, False, False), (True, False, False),
     (False, False, False), (1.0, False, False), ("1", False, False), (None, False, False)],
)  # fmt: skip
def test_line_and_col_predicates(value: object, line: bool, col: bool) -> None:
    assert is_line(value) is line
    assert is_col(value) is col


SOURCE = """\
function test_x() {
  let a = 1; let b = 2
  if (a) {
    log(a)
  }

  log(b)
}
"""
STARTS = statement_starts(parse_program(SOURCE, "t.test.js"))


def test_statement_starts_of_the_example() -> None:
    assert STARTS == [(2, 2), (2, 13), (3, 2), (4, 4), (7, 2)]


@pytest.mark.parametrize(
    ("line", "col", "landing"),
    [
        (2, None, Landing((2, 2), True, None)),  # a line: its first statement
        (2, 13, Landing((2, 13), True, None)),
        (4, None, Landing((4, 4), True, None)),
        (2, 5, Landing((2, 5), False, (2, 2))),  # kept, with the nearest start
        (2, 12, Landing((2, 12), False, (2, 13))),
        (6, None, Landing((6, 0), False, (7, 2))),  # a blank line: column 0
        (5, 2, Landing((5, 2), False, (4, 4))),  # nearer by line wins over column
        (40, 0, Landing((40, 0), False, (7, 2))),
    ],
)
def test_land(line: int, col: int | None, landing: Landing) -> None:
    assert land(STARTS, line, col) == landing


def test_land_in_a_file_without_statements() -> None:
    assert land([], 3, None) == Landing((3, 0), False, None)
    assert land([], 3, 1) == Landing((3, 1), False, None)


def test_land_takes_the_first_statement_of_a_line_in_any_order() -> None:
    assert land([(2, 13), (2, 2)], 2, None) == Landing((2, 2), True, None)


# --- the stepping record --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stop", "stops_at"),
    [
        (RUN, {0: False, 1: False, 2: False}),
        (STEP, {0: True, 1: True, 2: True}),
        (StopInfo("over", 1), {0: True, 1: True, 2: False}),
        (StopInfo("out", 1), {0: True, 1: False, 2: False}),
    ],
)
def test_stop_info(stop: StopInfo, stops_at: dict[int, bool]) -> None:
    """step: anywhere; over: depth ≤ where it was asked; out: depth < that."""
    assert {depth: stop.stops_at(depth) for depth in stops_at} == stops_at
