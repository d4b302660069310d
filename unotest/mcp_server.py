"""``unotest mcp``: an MCP server (stdio) that lets an agent write, run, debug and fix scenarios.

Built on the official ``mcp`` SDK. Runs are started as **subprocesses** of the
ordinary CLI (never Playwright inside this server's event loop), with their output
captured into the run directory's stdout.log / stderr.log; the server returns as soon
as the run's first event is written, and the agent follows it with ``get_run``,
``wait_for_run``, ``inspect_runtime`` and ``debug``, exactly as a person would with
``unotest runs`` / ``inspect`` / ``dbg``. Every tool validates names against the
project (no path escapes), bounds what it returns, masks secrets, and reports a
problem as a tool error: a bad call never ends the server.

The runs a session starts end with it, unless started with ``detach``. Two ways, so
that neither a clean end nor a killed server leaves a paused browser behind: when the
session closes (the client disconnects, the server exits) the server aborts each of
its runs still going (an ``abort`` in commands.jsonl, SIGTERM to a collection) and
gives them a moment to end; and each run watches its parent, this server, itself
(``UNOTEST_OWNER_PID``, see :class:`runner.command_feed.OwnerWatch`), so a server
killed with SIGKILL still takes its runs with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal, NotRequired, TypedDict

import anyio
from mcp.server.mcpserver import Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from pydantic import BeforeValidator, Field, ValidationError, WithJsonSchema, WrapValidator

from dsl.checker import Diagnostic, check_program
from dsl.errors import ScenarioSyntaxError
from dsl.scenario import load_helper, load_scenario
from runner import protocol
from runner.debug_commands import NAMES, RESUMING, unknown_command
from runner.debugger import load_breakpoints_file
from runner.errors import UnotestError
from runner.history import history_report
from runner.positions import land, parse_position, statement_starts
from runner.project import (
    ALL_BUILTIN_SIGNATURES,
    SCENARIO_SUFFIX,
    Project,
    ProjectIndex,
    arity_table,
)
from runner.project_files import (
    UNCHECKED,
    FileConflict,
    Unchecked,
    resolve_source,
    save_source,
    version_of,
)
from runner.protocol import JSONObject
from runner.restart_links import latest_restart
from runner.run_adapter import RunnerAdapter
from runner.run_launcher import launch_run
from runner.run_links import run_links
from runner.run_result import error_location
from runner.rundir import append_line, atomic_write
from runner.runs import (
    ACK_TIMEOUT_S,
    COLLECTION_ABORT_WAIT_S,
    find_run_dir,
    is_collection_run,
    list_runs,
    read_events,
    run_meta,
    send_command,
)
from runner.secrets import RunEnvironment, SecretMasker

__all__ = ["build_server"]

MAX_TEXT = 20_000
MAX_EVENTS = 200
MAX_TAIL = 4_000
MAX_LAST = 200
"""``get_history``'s ``last``: at most this many outcomes per scenario."""
START_TIMEOUT_S = 60.0
RESUME_TIMEOUT_S = 2.0
RESTART_TIMEOUT_S = 60.0
"""How long ``debug restart`` waits for the new run (the old one's hooks end first)."""
RELOAD_RESULT_S = 2.0
"""How long ``debug reload`` waits for its ``command:result`` after ``command:applied``."""
# The SDK's stdio client waits 2 s for the server to exit once it closes the session,
# then kills it: the runs get most of that to end on their own (their own watch of
# this server ends whatever is left).
END_GRACE_S = 1.5


MAX_WORKERS = 16
MAX_RUNS_LISTED = 200


def _cut(text: str, limit: int = MAX_TEXT) -> str:
    """``text`` bounded for an answer; mask it *before* cutting (see runner.secrets.cut_masked)."""
    return (
        text
        if len(text) <= limit
        else text[: limit - 40] + f"\n… ({len(text) - limit + 40} more characters)"
    )


# What the tools answer, where they build it themselves (the rest is a masked JSONObject).
# The tools are registered with structured_output=False: the SDK sends every answer as
# text, and publishes no output schema derived from these types.


class SourceLines(TypedDict):
    """The lines ``source`` shows (1-based, inclusive) of the file's ``total``."""

    first: int
    last: int
    total: int


class ScenarioSource(TypedDict):
    name: str
    kind: str
    path: str
    source: str
    lines: SourceLines
    version: str
    """What ``write_file``'s ``base_version`` takes to refuse a write over a newer save."""


class CheckResult(TypedDict):
    ok: bool
    errors: list[JSONObject]
    notes: NotRequired[list[str]]
    """Files left out of a whole-project check (a symlink out of unotest/e2e/)."""


class StartedRun(TypedDict):
    runId: str
    runDir: str
    pid: int
    warnings: NotRequired[list[str]]
    """What the runner printed on stderr before the run started (also in stderr.log)."""


class FileWritten(TypedDict):
    path: str
    ok: bool
    problems: list[JSONObject]
    statements: list[protocol.BreakpointEntry]
    version: str


