"""The terminal prompt without a terminal: lines typed through ``handle`` (or a pipe as
stdin), its output read from an in-memory screen, a real DebugController and a real
interpreter in a scenario thread.

The pseudo-terminal test in test_debugger_e2e.py checks the prompt once end to end
with a browser; here each word of the vocabulary, the "is it DSL?" rule and the
listener output are checked in milliseconds.
"""

from __future__ import annotations

import io
import os
import re
import threading
import time
from typing import Any

import pytest

from dsl.builtins import PureServices, make_pure_builtins
from dsl.errors import Interrupt, ScriptError
from dsl.interpreter import Builtin, Directive, Interpreter, Step
from dsl.parser import parse_program
from runner.debug.breakpoints import Breakpoints
from runner.debug.commands import COMMANDS
from runner.debug.controller import DebugController
from runner.debug.prompt import PROMPT, PauseAnnouncer, TerminalPrompt
from runner.project.positions import statement_starts
from runner.run.steps import render_var

WAIT = 5.0
FILE = "unotest/e2e/t.test.js"
SOURCE = """\
function test_x() {
  let n = 1
  helper()
  probe(n)
}
function helper() {
  let y = 2
  probe(y)
}
"""
FAILING = """\
function test_x() {
  let n = 2
  expect_equal(n, 1)
  probe(n)
}
"""


class Screen(io.TextIOBase):
    """Everything printed, from any thread; ``until`` waits for a text to show up."""

    def __init__(self) -> None:
        self.text = ""
        self.mark = 0
        self.cond = threading.Condition()

    def writable(self) -> bool:
        return True

    def write(self, s: str) -> int:
        with self.cond:
            self.text += s
            self.cond.notify_all()
        return len(s)

    def until(self, needle: str) -> str:
        """The output since the last call, up to and including ``needle``."""
        deadline = time.monotonic() + WAIT
        with self.cond:
            while (found := self.text.find(needle, self.mark)) < 0:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"{needle!r} never showed; screen:\n{self.text}")
                self.cond.wait(left)
            chunk = self.text[self.mark : found + len(needle)]
            self.mark = found + len(needle)
            return chunk


class BrokenScreen(io.TextIOBase):
    """A terminal that went away: every write fails as after a hang-up."""

    def writable(self) -> bool:
        return True

    def write(self, s: str) -> int:
        raise OSError(5, "Input/output error")


class Hook:
    def __init__(self, controller: DebugController) -> None:
        self.controller = controller

    def before_statement(self, step: Step) -> Directive:
        return self.controller.before(step)

    def after_statement(self, step: Step, error: ScriptError | None) -> Directive:
        if error is not None:
            return self.controller.after_failure(step, error)
        return Directive.PROCEED


class Session:
    """One scenario paused before its first statement, with a prompt on ``screen``."""

    def __init__(
        self, source: str = SOURCE, stdin: Any = None, screen: io.TextIOBase | None = None
    ) -> None:
        program = parse_program(source, FILE)
        self.events: list[dict[str, Any]] = []
        self.probes: list[Any] = []
        self.breakpoints = Breakpoints({FILE: statement_starts(program)})
        self.controller = DebugController(
            # without the ``t`` the event constructors stamp: the tests compare content
            emit=lambda event: self.events.append({k: v for k, v in event.items() if k != "t"}),
            write_state=lambda state, step: None,
            interrupt=lambda reason: None,
            render=render_var,
            breakpoints=self.breakpoints,
            file_keys={"": FILE},
            warn=lambda text: None,
            step_first=True,
        )
        self.sent: list[dict[str, Any]] = []  # what the prompt handed to the controller
        submit_data = self.controller.submit_data

        def record(data: object, source: str = "file") -> None:
            if source == "terminal":
                assert isinstance(data, dict)
                self.sent.append({k: v for k, v in data.items() if k != "id"})
            submit_data(data, source)

        self.controller.submit_data = record  # type: ignore[method-assign]
        self.screen = Screen() if screen is None else screen
        if stdin is None:
            # A terminal nobody types into: never at its end (Ctrl-D aborts the run).
            read_fd, self._keep_open = os.pipe()
            stdin = os.fdopen(read_fd, "r")
        self.prompt = TerminalPrompt(
            self.controller,
            render_var,
            stdin=stdin,
            stdout=self.screen,  # type: ignore[arg-type]
        )
        self.prompt.start()
        builtins = make_pure_builtins(PureServices(env=lambda name: None, log=lambda line: None))
        builtins["probe"] = Builtin("probe", self._probe, 1, 1)
        interpreter = Interpreter(builtins, {}, hook=Hook(self.controller))
        self.error: BaseException | None = None

        def run() -> None:
            try:
                interpreter.run(program, "test_x")
            except BaseException as err:
                self.error = err

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def _probe(self, value: Any) -> Any:
        self.probes.append(value)
        return value

    @property
    def shown(self) -> Screen:
        assert isinstance(self.screen, Screen)
        return self.screen

    def type(self, line: str) -> str:
        """Type a line; what it printed up to the next prompt."""
        self.prompt.handle(line)
        return self.shown.until(PROMPT)

    def finish(self, line: str = "c") -> None:
        self.prompt.handle(line)
        self.thread.join(WAIT)
        assert not self.thread.is_alive(), self.events

    def resumes(self) -> list[tuple[str, str]]:
        return [(e["by"], e["cmd"]) for e in self.events if e["kind"] == "resumed"]


