"""Source text → :mod:`dsl.ast`, with syntax errors a person can act on.

The callbacks here build the tree as the LALR parser reduces, so no Lark tree is ever
materialised and no recursion happens, however deep the nesting. Input that parses
goes through our own loop over Lark's tables and lexers (:mod:`dsl.lalr_loop`, tokens
as tuples); anything it does not take is parsed again by Lark itself, whose every
exception is converted here, once, into :class:`~dsl.errors.ScenarioSyntaxError` with
plain words for the usual mistakes.
"""

from __future__ import annotations

import functools
import itertools
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NoReturn, cast

from lark import Lark, Token, Transformer
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedInput, UnexpectedToken
from lark.utils import TextSlice

from dsl import ast
from dsl.errors import ScenarioSyntaxError
from dsl.jsregex import RegexTranslationError, compile_js_regex
from dsl.lalr_loop import FastLoop, Tok, Unexpected
from dsl.lexer import (
    TEMPLATE_END,
    TEMPLATE_START,
    EscapeError,
    TemplateContextualLexer,
    code_marks,
    cook,
    scan_template,
)

__all__ = [
    "KEYWORDS",
    "MAX_NESTING",
    "MAX_TEMPLATE_NESTING",
    "parse_expression",
    "parse_program",
    "parse_statements",
]

KEYWORDS = frozenset(
    [
        "function",
        "let",
        "const",
        "if",
        "else",
        "for",
        "of",
        "while",
        "break",
        "continue",
        "return",
        "try",
        "catch",
        "finally",
        "throw",
        "true",
        "false",
        "null",
    ]
)
# Words JavaScript reserves that the language does not use: naming a variable after
# one would confuse every reader, and most are a sign of JavaScript we do not support.
_RESERVED = KEYWORDS | frozenset(
    [
        "var",
        "new",
        "class",
        "typeof",
        "instanceof",
        "delete",
        "void",
        "this",
        "super",
        "import",
        "export",
        "default",
        "switch",
        "case",
        "do",
        "in",
        "yield",
        "await",
        "async",
        "with",
        "debugger",
        "enum",
        "undefined",
    ]
)
MAX_NESTING = 200
"""Deepest nesting of brackets and blocks the parser accepts.

Counted on the text before parsing (strings, comments and regexes skipped, a template's
``${`` counting as a bracket), so 10,000 parentheses give a clear error instead of a
crash. Operator chains (``!!!…x``, ``a ? b : c ? …``) are not counted: the parser
builds them without recursion and the interpreter reports a tree too deep to evaluate
as a RangeError.
"""
_MAX_STACK = MAX_NESTING * 5
MAX_TEMPLATE_NESTING = 32
"""Deepest nesting of template literals (`` `${`${...}`}` ``) the parser accepts.

Each ``${}`` is parsed re-entrantly from inside a callback, about seven Python frames
per level, so this keeps the parser far from Python's recursion limit.
"""


class _ParseContext(threading.local):
    """The file being parsed, for callbacks that need it (template expressions).

    Thread-local and stacked, because template expressions are parsed re-entrantly
    from inside a callback and two threads may parse at once.
    """

    def __init__(self) -> None:
        self.stack: list[tuple[str, str]] = []


_context = _ParseContext()


# A token as the callbacks see it is a plain tuple (dsl.lalr_loop.Tok):
#
#     (type, text, line, col, end_line, end_col, start, end)   [+ a template's scan]
#
# Items 2 to 8 are its span's fields in the span's order, so ``tuple.__new__(Span,
# tok[2:8])`` is its span; ``type(c) is tuple`` tells a token from anything else.
_new_span: Any = tuple.__new__  # _new_span(Span, (line, col, end_line, end_col, start, end))
_Span = ast.Span


def _tok(token: Token) -> Tok:
    """A Lark token (Lark's own parse, for input with an error) as ours."""
    t: Any = token  # the lexer sets every position
    return (
        t.type,
        t.value,
        t.line,
        t.column - 1,
        t.end_line,
        t.end_column - 1,
        t.start_pos,
        t.end_pos,
    )


def _span(item: Any) -> ast.Span:
    if type(item) is tuple:
        token_span: ast.Span = _new_span(_Span, item[2:8])
        return token_span
    span: ast.Span = item.span
    return span


def _between(first: Any, last: Any) -> ast.Span:
    """``_span(first).cover(_span(last))``, without the two spans in between (a parse
    makes tens of thousands of these)."""
    if type(first) is tuple:
        line, col, start = first[2], first[3], first[6]
    else:
        span = first.span
        line, col, start = span[0], span[1], span[4]
    if type(last) is tuple:
        between: ast.Span = _new_span(_Span, (line, col, last[4], last[5], start, last[7]))
        return between
    end = last.span
    between = _new_span(_Span, (line, col, end[2], end[3], start, end[5]))
    return between


def _rpar(children: list[Any]) -> Tok:
    """The ``)`` that ends a statement's header."""
    tok: Tok = next(c for c in children if type(c) is tuple and c[0] == "RPAR")
    return tok


def _nodes(children: list[Any]) -> list[Any]:
    return [c for c in children if c is not None and type(c) is not tuple]


def _fail(message: str, at: Any) -> NoReturn:
    file, source = _context.stack[-1]
    span = _span(at)
    raise ScenarioSyntaxError(message, file, span.line, span.col, _line_of(source, span.start))


def _line_of(source: str, offset: int) -> str:
    start = source.rfind("\n", 0, offset) + 1
    end = source.find("\n", offset)
    return source[start : end if end >= 0 else len(source)]


def _check_name(token: Tok) -> str:
    name: str = token[1]
    if name in _RESERVED:
        _fail(_reserved(name), token)
    return name


def _reserved(name: str) -> str:
    if name == "var":
        return "'var' is not supported: declare with 'let' or 'const'"
    return f"'{name}' is a reserved word and cannot be used as a name"


def _check_unique_declarations(
    body: list[ast.Stmt], params: tuple[str, ...] = (), params_are: str = "as a parameter"
) -> None:
    """No name declared twice in one block; the error points at the second name."""
    # name -> the line of its declaration, or 0 for a parameter (worded on error only)
    seen: dict[str, int] = dict.fromkeys(params, 0)
    for stmt in body:
        if stmt.__class__ is ast.VarDecl:
            decl = stmt
            if decl.name in seen:
                _, source = _context.stack[-1]
                name_at = source.index(decl.name, decl.span.start + len(decl.kind))
                first = seen[decl.name]
                where = f"in this block, at line {first}" if first else params_are
                _fail_at(
                    name_at,
                    f"'{decl.name}' is already declared {where}: pick another name, "
                    f"or assign it with '{decl.name} = ...'",
                )
            seen[decl.name] = decl.span.line