class BreakpointsSet(TypedDict):
    file: str
    scenario: str
    breakpoints: list[protocol.BreakpointEntry]
    notes: NotRequired[list[str]]


@dataclass
class _OwnedRun:
    """A run this session started without ``detach``: it ends with the session."""

    process: subprocess.Popen[bytes]
    run_dir: Path
    kind: Literal["scenario", "collection"]


class _Tools:
    def __init__(self, root: Path) -> None:
        self.project = Project(root)
        self.owned: list[_OwnedRun] = []

    # --- shared -------------------------------------------------------------------

    def masker(self) -> SecretMasker:
        masker = SecretMasker()
        RunEnvironment.of_project(self.project.root, masker, {})
        return masker

    def safe(self, data: JSONObject) -> JSONObject:
        masked = self.masker().mask_data(data)
        assert isinstance(masked, dict)  # mask_data copies a dict as a dict
        return masked

    def index(self) -> ProjectIndex:
        return ProjectIndex.load(self.project)

    def scenario_path(self, index: ProjectIndex, name: str) -> tuple[str, str]:
        """(kind, project-relative path) of a scenario or ``_helpers/<name>``.

        A file that does not parse (so is not in the index) is still found by its name:
        the agent must be able to read and check the file it has just broken.
        """
        if (
            not isinstance(name, str)
            or not name
            or "\0" in name
            or "\\" in name
            or any(part in ("", ".", "..") for part in name.split("/"))
        ):
            raise ToolError(f"{name!r} is not a scenario name")
        for meta in index.scenario_metas:
            if meta["name"] == name:
                return "scenario", meta["path"]
        if name.startswith("_helpers/"):
            for helper in index.helpers:
                if f"_helpers/{helper.name}" == name:
                    return "helper", helper.file
            kind, base = "helper", self.project.helpers_dir
            candidate = base / f"{name[len('_helpers/') :]}.js"
        else:
            kind, base = "scenario", self.project.e2e_dir
            candidate = base / f"{name}.test.js"
        if (not name.split("/")[0].startswith("_") or kind == "helper") and candidate.is_file():
            resolved = candidate.resolve()
            if resolved.is_relative_to(base.resolve()):
                return kind, self.project.relative(candidate)
        known = ", ".join(m["name"] for m in index.scenario_metas[:20])
        raise ToolError(f"no scenario named '{name}' (known: {known})")

    def run_dir(self, run_id: str) -> Path:
        try:
            return find_run_dir(self.project, run_id)
        except UnotestError as err:
            raise ToolError(_for_agent(str(err))) from None

    # --- discovery -------------------------------------------------------------------

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
        index = self.index()
        helpers = index.helper_metas()
        refused = set(
            self.refused(
                [m["path"] for m in index.scenario_metas]
                + [h["path"] for h in helpers]
                + [d.file for d in index.errors]
            )
        )
        return self.safe(
            {
                "scenarios": [m for m in index.scenario_metas if m["path"] not in refused],
                "helpers": [h for h in helpers if h["path"] not in refused],
                "collections": [entry.meta for entry in index.collections.values()],
                "errors": [_diag(d) for d in index.errors if d.file not in refused],
                "warnings": index.warnings + [_left_out(path) for path in sorted(refused)],
            }
        )

    def read_scenario(
        self, name: str, from_line: int = 1, to_line: int | None = None
    ) -> ScenarioSource:
        index = self.index()
        e2e = f"{protocol.UNOTEST_DIR}/{protocol.E2E_SUBDIR}/"
        if isinstance(name, str) and name.startswith(e2e):
            name = _name_of_path(_source_path(name))  # a path, as write_file takes it
        kind, path = self.scenario_path(index, name)
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
        index = self.index()
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
                    program, helpers, ALL_BUILTIN_SIGNATURES, index.helper_table.consts
                )
            except ScenarioSyntaxError as err:
                errors = [Diagnostic.from_syntax_error(err)]
        else:
            assert name is not None
            _, path = self.scenario_path(index, name)
            errors = index.problems_of(path)  # a helper that does not parse first
        result: CheckResult = {"ok": not errors, "errors": [_diag(d) for d in errors]}
        if notes:
            result["notes"] = notes
        return result

    # --- runs ------------------------------------------------------------------------

    async def run_scenario(
        self, name: str, debug: bool, breakpoints: list[str], step: bool, detach: bool = False
    ) -> StartedRun:
        index = self.index()
        _, path = self.scenario_path(index, name)
        problems = index.problems_of(path)
        if problems:
            # What `unotest e2e` would print (an excerpt, a caret, "'unotest check' lists
            # them"), as one sentence per problem.
            shown = "; ".join(
                f"{d.file}:{d.line}:{d.col}: {d.message.strip().splitlines()[0]}"
                for d in problems[:10]
            )
            raise ToolError(
                f"scenario '{name}' cannot run: fix its {len(problems)} problem(s) "
                f"(check(name={json.dumps(name)}) lists them): {shown}"
            )
        args = ["e2e", name]
        if debug or breakpoints or step:
            args.append("--debug")
        for text in breakpoints:
            # Checked here, as the viewer does: "--headed" reached the command line.
            given = parse_position(str(text))
            if given is None or given.line < 1:
                raise ToolError(
                    f"breakpoint {text!r}: expected 'LINE:COL', 'LINE' or 'FILE:LINE[:COL]'"
                )
            args += ["--break", str(text)]
        if step:
            args.append("--step")
        return await self.start(args, "scenario", detach)

    async def run_collection(
        self, name: str, workers: int, bail: bool, detach: bool = False
    ) -> StartedRun:
        index = self.index()
        if name not in index.collections:
            raise ToolError(f"no collection named '{name}' (known: {', '.join(index.collections)})")
        if not 1 <= int(workers) <= MAX_WORKERS:
            raise ToolError(f"workers must be from 1 to {MAX_WORKERS}, not {workers}")
        args = ["collection", name, "--workers", str(int(workers))]
        if bail:
            args.append("--bail")
        return await self.start(args, "collection", detach)

    async def start(
        self, args: list[str], kind: Literal["scenario", "collection"], detach: bool = False
    ) -> StartedRun:
        try:
            run = await launch_run(
                self.project.root,
                [*RunnerAdapter().resolve_bin(), *args],
                kind,
                env={"PYTHONSAFEPATH": "1"},
                owner_pid=None if detach else os.getpid(),  # the run ends when this process does
                mask=self.masker().mask,
                timeout=START_TIMEOUT_S,
            )
        except UnotestError as err:
            raise ToolError(_cut(_for_agent(str(err)))) from None
        if not detach:
            self.owned.append(_OwnedRun(run.process, run.run_dir, kind))
        started: StartedRun = {
            "runId": run.run_id,
            "runDir": self.project.relative(run.run_dir),
            "pid": run.process.pid,
        }
        warnings = [line for stream, line in run.early_output if stream == "stderr" and line]
        if warnings:
            started["warnings"] = warnings[-20:]
        return started

    def end_owned_runs(self) -> list[str]:
        """The session closes: abort every run it started without ``detach`` that still
        goes, wait a little for them to end, SIGTERM what is left. The ids it aborted.

        A process whose run directory has finished may still go on: a retry (a new run
        directory of the same ``e2e``), or its last writes: it is stopped as Ctrl-C
        stops it, without an abort written to a run that is over (nor named).

        Synchronous on purpose: it runs while the server shuts down, where an ``await``
        could be cancelled half-way."""
        alive = [run for run in self.owned if run.process.poll() is None]
        self.owned = []
        for run in alive:
            if run.kind == "scenario":  # restarted (by the viewer, dbg): its newest run
                run.run_dir = latest_restart(run.run_dir)
        going = [run for run in alive if _still_running(run.run_dir)]
        for run in alive:
            if run.kind == "scenario" and run in going:
                ident = f"mcp-session-closed-{uuid.uuid4().hex[:8]}"
                line = json.dumps({"id": ident, "cmd": "abort"}) + "\n"
                with contextlib.suppress(OSError):
                    append_line(run.run_dir / protocol.COMMANDS_FILE, line.encode(), create=True)
            else:  # a collection (no commands.jsonl), or a run over: SIGTERM aborts it
                with contextlib.suppress(OSError):
                    os.kill(run.process.pid, signal.SIGTERM)
        deadline = time.monotonic() + END_GRACE_S
        while any(run.process.poll() is None for run in alive) and time.monotonic() < deadline:
            time.sleep(0.05)
        for run in alive:
            if run.process.poll() is None:
                with contextlib.suppress(OSError):
                    os.killpg(run.process.pid, signal.SIGTERM)
        return [run.run_dir.name for run in going]

    def get_run(self, run_id: str) -> JSONObject:
        run_dir = self.run_dir(run_id)
        meta = run_meta(run_dir)
        events = read_events(run_dir / protocol.STEPS_FILE)
        shown = events[-MAX_EVENTS:]
        text = json.dumps(shown)
        while len(text) > MAX_TEXT * 3 and len(shown) > 10:
            shown = shown[len(shown) // 4 :]
            text = json.dumps(shown)
        masker = self.masker()
        output = {
            "stdout": _tail(run_dir / protocol.STDOUT_FILE, masker),
            "stderr": _tail(run_dir / protocol.STDERR_FILE, masker),
        }
        if "unotest dbg " in output["stderr"]:
            # The pause lines are written for a person at a shell.
            output["hint"] = (
                "'unotest dbg <runId> <cmd>' in stderr is the CLI's way to drive a paused "
                'run: here, call the debug tool, e.g. debug(run_id, cmd="continue")'
            )
        return self.safe(
            {
                "run": meta,
                "events": shown,
                "eventsOmitted": len(events) - len(shown),
                "output": output,
                **run_links(run_dir),
            }
        )

    def get_history(self, scenario: str | None, last: int) -> JSONObject:
        """``unotest history --json``'s summaries: every scenario's, or one's. A name
        with no history must be a scenario of the project (a typo is an error, not an
        empty answer); one with history may have been removed since."""
        if last < 1:
            raise ToolError(f"last must be at least 1, not {last} (at most {MAX_LAST} are kept)")
        try:
            report = history_report(self.project, scenario, min(last, MAX_LAST))
        except UnotestError as err:
            raise ToolError(str(err)) from None
        if scenario is not None and not report:
            index = self.index()
            kind, _ = self.scenario_path(index, scenario)  # names the known ones
            if kind != "scenario":
                raise ToolError(f"{scenario!r} is a helper: history is kept per scenario")
        return self.safe({"scenarios": list(report)})

    def list_runs(self, limit: int) -> JSONObject:
        if limit < 1:
            raise ToolError(
                f"limit must be at least 1, not {limit} (at most {MAX_RUNS_LISTED} are listed)"
            )
        runs = list_runs(self.project.runs_dir)
        shown = runs[: min(limit, MAX_RUNS_LISTED)]  # a cap on the answer's size
        return self.safe({"runs": shown, "total": len(runs)})

    async def wait_for_run(self, run_id: str, until: str, timeout_s: float) -> JSONObject:
        if until not in ("paused", "finished"):
            raise ToolError("until must be 'paused' or 'finished'")
        run_dir = self.run_dir(run_id)
        deadline = time.monotonic() + max(0.0, min(timeout_s, 600.0))
        while True:
            meta = run_meta(run_dir)
            runtime = _read_json(run_dir / protocol.RUNTIME_FILE)
            state = runtime.get("state") if isinstance(runtime, dict) else None
            finished = meta is not None and meta.get("status") != "running"
            if until == "finished" and not finished and _paused(run_dir, state):
                # It will not finish on its own: it waits for a debug command.
                return self.safe(
                    {
                        "reached": False,
                        "state": state,
                        "run": meta,
                        "runtime": runtime,
                        "hint": f"the run is paused ({state}) and waits for a debug command: "
                        "continue, step, step-over, step-out, retry, skip or abort",
                    }
                )
            if (until == "paused" and _paused(run_dir, state)) or finished:
                reached = (until == "finished" and finished) or (until == "paused" and not finished)
                return self.safe(
                    {"reached": reached, "state": state, "run": meta, "runtime": runtime}
                )
            if time.monotonic() >= deadline:
                return self.safe(
                    {"reached": False, "state": state, "run": meta, "runtime": runtime}
                )
            await asyncio.sleep(0.05)

    def inspect_runtime(self, run_id: str) -> JSONObject:
        run_dir = self.run_dir(run_id)
        runtime = _read_json(run_dir / protocol.RUNTIME_FILE)
        if not isinstance(runtime, dict) and is_collection_run(run_dir):
            raise ToolError(
                f"run {run_dir.name} is a collection's: inspect one of its scenarios' runs "
                "(get_run lists them in its collection-run:scenario-* events)"
            )
        if not isinstance(runtime, dict):
            raise ToolError(f"run {run_id} has no runtime.json yet")
        return self.safe(runtime)

    async def debug(self, run_id: str, command: Mapping[str, object]) -> JSONObject:
        run_dir = self.run_dir(run_id)
        try:
            answers = await asyncio.to_thread(send_command, run_dir, command)
        except UnotestError as err:
            raise ToolError(_for_agent(str(err))) from None
        if not answers:
            if command["cmd"] == "abort" and is_collection_run(run_dir):
                raise ToolError(
                    f"collection run {run_dir.name} was asked to stop and has not ended "
                    f"within {COLLECTION_ABORT_WAIT_S:g} s"
                )
            raise ToolError(
                f"no answer from run {run_dir.name} within {ACK_TIMEOUT_S:g} s (a run answers "
                "while it runs with the debugger on: run_scenario starts it so)"
            )
        applied = [a for a in answers if a.get("kind") == "command:applied"]
        if command["cmd"] in RESUMING and applied:
            # ``command:applied`` comes before ``resumed`` and the ``running`` runtime.json:
            # wait for them, so that a ``wait_for_run`` right after never sees the old pause.
            await _until_resumed(run_dir, str(applied[0].get("id")))
        answer: JSONObject = {"answers": answers}
        waits = {"restart": RESTART_TIMEOUT_S, "reload": RELOAD_RESULT_S}
        if command["cmd"] in waits and applied and not _has_result(answers):
            # Their command:result (the new run id; what a reload did) follows the
            # applied: a restart's once the old run has ended.
            ident = str(applied[0].get("id"))
            result = await _until_result(run_dir, ident, waits[str(command["cmd"])])
            if result is not None:
                answers.append(result)
        if command["cmd"] == "restart":
            answer.update(self._restarted(run_dir, answers))
        return self.safe(answer)

    def _restarted(self, run_dir: Path, answers: list[JSONObject]) -> JSONObject:
        """``newRunId`` (and ``newRunDir``) once the restart's run exists; the runs this
        session owns follow it, so the new run still ends with the session."""
        result = next((a for a in answers if a.get("kind") == "command:result"), None)
        if result is None or result.get("ok") is not True:
            return {}
        new_dir = latest_restart(run_dir)
        if new_dir == run_dir:
            return {}
        for run in self.owned:
            if run.run_dir == run_dir:
                run.run_dir = new_dir
        return {"newRunId": new_dir.name, "newRunDir": self.project.relative(new_dir)}

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
        problems = [_diag(d) for d in view.problems]
        written: FileWritten = {
            "path": view.path,
            "ok": not problems,
            "problems": problems,
            "statements": [{"line": line, "col": col} for line, col in view.statements],
            "version": view.version,
        }
        return written

    def set_breakpoints(self, scenario: str, breakpoints: list[str]) -> BreakpointsSet:
        index = self.index()
        kind, _ = self.scenario_path(index, scenario)
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
        """Replace one scenario's entry in .debugger.json, keeping the others'; written
        whole and renamed, so a run starting meanwhile never reads half a file."""
        path = self.project.root / protocol.DEBUGGER_FILE
        try:
            current = load_breakpoints_file(path)
        except UnotestError as err:
            raise ToolError(f"{err}; fix or delete it first") from None
        scenarios: dict[str, list[protocol.BreakpointEntry]] = {
            key: [{"line": ln, "col": cl} for ln, cl in value] for key, value in current.items()
        }
        if positions:
            scenarios[scenario] = positions
        else:
            scenarios.pop(scenario, None)
        data = json.dumps({"version": 1, "scenarios": scenarios}, indent=2) + "\n"
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, data.encode("utf-8"))

    def get_failure(self, run_id: str) -> list[str | Image]:
        run_dir = self.run_dir(run_id)
        events = read_events(run_dir / protocol.STEPS_FILE)
        if is_collection_run(run_dir):
            return [json.dumps(self.safe(_collection_failures(run_dir, events)), indent=2)]
        written = [e for e in events if e.get("kind") == "failure-bundle:written"]
        if not written:
            # Paused at the failure (--debug): its bundle comes once the run ends failed;
            # runtime.json holds the failure with its place, where the agent must look.
            runtime = _read_json(run_dir / protocol.RUNTIME_FILE)
            if isinstance(runtime, dict) and runtime.get("state") == "paused-failure":
                answer = {
                    "failure": runtime.get("lastFailure"),
                    "bundle": None,
                    "paused": "the run is paused at this failure: retry (after a fix), skip "
                    "or continue; the failure bundle is written if the run ends failed",
                }
                return [json.dumps(self.safe(answer), indent=2)]
            # A step whose error a ``try`` caught is no failure of the run, nor is one a
            # person skipped (or retried) at its pause in a run that then passed.
            fails = [e for e in events if e.get("kind") == "step:fail" and not e.get("caught")]
            ended = [e for e in events if e.get("kind") == "run:finished"]
            if fails and not (ended and ended[-1].get("outcome") == "completed"):
                return [json.dumps(self.safe({"failure": fails[-1], "bundle": None}), indent=2)]
            raise ToolError(f"run {run_id} has no failure")
        bundle = (self.project.root / str(written[-1]["bundlePath"])).resolve()
        if not bundle.is_relative_to(self.project.root.resolve()):
            raise ToolError("the failure bundle is outside the project")
        masker = self.masker()
        error = _read_json(bundle / "error.json") or {}
        console = _objects(_read_json(bundle / "console.json"))
        network = _objects(_read_json(bundle / "network.json"))
        aria = ""
        if (bundle / "page.aria.yaml").is_file():
            aria = (bundle / "page.aria.yaml").read_text(encoding="utf-8", errors="replace")
        report = {
            # The scenario's own line first, then each helper down to where it failed.
            "location": error_location(error) if isinstance(error, dict) else None,
            "error": error,
            "bundlePath": written[-1]["bundlePath"],
            "consoleErrors": [m for m in console if m.get("type") in ("error", "pageerror")][-30:],
            # alert/confirm/prompt and how the run answered them (a dismissed confirm is
            # often why the page then shows what it does).
            "dialogs": [m.get("text") for m in console if m.get("type") == "dialog"][-30:],
            "failedRequests": [r for r in network if _failed_request(r)][-30:],
            # Masked before the cut: a cut first could leave the start of a secret.
            "ariaSnapshot": _cut(masker.mask(aria), 12_000),
        }
        content: list[str | Image] = [
            json.dumps(masker.mask_data(report), indent=2, ensure_ascii=False)
        ]
        shot = bundle / "screenshot.png"
        if shot.is_file():
            content.append(Image(data=shot.read_bytes(), format="png"))
        return content


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
        rows.append(_cut(row, MAX_TEXT - 200))
        size += len(row) + 1
        shown = number
    return "\n".join(rows), shown


