"""Scenario and helper files: the header, the file-level rules, the helper table.

Kept apart from the parser because these rules are about files (language.md §1):
the three header lines, exactly one ``test_*`` function, helpers that are only
``snake_case`` functions and never shadow a built-in or each other, hooks
(``before_each``/``after_each``) without parameters, and helper consts that hold
literals and shadow nothing.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from dsl import ast
from dsl.errors import ScenarioSyntaxError
from dsl.interpreter import HOOK_NAMES, FunctionRef
from dsl.parser import parse_program
from dsl.values import RegexValue, Value, freeze

__all__ = [
    "HOOK_NAMES",
    "HelperConst",
    "HelperFile",
    "HelperTable",
    "ScenarioFile",
    "ScenarioHeader",
    "build_helper_table",
    "load_helper",
    "load_scenario",
    "parse_header",
]

_ID_LINE = re.compile(r"// id-([a-z0-9]+(?:-[a-z0-9]+)*)[ \t]*\Z")
_TITLE_LINE = re.compile(r"//[ \t]*(\S.*?)[ \t]*\Z")
_COLOR_LINE = re.compile(r"// (#[0-9a-fA-F]{6})[ \t]*\Z")
_HELPER_NAME = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*\Z")
_CONST_NAME = re.compile(r"(?:[a-z][a-z0-9]*(?:_[a-z0-9]+)*|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*)\Z")
# Names of hooks in other test runners: a function so named would silently never run.
_HOOK_LOOKALIKES = {
    "beforeEach": "before_each",
    "afterEach": "after_each",
    "before_all": None,
    "after_all": None,
    "beforeAll": None,
    "afterAll": None,
}


@dataclass(frozen=True, slots=True)
class ScenarioHeader:
    """The three mandatory comment lines; ``id`` is the slug after ``id-``."""

    id: str
    title: str
    color: str


@dataclass(frozen=True, slots=True)
class ScenarioFile:
    name: str
    header: ScenarioHeader
    program: ast.Program
    test_fn: ast.FunctionDecl

    @property
    def file(self) -> str:
        return self.program.file

    def hook(self, name: str) -> FunctionRef | None:
        """This file's ``before_each`` or ``after_each``, if it declares one."""
        decl = next((fn for fn in self.program.functions if fn.name == name), None)
        return FunctionRef(decl, self.program) if decl is not None else None


@dataclass(frozen=True, slots=True)
class HelperConst:
    """A helper file's top-level ``const``: its frozen value and where it is declared."""

    name: str
    value: Value
    file: str
    name_span: ast.Span

    @property
    def line(self) -> int:
        return self.name_span.line


@dataclass(frozen=True, slots=True)
class HelperFile:
    name: str
    program: ast.Program
    consts: tuple[HelperConst, ...] = ()

    @property
    def file(self) -> str:
        return self.program.file


class HelperTable(dict[str, FunctionRef]):
    """Every helper function by name, the project's hooks among them (under their own
    names, ``before_each`` and ``after_each``: no scenario can call those), and the
    helper files' consts."""

    def __init__(self) -> None:
        super().__init__()
        self.consts: dict[str, HelperConst] = {}

    def const_values(self) -> dict[str, Value]:
        return {name: const.value for name, const in self.consts.items()}

    def hook(self, name: str) -> FunctionRef | None:
        """The project-wide ``before_each`` or ``after_each``, if a helper declares one."""
        return self.get(name) if name in HOOK_NAMES else None


def _header_error(file: str, line_no: int, line: str, expected: str) -> ScenarioSyntaxError:
    return ScenarioSyntaxError(
        f"line {line_no} of a scenario must be {expected}", file, line_no, 0, line
    )


def parse_header(source: str, file: str) -> ScenarioHeader:
    """Read the header or say which line is wrong and what it should be."""
    lines = source.split("\n", 3)[:3]
    lines = [line.rstrip("\r") for line in lines] + [""] * (3 - len(lines))
    id_match = _ID_LINE.match(lines[0].lstrip("\ufeff"))
    if id_match is None:
        raise _header_error(
            file,
            1,
            lines[0],
            "'// id-<kebab-slug>' (lowercase letters and digits joined by single dashes, "
            "e.g. '// id-smoke-welcome')",
        )
    title_match = _TITLE_LINE.match(lines[1])
    if title_match is None:
        raise _header_error(file, 2, lines[1], "'// <title>', a non-empty title")
    color_match = _COLOR_LINE.match(lines[2])
    if color_match is None:
        raise _header_error(file, 3, lines[2], "'// #RRGGBB', a colour such as '// #4f46e5'")
    return ScenarioHeader(id_match.group(1), title_match.group(1), color_match.group(1))