_BLOCK_COMMENTS = re.compile(r"/\*[\s\S]*?\*/")


def _check_separated(body: list[ast.Stmt]) -> None:
    """Two statements on one line need a ``;`` between them, as in JavaScript.

    Semicolons are optional because JavaScript inserts one at a line break; it never
    inserts one between ``x = a b`` on a single line, which is a typo, not two steps.
    Compound statements end with ``}`` and need no separator.
    """
    _, source = _context.stack[-1]
    for prev, stmt in itertools.pairwise(body):
        if isinstance(prev, ast.COMPOUND_STATEMENTS):
            continue
        gap = source[prev.span.end : stmt.span.start]
        if "\n" in gap or any(ch in gap for ch in "\r\u2028\u2029"):
            continue
        if ";" in _BLOCK_COMMENTS.sub("", gap):
            continue
        _fail(
            "a ';' or a line break is missing before this statement: "
            "two statements on one line need a ';' between them",
            stmt,
        )


def _fail_at(offset: int, message: str) -> NoReturn:
    file, source = _context.stack[-1]
    line, col = _position(source, offset)
    raise ScenarioSyntaxError(message, file, line, col, _line_of(source, offset))


# A regex literal is translated and compiled once per text and flags, like ``re``'s own
# cache: a project repeats its regexes, and a compiled pattern is immutable.
_compile_regex = functools.lru_cache(maxsize=1024)(compile_js_regex)

_TYPED_LEVELS = frozenset(["EQ_OP", "CMP_OP", "ADD_OP", "MUL_OP"])
# Binding strength of the binary operators, by terminal (or text for the logical ones).
_PRECEDENCE = {"??": 1, "||": 2, "&&": 3, "EQ_OP": 4, "CMP_OP": 5, "ADD_OP": 6, "MUL_OP": 7}
_LOGICAL = frozenset(["??", "||", "&&"])


def _is_conditional(children: list[Any]) -> bool:
    """Whether a flat operator rule ends with ``? consequent : alternate``."""
    if len(children) < 5:
        return False
    mark = children[-4]
    return type(mark) is tuple and mark[0] == "QMARK"


def _level_key(op: Tok) -> str:
    key: str = op[0] if op[0] in _TYPED_LEVELS else op[1]
    return key


def _combine(left: Any, op: Tok, right: Any) -> ast.Expr:
    text = op[1]
    if text in _LOGICAL and op[0] not in _TYPED_LEVELS:
        return ast.Logical(cast("ast.LogicalOp", text), left, right, _between(left, right))
    return ast.Binary(cast("ast.BinaryOp", text), left, right, _span(op), _between(left, right))


