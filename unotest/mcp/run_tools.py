"""The MCP tools that start runs and follow them: run_scenario, run_collection, get_run,
get_history, list_runs, wait_for_run; and the runs a session owns, ended with it.

A run is started the one way a front end starts one (a
:class:`~runner.launch.request.LaunchRequest` given to
:func:`~runner.launch.start.start_run`, which also keeps ``request.json`` beside it),
after the checks that tell an agent what is wrong in its own words (an unknown
scenario, its problems, a breakpoint's form, the workers limit); it is read back
through the engine's readers (``runner.store``), masked here.

The runs a session starts end with it, unless started with ``detach``. Two ways, so
that neither a clean end nor a killed server leaves a paused browser behind: when the
session closes (the client disconnects, the server exits) :meth:`RunTools.end_owned_runs`
aborts each of its runs still going (an ``abort`` in commands.jsonl, SIGTERM to a
collection) and gives them a moment to end; and each run watches its parent, this
server, itself (``UNOTEST_OWNER_PID``, see :class:`runner.processes.OwnerWatch`), so a
server killed with SIGKILL still takes its runs with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from mcp.server.mcpserver import Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from runner.debug.client import append_command
from runner.errors import UnotestError
from runner.launch.limits import LIMITS
from runner.launch.request import LaunchRequest
from runner.launch.start import start_run
from runner.project.positions import parse_position
from runner.protocol import JSONObject
from runner.store.detail import PageImage, is_paused, output_tail, runtime_of, step_image
from runner.store.history import history_report
from runner.store.links import latest_restart, run_links
from runner.store.page_log import page_log_summary
from runner.store.run_list import RunQuery, runs_page
from runner.store.runs import events_of, run_meta
from unotest.mcp.answers import MAX_TEXT, StartedRun, cut, for_agent
from unotest.mcp.arguments import OptionalText, RunIdArg, TimeoutArg, UntilArg
from unotest.mcp.state import ToolState

__all__ = ["OwnedRun", "RunTools", "add_run_tools"]

MAX_EVENTS = 200
MAX_TAIL = 4_000
MAX_PAGE_PROBLEMS = 10
"""``get_run``'s ``pageLog``: the last this many failed requests and console errors."""
MAX_LAST = 200
"""``get_history``'s ``last``: at most this many outcomes per scenario."""
MAX_RUNS_LISTED = 200
WORKERS = LIMITS["workers"]
"""The smallest and largest ``workers`` of ``run_collection``: the engine's one table."""
# The SDK's stdio client waits 2 s for the server to exit once it closes the session,
# then kills it: the runs get most of that to end on their own (their own watch of
# this server ends whatever is left).
END_GRACE_S = 1.5


@dataclass
class OwnedRun:
    """A run this session started without ``detach``: it ends with the session."""

    process: subprocess.Popen[bytes]
    run_dir: Path
    kind: Literal["scenario", "collection"]