# The runner's messages name the CLI command that helps; an agent has a tool for it.
_CLI_HINTS = (
    ("('unotest runs' lists them)", "(the list_runs tool lists them)"),
    ("('unotest check' lists them)", "(the check tool lists them)"),
)


def _for_agent(message: str) -> str:
    for cli, tool in _CLI_HINTS:
        message = message.replace(cli, tool)
    return message


def _left_out(path: str) -> str:
    return (
        f"{path}: left out: a symlink that leads out of unotest/e2e/ (read_scenario, "
        "run_scenario and write_file refuse it)"
    )


def _paused(run_dir: Path, state: object) -> bool:
    """runtime.json says paused and no ``resumed`` (or the end) followed the last pause."""
    if not (isinstance(state, str) and state.startswith("paused")):
        return False
    last = None
    for event in read_events(run_dir / protocol.STEPS_FILE):
        if event.get("kind") in ("paused", "resumed", "run:finished"):
            last = event.get("kind")
    return last == "paused"


def _has_result(answers: list[JSONObject]) -> bool:
    return any(a.get("kind") in ("command:result", "command:rejected") for a in answers)


async def _until_result(run_dir: Path, ident: str, timeout: float) -> JSONObject | None:
    """The ``command:result`` answering ``ident``, if one comes within ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        for event in read_events(run_dir / protocol.STEPS_FILE):
            if event.get("kind") == "command:result" and event.get("id") == ident:
                return event
        if time.monotonic() >= deadline:
            return None
        await asyncio.sleep(0.02)


def _name_of_path(rel: str) -> str:
    """``shop/known-bug`` or ``_helpers/auth`` from a file's project-relative path."""
    inside = rel.removeprefix(f"{protocol.UNOTEST_DIR}/{protocol.E2E_SUBDIR}/")
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


