"""The parser on valid input: tree shapes, exact positions, statement texts, lexing.

Positions follow the protocol: line 1-based, column 0-based, ends exclusive, plus the
character offsets ``start``/``end`` into the file.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from dsl import ast
from dsl.errors import ScenarioSyntaxError
from dsl.parser import parse_expression, parse_program, parse_statements


def body(source: str) -> tuple[ast.Stmt, ...]:
    """The statements of ``function f() { <source> }``."""
    program = parse_program("function f() {\n" + source + "\n}\n", "t.test.js")
    return program.functions[0].body.body


def expr(source: str) -> ast.Expr:
    (stmt,) = body("x = " + source)
    assert isinstance(stmt, ast.Assign)
    return stmt.value


def span(line: int, col: int, end_line: int, end_col: int, start: int, end: int) -> ast.Span:
    return ast.Span(line, col, end_line, end_col, start, end)


def syntax_error(source: str) -> ScenarioSyntaxError:
    with pytest.raises(ScenarioSyntaxError) as info:
        parse_program(source, "bad.test.js")
    return info.value


def in_function_error(source: str) -> ScenarioSyntaxError:
    return syntax_error("function f() {\n" + source + "\n}\n")


# --- positions --------------------------------------------------------------------

POSITIONS = (
    "function test_a(p, q) {\n"  # 0..23, line 1
    '  let x = foo(1, "b")\n'  # 24..45, line 2
    "  if (x) {\n"  # 46..56, line 3
    "    click(x.y)\n"  # 57..71, line 4
    "  }\n"  # 72..75, line 5
    "  total += a - b * c\n"  # 76..96, line 6
    "}\n"  # 97, line 7
)


def test_function_positions() -> None:
    program = parse_program(POSITIONS, "pos.test.js")
    (fn,) = program.functions
    assert fn.name == "test_a" and fn.params == ("p", "q")
    assert fn.name_span == span(1, 9, 1, 15, 9, 15)
    assert fn.span == span(1, 0, 7, 1, 0, 98)
    assert fn.body.span == span(1, 22, 7, 1, 22, 98)


def test_statement_and_expression_positions() -> None:
    program = parse_program(POSITIONS, "pos.test.js")
    decl, if_stmt, assign = program.functions[0].body.body

    assert isinstance(decl, ast.VarDecl)
    assert decl.span == span(2, 2, 2, 21, 26, 45)
    call = decl.init
    assert isinstance(call, ast.Call)
    assert call.span == span(2, 10, 2, 21, 34, 45)
    assert call.callee == ast.Identifier("foo", span(2, 10, 2, 13, 34, 37))
    one, b = call.args
    assert one == ast.NumberLit(1.0, span(2, 14, 2, 15, 38, 39))
    assert b == ast.StringLit("b", span(2, 17, 2, 20, 41, 44))

    assert isinstance(if_stmt, ast.If)
    assert if_stmt.span == span(3, 2, 5, 3, 48, 75)
    assert if_stmt.test == ast.Identifier("x", span(3, 6, 3, 7, 52, 53))
    assert if_stmt.header_end == 54
    assert if_stmt.consequent.span == span(3, 9, 5, 3, 55, 75)
    (click,) = if_stmt.consequent.body
    assert isinstance(click, ast.ExprStmt)
    assert click.span == span(4, 4, 4, 14, 61, 71)
    assert isinstance(click.expr, ast.Call)
    (member,) = click.expr.args
    assert isinstance(member, ast.Member)
    assert member.span == span(4, 10, 4, 13, 67, 70)
    assert member.name_span == span(4, 12, 4, 13, 69, 70)

    assert isinstance(assign, ast.Assign)
    assert assign.op == "+="
    assert assign.span == span(6, 2, 6, 20, 78, 96)
    minus = assign.value
    assert isinstance(minus, ast.Binary) and minus.op == "-"
    assert minus.span == span(6, 11, 6, 20, 87, 96)
    assert minus.op_span == span(6, 13, 6, 14, 89, 90)
    times = minus.right
    assert isinstance(times, ast.Binary) and times.op == "*"
    assert times.span == span(6, 15, 6, 20, 91, 96)
    assert times.op_span == span(6, 17, 6, 18, 93, 94)


def test_multiline_expression_positions() -> None:
    source = "function f() {\n  log(\n    1,\n    (a + b)\n  )\n}"
    (stmt,) = parse_program(source, "m.js").functions[0].body.body
    assert isinstance(stmt, ast.ExprStmt) and isinstance(stmt.expr, ast.Call)
    assert stmt.span == span(2, 2, 5, 3, 17, 44)
    paren = stmt.expr.args[1]
    # A parenthesised expression's span holds its parentheses.
    assert isinstance(paren, ast.Binary)
    assert paren.span == span(4, 4, 4, 11, 33, 40)
    assert paren.left.span == span(4, 5, 4, 6, 34, 35)


def test_positions_with_crlf_and_tabs() -> None:
    source = "function f() {\r\n\tlet a = 1\r\n\tlog(a)\r\n}\r\n"
    decl, call = parse_program(source, "crlf.js").functions[0].body.body
    assert decl.span == span(2, 1, 2, 10, 17, 26)
    assert call.span == span(3, 1, 3, 7, 29, 35)


def test_unary_conditional_logical_index_positions() -> None:
    value = expr("!a ? b[0] : c ?? -d")  # starts at offset 19, line 2 col 4
    assert isinstance(value, ast.Conditional)
    assert value.span == span(2, 4, 2, 23, 19, 38)
    assert value.test == ast.Unary(
        "!", ast.Identifier("a", span(2, 5, 2, 6, 20, 21)), value.test.span
    )
    assert value.test.span == span(2, 4, 2, 6, 19, 21)
    index = value.consequent
    assert isinstance(index, ast.Index)
    assert index.span == span(2, 9, 2, 13, 24, 28)
    logical = value.alternate
    assert isinstance(logical, ast.Logical) and logical.op == "??"
    assert logical.span == span(2, 16, 2, 23, 31, 38)
    assert isinstance(logical.right, ast.Unary) and logical.right.op == "-"


def test_error_positions_are_exact() -> None:
    err = in_function_error("  let a = 1\n  click(a,, 2)")
    assert (err.file, err.line, err.col) == ("bad.test.js", 3, 10)
    assert err.source_line == "  click(a,, 2)"


# --- statement texts ----------------------------------------------------------------

TEXTS = """function f() {
  click("Save");
  let total = price * 2
  if (total > 10 && ok) {
    log("big")
  } else if (total > 5) {
    log("medium")
  } else {
    log("small")
  }
  for (const item of items.slice(1)) {
    log(item)
  }
  for (let i of range(3)) { log(i) }
  while (count < 3) {
    count += 1
  }
  try {
    fail("x")
  } catch (e) {
    log(e)
  } finally {
    log("done")
  }
  return total
}
"""


def test_statement_text_of_simple_and_compound_statements() -> None:
    program = parse_program(TEXTS, "texts.test.js")
    stmts = program.functions[0].body.body
    texts = [program.statement_text(s) for s in stmts]
    assert texts == [
        'click("Save")',
        "let total = price * 2",
        "if (total > 10 && ok)",
        "for (const item of items.slice(1))",
        "for (let i of range(3))",
        "while (count < 3)",
        "try",
        "return total",
    ]
    if_stmt = stmts[2]
    assert isinstance(if_stmt, ast.If) and isinstance(if_stmt.alternate, ast.If)
    assert program.statement_text(if_stmt.alternate) == "if (total > 5)"
    assert program.statement_text(if_stmt.consequent.body[0]) == 'log("big")'


def test_statement_text_of_a_multiline_header() -> None:
    program = parse_program("function f() {\n  if (a &&\n      b) {\n  }\n}", "m.js")
    (stmt,) = program.functions[0].body.body
    assert program.statement_text(stmt) == "if (a &&\n      b)"


def test_statement_text_is_cut_at_200_characters() -> None:
    long_arg = "x" * 300
    program = parse_program(f'function f() {{\n  log("{long_arg}")\n}}', "long.js")
    (stmt,) = program.functions[0].body.body
    text = program.statement_text(stmt)
    assert len(text) == 200
    assert text == f'log("{long_arg}")'[:199] + "…"
    assert program.statement_text(stmt, limit=20) == 'log("xxxxxxxxxxxxxx…'

    exact = "y" * (200 - len('log("")'))
    program = parse_program(f'function f() {{\n  log("{exact}")\n}}', "exact.js")
    (stmt,) = program.functions[0].body.body
    assert program.statement_text(stmt) == f'log("{exact}")'

    program = parse_program(f"function f() {{\n  if ({long_arg}) {{}}\n}}", "if.js")
    (stmt,) = program.functions[0].body.body
    assert program.statement_text(stmt) == f"if ({long_arg}"[:199] + "…"


# --- semicolons and ASI -------------------------------------------------------------


def test_semicolons_are_optional() -> None:
    stmts = body("a(); b();; c()\nlet d = 1;\nlet e\nconst f = 2;")
    kinds = [type(s).__name__ for s in stmts]
    assert kinds == ["ExprStmt", "ExprStmt", "ExprStmt", "VarDecl", "VarDecl", "VarDecl"]
    # A statement's span (and text) stops before its semicolon.
    first = stmts[0]
    assert first.span.end - first.span.start == len("a()")


def test_a_line_break_before_parenthesis_continues_a_call() -> None:
    (stmt,) = body("foo\n(b)")  # as in JavaScript: a call, not two statements
    assert isinstance(stmt, ast.ExprStmt)
    assert isinstance(stmt.expr, ast.Call)
    assert stmt.expr.args == (ast.Identifier("b", stmt.expr.args[0].span),)
    assert stmt.span.line == 2 and stmt.span.end_line == 3


def test_a_line_break_before_an_operator_continues_the_expression() -> None:
    (stmt,) = body("x = a\n  + b\n  / 2")
    assert isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Binary)
    assert stmt.value.op == "+"
    assert isinstance(stmt.value.right, ast.Binary) and stmt.value.right.op == "/"


def test_statements_end_at_line_breaks_when_the_next_token_cannot_continue() -> None:
    stmts = body("let a = 1\nlet b = a\nb = 2\nlog(a)\nbreak\ncontinue\nreturn")
    assert [type(s).__name__ for s in stmts] == [
        "VarDecl",
        "VarDecl",
        "Assign",
        "ExprStmt",
        "Break",
        "Continue",
        "Return",
    ]


def test_return_followed_by_a_line_break_returns_the_next_line() -> None:
    # Documented difference from JavaScript (docs/language.md, "Optional semicolons").
    (stmt,) = body("return\n  x")
    assert isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.Identifier)


# --- regex versus division ----------------------------------------------------------


def test_slashes_after_an_operand_divide() -> None:
    value = expr("a / b / c")
    assert isinstance(value, ast.Binary) and value.op == "/"
    assert isinstance(value.left, ast.Binary) and value.left.op == "/"
    assert value.right == ast.Identifier("c", value.right.span)
    for source in ("(a) / 2 / 1", "a[0] / 2", "f() / 2", "4 /2/ 1", '"s" / 2', "a\n/ b / g"):
        assert isinstance(expr(source), ast.Binary), source


def test_a_slash_where_an_expression_starts_is_a_regex() -> None:
    value = expr("/a\\/b/g")
    assert isinstance(value, ast.RegexLit)
    assert (value.source, value.flags) == ("a\\/b", "g")
    assert value.pattern.search("xa/b") is not None
    assert value.span == span(2, 4, 2, 11, 19, 26)

    eq = expr("/=/")  # not the `/=` operator
    assert isinstance(eq, ast.RegexLit) and eq.source == "="
    cls = expr("/[/]+/i")
    assert isinstance(cls, ast.RegexLit) and cls.source == "[/]+" and cls.flags == "i"


def test_regex_and_division_in_one_array() -> None:
    value = expr("[/a/, 1 / 2, x / y, /b/gm]")
    assert isinstance(value, ast.ArrayLit)
    kinds = [type(e).__name__ for e in value.elements]
    assert kinds == ["RegexLit", "Binary", "Binary", "RegexLit"]


def test_divide_assign_and_regex_arguments() -> None:
    (stmt,) = body("x /= 2")
    assert isinstance(stmt, ast.Assign) and stmt.op == "/="
    (stmt,) = body('s.replace(/a+/g, "b")')
    assert isinstance(stmt, ast.ExprStmt) and isinstance(stmt.expr, ast.Call)
    assert isinstance(stmt.expr.args[0], ast.RegexLit)


def test_regex_after_keywords() -> None:
    (stmt,) = body("return /x/")
    assert isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.RegexLit)
    (stmt,) = body("throw /x/")
    assert isinstance(stmt, ast.Throw) and isinstance(stmt.value, ast.RegexLit)
    (stmt,) = body("for (const m of /x/) {}")
    assert isinstance(stmt, ast.ForOf) and isinstance(stmt.iterable, ast.RegexLit)


# --- template literals ----------------------------------------------------------------


def test_template_quasis_and_expressions() -> None:
    value = expr("`Hello ${name}, $5 {not} ${a + 1}!`")
    assert isinstance(value, ast.TemplateLit)
    assert value.quasis == ("Hello ", ", $5 {not} ", "!")
    assert [type(e).__name__ for e in value.exprs] == ["Identifier", "Binary"]
    empty = expr("``")
    assert isinstance(empty, ast.TemplateLit) and empty.quasis == ("",) and empty.exprs == ()


def test_template_escapes_are_cooked() -> None:
    value = expr("`a\\n\\`\\${x}\\u{41}`")
    assert isinstance(value, ast.TemplateLit)
    assert value.quasis == ("a\n`${x}A",) and value.exprs == ()


@pytest.mark.parametrize(
    ("source", "kind"),
    [
        ("`${ {k: 1}.k }`", "Member"),  # braces of an object
        ("`${ {a: {b: 2}} }`", "ObjectLit"),  # nested braces
        ("`${ \"}\" + '`' }`", "Binary"),  # a brace and a backtick in strings
        ("`${ `in ${ `deeper ${x}` }` }`", "TemplateLit"),  # nested templates
        ("`${ a /* } */ }`", "Identifier"),  # a brace in a comment
        ('`${ s.replace(/}/g, "") }`', "Call"),  # a brace in a regex
        ("`${ f({a: `}`}) }`", "Call"),
    ],
)
def test_template_expressions_with_braces_strings_and_templates(source: str, kind: str) -> None:
    value = expr(source)
    assert isinstance(value, ast.TemplateLit)
    assert len(value.exprs) == 1
    assert type(value.exprs[0]).__name__ == kind
    assert value.quasis == ("", "")


def test_nested_template_values() -> None:
    value = expr("`a${ `b${ c }d` }e`")
    assert isinstance(value, ast.TemplateLit)
    inner = value.exprs[0]
    assert isinstance(inner, ast.TemplateLit)
    assert value.quasis == ("a", "e") and inner.quasis == ("b", "d")
    assert isinstance(inner.exprs[0], ast.Identifier) and inner.exprs[0].name == "c"


def test_positions_inside_templates_are_absolute() -> None:
    source = (
        "function f() {\n"  # 0..14
        "  let t = `a\n"  # 15..27, line 2
        "b ${ x.y } c ${ `in ${ z }` }`\n"  # 28.., line 3
        "}\n"
    )
    (decl,) = parse_program(source, "tpl.js").functions[0].body.body
    assert isinstance(decl, ast.VarDecl)
    template = decl.init
    assert isinstance(template, ast.TemplateLit)
    assert template.span == span(2, 10, 3, 30, 25, 58)
    member, nested = template.exprs
    assert isinstance(member, ast.Member)
    assert member.span == span(3, 5, 3, 8, 33, 36)
    assert member.obj.span == span(3, 5, 3, 6, 33, 34)
    assert member.name_span == span(3, 7, 3, 8, 35, 36)
    assert isinstance(nested, ast.TemplateLit)
    assert nested.span == span(3, 16, 3, 27, 44, 55)
    z = nested.exprs[0]
    assert z == ast.Identifier("z", span(3, 23, 3, 24, 51, 52))
    assert source[z.span.start : z.span.end] == "z"


def test_errors_inside_templates_point_into_the_template() -> None:
    err = in_function_error("  x = `ok\n  ${ 1 + } `")
    assert (err.line, err.col) == (3, 9)
    assert "${}" in err.message
    err = in_function_error("  x = `${ a b }`")
    assert (err.line, err.col) == (2, 12)


# --- keywords as property names --------------------------------------------------------


def test_keywords_are_property_names() -> None:
    value = expr("o.if.default.return.null")
    names = []
    while isinstance(value, ast.Member):
        names.append(value.name)
        value = value.obj
    assert names == ["null", "return", "default", "if"]
    (stmt,) = body("o.for = 1")
    assert isinstance(stmt, ast.Assign) and isinstance(stmt.target, ast.Member)
    (stmt,) = body("o.catch(1)")
    assert isinstance(stmt, ast.ExprStmt)


def test_keywords_and_other_keys_in_object_literals() -> None:
    value = expr('{ default: 1, if: 2, "data-id": 3, 4: 5, 0x10: 6, class: 7, a, }')
    assert isinstance(value, ast.ObjectLit)
    assert [p.key for p in value.properties] == [
        "default",
        "if",
        "data-id",
        "4",
        "16",
        "class",
        "a",
    ]
    shorthand = value.properties[-1]
    assert isinstance(shorthand.value, ast.Identifier) and shorthand.value.name == "a"


def test_names_that_start_like_keywords() -> None:
    stmts = body("let iffy = 1\nlet lets = 2\nlet returned = nullish\nlet of_ = forEach")
    assert [s.name for s in stmts if isinstance(s, ast.VarDecl)] == [
        "iffy",
        "lets",
        "returned",
        "of_",
    ]


# --- numbers ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "value"),
    [
        ("42", 42.0),
        ("1_000", 1000.0),
        ("1_000.5", 1000.5),
        ("0x1F", 31.0),
        ("0XfF", 255.0),
        ("0b101", 5.0),
        ("0o17", 15.0),
        ("1e3", 1000.0),
        ("2E-2", 0.02),
        (".5", 0.5),
        ("3.14", 3.14),
        ("5.", 5.0),
        ("0", 0.0),
    ],
)
def test_numbers(source: str, value: float) -> None:
    node = expr(source)
    assert node == ast.NumberLit(value, node.span)
    assert node.span.end - node.span.start == len(source)


@pytest.mark.parametrize("source", ["3abc", "1__0", "1_", "0x", "08", "1e", "0x1G"])
def test_malformed_numbers(source: str) -> None:
    err = in_function_error(f"  x = {source}")
    assert (err.line, err.col) == (2, 6)


# --- strings -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "value"),
    [
        (r'"a\nb\tc\rd"', "a\nb\tc\rd"),
        (r"'\\ \' \" \` \0'", "\\ ' \" ` \0"),
        (r'"\b\f\v"', "\b\f\v"),
        (r'"\x41\x7e"', "A~"),
        (r'"\u0041\u00e9"', "Aé"),
        (r'"\u{1F600}"', "\U0001f600"),
        (r'"\u{41}"', "A"),
        (r'"\uD83D\uDE00"', "\U0001f600"),
        (r'"\q\$"', "q$"),
        ('"a\\\nb"', "ab"),
        ("'it''", None),
    ],
)
def test_string_escapes(source: str, value: str | None) -> None:
    if value is None:
        in_function_error(f"  x = {source}")
        return
    node = expr(source)
    assert isinstance(node, ast.StringLit)
    assert node.value == value


@pytest.mark.parametrize(
    ("escape", "message"),
    [
        (r"\x4", "\\x must be followed by two hex digits"),
        (r"\u12", "\\u must be followed by four hex digits"),
        (r"\u{}", "\\u{...}"),
        (r"\u{110000}", "at most 10FFFF"),
        (r"\01", "octal escapes are not allowed"),
    ],
)
def test_bad_string_escapes_point_at_the_backslash(escape: str, message: str) -> None:
    err = in_function_error(f'  x = "ab{escape}"')
    assert message in err.message
    assert (err.line, err.col) == (2, 9)


# --- reserved words ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        "function f() {\n  let new = 1\n}",
        "function f() {\n  const class = 1\n}",
        "function f() {\n  let if = 1\n}",
        "function f() {\n  let undefined = 1\n}",
        "function default() {\n}",
        "function f(this) {\n}",
        "function f(a, await) {\n}",
        "function f() {\n  for (const in of xs) {}\n}",
        "function f() {\n  try {} catch (typeof) {}\n}",
        "function f() {\n  x = { yield }\n}",
        "function f() {\n  x = delete\n}",
    ],
)
def test_reserved_words_cannot_be_names(source: str) -> None:
    err = syntax_error(source)
    assert "reserved word" in err.message
    line = source.split("\n")[err.line - 1]
    word = line[err.col :].split()[0].strip("(){},")
    assert word in {
        "new",
        "class",
        "if",
        "undefined",
        "default",
        "this",
        "await",
        "in",
        "typeof",
        "yield",
        "delete",
    }


def test_var_gets_its_own_message() -> None:
    err = in_function_error("  var x = 1")
    assert "'var' is not supported" in err.message


@pytest.mark.parametrize(
    ("source", "word", "col"),
    [
        ("  for (const of of [1]) { log(of) }", "of", 13),
        ("  try { x() } catch (of) { log(of) }", "of", 21),
        ("  for (let new of [1]) {}", "new", 11),
    ],
)
def test_a_reserved_name_is_refused_where_it_is_declared(source: str, word: str, col: int) -> None:
    """Not at its first use in the body, which the parser reads first."""
    err = in_function_error(source)
    assert err.message == f"'{word}' is a reserved word and cannot be used as a name"
    assert (err.line, err.col) == (2, col)


def test_a_reserved_parameter_is_refused_where_it_is_declared() -> None:
    err = syntax_error("function f(a, of) {\n  log(of)\n}\n")
    assert err.message == "'of' is a reserved word and cannot be used as a name"
    assert (err.line, err.col) == (1, 14)


# --- JavaScript the language leaves out ---------------------------------------------------


@pytest.mark.parametrize(
    ("source", "col", "start"),
    [
        # default parameter values
        ("function f(a = 1) {}", 13, "default parameter values are not supported"),
        ("function f(a, b=1) {}", 15, "default parameter values are not supported"),
        # logical assignment: the caret at the operator
        ("x ??= 1", 2, "'??=' (logical assignment) is not supported: write x = x ?? ..."),
        ("x ||= 5", 2, "'||=' (logical assignment) is not supported: write x = x || ..."),
        ("x &&= 1", 2, "'&&=' (logical assignment) is not supported: write x = x && ..."),
        ("o.a ||= 5", 4, "'||=' (logical assignment) is not supported: write o.a = o.a || ..."),
        # exponentiation
        ("x **= 2", 2, "'**=' (exponentiation) is not supported"),
        ("log(2 ** 3)", 6, "'**' (exponentiation) is not supported"),
        ("log(2**3)", 5, "'**' (exponentiation) is not supported"),
        # JavaScript's word operators, followed by a value or by a parenthesis
        ("log(typeof 1)", 4, "'typeof' is a reserved word and not supported"),
        ("log(typeof(x))", 4, "'typeof' is a reserved word and not supported"),
        ('if (typeof x === "s") {}', 4, "'typeof' is a reserved word and not supported"),
        ("log(void 0)", 4, "'void' is a reserved word and not supported: write null"),
        ("void f()", 0, "'void' is a reserved word and not supported: write null"),
        ("let d = new Date()", 8, "'new' is a reserved word and not supported"),
        ("delete o.a", 0, "'delete' is a reserved word and not supported"),
        # optional chaining: the caret at the '?'
        ("log(o?.a)", 5, "'?.' (optional chaining) is not supported"),
        ("log(o?.[0])", 5, "'?.' (optional chaining) is not supported"),
        ("f?.()", 1, "'?.' (optional chaining) is not supported"),
        # spread and rest: the caret at the '...'
        ("log([...a])", 5, "spread ('...') is not supported: copy an array with .slice()"),
        ("log([1, ...a])", 8, "spread ('...') is not supported: copy an array with .slice()"),
        ("f(...args)", 2, "spread ('...') is not supported in a call"),
        ("log({...o})", 5, "spread ('...') is not supported: write the object's keys"),
        ("function f(...rest) {}", 11, "rest parameters ('...') are not supported"),
        ("function f(a, ...rest) {}", 14, "rest parameters ('...') are not supported"),
        # the second half of a compound statement alone
        ("log(1) else { }", 7, "'else' without an 'if' before it"),
        ("log(1)\nelse { }", 0, "'else' without an 'if' before it"),
        ("log(1)\nelse if (x) { }", 0, "'else' without an 'if' before it"),
        ("log(1) catch (e) { }", 7, "'catch' without a 'try' before it"),
        ("log(1)\ncatch { }", 0, "'catch' without a 'try' before it"),
        ("log(1)\nfinally { }", 0, "'finally' without a 'try' before it"),
        # a literal keyword alone, as a string or a number alone
        ("true", 0, "a statement cannot start with 'true': statements start with a name"),
        ("false", 0, "a statement cannot start with 'false': statements start with a name"),
        ("null", 0, "a statement cannot start with 'null': statements start with a name"),
    ],
)
def test_unsupported_javascript_says_what_it_is(source: str, col: int, start: str) -> None:
    """Each on the test function's last line; the caret at the construct's first token."""
    err = syntax_error("function test_main() {\n" + source + "\n}\n")
    assert err.message.startswith(start)
    assert (err.line, err.col) == (1 + source.count("\n") + 1, col)


@pytest.mark.parametrize(
    ("source", "message"),
    [
        # a real else, catch or finally without braces: the braces are what is missing
        ("if (x) { } else log(2)", "a block needs braces: '{ ... }'"),
        ("try { } catch e { }", "a block needs braces: '{ ... }'"),
        # a clause word that starts nothing is just a reserved word
        ("log(else)", "'else' is a reserved word and cannot be used as a name"),
        ("let typeof = 1", "'typeof' is a reserved word and cannot be used as a name"),
    ],
)
def test_clause_words_and_word_operators_elsewhere_keep_their_messages(
    source: str, message: str
) -> None:
    err = syntax_error("function test_main() {\n" + source + "\n}\n")
    assert err.message == message


# --- other entry points -------------------------------------------------------------------


def test_parse_expression_and_statements() -> None:
    value = parse_expression("a + `b${c}`")
    assert isinstance(value, ast.Binary) and isinstance(value.right, ast.TemplateLit)
    assert value.span == span(1, 0, 1, 11, 0, 11)
    stmts = parse_statements("let a = 1\nlog(a)")
    assert [type(s).__name__ for s in stmts] == ["VarDecl", "ExprStmt"]
    with pytest.raises(ScenarioSyntaxError) as info:
        parse_statements("let a = ", "<eval>")
    assert info.value.file == "<eval>"


def test_operator_precedence() -> None:
    value = parse_expression("a || b && c == d < e + f * !g ?? h ? i : j")
    assert isinstance(value, ast.Conditional)
    nullish = value.test
    assert isinstance(nullish, ast.Logical) and nullish.op == "??"
    or_ = nullish.left
    assert isinstance(or_, ast.Logical) and or_.op == "||"
    and_ = or_.right
    assert isinstance(and_, ast.Logical) and and_.op == "&&"
    eq = and_.right
    assert isinstance(eq, ast.Binary) and eq.op == "=="
    lt = eq.right
    assert isinstance(lt, ast.Binary) and lt.op == "<"
    plus = lt.right
    assert isinstance(plus, ast.Binary) and plus.op == "+"
    times = plus.right
    assert isinstance(times, ast.Binary) and times.op == "*"
    assert isinstance(times.right, ast.Unary) and times.right.op == "!"


# --- threads -------------------------------------------------------------------------------


def _thread_file(i: int) -> str:
    return (
        f"// file {i}\n"
        f"function test_{i}() {{\n"
        f"  let v{i} = `n${{ {i} + `${{ {{k: [{i}, /r{i}/g]}}.k }}` }}`\n"
        f"  for (const x of range({i})) {{\n"
        f"    log(v{i}, x / {i + 1}, 'file {i}')\n"
        "  }\n"
        "}\n"
    )


def test_parsing_is_thread_safe() -> None:
    sources = {f"file{i}.test.js": _thread_file(i) for i in range(8)}
    expected = {name: parse_program(src, name) for name, src in sources.items()}
    broken = {f"bad{i}.test.js": "function f() {\n  x = `${ 1 + }`\n" * (i + 1) for i in range(8)}
    barrier = threading.Barrier(8)

    def work(i: int) -> list[object]:
        barrier.wait()
        out: list[object] = []
        for _ in range(15):
            name = f"file{i}.test.js"
            out.append(parse_program(sources[name], name))
            bad = f"bad{i}.test.js"
            try:
                parse_program(broken[bad], bad)
            except ScenarioSyntaxError as err:
                out.append((err.file, err.line, err.col))
        return out

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(work, range(8)))
    for i, outs in enumerate(results):
        name = f"file{i}.test.js"
        programs = outs[0::2]
        errors = outs[1::2]
        assert all(p == expected[name] for p in programs), name
        assert all(e == (f"bad{i}.test.js", 2, 14) for e in errors), errors


# --- statement separation ---------------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        "a(); b()",
        "a()\nb()",
        "let x = 1; let y = 2;",
        "a() /* a\n comment */ b()",
        "a() // comment\nb()",
        "if (a) {} b()",
        "while (a) {} try {} finally {} c()",
        "return;",
    ],
)
def test_statements_separated_by_a_semicolon_or_a_line_break(source: str) -> None:
    assert body(source)


@pytest.mark.parametrize(
    ("source", "col"),
    [
        ("let total = price count", 18),
        ("a() b()", 4),
        ("x = 1 y = 2", 6),
        ("a() /* ; */ b()", 12),
        ("break continue", 6),
    ],
)
def test_two_statements_on_one_line_need_a_semicolon(source: str, col: int) -> None:
    err = in_function_error(source)
    assert "two statements on one line need a ';'" in err.message
    assert (err.line, err.col) == (2, col)


# --- lexer corner cases --------------------------------------------------------------------


def test_a_template_as_the_very_first_token_of_a_fresh_lexer() -> None:
    """Lark builds each state's scanner lazily; a template first used to crash it."""
    import subprocess
    import sys

    code = (
        "from dsl.parser import parse_program\n"
        "from dsl.errors import ScenarioSyntaxError\n"
        "parse_program('function f() { x=`a` }', 'a.js')\n"
        "try:\n"
        "    parse_program('function f() { log`b` }', 'b.js')\n"
        "except ScenarioSyntaxError as err:\n"
        "    print(err.message)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "tagged templates are not supported" in done.stdout


def test_template_nesting_limit() -> None:
    def nested(depth: int) -> str:
        return "`${" * depth + "1" + "}`" * depth

    assert isinstance(parse_expression(nested(32)), ast.TemplateLit)
    for parse in (parse_expression, lambda s: parse_statements("x = " + s)):
        with pytest.raises(ScenarioSyntaxError, match="template literals are nested more than 32"):
            parse(nested(33))


def test_brackets_inside_templates_count_towards_the_nesting_limit() -> None:
    deep = "`${" + "(" * 200 + "1" + ")" * 200 + "}`"
    with pytest.raises(ScenarioSyntaxError, match="nested more than 200") as info:
        parse_program("function f() {\n  x = " + deep + "\n}", "deep.js")
    assert (info.value.line, info.value.col) == (2, 207)  # function { + ${ + 199 (
    assert isinstance(expr("`${" + "(" * 190 + "1" + ")" * 190 + "}`"), ast.TemplateLit)


def test_brackets_in_regexes_do_not_confuse_error_messages() -> None:
    err = syntax_error("function f() {\n  x = /\\(/\n  y = /[(]/\n")
    assert err.message == "missing '}': the '{' at 1:13 is never closed"