class RunTools:
    def __init__(self, state: ToolState) -> None:
        self.state = state
        self.project = state.project
        self.owned: list[OwnedRun] = []

    # --- starting --------------------------------------------------------------------

    async def run_scenario(
        self, name: str, debug: bool, breakpoints: list[str], step: bool, detach: bool = False
    ) -> StartedRun:
        index = self.state.index()
        _, path = self.state.scenario_path(index, name)
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
        for text in breakpoints:
            # Checked here, as the viewer does: "--headed" reached the command line.
            given = parse_position(str(text))
            if given is None or given.line < 1:
                raise ToolError(
                    f"breakpoint {text!r}: expected 'LINE:COL', 'LINE' or 'FILE:LINE[:COL]'"
                )
        request: JSONObject = {
            "kind": "scenario",
            "scenario": name,
            "debug": bool(debug or breakpoints or step),
            "breakpoints": [str(text) for text in breakpoints],
            "step": step,
        }
        return await self.start(request, detach)

    async def run_collection(
        self, name: str, workers: int, bail: bool, detach: bool = False
    ) -> StartedRun:
        index = self.state.index()
        if name not in index.collections:
            raise ToolError(f"no collection named '{name}' (known: {', '.join(index.collections)})")
        low, high = WORKERS
        if not low <= int(workers) <= high:
            raise ToolError(f"workers must be from {low} to {high}, not {workers}")
        request: JSONObject = {
            "kind": "collection",
            "collection": name,
            "workers": int(workers),
            "bail": bail,
        }
        return await self.start(request, detach)

    async def start(self, fields: JSONObject, detach: bool = False) -> StartedRun:
        """The run ``fields`` (a ``RunRequest`` with ``step``) asks for, started; owned
        by this session (it ends with it) unless ``detach``."""
        try:
            run = await start_run(
                self.project.root,
                LaunchRequest.from_json(fields),
                owner_pid=None if detach else os.getpid(),  # the run ends when this process does
                mask=self.state.masker().mask,
            )
        except UnotestError as err:
            raise ToolError(cut(for_agent(str(err)))) from None
        if not detach:
            self.owned.append(OwnedRun(run.process, run.run_dir, run.kind))
        started: StartedRun = {
            "runId": run.run_id,
            "runDir": self.project.relative(run.run_dir),
            "pid": run.process.pid,
        }
        warnings = [line for stream, line in run.early_output if stream == "stderr" and line]
        if warnings:
            started["warnings"] = warnings[-20:]
        return started

    # --- the runs the session owns -------------------------------------------------------

    def follow_restart(self, run_dir: Path, new_dir: Path) -> None:
        """``run_dir`` was restarted as ``new_dir``: if this session owns it, it owns the
        new run (which still ends with the session)."""
        for run in self.owned:
            if run.run_dir == run_dir:
                run.run_dir = new_dir

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
                with contextlib.suppress(OSError):
                    append_command(run.run_dir, {"id": ident, "cmd": "abort"})
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

    # --- following -----------------------------------------------------------------------

    def get_run(self, run_id: str) -> JSONObject:
        run_dir = self.state.run_dir(run_id)
        meta = run_meta(run_dir)
        events = events_of(run_dir)
        shown = events[-MAX_EVENTS:]
        text = json.dumps(shown)
        while len(text) > MAX_TEXT * 3 and len(shown) > 10:
            shown = shown[len(shown) // 4 :]
            text = json.dumps(shown)
        mask = self.state.masker().mask
        output = {
            "stdout": output_tail(run_dir, "stdout", mask, MAX_TAIL),
            "stderr": output_tail(run_dir, "stderr", mask, MAX_TAIL),
        }
        if "unotest dbg " in output["stderr"]:
            # The pause lines are written for a person at a shell.
            output["hint"] = (
                "'unotest dbg <runId> <cmd>' in stderr is the CLI's way to drive a paused "
                'run: here, call the debug tool, e.g. debug(run_id, cmd="continue")'
            )
        return self.state.safe(
            {
                "run": meta,
                "events": shown,
                "eventsOmitted": len(events) - len(shown),
                "output": output,
                # requests and console messages: counts, the failed and the errors, short
                "pageLog": page_log_summary(run_dir, MAX_PAGE_PROBLEMS),
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
            index = self.state.index()
            kind, _ = self.state.scenario_path(index, scenario)  # names the known ones
            if kind != "scenario":
                raise ToolError(f"{scenario!r} is a helper: history is kept per scenario")
        return self.state.safe({"scenarios": list(report)})

    def list_runs(self, limit: int) -> JSONObject:
        if limit < 1:
            raise ToolError(
                f"limit must be at least 1, not {limit} (at most {MAX_RUNS_LISTED} are listed)"
            )
        # a cap on the answer's size; about that many runs are read, not every one
        page = runs_page(self.project.runs_dir, RunQuery(limit=min(limit, MAX_RUNS_LISTED)))
        return self.state.safe({"runs": page.runs, "total": page.total})

    async def wait_for_run(self, run_id: str, until: str, timeout_s: float) -> JSONObject:
        if until not in ("paused", "finished"):
            raise ToolError("until must be 'paused' or 'finished'")
        run_dir = self.state.run_dir(run_id)
        deadline = time.monotonic() + max(0.0, min(timeout_s, 600.0))
        while True:
            meta = run_meta(run_dir)
            runtime = runtime_of(run_dir)
            state = runtime.get("state") if runtime is not None else None
            finished = meta is not None and meta.get("status") != "running"
            paused = not finished and is_paused(run_dir, runtime)
            answer: JSONObject = {"state": state, "run": meta, "runtime": runtime}
            if until == "finished" and paused:
                # It will not finish on its own: it waits for a debug command.
                return self.state.safe(
                    {
                        "reached": False,
                        **answer,
                        "hint": f"the run is paused ({state}) and waits for a debug command: "
                        "continue, step, step-over, step-out, retry, skip or abort",
                    }
                )
            if (until == "paused" and paused) or finished:
                reached = (until == "finished" and finished) or (until == "paused" and not finished)
                return self.state.safe({"reached": reached, **answer})
            if time.monotonic() >= deadline:
                return self.state.safe({"reached": False, **answer})
            await asyncio.sleep(0.05)


def _still_running(run_dir: Path) -> bool:
    meta = run_meta(run_dir)
    return meta is not None and meta.get("status") == "running"


# --- registration: the docstrings are the tools' descriptions ------------------------------


def add_run_tools(server: MCPServer, tools: RunTools) -> None:
    _add_starting_tools(server, tools)
    _add_following_tools(server, tools)


def _add_starting_tools(server: MCPServer, tools: RunTools) -> None:
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
                description=f"worker processes, {WORKERS[0]} to {WORKERS[1]}",
                json_schema_extra={"minimum": WORKERS[0], "maximum": WORKERS[1]},
            ),
        ] = 1,
        bail: bool = False,
        detach: bool = False,
    ) -> StartedRun:
        """Start `unotest collection NAME` as a subprocess; returns the collection runId.
        The run is aborted when this MCP session closes, unless `detach` is true."""
        return await tools.run_collection(name, workers, bail, detach)