async def _until_resumed(run_dir: Path, ident: str) -> None:
    deadline = time.monotonic() + RESUME_TIMEOUT_S
    while time.monotonic() < deadline:
        events = read_events(run_dir / protocol.STEPS_FILE)
        at = next(
            (
                i
                for i, e in enumerate(events)
                if e.get("kind") == "command:applied" and e.get("id") == ident
            ),
            None,
        )
        if at is not None and any(
            e.get("kind") in ("resumed", "run:finished") for e in events[at + 1 :]
        ):
            return
        await asyncio.sleep(0.01)


def _tail(path: Path, masker: SecretMasker, limit: int = MAX_TAIL) -> str:
    """The end of a captured output file (the scenario's log() lines, runner warnings).

    Read with a wide margin and cut after masking, so a secret split by the cut cannot
    show in part.
    """
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - 16 * limit))
            text = handle.read().decode("utf-8", "replace")
    except OSError:
        return ""
    text = masker.mask(text)
    return text if len(text) <= limit else "…" + text[-limit:]


def _read_json(path: Path) -> object:
    """The JSON value in ``path``; ``None`` when it is missing or does not parse."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _objects(value: object) -> list[JSONObject]:
    """The objects of a JSON array (console.json, network.json); none for anything else."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _collection_failures(run_dir: Path, events: list[JSONObject]) -> JSONObject:
    """A collection has no failure of its own: the scenario runs that did not pass, for
    ``get_failure`` on each."""
    failed = [
        {
            "scenario": e.get("scenario"),
            "runId": e.get("scenarioRunId"),
            "outcome": e.get("outcome"),
        }
        for e in events
        if e.get("kind") == "collection-run:scenario-finished" and e.get("outcome") != "completed"
    ]
    if not failed:
        raise ToolError(f"collection run {run_dir.name} has no scenario that did not pass (yet)")
    return {
        "collection": run_dir.name,
        "scenariosNotPassed": failed,
        "next": "get_failure(runId) on one of these runs gives its error, page and screenshot",
    }


