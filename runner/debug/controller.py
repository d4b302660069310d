"""The step debugger: where to stop, and what the people driving it asked for.

As in CPython's ``bdb``, deciding *whether to stop here* is kept apart from *what the
user wants* once stopped. There is one stopping point, :meth:`DebugController._pause`,
reached from :meth:`~DebugController.before` (a breakpoint, or the stepping record says
so) and :meth:`~DebugController.after_failure`. Stepping state is one small record,
:class:`StopInfo`, replaced whole by each resume (bdb's ``_set_stopinfo``): ``step``
stops anywhere, ``step-over`` at a depth no deeper than where it was asked,
``step-out`` only shallower; a ``pause`` request is a ``step`` asked for from outside.

Commands come from every source into one queue: lines of ``commands.jsonl`` (the
viewer, ``unotest dbg``, an agent over MCP) and the terminal prompt, all checked
against the one vocabulary of :mod:`runner.debug.commands`. Each is a ``do_*`` method
here whose docstring is its help. Commands valid at any time are applied at once by
the thread that read them; the others wait for the paused scenario thread, which
applies them one by one. Every command is acknowledged in steps.jsonl by
``command:applied`` or ``command:rejected`` (and ``command:result`` for ``eval``).

The runner may end a run on its own account through :meth:`DebugController.end`: a
pause that no command came to for ``idle_timeout_s`` (``debug.idleTimeout``, when no
terminal prompt runs), or the MCP session that started the run closing. That is an
``abort`` with an id of the runner's (``unotest-idle-timeout``,
``unotest-owner-gone``), acknowledged like any other, and said on stderr.
"""

from __future__ import annotations

import json
import queue
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from dsl.errors import DslError, Interrupt, ScenarioSyntaxError, ScriptError
from dsl.interpreter import Directive, Step
from dsl.values import Value
from runner import events, protocol
from runner.debug.breakpoints import Breakpoints
from runner.debug.commands import ANYTIME, RESUMING, Command, method_of, parse_command
from runner.errors import CommandError
from runner.events import StepsLine
from runner.project.positions import format_position

__all__ = [
    "Command",
    "DebugController",
    "DebugListener",
    "StopInfo",
    "format_duration",
]

PauseReason = Literal["breakpoint", "step", "failure"]
STATE_OF_REASON: dict[PauseReason, protocol.RuntimeState] = {
    "breakpoint": "paused-breakpoint",
    "step": "paused-step",
    "failure": "paused-failure",
}
MAX_COMMAND_BYTES = 1024 * 1024
IDLE_TIMEOUT_ID = "unotest-idle-timeout"


@dataclass(frozen=True, slots=True)
class StopInfo:
    """Where to stop next besides breakpoints, as one value: the scenario thread reads
    it while another thread may replace it, and a whole record cannot be seen half-set.
    ``depth`` is the call depth the command was given at."""

    mode: Literal["run", "step", "over", "out"] = "run"
    depth: int = 0

    def stops_at(self, depth: int) -> bool:
        if self.mode == "step":
            return True
        if self.mode == "over":
            return depth <= self.depth
        if self.mode == "out":
            return depth < self.depth
        return False


RUN = StopInfo()
STEP = StopInfo("step")


@dataclass
class _Pause:
    step: Step
    reason: PauseReason
    error: ScriptError | None = None
    """What failed, at a failure pause: what a person at the prompt must see first."""


class DebugListener:
    """Whoever shows the debugger to a person (the terminal prompt) hears what happens
    here; every hook does nothing by default, so a listener overrides what it shows.
    They run in the thread that applied the command: they must not block or raise."""

    def paused(self, step: Step, reason: PauseReason, error: ScriptError | None = None) -> None:
        """``error``: what failed, at a failure pause."""

    def resumed(self, command: Command) -> None:
        pass

    def applied(self, command: Command) -> None:
        pass

    def rejected(self, command: Command, reason: str) -> None:
        pass

    def refused(self, reason: str, source: str) -> None:
        """A command that did not even parse (``b 0``), from ``source``."""

    def evaluated(self, command: Command, event: protocol.CommandResultEvent) -> None:
        pass


