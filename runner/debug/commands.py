"""The debugger's command vocabulary: one table for every way of driving a run.

A command reaches the runner as one ``commands.jsonl`` line (``DbgCommand``) whoever
sent it: the viewer, ``unotest dbg``, an agent through MCP, or a person at the terminal
prompt. So the names, their aliases, what argument each takes, which resume a pause
(and with which protocol ``by``) and which are valid at any time are listed once, here,
and the debugger, the prompt, ``dbg`` and MCP all read them from this table: a command
or an alias added here exists everywhere at once.

Two parsers share the table: :func:`parse_command` checks a JSON line's fields (its
errors go to ``command:rejected``), :func:`parse_words` turns what a person typed
(``n``, ``b 12:4``, ``eval x + 1``) into such a line (its errors are usage errors).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, get_args

from runner import protocol
from runner.errors import CommandError, UsageError
from runner.project.positions import is_col, is_line, parse_position

__all__ = [
    "ANYTIME",
    "AT_PAUSE",
    "COMMANDS",
    "NAMES",
    "PROTOCOL_NAMES",
    "RESULT_WITHIN",
    "RESUMING",
    "WITH_RESULT",
    "Command",
    "CommandSpec",
    "lookup",
    "method_of",
    "parse_command",
    "parse_words",
    "unknown_command",
]

By = Literal["step", "continue"]
Argument = Literal["position", "expr", "target"]
POSITION_USAGE = "LINE[:COL] or FILE:LINE[:COL]"


@dataclass(frozen=True, slots=True)
class CommandSpec:
    name: str
    """The protocol's ``cmd``."""
    aliases: tuple[str, ...]
    usage: str
    """How help texts show it: pdb's ``s(tep)``, the short form's letters outside."""
    argument: Argument | None = None
    resumes: By | None = None
    """The ``by`` of the ``resumed`` event it writes; None: it leaves a pause paused."""
    anytime: bool = False
    """Applied at once, paused or not; the others need a pause and wait for it."""
    result: bool = False
    """Answered by a ``command:result`` after its ``command:applied`` (senders wait for it)."""
    result_within: float | None = None
    """How long a sender waits for that ``command:result`` once the command is applied,
    when it may come later than the acknowledgement (a restart's comes once the old run
    has ended and the new one exists); ``None``: within the acknowledgement's time."""

    @property
    def method(self) -> str:
        return method_of(self.name)


COMMANDS: tuple[CommandSpec, ...] = (
    CommandSpec("step", ("s",), "s(tep)", resumes="step"),
    CommandSpec("step-over", ("next", "n"), "n(ext) / step-over", resumes="step"),
    CommandSpec("step-out", ("out", "o"), "o(ut) / step-out", resumes="step"),
    CommandSpec("continue", ("c", "cont"), "c(ontinue)", resumes="continue"),
    CommandSpec("retry", ("r",), "r(etry)", resumes="continue"),
    CommandSpec("skip", ("k",), "k / skip", resumes="step"),
    # A loop typed at a pause runs up to dsl.interpreter.EVAL_LIMIT_S before its answer.
    CommandSpec("eval", (), "eval EXPR", argument="expr", result=True, result_within=15.0),
    CommandSpec("reload", ("e",), "e / reload", result=True),
    # The live page at a pause: the best target for the element at a point (CSS pixels
    # of the viewport) or named by its accessible name (and role).
    CommandSpec(
        "pick", (), "pick X Y | pick NAME", argument="target", result=True, result_within=15.0
    ),
    CommandSpec("pause", (), "pause", anytime=True),
    CommandSpec(
        "set-bp",
        ("break", "b"),
        "b(reak) / set-bp [FILE:]LINE[:COL]",
        argument="position",
        anytime=True,
    ),
    CommandSpec(
        "clear-bp",
        ("clear", "cl"),
        "cl(ear) / clear-bp [FILE:]LINE[:COL]",
        argument="position",
        anytime=True,
    ),
    CommandSpec("abort", ("a",), "a(bort)", anytime=True),
    CommandSpec("restart", (), "restart", anytime=True, result=True, result_within=60.0),
)

NAMES: tuple[str, ...] = tuple(spec.name for spec in COMMANDS)
PROTOCOL_NAMES: tuple[str, ...] = get_args(protocol.DbgCommandKind)
"""The names 0.5.0 knows; the rest of :data:`NAMES` are our additive commands."""
RESUMING: Mapping[str, By] = {spec.name: spec.resumes for spec in COMMANDS if spec.resumes}
AT_PAUSE: tuple[str, ...] = tuple(spec.name for spec in COMMANDS if not spec.anytime)
ANYTIME: tuple[str, ...] = tuple(spec.name for spec in COMMANDS if spec.anytime)
WITH_RESULT: tuple[str, ...] = tuple(spec.name for spec in COMMANDS if spec.result)
RESULT_WITHIN: Mapping[str, float] = {
    spec.name: spec.result_within for spec in COMMANDS if spec.result_within is not None
}
_BY_WORD: Mapping[str, CommandSpec] = {
    word: spec for spec in COMMANDS for word in (spec.name, *spec.aliases)
}