RunIdArg = Annotated[
    str,
    Field(
        description="a run's id as run_scenario, run_collection or list_runs give it, or a "
        "unique prefix of it"
    ),
]
ScenarioArg = Annotated[
    str,
    Field(
        description="a scenario's name as list_scenarios gives it (shop/known-bug), "
        "`_helpers/<name>` for a helper, or the project-relative path of its file"
    ),
]
CmdArg = Annotated[
    str,
    Field(description="the debugger command", json_schema_extra={"enum": list(NAMES)}),
]
UntilArg = Annotated[
    str,
    Field(
        description="'paused' (a breakpoint, a step, a failure) or 'finished'",
        json_schema_extra={"enum": ["paused", "finished"]},
    ),
]
TimeoutArg = Annotated[float, Field(description="seconds to wait, at most 600")]


# The SDK decodes a string argument as JSON unless its annotation is plain ``str``
# (FuncMetadata.pre_parse_json): ``str | None`` turned the expression "[1, 2]" into a
# list and "null" into None. Every string argument is therefore ``str``: an optional
# one defaults to "" (absent), and an explicit null is taken as absent too.


def _null_as_absent(value: object) -> object:
    return "" if value is None else value


def _null_kept(value: object, handler: Callable[[object], object]) -> object:
    return None if value is None else handler(value)


