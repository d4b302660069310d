"""The tree-walking interpreter, with one hook around every statement.

Synchronous by design: the runner executes a scenario in a thread of its own, so a
built-in that waits on the browser blocks only that thread, while the runner's event
loop can still read debugger commands and cancel the wait (``abort``). A pause is the
hook blocking; the debugger's ``eval`` runs in the same thread, in the paused scope.

The hook (:class:`StatementHook`) is called before and after each step; with none
installed a statement costs one ``is None`` test more than without a debugger.

Scopes form a chain restored by the call structure (one per block, one chain per
function call: functions are top-level, so there are no closures). ``break``,
``continue`` and ``return`` are private exceptions.

Edit and continue (the debugger's ``reload``): every running block walks its
statements through a :class:`_Cursor` (the block and an index) that a reload may
retarget to the edited block, so the statements after the current one come from the
new code; loops and ``try`` read their own node back from the enclosing cursor after
running a block, so their next test, body or handler is the new one too. The paused
statement itself is run again as its new version (``_Redo``). :meth:`Interpreter.reload`
takes the plan of :mod:`dsl.reload`, which decides where each frame goes on.
"""

from __future__ import annotations

import enum
import math
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from dsl import ast
from dsl.errors import (
    BuiltinError,
    CallFrame,
    Interrupt,
    ScenarioSyntaxError,
    ScriptError,
    arity_text,
    suggestion,
)
from dsl.methods import call_method, get_property
from dsl.reload import FramePlan, FramePosition, StatementMap, map_frame
from dsl.values import (
    MATCHER_USE,
    CallableValue,
    HostValue,
    MatcherValue,
    RegexValue,
    Value,
    format_number,
    is_frozen,
    render,
    strict_equal,
    to_display,
    truthy,
    type_name,
    well_formed,
)

__all__ = [
    "HOOK_NAMES",
    "MAX_CALL_DEPTH",
    "Builtin",
    "BuiltinValue",
    "Directive",
    "FunctionRef",
    "FunctionValue",
    "Interpreter",
    "ReloadOutcome",
    "StatementHook",
    "Step",
    "builtin_value_message",
]

MAX_CALL_DEPTH = 200
EVAL_LIMIT_S = 10.0
"""The longest the debugger's ``eval`` runs statements (a loop typed at a pause): then a
RangeError ends it and the run stays paused where it was."""
HOOK_NAMES = ("before_each", "after_each", "before_all", "after_all")
"""Functions the runner calls around each test (``*_each``) and once per worker around
the tests of their scope (``*_all``); no scenario calls them or names them."""
_PYTHON_RECURSION_LIMIT = 10_000


@dataclass(frozen=True, slots=True)
class Builtin:
    """A host function the scenario can call; arity is checked before ``impl`` runs.

    ``function_at``: the argument that is a function (``expect_poll``'s first,
    ``step``'s second), so a built-in's bare name there is a :class:`BuiltinValue`."""

    name: str
    impl: Callable[..., Value]
    min_args: int
    max_args: int | None
    function_at: int | None = None


def hook_when(hook: str) -> str:
    """When unotest runs ``hook``, for the messages saying it is no function to call
    (the checker says it in the same words)."""
    return "around each test" if hook.endswith("_each") else "once per worker around its tests"


def builtin_value_message(name: str) -> str:
    """Why the built-in ``name`` cannot be a value where it was written (the checker
    says it in the same words)."""
    return (
        f"'{name}' is a built-in: call it as {name}(...); a built-in is a value only where "
        f"a function is passed: expect_poll({name}, ...), expect_to_pass({name}), "
        f'step("...", {name}), or an argument of a function of the scenario\'s file or of '
        "a helper"
    )


@dataclass(frozen=True, slots=True)
class FunctionRef:
    """A user function and the file it lives in (helpers and file-local functions)."""

    decl: ast.FunctionDecl
    program: ast.Program


class FunctionValue(CallableValue):
    """A function of the scenario's file or of a helper, named without calling it.

    ``expect_poll(count_items, 3)``: the bare name is this value. It renders as
    ``<function count_items>``, ``==`` is identity (the same declaration), it has no
    properties or methods, and only a built-in that takes a function calls it (through
    :meth:`call`, as an ordinary call of the scenario: its statements are steps).
    """

    def __init__(self, ref: FunctionRef, interpreter: Interpreter) -> None:
        self.ref = ref
        self._interpreter = interpreter

    @property
    def name(self) -> str:
        return self.ref.decl.name

    @property
    def params(self) -> tuple[str, ...]:
        return self.ref.decl.params

    def arity(self) -> tuple[int, int | None]:
        return len(self.params), len(self.params)

    def render(self) -> str:
        return f"<function {self.name}>"

    def same_as(self, other: HostValue) -> bool:
        return isinstance(other, FunctionValue) and other.ref.decl is self.ref.decl

    def call(self, args: list[Value], *, caught: bool = False) -> Value:
        """Call the function from the statement now running (a built-in's caller)."""
        return self._interpreter.call_value(self, args, caught=caught)


class BuiltinValue(CallableValue):
    """A built-in named without calling it where a function is passed:
    ``expect_poll(url, contains("/done"))``, ``wait_until(dialog_message)``.

    It renders as ``<built-in url>``, ``==`` is the same built-in, and a call checks
    the arity and runs the built-in as a call in the scenario would (no step of its
    own: a built-in has no statements); its errors are the caller's to place.
    """

    def __init__(self, builtin: Builtin) -> None:
        self.builtin = builtin

    @property
    def name(self) -> str:
        return self.builtin.name

    def arity(self) -> tuple[int, int | None]:
        return self.builtin.min_args, self.builtin.max_args

    def render(self) -> str:
        return f"<built-in {self.name}>"

    def same_as(self, other: HostValue) -> bool:
        return isinstance(other, BuiltinValue) and other.name == self.name

    def call(self, args: list[Value], *, caught: bool = False) -> Value:
        builtin = self.builtin
        low, high = builtin.min_args, builtin.max_args
        if len(args) < low or (high is not None and len(args) > high):
            raise BuiltinError(
                "TypeError",
                f"{self.name}() takes {arity_text(low, high)} but got {len(args)}",
            )
        return _apply(builtin, args)