MAX_ARIA = 12_000
"""At most this many characters of an aria snapshot in an answer."""


def image_answer(
    state: ToolState, data: JSONObject, key: str, image: PageImage
) -> list[str | Image]:
    """``data`` with the image's ``page:image`` line under ``key`` and its aria snapshot
    (at a pause), masked and cut, then the image itself: how a tool answers the page."""
    masker = state.masker()
    shown = dict(data)
    shown[key] = {k: v for k, v in image.event.items() if k != "kind"}
    if image.aria is not None:
        shown["ariaSnapshot"] = cut(masker.mask(image.aria), MAX_ARIA)
    text = json.dumps(state.safe(shown), indent=2, ensure_ascii=False)
    return [text, Image(data=image.jpeg.read_bytes(), format="jpeg")]


def _add_following_tools(server: MCPServer, tools: RunTools) -> None:
    @server.tool(structured_output=False)
    def get_run(
        run_id: RunIdArg,
        step: Annotated[
            int | None,
            Field(
                description="a step's index (0-based, in step:started order): also answer "
                "the page as it was after that step (`pageAfterStep` and the image), when "
                "the run kept step images (pageImages.steps)",
                json_schema_extra={"minimum": 0},
            ),
        ] = None,
    ) -> list[str | Image]:
        """RunMeta plus the run's events so far (newest last, bounded in size), the end
        of its captured stdout (the scenario's log() lines) and stderr (runner warnings),
        its retries' `attemptChain` and its restarts (`restartOf`, `restartedAs`,
        `latestRestart`: the run to follow now), and `pageLog`: how many requests and
        console messages the page had, with its failed requests and errors (the last
        10 of each, short)."""
        answer = tools.get_run(run_id)
        if step is None:
            return [json.dumps(answer, indent=2, ensure_ascii=False)]
        image = step_image(tools.state.project.root, tools.state.run_dir(run_id), step)
        if image is None:
            raise ToolError(
                f"run {run_id} kept no image of the page after step {step} "
                "(pageImages.steps in unotest.config.yaml: on-debug keeps them under the "
                "debugger, on in every run)"
            )
        return image_answer(tools.state, answer, "pageAfterStep", image)

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
