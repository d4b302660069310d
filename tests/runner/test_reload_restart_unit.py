"""``restart`` on the debugger's side (runner/debug/controller.py): it ends the run exactly as
``abort`` does and leaves ``restart_requested`` set, which the session reads to start
the scenario again. A real interpreter and controller, as in test_debugger_unit.py."""

from __future__ import annotations

from test_debugger_unit import WAIT, Harness

from dsl.errors import Interrupt
from runner.debug.commands import ANYTIME, lookup, parse_words

SOURCE = "function test_x() {\n  let x = 1\n  gate()\n  probe(x)\n}\n"


def test_restart_and_reload_are_in_the_vocabulary() -> None:
    restart, reload = lookup("restart"), lookup("e")
    assert restart is not None and restart.name in ANYTIME and restart.resumes is None
    assert reload is not None and reload.name == "reload" and reload.name not in ANYTIME
    assert lookup("reload") is reload
    assert parse_words(["restart"]) == {"cmd": "restart"}
    assert parse_words(["e"]) == {"cmd": "reload"}


def test_restart_at_a_pause_aborts_and_sets_the_flag() -> None:
    harness = Harness(SOURCE, step_first=True).start()
    harness.paused()
    assert harness.controller.restart_requested is False
    ident = harness.send("restart")
    assert harness.answer(ident) == {"kind": "command:applied", "cmd": "restart", "id": ident}
    harness.join()
    assert isinstance(harness.error, Interrupt) and harness.error.reason == "aborted"
    assert harness.controller.restart_requested is True
    assert harness.interrupts == ["aborted"]
    assert harness.probes == []


def test_restart_while_running_aborts_and_sets_the_flag() -> None:
    harness = Harness(SOURCE).start()
    assert harness.in_gate.wait(WAIT)
    ident = harness.send("restart")
    assert harness.answer(ident)["kind"] == "command:applied"
    harness.join()
    assert isinstance(harness.error, Interrupt)
    assert harness.controller.restart_requested is True
    assert harness.probes == []


def test_abort_does_not_ask_for_a_restart() -> None:
    harness = Harness(SOURCE, step_first=True).start()
    harness.paused()
    harness.answer(harness.send("abort"))
    harness.join()
    assert harness.controller.restart_requested is False
