"""Scenario, helper and folder hooks files: the header, the file-level rules, the
helper table, a parameterised scenario's cases.

Kept apart from the parser because these rules are about files (docs/reference.md):
the three header lines, exactly one ``test_*`` function, helpers that are only
``snake_case`` functions and never shadow a built-in or each other, hooks
(``before_each``/``after_each``/``before_all``/``after_all``) without parameters, at
most one of each a file, and helper consts that hold literals and shadow nothing.

A folder's ``_hooks.js`` (:class:`HooksFile`) holds the hooks of the scenarios in that
folder and below, the functions they call and consts, but no test. A scenario file's
one top-level const may be ``CASES``, a literal array: its test then takes one
parameter and runs once per case, each case a scenario of its own named
``<name>[<case>]`` (:class:`ScenarioCase`), as Playwright's
``for (const c of cases) test(...)``.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, replace

from dsl import ast
from dsl.errors import ScenarioSyntaxError
from dsl.interpreter import HOOK_NAMES, FunctionRef
from dsl.parser import parse_program
from dsl.values import RegexValue, Value, freeze

__all__ = [
    "CASES_CONST",
    "HOOKS_FILE",
    "HOOK_NAMES",
    "HelperConst",
    "HelperFile",
    "HelperTable",
    "HooksFile",
    "ScenarioCase",
    "ScenarioFile",
    "ScenarioHeader",
    "build_helper_table",
    "load_helper",
    "load_hooks_file",
    "load_scenario",
    "parse_header",
    "title_tags",
]

HOOKS_FILE = "_hooks.js"
"""The file name of a folder's hooks, in any folder under ``unotest/e2e/``."""
CASES_CONST = "CASES"
"""The one top-level const a scenario file may declare: its cases."""
_CASE_NAME = re.compile(r"[^\[\]/\\\x00-\x1f\x7f]{1,100}")
"""What a case's name may hold: it becomes part of a scenario name (``pay[visa]``),
a command-line argument and a collection entry."""

_ID_LINE = re.compile(r"// id-([a-z0-9]+(?:-[a-z0-9]+)*)[ \t]*\Z")
_TITLE_LINE = re.compile(r"//[ \t]*(\S.*?)[ \t]*\Z")
_COLOR_LINE = re.compile(r"// (#[0-9a-fA-F]{6})[ \t]*\Z")
# A tag is a word of the title that starts with "@" (Playwright reads a test's tags
# from its title so); one glued to text before it ("a@b.com") is no tag.
_TAG = re.compile(r"(?<!\S)@\S+")
_HELPER_NAME = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*\Z")
_CONST_NAME = re.compile(r"(?:[a-z][a-z0-9]*(?:_[a-z0-9]+)*|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*)\Z")
# Names of hooks in other test runners: a function so named would silently never run.
_HOOK_LOOKALIKES = {
    "beforeEach": "before_each",
    "afterEach": "after_each",
    "beforeAll": "before_all",
    "afterAll": "after_all",
}


def title_tags(title: str) -> tuple[str, ...]:
    """The ``@tags`` of a title (``Adds two items @smoke @cart`` → ``@smoke``, ``@cart``),
    each once, in order. They stay part of the title as written, so ``--grep @smoke``
    (a search of the title) selects what ``unotest list --json`` says is tagged."""
    return tuple(dict.fromkeys(_TAG.findall(title)))


@dataclass(frozen=True, slots=True)
class ScenarioHeader:
    """The three mandatory comment lines; ``id`` is the slug after ``id-``."""

    id: str
    title: str
    color: str

    @property
    def tags(self) -> tuple[str, ...]:
        """The title's ``@tags`` (:func:`title_tags`)."""
        return title_tags(self.title)


@dataclass(frozen=True, slots=True)
class ScenarioCase:
    """One element of a scenario's ``CASES``: the scenario it makes is ``<name>[<case>]``
    (its ``name`` field when it is an object with one, else its index), and its test
    gets ``value``, frozen as a helper const is."""

    name: str
    index: int
    value: Value
    span: ast.Span


