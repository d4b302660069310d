"""Static checks that ``unotest check`` runs before any browser starts.

The interpreter would find these problems too, but only when (and if) the faulty
line runs, possibly after a minute of clicking. Here every file is read once and
every problem is reported: unknown functions and variables (with a suggestion),
wrong argument counts of built-ins and helpers, assignments to undeclared names or
constants, ``break``/``continue`` outside a loop, a built-in named as a value where no
function is passed (a forgotten ``()``, ``let u = url``), and the function ``expect_poll``
or ``expect_to_pass`` calls not callable with its ``args``.

The same walk also answers :func:`function_references`: which names each function
calls or reads that are none of its own variables, the edges of ``unotest watch``'s
dependency graph (``runner/watch/graph.py``), so the graph sees exactly the calls the
checker sees.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from dsl import ast
from dsl.builtins import FUNCTION_AT, arity_problem
from dsl.errors import Diagnostic, suggestion
from dsl.interpreter import HOOK_NAMES, builtin_value_message, hook_when

__all__ = ["Arity", "Diagnostic", "FunctionReferences", "check_program", "function_references"]

Arity = tuple[int, int | None]


class _Scope:
    __slots__ = ("ahead", "consts", "names", "parent")

    def __init__(self, parent: _Scope | None) -> None:
        self.names: set[str] = set()
        self.consts: set[str] = set()
        self.ahead: dict[str, int] = {}
        """Names a let or const of this block declares further down (with its line):
        from the block's start they are its own, not an outer one, as in JavaScript."""
        self.parent = parent

    def dead_zone(self, name: str) -> int | None:
        """The line of the declaration ``name`` is read before, in its temporal dead
        zone (``let x = 1; if (c) { log(x); let x = 2 }``); ``None`` when it is not."""
        scope: _Scope | None = self
        while scope is not None:
            if name in scope.names:
                return None
            if name in scope.ahead:
                return scope.ahead[name]
            scope = scope.parent
        return None

    def declare(self, name: str, kind: str) -> None:
        self.names.add(name)
        if kind == "const":
            self.consts.add(name)

    def lookup(self, name: str) -> _Scope | None:
        scope: _Scope | None = self
        while scope is not None:
            if name in scope.names:
                return scope
            scope = scope.parent
        return None

    def all_names(self) -> set[str]:
        out: set[str] = set()
        scope: _Scope | None = self
        while scope is not None:
            out |= scope.names
            scope = scope.parent
        return out