class _Builder(Transformer[Token, Any]):
    """Inline callbacks, one per rule or alias of grammar.lark, building AST nodes."""

    # --- file structure ----------------------------------------------------------

    def start(
        self, children: list[Any]
    ) -> tuple[tuple[ast.FunctionDecl, ...], tuple[ast.VarDecl, ...]]:
        consts = [c for c in children if isinstance(c, ast.VarDecl)]
        _check_separated(list[ast.Stmt](consts))
        return tuple(c for c in children if isinstance(c, ast.FunctionDecl)), tuple(consts)

    def top_statement(self, children: list[Any]) -> ast.VarDecl | None:
        """A top-level ``const`` is kept (whether the file may hold one, and what it may
        hold, are file-level rules: dsl/scenario.py); any other statement is an error."""
        stmt = children[0] if children else None
        if isinstance(stmt, ast.VarDecl) and stmt.kind == "const":
            return stmt
        if stmt is not None:
            file, _ = _context.stack[-1]
            where = (
                "put scenario code in 'function test_<name>() { ... }'"
                if file.endswith(".test.js")
                else "a helper file holds only function declarations and top-level consts"
            )
            _fail(f"statements must be inside a function: {where}", stmt)
        return None

    def nested_function(self, children: list[Any]) -> NoReturn:
        """Say which block the function is in: usually a '}' is missing above it."""
        fn: ast.FunctionDecl = children[0]
        _, source = _context.stack[-1]
        opener = _unclosed_opener(source[: fn.span.start])
        inside = ""
        if opener is not None:
            line, col = _position(source, opener[1])
            inside = f", and this one is inside the block opened at {line}:{col} (a missing '}}'?)"
        _fail(f"functions can only be declared at the top level of a file{inside}", fn)

    def function_decl(self, children: list[Any]) -> ast.FunctionDecl:
        names = [c for c in children if type(c) is tuple and c[0] == "NAME"]
        body: ast.Block = children[-1]
        name_tok = names[0]
        params: list[str] = []
        for tok in names[1:]:  # each checked by binding()
            param: str = tok[1]
            if param in params:
                _fail(f"parameter '{param}' appears twice", tok)
            params.append(param)
        _check_unique_declarations(list(body.body), tuple(params))
        return ast.FunctionDecl(
            _check_name(name_tok), tuple(params), body, _span(name_tok), _between(children[0], body)
        )

    def binding(self, children: list[Any]) -> Tok:
        """A parameter, loop variable or catch parameter, checked where it is declared."""
        tok: Tok = children[0]
        _check_name(tok)
        return tok

    def block(self, children: list[Any]) -> ast.Block:
        body = _nodes(children)
        _check_separated(body)
        _check_unique_declarations(body)
        return ast.Block(tuple(body), _between(children[0], children[-1]))

    def empty_statement(self, children: list[Any]) -> None:
        return None

    def simple_statement(self, children: list[Any]) -> ast.Stmt:
        stmt: ast.Stmt = children[0]
        return stmt

    statement = simple_statement  # a statement and its ';'

    def statements(self, children: list[Any]) -> tuple[ast.Stmt, ...]:
        body = _nodes(children)
        _check_separated(body)
        return tuple(body)

    # --- statements --------------------------------------------------------------

    def var_decl(self, children: list[Any]) -> ast.VarDecl:
        # [LET|CONST, NAME, "=" or None, value or None]: Lark puts None in place of a
        # missing optional part (maybe_placeholders).
        kind_tok, name_tok, init = children[0], children[1], children[3]
        kind = cast(ast.DeclKind, kind_tok[1])
        if kind == "const" and init is None:
            name = name_tok[1]
            _fail(f"const '{name}' needs a value: const {name} = ...", name_tok)
        end = init if init is not None else name_tok
        return ast.VarDecl(kind, _check_name(name_tok), init, _between(kind_tok, end))

    def assign(self, children: list[Any]) -> ast.Assign:
        target, op_tok, value = children
        if not isinstance(target, ast.Identifier | ast.Member | ast.Index):
            _fail("only a variable, a property or an element can be assigned to", target)
        op = cast("ast.AssignOp", op_tok[1])
        return ast.Assign(target, op, value, _between(target, value))

    def expr_stmt(self, children: list[Any]) -> ast.ExprStmt:
        """``s_postfix (op unary)* ("?" expression ":" expression)?``: one rule, so that
        the usual statement, a call, costs the parser no reductions to wrap it."""
        if len(children) == 1:
            expr = children[0]
        elif _is_conditional(children):
            expr = self.conditional(children)
        else:
            expr = self.operators(children)
        return ast.ExprStmt(expr, _span(expr))

    def if_stmt(self, children: list[Any]) -> ast.If:
        # [IF, "(", test, ")", block, ELSE or None, block or if_stmt or None]
        test, rpar, consequent, alternate = children[2], children[3], children[4], children[6]
        return ast.If(
            test,
            consequent,
            alternate,
            rpar[7],
            _between(children[0], alternate if alternate is not None else consequent),
        )

    def for_stmt(self, children: list[Any]) -> ast.ForOf:
        tokens = [c for c in children if type(c) is tuple]
        kind_tok = next(t for t in tokens if t[0] in ("LET", "CONST"))
        name_tok = next(t for t in tokens if t[0] == "NAME")
        rpar = _rpar(tokens)
        iterable, body = _nodes(children)
        kind = cast(ast.DeclKind, kind_tok[1])
        return ast.ForOf(
            kind,
            name_tok[1],
            iterable,
            body,
            rpar[7],
            _between(children[0], body),
        )

    def while_stmt(self, children: list[Any]) -> ast.While:
        test, body = _nodes(children)
        rpar = _rpar(children)
        return ast.While(test, body, rpar[7], _between(children[0], body))

    def try_stmt(self, children: list[Any]) -> ast.Try:
        try_tok = children[0]
        block: ast.Block = children[1]
        catch: list[Any] | None = children[2]
        finalizer: ast.Block | None = children[3]
        if catch is None and finalizer is None:
            _fail("'try' needs a 'catch' or a 'finally' block", try_tok)
        last = finalizer if finalizer is not None else cast(Any, catch)[1]
        param, handler = catch if catch is not None else (None, None)
        return ast.Try(block, param, handler, finalizer, try_tok[7], _between(try_tok, last))

    def catch_clause(self, children: list[Any]) -> list[Any]:
        """``[param or None, block]``: a list, as only tokens are tuples."""
        names = [c for c in children if type(c) is tuple and c[0] == "NAME"]
        block: ast.Block = children[-1]
        param: str | None = names[0][1] if names else None
        if param is not None:  # JavaScript refuses ``catch (e) { let e = 1 }`` too
            _check_unique_declarations(list(block.body), (param,), "as the catch parameter")
        return [param, block]

    def finally_clause(self, children: list[Any]) -> ast.Block:
        block: ast.Block = children[-1]
        return block

    def break_stmt(self, children: list[Any]) -> ast.Break:
        return ast.Break(_span(children[0]))

    def continue_stmt(self, children: list[Any]) -> ast.Continue:
        return ast.Continue(_span(children[0]))

    def return_stmt(self, children: list[Any]) -> ast.Return:
        value = children[1]
        return ast.Return(value, _between(children[0], value if value is not None else children[0]))

    def throw_stmt(self, children: list[Any]) -> ast.Throw:
        return ast.Throw(children[1], _between(children[0], children[1]))

    # --- expressions -------------------------------------------------------------

    def conditional(self, children: list[Any]) -> ast.Conditional:
        """``operand (op operand)* "?" expression ":" expression``."""
        consequent, alternate = children[-3], children[-1]
        test = children[0] if len(children) == 5 else self.operators(children[:-4])
        return ast.Conditional(test, consequent, alternate, _between(test, alternate))

    def operators(self, children: list[Any]) -> ast.Expr:
        """``operand (op operand)*`` with JavaScript precedence, by precedence climbing.

        An explicit stack, not recursion, so a chain of any length is built. Every
        operator is left-associative; the spans are those the chained rules gave.
        """
        if len(children) == 3:  # one operator, the usual case
            return _combine(children[0], children[1], children[2])
        operands: list[Any] = [children[0]]
        ops: list[Tok] = []
        for i in range(1, len(children), 2):
            op = children[i]
            level = _PRECEDENCE[_level_key(op)]
            while ops and _PRECEDENCE[_level_key(ops[-1])] >= level:
                right = operands.pop()
                operands.append(_combine(operands.pop(), ops.pop(), right))
            ops.append(op)
            operands.append(children[i + 1])
        while ops:
            right = operands.pop()
            operands.append(_combine(operands.pop(), ops.pop(), right))
        result: ast.Expr = operands[0]
        return result

    def unary(self, children: list[Any]) -> ast.Unary:
        op, operand = children
        return ast.Unary(cast("ast.UnaryOp", op[1]), operand, _between(op, operand))

    def member(self, children: list[Any]) -> ast.Member:
        obj, name = children[0], children[-1]
        return ast.Member(obj, name[1], _span(name), _between(obj, name))

    def index(self, children: list[Any]) -> ast.Index:
        obj, index = _nodes(children)
        return ast.Index(obj, index, _between(obj, children[-1]))

    def call(self, children: list[Any]) -> ast.Call:
        """``callee "(" [arguments] ")"``: the arguments in the call's own rule, not a
        rule of their own (a reduction less per call)."""
        callee = children[0]
        args = tuple([c for c in children[2:-1] if c is not None and type(c) is not tuple])
        return ast.Call(callee, args, _between(callee, children[-1]))

    def identifier(self, children: list[Any]) -> ast.Identifier:
        return _identifier(children[0])

    def paren(self, children: list[Any]) -> ast.Expr:
        inner = children[1]
        return cast(ast.Expr, replace(inner, span=_between(children[0], children[2])))

    def number(self, children: list[Any]) -> ast.NumberLit:
        return _number(children[0])

    def string(self, children: list[Any]) -> ast.StringLit:
        return _string(children[0])

    def template(self, children: list[Any]) -> ast.TemplateLit:
        return _template(children[0])

    def regex(self, children: list[Any]) -> ast.RegexLit:
        return _regex(children[0])

    def true(self, children: list[Any]) -> ast.BoolLit:
        return _true(children[0])

    def false(self, children: list[Any]) -> ast.BoolLit:
        return _false(children[0])

    def null(self, children: list[Any]) -> ast.NullLit:
        return _null(children[0])

    def array(self, children: list[Any]) -> ast.ArrayLit:
        return ast.ArrayLit(tuple(_nodes(children)), _between(children[0], children[-1]))

    def object(self, children: list[Any]) -> ast.ObjectLit:
        props: list[ast.Property] = _nodes(children)
        seen: set[str] = set()
        for prop in props:
            if prop.key in seen:
                _fail(f"key '{prop.key}' appears twice in this object", prop)
            seen.add(prop.key)
        return ast.ObjectLit(tuple(props), _between(children[0], children[-1]))

    def keyed_property(self, children: list[Any]) -> ast.Property:
        key_tok, value = children[0], children[-1]
        if key_tok[0] == "STRING":
            key = _string(key_tok).value
        elif key_tok[0] == "NUMBER":
            from dsl.values import format_number

            key = format_number(_number(key_tok).value)
        else:
            key = key_tok[1]
        return ast.Property(key, value, _between(key_tok, value))

    def shorthand_property(self, children: list[Any]) -> ast.Property:
        tok = children[0]
        name = _check_name(tok)
        return ast.Property(name, ast.Identifier(name, _span(tok)), _span(tok))