OptionalText = Annotated[str, BeforeValidator(_null_as_absent)]
"""A string argument that may be left out: "" (or null) is absent."""
NullableText = Annotated[
    str,
    WrapValidator(_null_kept),
    WithJsonSchema({"anyOf": [{"type": "string"}, {"type": "null"}]}),
]
"""A string argument for which null means something of its own (it reaches the tool as
``None``, though typed ``str``: the annotation must stay ``str``, see above)."""


def _still_running(run_dir: Path) -> bool:
    meta = run_meta(run_dir)
    return meta is not None and meta.get("status") == "running"


def _failed_request(entry: JSONObject) -> bool:
    """A network.json entry that failed, or whose response was an HTTP error."""
    status = entry.get("status")
    return bool(entry.get("failure")) or (isinstance(status, int) and status >= 400)


def _diag(d: Diagnostic) -> JSONObject:
    return {"file": d.file, "line": d.line, "col": d.col, "message": d.message}


# What writing to (or reading from) a client that has gone away raises.
_CLIENT_GONE = (
    BrokenPipeError,
    ConnectionResetError,
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
)


class _Server(MCPServer):
    """The SDK's server, with an argument of the wrong type or a missing one answered in
    one sentence (pydantic's own text is several lines and a link), and a client that
    goes away in the middle of a call taken as the end of the session it is."""

    async def run_stdio_async(self) -> None:
        """The SDK's stdio loop. A client killed while a call is under way breaks the
        pipe of the answer (the SDK's stdout writer raises, in a task group): that is
        the session's end, as when the client closes stdin; the session's runs have
        been ended on the way out (the lifespan's ``finally``)."""
        try:
            await super().run_stdio_async()
        except _CLIENT_GONE:
            pass
        except BaseExceptionGroup as group:
            _, rest = group.split(_CLIENT_GONE)
            if rest is not None:
                raise

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as err:
            cause = err.__cause__
            if isinstance(cause, ValidationError) and not isinstance(err, UnexpectedToolError):
                raise ToolError(_argument_problem(name, cause)) from None
            raise


