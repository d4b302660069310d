"""The step debugger: where to stop, and what the people driving it asked for.

As in CPython's ``bdb``, deciding *whether to stop here* (breakpoints, stepping, a
pause request) is kept apart from *what the user wants* once stopped (the commands).
Stepping state is one small record: ``step`` stops anywhere, ``step-over`` at a depth
no deeper than where it was asked, ``step-out`` only shallower.

Commands come from every source into one queue: lines of ``commands.jsonl`` (the
viewer, ``unotest dbg``, an agent over MCP) and the terminal prompt. Commands that
make sense at any time (``pause``, ``set-bp``, ``clear-bp``, ``abort``) are applied at
once by the thread that read them; the others wait for the paused scenario thread,
which applies them one by one. Every command is acknowledged in steps.jsonl by
``command:applied`` or ``command:rejected`` (and ``command:result`` for ``eval``).
"""

from __future__ import annotations

import json
import queue
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from dsl import ast
from dsl.errors import DslError, Interrupt, ScenarioSyntaxError, ScriptError
from dsl.interpreter import Directive, Step
from runner.errors import CommandError, ConfigError

__all__ = [
    "Breakpoints",
    "Command",
    "DebugController",
    "load_breakpoints_file",
    "statement_starts",
]

PauseReason = Literal["breakpoint", "step", "failure"]
STATE_OF_REASON = {
    "breakpoint": "paused-breakpoint",
    "step": "paused-step",
    "failure": "paused-failure",
}
RESUMING = ("step", "step-over", "step-out", "continue", "retry", "skip")
AT_PAUSE = (*RESUMING, "eval")
ANYTIME = ("pause", "set-bp", "clear-bp", "abort")
KNOWN = (*AT_PAUSE, *ANYTIME)
MAX_COMMAND_BYTES = 1024 * 1024


@dataclass(frozen=True)
class Command:
    cmd: str
    id: str | None = None
    line: int | None = None
    col: int | None = None
    file: str | None = None
    expr: str | None = None
    source: str = "file"




def statement_starts(program: ast.Program) -> list[tuple[int, int]]:
    """Every step position of a file, in source order (where a breakpoint can hold)."""
    found: list[tuple[int, int]] = []

    def block(body: Iterable[ast.Stmt]) -> None:
        for stmt in body:
            found.append((stmt.span.line, stmt.span.col))
            if isinstance(stmt, ast.If):
                block(stmt.consequent.body)
                alternate = stmt.alternate
                while isinstance(alternate, ast.If):
                    found.append((alternate.span.line, alternate.span.col))
                    block(alternate.consequent.body)
                    alternate = alternate.alternate
                if alternate is not None:
                    block(alternate.body)
            elif isinstance(stmt, ast.ForOf | ast.While):
                block(stmt.body.body)
            elif isinstance(stmt, ast.Try):
                block(stmt.block.body)
                if stmt.handler is not None:
                    block(stmt.handler.body)
                if stmt.finalizer is not None:
                    block(stmt.finalizer.body)

    for fn in program.functions:
        block(fn.body.body)
    return sorted(set(found))


class Breakpoints:
    """Active breakpoints per file (project-relative path); safe from any thread."""

    def __init__(self, starts: Mapping[str, list[tuple[int, int]]]) -> None:
        self._lock = threading.Lock()
        self._by_file: dict[str, set[tuple[int, int]]] = {}
        self.starts = starts

    def resolve(self, file: str, line: int, col: int | None) -> tuple[tuple[int, int], str | None]:
        """The position to stop at and, when it matches no statement, a note saying so."""
        starts = self.starts.get(file, [])
        if col is None:
            on_line = [s for s in starts if s[0] == line]
            if on_line:
                return on_line[0], None
            col = 0
        position = (line, col)
        if position in starts or not starts:
            return position, None if starts else f"{file} has no statements"
        nearest = min(starts, key=lambda s: (abs(s[0] - line), abs(s[1] - col)))
        return position, (
            f"breakpoint {file}:{line}:{col} matches no statement start; the nearest is "
            f"{nearest[0]}:{nearest[1]} (kept: it may match after an edit)"
        )

    def add(self, file: str, position: tuple[int, int]) -> None:
        with self._lock:
            self._by_file.setdefault(file, set()).add(position)

    def remove(self, file: str, position: tuple[int, int]) -> bool:
        with self._lock:
            positions = self._by_file.get(file, set())
            if position in positions:
                positions.discard(position)
                return True
            return False

    def hit(self, file: str, line: int, col: int) -> bool:
        positions = self._by_file.get(file)
        return positions is not None and (line, col) in positions

    def active(self) -> dict[str, list[str]]:
        with self._lock:
            return {
                file: [f"{line}:{col}" for line, col in sorted(positions)]
                for file, positions in sorted(self._by_file.items())
                if positions
            }


