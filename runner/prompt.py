"""The pdb-like prompt of ``unotest e2e --debug`` on a terminal.

It only ever feeds the same queue as ``commands.jsonl`` (so what a person types is
acknowledged in steps.jsonl like any other command) and shows what happens. Every
command is a ``do_*`` method whose docstring is its help line, as in pdb. It runs
only when stdin is a TTY: without one, nothing ever blocks on stdin.
"""

from __future__ import annotations

import contextlib
import itertools
import re
import sys
import threading
from typing import Any, TextIO

from dsl.interpreter import Step
from runner.debugger import Command, DebugController

__all__ = ["TerminalPrompt"]

PROMPT = "(unotest) "
_POSITION = re.compile(
    r"\s*(?:(?P<file>[^\s:]*[^\s:\d][^\s:]*):)?(?P<line>\d+)(?::(?P<col>\d+))?\s*\Z"
)


class TerminalPrompt:
    def __init__(
        self,
        controller: DebugController,
        render: Any,
        stdin: TextIO = sys.stdin,
        stdout: TextIO = sys.stdout,
        mask: Any = lambda text: text,
    ) -> None:
        self.controller = controller
        self.render = render
        self.stdin = stdin
        self.out = stdout
        self.mask = mask
        self._ids = itertools.count(1)
        self._pause_lock = threading.Lock()
        self._thread = threading.Thread(target=self._read, name="unotest-prompt", daemon=True)

    def start(self) -> None:
        self.controller.listeners.append(self)
        self._thread.start()

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

    # --- listener --------------------------------------------------------------------

    def paused(self, step: Step, reason: str) -> None:
        where = f"{step.file}:{step.line}:{step.col}"
        self.say(f"\n⏸  paused ({reason}) at {where}")
        self._list(step, 2)
        if reason == "failure":
            self.say("   the step failed: r(etry), k (skip), c or s ends the run as failed")
        self._prompt()

    def resumed(self, command: Command) -> None:
        if command.source == "file":
            self.say(f"\n▶  resumed by {command.cmd} (from commands.jsonl)")

    def evaluated(self, command: Command, event: dict[str, Any]) -> None:
        if command.source == "terminal":
            self.say(event["value"] if event.get("ok") else f"error: {event.get('error')}")
            self._prompt()

    def applied(self, command: Command) -> None:
        if command.source == "terminal" and command.cmd in ("set-bp", "clear-bp"):
            col = f":{command.col}" if command.col is not None else ""
            self.say(f"{command.cmd} {command.line}{col}")
            if self.controller.current_pause is not None:
                self._prompt()

    def rejected(self, command: Command, reason: str) -> None:
        if command.source == "terminal":
            self.say(f"rejected: {reason}")
            if self.controller.current_pause is not None:
                self._prompt()

    # --- input -----------------------------------------------------------------------

    def _read(self) -> None:
        while True:
            try:
                line = self.stdin.readline()
            except (OSError, ValueError):
                return
            if not line:
                return
            self.handle(line.rstrip("\n"))

    def handle(self, line: str) -> None:
        text = line.strip()
        if not text:
            if self.controller.current_pause is not None:
                self._prompt()
            return
        if text.startswith("!"):
            self._send("eval", expr=text[1:].strip())
            return
        word, _, rest = text.partition(" ")
        name = _ALIASES.get(word, word)
        method = getattr(self, f"do_{name}", None)
        if (
            method is not None
            and (word in _ALIASES or word in _COMMANDS)
            and not _is_dsl(name, rest.strip())
        ):
            method(rest.strip())
        else:
            self._send("eval", expr=text)

    def _send(self, cmd: str, **fields: Any) -> None:
        data = {"id": f"terminal-{next(self._ids)}", "cmd": cmd, **fields}
        self.controller.submit_data(data, source="terminal")

    # --- commands (the docstring is the help line) ---------------------------------------

    def do_step(self, arg: str) -> None:
        """s(tep): run the next statement, stepping into helper calls"""
        self._send("step")

    def do_next(self, arg: str) -> None:
        """n(ext): run the next statement, helper calls included (step over)"""
        self._send("step-over")

    def do_out(self, arg: str) -> None:
        """o(ut): run until the current helper returns (step out)"""
        self._send("step-out")

    def do_continue(self, arg: str) -> None:
        """c(ontinue): run to the next breakpoint"""
        self._send("continue")

    def do_retry(self, arg: str) -> None:
        """r(etry): at a failure pause, run the failed statement again"""
        self._send("retry")

    def do_skip(self, arg: str) -> None:
        """k / skip: do not run the current (or failed) statement; pause at the next"""
        self._send("skip")

    def do_break(self, arg: str) -> None:
        """b L[:C] or b FILE:L[:C]: set a breakpoint (b alone lists them)"""
        if not arg:
            active = self.controller.breakpoints.active()
            self.say(
                "\n".join(f"{f}: {', '.join(p)}" for f, p in active.items()) or "no breakpoints"
            )
            self._prompt()
            return
        self._position_command("set-bp", arg)

    def do_clear(self, arg: str) -> None:
        """cl L[:C] or cl FILE:L[:C]: clear a breakpoint"""
        self._position_command("clear-bp", arg)

    def _position_command(self, cmd: str, arg: str) -> None:
        match = _POSITION.match(arg)
        if match is None:
            self.say(f"usage: {'b' if cmd == 'set-bp' else 'cl'} LINE[:COL] or FILE:LINE[:COL]")
            self._prompt()
            return
        fields: dict[str, Any] = {"line": int(match["line"])}
        if match["col"] is not None:
            fields["col"] = int(match["col"])
        if match["file"]:
            fields["file"] = match["file"]
        self._send(cmd, **fields)

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

    def do_abort(self, arg: str) -> None:
        """a(bort): end the run now (outcome aborted)"""
        self._send("abort")

    def do_help(self, arg: str) -> None:
        """h(elp): this list; any other line (or one starting with !) runs as DSL here"""
        for name in _COMMANDS:
            doc = getattr(self, f"do_{name}").__doc__ or ""
            self.say(f"  {doc}")
        self.say('  anything else: evaluated in the paused scope, e.g. x, click("Save"), n = 3')
        self._prompt()

    def _list(self, step: Step, around: int) -> None:
        lines = step.program.source.splitlines()
        first = max(step.line - around, 1)
        last = min(step.line + around, len(lines))
        for number in range(first, last + 1):
            marker = "->" if number == step.line else "  "
            self.say(f"{number:>4} {marker} {lines[number - 1]}")


_TAKES_ARGUMENT = ("break", "clear", "help")
_OPERATOR_START = tuple("=+-*/%<>!&|?.([,")


def _is_dsl(name: str, rest: str) -> bool:
    """Whether a line that starts with a command word is really DSL (``n = 3``, ``c + 1``).

    Short command letters are also likely variable names, and the help line promises
    that such a line is evaluated; pdb makes the same distinction. A command without
    an argument followed by anything, or one whose argument starts like an operator,
    is DSL.
    """
    if not rest:
        return False
    if name not in _TAKES_ARGUMENT:
        return True
    return rest.startswith(_OPERATOR_START)


_COMMANDS = (
    "step",
    "next",
    "out",
    "continue",
    "retry",
    "skip",
    "break",
    "clear",
    "vars",
    "where",
    "list",
    "abort",
    "help",
)
_ALIASES = {
    "s": "step",
    "n": "next",
    "o": "out",
    "c": "continue",
    "cont": "continue",
    "r": "retry",
    "k": "skip",
    "b": "break",
    "cl": "clear",
    "v": "vars",
    "w": "where",
    "l": "list",
    "a": "abort",
    "h": "help",
    "?": "help",
}
