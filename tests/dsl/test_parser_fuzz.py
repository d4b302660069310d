"""Property tests of the parser: whatever the input, a Program or a ScenarioSyntaxError.

Three generators, from least to most structured:

* arbitrary text (control characters, NUL, lone surrogates, Unicode line separators);
* "token soup": random sequences of the language's own tokens inside a function, which
  reach much deeper into the grammar than random characters;
* valid programs built from a small grammar: they must parse, every node's span must
  agree with the source, and re-parsing any statement's or expression's own text must
  give the same tree.

Every failure these find is a parser bug.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import random
import re
import traceback
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsl import ast
from dsl.checker import check_program
from dsl.errors import ScenarioSyntaxError
from dsl.parser import parse_expression, parse_program, parse_statements
from dsl.scenario import load_scenario

SETTINGS = settings(
    # FUZZ_EXAMPLES=20000 for a long bug hunt; 300 keeps this file under ~30 s.
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "300")),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
HEADER = "// id-fuzz\n// Fuzzed scenario\n// #4f46e5\n"


def _check_error(err: ScenarioSyntaxError, source: str) -> None:
    """A syntax error must place itself inside the file and render without crashing."""
    text = str(err)
    assert text.startswith(f"{err.file}:{err.line}:{err.col}: SyntaxError: ")
    assert err.message.strip()
    lines = source.split("\n")
    assert 1 <= err.line <= len(lines), (err.line, len(lines))
    assert err.col >= 0
    if err.source_line:
        line = lines[err.line - 1]
        assert err.source_line == line, (err.source_line, line)
        assert err.col <= len(line), (err.col, line)


def _must_not_crash(parse: Any, source: str) -> object | None:
    try:
        return parse()
    except ScenarioSyntaxError as err:
        _check_error(err, source)
        return None
    except BaseException as err:  # RecursionError, AttributeError, ...: all parser bugs
        pytest.fail(
            f"{type(err).__name__} escaped the parser for {source!r}:\n"
            + "".join(traceback.format_exception(err))
        )


# --- (a) arbitrary text ------------------------------------------------------------

_any_char = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=())
_js_chars = st.sampled_from(
    [
        *"abcxyz_$019 \t\n\r(){}[];,.:?!=<>+-*/%&|^~'\"`\\@#",
        "\x00",
        "\x0b",
        "\u2028",
        "\u2029",
        "\ufeff",
        "\u00a0",
        "\ud800",
        "\udfff",
        "é",
        "😀",
    ]
)


@SETTINGS
@given(st.text(_any_char, max_size=200) | st.text(_js_chars, max_size=200))
def test_arbitrary_text_parses_or_raises_syntax_error(source: str) -> None:
    _must_not_crash(lambda: parse_program(source, "fuzz.test.js"), source)
    wrapped = "function f() {\n" + source + "\n}\n"
    _must_not_crash(lambda: parse_program(wrapped, "fuzz.test.js"), wrapped)


@SETTINGS
@given(st.text(_js_chars, max_size=120))
def test_arbitrary_text_in_expression_and_eval_entry_points(source: str) -> None:
    _must_not_crash(lambda: parse_expression(source), source)
    _must_not_crash(lambda: parse_statements(source), source)


# --- (b) token soup ----------------------------------------------------------------

_TOKENS = [
    # keywords and reserved words
    "function", "let", "const", "if", "else", "for", "of", "while", "break", "continue",
    "return", "try", "catch", "finally", "throw", "true", "false", "null", "var", "new",
    "class", "typeof", "default", "in", "this", "undefined",
    # names
    "a", "b", "x", "foo", "click", "test_a", "_", "$", "iffy", "of_", "lets",
    # numbers, including malformed ones
    "0", "42", "3.14", ".5", "1e3", "1_000", "0x1F", "0b101", "1__0", "3abc", "0x", "1e",
    "08",
    # strings
    '"s"', "'t'", '"a\\nb"', '"\\u{1F600}"', '"\\uD83D\\uDE00"', '"\\x4"', "'\\q'", '"',
    "'", '"\\', '"\\u{}"', '"\\u{110000}"',
    # templates and template pieces
    "`t`", "`a${b}c`", "`${ {a: `x${y}`}.a }`", "`", "${", "}`", "`${", "`a${}`", "`\\u{41}`",
    # regex-like pieces
    "/x/g", "/a/", "/[/]/", "/a\\/b/gim", "/a/x", "/a/gg", "/(?<=a+)b/", "/\\u{41}/", "/(/",
    "/", "//c\n", "/*c*/", "/*", "*/",
    # operators
    "=", "+=", "-=", "*=", "/=", "%=", "==", "===", "!=", "!==", "<", "<=", ">", ">=",
    "+", "-", "*", "%", "!", "&&", "||", "??", "?", ":", "=>", "++", "--", "...", ".",
    "&", "|", "^", "~", "#", "@", "\\",
    # brackets and separators
    "(", ")", "{", "}", "[", "]", ",", ";",
    # whitespace
    "\n", "\r\n", "\t", "\u2028", "\x00",
]  # fmt: skip

_soup = st.lists(
    st.tuples(st.sampled_from(_TOKENS), st.sampled_from(["", " ", " ", "\n"])), max_size=40
).map(lambda pairs: "".join(tok + sep for tok, sep in pairs))


@SETTINGS
@given(_soup)
def test_token_soup_in_a_function(soup: str) -> None:
    source = "function f() {\n" + soup + "\n}\n"
    _must_not_crash(lambda: parse_program(source, "soup.test.js"), source)


@SETTINGS
@given(_soup)
def test_token_soup_at_top_level(soup: str) -> None:
    _must_not_crash(lambda: parse_program(soup, "soup.js"), soup)


@SETTINGS
@given(_soup)
def test_token_soup_in_a_scenario(soup: str) -> None:
    source = HEADER + "function test_soup() {\n" + soup + "\n}\n"
    _must_not_crash(lambda: load_scenario(source, "soup.test.js", "soup"), source)


@SETTINGS
@given(st.integers(min_value=1, max_value=400), st.sampled_from(["(", "[", "{", "`${", "!", "- "]))
def test_deep_nesting_never_exhausts_the_stack(depth: int, opener: str) -> None:
    closer = {"(": ")", "[": "]", "{": "}", "`${": "}`", "!": "", "- ": ""}[opener]
    inner = "{a: 1}" if opener == "{" else "1"
    source = "function f() {\n  x = " + opener * depth + inner + closer * depth + "\n}\n"
    _must_not_crash(lambda: parse_program(source, "deep.test.js"), source)


# --- (c) valid programs ------------------------------------------------------------

_NAMES = ["a", "b", "foo", "x1", "_y", "$z", "iffy", "return_", "lets", "forEach", "nullish"]
_NUMBERS = ["0", "42", "3.14", ".5", "1e3", "1_000", "0x1F", "2E-2"]
_STRINGS = [
    '""',
    '"Save"',
    "'it\\'s'",
    '"a\\nb\\tc"',
    '"\\u{1F600}"',
    '"\\uD83D\\uDE00"',
    '"\\x41\\0"',
    "'{ } ${x}'",
    '"/* not a comment */"',
    '"// nor this"',
]
_REGEXES = ["/a/", "/a\\/b/g", "/[/]/i", "/(x|y)+/gm", "/\\d{2,3}/", "/^\\s*$/m", "/[(]/"]
_KEYS = ["a", "if", "default", "return", "'data-id'", '"x y"', "7", "0x10", "b"]
_TEMPLATE_TEXT = st.text(st.sampled_from(list("ab {}$'\"\n/*")), max_size=6).map(
    lambda s: s.replace("${", "$ {")
)


def _template(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    @st.composite
    def build(draw: st.DrawFn) -> str:
        exprs = draw(st.lists(children, max_size=3))
        out = "`" + draw(_TEMPLATE_TEXT)
        for expr in exprs:
            pad = draw(st.sampled_from(["", " ", "\n"]))
            out += "${" + pad + expr + pad + "}" + draw(_TEMPLATE_TEXT)
        return out + "`"

    return build()


def _extend(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    binary_op = st.sampled_from(
        ["*", "/", "%", "+", "-", "<", "<=", ">", ">=", "==", "!=", "===", "!==", "&&", "||", "??"]
    )
    postfix_base = st.sampled_from(_NAMES) | children.map(lambda e: f"({e})")
    args = st.lists(children, max_size=3).map(", ".join)
    return st.one_of(
        st.tuples(children, binary_op, children).map(" ".join),
        st.tuples(st.sampled_from(["!", "-", "+"]), children).map(" ".join),
        children.map(lambda e: f"({e})"),
        st.tuples(children, children, children).map(lambda t: f"{t[0]} ? {t[1]} : {t[2]}"),
        st.lists(children, max_size=3).map(lambda es: "[" + ", ".join(es) + "]"),
        st.tuples(postfix_base, st.sampled_from([*_NAMES, "if", "default", "length"])).map(
            ".".join
        ),
        st.tuples(postfix_base, children).map(lambda t: f"{t[0]}[{t[1]}]"),
        st.tuples(postfix_base, args).map(lambda t: f"{t[0]}({t[1]})"),
        st.lists(st.sampled_from(_KEYS), unique=True, max_size=3).flatmap(
            lambda keys: st.tuples(*[children for _ in keys]).map(
                lambda values: (
                    "{" + ", ".join(f"{k}: {v}" for k, v in zip(keys, values, strict=True)) + "}"
                )
            )
        ),
        st.just("{ a, b: 1, }"),
        _template(children),
    )


_leaf = st.one_of(
    st.sampled_from(_NAMES),
    st.sampled_from(_NUMBERS),
    st.sampled_from(_STRINGS),
    st.sampled_from(_REGEXES),
    st.sampled_from(["true", "false", "null", "``", "`plain`"]),
)
expressions = st.recursive(_leaf, _extend, max_leaves=12)

_SEPARATORS = ["\n", ";\n", "; ", "\n\n", " // comment\n", "\n/* a\n comment */\n"]


@functools.cache
def _statements(depth: int) -> st.SearchStrategy[str]:
    name = st.sampled_from(_NAMES)
    simple = st.one_of(
        st.tuples(st.sampled_from(["let", "const"]), expressions).map(
            lambda t: f"{t[0]} __DECL__ = {t[1]}"
        ),
        st.just("let __DECL__"),
        st.tuples(name, st.sampled_from(["=", "+=", "-=", "*=", "/=", "%="]), expressions).map(
            " ".join
        ),
        st.tuples(name, st.sampled_from([*_NAMES, "if"]), expressions).map(
            lambda t: f"{t[0]}.{t[1]} = {t[2]}"
        ),
        st.tuples(name, expressions, expressions).map(lambda t: f"{t[0]}[{t[1]}] += {t[2]}"),
        st.tuples(name, st.lists(expressions, max_size=3)).map(
            lambda t: f"{t[0]}({', '.join(t[1])})"
        ),
        st.tuples(name, expressions).map(lambda t: f"{t[0]}.push({t[1]})"),
        st.tuples(name, st.sampled_from(["+", "/", "&&", "?? "]), expressions).map(" ".join),
        st.sampled_from(["break", "continue", "return;"]),
        expressions.map(lambda e: f"return {e}"),
        expressions.map(lambda e: f"throw {e}"),
    )
    if depth == 0:
        return simple
    block = _block(depth - 1)
    return st.one_of(
        simple,
        simple,
        st.tuples(expressions, block).map(lambda t: f"if ({t[0]}) {t[1]}"),
        st.tuples(expressions, block, block).map(lambda t: f"if ({t[0]}) {t[1]} else {t[2]}"),
        st.tuples(expressions, block, expressions, block).map(
            lambda t: f"if ({t[0]}) {t[1]} else if ({t[2]}) {t[3]}"
        ),
        st.tuples(st.sampled_from(["let", "const"]), name, expressions, block).map(
            lambda t: f"for ({t[0]} {t[1]} of {t[2]}) {t[3]}"
        ),
        st.tuples(expressions, block).map(lambda t: f"while ({t[0]}) {t[1]}"),
        st.tuples(block, name, block).map(lambda t: f"try {t[0]} catch ({t[1]}) {t[2]}"),
        st.tuples(block, block).map(lambda t: f"try {t[0]} catch {t[1]}"),
        st.tuples(block, block).map(lambda t: f"try {t[0]} finally {t[1]}"),
    )


@functools.cache
def _block(depth: int) -> st.SearchStrategy[str]:
    statements = st.lists(_statements(depth), max_size=4)

    @st.composite
    def build(draw: st.DrawFn) -> str:
        stmts = draw(statements)
        out = "{\n"
        for i, stmt in enumerate(stmts):
            # Inner blocks already named their declarations: only ours are left.
            out += stmt.replace("__DECL__", f"d{i}") + draw(st.sampled_from(_SEPARATORS))
        return out + "}"

    return build()


@st.composite
def programs(draw: st.DrawFn) -> str:
    count = draw(st.integers(min_value=1, max_value=3))
    out = draw(st.sampled_from(["", "// leading comment\n", "\n\n"]))
    for i in range(count):
        params = draw(st.lists(st.sampled_from(_NAMES), unique=True, max_size=3))
        out += f"function f{i}({', '.join(params)}) " + draw(_block(2)) + "\n"
    return out


_NOT_STRUCTURE = {"span", "name_span", "op_span", "header_end", "pattern"}


def _shape(node: object) -> object:
    """A node without its positions, to compare trees parsed from different offsets."""
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        return (
            type(node).__name__,
            tuple(
                (f.name, _shape(getattr(node, f.name)))
                for f in dataclasses.fields(node)
                if f.name not in _NOT_STRUCTURE
            ),
        )
    if isinstance(node, tuple):
        return tuple(_shape(item) for item in node)
    return node


def _walk(node: object) -> Iterator[object]:
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, tuple):
            stack.extend(item)
        elif dataclasses.is_dataclass(item) and not isinstance(item, type | ast.Span):
            yield item
            stack.extend(
                getattr(item, f.name) for f in dataclasses.fields(item) if f.name != "span"
            )


_STMT_TYPES = tuple(t for t in ast.Stmt.__args__)  # type: ignore[attr-defined]
_EXPR_TYPES = tuple(t for t in ast.Expr.__args__)  # type: ignore[attr-defined]


def _check_span(span: ast.Span, source: str) -> None:
    for offset, line, col in (
        (span.start, span.line, span.col),
        (span.end, span.end_line, span.end_col),
    ):
        assert line == source.count("\n", 0, offset) + 1, (span, source[offset : offset + 20])
        assert col == offset - (source.rfind("\n", 0, offset) + 1), span
    assert span.start <= span.end


_LEAF_TEXT = {
    ast.Identifier: lambda node: node.name,
    ast.BoolLit: lambda node: "true" if node.value else "false",
    ast.NullLit: lambda node: "null",
}


# Whole generated programs are the slowest examples here: a third of the budget.
@settings(SETTINGS, max_examples=max(20, SETTINGS.max_examples // 3))
@given(programs(), st.randoms(use_true_random=False))
def test_valid_programs_parse_with_exact_spans_and_stable_reparse(
    source: str, rnd: random.Random
) -> None:
    try:
        program = parse_program(source, "valid.test.js")
    except ScenarioSyntaxError as err:
        pytest.fail(f"valid program rejected:\n{err}\n--- source ---\n{source}")
    statements: list[Any] = []
    expressions: list[Any] = []
    for node in _walk(program.functions):
        for field in ("span", "name_span", "op_span"):
            span = getattr(node, field, None)
            if isinstance(span, ast.Span):
                _check_span(span, source)
        text = source[node.span.start : node.span.end]
        if type(node) in _LEAF_TEXT:  # a parenthesised node's span holds its parentheses
            assert text.strip("() \n") == _LEAF_TEXT[type(node)](node), text
        if isinstance(node, _STMT_TYPES):
            statements.append(node)
            assert text.startswith(program.statement_text(node, limit=10_000))
        elif isinstance(node, _EXPR_TYPES):
            expressions.append(node)
    # Re-parsing every node would be quadratic; a random handful per program suffices.
    for node in rnd.sample(statements, min(len(statements), 6)):
        text = source[node.span.start : node.span.end]
        again = parse_statements(text)
        assert len(again) == 1, text
        assert _shape(again[0]) == _shape(node), text
    for node in rnd.sample(expressions, min(len(expressions), 10)):
        text = source[node.span.start : node.span.end]
        assert _shape(parse_expression(text)) == _shape(node), text


@SETTINGS
@given(expressions)
def test_valid_expressions_parse_in_every_position(expr: str) -> None:
    """The same expression as a value, an argument, an element, a template part, a test."""
    body = (
        f"let v = {expr}\n"
        f"call({expr}, {expr})\n"
        f"let w = [{expr}]\n"
        f"let t = `<${{{expr}}}>`\n"
        f"if ({expr}) {{ w = {{ k: {expr} }} }}\n"
        f"while ({expr}) {{ break }}\n"
        f"for (const i of {expr}) {{}}\n"
    )
    source = "function f() {\n" + body + "}\n"
    try:
        program = parse_program(source, "expr.test.js")
    except ScenarioSyntaxError as err:
        pytest.fail(f"valid expression rejected:\n{err}\n--- source ---\n{source}")
    first = program.functions[0].body.body[0]
    assert isinstance(first, ast.VarDecl) and first.init is not None
    assert _shape(parse_expression(expr)) == _shape(first.init)
    assert re.sub(r"\s+", "", source[first.init.span.start : first.init.span.end]) == re.sub(
        r"\s+", "", expr
    )


# --- (d) the `unotest check` path: parser, scenario rules, then the static checker ----

_CHECK_BUILTINS = {"goto": (1, 2), "click": (1, 1), "log": (0, None), "call": (0, None)}


def _check_must_not_crash(source: str) -> None:
    """What ``unotest check`` does with one scenario file: a syntax error or a list of
    diagnostics, each placed inside the file and printable; never another exception."""
    try:
        scenario = load_scenario(source, "check.test.js", "check")
    except ScenarioSyntaxError as err:
        _check_error(err, source)
        return
    except BaseException as err:
        pytest.fail(f"{type(err).__name__} escaped load_scenario for {source!r}")
    try:
        found = check_program(scenario.program, {"helper": (1, 1)}, _CHECK_BUILTINS)
    except BaseException as err:  # RecursionError, KeyError, ...: all checker bugs
        pytest.fail(
            f"{type(err).__name__} escaped the checker for {source!r}:\n"
            + "".join(traceback.format_exception(err))
        )
    lines = source.split("\n")
    for diagnostic in found:
        assert 1 <= diagnostic.line <= len(lines) and diagnostic.col >= 0, diagnostic
        assert str(diagnostic).startswith(f"check.test.js:{diagnostic.line}:"), diagnostic


# Budget: these add two small runs to the file (a tenth of its examples each).
@settings(SETTINGS, max_examples=max(10, SETTINGS.max_examples // 10))
@given(_soup)
def test_check_path_on_token_soup(soup: str) -> None:
    _check_must_not_crash(HEADER + "function test_soup() {\n" + soup + "\n}\n")


@settings(SETTINGS, max_examples=max(10, SETTINGS.max_examples // 10))
@given(programs())
def test_check_path_on_valid_programs(source: str) -> None:
    """Valid programs reach the checker (undeclared names, arities, break outside a
    loop): every diagnostic it finds must be reported, never raised."""
    body = source.replace("function f0(", "function test_f0(", 1)
    _check_must_not_crash(HEADER + body)