def load_breakpoints_file(path: Path) -> dict[str, list[tuple[int, int]]]:
    """``unotest/.debugger.json`` (BreakpointsFile): key → positions; absent file → {}."""
    if not path.exists():
        return {}
    where = "unotest/.debugger.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"{where}: cannot read it ({err})") from None
    except json.JSONDecodeError as err:
        raise ConfigError(f"{where}:{err.lineno}:{err.colno}: invalid JSON ({err.msg})") from None
    except RecursionError:
        raise ConfigError(f"{where}: invalid JSON (nested too deeply)") from None
    except ValueError as err:  # int() of a number with more than 4,300 digits
        raise ConfigError(f"{where}: invalid JSON ({str(err).split(':')[0]})") from None
    if (
        not isinstance(data, dict)
        or data.get("version") != 1
        or not isinstance(data.get("scenarios"), dict)
    ):
        raise ConfigError(f'{where}: expected {{"version": 1, "scenarios": {{...}}}}')
    result: dict[str, list[tuple[int, int]]] = {}
    for key, entries in data["scenarios"].items():
        if not isinstance(entries, list):
            raise ConfigError(
                f"{where}: scenarios[{json.dumps(key)}] must be a list of {{line, col}}"
            )
        positions = []
        for entry in entries:
            line = entry.get("line") if isinstance(entry, dict) else None
            col = entry.get("col") if isinstance(entry, dict) else None
            if not (isinstance(line, int) and isinstance(col, int)) or not (
                _is_int(line) and _is_int(col) and line >= 1 and col >= 0
            ):
                raise ConfigError(
                    f"{where}: scenarios[{json.dumps(key)}] holds {json.dumps(entry)}; "
                    'each breakpoint is {"line": N (1-based), "col": N (0-based)}'
                )
            positions.append((line, col))
        result[str(key)] = positions
    return result


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass
class _Pause:
    step: Step
    reason: PauseReason


