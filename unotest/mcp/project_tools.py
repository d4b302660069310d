"""The MCP tools on the project's files: list_scenarios, read_scenario, check, write_file,
set_breakpoints.

What an agent reads and writes before and between runs: the scenarios and helpers (as
the index sees them), a check of a draft or of the project, a file replaced as the
viewer's save replaces it, the breakpoints of ``unotest/.debugger.json``. None of them
touches a run.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from dsl.checker import Diagnostic, check_program
from dsl.errors import ScenarioSyntaxError
from dsl.scenario import load_helper, load_scenario
from runner import protocol
from runner.errors import ConfigError, UnotestError
from runner.project.breakpoints_file import replace_breakpoints
from runner.project.editing import (
    UNCHECKED,
    FileConflict,
    Unchecked,
    resolve_source,
    save_source,
    version_of,
)
from runner.project.index import (
    ALL_BUILTIN_OPTIONS,
    ALL_BUILTIN_SIGNATURES,
    SCENARIO_SUFFIX,
    arity_table,
)
from runner.project.positions import land, parse_position, statement_starts
from runner.project.root import HOOKS_FILE
from runner.protocol import JSONObject
from unotest.mcp.answers import (
    MAX_TEXT,
    BreakpointsSet,
    CheckResult,
    FileWritten,
    ScenarioSource,
    cut,
    diag,
)
from unotest.mcp.arguments import NullableText, OptionalText, ScenarioArg
from unotest.mcp.state import ToolState

__all__ = ["ProjectTools", "add_project_tools"]


class ProjectTools:
    def __init__(self, state: ToolState) -> None:
        self.state = state
        self.project = state.project

    def refused(self, paths: list[str]) -> list[str]:
        """Which of these listed source files the tools refuse to read, run or write: a
        symlink (of the file or a folder) that leads out of unotest/e2e/. The project's
        discovery follows it (the CLI runs it); these answers leave it out, with a note."""
        refused = []
        for path in dict.fromkeys(paths):
            if not path.startswith(f"{protocol.UNOTEST_DIR}/{protocol.E2E_SUBDIR}/"):
                continue
            try:
                resolve_source(self.project, path)
            except UnotestError:
                refused.append(path)
        return refused

    def list_scenarios(self) -> JSONObject:
        index = self.state.index()
        helpers = index.helper_metas()
        refused = set(
            self.refused(
                [m["path"] for m in index.scenario_metas]
                + [h["path"] for h in helpers]
                + [d.file for d in index.errors]
            )
        )
        return self.state.safe(
            {
                "scenarios": [m for m in index.scenario_metas if m["path"] not in refused],
                "helpers": [h for h in helpers if h["path"] not in refused],
                "collections": [entry.meta for entry in index.collections.values()],
                "errors": [diag(d) for d in index.errors if d.file not in refused],
                "warnings": index.warnings + [_left_out(path) for path in sorted(refused)],
            }
        )

    def read_scenario(
        self, name: str, from_line: int = 1, to_line: int | None = None
    ) -> ScenarioSource:
        index = self.state.index()
        e2e = f"{protocol.UNOTEST_DIR}/{protocol.E2E_SUBDIR}/"
        if isinstance(name, str) and name.startswith(e2e):
            name = _name_of_path(_source_path(name))  # a path, as write_file takes it
        kind, path = self.state.scenario_path(index, name)
        try:
            # Where the file really is: a symlink out of unotest/e2e/ is not read (as
            # write_file does not write it).
            resolve_source(self.project, path)
        except UnotestError as err:
            raise ToolError(str(err)) from None
        data = (self.project.root / path).read_bytes()
        lines = data.decode("utf-8").splitlines()
        total = len(lines)
        if from_line > max(total, 1):
            raise ToolError(f"from_line {from_line} is past the end of {path} ({total} lines)")
        if to_line is not None and to_line < from_line:
            raise ToolError(f"to_line {to_line} is before from_line {from_line}")
        last = total if to_line is None else min(to_line, total)
        numbered, shown = _numbered(lines, from_line, last)
        if shown < last:
            numbered += (
                f"\n… cut after line {shown} of {total} (at most {MAX_TEXT:,} characters an "
                f"answer): read_scenario(name, from_line={shown + 1}) reads on"
            )
        return {
            "name": name,
            "kind": kind,
            "path": path,
            "source": numbered,
            "lines": {"first": from_line, "last": shown, "total": total},
            "version": version_of(data),
        }

    def check(self, source: str | None, name: str | None) -> CheckResult:
        index = self.state.index()
        notes: list[str] = []
        if source is None and name is None:
            refused = set(self.refused([d.file for d in index.errors]))
            errors = [d for d in index.errors if d.file not in refused]
            notes = [_left_out(path) for path in sorted(refused)]
        elif source is not None:
            file = "<source>"
            helpers = arity_table(index.helper_table)
            try:
                if name is not None and name.startswith("_helpers/"):
                    program = load_helper(source, file, name, ALL_BUILTIN_SIGNATURES).program
                else:
                    program = load_scenario(source, file, name or "draft").program
                errors = check_program(
                    program,
                    helpers,
                    ALL_BUILTIN_SIGNATURES,
                    index.helper_table.consts,
                    ALL_BUILTIN_OPTIONS,
                )
            except ScenarioSyntaxError as err:
                errors = [Diagnostic.from_syntax_error(err)]
        else:
            assert name is not None
            _, path = self.state.scenario_path(index, name)
            errors = index.problems_of(path)  # a helper that does not parse first
        result: CheckResult = {"ok": not errors, "errors": [diag(d) for d in errors]}
        if notes:
            result["notes"] = notes
        return result

    def write_file(
        self, file: str, text: str, base_version: str | Unchecked | None = UNCHECKED
    ) -> FileWritten:
        """A scenario or helper file replaced (or created) as the viewer's
        ``PUT /api/files`` does it, and its new problems, statement starts and version;
        with ``base_version``, refused when the file changed since that version."""
        rel = _source_path(file)
        try:
            resolve_source(self.project, rel, must_exist=False)
            if not rel.endswith(".js"):
                raise UnotestError(f"{rel}: write_file writes scenario and helper files only")
            view = save_source(self.project, rel, text, base_version=base_version)
        except FileConflict as err:
            now = (
                "it no longer exists"
                if err.version is None
                else f"its version is now {err.version}"
            )
            raise ToolError(f"{err}; {now}: read it again and write your change onto it") from None
        except UnotestError as err:
            raise ToolError(str(err)) from None
        problems = [diag(d) for d in view.problems]
        written: FileWritten = {
            "path": view.path,
            "ok": not problems,
            "problems": problems,
            "statements": [{"line": line, "col": col} for line, col in view.statements],
            "version": view.version,
        }
        return written

    def set_breakpoints(self, scenario: str, breakpoints: list[str]) -> BreakpointsSet:
        index = self.state.index()
        kind, _ = self.state.scenario_path(index, scenario)
        program = None
        if kind == "scenario" and scenario in index.scenarios:
            program = index.scenarios[scenario].program
        elif kind == "helper":
            program = next(
                (h.program for h in index.helpers if f"_helpers/{h.name}" == scenario), None
            )
        starts = statement_starts(program) if program is not None else None
        positions: list[protocol.BreakpointEntry] = []
        notes: list[str] = []
        for text in breakpoints:
            given = parse_position(str(text))
            if given is None or given.file is not None or given.line < 1:
                raise ToolError(f"breakpoint {text!r}: expected 'LINE:COL' or 'LINE'")
            if given.col is None and starts is None:
                raise ToolError(
                    f"breakpoint {text!r}: {scenario} does not parse, so give 'LINE:COL'"
                )
            landing = land(starts or [], given.line, given.col)
            if given.col is None and not landing.exact:
                raise ToolError(f"breakpoint {text!r}: no statement starts on line {given.line}")
            line, col = landing.position
            if landing.nearest is not None:
                near = landing.nearest
                notes.append(
                    f"{line}:{col} matches no statement start (the nearest is "
                    f"{near[0]}:{near[1]}); kept"
                )
            if {"line": line, "col": col} not in positions:
                positions.append({"line": line, "col": col})
        self._save_breakpoints(scenario, positions)
        result: BreakpointsSet = {
            "file": protocol.DEBUGGER_FILE,
            "scenario": scenario,
            "breakpoints": positions,
        }
        if notes:
            result["notes"] = notes
        return result

    def _save_breakpoints(self, scenario: str, positions: list[protocol.BreakpointEntry]) -> None:
        """Replace one scenario's entry in .debugger.json, keeping the others'."""
        try:
            replace_breakpoints(self.project, scenario, positions)
        except ConfigError as err:  # the file there is malformed: it is not replaced
            raise ToolError(f"{err}; fix or delete it first") from None


def _numbered(lines: list[str], first: int, last: int) -> tuple[str, int]:
    """Lines ``first``..``last`` (1-based) each prefixed by its number, as many whole
    lines as fit in an answer (at least one, itself cut if longer), and the last shown."""
    rows: list[str] = []
    size = 0
    shown = first - 1
    for number in range(first, last + 1):
        row = f"{number:>4} | {lines[number - 1]}"
        if rows and size + len(row) + 1 > MAX_TEXT - 200:
            break
        rows.append(cut(row, MAX_TEXT - 200))
        size += len(row) + 1
        shown = number
    return "\n".join(rows), shown


def _left_out(path: str) -> str:
    return (
        f"{path}: left out: a symlink that leads out of unotest/e2e/ (read_scenario, "
        "run_scenario and write_file refuse it)"
    )


def _name_of_path(rel: str) -> str:
    """``shop/known-bug``, ``_helpers/auth`` or ``shop/_hooks`` from a file's
    project-relative path."""
    inside = rel.removeprefix(f"{protocol.UNOTEST_DIR}/{protocol.E2E_SUBDIR}/")
    if inside != rel and (inside == HOOKS_FILE or inside.endswith(f"/{HOOKS_FILE}")):
        return inside.removesuffix(".js")
    if inside != rel and inside.endswith(SCENARIO_SUFFIX):
        return inside.removesuffix(SCENARIO_SUFFIX)
    if inside != rel and inside.startswith(f"{protocol.HELPERS_SUBDIR}/") and rel.endswith(".js"):
        return inside.removesuffix(".js")
    raise ToolError(f"{rel!r} is not the path of a scenario or a helper of this project")


def _source_path(file: str) -> str:
    """A project-relative path from what an agent names a file by: the path itself, a
    scenario name (``shop/known-bug``) or ``_helpers/<name>``."""
    if not isinstance(file, str) or not file:
        raise ToolError("file must name a scenario, a helper or their path")
    prefix = f"{protocol.UNOTEST_DIR}/{protocol.E2E_SUBDIR}/"
    if file.startswith((f"{protocol.UNOTEST_DIR}/", "/")):
        return file  # a path: resolve_source refuses an absolute one, or one that escapes
    if file.startswith(f"{protocol.HELPERS_SUBDIR}/"):
        return prefix + (file if file.endswith(".js") else f"{file}.js")
    if file.removesuffix(".js") == "_hooks" or file.removesuffix(".js").endswith("/_hooks"):
        return prefix + file.removesuffix(".js") + ".js"  # a folder's hooks: shop/_hooks
    if file.endswith(".test.js"):
        return prefix + file
    if PurePosixPath(file).suffix.lower() in _NOT_A_SCENARIO_NAME:
        # "unotest.config.yaml" became the scenario unotest/e2e/unotest.config.yaml.test.js.
        raise ToolError(
            f"{file!r} is a file name, not a scenario's (shop/known-bug), a helper's "
            "(_helpers/<name>) or their path: write_file writes scenario and helper files only"
        )
    return prefix + f"{file}.test.js"


# A name ending so names a file of another kind (or a scenario without its .test.js).
_NOT_A_SCENARIO_NAME = frozenset(
    [
        ".yaml",
        ".yml",
        ".json",
        ".env",
        ".md",
        ".txt",
        ".html",
        ".htm",
        ".css",
        ".js",
        ".mjs",
        ".cjs",
        ".ts",
        ".tsx",
        ".jsx",
        ".py",
        ".toml",
        ".ini",
        ".cfg",
        ".xml",
        ".csv",
        ".lock",
    ]
)


# --- registration: the docstrings are the tools' descriptions ------------------------------


def add_project_tools(server: MCPServer, tools: ProjectTools) -> None:
    _add_reading_tools(server, tools)
    _add_editing_tools(server, tools)


def _add_reading_tools(server: MCPServer, tools: ProjectTools) -> None:
    @server.tool(structured_output=False)
    def list_scenarios() -> JSONObject:
        """Scenarios (ScenarioMeta), helpers, collections, parse errors and warnings."""
        return tools.list_scenarios()

    @server.tool(structured_output=False)
    def read_scenario(
        name: ScenarioArg,
        from_line: Annotated[int, Field(ge=1, description="the first line to show (1-based)")] = 1,
        to_line: Annotated[
            int | None,
            Field(ge=1, description="the last line to show (1-based, included); null: the end"),
        ] = None,
    ) -> ScenarioSource:
        """The source of a scenario (or `_helpers/<name>`), each line prefixed by its
        number, from `from_line` to `to_line`; `lines` says which (`first`, `last`,
        `total`). An answer holds at most 20,000 characters of whole lines: a longer
        file is cut, with a last line saying the `from_line` that reads on. `version`
        is the whole file's: what write_file's `base_version` takes."""
        return tools.read_scenario(name, from_line, to_line)

    @server.tool(structured_output=False)
    def check(
        source: Annotated[
            OptionalText,
            Field(description='a draft file, its 3-line header included; "": none'),
        ] = "",
        name: Annotated[
            OptionalText,
            Field(
                description="the scenario (or `_helpers/<name>`) to check on disk; with "
                '`source`, the name the draft is checked as; "": none'
            ),
        ] = "",
    ) -> CheckResult:
        """Check a draft `source` (with its 3-line header), or the scenario `name`, or the
        whole project: every error as file/line/col/message (line 1-based, col 0-based)."""
        return tools.check(source or None, name or None)


def _add_editing_tools(server: MCPServer, tools: ProjectTools) -> None:
    @server.tool(structured_output=False)
    def write_file(
        file: Annotated[
            str,
            Field(
                description="a scenario name (`shop/known-bug`), `_helpers/<name>` or the "
                "project-relative path"
            ),
        ],
        text: Annotated[
            str, Field(description="the whole new file: it replaces every line of the old one")
        ],
        base_version: Annotated[
            NullableText,
            Field(
                description="the `version` read_scenario (or a previous write_file) returned: "
                "the write is refused when the file has changed since; null: the file must "
                'not exist yet; "" or omitted: no check'
            ),
        ] = "",
    ) -> FileWritten:
        """Replace the whole file (or create it): `text` becomes its entire content, so a
        part read with read_scenario's `from_line`/`to_line` must be put back into the
        whole file first. `file` is a scenario or helper. Returns its problems
        (file/line/col/message; `ok` when none), its statement starts (where breakpoints
        can go) and its new `version`. Pass `base_version` (read_scenario's `version`, or
        the last write_file's) so a change someone else saved meanwhile is not lost.
        Then `debug reload` a paused run."""
        given: str | None = base_version  # null passes through NullableText as None
        return tools.write_file(file, text, UNCHECKED if given == "" else given)

    @server.tool(structured_output=False)
    def set_breakpoints(scenario: str, breakpoints: list[str]) -> BreakpointsSet:
        """Replace the scenario's breakpoints in unotest/.debugger.json ('LINE:COL' strings;
        'LINE' alone is the first statement on that line), keeping other scenarios' entries;
        an empty list removes them. Used by the next run_scenario with debug."""
        return tools.set_breakpoints(scenario, breakpoints)
