"""``reload`` through the debugger without a browser: the harness of
test_debugger_unit.py (a real interpreter and DebugController in a scenario thread)
with a real :class:`runner.debug.reload.Reloader` reading a project written to ``tmp_path``.

``log(x)`` is what the checker knows, so the harness's ``log`` records its argument
(as ``probe`` does there) and the files pass ``unotest check``'s rules.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_debugger_unit import FILE, HELPER_FILE, Harness

from dsl.interpreter import Builtin
from dsl.parser import parse_program
from runner.debug.reload import Reloader

HEADER = "// id-t\n// Reload\n// #123456\n"
SOURCE = (
    HEADER
    + """function test_x() {
  let total = 40 + 2
  expect_equal(total, 40)
  log("after " + total)
}
"""
)  # line 6: the failing expectation
FIXED = SOURCE.replace("expect_equal(total, 40)", "expect_equal(total, 42)")
HELPER = """function twice(n) {
  return n * 2
}
"""


def make(tmp_path: Path, source: str, *, helper: str = HELPER, step_first: bool = False) -> Harness:
    (tmp_path / FILE).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / HELPER_FILE).parent.mkdir(parents=True, exist_ok=True)
    write(tmp_path, source, helper)
    harness = Harness(source, helper=helper, step_first=step_first)
    harness.interpreter.builtins["log"] = Builtin("log", harness._probe, 1, 1)  # type: ignore[index]
    harness.breakpoints.programs = {
        FILE: harness.program,
        HELPER_FILE: parse_program(helper, HELPER_FILE),
    }
    harness.controller.reloader = Reloader(tmp_path, "t", FILE, harness.breakpoints)
    return harness


def write(tmp_path: Path, source: str, helper: str | None = None) -> None:
    (tmp_path / FILE).write_text(source)
    if helper is not None:
        (tmp_path / HELPER_FILE).write_text(helper)


def reload(harness: Harness) -> dict[str, object]:
    """Send reload; its answer: ``command:result`` after ``command:applied``, or the
    ``command:rejected``."""
    ident = harness.send("reload")
    first = harness.answer(ident)
    if first["kind"] == "command:rejected":
        return first
    return harness.wait_event(lambda e: e["kind"] == "command:result" and e.get("id") == ident)


def test_fix_the_failed_expectation_reload_and_retry(tmp_path: Path) -> None:
    harness = make(tmp_path, SOURCE).start()
    paused = harness.paused()
    assert (paused["reason"], paused["line"]) == ("failure", 6)
    write(tmp_path, FIXED.replace('log("after "', 'log("inserted")\n  log("after "'))
    result = reload(harness)
    assert result["ok"] is True
    assert result["value"] == "reloaded: test_x (on the call stack) going on in the new code"
    assert harness.states[-1] == ("paused-failure", (6, 2))
    assert harness.controller.current_pause is not None
    assert harness.controller.current_pause.step.text == "expect_equal(total, 42)"
    harness.resume("retry")
    harness.join()
    assert harness.error is None
    assert harness.probes == ["inserted", "after 42"]


def test_a_syntax_error_is_rejected_the_run_stays_paused_and_the_old_code_retries(
    tmp_path: Path,
) -> None:
    harness = make(tmp_path, SOURCE).start()
    harness.paused()
    write(tmp_path, FIXED.replace("let total = 40 + 2", "let total = (40 + 2"))
    rejected = reload(harness)
    assert rejected["kind"] == "command:rejected"
    assert str(rejected["reason"]).startswith(f"{FILE}:6:2: SyntaxError: "), rejected
    assert "SyntaxError" in str(rejected["reason"])
    assert harness.controller.current_pause is not None
    harness.resume("retry")  # the old expectation fails again: a new failure pause
    again = harness.paused()
    assert (again["reason"], again["line"]) == ("failure", 6)
    write(tmp_path, FIXED)
    assert reload(harness)["ok"] is True
    harness.resume("retry")
    harness.join()
    assert harness.error is None and harness.probes == ["after 42"]


def test_a_check_error_names_its_place(tmp_path: Path) -> None:
    harness = make(tmp_path, SOURCE).start()
    harness.paused()
    write(tmp_path, FIXED.replace('log("after "', 'no_such_thing()\n  log("after "'))
    rejected = reload(harness)
    assert rejected["kind"] == "command:rejected"
    assert str(rejected["reason"]).startswith(f"{FILE}:7:2: "), rejected
    assert "no_such_thing" in str(rejected["reason"])
    harness.send("abort")
    harness.join()


def test_an_unmappable_edit_is_rejected_with_the_reason_and_changes_nothing(
    tmp_path: Path,
) -> None:
    source = (
        HEADER
        + """function test_x() {
  for (const i of [1, 2]) {
    expect_equal(i, 1)
  }
  log("done")
}
"""
    )
    harness = make(tmp_path, source).start()
    assert harness.paused()["reason"] == "failure"  # i = 2
    write(tmp_path, source.replace("[1, 2]", "[1, 2, 3]").replace("(i, 1)", "(i, i)"))
    rejected = reload(harness)
    assert rejected["kind"] == "command:rejected"
    reason = str(rejected["reason"])
    assert reason.startswith("cannot reload: ") and reason.endswith("nothing changed"), reason
    assert f"{FILE}:5:2 `for (const i of [1, 2])` holds the running position" in reason
    assert harness.controller.current_pause is not None
    assert harness.controller.current_pause.step.text == "expect_equal(i, 1)"
    harness.resume("skip")
    assert harness.paused()["reason"] == "step"  # skip pauses before the next statement
    harness.resume("continue")
    harness.join()
    assert harness.probes == ["done"]


def test_a_helper_edited_while_not_on_the_stack(tmp_path: Path) -> None:
    source = HEADER + "function test_x() {\n  let x = 1\n  log(twice(x))\n}\n"
    harness = make(tmp_path, source, step_first=True).start()
    harness.paused()
    write(tmp_path, source, HELPER.replace("n * 2", "n * 10"))
    result = reload(harness)
    assert result["value"] == "reloaded: 1 function replaced"
    harness.resume("continue")
    harness.join()
    assert harness.probes == [10.0]


def test_breakpoints_move_with_their_statements(tmp_path: Path) -> None:
    source = HEADER + "function test_x() {\n  let a = 1\n  let b = 2\n  log(a + b)\n}\n"
    harness = make(tmp_path, source)
    harness.breakpoints.add(FILE, (5, 2))
    harness.breakpoints.add(FILE, (7, 2))
    harness.start()
    assert harness.paused()["line"] == 5
    write(tmp_path, source.replace("  let b = 2\n", '  let b = 2\n  log("one")\n  log("two")\n'))
    result = reload(harness)
    assert (
        result["value"]
        == "reloaded: test_x (on the call stack) going on in the new code, 1 breakpoint moved"
    )
    assert harness.breakpoints.active() == {FILE: ["5:2", "9:2"]}
    harness.resume("continue")
    paused = harness.paused()
    assert (paused["reason"], paused["line"]) == ("breakpoint", 9)
    assert harness.probes == ["one", "two"]
    harness.resume("continue")
    harness.join()
    assert harness.probes == ["one", "two", 3.0]


def test_a_line_without_a_statement_lands_on_the_one_an_edit_puts_there(
    tmp_path: Path,
) -> None:
    """``--break 9`` past the function's end is kept (as 9:0, the protocol's col being
    required); once an edit puts an indented statement on line 9, it stops there."""
    source = HEADER + "function test_x() {\n  let a = 1\n  log(a)\n}\n"
    harness = make(tmp_path, source)
    position, note = harness.breakpoints.resolve(FILE, 9, None)
    assert note is not None and f"breakpoint {FILE}:9 matches no statement start" in note
    harness.breakpoints.add(FILE, position)
    harness.breakpoints.add(FILE, (5, 2))
    harness.start()
    assert harness.paused()["line"] == 5
    write(tmp_path, source.replace("  log(a)\n", "  log(a)\n  log(2)\n  log(3)\n  log(4)\n"))
    reload(harness)
    assert harness.breakpoints.active() == {FILE: ["5:2", "9:2"]}
    harness.resume("continue")
    paused = harness.paused()
    assert (paused["reason"], paused["line"], paused["col"]) == ("breakpoint", 9, 2)
    harness.resume("continue")
    harness.join()


def test_reload_needs_a_pause_and_a_project(tmp_path: Path) -> None:
    harness = make(tmp_path, SOURCE)
    ident = harness.send("reload")
    assert harness.answer(ident)["kind"] == "command:rejected"
    harness.controller.reloader = None
    harness.start()
    harness.paused()
    rejected = reload(harness)
    assert "no reload" in str(rejected["reason"])
    harness.send("abort")
    harness.join()


@pytest.mark.parametrize("missing", ["scenario", "helper"])
def test_a_file_that_cannot_be_read_is_named(tmp_path: Path, missing: str) -> None:
    harness = make(tmp_path, SOURCE).start()
    harness.paused()
    if missing == "scenario":
        (tmp_path / FILE).unlink()
    else:
        (tmp_path / HELPER_FILE).write_bytes(b"\xff\xfe")
    rejected = reload(harness)
    target = FILE if missing == "scenario" else HELPER_FILE
    assert str(rejected["reason"]).startswith(f"{target}:1:0: "), rejected
    harness.send("abort")
    harness.join()


def test_a_helper_file_created_since_the_start_takes_breakpoints_after_a_reload(
    tmp_path: Path,
) -> None:
    harness = make(tmp_path, SOURCE).start()
    harness.paused()
    keys = harness.controller.file_keys
    assert isinstance(keys, dict)
    harness.controller.reloader = Reloader(tmp_path, "t", FILE, harness.breakpoints, keys)
    extra = "unotest/e2e/_helpers/extra.js"
    (tmp_path / extra).write_text("function extra() {\n  return 1\n}\n")
    before = harness.send("set-bp", file="_helpers/extra", line=2)
    assert harness.answer(before)["kind"] == "command:rejected"
    assert reload(harness)["value"] == "reloaded: 1 function replaced"
    after = harness.send("set-bp", file="_helpers/extra", line=2)
    assert harness.answer(after)["kind"] == "command:applied"
    assert harness.breakpoints.active()[extra] == ["2:2"]
    harness.send("abort")
    harness.join()
