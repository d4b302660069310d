"""The MCP tools on a run under way or over: inspect_runtime, debug, pick_target,
get_failure.

What an agent does with a run it follows: read its ``runtime.json``, drive its
debugger (a command through :mod:`runner.debug.client`, waited for until the run has
left the pause, or until a ``reload``'s or ``restart``'s result) and read how it
failed (its failure bundle through :mod:`runner.store.detail`, a paused failure, or a
collection's scenarios that did not pass). Every answer masked here.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated

from mcp.server.mcpserver import Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from runner.debug.client import (
    ACK_TIMEOUT_S,
    COLLECTION_ABORT_WAIT_S,
    send_command,
    until_result,
    until_resumed,
)
from runner.debug.commands import NAMES, RESUMING, unknown_command
from runner.errors import UnotestError
from runner.protocol import JSONObject
from runner.run.result import error_location
from runner.store.detail import (
    FailureBundle,
    collection_failures,
    pause_image,
    read_bundle,
    runtime_of,
)
from runner.store.links import latest_restart
from runner.store.runs import events_of, is_collection_run
from unotest.mcp.answers import cut, for_agent
from unotest.mcp.arguments import CmdArg, OptionalText, RunIdArg
from unotest.mcp.run_tools import MAX_ARIA, RunTools, image_answer
from unotest.mcp.state import ToolState

__all__ = ["DebugTools", "add_debug_tools"]

RESUME_TIMEOUT_S = 2.0
"""How long a resuming command waits for the run to leave its pause."""
RESTART_TIMEOUT_S = 60.0
"""How long ``debug restart`` waits for the new run (the old one's hooks end first)."""
RELOAD_RESULT_S = 2.0
"""How long ``debug reload`` waits for its ``command:result`` after ``command:applied``."""
MAX_LISTED = 30
"""At most this many console errors, dialogs and failed requests in a failure."""
PAUSE_IMAGE_WAIT_S = 3.0
"""How long inspect_runtime waits for the image of a pause that has none yet."""


class DebugTools:
    def __init__(self, state: ToolState, runs: RunTools) -> None:
        self.state = state
        self.runs = runs

    async def inspect_runtime(self, run_id: str) -> list[str | Image]:
        """runtime.json, and at a pause the page as it is: its image and aria snapshot
        (an agent reads the snapshot where a person looks at the image). The image is
        taken just after the pause is announced: a pause without one yet is given
        ``PAUSE_IMAGE_WAIT_S`` for it."""
        runtime = self._runtime(run_id)
        root, run_dir = self.state.project.root, self.state.run_dir(run_id)
        image = pause_image(root, run_dir)
        paused = str(runtime.get("state", "")).startswith("paused")
        deadline = time.monotonic() + PAUSE_IMAGE_WAIT_S
        while image is None and paused and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
            image = pause_image(root, run_dir)
        if image is None:
            return [json.dumps(runtime, indent=2, ensure_ascii=False)]
        return image_answer(self.state, runtime, "pageImage", image)

    async def pick_target(
        self, run_id: str, name: str, role: str, point: tuple[float, float] | None
    ) -> JSONObject:
        """``pick`` on the paused run's live page: the target, its alternatives, what
        the element is; a tool error with the runner's reason otherwise."""
        command: dict[str, object] = {"cmd": "pick"}
        if point is not None:
            command.update(x=point[0], y=point[1])
        elif name.strip():
            command["name"] = name
            if role.strip():
                command["role"] = role
        else:
            raise ToolError(
                "pick_target needs a name (an element's text or accessible name) or x and y"
            )
        answer = await self.debug(run_id, command)
        answers = answer.get("answers")
        results = [a for a in answers if isinstance(a, dict)] if isinstance(answers, list) else []
        for result in results:
            if result.get("kind") == "command:rejected":
                raise ToolError(for_agent(str(result.get("reason"))))
            if result.get("kind") == "command:result":
                if result.get("ok") is not True:
                    raise ToolError(for_agent(str(result.get("error"))))
                picked = json.loads(str(result.get("value")))
                return picked if isinstance(picked, dict) else {"target": picked}
        raise ToolError(f"no answer to pick from run {run_id}")

    def _runtime(self, run_id: str) -> JSONObject:
        run_dir = self.state.run_dir(run_id)
        runtime = runtime_of(run_dir)
        if runtime is None and is_collection_run(run_dir):
            raise ToolError(
                f"run {run_dir.name} is a collection's: inspect one of its scenarios' runs "
                "(get_run lists them in its collection-run:scenario-* events)"
            )
        if runtime is None:
            raise ToolError(f"run {run_id} has no runtime.json yet")
        return self.state.safe(runtime)

    async def debug(self, run_id: str, command: Mapping[str, object]) -> JSONObject:
        run_dir = self.state.run_dir(run_id)
        try:
            answers = await asyncio.to_thread(send_command, run_dir, command)
        except UnotestError as err:
            raise ToolError(for_agent(str(err))) from None
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
            await until_resumed(run_dir, str(applied[0].get("id")), RESUME_TIMEOUT_S)
        answer: JSONObject = {"answers": answers}
        waits = {"restart": RESTART_TIMEOUT_S, "reload": RELOAD_RESULT_S}
        if command["cmd"] in waits and applied and not _has_result(answers):
            # Their command:result (the new run id; what a reload did) follows the
            # applied: a restart's once the old run has ended.
            ident = str(applied[0].get("id"))
            result = await until_result(run_dir, ident, waits[str(command["cmd"])])
            if result is not None:
                answers.append(result)
        if command["cmd"] == "restart":
            answer.update(self._restarted(run_dir, answers))
        return self.state.safe(answer)

    def _restarted(self, run_dir: Path, answers: list[JSONObject]) -> JSONObject:
        """``newRunId`` (and ``newRunDir``) once the restart's run exists; the runs this
        session owns follow it, so the new run still ends with the session."""
        result = next((a for a in answers if a.get("kind") == "command:result"), None)
        if result is None or result.get("ok") is not True:
            return {}
        new_dir = latest_restart(run_dir)
        if new_dir == run_dir:
            return {}
        self.runs.follow_restart(run_dir, new_dir)
        return {"newRunId": new_dir.name, "newRunDir": self.state.project.relative(new_dir)}

    def get_failure(self, run_id: str) -> list[str | Image]:
        run_dir = self.state.run_dir(run_id)
        events = events_of(run_dir)
        if is_collection_run(run_dir):
            return [json.dumps(self.state.safe(_collection_report(run_dir, events)), indent=2)]
        try:
            bundle = read_bundle(self.state.project.root, events)
        except UnotestError as err:
            raise ToolError(str(err)) from None  # a bundle outside the project
        if bundle is None:
            return [json.dumps(self.state.safe(_unbundled(run_id, run_dir, events)), indent=2)]
        return self._bundle_report(bundle)

    def _bundle_report(self, bundle: FailureBundle) -> list[str | Image]:
        """The failure as its bundle tells it, and the screenshot as an image."""
        masker = self.state.masker()
        error, console = bundle.error, bundle.console
        report = {
            # The scenario's own line first, then each helper down to where it failed.
            "location": error_location(error) if isinstance(error, dict) else None,
            "error": error,
            "bundlePath": bundle.path,
            "consoleErrors": [m for m in console if m.get("type") in ("error", "pageerror")][
                -MAX_LISTED:
            ],
            # alert/confirm/prompt and how the run answered them (a dismissed confirm is
            # often why the page then shows what it does).
            "dialogs": [m.get("text") for m in console if m.get("type") == "dialog"][-MAX_LISTED:],
            "failedRequests": [r for r in bundle.network if _failed_request(r)][-MAX_LISTED:],
            # Masked before the cut: a cut first could leave the start of a secret.
            "ariaSnapshot": cut(masker.mask(bundle.aria), MAX_ARIA),
        }
        content: list[str | Image] = [
            json.dumps(masker.mask_data(report), indent=2, ensure_ascii=False)
        ]
        if bundle.screenshot is not None:
            content.append(Image(data=bundle.screenshot.read_bytes(), format="png"))
        return content


def _unbundled(run_id: str, run_dir: Path, events: list[JSONObject]) -> JSONObject:
    """The failure of a scenario run that wrote no failure bundle (yet)."""
    # Paused at the failure (--debug): its bundle comes once the run ends failed;
    # runtime.json holds the failure with its place, where the agent must look.
    runtime = runtime_of(run_dir)
    if runtime is not None and runtime.get("state") == "paused-failure":
        return {
            "failure": runtime.get("lastFailure"),
            "bundle": None,
            "paused": "the run is paused at this failure: retry (after a fix), skip "
            "or continue; the failure bundle is written if the run ends failed",
        }
    # A step whose error a ``try`` caught is no failure of the run, nor is one a
    # person skipped (or retried) at its pause in a run that then passed.
    fails = [e for e in events if e.get("kind") == "step:fail" and not e.get("caught")]
    ended = [e for e in events if e.get("kind") == "run:finished"]
    if fails and not (ended and ended[-1].get("outcome") == "completed"):
        return {"failure": fails[-1], "bundle": None}
    raise ToolError(f"run {run_id} has no failure")


def _collection_report(run_dir: Path, events: list[JSONObject]) -> JSONObject:
    """A collection has no failure of its own: the scenario runs that did not pass, for
    ``get_failure`` on each."""
    failed = collection_failures(events)
    if not failed:
        raise ToolError(f"collection run {run_dir.name} has no scenario that did not pass (yet)")
    return {
        "collection": run_dir.name,
        "scenariosNotPassed": failed,
        "next": "get_failure(runId) on one of these runs gives its error, page and screenshot",
    }


def _failed_request(entry: JSONObject) -> bool:
    """A request of the failure bundle that failed, or whose response was an HTTP error."""
    status = entry.get("status")
    return bool(entry.get("failure")) or (isinstance(status, int) and status >= 400)


def _has_result(answers: list[JSONObject]) -> bool:
    return any(a.get("kind") in ("command:result", "command:rejected") for a in answers)


def debugger_command(
    cmd: str, line: int | None, col: int | None, file: str, expr: str, frame: int | None = None
) -> dict[str, str | int]:
    """The ``debug`` tool's arguments as a command for the run; an unknown ``cmd`` is a
    tool error."""
    if cmd not in NAMES:
        raise ToolError(unknown_command(cmd))
    command: dict[str, str | int] = {"cmd": cmd}
    if cmd in ("set-bp", "clear-bp") and line is not None and col is None:
        col = 0  # the line's first statement; the protocol's set-bp needs a col
    fields = (("line", line), ("col", col), ("file", file), ("expr", expr), ("frame", frame))
    for key, value in fields:
        if value is not None and value != "":
            command[key] = value
    return command


# --- registration: the docstrings are the tools' descriptions ------------------------------


def add_debug_tools(server: MCPServer, tools: DebugTools) -> None:
    @server.tool(structured_output=False)
    async def inspect_runtime(run_id: RunIdArg) -> list[str | Image]:
        """runtime.json: state, current statement, variables, call stack, page, breakpoints;
        at a pause also the page as it is now: `pageImage` (where it was taken),
        `ariaSnapshot` (the page's accessibility tree, YAML) and the image itself."""
        return await tools.inspect_runtime(run_id)

    @server.tool(structured_output=False)
    async def pick_target(
        run_id: RunIdArg,
        name: Annotated[
            OptionalText,
            Field(
                description="the element's accessible name or text, as the aria snapshot "
                'shows it (e.g. "Add to cart")'
            ),
        ] = "",
        role: Annotated[
            OptionalText,
            Field(description='with name: its role as the aria snapshot shows it, e.g. "button"'),
        ] = "",
        x: Annotated[
            float | None, Field(description="instead of a name: CSS pixels from the left")
        ] = None,
        y: Annotated[float | None, Field(description="with x: CSS pixels from the top")] = None,
    ) -> JSONObject:
        """At a pause: the best target for an element of the live page, in the scenario
        language's forms (role(...), testid(...), label(...), placeholder(...),
        text(...), css(...)), checked to find that element alone; `alternatives` that
        find it too, `element` what it is. Name it by its text or accessible name (and
        role) from inspect_runtime's ariaSnapshot, or by a point of its pageImage."""
        point = (x, y) if x is not None and y is not None else None
        return await tools.pick_target(run_id, name, role, point)

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
        frame: Annotated[
            int | None,
            Field(
                description="eval: the call-stack frame whose scope evaluates `expr` "
                "(an index of runtime.json's frameVars, which holds each frame's "
                "variables: 0 the test function, i callStack[i-1]); null: the innermost"
            ),
        ] = None,
    ) -> JSONObject:
        """Send a debugger command (step, step-over, step-out, continue, pause, abort, retry,
        skip, eval with `expr` (and `frame`), set-bp/clear-bp with `line` (1-based), `col`
        (0-based), `file`, reload, restart);
        returns the runner's command:applied / command:rejected / command:result.
        `reload` (at a pause) continues on the files as they are now (write them with
        write_file); `restart` ends the run (aborted) and starts the scenario again in the
        same browser as a new run: the answer's `newRunId` is the run to follow. A
        collection run takes `abort` only: it stops the whole collection (its answer is
        the collection-run:finished event); drive its scenarios through their own runs."""
        return await tools.debug(run_id, debugger_command(cmd, line, col, file, expr, frame))

    @server.tool(structured_output=False)
    def get_failure(run_id: RunIdArg) -> list[str | Image]:
        """The failure: error with file:line:col and step text, aria snapshot, console
        errors, failed requests, and the screenshot as an image. For a collection run:
        the runIds of its scenarios that did not pass, to call get_failure on."""
        return tools.get_failure(run_id)