def _argument_problem(tool: str, error: ValidationError) -> str:
    """The first wrong argument of a call, as one sentence."""
    first = error.errors()[0]
    where = ".".join(str(part) for part in first.get("loc", ()))
    if first.get("type") == "missing":
        return f"{tool}: the argument '{where}' is required"
    shown = json.dumps(first.get("input"), default=str)[:80]
    return f"{tool}: the argument '{where}' {first.get('msg', 'is not valid').lower()}, got {shown}"


def build_server(root: Path) -> MCPServer:
    """The server with every tool registered; the docstrings are the tools' descriptions."""
    tools = _Tools(root)

    @contextlib.asynccontextmanager
    async def session(_server: MCPServer) -> AsyncIterator[None]:
        try:
            yield
        finally:
            ended = tools.end_owned_runs()
            if ended:
                print(
                    f"unotest mcp: the session closed; aborted the runs it started: "
                    f"{', '.join(ended)}",
                    file=sys.stderr,
                    flush=True,
                )

    server: MCPServer = _Server(
        "unotest",
        lifespan=session,
        instructions=(
            "unotest runs browser end-to-end scenarios statement by statement. Loop: "
            "list_scenarios → read_scenario → run_scenario (debug/breakpoints) → "
            "wait_for_run → inspect_runtime / debug (eval, step, continue) → get_failure → "
            "write_file the fix → debug reload + retry the paused run (or restart it, or run "
            "again)."
        ),
    )
    _add_discovery_tools(server, tools)
    _add_run_tools(server, tools)
    _add_debugging_tools(server, tools)
    return server


def _add_discovery_tools(server: MCPServer, tools: _Tools) -> None:
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