# --- leaves: one token each, called by the fast loop with the token itself ---------


def _identifier(tok: Tok) -> ast.Identifier:
    name: str = tok[1]
    if name in _RESERVED:
        _fail(_reserved_as_value(tok), tok)
    return ast.Identifier(name, _new_span(_Span, tok[2:8]))


def _reserved_as_value(tok: Tok) -> str:
    """Why a reserved word cannot stand where a value (or a statement) starts: the
    JavaScript it begins, when that is known, and what to write instead."""
    name: str = tok[1]
    if name in _NOT_VALUES:
        return _NOT_VALUES[name]
    if name in _UNSUPPORTED_WORDS:
        return _UNSUPPORTED_WORDS[name]
    if name in ("true", "false", "null"):  # read as a name only where a statement starts
        return f"a statement cannot start with '{name}': {STATEMENT_STARTS}"
    _, source = _context.stack[-1]
    if name in _CLAUSES and _CLAUSE_AHEAD.match(source, tok[7]):
        return _CLAUSES[name]
    return _reserved(name)


# Reserved words met where a value was expected: JavaScript that writes a function there.
_NOT_VALUES = {
    "function": "a function cannot be written as a value: declare it at the top level "
    "('function name() { ... }') and use its name",
    "async": "async functions are not supported: every call already waits for its result; "
    "declare a function at the top level",
}
# JavaScript's operators that are words: reserved, and none of them exists here.
_UNSUPPORTED_WORDS = {
    "typeof": "'typeof' is a reserved word and not supported: there is no type test; "
    "to check for a missing value compare with null (x === null)",
    "void": "'void' is a reserved word and not supported: write null",
    "delete": "'delete' is a reserved word and not supported: set the key to null instead "
    "(o.key = null)",
    "new": "'new' is a reserved word and not supported: there are no classes; make a regex "
    "with regex(source, flags) and read the time with now()",
    "await": "'await' is not needed: every built-in and function call waits for its result; "
    "remove it",
}
# The second half of a compound statement, met where a statement starts.
_CLAUSES = {
    "else": "'else' without an 'if' before it: 'else' must follow the '}' of an if block",
    "catch": "'catch' without a 'try' before it: 'catch' must follow the '}' of a try block",
    "finally": "'finally' without a 'try' before it: 'finally' must follow the '}' of a "
    "try or catch block",
}
_CLAUSE_AHEAD = re.compile(r"\s*(?:[({]|if(?![\w$]))")


def _number(tok: Tok) -> ast.NumberLit:
    text = tok[1].replace("_", "")
    prefix = text[:2].lower()
    if prefix in ("0x", "0b", "0o"):
        value = float(int(text[2:], {"0x": 16, "0b": 2, "0o": 8}[prefix]))
    else:
        value = float(text)
    return ast.NumberLit(value, _new_span(_Span, tok[2:8]))


def _string(tok: Tok) -> ast.StringLit:
    value: str = tok[1][1:-1]
    if "\\" in value:  # cook's own first test, without the call
        try:
            value = cook(value)
        except EscapeError as err:
            _fail_inside(tok, 1 + err.offset, err.message)
    return ast.StringLit(value, _new_span(_Span, tok[2:8]))


def _template(tok: Tok) -> ast.TemplateLit:
    file, source = _context.stack[-1]
    start = tok[6]
    scanned = tok[8] if len(tok) > 8 else scan_template(source, start, tok[7])
    assert scanned is not None  # the lexer scanned the same text
    _, raws, parts = scanned
    quasis: list[str] = []
    offset = start + 1
    for i, raw in enumerate(raws):
        try:
            quasis.append(cook(raw))
        except EscapeError as err:
            _fail_inside(tok, offset - start + err.offset, err.message)
        if i < len(parts):
            offset = parts[i].end + 1
    exprs = []
    for part in parts:
        expr = _bare_name(source, part.start, part.end, tok)
        if expr is None:
            if not source[part.start : part.end].strip():
                _fail_inside(tok, part.start - start, "'${}' needs an expression inside")
            expr = _parse_slice(source, file, part.start, part.end, "expression")
        exprs.append(expr)
    return ast.TemplateLit(tuple(quasis), tuple(exprs), _new_span(_Span, tok[2:8]))


_BARE_NAME = re.compile(r"[ \t]*([A-Za-z_$][A-Za-z0-9_$]*)[ \t]*")


