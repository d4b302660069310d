"""The pdb-like prompt of ``unotest e2e --debug`` on a terminal.

It only ever feeds the same queue as ``commands.jsonl`` (so what a person types is
acknowledged in steps.jsonl like any other command) and shows what happens. The words
it knows are the debugger's vocabulary (:mod:`runner.debug.commands`), whose help is
the docstring of the debugger's ``do_*`` method, plus a few that only look at the pause
(``vars``, ``where``, ``list``, ``help``): those are ``do_*`` methods here, as in pdb.
It runs only when stdin is a TTY: without one, nothing ever blocks on stdin, and
:class:`PauseAnnouncer` says in one line on stderr that the run waits and how to resume
it, so that a CI log or an agent reading the output learns it.
"""

from __future__ import annotations

import contextlib
import itertools
import sys
import threading
from collections.abc import Callable
from typing import TextIO

from dsl.errors import ScriptError
from dsl.interpreter import Step
from dsl.values import Value
from runner import protocol
from runner.debug.commands import COMMANDS, Command, CommandSpec, lookup, parse_words
from runner.debug.controller import DebugController, DebugListener, PauseReason, format_duration
from runner.errors import UsageError
from runner.text import did_you_mean

__all__ = ["PauseAnnouncer", "TerminalPrompt"]

PROMPT = "(unotest) "
_LOCAL = {
    "vars": "vars",
    "v": "vars",
    "where": "where",
    "w": "where",
    "list": "list",
    "l": "list",
    "help": "help",
    "h": "help",
    "?": "help",
}
"""The prompt's own words: they read the pause and send nothing."""
_OPERATOR_START = tuple("=+-*/%<>!&|?.([,")


class PauseAnnouncer(DebugListener):
    """Without a terminal prompt, each pause is one line through ``say`` (stderr):
    where, why, the run id and the two ways to resume, and the idle timeout if any."""

    def __init__(
        self, run_id: str, say: Callable[[str], None], idle_timeout_s: float | None
    ) -> None:
        self.run_id = run_id
        self.say = say
        self.idle_timeout_s = idle_timeout_s

    def paused(self, step: Step, reason: PauseReason, error: ScriptError | None = None) -> None:
        where = f"{step.file}:{step.line}:{step.col}"
        idle = self.idle_timeout_s
        limit = f" (aborted after {format_duration(idle)} without a command)" if idle else ""
        failed = f" ({_first_line(error)})" if error is not None else ""
        # A listener must not raise: stderr gone away does not stop the run.
        dbg = f"unotest dbg {self.run_id}"
        if reason == "failure":
            # continue would only end the run as failed: say what else there is.
            resume = (
                f"the step failed: {dbg} retry (after fixing the page with eval), {dbg} "
                f"skip, or {dbg} continue to end the run as failed, or the viewer"
            )
        else:
            resume = f"to resume: {dbg} continue, or the viewer"
        with contextlib.suppress(OSError, ValueError):
            self.say(f"paused ({reason}) at {where}{failed} in run {self.run_id}; {resume}{limit}")


_RUNNING = object()
"""Where a Ctrl-C came while no pause was on: the run was running."""