class _Checker:
    def __init__(
        self,
        program: ast.Program,
        helpers: Mapping[str, Arity],
        builtins: Mapping[str, Arity],
        consts: Collection[str] = (),
        options: Mapping[str, Collection[str]] | None = None,
    ) -> None:
        self.program = program
        self.options = options or {}
        self.globals = _Scope(None)
        for name in consts:
            self.globals.declare(name, "const")
        self.locals: dict[str, Arity] = {
            f.name: (len(f.params), len(f.params)) for f in program.functions
        }
        self.helpers = helpers
        self.builtins = builtins
        self.found: list[Diagnostic] = []
        self.loop_depth = 0
        self.function_args: set[int] = set()
        """The ids of the arguments where a function is passed (a built-in's name there
        is a value): those of a file function or helper, the first of expect_poll."""

    def report(self, span: ast.Span, message: str) -> None:
        source = self.program.source
        start = source.rfind("\n", 0, span.start) + 1
        end = source.find("\n", span.start)
        line = source[start : end if end >= 0 else len(source)]
        self.found.append(Diagnostic(self.program.file, span.line, span.col, message, line))

    def function(self, fn: ast.FunctionDecl) -> None:
        scope = _Scope(self.globals)
        scope.names.update(fn.params)
        self.loop_depth = 0
        self.statements(fn.body.body, scope)

    def block(self, block: ast.Block, parent: _Scope) -> None:
        self.statements(block.body, _Scope(parent))

    def statements(self, body: tuple[ast.Stmt, ...], scope: _Scope) -> None:
        for stmt in body:
            if isinstance(stmt, ast.VarDecl) and stmt.name not in scope.names:
                scope.ahead.setdefault(stmt.name, stmt.span.line)
        for stmt in body:
            self.statement(stmt, scope)

    def statement(self, stmt: ast.Stmt, scope: _Scope) -> None:
        if isinstance(stmt, ast.VarDecl):
            if stmt.init is not None:
                self.expr(stmt.init, scope)
            scope.ahead.pop(stmt.name, None)
            scope.declare(stmt.name, stmt.kind)
        elif isinstance(stmt, ast.Assign):
            self.assign(stmt, scope)
        elif isinstance(stmt, ast.ExprStmt):
            self.expr(stmt.expr, scope)
        elif isinstance(stmt, ast.If):
            # A loop, not recursion, down an ``else if`` chain: the chain is not
            # bracket nesting, so MAX_NESTING does not bound it (3,000 links parse fine).
            branch: ast.If | ast.Block | None = stmt
            while isinstance(branch, ast.If):
                self.expr(branch.test, scope)
                self.block(branch.consequent, scope)
                branch = branch.alternate
            if branch is not None:
                self.block(branch, scope)
        elif isinstance(stmt, ast.ForOf | ast.While):
            self.loop(stmt, scope)
        elif isinstance(stmt, ast.Break | ast.Continue):
            if self.loop_depth == 0:
                word = "break" if isinstance(stmt, ast.Break) else "continue"
                self.report(stmt.span, f"SyntaxError: '{word}' can only be used inside a loop")
        elif isinstance(stmt, ast.Return):
            if stmt.value is not None:
                self.expr(stmt.value, scope)
        elif isinstance(stmt, ast.Throw):
            self.expr(stmt.value, scope)
        elif isinstance(stmt, ast.Try):
            self.try_statement(stmt, scope)

    def assign(self, stmt: ast.Assign, scope: _Scope) -> None:
        self.expr(stmt.value, scope)
        target = stmt.target
        if not isinstance(target, ast.Identifier):
            self.expr(target, scope)
            return
        declared_at = scope.dead_zone(target.name)
        if declared_at is not None:
            self.dead_zone(target, declared_at)
            return
        owner = scope.lookup(target.name)
        if owner is None:
            self.report(
                target.span,
                f"ReferenceError: '{target.name}' is not declared: declare it with let"
                + suggestion(target.name, scope.all_names()),
            )
        elif target.name in owner.consts:
            self.report(
                target.span,
                f"TypeError: '{target.name}' is a const and cannot be reassigned",
            )

    def loop(self, stmt: ast.ForOf | ast.While, scope: _Scope) -> None:
        if isinstance(stmt, ast.ForOf):
            self.expr(stmt.iterable, scope)
            inner = _Scope(scope)
            inner.declare(stmt.name, stmt.kind)
        else:
            self.expr(stmt.test, scope)
            inner = scope
        self.loop_depth += 1
        self.block(stmt.body, inner)
        self.loop_depth -= 1

    def try_statement(self, stmt: ast.Try, scope: _Scope) -> None:
        self.block(stmt.block, scope)
        if stmt.handler is not None:
            handler_scope = _Scope(scope)
            if stmt.param is not None:
                handler_scope.names.add(stmt.param)
            self.block(stmt.handler, handler_scope)
        if stmt.finalizer is not None:
            self.block(stmt.finalizer, scope)

    def expr(self, node: ast.Expr, scope: _Scope) -> None:
        # An explicit stack, because an operator chain can be thousands of nodes deep.
        stack: list[ast.Expr] = [node]
        while stack:
            node = stack.pop()
            if isinstance(node, ast.Identifier):
                declared_at = scope.dead_zone(node.name)
                if declared_at is not None:
                    self.dead_zone(node, declared_at)
                elif scope.lookup(node.name) is None:
                    self.name_as_value(node, scope)
            elif isinstance(node, ast.Call):
                stack.extend(reversed(node.args))
                if isinstance(node.callee, ast.Identifier):
                    self.call(node, node.callee, scope)
                    self.passed_functions(node, node.callee.name, scope)
                else:
                    stack.append(node.callee)
            elif isinstance(node, ast.Member):
                stack.append(node.obj)
            elif isinstance(node, ast.Index):
                stack.extend((node.index, node.obj))
            elif isinstance(node, ast.Unary):
                stack.append(node.operand)
            elif isinstance(node, ast.Binary | ast.Logical):
                stack.extend((node.right, node.left))
            elif isinstance(node, ast.Conditional):
                stack.extend((node.alternate, node.consequent, node.test))
            elif isinstance(node, ast.ArrayLit):
                stack.extend(reversed(node.elements))
            elif isinstance(node, ast.ObjectLit):
                stack.extend(prop.value for prop in reversed(node.properties))
            elif isinstance(node, ast.TemplateLit):
                stack.extend(reversed(node.exprs))

    def dead_zone(self, node: ast.Identifier, declared_at: int) -> None:
        self.report(
            node.span,
            f"ReferenceError: '{node.name}' is used before its declaration at line "
            f"{declared_at}: a let or const is the block's own from the block's start "
            "(declare it earlier, or rename one of the two)",
        )

    def function_arity(self, name: str) -> Arity | None:
        """The arity of the file-local function or helper ``name`` (hooks are neither)."""
        if name in HOOK_NAMES:
            return None
        return self.locals.get(name) or self.helpers.get(name)

    def name_as_value(self, node: ast.Identifier, scope: _Scope) -> None:
        """A name that is no variable: a function of the file or a helper is a value, and
        so is a built-in where a function is passed (:attr:`function_args`)."""
        name = node.name
        if self.function_arity(name) is not None:
            return
        if name in HOOK_NAMES:
            self.report(
                node.span,
                f"TypeError: '{name}' is a hook: unotest runs it {hook_when(name)}, "
                "it is not a value",
            )
        elif name in self.builtins:
            if id(node) not in self.function_args:
                self.report(node.span, f"TypeError: {builtin_value_message(name)}")
        else:
            hint = suggestion(name, scope.all_names())
            self.report(node.span, f"ReferenceError: '{name}' is not defined{hint}")

    def passed_functions(self, node: ast.Call, name: str, scope: _Scope) -> None:
        """Note the arguments of ``node`` where a function is passed, and check the one
        expect_poll, expect_to_pass and step call."""
        if name in HOOK_NAMES or scope.lookup(name) is not None:
            return
        if self.function_arity(name) is not None:
            self.function_args.update(id(arg) for arg in node.args)
        elif name in FUNCTION_AT and name in self.builtins and len(node.args) > FUNCTION_AT[name]:
            self.function_args.add(id(node.args[FUNCTION_AT[name]]))
            self.polled(name, node, scope)

    def polled(self, taker: str, node: ast.Call, scope: _Scope) -> None:
        """expect_poll's (expect_to_pass's, step's) function: passed by name, and
        callable with its ``args`` (none unless an options object literal gives an
        array literal)."""
        at = FUNCTION_AT[taker]
        arg = node.args[at]
        if isinstance(arg, ast.Call) and isinstance(arg.callee, ast.Identifier):
            if self.calls_no_function(arg.callee.name, scope):
                fn = arg.callee.name
                self.report(
                    arg.span,
                    f"TypeError: {taker}() takes the function itself: write "
                    f"{taker}({'..., ' * at}{fn}, ...) without the ()",
                )
            return
        if not isinstance(arg, ast.Identifier) or scope.lookup(arg.name) is not None:
            return
        arity = self.function_arity(arg.name) or self.builtins.get(arg.name)
        options_at = _OPTIONS_AT[taker]
        given = _literal_args(node.args[options_at]) if len(node.args) > options_at else 0
        if arity is None or given is None:
            return
        problem = arity_problem(taker, arg.name, given, *arity)
        if problem is not None:
            self.report(arg.span, f"TypeError: {problem}")

    def calls_no_function(self, fn: str, scope: _Scope) -> bool:
        """Whether ``fn(...)`` cannot give a function, so passing its result is a slip:
        a built-in (none returns one), or a file function whose every ``return`` is a
        plain value (a function may return one, and polling its result is then right).
        A helper's body is not here: its run says so instead."""
        if scope.lookup(fn) is not None or fn in HOOK_NAMES:
            return False
        declared = next((f for f in self.program.functions if f.name == fn), None)
        if declared is not None:
            return _returns_no_function(declared)
        return fn not in self.helpers and fn in self.builtins

    def call(self, node: ast.Call, callee: ast.Identifier, scope: _Scope) -> None:
        name = callee.name
        if name in HOOK_NAMES:
            self.report(
                callee.span,
                f"TypeError: {name}() is a hook: unotest runs it {hook_when(name)}, "
                "it cannot be called",
            )
            return
        arity = self.locals.get(name) or self.helpers.get(name) or self.builtins.get(name)
        if arity is None:
            if scope.lookup(name) is not None:
                self.report(
                    callee.span,
                    f"TypeError: '{name}' is a variable, not a function: calls name their "
                    "function (a function it holds is called by its own name)",
                )
                return
            known = set(self.locals) | set(self.helpers) | set(self.builtins)
            self.report(
                callee.span,
                f"ReferenceError: '{name}' is not a function, helper or built-in"
                + suggestion(name, known),
            )
            return
        low, high = arity
        count = len(node.args)
        if count < low or (high is not None and count > high):
            if high is None:
                wanted = f"at least {low}"
            elif low == high:
                wanted = f"{low}"
            else:
                wanted = f"{low} to {high}"
            plural = "" if wanted in ("1", "at least 1") else "s"  # not "at least 1 arguments"
            self.report(
                callee.span, f"TypeError: {name}() takes {wanted} argument{plural} but got {count}"
            )
            return
        if count > low and name not in self.locals and name not in self.helpers:
            self.option_keys(name, node.args[-1])

    def option_keys(self, name: str, last: ast.Expr) -> None:
        """A built-in's options object, written as a literal: every key one it takes."""
        known = self.options.get(name)
        if known is None or not isinstance(last, ast.ObjectLit):
            return
        for prop in last.properties:
            if prop.key not in known:
                self.report(
                    prop.span,
                    f"TypeError: {name}() has no option '{prop.key}'"
                    f"{suggestion(prop.key, known)} (its options: {', '.join(sorted(known))})",
                )