def _bare_name(source: str, start: int, end: int, tok: Tok) -> ast.Identifier | None:
    """The usual ``${name}`` of a one-line template, without a parse of its own: the
    identifier the parser would make (a word it reserves, or anything else, is left
    to the parser)."""
    found = _BARE_NAME.fullmatch(source, start, end)
    if found is None or tok[2] != tok[4]:
        return None
    name = found.group(1)
    if name in _RESERVED:
        return None
    name_start, name_end = found.span(1)
    col = tok[3] + name_start - tok[6]
    line = tok[2]
    span: ast.Span = _new_span(
        _Span, (line, col, line, col + name_end - name_start, name_start, name_end)
    )
    return ast.Identifier(name, span)


def _regex(tok: Tok) -> ast.RegexLit:
    text = tok[1]
    close = text.rindex("/")
    source, flags = text[1:close], text[close + 1 :]
    try:
        pattern = _compile_regex(source, flags)
    except RegexTranslationError as err:
        offset = close + 1 if err.offset < 0 else 1 + err.offset
        _fail_inside(tok, offset, err.args[0] if err.args else str(err))
    return ast.RegexLit(source, flags, pattern, _new_span(_Span, tok[2:8]))


def _true(tok: Tok) -> ast.BoolLit:
    return ast.BoolLit(True, _new_span(_Span, tok[2:8]))


def _false(tok: Tok) -> ast.BoolLit:
    return ast.BoolLit(False, _new_span(_Span, tok[2:8]))


def _null(tok: Tok) -> ast.NullLit:
    return ast.NullLit(_new_span(_Span, tok[2:8]))


def _fail_inside(tok: Tok, offset: int, message: str) -> NoReturn:
    """Report a problem ``offset`` characters into a token, on the right line."""
    file, source = _context.stack[-1]
    absolute = tok[6] + max(offset, 0)
    line = source.count("\n", 0, absolute) + 1
    col = absolute - (source.rfind("\n", 0, absolute) + 1)
    raise ScenarioSyntaxError(message, file, line, col, _line_of(source, absolute))


_LEAVES: dict[str, Any] = {
    "identifier": _identifier,
    "number": _number,
    "string": _string,
    "template": _template,
    "regex": _regex,
    "true": _true,
    "false": _false,
    "null": _null,
}


def _load_grammar() -> str:
    return (Path(__file__).parent / "grammar.lark").read_text(encoding="utf-8")


_builder = _Builder()


class _LarkBuilder(Transformer[Token, Any]):
    """The callbacks as Lark's own parse calls them (input with an error, which the fast
    loop hands over): each Lark token made one of ours first. The fast loop calls the
    methods of ``_builder`` itself (each wrapper's ``fast``)."""


def _lark_callback(method: Any) -> Any:
    def callback(self: Any, children: list[Any]) -> Any:
        return method([_tok(c) if isinstance(c, Token) else c for c in children])

    callback.fast = method  # type: ignore[attr-defined]
    return callback


for _name, _value in list(vars(_Builder).items()):
    if callable(_value) and not _name.startswith("_"):
        setattr(_LarkBuilder, _name, _lark_callback(getattr(_builder, _name)))


_lark = Lark(
    _load_grammar(),
    parser="lalr",
    lexer="contextual",
    start=["start", "expression", "statements"],
    transformer=_LarkBuilder(),
    maybe_placeholders=True,
    keep_all_tokens=True,
    propagate_positions=False,
    _plugins={"ContextualLexer": TemplateContextualLexer},
    # The LALR tables are cached on disk (keyed by grammar and options; rebuilt if the
    # file is missing or unreadable): every worker and CLI call starts ~2x faster.
    cache=True,
)


# Input that parses goes through our own loop over Lark's tables (dsl.lalr_loop); it
# hands anything Lark would reject back, and Lark's own parse reports it.
_loop = FastLoop(_lark, _LEAVES)


def _parse_slice(source: str, file: str, start: int, end: int, rule: str) -> Any:
    _context.stack.append((file, source))
    try:
        try:
            return _loop.parse(source, start, end, rule)
        except Unexpected:
            pass
        return _lark.parse(TextSlice(source, start, end), start=rule)
    except ScenarioSyntaxError:
        raise
    except UnexpectedInput as err:
        raise _convert(err, source, file, end) from None
    except LarkError as err:  # pragma: no cover - grammar bugs, not user input
        raise ScenarioSyntaxError(str(err), file, 1, 0, "") from None
    finally:
        _context.stack.pop()


def parse_program(source: str, file: str) -> ast.Program:
    """Parse a whole scenario or helper file into its functions."""
    _check_depth_cheaply(source, file)
    functions, consts = _parse_slice(source, file, 0, len(source), "start")
    return ast.Program(file, source, functions, consts)


def parse_expression(source: str, file: str = "<expr>") -> ast.Expr:
    """Parse one expression (template parts, the debugger's ``eval``)."""
    _check_depth_cheaply(source, file)
    expr: ast.Expr = _parse_slice(source, file, 0, len(source), "expression")
    return expr


def parse_statements(source: str, file: str = "<eval>") -> tuple[ast.Stmt, ...]:
    """Parse statements outside any function, for the debugger's ``eval``."""
    _check_depth_cheaply(source, file)
    stmts: tuple[ast.Stmt, ...] = _parse_slice(source, file, 0, len(source), "statements")
    return stmts


# --- nesting guard ----------------------------------------------------------------


def _check_depth_cheaply(source: str, file: str) -> None:
    """Reject absurd bracket nesting before Lark sees it.

    The parser itself would cope (it is iterative), but the interpreter recurses per
    level; MAX_NESTING keeps every accepted tree well inside Python's stack. Brackets
    inside template expressions count too (``${`` is one level), and template literals
    have their own, smaller limit: each ``${}`` is parsed re-entrantly, about seven
    Python frames per level, so 150 nested templates used to raise RecursionError.
    """
    # Every level is an opening bracket (a template's `${` holds a `{`), so a text with
    # few of them cannot be too deep: the usual file needs no scan at all.
    openers = source.count("(") + source.count("[") + source.count("{")
    if openers <= MAX_NESTING and source.count("${") <= MAX_TEMPLATE_NESTING:
        return
    stack: list[str] = []
    templates = 0
    for kind, i in _brackets(source):
        if kind in _OPENERS:
            stack.append(kind)
            templates += kind == "${"
            if len(stack) > MAX_NESTING:
                message = f"brackets are nested more than {MAX_NESTING} levels deep"
            elif templates > MAX_TEMPLATE_NESTING:
                message = (
                    f"template literals are nested more than {MAX_TEMPLATE_NESTING} levels deep"
                )
            else:
                continue
            line, col = _position(source, i)
            raise ScenarioSyntaxError(message, file, line, col, _line_of(source, i))
        if kind == "}$":  # the end of a `${}`: whatever it left open ends with it
            while stack and stack.pop() != "${":
                pass
            templates -= 1
        elif stack and stack[-1] != "${":
            stack.pop()