def started(source: str = SOURCE) -> Session:
    session = Session(source)
    shown = session.shown.until(PROMPT)
    assert f"paused (step) at {FILE}:2:2" in shown
    return session


# --- the vocabulary's words ---------------------------------------------------------------


def test_the_pause_shows_the_source_around_the_statement() -> None:
    session = Session()
    shown = session.shown.until(PROMPT)
    assert "⏸  paused (step) at unotest/e2e/t.test.js:2:2" in shown
    assert "   1    function test_x() {" in shown
    assert "   2 ->   let n = 1" in shown
    assert "   4      probe(n)" in shown
    assert "   5" not in shown  # two lines either side
    session.finish()


@pytest.mark.parametrize(
    ("words", "where", "cmd"),
    [
        (("s", "s"), (7, 2), "step"),  # into the helper
        (("step", "step"), (7, 2), "step"),
        (("n", "n"), (4, 2), "step-over"),  # over the helper call
        (("next", "step-over"), (4, 2), "step-over"),
        (("s", "s", "o"), (4, 2), "step-out"),  # from the helper back to the caller
        (("s", "s", "out"), (4, 2), "step-out"),
        (("s", "s", "step-out"), (4, 2), "step-out"),
        (("k",), (3, 2), "skip"),
        (("skip",), (3, 2), "skip"),
    ],
)
def test_stepping_words(words: tuple[str, ...], where: tuple[int, int], cmd: str) -> None:
    session = started()
    for word in words:
        shown = session.type(word)
    assert f"paused (step) at {FILE}:{where[0]}:{where[1]}" in shown
    assert session.resumes()[-1] == ("step", cmd)
    session.finish("a")


@pytest.mark.parametrize("word", ["c", "cont", "continue"])
def test_continue_words_run_to_the_end(word: str) -> None:
    session = started()
    session.finish(word)
    assert session.error is None
    assert session.probes == [2, 1]
    assert session.resumes() == [("continue", "continue")]


def test_skip_does_not_run_the_statement() -> None:
    session = started()
    session.type("k")  # `let n = 1` is skipped: n is never declared
    assert "error: ReferenceError" in session.type("n + 0")
    session.finish("a")


@pytest.mark.parametrize("word", ["a", "abort"])
def test_abort_ends_the_run(word: str) -> None:
    session = started()
    session.prompt.handle(word)
    session.thread.join(WAIT)
    assert isinstance(session.error, Interrupt)
    assert session.probes == []
    assert {"kind": "command:applied", "cmd": "abort", "id": "terminal-1"} in session.events


def test_every_terminal_command_gets_an_id_of_its_own() -> None:
    session = started()
    session.type("b 4")
    session.type("1 + 1")
    session.type("s")
    session.finish("a")
    ids = [e["id"] for e in session.events if e["kind"] in ("command:applied", "command:result")]
    assert ids[0] == "terminal-1" and "terminal-3" in ids
    assert all(i.startswith("terminal-") for i in ids)


# --- breakpoints ------------------------------------------------------------------------------


def test_break_and_clear() -> None:
    session = started()
    assert "no breakpoints" in session.type("b")
    assert "set-bp 4" in session.type("b 4")
    assert "set-bp 8:2" in session.type("break 8:2")
    assert "set-bp 3:2" in session.type("set-bp 3:2")
    shown = session.type("b")
    assert f"{FILE}: 3:2, 4:2, 8:2" in shown
    assert "clear-bp 3:2" in session.type("cl 3:2")
    assert "clear-bp 8:2" in session.type("clear 8:2")
    assert "rejected: no breakpoint at" in session.type("clear-bp 8:2")
    assert f"paused (breakpoint) at {FILE}:4:2" in session.type("c")
    session.finish()