def _apply(builtin: Builtin, args: list[Value]) -> Value:
    """``builtin``'s implementation on ``args`` (their count checked): an unexpected
    Python error becomes the built-in's ``Error``, and a string from outside (env(), a
    page's text) is made whole as literals are."""
    try:
        result = builtin.impl(*args)
    except (BuiltinError, ScriptError, Interrupt, RecursionError):
        raise
    except Exception as err:
        raise BuiltinError("Error", f"{builtin.name}(): {type(err).__name__}: {err}") from None
    return well_formed(result) if type(result) is str else result


class Directive(enum.Enum):
    """What a hook wants done with the statement it was shown."""

    PROCEED = "proceed"
    SKIP = "skip"
    RETRY = "retry"


class _Scope:
    __slots__ = ("consts", "parent", "vars")

    def __init__(self, parent: _Scope | None) -> None:
        self.vars: dict[str, Value] = {}
        self.consts: set[str] | None = None
        self.parent = parent

    def find(self, name: str) -> _Scope | None:
        scope: _Scope | None = self
        while scope is not None:
            if name in scope.vars:
                return scope
            scope = scope.parent
        return None


class _Cursor:
    """Where a running block is: its statements and the index of the current one. A
    reload retargets both (the edited block, the current statement's new index)."""

    __slots__ = ("block", "index")

    def __init__(self, block: ast.Block) -> None:
        self.block = block
        self.index = 0


_S = TypeVar("_S", bound=ast.Stmt)


def _now(cursor: _Cursor, stmt: _S) -> _S:
    """The statement ``stmt`` has become (itself unless a reload replaced it): the
    enclosing block's current statement, of the same kind (the reload checked that)."""
    return cursor.block.body[cursor.index]  # type: ignore[return-value]


class _Frame:
    __slots__ = ("cursors", "fn", "program", "scope", "stmt")

    def __init__(self, fn: str, program: ast.Program, stmt: ast.Stmt | None) -> None:
        self.fn = fn
        self.program = program
        self.stmt = stmt
        self.scope: _Scope | None = None
        self.cursors: list[_Cursor] = []

    @property
    def line(self) -> int:
        return self.stmt.span.line if self.stmt is not None else 0


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


class _Return(Exception):
    def __init__(self, value: Value) -> None:
        self.value = value


class _Redo(Exception):
    """The paused statement was reloaded: run ``stmt``, its new version, in its place."""

    def __init__(self, stmt: ast.Stmt) -> None:
        self.stmt = stmt


@dataclass(frozen=True, slots=True)
class ReloadOutcome:
    """What a reload did to the running code."""

    skipped: int
    """Statements inserted above a frame's position: never run (this time round)."""
    running: tuple[str, ...]
    """The functions on the call stack (outermost first) now going on in new code."""


class Step:
    """What the hook sees of one statement about to run (or just run)."""

    __slots__ = ("_interp", "_scope", "caught", "depth", "program", "stmt")

    def __init__(
        self, interp: Interpreter, stmt: ast.Stmt, scope: _Scope, program: ast.Program
    ) -> None:
        self._interp = interp
        self._scope = scope
        self.stmt = stmt
        self.program = program
        self.depth = len(interp._frames) - 1
        self.caught = interp._try_depth > 0

    @property
    def file(self) -> str:
        return self.program.file

    @property
    def line(self) -> int:
        return self.stmt.span.line

    @property
    def col(self) -> int:
        return self.stmt.span.col

    @property
    def text(self) -> str:
        return self.program.statement_text(self.stmt)

    def frames(self) -> tuple[CallFrame, ...]:
        """Every active function, outermost first, with the line each is executing."""
        return self._interp._call_chain()

    def variables(self, frame: int | None = None) -> dict[str, Value]:
        """Every variable visible here; inner declarations shadow outer ones. With
        ``frame`` (an index of :meth:`frames`, outermost 0), those visible where that
        caller stands: a debugger's selected frame shows its own locals."""
        chain: list[_Scope] = []
        scope: _Scope | None = self._frame_scope(frame)
        # The helpers' consts are left out: the same for every step, read in their files.
        while scope is not None and scope is not self._interp._globals:
            chain.append(scope)
            scope = scope.parent
        merged: dict[str, Value] = {}
        for s in reversed(chain):
            merged.update(s.vars)
        return merged

    def defines(self, name: str) -> bool:
        """Whether ``name`` means something here (a variable, a helper const or
        function, a function of this file, a built-in): what an eval of it would read."""
        interp = self._interp
        return (
            self._scope.find(name) is not None
            or name in interp.helpers
            or name in interp.builtins
            or any(fn.name == name for fn in self.program.functions)
        )

    def evaluate(self, source: str, frame: int | None = None) -> Value:
        """The debugger's ``eval``: an expression's value, or run statements here (or,
        with ``frame``, in the scope where that caller stands)."""
        return self._interp._evaluate_here(source, self._frame_scope(frame))

    def _frame_scope(self, frame: int | None) -> _Scope:
        """The scope of one frame of the call chain; the innermost is this step's own.
        An index out of range is a ``ValueError`` (the debugger rejects it first)."""
        frames = self._interp._frames
        if frame is None or frame == len(frames) - 1:
            return self._scope
        if not 0 <= frame < len(frames) - 1:
            raise ValueError(f"no frame {frame}: the call stack has {len(frames)}")
        scope = frames[frame].scope
        assert scope is not None  # a caller stands at the statement that called
        return scope

    def reload(
        self,
        programs: Mapping[str, ast.Program],
        helpers: Mapping[str, FunctionRef],
        consts: Mapping[str, Value],
        maps: Mapping[str, StatementMap] | None = None,
    ) -> ReloadOutcome:
        """The debugger's ``reload`` at this pause (see :meth:`Interpreter.reload`);
        this step then shows the paused statement's new version."""
        outcome = self._interp.reload(programs, helpers, consts, maps)
        frame = self._interp._frames[-1]
        assert frame.stmt is not None
        self.stmt = frame.stmt
        self.program = frame.program
        return outcome