# --- error conversion -------------------------------------------------------------

_FRIENDLY = {
    "NAME": "a name",
    "NUMBER": "a number",
    "STRING": "a string",
    "TEMPLATE": "a template literal",
    "REGEX": "a regex",
    "ASSIGN_OP": "'='",
    "EQ_OP": "'==='",
    "CMP_OP": "a comparison",
    "ADD_OP": "'+' or '-'",
    "MUL_OP": "'*', '/' or '%'",
    "UNARY_OP": "'!'",
    "LET": "'let'",
    "CONST": "'const'",
    "$END": "the end of the file",
}


def _describe_expected(names: set[str]) -> str:
    terminals = _lark.lexer_conf.terminals_by_name
    words: list[str] = []
    for name in sorted(names):
        if name in _FRIENDLY:
            words.append(_FRIENDLY[name])
        elif name in terminals and terminals[name].pattern.type == "str":
            words.append(f"'{terminals[name].pattern.value}'")
    words = sorted(set(words))
    if len(words) > 6:
        return "an expression or a statement"
    return " or ".join(words) if words else "something else"


def _position(source: str, offset: int) -> tuple[int, int]:
    line = source.count("\n", 0, offset) + 1
    col = offset - (source.rfind("\n", 0, offset) + 1)
    return line, col


def _convert(err: UnexpectedInput, source: str, file: str, end: int) -> ScenarioSyntaxError:
    offset = getattr(err, "pos_in_stream", None)
    token = err.token if isinstance(err, UnexpectedToken) else None
    at_end = token is not None and token.type == "$END"
    if at_end or offset is None:
        offset = len(source.rstrip()) if end == len(source) else end
    before = source[:offset].rstrip()
    if before.endswith(("++", "--")) and not isinstance(err, UnexpectedCharacters):
        offset = len(before) - 2
        message = f"'{before[-2:]}' is not supported: write x {before[-1]}= 1"
    elif at_end and end != len(source):
        message = "the expression inside '${}' is incomplete"
    else:
        message, offset = _explain(err, source, offset, token, at_end)
    line, col = _position(source, offset)
    return ScenarioSyntaxError(message, file, line, col, _line_of(source, offset))


_CLOSERS = {"(": ")", "[": "]", "{": "}", "${": "}"}
# Operators after which an operand must come, longest first so `===` is not read as `=`.
_DANGLING = (
    *("===", "!=="),
    *("==", "!=", "<=", ">=", "+=", "-=", "*=", "/=", "%=", "&&", "||", "??"),
    *("=", "<", ">", "+", "-", "*", "/", "%", "!", "?", ":"),
)
_UNSUPPORTED_CHARACTERS = {
    "&": "'&' (bitwise and) is not supported: did you mean '&&'?",
    "|": "'|' (bitwise or) is not supported: did you mean '||'?",
    "^": "'^' (bitwise xor) is not supported",
    "~": "'~' (bitwise not) is not supported",
    "#": "'#' cannot appear in code: private names and '#' comments do not exist; "
    "comments start with '//'",
    "@": "'@' cannot appear in code: decorators do not exist",
}


def _explain(
    err: UnexpectedInput, source: str, offset: int, token: Token | None, at_end: bool
) -> tuple[str, int]:
    """Plain words for a Lark error, and the offset the caret should point at."""
    expected: set[str] = set(getattr(err, "expected", None) or getattr(err, "allowed", None) or ())
    if isinstance(err, UnexpectedCharacters):
        return _explain_character(source, offset, expected), offset
    if at_end:
        opener = _unclosed_opener(source)
        if opener is not None:
            return _never_closed(source, opener), offset
        return "unexpected end of file: expected " + _describe_expected(expected), offset
    assert token is not None
    stop = _Stop(source, offset, token, expected)
    arrow = _arrow_ahead(source, offset)
    if arrow is not None:  # `() => 1`, `(a, b) => ...`: stopped inside the parameters
        return _arrow_message(source, arrow), arrow
    if stop.text == "*" and source[offset - 1 : offset] == "/":
        # `1 /* ...` never closed: its '/' was read as a division, then '*' came.
        return "unterminated comment: add the closing */", offset - 1
    unsupported = _unsupported_javascript(stop)
    if unsupported is not None:
        return unsupported
    # The first rule that recognises the mistake names it; the order matters.
    for rule in (_known_mistake, _bracket_mismatch):
        message = rule(stop)
        if message is not None:
            return message, offset
    missing = _missing_operand(stop)
    if missing is not None:
        return missing
    return _misplaced_token(stop), offset


@dataclass(frozen=True)
class _Stop:
    """Where the parser gave up: the token it could not take and what it expected."""

    source: str
    offset: int
    token: Token
    expected: set[str]

    @property
    def text(self) -> str:
        return str(self.token)

    @property
    def rest(self) -> str:
        return self.source[self.offset : self.offset + 3]

    @property
    def operand_expected(self) -> bool:
        # NUMBER is expected exactly where an operand must come (a statement cannot start
        # with one); only NAME is expected after a `.`.
        return "NUMBER" in self.expected or self.expected == {"NAME"}


ARROW = "arrow functions are not supported: declare a function at the top level"
EVALUATE_ARROW = (
    "evaluate() runs the page's JavaScript given as a string: quote the function, "
    'evaluate("() => ...")'
)
_EVALUATE_CALL = re.compile(r"\bevaluate\s*\(")


def _arrow_message(source: str, at: int) -> str:
    """An arrow function as evaluate()'s argument is the page's code written as in
    Playwright Test: the fix is quoting it, not a function declared at the top level
    (which evaluate() refuses: it runs no function of the scenario)."""
    line_start = source.rfind("\n", 0, at) + 1
    for call in reversed(list(_EVALUATE_CALL.finditer(source, line_start, at))):
        inside = source[call.end() : at]
        if inside.count("(") >= inside.count(")"):  # still in its parentheses
            return EVALUATE_ARROW
    return ARROW