def _add_run_tools(server: MCPServer, tools: _Tools) -> None:
    @server.tool(structured_output=False)
    async def run_scenario(
        name: Annotated[str, Field(description="a scenario's name as list_scenarios gives it")],
        debug: bool = False,
        breakpoints: Annotated[
            list[str] | None,
            Field(
                description='"LINE" (the first statement on that line), "LINE:COL" (line '
                '1-based, column 0-based) or "FILE:LINE[:COL]" (FILE: `_helpers/<name>` or a '
                "project-relative path); they imply debug"
            ),
        ] = None,
        step: bool = False,
        detach: bool = False,
    ) -> StartedRun:
        """Start `unotest e2e NAME` as a subprocess; returns its runId once it has started
        (and `warnings`, what the runner printed before, e.g. a breakpoint that matches
        no statement). `breakpoints` ("LINE", "LINE:COL", "FILE:LINE[:COL]") imply debug;
        `step` pauses before the first statement. The run is aborted when this MCP
        session closes, unless `detach` is true."""
        return await tools.run_scenario(name, debug, breakpoints or [], step, detach)

    @server.tool(structured_output=False)
    async def run_collection(
        name: Annotated[
            str,
            Field(
                description="a collection of unotest/e2e/_collections/, as list_scenarios gives it"
            ),
        ],
        workers: Annotated[
            int,
            Field(
                description=f"worker processes, 1 to {MAX_WORKERS}",
                json_schema_extra={"minimum": 1, "maximum": MAX_WORKERS},
            ),
        ] = 1,
        bail: bool = False,
        detach: bool = False,
    ) -> StartedRun:
        """Start `unotest collection NAME` as a subprocess; returns the collection runId.
        The run is aborted when this MCP session closes, unless `detach` is true."""
        return await tools.run_collection(name, workers, bail, detach)

    @server.tool(structured_output=False)
    def get_run(run_id: RunIdArg) -> JSONObject:
        """RunMeta plus the run's events so far (newest last, bounded in size), the end
        of its captured stdout (the scenario's log() lines) and stderr (runner warnings),
        its retries' `attemptChain` and its restarts (`restartOf`, `restartedAs`,
        `latestRestart`: the run to follow now)."""
        return tools.get_run(run_id)

    @server.tool(structured_output=False)
    def get_history(
        scenario: Annotated[
            OptionalText, Field(description='one scenario; "": every scenario with history')
        ] = "",
        last: Annotated[
            int,
            Field(
                description=f"how many of each scenario's newest outcomes, 1 to {MAX_LAST}",
                json_schema_extra={"minimum": 1, "maximum": MAX_LAST},
            ),
        ] = 10,
    ) -> JSONObject:
        """What past runs say about each scenario (or one): its last `last` outcomes
        (strip, statuses, pass rate, flaky and failed counts, median duration), as
        `unotest history --json` gives them, under `scenarios`."""
        return tools.get_history(scenario or None, last)

    @server.tool(structured_output=False)
    def list_runs(
        limit: Annotated[
            int,
            Field(
                description=f"how many runs, 1 to {MAX_RUNS_LISTED}",
                json_schema_extra={"minimum": 1, "maximum": MAX_RUNS_LISTED},
            ),
        ] = 20,
    ) -> JSONObject:
        """The newest runs (RunMeta, newest first, at most `limit`, up to 200) with their status
        (running, passed, failed, aborted, interrupted), and `total`."""
        return tools.list_runs(limit)

    @server.tool(structured_output=False)
    async def wait_for_run(
        run_id: RunIdArg, until: UntilArg = "finished", timeout_s: TimeoutArg = 60.0
    ) -> JSONObject:
        """Wait until the run is paused or finished (`until`), or `timeout_s` has passed
        (at most 600): no polling needed. `reached` says which; `state` and `runtime`
        are runtime.json's, `run` its RunMeta."""
        return await tools.wait_for_run(run_id, until, timeout_s)


def _add_debugging_tools(server: MCPServer, tools: _Tools) -> None:
    @server.tool(structured_output=False)
    def inspect_runtime(run_id: RunIdArg) -> JSONObject:
        """runtime.json: state, current statement, variables, call stack, page, breakpoints."""
        return tools.inspect_runtime(run_id)

    @server.tool(structured_output=False)
    async def debug(
        run_id: RunIdArg,
        cmd: CmdArg,
        line: Annotated[
            int | None, Field(description="set-bp/clear-bp: the line (1-based)")
        ] = None,
        col: Annotated[
            int | None,
            Field(
                description="set-bp/clear-bp: the column (0-based, as runtime.json's `current` "
                "and check's errors give it); null: the first statement on the line"
            ),
        ] = None,
        file: Annotated[
            OptionalText,
            Field(
                description="set-bp/clear-bp: `_helpers/<name>` or a project-relative path; "
                '"": the scenario'
            ),
        ] = "",
        expr: Annotated[
            OptionalText, Field(description="eval: a DSL expression or statement")
        ] = "",
    ) -> JSONObject:
        """Send a debugger command (step, step-over, step-out, continue, pause, abort, retry,
        skip, eval with `expr`, set-bp/clear-bp with `line` (1-based), `col` (0-based), `file`,
        reload, restart);
        returns the runner's command:applied / command:rejected / command:result.
        `reload` (at a pause) continues on the files as they are now (write them with
        write_file); `restart` ends the run (aborted) and starts the scenario again in the
        same browser as a new run: the answer's `newRunId` is the run to follow. A
        collection run takes `abort` only: it stops the whole collection (its answer is
        the collection-run:finished event); drive its scenarios through their own runs."""
        if cmd not in NAMES:
            raise ToolError(unknown_command(cmd))
        command: dict[str, str | int] = {"cmd": cmd}
        if cmd in ("set-bp", "clear-bp") and line is not None and col is None:
            col = 0  # the line's first statement; the protocol's set-bp needs a col
        for key, value in (("line", line), ("col", col), ("file", file), ("expr", expr)):
            if value is not None and value != "":
                command[key] = value
        return await tools.debug(run_id, command)

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

    @server.tool(structured_output=False)
    def get_failure(run_id: RunIdArg) -> list[str | Image]:
        """The failure: error with file:line:col and step text, aria snapshot, console
        errors, failed requests, and the screenshot as an image. For a collection run:
        the runIds of its scenarios that did not pass, to call get_failure on."""
        return tools.get_failure(run_id)