@dataclass(frozen=True, slots=True)
class HooksFile:
    """A folder's ``_hooks.js``: hooks for every scenario in ``folder`` and below (the
    e2e-relative folder, ``""`` for ``unotest/e2e/`` itself), the functions they call
    (its own, as a scenario file's are) and consts seen by those scenarios."""

    folder: str
    program: ast.Program
    consts: tuple[HelperConst, ...] = ()

    @property
    def file(self) -> str:
        return self.program.file

    def hook(self, name: str) -> FunctionRef | None:
        """This file's hook ``name``, if it declares one."""
        return _file_hook(self.program, name)

    def covers(self, scenario: str) -> bool:
        """Whether the scenario named ``scenario`` is in this file's folder or below."""
        return self.folder == "" or scenario.startswith(self.folder + "/")


@dataclass(frozen=True, slots=True)
class ScenarioFile:
    """A scenario as it runs. A parameterised file (``cases``) is no scenario itself:
    :meth:`each_case` gives its scenarios, one per case (``case`` set, the name and
    title with ``[<case>]``). ``folders``: the ``_hooks.js`` files over it, outer first
    (the project index sets them)."""

    name: str
    header: ScenarioHeader
    program: ast.Program
    test_fn: ast.FunctionDecl
    cases: tuple[ScenarioCase, ...] = ()
    case: ScenarioCase | None = None
    folders: tuple[HooksFile, ...] = ()

    @property
    def file(self) -> str:
        return self.program.file

    @property
    def base_name(self) -> str:
        """The file's scenario name, without ``[<case>]``."""
        return self.name[: -len(self.case.name) - 2] if self.case is not None else self.name

    def hook(self, name: str) -> FunctionRef | None:
        """This file's hook ``name``, if it declares one."""
        return _file_hook(self.program, name)

    def each_case(self) -> tuple[ScenarioFile, ...]:
        """The scenarios this file makes: itself, or one per case."""
        if not self.cases:
            return (self,)
        return tuple(
            replace(
                self,
                name=f"{self.name}[{case.name}]",
                header=replace(self.header, title=f"{self.header.title} [{case.name}]"),
                case=case,
            )
            for case in self.cases
        )

    def test_args(self) -> tuple[Value, ...]:
        """What the test is called with: its case's value, or nothing."""
        return (self.case.value,) if self.case is not None else ()

    def consts(self) -> dict[str, Value]:
        """The consts its functions see besides the helpers': its folders' (an inner
        folder's last) and its ``CASES``."""
        found = {c.name: c.value for folder in self.folders for c in folder.consts}
        if self.cases:
            found[CASES_CONST] = freeze([case.value for case in self.cases])
        return found


def _file_hook(program: ast.Program, name: str) -> FunctionRef | None:
    decl = next((fn for fn in program.functions if fn.name == name), None)
    return FunctionRef(decl, program) if decl is not None else None


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
    names, ``before_each``, ``after_all``, ...: no scenario can call those), and the
    helper files' consts."""

    def __init__(self) -> None:
        super().__init__()
        self.consts: dict[str, HelperConst] = {}

    def const_values(self) -> dict[str, Value]:
        return {name: const.value for name, const in self.consts.items()}

    def hook(self, name: str) -> FunctionRef | None:
        """The project-wide hook ``name`` (``before_each``, ...), if a helper declares one."""
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
            when = "around each test" if fn.name.endswith("_each") else "once per worker"
            raise _at(
                program,
                fn.name_span,
                f"{fn.name}() is a hook and takes no parameters: unotest calls it {when}",
            )
        meant = _HOOK_LOOKALIKES.get(fn.name)
        if meant is not None:
            raise _at(program, fn.name_span, f"'{fn.name}' would never run: name it {meant}()")