STATEMENT_STARTS = "statements start with a name or a keyword"
# What may stand between where the parser stopped in a parameter list and its `=>`.
_TO_ARROW = re.compile(r"[\w$\s,]*\)\s*=>")


def _arrow_ahead(source: str, offset: int) -> int | None:
    """Where the ``=>`` is, when the parser stopped in an arrow function's parameter
    list (``()`` is no expression, ``(a, b)`` no call); the caret goes there, as for
    ``(a) => ...``, which is met at its ``=>``."""
    if source[offset : offset + 1] not in (")", ","):
        return None
    found = _TO_ARROW.match(source, offset + 1 if source[offset] == "," else offset)
    return found.end() - 2 if found is not None else None


def _unsupported_javascript(stop: _Stop) -> tuple[str, int] | None:
    """JavaScript the language leaves out, recognised where the parser stopped: what it
    is, what to write instead, and where it starts (the caret goes there)."""
    source, offset, text = stop.source, stop.offset, stop.text
    if source.startswith("...", offset):
        return _spread(source, offset), offset
    just_before = source[offset - 2 : offset]
    if text == "=" and just_before in ("??", "||", "&&"):
        target = _target_before(source, offset - 2)
        return (
            f"'{just_before}=' (logical assignment) is not supported: "
            f"write {target} = {target} {just_before} ...",
            offset - 2,
        )
    if text in ("*", "*=") and just_before.endswith("*"):  # `2 ** 3`, `x **= 2`
        instead = "x * x" if text == "*" else "x = x * x"
        message = f"'*{text}' (exponentiation) is not supported: multiply instead ({instead})"
        return message, offset - 1
    if text == "." and just_before.endswith("?"):
        return (
            "'?.' (optional chaining) is not supported: "
            "test for null first (x === null ? null : x.key)",
            offset - 1,
        )
    if text == "=" and _in_parameters(source, offset):
        name = _target_before(source, offset)
        return (
            "default parameter values are not supported: pass every argument at each call "
            f"(null for none) and write '{name} = {name} ?? ...' in the body",
            offset,
        )
    # A word read as an operand (an operator may follow it): `typeof x`, a stray `else {`.
    word = _word_before(source, offset) if "MUL_OP" in stop.expected else None
    if word is not None and word[0] in _UNSUPPORTED_WORDS:
        return _UNSUPPORTED_WORDS[word[0]], word[1]
    if word is not None and word[0] in _CLAUSES:
        return _CLAUSES[word[0]], word[1]
    return None


def _spread(source: str, offset: int) -> str:
    """What ``...`` at ``offset`` tries, by the bracket it stands in."""
    if _in_parameters(source, offset):
        return (
            "rest parameters ('...') are not supported: "
            "declare one parameter and pass an array to it"
        )
    opener = _unclosed_opener(source[:offset])
    if opener is not None and opener[0] == "(":
        return "spread ('...') is not supported in a call: pass each argument by itself"
    if opener is not None and opener[0] == "[":
        return (
            "spread ('...') is not supported: "
            "copy an array with .slice() and add to it with .push(...)"
        )
    if opener is not None and opener[0] == "{":
        return "spread ('...') is not supported: write the object's keys one by one"
    return "spread ('...') is not supported"


_FUNCTION_HEAD = re.compile(r"(?<![\w$.])function\s*(?:[A-Za-z_$][\w$]*)?\s*\Z")
_LAST_WORD = re.compile(r"(?<![\w$.])[A-Za-z_$][\w$]*\Z")
# A target as assignments write them (`x`, `o.key`, `a[i]`), ending where a search ends.
_TARGET = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*|\[[^\[\]\n]*\])*\s*\Z")


def _in_parameters(source: str, offset: int) -> bool:
    """Whether ``offset`` is inside a function declaration's parameter list."""
    opener = _unclosed_opener(source[:offset])
    if opener is None or opener[0] != "(":
        return False
    return _FUNCTION_HEAD.search(source, max(opener[1] - 200, 0), opener[1]) is not None


def _target_before(source: str, offset: int) -> str:
    """The variable, property or element just before ``offset`` (``x`` if none)."""
    start = source.rfind("\n", 0, offset) + 1
    found = _TARGET.search(source, start, offset)
    return found.group().rstrip() if found is not None else "x"


def _word_before(source: str, offset: int) -> tuple[str, int] | None:
    """The name or keyword right before ``offset`` (blanks between), and where it is;
    not a property name (``o.new``)."""
    end = len(source[:offset].rstrip())
    found = _LAST_WORD.search(source, max(end - 40, 0), end)
    return (found.group(), found.start()) if found is not None else None


def _known_mistake(stop: _Stop) -> str | None:
    """JavaScript the language leaves out, and the usual slips (``=`` for ``===``)."""
    text, rest, expected, token = stop.text, stop.rest, stop.expected, stop.token
    if rest.startswith("=>"):
        return _arrow_message(stop.source, stop.offset)
    if rest.startswith(("++", "--")):
        return f"'{rest[:2]}' is not supported: write x {rest[0]}= 1"
    if rest.startswith("/*"):
        return "unterminated comment: add the closing */"
    if text == "/" and "REGEX" in expected:
        # The contextual lexer found no closing `/`; the root lexer then read a division.
        return "unterminated regex literal: add the closing /"
    if expected == {"NAME"} and not _source_ends_with_dot(stop.source, stop.offset):
        return f"a name is missing before {_describe_token(token)}"
    if text == "=":
        if "OF" in expected:
            return (
                "only 'for (const x of list)' loops exist: count with 'for (const i of range(n))'"
            )
        return "'=' assigns and cannot stand here: compare with '===' (or '==')"
    if token.type == "ASSIGN_OP":
        return f"'{text}' can only start an assignment statement"
    if token.type == "NAME" and text == "var":
        return "'var' is not supported: declare with 'let' or 'const'"
    if "LBRACE" in expected and len(expected) <= 2:
        return "a block needs braces: '{ ... }'"
    return None