_OPTIONS_AT = {"expect_poll": 2, "expect_to_pass": 1, "step": 2}
"""Where the options object of each built-in that takes a function is."""


def _literal_args(options: ast.Expr) -> int | None:
    """How many ``args`` an options object written as a literal gives: 0 without the
    key, the length of an array literal, ``None`` when it cannot be told."""
    if not isinstance(options, ast.ObjectLit):
        return None
    given = next((prop.value for prop in options.properties if prop.key == "args"), None)
    if given is None:
        return 0
    return len(given.elements) if isinstance(given, ast.ArrayLit) else None


def check_program(
    program: ast.Program,
    helpers: Mapping[str, Arity],
    builtins: Mapping[str, Arity],
    consts: Collection[str] = (),
    options: Mapping[str, Collection[str]] | None = None,
) -> list[Diagnostic]:
    """Every static problem of one parsed file, in source order; ``consts`` are the
    names of the helper files' consts, which every function sees; ``options``, the keys
    each built-in's options object takes (its last argument, when it is given and
    written as an object literal)."""
    checker = _Checker(program, helpers, builtins, consts, options)
    for fn in program.functions:
        checker.function(fn)
    return sorted(checker.found, key=lambda d: (d.line, d.col))


_PLAIN_VALUES = (
    ast.NumberLit,
    ast.StringLit,
    ast.BoolLit,
    ast.NullLit,
    ast.TemplateLit,
    ast.RegexLit,
    ast.ArrayLit,
    ast.ObjectLit,
    ast.Binary,
    ast.Unary,
)