def _duplicate_functions(program: ast.Program) -> None:
    """A name declared twice in one file; a hook twice is said as such (a file has at
    most one of each hook: the second would silently replace the first)."""
    seen: dict[str, ast.FunctionDecl] = {}
    for fn in program.functions:
        if fn.name in seen:
            first = seen[fn.name].name_span
            what = "hook" if fn.name in HOOK_NAMES else "function"
            also = ": a file has at most one of each hook" if what == "hook" else ""
            raise _at(
                program,
                fn.name_span,
                f"{what} '{fn.name}' is already declared at line {first.line}{also}",
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
    cases_decl = _cases_decl(program)
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
    _check_test_params(program, test_fn, cases_decl)
    cases = _cases(program, cases_decl) if cases_decl is not None else ()
    return ScenarioFile(name, header, program, test_fn, cases)


def _cases_decl(program: ast.Program) -> ast.VarDecl | None:
    """The file's ``const CASES``: the one top-level const a scenario may hold."""
    for decl in program.consts:
        if decl.name != CASES_CONST:
            raise _at(
                program,
                decl.span,
                "a scenario keeps its code inside functions: declare this const inside one, "
                "or move it to a helper file (unotest/e2e/_helpers/), where top-level consts "
                f"are shared with every scenario (its one top-level const can be {CASES_CONST}, "
                "the cases it runs once each)",
            )
        if decl is not program.consts[0]:
            first = program.consts[0].span.line
            raise _at(program, decl.span, f"{CASES_CONST} is already declared at line {first}")
    return program.consts[0] if program.consts else None


def _check_test_params(
    program: ast.Program, test_fn: ast.FunctionDecl, cases: ast.VarDecl | None
) -> None:
    """One parameter (the case) with ``CASES``, none without."""
    if cases is None and test_fn.params:
        raise _at(
            program,
            test_fn.name_span,
            f"{test_fn.name}() takes no parameters, unless the file declares "
            f"'const {CASES_CONST} = [...]': then it runs once per case, given the case",
        )
    if cases is not None and len(test_fn.params) != 1:
        raise _at(
            program,
            test_fn.name_span,
            f"{test_fn.name}() takes one parameter, the case: it runs once per case of "
            f"{CASES_CONST} (line {cases.span.line})",
        )


def _cases(program: ast.Program, decl: ast.VarDecl) -> tuple[ScenarioCase, ...]:
    """The cases of ``CASES``, each named and frozen; names unique."""
    init = decl.init
    if not isinstance(init, ast.ArrayLit) or not init.elements:
        raise _at(
            program,
            init.span if init is not None else decl.span,
            f"{CASES_CONST} is a literal array of at least one case: objects (named by "
            'their "name") or values, e.g. [{ name: "visa", card: "4242" }]',
        )
    cases: list[ScenarioCase] = []
    seen: dict[str, int] = {}
    for index, element in enumerate(init.elements):
        value = freeze(_literal(program, element, "a case"))
        name = _case_name(program, element, value, index)
        if name in seen:
            raise _at(
                program,
                element.span,
                f"case '{name}' is already the name of case {seen[name]} of {CASES_CONST}: "
                "each case needs a name of its own",
            )
        seen[name] = index
        cases.append(ScenarioCase(name, index, value, element.span))
    return tuple(cases)


def _case_name(program: ast.Program, element: ast.Expr, value: Value, index: int) -> str:
    """A case's ``name`` field, else its index; a name a scenario name can hold."""
    if not isinstance(value, dict) or "name" not in value:
        return str(index)
    name = value["name"]
    if not isinstance(name, str) or not _CASE_NAME.fullmatch(name) or name.strip() != name:
        raise _at(
            program,
            element.span,
            f"case {index}'s name must be text of 1 to 100 characters, without '[', ']', "
            "'/', '\\', a control character or blanks around it: it names the scenario "
            f"<name>[{name if isinstance(name, str) else '...'}]",
        )
    return name


def load_hooks_file(
    source: str, file: str, folder: str, builtin_names: Collection[str]
) -> HooksFile:
    """Parse a folder's ``_hooks.js``: hooks, the functions they call and consts, no
    test (a test here would never run: it belongs in a ``.test.js`` file)."""
    program = parse_program(source, file)
    _duplicate_functions(program)
    _check_hooks(program)
    for fn in program.functions:
        if fn.name.startswith("test_"):
            raise _at(
                program,
                fn.name_span,
                f"a {HOOKS_FILE} holds the hooks of the scenarios in its folder, not a test: "
                f"move {fn.name}() to a scenario file (<name>.test.js) of the folder",
            )
    consts = _helper_consts(program, builtin_names, "hooks const")
    return HooksFile(folder, program, consts)


def load_helper(source: str, file: str, name: str, builtin_names: Collection[str]) -> HelperFile:
    """Parse a helper file: ``snake_case`` functions and literal consts, none named like
    a built-in; hooks (``before_each``, ``before_all``, ...) here are the project's."""
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


def _helper_consts(
    program: ast.Program, builtin_names: Collection[str], kind: str = "helper const"
) -> tuple[HelperConst, ...]:
    """The file's top-level consts, checked and frozen (``kind`` names them)."""
    consts: list[HelperConst] = []
    seen = {fn.name: f"line {fn.name_span.line}, a function" for fn in program.functions}
    for decl in program.consts:
        at = _name_span(program, decl)
        what = f"{kind} '{decl.name}'"
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
        value = freeze(_literal(program, decl.init, f"a {kind}"))
        consts.append(HelperConst(decl.name, value, program.file, at))
    return tuple(consts)


def _name_span(program: ast.Program, decl: ast.VarDecl) -> ast.Span:
    """Where the declared name stands (after ``const``)."""
    start = program.source.index(decl.name, decl.span.start + len(decl.kind))
    line = program.source.count("\n", 0, start) + 1
    col = start - (program.source.rfind("\n", 0, start) + 1)
    return ast.Span(line, col, line, col + len(decl.name), start, start + len(decl.name))


def _literal(program: ast.Program, node: ast.Expr, what: str = "a helper const") -> Value:
    """The value of a literal, or a syntax error at the first part that is not one
    (``what`` holds it: a helper const, a case)."""
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
        return [_literal(program, item, what) for item in node.elements]
    if isinstance(node, ast.ObjectLit):
        return {prop.key: _literal(program, prop.value, what) for prop in node.properties}
    raise _at(
        program,
        _substitution_span(program, node) if isinstance(node, ast.TemplateLit) else node.span,
        f"{what} holds a literal: a number, a string, true, false, null, a regex, or "
        "an array or object of those; compute other values inside a function",
    )


def _substitution_span(program: ast.Program, node: ast.TemplateLit) -> ast.Span:
    """Where a template's first ``${`` stands: the first part of it that is no literal."""
    source = program.source
    start = source.rfind("${", node.span.start, node.exprs[0].span.start)
    line = source.count("\n", 0, start) + 1
    col = start - (source.rfind("\n", 0, start) + 1)
    return ast.Span(line, col, line, col + 2, start, start + 2)


def hooks_const_clashes(
    hooks: HooksFile, table: HelperTable, outer: Iterable[HooksFile]
) -> list[ScenarioSyntaxError]:
    """A ``_hooks.js`` const whose name a helper, a helper const or a const of an outer
    folder's ``_hooks.js`` already has: every scenario of the folder would see two."""
    taken: dict[str, str] = {}
    for folder in outer:
        taken.update({c.name: f"a hooks const ({c.file}:{c.line})" for c in folder.consts})
    taken.update({name: f"a helper const ({c.file}:{c.line})" for name, c in table.consts.items()})
    for name, ref in table.items():
        taken[name] = f"a helper ({ref.program.file}:{ref.decl.name_span.line})"
    return [
        _at(
            hooks.program,
            const.name_span,
            f"hooks const '{const.name}' is already {taken[const.name]}: the scenarios of "
            "this folder see both; give it a name of its own",
        )
        for const in hooks.consts
        if const.name in taken
    ]


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