def _check_hooks(program: ast.Program) -> None:
    """Hooks take no parameters; the names of other runners' hooks are refused."""
    for fn in program.functions:
        if fn.name in HOOK_NAMES and fn.params:
            raise _at(
                program,
                fn.name_span,
                f"{fn.name}() is a hook and takes no parameters: unotest calls it around each test",
            )
        if fn.name in _HOOK_LOOKALIKES:
            meant = _HOOK_LOOKALIKES[fn.name]
            hint = (
                f"name it {meant}()"
                if meant
                else "unotest runs before_each() and after_each() around each test, "
                "and has no hooks around a whole file"
            )
            raise _at(program, fn.name_span, f"'{fn.name}' would never run: {hint}")


def _duplicate_functions(program: ast.Program) -> None:
    seen: dict[str, ast.FunctionDecl] = {}
    for fn in program.functions:
        if fn.name in seen:
            first = seen[fn.name].name_span
            raise _at(
                program,
                fn.name_span,
                f"function '{fn.name}' is already declared at line {first.line}",
            )
        seen[fn.name] = fn


def _at(program: ast.Program, span: ast.Span, message: str) -> ScenarioSyntaxError:
    start = program.source.rfind("\n", 0, span.start) + 1
    end = program.source.find("\n", span.start)
    line = program.source[start : end if end >= 0 else len(program.source)]
    return ScenarioSyntaxError(message, program.file, span.line, span.col, line)


def load_scenario(source: str, file: str, name: str) -> ScenarioFile:
    """Parse a ``.test.js`` file; every problem is a ScenarioSyntaxError."""
    header = parse_header(source, file)
    program = parse_program(source, file)
    if program.consts:
        raise _at(
            program,
            program.consts[0].span,
            "a scenario keeps its code inside functions: declare this const inside one, or "
            "move it to a helper file (unotest/e2e/_helpers/), where top-level consts are "
            "shared with every scenario",
        )
    _duplicate_functions(program)
    _check_hooks(program)
    tests = [fn for fn in program.functions if fn.name.startswith("test_")]
    if not tests:
        end_line = source.count("\n") + 1
        raise ScenarioSyntaxError(
            "a scenario must declare one 'function test_<name>() { ... }'", file, end_line, 0, ""
        )
    if len(tests) > 1:
        raise _at(
            program,
            tests[1].name_span,
            f"a scenario declares exactly one test_ function; '{tests[0].name}' is already "
            f"declared at line {tests[0].name_span.line}",
        )
    test_fn = tests[0]
    if test_fn.name == "test_":
        raise _at(program, test_fn.name_span, "the test function needs a name: test_<name>")
    if test_fn.params:
        raise _at(program, test_fn.name_span, f"{test_fn.name}() takes no parameters")
    return ScenarioFile(name, header, program, test_fn)


def load_helper(source: str, file: str, name: str, builtin_names: Collection[str]) -> HelperFile:
    """Parse a helper file: ``snake_case`` functions and literal consts, none named like
    a built-in; hooks (``before_each``/``after_each``) here are the project's."""
    program = parse_program(source, file)
    _duplicate_functions(program)
    _check_hooks(program)
    for fn in program.functions:
        if not _HELPER_NAME.match(fn.name):
            raise _at(
                program,
                fn.name_span,
                f"helper '{fn.name}' must be snake_case (lowercase words joined by '_')",
            )
        if fn.name in builtin_names:
            raise _at(
                program, fn.name_span, f"helper '{fn.name}' would shadow the built-in {fn.name}()"
            )
    return HelperFile(name, program, _helper_consts(program, builtin_names))


def _helper_consts(program: ast.Program, builtin_names: Collection[str]) -> tuple[HelperConst, ...]:
    """The file's top-level consts, checked and frozen."""
    consts: list[HelperConst] = []
    seen = {fn.name: f"line {fn.name_span.line}, a function" for fn in program.functions}
    for decl in program.consts:
        at = _name_span(program, decl)
        what = f"helper const '{decl.name}'"
        if not _CONST_NAME.match(decl.name):
            raise _at(program, at, f"{what} must be snake_case or UPPER_SNAKE_CASE")
        if decl.name in HOOK_NAMES:
            raise _at(program, at, f"'{decl.name}' is the name of a hook, not of a const")
        if decl.name in builtin_names:
            raise _at(program, at, f"{what} would shadow the built-in {decl.name}()")
        if decl.name in seen:
            raise _at(program, at, f"'{decl.name}' is already declared ({seen[decl.name]})")
        seen[decl.name] = f"line {at.line}"
        assert decl.init is not None  # the parser refuses a const without a value
        value = freeze(_literal(program, decl.init))
        consts.append(HelperConst(decl.name, value, program.file, at))
    return tuple(consts)