def _bracket_mismatch(stop: _Stop) -> str | None:
    """A closer that does not match, or one missing before a token."""
    token, expected = stop.token, stop.expected
    # Inside which bracket the parser stopped decides which closer is missing: LALR
    # merges states, so the expected set alone cannot tell an array from a call.
    opener = _unclosed_opener(stop.source[: stop.offset])
    closer = _CLOSERS[opener[0]] if opener is not None else None
    closer_terminal = {")": "RPAR", "]": "RSQB", "}": "RBRACE"}.get(closer or "")
    closes_other = token.type in ("RPAR", "RSQB", "RBRACE") and token.type != closer_terminal
    if opener is not None and opener[0] in "([" and closes_other:
        return _never_closed(stop.source, opener)
    if (
        "COMMA" in expected
        and closer_terminal in expected
        and token.type != closer_terminal
        and not (opener is not None and opener[0] == "{" and _opens_a_block(stop.source, opener[1]))
    ):
        return f"missing '{closer}' or ',' before {_describe_token(token)}"
    if token.type == "RBRACE" and "RBRACE" not in expected and opener is None:
        return "unexpected '}': it closes nothing here"
    if closes_other and (opener is None or opener[0] in ("{", "${")):
        return f"unexpected '{stop.text}': it closes nothing here"
    return None


def _missing_operand(stop: _Stop) -> tuple[str, int] | None:
    """An operand missing where a closer or separator came; the caret at the operator."""
    if not stop.operand_expected:
        return None
    if stop.token.type not in ("RBRACE", "RPAR", "RSQB", "COMMA", "SEMICOLON"):
        return None
    dangling = _dangling_operator(stop.source, stop.offset)
    if dangling is None:
        return f"an expression is missing before {_describe_token(stop.token)}", stop.offset
    op, at = dangling
    if op == ".":
        return "a property name must follow '.'", at
    return f"an expression must follow '{op}'", at


def _misplaced_token(stop: _Stop) -> str:
    """A token that cannot stand where it is, or, failing all else, what was expected."""
    token, expected = stop.token, stop.expected
    shown = _describe_token(token)
    statement_may_end = "SEMICOLON" in expected or "RBRACE" in expected
    if token.type == "TEMPLATE" and "MUL_OP" in expected:
        return "tagged templates are not supported: pass the template as an argument, f(`...`)"
    starts_badly = token.type in ("REGEX", "TEMPLATE") or stop.text in ("(", "[", "-", "+", "!")
    at_start = "MUL_OP" not in expected  # no operand before it: a statement starts here
    if at_start and token.type in ("STRING", "NUMBER"):
        starts_badly = True  # "abc".length, 1 + x
    if starts_badly and statement_may_end:
        return f"a statement cannot start with {shown}: {STATEMENT_STARTS}"
    if token.type == "LBRACE" and at_start and statement_may_end:
        return "a block cannot stand alone: blocks belong to if, for, while, try and functions"
    if token.type in ("STRING", "NUMBER", "REGEX", "NAME") and "MUL_OP" in expected:
        return f"unexpected {shown}: an operator, a ',' or a line break is missing before it"
    if statement_may_end and not stop.operand_expected:
        return f"unexpected {shown}: expected an operator or the end of the statement"
    return f"unexpected {shown}: expected {_describe_expected(expected)}"


def _source_ends_with_dot(source: str, offset: int) -> bool:
    return source[:offset].rstrip().endswith(".")


def _explain_character(source: str, offset: int, expected: set[str]) -> str:
    rest = source[offset : offset + 3]
    ch = source[offset] if offset < len(source) else ""
    if ch in "\"'":
        return "unterminated string: add the closing " + ch
    if ch == "`":
        return "unterminated template literal: add the closing `"
    if rest.startswith("/*"):
        return "unterminated comment: add the closing */"
    if ch == "/" and "REGEX" in expected:
        return "unterminated regex literal: add the closing /"
    if rest.startswith(("++", "--")):
        return f"'{rest[:2]}' is not supported: write x {rest[0]}= 1"
    if ch == "\\":
        return "unexpected backslash outside a string"
    if ch.isdigit():
        return "a number cannot be followed directly by a letter or digit"
    if ch in _UNSUPPORTED_CHARACTERS:
        return _UNSUPPORTED_CHARACTERS[ch]
    return f"unexpected character {ch!r}"


def _never_closed(source: str, opener: tuple[str, int]) -> str:
    line, col = _position(source, opener[1])
    kind = "'${'" if opener[0] == "${" else f"'{opener[0]}'"
    return f"missing '{_CLOSERS[opener[0]]}': the {kind} at {line}:{col} is never closed"


def _dangling_operator(source: str, offset: int) -> tuple[str, int] | None:
    """The operator (or `.`) that ends the code before ``offset``, and where it is."""
    before = source[:offset].rstrip()
    if before.endswith(".") and not before.endswith(".."):
        return ".", len(before) - 1
    for op in _DANGLING:
        if before.endswith(op):
            return op, len(before) - len(op)
    return None


def _describe_token(token: Token) -> str:
    text = str(token)
    if token.type == "NAME":
        return f"'{text}'"
    if len(text) > 20:
        text = text[:17] + "..."
    return repr(text) if token.type in ("STRING", "TEMPLATE") else f"'{text}'"


def _unclosed_opener(source: str) -> tuple[str, int] | None:
    """The innermost bracket left open at the end, skipping strings, comments, regexes."""
    stack: list[tuple[str, int]] = []
    for kind, pos in _brackets(source):
        if kind in _OPENERS:
            stack.append((kind, pos))
        elif kind == "}$":
            while stack and stack.pop()[0] != "${":
                pass
        elif stack and stack[-1][0] != "${":
            stack.pop()
    return stack[-1] if stack else None


_OPENERS = ("(", "[", "{", "${")
_BLOCK_KEYWORD = re.compile(r"(?:^|[^\w$])(?:else|try|finally)\s*\Z")


def _opens_a_block(source: str, at: int) -> bool:
    """Whether the ``{`` at ``at`` opens a block (after a ``)`` or else/try/finally),
    not an object literal: a statement's missing operator there is no missing '}'."""
    before = source[:at].rstrip()
    return before.endswith(")") or _BLOCK_KEYWORD.search(before) is not None


def _brackets(source: str) -> Iterator[tuple[str, int]]:
    """Every bracket of the code, a template's ``${`` and the ``}$`` that ends it
    included; strings, comments, regexes and template text hold none
    (:func:`dsl.lexer.code_marks`)."""
    for mark in code_marks(source, 0, len(source)):
        if mark[0] not in (TEMPLATE_START, TEMPLATE_END):
            yield mark