class TerminalPrompt(DebugListener):
    def __init__(
        self,
        controller: DebugController,
        render: Callable[[Value], str],
        stdin: TextIO = sys.stdin,
        stdout: TextIO = sys.stdout,
        mask: Callable[[str], str] = lambda text: text,
    ) -> None:
        self.controller = controller
        self.render = render
        self.stdin = stdin
        self.out = stdout
        self.mask = mask
        self._ids = itertools.count(1)
        self._thread = threading.Thread(target=self._read, name="unotest-prompt", daemon=True)
        self._interrupted_at: object = None
        """The pause (or ``_RUNNING``) the last Ctrl-C was answered at: a second one
        there ends the run."""
        self.reading = False
        """True while a person can type here (False once stdin ended)."""

    def start(self) -> None:
        self.controller.listeners.append(self)
        self.reading = True
        self._thread.start()

    def interrupted(self) -> bool:
        """Ctrl-C, as pdb and node inspect take it: while the run runs, it pauses before
        the next statement; at a pause, the typed line is dropped (the terminal did
        that) and the run stays paused. A second Ctrl-C at the same place ends the run:
        False says so (the caller aborts as without a prompt)."""
        if not self.reading:
            return False
        pause = self.controller.current_pause
        here: object = pause if pause is not None else _RUNNING
        if self._interrupted_at is here:
            return False
        self._interrupted_at = here
        if pause is None:
            self.say("\nCtrl-C: pausing before the next statement (press it again to end the run)")
            self._send({"cmd": "pause"})
        else:
            self.say(
                "\nCtrl-C: the run stays paused; to end it press Ctrl-C again, "
                "type a(bort) or press Ctrl-D"
            )
            self._prompt()
        return True

    def say(self, text: str = "") -> None:
        # The listener methods run in the scenario thread, inside the debugger: a
        # terminal that went away (EIO after a hang-up) must not break the run,
        # which commands.jsonl can still drive.
        with contextlib.suppress(OSError, ValueError):
            print(self.mask(text), file=self.out, flush=True)

    def _prompt(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.out.write(PROMPT)
            self.out.flush()

    def _prompt_if_paused(self) -> None:
        if self.controller.current_pause is not None:
            self._prompt()

    # --- listener --------------------------------------------------------------------

    def paused(self, step: Step, reason: PauseReason, error: ScriptError | None = None) -> None:
        if self._interrupted_at is _RUNNING:
            self._interrupted_at = None  # the Ctrl-C's pause came: a new one is a first
        where = f"{step.file}:{step.line}:{step.col}"
        self.say(f"\n⏸  paused ({reason}) at {where}")
        if error is not None:
            self.say("   " + f"{error.name}: {error.message}".replace("\n", "\n   "))
        self._list(step, 2)
        if reason == "failure":
            self.say("   the step failed: r(etry), k (skip), c or s ends the run as failed")
            self.say("   fixed the file? e (reload), then r(etry) runs the edited statement")
        self._prompt()

    def resumed(self, command: Command) -> None:
        if command.source == "file":
            self.say(f"\n▶  resumed by {command.cmd} (from commands.jsonl)")

    def evaluated(self, command: Command, event: protocol.CommandResultEvent) -> None:
        if command.source == "terminal":
            self.say(event.get("value", "") if event["ok"] else f"error: {event.get('error')}")
            pause = self.controller.current_pause
            if command.cmd == "reload" and pause is not None:
                self._list(pause.step, 2)  # where the run now stands, in the new code
            self._prompt()

    def applied(self, command: Command) -> None:
        if command.source == "terminal" and command.cmd in ("set-bp", "clear-bp"):
            col = f":{command.col}" if command.col else ""  # 0: the line's first statement
            file = f"{command.file}:" if command.file else ""
            self.say(f"{command.cmd} {file}{command.line}{col}")
            self._prompt_if_paused()

    def rejected(self, command: Command, reason: str) -> None:
        if command.source == "terminal":
            self.say(f"rejected: {reason}")
            self._prompt_if_paused()

    def refused(self, reason: str, source: str) -> None:
        if source == "terminal":
            self.say(f"rejected: {reason}")
            self._prompt_if_paused()

    # --- input -----------------------------------------------------------------------

    def _read(self) -> None:
        while True:
            try:
                line = self.stdin.readline()
            except (OSError, ValueError):
                return
            if not line:
                # Ctrl-D: nobody is left to resume a pause from here, and a run paused
                # with a terminal has no idle timeout; as pdb's EOF quits, it aborts.
                self.reading = False
                self.say("\nEOF: aborting the run")
                self._send({"cmd": "abort"})
                return
            self.handle(line.rstrip("\n"))

    def handle(self, line: str) -> None:
        """One typed line: a command word (with its argument), or DSL to evaluate."""
        text = line.strip()
        if not text:
            self._prompt_if_paused()
            return
        if text.startswith("!"):
            self._send({"cmd": "eval", "expr": text[1:].strip()})
            return
        word, _, rest = text.partition(" ")
        rest = rest.strip()
        if self._pdb_word(word, rest):
            return
        local = _LOCAL.get(word)
        spec = lookup(word)
        if local is not None and not _is_dsl(local == "help", rest):
            getattr(self, f"do_{local}")(rest)
        elif spec is not None and not _is_dsl(spec.argument is not None, rest):
            self._command(spec, word, rest)
        else:
            self._send({"cmd": "eval", "expr": text})

    def _visible(self, name: str) -> bool:
        """Whether ``name`` means something at the current pause (a variable, a helper
        const or function, a built-in): it wins over a word a pdb user would type."""
        pause = self.controller.current_pause
        return pause is not None and pause.step.defines(name)

    def _pdb_word(self, word: str, rest: str) -> bool:
        """What a pdb user types out of habit, answered in our words; True if handled.

        ``p x`` / ``pp x`` print ``x``; ``q``, ``quit`` and ``exit`` abort; ``a`` alone,
        when a variable is called ``a``, asks rather than ending the run; a lone word
        that is no variable but close to a command says which one was meant (not a
        ReferenceError from the DSL)."""
        if word in ("p", "pp") and rest and not _is_dsl(True, rest) and not self._visible(word):
            self._send({"cmd": "eval", "expr": rest})
            return True
        if rest:
            return False
        if word == "a" and self._visible("a"):
            # The one command that cannot be undone, typed to look at a variable.
            self.say("'a' is also a variable here: type abort to end the run, or !a to see it")
            self._prompt()
            return True
        if self._visible(word):
            return False
        if word in ("q", "quit", "exit"):
            self._send({"cmd": "abort"})
            return True
        if lookup(word) is not None or word in _LOCAL or not word.isidentifier():
            return False
        words = [w for spec in COMMANDS for w in (spec.name, *spec.aliases) if len(w) > 1]
        hint = did_you_mean(word, [*words, *(w for w in _LOCAL if len(w) > 1)])
        if not hint:
            return False
        self.say(f"unknown command '{word}'{hint}; 'help' lists the commands")
        self._prompt()
        return True

    def _command(self, spec: CommandSpec, word: str, rest: str) -> None:
        if spec.name == "set-bp" and not rest:
            self._show_breakpoints()
            return
        try:
            command = parse_words([word, rest] if rest else [word])
        except UsageError as err:
            self.say(str(err))
            self._prompt()
            return
        self._send(command)

    def _send(self, command: dict[str, str | int | float]) -> None:
        data = {"id": f"terminal-{next(self._ids)}", **command}
        self.controller.submit_data(data, source="terminal")

    def _show_breakpoints(self) -> None:
        active = self.controller.breakpoints.active()
        self.say("\n".join(f"{f}: {', '.join(p)}" for f, p in active.items()) or "no breakpoints")
        self._prompt()

    # --- the prompt's own commands (the docstring is the help line) -----------------------

    def do_vars(self, arg: str) -> None:
        """v(ars): the variables visible here"""
        pause = self.controller.current_pause
        if pause is None:
            self.say("not paused")
            return
        variables = pause.step.variables()
        for name, value in variables.items():
            self.say(f"  {name} = {self.render(value)}")
        if not variables:
            self.say("  (no variables)")
        self._prompt()

    def do_where(self, arg: str) -> None:
        """w(here): the call stack, outermost first"""
        pause = self.controller.current_pause
        if pause is None:
            self.say("not paused")
            return
        for frame in pause.step.frames():
            self.say(f"  {frame.fn}  {frame.file}:{frame.line}")
        self._prompt()

    def do_list(self, arg: str) -> None:
        """l(ist): the source around the current statement"""
        pause = self.controller.current_pause
        if pause is None:
            self.say("not paused")
            return
        self._list(pause.step, 5)
        self._prompt()

    def do_help(self, arg: str) -> None:
        """h(elp): this list; any other line (or one starting with !) runs as DSL here"""
        for spec in COMMANDS:
            doc = getattr(self.controller, spec.method).__doc__ or ""
            self.say(f"  {spec.usage}: {' '.join(doc.replace('``', '').split())}")
        self.say("  b alone: the breakpoints set now")
        for name in ("vars", "where", "list", "help"):
            self.say(f"  {getattr(self, f'do_{name}').__doc__}")
        self.say('  anything else: evaluated in the paused scope, e.g. x, click("Save"), n = 3')
        self._prompt()

    def _list(self, step: Step, around: int) -> None:
        lines = step.program.source.splitlines()
        first = max(step.line - around, 1)
        last = min(step.line + around, len(lines))
        for number in range(first, last + 1):
            marker = "->" if number == step.line else "  "
            self.say(f"{number:>4} {marker} {lines[number - 1]}")


def _first_line(error: ScriptError) -> str:
    """``Name: message`` on one line, for a one-line announcement."""
    lines = error.message.strip().splitlines()
    return f"{error.name}: {lines[0] if lines else ''}".rstrip(": ")


def _is_dsl(takes_argument: bool, rest: str) -> bool:
    """Whether a line that starts with a command word is really DSL (``n = 3``, ``c + 1``).

    Short command letters are also likely variable names, and the help line promises
    that such a line is evaluated; pdb makes the same distinction. A command without
    an argument followed by anything, or one whose argument starts like an operator,
    is DSL.
    """
    if not rest:
        return False
    if not takes_argument:
        return True
    return rest.startswith(_OPERATOR_START)