def method_of(name: str) -> str:
    """The debugger's ``do_*`` method for a command, as pdb finds ``do_<name>``."""
    return "do_" + name.replace("-", "_")


def lookup(word: str) -> CommandSpec | None:
    """The command a name or an alias stands for."""
    return _BY_WORD.get(word)


def unknown_command(cmd: object) -> str:
    return f"unknown command {cmd!r} (known: {', '.join(NAMES)})"


@dataclass(frozen=True)
class Command:
    """One checked command; ``source`` tells the prompt which ones its user typed."""

    cmd: str
    id: str
    line: int | None = None
    col: int | None = None
    file: str | None = None
    expr: str | None = None
    source: str = "file"
    frame: int | None = None
    """``eval``'s frame: an index of the call stack, outermost 0 (None: the innermost)."""
    point: tuple[float, float] | None = None
    """``pick``'s point, CSS pixels of the viewport from its top left."""
    name: str | None = None
    """``pick``'s accessible name (with ``role``, or a smart target's text)."""
    role: str | None = None


def parse_command(data: Mapping[str, object], ident: str, source: str = "file") -> Command:
    """The fields of a ``DbgCommand`` line, checked against the table."""
    cmd = data.get("cmd")
    spec = lookup(cmd) if isinstance(cmd, str) else None
    if spec is None or spec.name != cmd:
        raise CommandError(unknown_command(cmd))
    line, col, file, expr = (data.get(key) for key in ("line", "col", "file", "expr"))
    if spec.argument == "position":
        if not is_line(line):
            raise CommandError(f"{cmd} needs a line number (1-based)")
        if col is not None and not is_col(col):
            raise CommandError(f"{cmd} needs a column (0-based) or none")
        if file is not None and not isinstance(file, str):
            raise CommandError(f"{cmd}: file must be a string")
    if spec.argument == "expr" and (not isinstance(expr, str) or not expr.strip()):
        raise CommandError("eval needs an expr: a DSL expression or statement")
    frame = data.get("frame")
    if frame is not None and (spec.argument != "expr" or not is_col(frame)):
        raise CommandError("frame goes with eval: a call-stack index, 0 the test function")
    point, name, role = _pick_fields(data) if spec.argument == "target" else (None, None, None)
    return Command(
        spec.name,
        ident,
        line if isinstance(line, int) else None,
        col if isinstance(col, int) else None,
        file if isinstance(file, str) else None,
        expr if isinstance(expr, str) else None,
        source,
        frame if isinstance(frame, int) else None,
        point,
        name,
        role,
    )


def _pick_fields(
    data: Mapping[str, object],
) -> tuple[tuple[float, float] | None, str | None, str | None]:
    """``pick``'s ``x`` and ``y``, or its ``name`` (and ``role``)."""
    x, y, name, role = (data.get(key) for key in ("x", "y", "name", "role"))
    if x is not None or y is not None:
        if not (_coordinate(x) and _coordinate(y)):
            raise CommandError("pick needs x and y: CSS pixels from the page's top left, 0 or more")
        assert isinstance(x, int | float) and isinstance(y, int | float)
        return (float(x), float(y)), None, None
    if not isinstance(name, str) or not name.strip():
        raise CommandError("pick needs x and y, or a name (an element's text or accessible name)")
    if role is not None and (not isinstance(role, str) or not role.strip()):
        raise CommandError("pick's role must be an ARIA role such as button, or left out")
    return None, name, role if isinstance(role, str) else None


def _coordinate(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value < 1e6


def parse_words(words: Sequence[str]) -> dict[str, str | int | float]:
    """``step``, ``n``, ``break 12:4``, ``cl _helpers/auth:3``, ``eval x + 1`` → the
    fields of a ``DbgCommand`` (the sender adds the id)."""
    if not words:
        raise UsageError(f"which command? {', '.join(spec.usage for spec in COMMANDS)}")
    head, rest = words[0], " ".join(words[1:]).strip()
    spec = lookup(head)
    if spec is None or (spec.argument is None and rest):
        raise UsageError(f"unknown debugger command '{' '.join(words)}'")
    if spec.argument == "position":
        position = parse_position(rest)
        if position is None:
            raise UsageError(f"{head} needs a position: {POSITION_USAGE}")
        # A line alone is column 0, which lands on the line's first statement: the
        # protocol's set-bp / clear-bp require a col.
        col = position.col if position.col is not None else 0
        command: dict[str, str | int | float] = {
            "cmd": spec.name,
            "line": position.line,
            "col": col,
        }
        if position.file is not None:
            command["file"] = position.file
        return command
    if spec.argument == "expr":
        if not rest:
            raise UsageError(f"{head} needs an expression, e.g. {head} x + 1")
        return {"cmd": spec.name, "expr": rest}
    if spec.argument == "target":
        numbers = rest.split()
        if len(numbers) == 2 and all(n.replace(".", "", 1).isdigit() for n in numbers):
            return {"cmd": spec.name, "x": float(numbers[0]), "y": float(numbers[1])}
        if not rest:
            raise UsageError(f"{head} needs a point or a name, e.g. {head} 120 48 or {head} Save")
        return {"cmd": spec.name, "name": rest}
    return {"cmd": spec.name}