@pytest.mark.parametrize("line", ["b x", "b 4:x", "cl nope:", "b 1:2:3:4"])
def test_a_position_that_does_not_parse_shows_the_usage(line: str) -> None:
    session = started()
    shown = session.type(line)
    assert "needs a position: LINE[:COL] or FILE:LINE[:COL]" in shown
    assert not [e for e in session.events if e["kind"] != "paused"]  # nothing was sent
    session.finish()


def test_a_breakpoint_in_an_unknown_file_is_rejected() -> None:
    session = started()
    assert "rejected: no scenario or helper file 'nope'" in session.type("b nope:3")
    session.finish()


# --- the prompt's own words --------------------------------------------------------------------


def test_vars_where_list() -> None:
    session = started()
    session.type("s")
    session.type("s")  # in the helper, at `let y = 2`
    session.type("s")
    shown = session.type("v")
    assert "  y = 2" in shown and "  n" not in shown
    shown = session.type("w")
    assert f"  test_x  {FILE}:3" in shown and f"  helper  {FILE}:8" in shown
    assert shown.index("test_x") < shown.index("helper")  # outermost first
    shown = session.type("l")
    assert "   3      helper()" in shown and "   8 ->   probe(y)" in shown
    assert "   2" not in shown  # five lines either side
    session.finish()


def test_vars_with_no_variables() -> None:
    session = started()
    assert "  (no variables)" in session.type("vars")
    session.finish()


def test_words_that_read_the_pause_say_so_when_not_paused() -> None:
    session = started()
    session.finish()
    for word in ("v", "w", "l"):
        session.prompt.handle(word)
        assert "not paused" in session.shown.until("not paused")


def test_help_lists_the_vocabulary_with_the_debuggers_docstrings() -> None:
    session = started()
    shown = session.type("help")
    for spec in COMMANDS:
        doc = " ".join((getattr(session.controller, spec.method).__doc__ or "").split())
        # Without the docstrings' reST quotes (``_helpers/<name>``): plain text here.
        assert f"  {spec.usage}: {doc.replace('``', '')}" in shown
    assert "``" not in shown
    for line in ("v(ars)", "w(here)", "l(ist)", "h(elp)", "b alone", "anything else"):
        assert line in shown
    assert session.type("?") == shown == session.type("h")
    assert session.sent == []
    session.finish()


# --- DSL or command? ---------------------------------------------------------------------------


def test_a_line_that_is_not_a_command_is_evaluated_and_answered() -> None:
    session = started()
    assert session.type("1 + 2").splitlines()[0] == "3"
    session.type("s")
    assert session.type("!n").splitlines()[0] == "1"
    assert session.type("no_such_fn()").startswith("error: ")
    session.finish()


@pytest.mark.parametrize(
    ("line", "sent"),
    [
        ("n = 4", {"cmd": "eval", "expr": "n = 4"}),  # a variable named like a command
        ("c + 1", {"cmd": "eval", "expr": "c + 1"}),
        ("next 3", {"cmd": "eval", "expr": "next 3"}),  # step-over takes no argument
        ("b = 3", {"cmd": "eval", "expr": "b = 3"}),  # the argument starts like an operator
        ("b(2)", {"cmd": "eval", "expr": "b(2)"}),
        ("!s", {"cmd": "eval", "expr": "s"}),  # `!` forces evaluation
        ("eval 1 + 1", {"cmd": "eval", "expr": "1 + 1"}),
        ("  n  ", {"cmd": "step-over"}),
        ("s", {"cmd": "step"}),
        ("pause", {"cmd": "pause"}),
        ("b 4", {"cmd": "set-bp", "line": 4, "col": 0}),
        ("b  4:2 ", {"cmd": "set-bp", "line": 4, "col": 2}),
        ("cl 4:2", {"cmd": "clear-bp", "line": 4, "col": 2}),
        ("b _helpers/auth:3", {"cmd": "set-bp", "line": 3, "col": 0, "file": "_helpers/auth"}),
    ],
)
def test_command_or_dsl(line: str, sent: dict[str, Any]) -> None:
    session = started()
    session.type("s")  # n is declared now
    session.type(line)
    assert session.sent[-1] == sent
    session.finish("a")


@pytest.mark.parametrize(
    ("line", "shown"),
    [("eval", "eval needs an expression"), ("b x", "b needs a position")],
)
def test_a_command_word_with_a_bad_argument_sends_nothing(line: str, shown: str) -> None:
    session = started()
    assert shown in session.type(line)
    assert session.sent == []
    session.finish()


def test_an_assignment_at_the_prompt_changes_the_scenario() -> None:
    session = started()
    session.type("s")
    session.type("n = 4")
    session.finish()
    assert session.probes == [2, 4]