def _returns_no_function(fn: ast.FunctionDecl) -> bool:
    """No ``return`` of ``fn`` can give a function: each returns nothing or a literal,
    a template or an operator's result (a name, a call or a member could)."""
    blocks: list[ast.Block] = [fn.body]
    while blocks:
        for stmt in blocks.pop().body:
            if isinstance(stmt, ast.Return):
                if stmt.value is not None and not isinstance(stmt.value, _PLAIN_VALUES):
                    return False
            elif isinstance(stmt, ast.If):
                blocks.append(stmt.consequent)
                alternate = stmt.alternate
                if isinstance(alternate, ast.If):
                    blocks.append(ast.Block((alternate,), alternate.span))
                elif alternate is not None:
                    blocks.append(alternate)
            elif isinstance(stmt, ast.ForOf | ast.While):
                blocks.append(stmt.body)
            elif isinstance(stmt, ast.Try):
                blocks += [b for b in (stmt.block, stmt.handler, stmt.finalizer) if b is not None]
    return True


@dataclass(frozen=True, slots=True)
class FunctionReferences:
    """The names one function of a file uses that it does not declare itself."""

    name: str
    """The function's name."""
    calls: frozenset[str]
    """Names called as ``name(...)`` (a file function, a helper, a built-in, or a name
    that resolves to nothing); a call through one of the function's own variables or
    parameters is not one."""
    reads: frozenset[str]
    """Names read as values that no variable or parameter in scope declares: a
    function passed by name (``expect_poll(ready, ...)``), a helper const, a typo."""

    @property
    def names(self) -> frozenset[str]:
        """Every name the function depends on, called or read."""
        return self.calls | self.reads


class _Recorder(_Checker):
    """The checker's walk, recording calls and free reads instead of judging them.

    No consts are declared, so a read of a helper const reaches ``name_as_value`` and
    is recorded; nothing is reported (problems are :func:`check_program`'s business)."""

    def __init__(self, program: ast.Program) -> None:
        super().__init__(program, {}, {}, ())
        self.calls: set[str] = set()
        self.reads: set[str] = set()

    def call(self, node: ast.Call, callee: ast.Identifier, scope: _Scope) -> None:
        if scope.lookup(callee.name) is None:
            self.calls.add(callee.name)

    def name_as_value(self, node: ast.Identifier, scope: _Scope) -> None:
        self.reads.add(node.name)

    def report(self, span: ast.Span, message: str) -> None:
        """Nothing: the references are wanted, not the problems."""

    def references(self, fn: ast.FunctionDecl) -> FunctionReferences:
        self.calls, self.reads = set(), set()
        self.function(fn)
        return FunctionReferences(fn.name, frozenset(self.calls), frozenset(self.reads))


def function_references(program: ast.Program) -> list[FunctionReferences]:
    """What each function of one parsed file uses, in declaration order, walked as
    :func:`check_program` walks it (nested blocks, loops, ``try``, every expression,
    ``expect_poll``'s function). Names are not resolved: the caller decides what a
    name means (the file's own function, a helper, a helper const, a built-in)."""
    recorder = _Recorder(program)
    return [recorder.references(fn) for fn in program.functions]