@dataclass
class DebugController:
    """Decides where to stop, applies commands, and blocks the scenario while paused.

    ``emit`` appends an event to steps.jsonl; ``write_state`` rewrites runtime.json
    with a state and the step it is at; ``render`` renders a value for a snapshot or
    an eval result.
    """

    emit: Callable[[StepsLine], None]
    write_state: Callable[[protocol.RuntimeState, Step | None], None]
    interrupt: Callable[[str], None]
    render: Callable[[Value], str]
    breakpoints: Breakpoints
    file_keys: Mapping[str, str]
    warn: Callable[[str], None] = lambda text: print(f"unotest: {text}", file=sys.stderr)
    step_first: bool = False
    pause_on_failure: bool = False
    """Stop at a failed step (``--debug``), for ``retry``, ``skip`` or a look around;
    without it a failure ends the run as it would without a debugger."""
    listeners: list[DebugListener] = field(default_factory=list)
    idle_timeout_s: float | None = None
    """A pause that no command reaches for this long ends the run (None: never)."""
    reloader: Callable[[Step], str] | None = None
    """``reload`` at the pause of the given step: its summary, or ``CommandError`` with
    why not (:class:`runner.debug.reload.Reloader`); None: this run cannot reload."""
    picker: Callable[[Command], str] | None = None
    """``pick`` on the live page: the answer's value (JSON text: the target and the
    others that also find the element), or ``CommandError`` with why none; None: the
    run has no page to pick from."""

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._queue: queue.Queue[Command | None] = queue.Queue()
        self._seen: set[str] = set()
        self._stopinfo = STEP if self.step_first else RUN
        self._paused: _Pause | None = None
        self._aborted = False
        # The errors themselves, not their ids: a freed error's id can be reused.
        self._reported_failures: list[ScriptError] = []
        self.paused_seconds = 0.0
        self._pause_started: float | None = None
        self._last_command = time.monotonic()
        self.restart_requested = False
        """Set by ``restart``: the run ends as ``aborted`` and whoever started it (the
        session) reads this flag to start the scenario again in the same browser."""

    # --- commands, from any thread --------------------------------------------------

    def submit_line(self, raw: bytes) -> None:
        """One line of commands.jsonl: parse, check, then apply or queue."""
        self._touch()
        try:
            if len(raw) > MAX_COMMAND_BYTES:
                raise CommandError(f"command line of {len(raw):,} bytes is too long")
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, CommandError) as err:
            reason = (
                str(err) if isinstance(err, CommandError) else "malformed line: not a JSON object"
            )
            self.warn(f"commands.jsonl: {reason}")
            self.emit(events.command_rejected(reason))
            return
        self.submit_data(data)

    def submit_data(self, data: object, source: str = "file") -> None:
        self._touch()
        if not isinstance(data, dict):
            self.warn("commands.jsonl: a command is a JSON object with id and cmd")
            self.emit(events.command_rejected("a command is a JSON object with id and cmd"))
            return
        ident = data.get("id")
        cmd = data.get("cmd")
        try:
            if not isinstance(ident, str) or not ident:
                raise CommandError("every command needs a non-empty string id")
            with self._lock:
                if ident in self._seen:
                    self.warn(f"commands.jsonl: command id {ident!r} was already used; ignored")
                    return
                self._seen.add(ident)
            command = parse_command(data, ident, source)
        except CommandError as err:
            if source == "file":
                self.warn(f"commands.jsonl: {err}")
            for listener in self.listeners:
                listener.refused(str(err), source)
            self.emit(
                events.command_rejected(
                    str(err),
                    ident if isinstance(ident, str) and ident else None,
                    cmd if isinstance(cmd, str) else None,
                )
            )
            return
        self.submit(command)

    def submit(self, command: Command) -> None:
        if command.cmd in ANYTIME:
            self._dispatch(command)
            return
        with self._lock:
            if self._paused is not None:
                self._queue.put(command)
                return
        self._reject(command, f"'{command.cmd}' needs a paused run; send 'pause' first")

    def _touch(self) -> None:
        """Someone sent a command (any, even a rejected one): the idle clock restarts."""
        with self._lock:
            self._last_command = time.monotonic()

    def end(self, ident: str, why: str) -> None:
        """End the run as ``aborted`` on the runner's own account (an idle pause, the
        MCP session gone): ``why`` on stderr, then an ``abort`` with ``ident`` applied
        as if it had been sent. Only the first ending counts."""
        with self._lock:
            if self._aborted:
                return
            self._aborted = True
        self.warn(why)
        self.do_abort(Command("abort", ident, source="runner"))

    def _dispatch(self, command: Command) -> bool:
        """pdb's ``onecmd``: the command's ``do_*`` method; True when it resumed the run.

        A resuming command's method only says where to stop next (or rejects and
        returns None); writing ``resumed`` is the same for all of them.
        """
        method: Callable[[Command], StopInfo | None] = getattr(self, method_of(command.cmd))
        stop = method(command)
        if stop is None:
            return False
        self._resume(command, stop)
        return True

    def _reject(self, command: Command, reason: str) -> None:
        self.emit(events.command_rejected(reason, command.id, command.cmd))
        for listener in self.listeners:
            listener.rejected(command, reason)

    def _applied(self, command: Command, note: str | None = None) -> None:
        self.emit(events.command_applied(command.id, command.cmd, note))
        for listener in self.listeners:
            listener.applied(command)

    def _resume(self, command: Command, stop: StopInfo) -> None:
        pause = self._here()
        self._applied(command)
        self._stopinfo = stop
        self.emit(events.resumed(RESUMING[command.cmd], command.cmd))
        self.write_state("running", pause.step)
        for listener in self.listeners:
            listener.resumed(command)

    def _here(self) -> _Pause:
        """The pause an at-pause command is applied in (only the paused thread runs them)."""
        pause = self._paused
        assert pause is not None, "an at-pause command outside a pause"
        return pause

    # --- the commands: one do_* each, the docstring is its help -------------------------

    def do_step(self, command: Command) -> StopInfo | None:
        """run the next statement, stepping into helper calls"""
        return STEP

    def do_step_over(self, command: Command) -> StopInfo | None:
        """run the next statement, helper calls included"""
        return StopInfo("over", self._here().step.depth)

    def do_step_out(self, command: Command) -> StopInfo | None:
        """run until the current helper returns"""
        return StopInfo("out", self._here().step.depth)

    def do_continue(self, command: Command) -> StopInfo | None:
        """run to the next breakpoint (at a failure pause: end the run as failed)"""
        return RUN

    def do_retry(self, command: Command) -> StopInfo | None:
        """at a failure pause, run the failed statement again (fix the page with eval first)"""
        if self._here().reason != "failure":
            self._reject(command, "retry re-runs a failed statement: use it at a failure pause")
            return None
        return RUN

    def do_skip(self, command: Command) -> StopInfo | None:
        """do not run the current (or failed) statement; pause before the next"""
        return STEP

    def do_eval(self, command: Command) -> StopInfo | None:
        """a DSL expression or statement in the paused scope and page: read or assign
        variables, click"""
        pause = self._here()
        assert command.expr is not None
        self._applied(command)
        event = self._evaluate(command.id, pause.step, command.expr, command.frame)
        # runtime.json before the answer, so a reader of the result sees what it did.
        self.write_state(STATE_OF_REASON[pause.reason], pause.step)
        self._answer(command, event)
        return None

    def do_pause(self, command: Command) -> StopInfo | None:
        """pause before the next statement"""
        with self._lock:
            paused = self._paused is not None
            if not paused:
                self._stopinfo = STEP
        if paused:
            self._reject(command, "already paused")
        else:
            self._applied(command)
        return None

    def do_set_bp(self, command: Command) -> StopInfo | None:
        """set a breakpoint in the scenario, or in FILE (``_helpers/<name>`` or a
        project-relative path)"""
        found = self._breakpoint_of(command)
        if found is not None:
            file, position, note = found
            self.breakpoints.add(file, position)
            if note:
                self.warn(note)
            self._breakpoints_changed(command, note)
        return None

    def do_clear_bp(self, command: Command) -> StopInfo | None:
        """clear a breakpoint"""
        found = self._breakpoint_of(command)
        if found is not None:
            file, position, _ = found
            if self.breakpoints.remove(file, position):
                self._breakpoints_changed(command)
            else:
                self._reject(command, f"no breakpoint at {file}:{format_position(*position)}")
        return None

    def do_abort(self, command: Command) -> StopInfo | None:
        """end the run now (outcome aborted), even in the middle of an auto-waiting action"""
        self._applied(command)
        with self._lock:
            self._aborted = True
        self.interrupt("aborted")
        self._queue.put(None)
        return None

    def do_restart(self, command: Command) -> StopInfo | None:
        """end this run (outcome aborted) and start the scenario again in the same browser"""
        self.restart_requested = True
        return self.do_abort(command)

    def do_reload(self, command: Command) -> StopInfo | None:
        """re-read the scenario and helper files and go on in the edited code: the
        paused statement as edited (r runs it again at a failure), statements added
        above the pause are not run"""
        pause = self._here()
        if self.reloader is None:
            self._reject(command, "this run was not started from a project's files: no reload")
            return None
        try:
            summary = self.reloader(pause.step)
        except CommandError as err:
            self._reject(command, str(err))
            return None
        self._applied(command)
        # runtime.json before the answer: whoever reads the result sees the new position.
        self.write_state(STATE_OF_REASON[pause.reason], pause.step)
        event = events.command_result(command.id, True, value=summary)
        self._answer(command, event)
        return None

    def do_pick(self, command: Command) -> StopInfo | None:
        """the best target for the element at a point of the live page, or named by its
        text or accessible name: role(...), testid(...), label(...), text(...), css(...)"""
        self._here()  # a pause is needed: the page stands still
        self._applied(command)
        if self.picker is None:
            event = events.command_result(command.id, False, error="this run has no page")
        else:
            try:
                event = events.command_result(command.id, True, value=self.picker(command))
            except CommandError as err:
                event = events.command_result(command.id, False, error=str(err))
        self._answer(command, event)
        return None

    def _answer(self, command: Command, event: protocol.CommandResultEvent) -> None:
        """A command's ``command:result`` in steps.jsonl, then told to the listeners."""
        self.emit(event)
        for listener in self.listeners:
            listener.evaluated(command, event)

    def _evaluate(
        self, ident: str, step: Step, expr: str, frame: int | None = None
    ) -> protocol.CommandResultEvent:
        depth = len(step.frames())
        if frame is not None and frame >= depth:
            return events.command_result(
                ident, False, error=f"no frame {frame}: the call stack has {depth}"
            )
        try:
            value = step.evaluate(expr, frame)
        except ScenarioSyntaxError as err:
            message = f"SyntaxError: {err.message} (col {err.col})"
        except ScriptError as err:
            message = f"{err.name}: {err.message}"
        except DslError as err:
            message = str(err)
        else:
            return events.command_result(ident, True, value=self.render(value))
        return events.command_result(ident, False, error=message)

    def _breakpoint_of(self, command: Command) -> tuple[str, tuple[int, int], str | None] | None:
        """The file, position and note of a set-bp / clear-bp (None: rejected)."""
        file = self._file_for(command.file)
        if file is None:
            self._reject(command, f"no scenario or helper file {command.file!r} in this run")
            return None
        assert command.line is not None  # parse_command checked it
        position, note = self.breakpoints.resolve(file, command.line, command.col)
        return file, position, note

    def _breakpoints_changed(self, command: Command, note: str | None = None) -> None:
        paused = self._paused
        if paused is not None:  # runtime.json first: ``applied`` means it shows
            self.write_state(STATE_OF_REASON[paused.reason], paused.step)
        self._applied(command, note)

    def _file_for(self, given: str | None) -> str | None:
        if given is None:
            return self.file_keys.get("")
        if given in self.file_keys:
            return self.file_keys[given]
        if given in self.file_keys.values():
            return given
        return None

    # --- in the scenario thread: the one stopping point ----------------------------------

    def before(self, step: Step) -> Directive:
        reason = self._stop_reason(step)
        if reason is None:
            return Directive.PROCEED
        resumed_by = self._pause(step, reason)
        # The steps writer writes the step:skipped of a skip here (with the statement's
        # text, masked as step:started's would be).
        return Directive.SKIP if resumed_by == "skip" else Directive.PROCEED

    def end_failure_pauses(self) -> None:
        """The run is ending (aborted, or out of time): its ``after_each`` hooks run
        through their failures with no pause holding them."""
        self.pause_on_failure = False

    def after_failure(self, step: Step, error: ScriptError) -> Directive:
        """A failed step: pause first (uncaught failures only, innermost only; a soft
        assertion's failure is never caught: a ``try`` does not see it)."""
        if (step.caught and not error.soft) or any(e is error for e in self._reported_failures):
            return Directive.PROCEED
        self._reported_failures.append(error)
        resumed_by = self._pause(step, "failure", error)
        if resumed_by == "retry":
            self._reported_failures.remove(error)
            return Directive.RETRY
        if resumed_by == "skip":
            return Directive.SKIP
        return Directive.PROCEED

    def _stop_reason(self, step: Step) -> PauseReason | None:
        """bdb's ``stop_here() or break_here()``; with neither, two cheap lookups."""
        if self._stopinfo.stops_at(step.depth):
            return "step"
        if self.breakpoints.hit(step.file, step.line, step.col):
            return "breakpoint"
        return None

    def _pause(self, step: Step, reason: PauseReason, error: ScriptError | None = None) -> str:
        """Block until a command resumes the run; the resuming command's name."""
        with self._lock:
            self._paused = _Pause(step, reason, error)
            self._pause_started = time.monotonic()
        self._touch()  # the idle clock starts with the pause
        self._announce(step, reason, error)
        try:
            while True:
                command = self._next_command(step)
                if command is None or self._aborted:
                    raise Interrupt("aborted")
                if self._dispatch(command):
                    self._reject_leftovers()
                    return command.cmd
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

    def _next_command(self, step: Step) -> Command | None:
        """The next queued command; None once the run is aborted, by a command or by
        the idle timeout (which aborts it here)."""
        idle = self.idle_timeout_s
        while idle is not None:
            with self._lock:
                remaining = self._last_command + idle - time.monotonic()
            if remaining <= 0:
                where = f"{step.file}:{step.line}:{step.col}"
                self.end(
                    IDLE_TIMEOUT_ID,
                    f"the run was paused at {where} for {format_duration(idle)} without a "
                    "command (debug.idleTimeout in unotest.config.yaml; 0 waits forever): "
                    "aborting it",
                )
                return None
            try:
                return self._queue.get(timeout=remaining)
            except queue.Empty:
                continue  # a command may have come meanwhile without resuming: look again
        return self._queue.get()

    def _announce(self, step: Step, reason: PauseReason, error: ScriptError | None) -> None:
        # runtime.json first: a reader that sees ``paused`` and reads the state must
        # find the paused one, not the ``running`` of the step before.
        self.write_state(STATE_OF_REASON[reason], step)
        self.emit(
            events.paused(
                reason,
                step.line,
                step.col,
                {k: self.render(v) for k, v in step.variables().items()},
                events.call_stack(step.frames()),
            )
        )
        for listener in self.listeners:
            listener.paused(step, reason, error)

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


def format_duration(seconds: float) -> str:
    """``1800`` → ``30 min``, ``2`` → ``2 s``, ``0.25`` → ``250 ms``: as people say it."""
    ms = round(seconds * 1000)
    if ms >= 60_000 and ms % 60_000 == 0:
        return f"{ms // 60_000} min"
    if ms >= 1000 and ms % 1000 == 0:
        return f"{ms // 1000} s"
    return f"{ms} ms"