def test_an_empty_line_shows_the_prompt_again() -> None:
    session = started()
    assert session.type("   ") == PROMPT
    assert session.sent == []
    session.finish()


# --- what the listener shows ---------------------------------------------------------------------


def test_a_failure_pause_says_what_can_be_done_and_retry_runs_it_again() -> None:
    session = Session(FAILING)
    session.shown.until(PROMPT)
    session.type("s")
    shown = session.type("s")  # expect_equal(n, 1) fails: n is 2
    assert f"paused (failure) at {FILE}:3:2" in shown
    # What failed comes first: a person is asked to fix it.
    assert f"paused (failure) at {FILE}:3:2\n   AssertionError: " in shown
    assert "the step failed: r(etry), k (skip), c or s ends the run as failed" in shown
    session.type("n = 1")
    session.finish("r")
    assert session.error is None
    assert session.probes == [1]
    assert session.resumes()[-1] == ("continue", "retry")


def test_without_a_terminal_a_failure_pause_line_says_what_failed() -> None:
    said: list[str] = []
    session = Session(FAILING)
    session.controller.listeners.append(PauseAnnouncer("run-1", said.append, None))
    session.shown.until(PROMPT)
    session.type("s")
    session.type("s")
    assert said[-1].startswith(f"paused (failure) at {FILE}:3:2 (AssertionError: ")
    # continue only ends the run as failed there: the line says so, and what else helps.
    assert said[-1].endswith(
        ") in run run-1; the step failed: unotest dbg run-1 retry (after fixing the page "
        "with eval), unotest dbg run-1 skip, or unotest dbg run-1 continue to end the run "
        "as failed, or the viewer"
    )
    assert "to resume" in said[0]
    assert "\n" not in said[-1]
    assert "AssertionError" not in said[0]  # the step pause before it: nothing failed
    session.finish()


def test_retry_outside_a_failure_is_rejected_with_the_reason() -> None:
    session = started()
    assert "rejected: retry re-runs a failed statement" in session.type("r")
    session.finish()


def test_pause_while_paused_is_rejected() -> None:
    session = started()
    assert "rejected: already paused" in session.type("pause")
    session.finish()


def test_a_resume_from_commands_jsonl_is_shown() -> None:
    session = started()
    session.controller.submit_data({"id": "f1", "cmd": "step"})
    shown = session.shown.until(PROMPT)
    assert "▶  resumed by step (from commands.jsonl)" in shown
    assert f"paused (step) at {FILE}:3:2" in shown
    session.finish()


def test_an_eval_from_commands_jsonl_is_not_printed() -> None:
    session = started()
    session.controller.submit_data({"id": "f1", "cmd": "eval", "expr": "40 + 2"})
    assert "42" not in session.type("1 + 2")  # the terminal's answer comes after it
    session.finish()


# --- stdin and a terminal that goes away ----------------------------------------------------------


def test_lines_are_read_from_stdin() -> None:
    read_fd, write_fd = os.pipe()
    with os.fdopen(read_fd, "r") as stdin, os.fdopen(write_fd, "w") as typed:
        session = Session(stdin=stdin)
        session.shown.until(PROMPT)
        typed.write("v\n")
        typed.flush()
        assert "(no variables)" in session.shown.until(PROMPT)
        typed.write("c\n")
        typed.flush()
        session.thread.join(WAIT)
        assert not session.thread.is_alive()
    assert session.probes == [2, 1]


def test_ctrl_d_at_the_prompt_aborts_the_run() -> None:
    """EOF (Ctrl-D): nobody is left to resume it from here, and a run paused with a
    terminal has no idle timeout; it used to stay paused for good."""
    read_fd, write_fd = os.pipe()
    with os.fdopen(read_fd, "r") as stdin:
        session = Session(stdin=stdin)
        session.shown.until(PROMPT)
        os.close(write_fd)
        assert "EOF: aborting the run" in session.shown.until("EOF: aborting the run")
        session.thread.join(WAIT)
        assert not session.thread.is_alive()
    assert isinstance(session.error, Interrupt)
    assert session.probes == []
    assert [e["cmd"] for e in session.events if e["kind"] == "command:applied"] == ["abort"]


def test_a_command_that_does_not_parse_is_rejected_at_the_prompt() -> None:
    """Said as the prompt's rejection (not as a commands.jsonl warning), then the prompt."""
    session = started()
    shown = session.type("b 0")
    assert "rejected: set-bp needs a line number (1-based)" in shown
    assert "commands.jsonl" not in shown
    session.finish()