class StatementHook(Protocol):
    """Called around every step; may block (a pause), raise Interrupt, or redirect."""

    def before_statement(self, step: Step) -> Directive: ...

    def after_statement(self, step: Step, error: ScriptError | None) -> Directive: ...


def _discards(block: ast.Block | None) -> bool:
    """Whether ``block`` (a ``finally``) always ends abruptly, and so discards any error
    thrown before it: a ``return``, ``throw``, ``break`` or ``continue`` among its own
    statements. One inside an ``if`` may not run: then the error may go on, and the
    statement that threw it must stay where the run fails (and the debugger pauses)."""
    return block is not None and any(
        isinstance(stmt, ast.Return | ast.Throw | ast.Break | ast.Continue) for stmt in block.body
    )


def _bad_types(op: str, left: Value, right: Value) -> str:
    return f"'{op}' cannot combine {type_name(left)} and {type_name(right)}"


class Interpreter:
    """Runs one scenario's functions; not thread-safe, one per run."""

    def __init__(
        self,
        builtins: Mapping[str, Builtin],
        helpers: Mapping[str, FunctionRef] | None = None,
        hook: StatementHook | None = None,
        max_call_depth: int = MAX_CALL_DEPTH,
        consts: Mapping[str, Value] | None = None,
    ) -> None:
        """``consts`` are the helper files' top-level consts (frozen values): every
        function sees them, below its own variables."""
        self.builtins = builtins
        self.helpers = helpers or {}
        self._globals = _Scope(None)
        self._globals.vars.update(consts or {})
        self._globals.consts = set(self._globals.vars)
        self.hook = hook
        self.max_call_depth = max_call_depth
        self._frames: list[_Frame] = []
        self._try_depth = 0
        self._retry_depth = 0
        """Calls a built-in retries (expect_to_pass) now running: no soft failure inside."""
        self._hook_suspended = 0
        self._latest: dict[str, ast.Program] = {}
        """Each reloaded file's newest version: ``run`` and function values use it."""
        self._approved: ast.Stmt | None = None
        """A reloaded statement the hook already let run (its step is open): no second
        ``before_statement`` for it."""
        self.interrupt_check: Callable[[], None] | None = None
        self._eval_deadline: float | None = None
        """While the debugger's eval runs: when its statements stop (EVAL_LIMIT_S)."""
        self._eval: dict[type, Callable[[Any, _Scope], Value]] = {
            ast.NumberLit: self._literal,
            ast.StringLit: self._literal,
            ast.BoolLit: self._literal,
            ast.NullLit: lambda node, scope: None,
            ast.TemplateLit: self._template,
            ast.RegexLit: self._regex,
            ast.ArrayLit: self._array,
            ast.ObjectLit: self._object,
            ast.Identifier: self._identifier,
            ast.Member: self._member,
            ast.Index: self._index,
            ast.Call: self._call,
            ast.Unary: self._unary,
            ast.Binary: self._binary,
            ast.Logical: self._logical,
            ast.Conditional: self._conditional,
        }
        self._exec: dict[type, Callable[[Any, _Scope], None]] = {
            ast.VarDecl: self._var_decl,
            ast.Assign: self._assign,
            ast.ExprStmt: self._expr_stmt,
            ast.If: self._if,
            ast.ForOf: self._for_of,
            ast.While: self._while,
            ast.Break: self._break,
            ast.Continue: self._continue,
            ast.Return: self._return,
            ast.Throw: self._throw,
            ast.Try: self._try,
        }

    # --- entry points ----------------------------------------------------------

    def run(self, program: ast.Program, function: str, args: tuple[Value, ...] = ()) -> Value:
        """Call ``function`` of ``program``; a failure escapes as ScriptError."""
        latest = self._latest.get(program.file)
        if latest is not None and any(f.name == function for f in latest.functions):
            program = latest
        decl = next((f for f in program.functions if f.name == function), None)
        if decl is None:
            raise ScriptError(
                "ReferenceError", f"{program.file} has no function '{function}'", program.file, 1, 0
            )
        # Each scenario call costs about ten Python frames; MAX_CALL_DEPTH calls and
        # MAX_NESTING brackets must fit. Only ever raised, never lowered: another run
        # in this process may rely on it.
        if sys.getrecursionlimit() < _PYTHON_RECURSION_LIMIT:
            sys.setrecursionlimit(_PYTHON_RECURSION_LIMIT)
        try:
            return self._invoke(FunctionRef(decl, program), list(args), decl.name_span, program)
        except RecursionError:
            frame = self._frames[-1] if self._frames else None
            self._frames.clear()
            line = frame.line if frame else 1
            raise ScriptError(
                "RangeError",
                "the scenario nests expressions or calls too deeply to evaluate",
                frame.program.file if frame else program.file,
                line,
                0,
            ) from None

    # --- statements ------------------------------------------------------------

    def _block(self, block: ast.Block, parent: _Scope) -> None:
        self._run_block(block, _Scope(parent))

    def _run_block(self, block: ast.Block, scope: _Scope) -> None:
        """The block's statements through a cursor a reload may retarget."""
        cursor = _Cursor(block)
        cursors = self._frames[-1].cursors
        cursors.append(cursor)
        statement = self._statement
        try:
            while True:
                body = cursor.block.body
                if cursor.index >= len(body):
                    return
                statement(body[cursor.index], scope)
                cursor.index += 1
        finally:
            cursors.pop()

    def _statement(self, stmt: ast.Stmt, scope: _Scope) -> None:
        frame = self._frames[-1]
        while True:
            frame.stmt = stmt
            frame.scope = scope
            try:
                self._exec[type(stmt)](stmt, scope)
                return
            except _Redo as redo:
                stmt = redo.stmt

    def _step(
        self, stmt: ast.Stmt, scope: _Scope, action: Callable[[], Value]
    ) -> tuple[bool, Value]:
        """Run ``action`` as the step of ``stmt``: (ran, result); ran is False if skipped."""
        hook = self.hook
        if hook is None:
            return True, self._guarded(stmt, action)
        if self._hook_suspended:
            # The debugger's eval runs without the hook, but must still stop on abort:
            # an eval of ``while (true) {}`` is no reason for a run that cannot end.
            if self.interrupt_check is not None:
                self.interrupt_check()
            if self._eval_deadline is not None and time.monotonic() > self._eval_deadline:
                # Nor for a pause that answers nothing more: the eval ends, the pause stays.
                raise self._error(
                    "RangeError",
                    f"the eval ran longer than {EVAL_LIMIT_S:g} s and was stopped here",
                    stmt.span,
                )
            return True, self._guarded(stmt, action)
        frame = self._frames[-1]
        while True:
            frame.stmt = stmt
            frame.scope = scope
            step = Step(self, stmt, scope, frame.program)
            if self._approved is not None and self._approved is stmt:
                self._approved = None  # reloaded at its pause: the hook saw it already
            elif hook.before_statement(step) is Directive.SKIP:
                return False, None
            elif frame.stmt is not stmt:  # reloaded while paused before it
                self._approved = frame.stmt
                raise _Redo(frame.stmt)
            try:
                result = self._guarded(stmt, action)
            except ScriptError as err:
                directive = hook.after_statement(step, err)
                if directive is Directive.RETRY:
                    if frame.stmt is not stmt:  # reloaded at the failure: the new version
                        raise _Redo(frame.stmt) from None
                    continue
                if directive is Directive.SKIP:
                    return False, None
                raise
            except (_Break, _Continue, _Return):
                hook.after_statement(step, None)
                raise
            hook.after_statement(step, None)
            return True, result

    def _guarded(self, stmt: ast.Stmt, action: Callable[[], Value]) -> Value:
        """``action()``, with Python's stack running out turned into the statement's own
        RangeError (10,000 chained ``!`` or ``-`` parse fine but recurse to evaluate).

        Caught here, at the innermost statement, the error keeps its file:line:col and
        becomes an ordinary step failure; by the time it reached ``run`` every frame
        would have been popped and the position lost.
        """
        try:
            return action()
        except RecursionError:
            raise self._error(
                "RangeError",
                "the statement nests expressions or calls too deeply to evaluate",
                stmt.span,
            ) from None

    def _var_decl(self, stmt: ast.VarDecl, scope: _Scope) -> None:
        if self._hook_suspended and stmt.name in scope.vars:
            # Typed at a pause (the parser's check never saw it with the scenario):
            # ``const a = 3`` would turn the scenario's ``let a`` into a const for good.
            raise self._error(
                "SyntaxError",
                f"'{stmt.name}' is already declared here: assign it instead ({stmt.name} = ...)",
                stmt.span,
            )

        def run() -> None:
            value = self._value(stmt.init, scope) if stmt.init is not None else None
            scope.vars[stmt.name] = value
            if stmt.kind == "const":
                if scope.consts is None:
                    scope.consts = set()
                scope.consts.add(stmt.name)

        self._step(stmt, scope, run)

    def _assign(self, stmt: ast.Assign, scope: _Scope) -> None:
        self._step(stmt, scope, lambda: self._do_assign(stmt, scope))

    def _do_assign(self, stmt: ast.Assign, scope: _Scope) -> None:
        """JavaScript's order: target, then (for ``+=`` etc.) its current value, then
        the right-hand side; so ``o.n += bump(o)`` adds to ``o.n`` as it was before."""
        target = stmt.target
        if isinstance(target, ast.Identifier):
            owner = scope.find(target.name)
            if owner is None:
                raise self._reference_error(target.name, target.span, scope, assigning=True)
            if owner.consts is not None and target.name in owner.consts:
                raise self._error(
                    "TypeError", f"'{target.name}' is a const and cannot be reassigned", target.span
                )
            current = owner.vars[target.name]
            value = self._value(stmt.value, scope)
            if stmt.op != "=":
                value = self._arith(stmt.op[0], current, value, stmt.span)
            owner.vars[target.name] = value
            return
        container = self._value(target.obj, scope)
        if isinstance(target, ast.Member):
            key: Value = target.name
        else:
            key = self._value(target.index, scope)
        if stmt.op != "=":
            current = self._read_slot(container, key, target.span)
            value = self._arith(stmt.op[0], current, self._value(stmt.value, scope), stmt.span)
        else:
            value = self._value(stmt.value, scope)
        self._write_slot(container, key, value, target.span)

    def _expr_stmt(self, stmt: ast.ExprStmt, scope: _Scope) -> None:
        self._step(stmt, scope, lambda: self._value(stmt.expr, scope))

    def _if(self, stmt: ast.If, scope: _Scope) -> None:
        ran, taken = self._step(stmt, scope, lambda: truthy(self._value(stmt.test, scope)))
        if not ran:
            return
        if taken:
            self._block(stmt.consequent, scope)
        elif isinstance(stmt.alternate, ast.Block):
            self._block(stmt.alternate, scope)
        elif stmt.alternate is not None:
            self._statement(stmt.alternate, scope)

    def _while(self, stmt: ast.While, scope: _Scope) -> None:
        cursor = self._frames[-1].cursors[-1]
        while True:
            test = stmt.test
            ran, go_on = self._step(stmt, scope, lambda: truthy(self._value(test, scope)))  # noqa: B023
            if not ran or not go_on:
                return
            try:
                self._block(stmt.body, scope)
            except _Break:
                return
            except _Continue:
                pass
            stmt = _now(cursor, stmt)
            self._frames[-1].stmt = stmt

    def _for_of(self, stmt: ast.ForOf, scope: _Scope) -> None:
        """Arrays are iterated live, as in JavaScript: elements pushed by the body are
        visited too (a work queue), because the length is read before each step."""
        items: list[Value] = []

        def first() -> bool:
            nonlocal items
            iterable = self._value(stmt.iterable, scope)
            if isinstance(iterable, list):
                items = iterable
            elif isinstance(iterable, str):
                items = list(iterable)
            else:
                raise self._error(
                    "TypeError",
                    f"for...of needs an array or a string, got {type_name(iterable)}",
                    stmt.iterable.span,
                )
            return bool(items)

        cursor = self._frames[-1].cursors[-1]
        ran, go_on = self._step(stmt, scope, first)
        index = 0
        while ran and go_on:
            body_scope = _Scope(scope)
            body_scope.vars[stmt.name] = items[index]
            if stmt.kind == "const":
                body_scope.consts = {stmt.name}
            try:
                self._block(stmt.body, body_scope)
            except _Break:
                return
            except _Continue:
                pass
            index += 1
            stmt = _now(cursor, stmt)
            self._frames[-1].stmt = stmt
            while True:
                try:
                    ran, go_on = self._step(stmt, scope, lambda i=index: i < len(items))  # type: ignore[misc]
                    break
                except _Redo as redo:  # reloaded at this test: the loop goes on as edited
                    stmt = redo.stmt  # type: ignore[assignment]

    def _break(self, stmt: ast.Break, scope: _Scope) -> None:
        ran, _ = self._step(stmt, scope, lambda: None)
        if ran:
            raise _Break()

    def _continue(self, stmt: ast.Continue, scope: _Scope) -> None:
        ran, _ = self._step(stmt, scope, lambda: None)
        if ran:
            raise _Continue()

    def _return(self, stmt: ast.Return, scope: _Scope) -> None:
        value = stmt.value
        ran, result = self._step(
            stmt, scope, lambda: self._value(value, scope) if value is not None else None
        )
        if ran:
            raise _Return(result)

    def _throw(self, stmt: ast.Throw, scope: _Scope) -> None:
        def run() -> None:
            value = self._value(stmt.value, scope)
            raise self._thrown(value, stmt.span)

        self._step(stmt, scope, run)

    def _thrown(self, value: Value, span: ast.Span) -> ScriptError:
        if isinstance(value, str):
            return self._error("ScenarioError", value, span, thrown=value)
        if isinstance(value, dict) and isinstance(value.get("message"), str):
            name = value.get("name")
            return self._error(
                name if isinstance(name, str) and name else "ScenarioError",
                str(value["message"]),
                span,
                thrown=value,
            )
        raise self._error(
            "TypeError",
            f"throw needs a string or an object {{name, message}}, got {type_name(value)}",
            span,
        )

    def _try(self, stmt: ast.Try, scope: _Scope) -> None:
        """After each of its blocks the ``try`` reads itself back from the cursor: a
        reload in the block may have edited its ``catch`` or ``finally`` (not their
        presence, which the reload keeps)."""
        cursor = self._frames[-1].cursors[-1]
        ran, _ = self._step(stmt, scope, lambda: None)
        if not ran:
            return
        pending: BaseException | None = None
        # A ``finally`` that returns (or throws, breaks, continues) discards what the
        # block or the handler threw, as JavaScript does: no failure of the run either.
        discards = _discards(stmt.finalizer)
        catches = stmt.handler is not None or discards
        try:
            try:
                self._block_caught(stmt.block, scope, catches)
            except ScriptError as err:
                stmt = _now(cursor, stmt)
                if stmt.handler is None:
                    raise
                handler_scope = _Scope(scope)
                if stmt.param is not None:
                    handler_scope.vars[stmt.param] = {"name": err.name, "message": err.message}
                self._block_caught(stmt.handler, handler_scope, discards)
        except (ScriptError, _Break, _Continue, _Return) as exc:
            stmt = _now(cursor, stmt)
            if stmt.finalizer is None:
                raise
            pending = exc
        stmt = _now(cursor, stmt)
        if stmt.finalizer is not None:
            self._block(stmt.finalizer, scope)
        if pending is not None:
            raise pending

    def _block_caught(self, block: ast.Block, scope: _Scope, caught: bool) -> None:
        """``block``, its errors counted as caught (``Step.caught``) when ``caught``:
        a handler or a discarding ``finally`` waits for them."""
        if not caught:
            self._block(block, scope)
            return
        self._try_depth += 1
        try:
            self._block(block, scope)
        finally:
            self._try_depth -= 1

    # --- calls -----------------------------------------------------------------

    def _invoke(
        self, ref: FunctionRef, args: list[Value], span: ast.Span, caller: ast.Program
    ) -> Value:
        decl = ref.decl
        count = len(decl.params)
        if len(args) != count:
            raise self._error(
                "TypeError",
                f"{decl.name}() takes {arity_text(count, count)} but got {len(args)}",
                span,
                program=caller,
            )
        if len(self._frames) >= self.max_call_depth:
            chain = [f.fn for f in self._frames] + [decl.name]
            shown = (
                " → ".join([*chain[:4], "…", *chain[-3:]]) if len(chain) > 8 else " → ".join(chain)
            )
            raise self._error(
                "RangeError",
                f"call depth exceeds {self.max_call_depth}: {shown}",
                span,
                program=caller,
            )
        frame = _Frame(decl.name, ref.program, None)
        scope = _Scope(self._globals)
        scope.vars.update(zip(decl.params, args, strict=True))
        self._frames.append(frame)
        try:
            self._run_block(decl.body, scope)
        except _Return as ret:
            return ret.value
        except (_Break, _Continue):  # pragma: no cover - the grammar keeps them in loops
            return None
        finally:
            self._frames.pop()
        return None

    def call_value(self, fn: FunctionValue, args: list[Value], *, caught: bool = False) -> Value:
        """Call a function value from the statement now running (see FunctionValue).

        ``caught``: the built-in calling it retries a failure (``expect_to_pass``), as
        a ``try`` would catch it: its failed steps are written caught (``Step.caught``),
        the debugger does not pause on them, and only the built-in's own failure, at
        its statement, can be the run's."""
        ref = self._newest(fn.ref)
        frame = self._frames[-1] if self._frames else None
        if frame is None or frame.stmt is None:
            span, caller = ref.decl.name_span, ref.program
        else:
            span, caller = frame.stmt.span, frame.program
        if not caught:
            return self._invoke(ref, args, span, caller)
        self._try_depth += 1
        self._retry_depth += 1
        try:
            return self._invoke(ref, args, span, caller)
        finally:
            self._try_depth -= 1
            self._retry_depth -= 1

    def _newest(self, ref: FunctionRef) -> FunctionRef:
        """``ref`` as its file now declares it (a function value outlives a reload)."""
        latest = self._latest.get(ref.program.file)
        if latest is None or latest is ref.program:
            return ref
        decl = next((f for f in latest.functions if f.name == ref.decl.name), None)
        return FunctionRef(decl, latest) if decl is not None else ref

    def _user_function(self, name: str) -> FunctionRef | None:
        """The file-local function or helper ``name`` (in that order), hooks excepted."""
        if name in HOOK_NAMES:
            return None
        program = self._frames[-1].program
        local = next((f for f in program.functions if f.name == name), None)
        return FunctionRef(local, program) if local is not None else self.helpers.get(name)

    def _call(self, node: ast.Call, scope: _Scope) -> Value:
        callee = node.callee
        if isinstance(callee, ast.Member):
            return self._call_method(callee, node, scope)
        if not isinstance(callee, ast.Identifier):
            raise self._error("TypeError", "only named functions can be called", node.span)
        name = callee.name
        if name in HOOK_NAMES:
            raise self._error(
                "TypeError",
                f"{name}() is a hook: unotest runs it {hook_when(name)}, it cannot be called",
                callee.span,
            )
        ref = self._user_function(name)
        if ref is not None:
            args = [self._function_argument(arg, scope) for arg in node.args]
            return self._invoke(ref, args, callee.span, self._frames[-1].program)
        builtin = self.builtins.get(name)
        if builtin is None:
            owner = scope.find(name)
            if owner is not None:
                held = owner.vars[name]
                hint = (
                    f" (it holds {held.render()}: call {held.name}(...) by its name)"
                    if isinstance(held, CallableValue)
                    else ""
                )
                raise self._error(
                    "TypeError", f"'{name}' is a variable, not a function{hint}", callee.span
                )
            raise self._reference_error(name, callee.span, scope, calling=True)
        return self._call_builtin(name, builtin, node, scope)

    def _call_method(self, callee: ast.Member, node: ast.Call, scope: _Scope) -> Value:
        target = self._value(callee.obj, scope)
        args = [self._value(arg, scope) for arg in node.args]
        try:
            return call_method(target, callee.name, args)
        except BuiltinError as err:
            raise self._error(err.name, err.message, callee.name_span) from None
        except (ScriptError, Interrupt):
            raise
        except Exception as err:
            raise self._error("Error", f"{type(err).__name__}: {err}", callee.name_span) from None

    def _call_builtin(self, name: str, builtin: Builtin, node: ast.Call, scope: _Scope) -> Value:
        callee = node.callee
        at = builtin.function_at
        args = [
            self._function_argument(arg, scope) if i == at else self._value(arg, scope)
            for i, arg in enumerate(node.args)
        ]
        if len(args) < builtin.min_args or (
            builtin.max_args is not None and len(args) > builtin.max_args
        ):
            raise self._error(
                "TypeError",
                f"{name}() takes {arity_text(builtin.min_args, builtin.max_args)} "
                f"but got {len(args)}",
                callee.span,
            )
        try:
            return _apply(builtin, args)
        except BuiltinError as err:
            # A soft failure inside expect_to_pass's attempt fails the attempt (retried),
            # as Playwright's expect.soft inside toPass does.
            soft = err.soft and not self._retry_depth
            message = err.message + _matcher_hint(err, args)
            raise self._error(err.name, message, node.span, soft=soft) from None

    def _function_argument(self, node: ast.Expr, scope: _Scope) -> Value:
        """An argument where a function may be passed: a built-in's bare name is a
        :class:`BuiltinValue` there (elsewhere it is a TypeError, see _identifier)."""
        if isinstance(node, ast.Identifier):
            name = node.name
            builtin = self.builtins.get(name)
            if (
                builtin is not None
                and name not in HOOK_NAMES
                and scope.find(name) is None
                and self._user_function(name) is None
            ):
                return BuiltinValue(builtin)
        return self._value(node, scope)

    # --- expressions -----------------------------------------------------------

    def _value(self, node: ast.Expr, scope: _Scope) -> Value:
        return self._eval[type(node)](node, scope)

    def _literal(self, node: ast.NumberLit | ast.StringLit | ast.BoolLit, scope: _Scope) -> Value:
        return node.value

    def _template(self, node: ast.TemplateLit, scope: _Scope) -> Value:
        out = [node.quasis[0]]
        for expr, quasi in zip(node.exprs, node.quasis[1:], strict=True):
            out.append(to_display(self._value(expr, scope)))
            out.append(quasi)
        return "".join(out)

    def _regex(self, node: ast.RegexLit, scope: _Scope) -> Value:
        return RegexValue(node.source, node.flags, node.pattern)

    def _array(self, node: ast.ArrayLit, scope: _Scope) -> Value:
        return [self._value(item, scope) for item in node.elements]

    def _object(self, node: ast.ObjectLit, scope: _Scope) -> Value:
        return {prop.key: self._value(prop.value, scope) for prop in node.properties}

    def _identifier(self, node: ast.Identifier, scope: _Scope) -> Value:
        owner = scope.find(node.name)
        if owner is not None:
            return owner.vars[node.name]
        ref = self._user_function(node.name)
        if ref is not None:
            return FunctionValue(ref, self)
        if node.name in HOOK_NAMES:
            raise self._error(
                "TypeError",
                f"'{node.name}' is a hook: unotest runs it {hook_when(node.name)}, "
                "it is not a value",
                node.span,
            )
        if node.name in self.builtins:
            raise self._error("TypeError", builtin_value_message(node.name), node.span)
        raise self._reference_error(node.name, node.span, scope)

    def _member(self, node: ast.Member, scope: _Scope) -> Value:
        obj = self._value(node.obj, scope)
        return self._read_slot(obj, node.name, node.name_span, member=True)

    def _index(self, node: ast.Index, scope: _Scope) -> Value:
        obj = self._value(node.obj, scope)
        key = self._value(node.index, scope)
        return self._read_slot(obj, key, node.span)

    def _object_key(self, key: Value, span: ast.Span) -> str:
        """``obj[1]`` is ``obj["1"]``, as in JavaScript; other non-strings are refused."""
        if isinstance(key, float | int) and not isinstance(key, bool):
            key = format_number(float(key))
        if not isinstance(key, str):
            raise self._error("TypeError", f"object keys are strings, not {type_name(key)}", span)
        return key

    def _read_slot(self, obj: Value, key: Value, span: ast.Span, member: bool = False) -> Value:
        if isinstance(obj, dict):
            return obj.get(self._object_key(key, span))
        if isinstance(obj, list | str) and not member:
            if not isinstance(key, float | int) or isinstance(key, bool):
                raise self._error(
                    "TypeError",
                    f"{type_name(obj)} index must be a number, not {type_name(key)}",
                    span,
                )
            if math.isnan(key) or not float(key).is_integer() or not 0 <= key < len(obj):
                return None
            return obj[int(key)]
        if obj is None:
            raise self._error("TypeError", f"cannot read {_key_text(key)} of null", span)
        if isinstance(key, str):
            try:
                return get_property(obj, key)
            except BuiltinError as err:
                raise self._error(err.name, err.message, span) from None
        raise self._error("TypeError", f"{type_name(obj)} cannot be indexed", span)

    def _write_slot(self, obj: Value, key: Value, value: Value, span: ast.Span) -> None:
        if is_frozen(obj):
            raise self._error(
                "TypeError",
                f"cannot set {_key_text(key)}: this {type_name(obj)} is a helper const, frozen "
                + (
                    "(copy it with .slice() to change the copy)"
                    if isinstance(obj, list)
                    else "(build a new object to change it)"
                ),
                span,
            )
        if isinstance(obj, dict):
            obj[self._object_key(key, span)] = value
            return
        if isinstance(obj, list) and isinstance(key, float | int) and not isinstance(key, bool):
            if not float(key).is_integer() or not 0 <= key <= len(obj):
                raise self._error(
                    "RangeError",
                    f"index {render(key)} is outside the array (length {len(obj)})",
                    span,
                )
            if key == len(obj):
                obj.append(value)
            else:
                obj[int(key)] = value
            return
        if obj is None:
            raise self._error("TypeError", f"cannot set {_key_text(key)} of null", span)
        raise self._error(
            "TypeError", f"cannot assign {_key_text(key)} of {_a(type_name(obj))}", span
        )

    def _unary(self, node: ast.Unary, scope: _Scope) -> Value:
        value = self._value(node.operand, scope)
        if node.op == "!":
            return not truthy(value)
        if isinstance(value, float | int) and not isinstance(value, bool):
            return -float(value) if node.op == "-" else float(value)
        hint = " (convert with num(...))" if isinstance(value, str) else ""
        raise self._error(
            "TypeError",
            f"unary '{node.op}' needs a number, got {type_name(value)}{hint}",
            node.span,
        )

    def _binary(self, node: ast.Binary, scope: _Scope) -> Value:
        left = self._value(node.left, scope)
        right = self._value(node.right, scope)
        op = node.op
        if op in ("===", "==", "!==", "!="):
            matcher = left if type(left) is MatcherValue else right
            if isinstance(matcher, MatcherValue):
                shown = matcher.render()
                raise self._error(
                    "TypeError",
                    f"'{op}' compares values, not with a matcher ({shown}): {MATCHER_USE} "
                    f"(expect_equal(x, {shown}))",
                    node.op_span,
                )
            equal = strict_equal(left, right)
            return equal if op[0] == "=" else not equal
        if op in ("<", "<=", ">", ">="):
            both_numbers = _is_number(left) and _is_number(right)
            if not both_numbers and not (isinstance(left, str) and isinstance(right, str)):
                raise self._error("TypeError", _bad_types(op, left, right), node.op_span)
            a, b = left, right
            if op == "<":
                return a < b  # type: ignore[operator]
            if op == "<=":
                return a <= b  # type: ignore[operator]
            if op == ">":
                return a > b  # type: ignore[operator]
            return a >= b  # type: ignore[operator]
        return self._arith(op, left, right, node.op_span)

    def _arith(self, op: str, left: Value, right: Value, span: ast.Span) -> Value:
        if op == "+" and (isinstance(left, str) or isinstance(right, str)):
            return to_display(left) + to_display(right)
        if not (_is_number(left) and _is_number(right)):
            hint = ""
            if op != "+" and (isinstance(left, str) or isinstance(right, str)):
                hint = " (convert with num(...))"
            raise self._error("TypeError", _bad_types(op, left, right) + hint, span)
        a = float(left)  # type: ignore[arg-type]
        b = float(right)  # type: ignore[arg-type]
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if op == "/":
            if b == 0:
                if a == 0 or math.isnan(a):
                    return math.nan
                return math.copysign(math.inf, a) * math.copysign(1.0, b)
            return a / b
        if op == "%":
            if b == 0 or math.isinf(a) or math.isnan(a) or math.isnan(b):
                return math.nan
            return math.fmod(a, b)
        raise AssertionError(op)  # pragma: no cover

    def _logical(self, node: ast.Logical, scope: _Scope) -> Value:
        left = self._value(node.left, scope)
        if node.op == "&&":
            return self._value(node.right, scope) if truthy(left) else left
        if node.op == "||":
            return left if truthy(left) else self._value(node.right, scope)
        return left if left is not None else self._value(node.right, scope)

    def _conditional(self, node: ast.Conditional, scope: _Scope) -> Value:
        if truthy(self._value(node.test, scope)):
            return self._value(node.consequent, scope)
        return self._value(node.alternate, scope)

    # --- debugger reload -------------------------------------------------------

    def reload(
        self,
        programs: Mapping[str, ast.Program],
        helpers: Mapping[str, FunctionRef],
        consts: Mapping[str, Value],
        maps: Mapping[str, StatementMap] | None = None,
    ) -> ReloadOutcome:
        """Go on in edited code: ``programs`` are the new versions of files (by file),
        ``helpers`` and ``consts`` the new helper table. Only at a pause, from the
        interpreter's own thread.

        Every frame is mapped first (:func:`dsl.reload.map_frame`); one that cannot be
        raises :class:`~dsl.reload.ReloadError` and nothing has changed. Then the
        cursors are retargeted, so each frame goes on in its new body, and calls made
        from now on find the new functions. ``maps`` may hold a :class:`StatementMap`
        already made per file (one is made for any other file a frame runs in).
        """
        known: dict[str, StatementMap] = dict(maps or {})
        plans: list[FramePlan | None] = []
        for frame in self._frames:
            file = frame.program.file
            new = programs.get(file)
            if new is None:
                plans.append(None)
                continue
            statements = known.get(file)
            if statements is None or statements.old is not frame.program:
                statements = known[file] = StatementMap(frame.program, new)
            assert frame.stmt is not None, "reload outside a pause"
            blocks = tuple((cursor.block, cursor.index) for cursor in frame.cursors)
            plans.append(
                map_frame(
                    FramePosition(frame.fn, frame.program, blocks, frame.stmt), new, statements
                )
            )
        running: list[str] = []
        for frame, plan in zip(self._frames, plans, strict=True):
            if plan is None:
                continue
            if plan.stmt is not frame.stmt:
                running.append(frame.fn)
            frame.program = plan.program
            for cursor, (block, index) in zip(frame.cursors, plan.blocks, strict=True):
                cursor.block, cursor.index = block, index
            frame.stmt = plan.stmt
        self.helpers = helpers
        self._latest.update(programs)
        self._globals.vars = dict(consts)
        self._globals.consts = set(consts)
        return ReloadOutcome(sum(p.skipped for p in plans if p is not None), tuple(running))

    # --- debugger eval ---------------------------------------------------------

    def _evaluate_here(self, source: str, scope: _Scope) -> Value:
        outer = self._eval_deadline
        if outer is None:
            self._eval_deadline = time.monotonic() + EVAL_LIMIT_S
        try:
            return self._evaluate_source(source, scope)
        finally:
            self._eval_deadline = outer

    def _evaluate_source(self, source: str, scope: _Scope) -> Value:
        from dsl.parser import STATEMENT_STARTS, parse_expression, parse_statements

        try:
            expr = parse_expression(source, "<eval>")
        except ScenarioSyntaxError as as_expression:
            try:
                stmts = parse_statements(source, "<eval>")
            except ScenarioSyntaxError as as_statements:
                # ``1 +`` is an expression cut short, not a statement that "cannot start
                # with '1'": what starts as no statement is said as the expression.
                if STATEMENT_STARTS in str(as_statements):
                    raise as_expression from None
                raise
            self._hook_suspended += 1
            frame = self._frames[-1]
            paused_at = (frame.stmt, frame.scope)
            try:
                # A block of its own: a loop typed here reads itself back from its cursor.
                span = stmts[0].span.cover(stmts[-1].span)
                self._run_block(ast.Block(stmts, span), scope)
            except (_Break, _Continue, _Return) as exc:
                raise self._error(
                    "SyntaxError",
                    f"'{type(exc).__name__[1:].lower()}' cannot be evaluated here",
                    stmts[0].span,
                ) from None
            finally:
                # The paused frame still stands where it paused, not at the eval's line.
                frame.stmt, frame.scope = paused_at
                self._hook_suspended -= 1
            return None
        self._hook_suspended += 1
        try:
            return self._value(expr, scope)
        finally:
            self._hook_suspended -= 1

    # --- errors ----------------------------------------------------------------

    def _error(
        self,
        name: str,
        message: str,
        span: ast.Span,
        thrown: Value = None,
        program: ast.Program | None = None,
        *,
        soft: bool = False,
    ) -> ScriptError:
        file = (program or self._frames[-1].program).file if (program or self._frames) else "?"
        chain = self._call_chain()
        return ScriptError(name, message, file, span.line, span.col, chain, thrown, soft=soft)

    def _call_chain(self) -> tuple[CallFrame, ...]:
        return tuple(CallFrame(f.fn, f.program.file, f.line) for f in self._frames)

    def _reference_error(
        self,
        name: str,
        span: ast.Span,
        scope: _Scope,
        calling: bool = False,
        assigning: bool = False,
    ) -> ScriptError:
        candidates: set[str] = set()
        s: _Scope | None = scope
        while s is not None:
            candidates.update(s.vars)
            s = s.parent
        if calling:
            candidates = set(self.builtins) | (set(self.helpers) - set(HOOK_NAMES))
            candidates.update(f.name for f in self._frames[-1].program.functions)
        hint = suggestion(name, candidates)
        if assigning:
            message = f"'{name}' is not declared: declare it with let{hint}"
        elif calling:
            message = f"'{name}' is not a function, helper or built-in{hint}"
        else:
            message = f"'{name}' is not defined{hint}"
        return self._error("ReferenceError", message, span)


def _is_number(value: Value) -> bool:
    return isinstance(value, float | int) and not isinstance(value, bool)


def _matcher_hint(err: BuiltinError, args: list[Value]) -> str:
    """A built-in refusing a matcher it was given says what matchers are for."""
    if err.name != "TypeError" or "got matcher" not in err.message:
        return ""
    matcher = next((arg for arg in args if isinstance(arg, MatcherValue)), None)
    return f" ({matcher.render()}: {MATCHER_USE})" if matcher is not None else ""


def _key_text(key: Value) -> str:
    return f"'{key}'" if isinstance(key, str) else f"[{render(key)}]"


def _a(noun: str) -> str:
    """``a string``, ``an array``: the noun with its indefinite article."""
    return f"an {noun}" if noun[:1].lower() in "aeiou" else f"a {noun}"


__all__ += ["HostValue"]
