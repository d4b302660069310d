"""``reload`` at the terminal prompt without a terminal (the Session of
test_prompt_unit.py): ``e`` and ``reload`` send the command, the answer is printed with
the source around the statement the run now stands at, a refusal is printed as such,
and ``r`` then runs the edited statement."""

from __future__ import annotations

from test_prompt_unit import FAILING, FILE, PROMPT, Session

from dsl.errors import ScriptError
from dsl.interpreter import Step
from dsl.parser import parse_program
from runner.errors import CommandError

FIXED = FAILING.replace("  let n = 2\n", "  let n = 2\n  probe(0)\n").replace(
    "expect_equal(n, 1)", "expect_equal(n, 2)"
)


def test_e_reloads_shows_where_the_run_stands_and_r_runs_the_edited_statement() -> None:
    session = Session(FAILING)
    session.shown.until(PROMPT)
    session.prompt.handle("c")
    shown = session.shown.until(PROMPT)
    assert f"paused (failure) at {FILE}:3:2" in shown
    assert "e (reload)" in shown

    def reloader(step: Step) -> str:
        new = parse_program(FIXED, FILE)
        outcome = step.reload({FILE: new}, {}, {})
        return f"reloaded: {outcome.skipped} skipped"

    session.controller.reloader = reloader
    out = session.type("e")
    assert "reloaded: 1 skipped" in out, out
    assert "   4 ->   expect_equal(n, 2)" in out, out
    assert "   3      probe(0)" in out, out
    assert session.sent[-1] == {"cmd": "reload"}
    session.finish("r")
    assert session.error is None and session.probes == [2.0]


def test_a_refused_reload_is_printed_and_the_run_stays_paused() -> None:
    session = Session(FAILING)
    session.shown.until(PROMPT)
    session.prompt.handle("c")
    session.shown.until(PROMPT)

    def refuse(step: Step) -> str:
        raise CommandError(f"{FILE}:3:9: SyntaxError: unexpected ')'")

    session.controller.reloader = refuse
    out = session.type("reload")
    assert f"rejected: {FILE}:3:9: SyntaxError: unexpected ')'" in out, out
    assert session.controller.current_pause is not None
    session.finish("c")
    assert isinstance(session.error, ScriptError)
