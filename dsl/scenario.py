"""Scenario and helper files: the header, the file-level rules, the helper table.

Kept apart from the parser because these rules are about files (language.md §1):
the three header lines, exactly one ``test_*`` function, helpers that are only
``snake_case`` functions and never shadow a built-in or each other.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from dsl import ast
from dsl.errors import ScenarioSyntaxError
from dsl.interpreter import FunctionRef
from dsl.parser import parse_program

__all__ = [
    "HelperFile",
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


@dataclass(frozen=True, slots=True)
class HelperFile:
    name: str
    program: ast.Program

    @property
    def file(self) -> str:
        return self.program.file


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
    _duplicate_functions(program)
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
    """Parse a helper file: ``snake_case`` functions only, none named like a built-in."""
    program = parse_program(source, file)
    _duplicate_functions(program)
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
    return HelperFile(name, program)


def build_helper_table(
    helpers: Iterable[HelperFile],
) -> tuple[dict[str, FunctionRef], list[ScenarioSyntaxError]]:
    """Every helper function by name; a name declared in two files is an error naming both."""
    table: dict[str, FunctionRef] = {}
    errors: list[ScenarioSyntaxError] = []
    for helper in helpers:
        for fn in helper.program.functions:
            first = table.get(fn.name)
            if first is not None:
                where = f"{first.program.file}:{first.decl.name_span.line}"
                errors.append(
                    _at(
                        helper.program,
                        fn.name_span,
                        f"helper '{fn.name}' is declared in two files: {where} and "
                        f"{helper.file}:{fn.name_span.line}",
                    )
                )
                continue
            table[fn.name] = FunctionRef(fn, helper.program)
    return table, errors