def _name_span(program: ast.Program, decl: ast.VarDecl) -> ast.Span:
    """Where the declared name stands (after ``const``)."""
    start = program.source.index(decl.name, decl.span.start + len(decl.kind))
    line = program.source.count("\n", 0, start) + 1
    col = start - (program.source.rfind("\n", 0, start) + 1)
    return ast.Span(line, col, line, col + len(decl.name), start, start + len(decl.name))


def _literal(program: ast.Program, node: ast.Expr) -> Value:
    """The value of a literal, or a syntax error at the first part that is not one."""
    if isinstance(node, ast.NumberLit | ast.StringLit | ast.BoolLit):
        return node.value
    if isinstance(node, ast.NullLit):
        return None
    if isinstance(node, ast.Unary) and node.op in "-+" and isinstance(node.operand, ast.NumberLit):
        return -node.operand.value if node.op == "-" else node.operand.value
    if isinstance(node, ast.TemplateLit) and not node.exprs:
        return node.quasis[0]
    if isinstance(node, ast.RegexLit):
        return RegexValue(node.source, node.flags, node.pattern)
    if isinstance(node, ast.ArrayLit):
        return [_literal(program, item) for item in node.elements]
    if isinstance(node, ast.ObjectLit):
        return {prop.key: _literal(program, prop.value) for prop in node.properties}
    raise _at(
        program,
        _substitution_span(program, node) if isinstance(node, ast.TemplateLit) else node.span,
        "a helper const holds a literal: a number, a string, true, false, null, a regex, or "
        "an array or object of those; compute other values inside a function",
    )


def _substitution_span(program: ast.Program, node: ast.TemplateLit) -> ast.Span:
    """Where a template's first ``${`` stands: the first part of it that is no literal."""
    source = program.source
    start = source.rfind("${", node.span.start, node.exprs[0].span.start)
    line = source.count("\n", 0, start) + 1
    col = start - (source.rfind("\n", 0, start) + 1)
    return ast.Span(line, col, line, col + 2, start, start + 2)


def build_helper_table(
    helpers: Iterable[HelperFile],
) -> tuple[HelperTable, list[ScenarioSyntaxError]]:
    """Every helper function, project hook and helper const by name; a name declared in
    two files (or a const named like a helper function) is an error naming both places."""
    table = HelperTable()
    errors: list[ScenarioSyntaxError] = []
    for helper in helpers:
        for fn in helper.program.functions:
            kind = "project hook" if fn.name in HOOK_NAMES else "helper"
            problem = _taken(table, kind, fn.name, f"{helper.file}:{fn.name_span.line}")
            if problem is not None:
                errors.append(_at(helper.program, fn.name_span, problem))
                if fn.name in table or fn.name not in table.consts:
                    continue
                # A const of a file read earlier took the name: the function wins, so
                # that its calls check as calls (not as one more error per caller).
                del table.consts[fn.name]
            table[fn.name] = FunctionRef(fn, helper.program)
        for const in helper.consts:
            problem = _taken(table, "helper const", const.name, f"{const.file}:{const.line}")
            if problem is not None:
                errors.append(_at(helper.program, const.name_span, problem))
                continue
            table.consts[const.name] = const
    return table, errors


def _taken(table: HelperTable, kind: str, name: str, here: str) -> str | None:
    """Why the ``kind`` declared at ``here`` cannot have ``name`` (already in the table)."""
    ref = table.get(name)
    const = table.consts.get(name)
    if ref is not None:
        first, first_kind = f"{ref.program.file}:{ref.decl.name_span.line}", "helper"
    elif const is not None:
        first, first_kind = f"{const.file}:{const.line}", "helper const"
    else:
        return None
    if kind == "project hook":
        return (
            f"project hook '{name}' is declared in two helper files: {first} and {here}; "
            "a project has at most one"
        )
    if kind == first_kind:
        return f"{kind} '{name}' is declared in two files: {first} and {here}"
    return f"'{name}' names both a {first_kind} ({first}) and a {kind} ({here})"