@dataclass
class DebugController:
    """Decides where to stop, applies commands, and blocks the scenario while paused.

    ``emit`` appends an event to steps.jsonl; ``write_state`` rewrites runtime.json
    with a state and the step it is at; ``evaluate_render`` renders an eval result.
    """

    emit: Callable[[dict[str, Any]], None]
    write_state: Callable[[str, Step | None], None]
    interrupt: Callable[[str], None]
    render: Callable[[Any], str]
    breakpoints: Breakpoints
    file_keys: Mapping[str, str]
    warn: Callable[[str], None] = lambda text: print(f"unotest: {text}", file=sys.stderr)
    step_first: bool = False
    listeners: list[Any] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._queue: queue.Queue[Command | None] = queue.Queue()
        self._seen: set[str] = set()
        self._pause_requested = self.step_first
        self._mode: str | None = None
        self._stop_depth = 0
        self._paused: _Pause | None = None
        self._aborted = False
        # The errors themselves, not their ids: a freed error's id can be reused.
        self._reported_failures: list[ScriptError] = []
        self.paused_seconds = 0.0
        self._pause_started: float | None = None

    # --- commands, from any thread --------------------------------------------------

    def submit_line(self, raw: bytes) -> None:
        """One line of commands.jsonl: parse, check, then apply or queue."""
        try:
            if len(raw) > MAX_COMMAND_BYTES:
                raise CommandError(f"command line of {len(raw):,} bytes is too long")
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, CommandError) as err:
            reason = (
                str(err) if isinstance(err, CommandError) else "malformed line: not a JSON object"
            )
            self.warn(f"commands.jsonl: {reason}")
            self.emit({"kind": "command:rejected", "reason": reason})
            return
        self.submit_data(data)

    def submit_data(self, data: object, source: str = "file") -> None:
        if not isinstance(data, dict):
            self.warn("commands.jsonl: a command is a JSON object with id and cmd")
            self.emit(
                {"kind": "command:rejected", "reason": "a command is a JSON object with id and cmd"}
            )
            return
        ident = data.get("id")
        cmd = data.get("cmd")
        echo: dict[str, Any] = {}
        if isinstance(ident, str) and ident:
            echo["id"] = ident
        if isinstance(cmd, str):
            echo["cmd"] = cmd
        try:
            if not isinstance(ident, str) or not ident:
                raise CommandError("every command needs a non-empty string id")
            with self._lock:
                if ident in self._seen:
                    self.warn(f"commands.jsonl: command id {ident!r} was already used; ignored")
                    return
                self._seen.add(ident)
            command = self._parse(data, ident, source)
        except CommandError as err:
            self.warn(f"commands.jsonl: {err}")
            self.emit({"kind": "command:rejected", **echo, "reason": str(err)})
            return
        self.submit(command)

    def _parse(self, data: Mapping[str, Any], ident: str, source: str) -> Command:
        cmd = data.get("cmd")
        if not isinstance(cmd, str) or cmd not in KNOWN:
            raise CommandError(f"unknown command {cmd!r} (known: {', '.join(KNOWN)})")
        line, col, file, expr = (
            data.get("line"),
            data.get("col"),
            data.get("file"),
            data.get("expr"),
        )
        if cmd in ("set-bp", "clear-bp"):
            if not isinstance(line, int) or not _is_int(line) or line < 1:
                raise CommandError(f"{cmd} needs a line number (1-based)")
            if col is not None and (not isinstance(col, int) or not _is_int(col) or col < 0):
                raise CommandError(f"{cmd} needs a column (0-based) or none")
            if file is not None and not isinstance(file, str):
                raise CommandError(f"{cmd}: file must be a string")
        if cmd == "eval" and (not isinstance(expr, str) or not expr.strip()):
            raise CommandError("eval needs an expr: a DSL expression or statement")
        return Command(cmd, ident, line, col, file, expr, source)

    def submit(self, command: Command) -> None:
        if command.cmd in ANYTIME:
            self._apply_anytime(command)
            return
        with self._lock:
            paused = self._paused
            if paused is None:
                self._reject(command, f"'{command.cmd}' needs a paused run; send 'pause' first")
                return
            self._queue.put(command)

    def _reject(self, command: Command, reason: str) -> None:
        event: dict[str, Any] = {"kind": "command:rejected", "cmd": command.cmd, "reason": reason}
        if command.id is not None:
            event["id"] = command.id
        self.emit(event)
        for listener in self.listeners:
            listener.rejected(command, reason)

    def _applied(self, command: Command) -> None:
        event: dict[str, Any] = {"kind": "command:applied", "cmd": command.cmd}
        if command.id is not None:
            event["id"] = command.id
        self.emit(event)

    def _apply_anytime(self, command: Command) -> None:
        if command.cmd == "pause":
            with self._lock:
                if self._paused is not None:
                    self._reject(command, "already paused")
                    return
                self._pause_requested = True
            self._applied(command)
        elif command.cmd == "abort":
            self._applied(command)
            with self._lock:
                self._aborted = True
            self.interrupt("aborted")
            self._queue.put(None)
        else:
            file = self._file_for(command.file)
            if file is None:
                self._reject(command, f"no scenario or helper file {command.file!r} in this run")
                return
            assert command.line is not None
            position, note = self.breakpoints.resolve(file, command.line, command.col)
            if command.cmd == "set-bp":
                self.breakpoints.add(file, position)
                if note:
                    self.warn(note)
            elif not self.breakpoints.remove(file, position):
                self._reject(command, f"no breakpoint at {file}:{position[0]}:{position[1]}")
                return
            paused = self._paused
            if paused is not None:  # runtime.json first: ``applied`` means it shows
                self.write_state(STATE_OF_REASON[paused.reason], paused.step)
            self._applied(command)
        for listener in self.listeners:
            listener.applied(command)

    def _file_for(self, given: str | None) -> str | None:
        if given is None:
            return self.file_keys.get("")
        if given in self.file_keys:
            return self.file_keys[given]
        if given in self.file_keys.values():
            return given
        return None

    # --- in the scenario thread ---------------------------------------------------------

    def before(self, step: Step) -> Directive:
        reason = self._stop_reason(step)
        if reason is None:
            return Directive.PROCEED
        resumed_by = self._pause(step, reason)
        if resumed_by == "skip":
            self.emit({"kind": "step:skipped", "line": step.line, "col": step.col})
            return Directive.SKIP
        return Directive.PROCEED

    def after_failure(self, step: Step, error: ScriptError) -> Directive:
        """A failed step: pause first (uncaught failures only, innermost only)."""
        if step.caught or any(e is error for e in self._reported_failures):
            return Directive.PROCEED
        self._reported_failures.append(error)
        resumed_by = self._pause(step, "failure")
        if resumed_by == "retry":
            self._reported_failures.remove(error)
            return Directive.RETRY
        if resumed_by == "skip":
            return Directive.SKIP
        return Directive.PROCEED

    def _stop_reason(self, step: Step) -> PauseReason | None:
        with self._lock:
            if self._pause_requested:
                self._pause_requested = False
                return "step"
        mode = self._mode
        if (
            mode == "step"
            or (mode == "step-over" and step.depth <= self._stop_depth)
            or (mode == "step-out" and step.depth < self._stop_depth)
        ):
            return "step"
        if self.breakpoints.hit(step.file, step.line, step.col):
            return "breakpoint"
        return None

    def _pause(self, step: Step, reason: PauseReason) -> str:
        with self._lock:
            self._paused = _Pause(step, reason)
            self._pause_started = time.monotonic()
        # runtime.json first: a reader that sees ``paused`` and reads the state must
        # find the paused one, not the ``running`` of the step before.
        self.write_state(STATE_OF_REASON[reason], step)
        self.emit(
            {
                "kind": "paused",
                "reason": reason,
                "line": step.line,
                "col": step.col,
                "snapshot": {
                    "vars": {k: self.render(v) for k, v in step.variables().items()},
                    "callStack": [
                        {"fn": f.fn, "file": f.file, "line": f.line} for f in step.frames()[1:]
                    ],
                },
            }
        )
        for listener in self.listeners:
            listener.paused(step, reason)
        try:
            while True:
                command = self._queue.get()
                if command is None or self._aborted:
                    raise Interrupt("aborted")
                outcome = self._apply_at_pause(command, step, reason)
                if outcome is not None:
                    self._reject_leftovers()
                    return outcome
        finally:
            with self._lock:
                self._paused = None
                if self._pause_started is not None:
                    self.paused_seconds += time.monotonic() - self._pause_started
                    self._pause_started = None
                stale = self._drain()
            # ``_reject_leftovers`` ran before the lock was taken: a command that the
            # feed queued in between (it still saw this pause) would otherwise resume
            # the next, unrelated pause unasked. Under the lock nothing can slip in.
            for command in stale:
                self._reject(command, "the run resumed before this command was applied")

    def _drain(self) -> list[Command]:
        """Empty the queue (lock held); an abort's wake-up ``None`` stays in it."""
        stale: list[Command] = []
        wake = False
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is None:
                wake = True
            else:
                stale.append(item)
        if wake:
            self._queue.put(None)
        return stale

    def _reject_leftovers(self) -> None:
        """Commands queued behind the one that resumed would otherwise fire at some
        later, unrelated pause (or never be answered): each is rejected now."""
        while True:
            try:
                command = self._queue.get_nowait()
            except queue.Empty:
                return
            if command is None:
                self._queue.put(None)  # an abort stays for the next wait
                return
            self._reject(command, "the run resumed before this command was applied")

    def _apply_at_pause(self, command: Command, step: Step, reason: PauseReason) -> str | None:
        cmd = command.cmd
        if cmd == "eval":
            self._eval(command, step)
            return None
        if cmd == "retry" and reason != "failure":
            self._reject(command, "retry re-runs a failed statement: use it at a failure pause")
            return None
        self._applied(command)
        by = "continue" if cmd in ("continue", "retry") else "step"
        if cmd == "step":
            self._mode = "step"
        elif cmd in ("step-over", "step-out"):
            self._mode = cmd
            self._stop_depth = step.depth
        elif cmd == "skip":
            self._mode = "step"
        else:
            self._mode = None
        self.emit({"kind": "resumed", "by": by, "cmd": cmd})
        self.write_state("running", step)
        for listener in self.listeners:
            listener.resumed(command)
        return cmd

    def _eval(self, command: Command, step: Step) -> None:
        assert command.expr is not None
        event: dict[str, Any] = {"kind": "command:result"}
        if command.id is not None:
            event["id"] = command.id
        self._applied(command)
        try:
            value = step.evaluate(command.expr)
        except ScenarioSyntaxError as err:
            event.update(ok=False, error=f"SyntaxError: {err.message} (col {err.col})")
        except ScriptError as err:
            event.update(ok=False, error=f"{err.name}: {err.message}")
        except DslError as err:
            event.update(ok=False, error=str(err))
        else:
            event.update(ok=True, value=self.render(value))
        # runtime.json before the answer, so a reader of the result sees what it did.
        paused = self._paused
        if paused is not None:
            self.write_state(STATE_OF_REASON[paused.reason], paused.step)
        self.emit(event)
        for listener in self.listeners:
            listener.evaluated(command, event)

    def release(self) -> None:
        """Wake a paused scenario so it sees the interrupt (a signal while paused)."""
        with self._lock:
            self._aborted = True
        self._queue.put(None)

    # --- for the scenario timeout ---------------------------------------------------

    def paused_for(self) -> float:
        """Seconds spent paused so far, the current pause included."""
        with self._lock:
            current = time.monotonic() - self._pause_started if self._pause_started else 0.0
            return self.paused_seconds + current

    @property
    def current_pause(self) -> _Pause | None:
        return self._paused