def test_a_terminal_that_went_away_does_not_break_the_run() -> None:
    session = Session(screen=BrokenScreen())
    deadline = time.monotonic() + WAIT
    while session.controller.current_pause is None:
        assert time.monotonic() < deadline, "never paused"
        time.sleep(0.005)
    session.prompt.handle("v")
    session.prompt.handle("1 + 2")
    session.controller.submit_data({"id": "f1", "cmd": "continue"})  # commands.jsonl still works
    session.thread.join(WAIT)
    assert not session.thread.is_alive()
    assert session.error is None and session.probes == [2, 1]


# --- Ctrl-C with a person at the prompt ---------------------------------------------------


LOOPING = """\
function test_x() {
  let n = 0
  while (true) {
    n = n + 1
  }
}
"""


def test_ctrl_c_at_a_pause_keeps_it_and_a_second_one_ends_the_run() -> None:
    session = started()
    assert session.prompt.interrupted() is True  # handled here: nothing aborts
    shown = session.shown.until(PROMPT)
    assert "Ctrl-C: the run stays paused" in shown and "press Ctrl-C again" in shown
    assert session.controller.current_pause is not None
    assert session.prompt.interrupted() is False  # the second: the caller aborts
    session.finish()


def test_ctrl_c_while_running_pauses_before_the_next_statement() -> None:
    session = Session(LOOPING)
    session.shown.until(PROMPT)
    session.prompt.handle("c")
    deadline = time.monotonic() + WAIT
    while session.controller.current_pause is not None:  # until the run runs again
        assert time.monotonic() < deadline, session.events
        time.sleep(0.01)
    assert session.prompt.interrupted() is True
    assert "Ctrl-C: pausing before the next statement" in session.shown.until(
        "(press it again to end the run)"
    )
    assert "paused (step) at" in session.shown.until(PROMPT)
    assert session.sent[-1] == {"cmd": "pause"}
    # At the pause it brought, Ctrl-C is a first one again; then a second one ends it.
    assert session.prompt.interrupted() is True
    assert session.prompt.interrupted() is False
    session.finish("a")


def test_ctrl_c_after_the_terminal_ended_is_left_to_the_caller() -> None:
    read_fd, write_fd = os.pipe()
    os.close(write_fd)  # Ctrl-D: stdin at its end
    session = Session(stdin=os.fdopen(read_fd, "r"))
    session.shown.until("EOF: aborting the run")
    assert session.prompt.interrupted() is False
    session.thread.join(WAIT)


# --- what a pdb user types out of habit -----------------------------------------------------


def test_p_and_pp_print_an_expression() -> None:
    session = started()
    session.type("s")  # n = 1 now
    assert re.search(r"^2$", session.type("p n + 1"), re.M)
    assert re.search(r"^1$", session.type("pp n"), re.M)
    assert session.sent[-2:] == [{"cmd": "eval", "expr": "n + 1"}, {"cmd": "eval", "expr": "n"}]
    session.finish()


@pytest.mark.parametrize("word", ["q", "quit", "exit"])
def test_q_quit_and_exit_end_the_run(word: str) -> None:
    session = started()
    session.prompt.handle(word)
    session.thread.join(WAIT)
    assert session.sent[-1] == {"cmd": "abort"}


def test_a_misspelt_command_is_named_not_evaluated() -> None:
    session = started()
    shown = session.type("stpe")
    assert "unknown command 'stpe' (did you mean 'step'?); 'help' lists the commands" in shown
    assert session.sent == []  # nothing evaluated, nothing sent
    assert "ReferenceError" in session.type("total_count")  # no command near: DSL's answer
    session.finish()


def test_a_alone_asks_when_a_variable_is_called_a() -> None:
    session = started("function test_x() {\n  let a = 5\n  probe(a)\n}\n")
    session.type("s")  # a = 5 now
    shown = session.type("a")
    assert "'a' is also a variable here: type abort to end the run, or !a to see it" in shown
    assert session.controller.current_pause is not None and session.sent[-1]["cmd"] == "step"
    assert re.search(r"^5$", session.type("!a"), re.M)
    session.finish()


def test_a_name_close_to_a_command_that_means_something_here_is_evaluated() -> None:
    """A function of the file (or a helper const, a built-in) called ``pages`` is what
    the person wants to see, not the ``pause`` command misspelt."""
    source = "function test_x() {\n  let n = 1\n  probe(n)\n}\nfunction pages() {\n  return 2\n}\n"
    session = started(source)
    shown = session.type("pages")
    assert "unknown command" not in shown
    assert session.sent[-1] == {"cmd": "eval", "expr": "pages"}
    assert "unknown command 'stpe'" in session.type("stpe")
    session.finish()
