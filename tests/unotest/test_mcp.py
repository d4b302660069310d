"""``unotest mcp`` driven the way an agent drives it: the SDK's stdio client, the real server.

Each test copies ``examples/`` into ``tmp_path`` (without its run history), moves the
example site's web server to a free port (so parallel tests never share one), adds
what it needs (a fixture scenario, ``unotest/.env``, hand-made run directories) and
starts ``unotest mcp --root <copy>`` with ``StdioServerParameters``, exactly as an MCP
client configured from the README would.

Covered: the agent loop end to end on real Chromium (list → read → run with a
breakpoint → wait paused → inspect → eval → step → continue → finished; the failing
``shop/known-bug`` → get_failure with error position, aria snapshot and a PNG → fix
the file → check → run green; stdout.log / stderr.log captured); set_breakpoints
(``.debugger.json`` rewritten as a valid BreakpointsFile keeping other entries);
check of a draft with every error placed; safety (path escapes, unknown commands and
runs → one clear sentence, the server keeps answering; a file that no longer parses
stays readable); bounded list_runs / get_run; secrets of ``unotest/.env`` masked in
every tool result, both from a real run and from run files that hold them in plain;
run_collection. Every process a test's runs start carries a marker in its
environment: after the test none may be left (Chromium and the web server included).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from net import free_port
from protocol_schemas import validate

from runner import protocol
from unotest.mcp.server import build_server

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
UNOTEST = Path(sys.executable).with_name("unotest")
EXAMPLE_PORT = "4174"
MARKER_VAR = "UNOTEST_MCP_TEST_MARKER"
HAS_PROC = Path("/proc/self/environ").exists()
SECRET = "tok-Zq81-very-secret-4471"
MASK = "********"

pytestmark = pytest.mark.skipif(not UNOTEST.is_file(), reason=f"no console script {UNOTEST}")

SECRET_SCENARIO = """\
// id-secret-echo
// Reads a secret, logs it and fails on it
// #111111
function test_secret_echo() {
  const token = env("API_TOKEN")
  log(`token is ${token}`)
  expect_equal(token, "something else")
}
"""

DRAFT_WITH_ERRORS = """\
// id-draft
// A draft with three mistakes
// #000000
function test_draft() {
  goto("/")
  clck("Save")
  expect_text("only one argument")
  no_such_helper(1)
}
"""


# ---------------------------------------------------------------------------
# the project copy, the client, the leftovers
# ---------------------------------------------------------------------------


def copy_examples(tmp_path: Path) -> Path:
    """``examples/`` without run history, its web server on a free port of its own."""
    project = tmp_path / "project"
    shutil.copytree(
        EXAMPLES,
        project,
        ignore=shutil.ignore_patterns(".runs", ".unotest", ".debugger.json", ".env"),
    )
    config = project / "unotest.config.yaml"
    text = config.read_text(encoding="utf-8")
    assert text.count(EXAMPLE_PORT) == 3, "baseURL, webServer command and url"
    # shop/known-bug waits out its expect timeout for a total it never gets: 1 s, not 5.
    assert text.count("\n  expect: 5000\n") == 1, "the expect timeout"
    text = text.replace("\n  expect: 5000\n", "\n  expect: 1000\n")
    config.write_text(text.replace(EXAMPLE_PORT, str(free_port())), encoding="utf-8")
    return project


def marked_processes(marker: str) -> list[int]:
    """Processes whose environment carries this test's marker (runs, browsers, servers)."""
    needle = f"{MARKER_VAR}={marker}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def wait_for_no_leftovers(marker: str, timeout: float) -> list[int]:
    deadline = time.monotonic() + timeout
    left = marked_processes(marker)
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = marked_processes(marker)
    return left


def stop_run(pid: int, marker: str) -> None:
    """SIGTERM to a run's process group (the runner closes its browser), then SIGKILL.

    Only while ``pid`` is still this test's process (never a reused id).
    """
    if HAS_PROC and pid not in marked_processes(marker):
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pid, sig)
        except OSError:
            return
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                os.killpg(pid, 0)
            except OSError:
                return
            time.sleep(0.1)


@dataclass
class Agent:
    """One MCP client session against ``unotest mcp --root project``."""

    session: ClientSession
    project: Path
    pids: list[int] = field(default_factory=list)
    run_ids: list[str] = field(default_factory=list)

    async def call(self, tool: str, **arguments: Any) -> Any:
        return await self.session.call_tool(tool, arguments)

    async def ok(self, tool: str, **arguments: Any) -> Any:
        """The tool's JSON answer; the call must succeed."""
        result = await self.call(tool, **arguments)
        assert not result.is_error, f"{tool}({arguments}) failed: {text_of(result)}"
        assert result.content and result.content[0].type == "text"
        return json.loads(result.content[0].text)

    async def error(self, tool: str, **arguments: Any) -> str:
        """The message of a failing call: one clear sentence, no traceback."""
        result = await self.call(tool, **arguments)
        assert result.is_error, f"{tool}({arguments}) should fail: {text_of(result)}"
        message = text_of(result)
        assert message.strip() and "\n" not in message.strip(), message
        assert "Traceback" not in message, message
        return message

    async def start(self, tool: str, **arguments: Any) -> dict[str, Any]:
        started = await self.ok(tool, **arguments)
        self.pids.append(started["pid"])
        self.run_ids.append(started["runId"])
        return dict(started)

    async def abort_unfinished(self) -> None:
        """After a failed test: abort what still runs, as an agent would (best effort)."""
        with anyio.CancelScope(shield=True), anyio.move_on_after(15):
            for run_id in self.run_ids:
                result = await self.call("get_run", run_id=run_id)
                if (
                    not result.is_error
                    and json.loads(text_of(result))["run"]["status"] == "running"
                ):
                    await self.call("debug", run_id=run_id, cmd="abort")

    async def wait(self, run_id: str, until: str, timeout_s: float = 60) -> dict[str, Any]:
        answer = await self.ok("wait_for_run", run_id=run_id, until=until, timeout_s=timeout_s)
        assert answer["reached"], f"run {run_id} not {until}: {answer}"
        return dict(answer)


def text_of(result: Any) -> str:
    return "\n".join(c.text for c in result.content if c.type == "text")


@contextlib.asynccontextmanager
async def connect(project: Path, marker: str) -> AsyncIterator[Agent]:
    params = StdioServerParameters(
        command=str(UNOTEST),
        args=["mcp", "--root", str(project)],
        env={MARKER_VAR: marker},
    )
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield Agent(session, project)


def drive(
    project: Path, scenario: Callable[[Agent], Awaitable[None]], timeout: float = 150
) -> None:
    """Run ``scenario`` against a fresh server; no process of its runs may outlive it."""
    marker = uuid.uuid4().hex
    pids: list[int] = []

    async def main() -> None:
        with anyio.fail_after(timeout):
            async with connect(project, marker) as agent:
                try:
                    await scenario(agent)
                except BaseException:
                    await agent.abort_unfinished()
                    raise
                finally:
                    pids.extend(agent.pids)

    try:
        try:
            anyio.run(main)
        except BaseExceptionGroup as group:
            raise _leaf(group) from None
    finally:
        left = wait_for_no_leftovers(marker, 15) if HAS_PROC else []
        for pid in pids:
            stop_run(pid, marker)
        stray = wait_for_no_leftovers(marker, 5) if HAS_PROC else []
        for pid in stray:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    assert not left, f"processes left after the test: {left}"


def _leaf(error: BaseException) -> BaseException:
    """The failing assertion inside the task groups of the client, not their wrapper."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    yield copy_examples(tmp_path)


def source_line(read: dict[str, Any], number: int) -> str:
    """Line ``number`` of a read_scenario answer (``"  10 | text"``)."""
    for row in read["source"].splitlines():
        shown, _, text = row.partition(" | ")
        if int(shown) == number:
            return text
    raise AssertionError(f"no line {number} in {read['source']!r}")


# ---------------------------------------------------------------------------
# the agent loop, end to end
# ---------------------------------------------------------------------------


def test_agent_loop_debug_fail_fix_green(project: Path) -> None:
    async def loop(agent: Agent) -> None:
        tools = {t.name for t in (await agent.session.list_tools()).tools}
        assert {
            "list_scenarios",
            "read_scenario",
            "check",
            "run_scenario",
            "run_collection",
            "get_run",
            "get_history",
            "list_runs",
            "wait_for_run",
            "inspect_runtime",
            "debug",
            "set_breakpoints",
            "get_failure",
            "pick_target",
        } <= tools

        # discover
        listing = await agent.ok("list_scenarios")
        names = [s["name"] for s in listing["scenarios"]]
        assert {"shop/add-to-cart", "shop/known-bug", "smoke-welcome"} <= set(names)
        assert listing["errors"] == []
        assert {"name": "auth", "path": "unotest/e2e/_helpers/auth.js"} in listing["helpers"]
        assert "nightly" in {c["name"] for c in listing["collections"]}
        for meta in listing["scenarios"]:
            validate("ScenarioMeta", meta)
        for meta in listing["helpers"]:
            validate("HelperMeta", meta)
        for meta in listing["collections"]:
            validate("CollectionMeta", meta)

        read = await agent.ok("read_scenario", name="shop/add-to-cart")
        assert read["kind"] == "scenario"
        assert read["path"] == "unotest/e2e/shop/add-to-cart.test.js"
        assert source_line(read, 1) == "// id-shop-add-to-cart"
        assert source_line(read, 10).strip() == "expected += price_of(item)"
        assert source_line(read, 21).strip() == "const prices = { Teapot: 25, Kettle: 40 }"

        # run with a breakpoint, wait until it holds
        started = await agent.start("run_scenario", name="shop/add-to-cart", breakpoints=["10:4"])
        run_id = started["runId"]
        assert run_id.startswith("shop-add-to-cart-")
        assert started["runDir"] == f"unotest/.runs/{run_id}"
        paused = await agent.wait(run_id, "paused")
        assert paused["state"] == "paused-breakpoint"
        assert paused["run"]["status"] == "running"

        runtime = await agent.ok("inspect_runtime", run_id=run_id)
        validate("RuntimeStateFile", runtime)
        assert runtime["state"] == "paused-breakpoint"
        assert runtime["current"] == {"line": 10, "col": 4}
        assert runtime["file"] == "unotest/e2e/shop/add-to-cart.test.js"
        assert runtime["vars"]["expected"] == "0"
        assert runtime["vars"]["item"] == '"Teapot"'
        assert runtime["callStack"] == []
        assert runtime["page"]["url"].endswith("/catalog.html")
        assert runtime["breakpoints"] == {"unotest/e2e/shop/add-to-cart.test.js": ["10:4"]}

        # the page at the pause: its image and aria snapshot, and a target picked on it
        seen = await agent.call("inspect_runtime", run_id=run_id)
        assert [c.type for c in seen.content] == ["text", "image"], seen.content
        assert seen.content[1].mime_type == "image/jpeg"
        assert base64.b64decode(seen.content[1].data)[:3] == b"\xff\xd8\xff"
        shown = json.loads(seen.content[0].text)
        assert shown["pageImage"]["after"] == "pause"
        assert 'button "Add Teapot"' in shown["ariaSnapshot"]
        picked = await agent.ok("pick_target", run_id=run_id, name="Add Kettle", role="button")
        assert picked["target"] == 'role("button", "Add Kettle")', picked
        picked = await agent.ok("pick_target", run_id=run_id, name="Discount code")
        assert picked["target"] == 'label("Discount code")', picked
        missing = await agent.error("pick_target", run_id=run_id, name="Nothing like it")
        assert 'no visible element named "Nothing like it"' in missing

        # a live REPL in the paused scope
        answer = await agent.ok("debug", run_id=run_id, cmd="eval", expr="expected + 1")
        kinds = [a["kind"] for a in answer["answers"]]
        assert "command:applied" in kinds
        result = next(a for a in answer["answers"] if a["kind"] == "command:result")
        assert result["ok"] is True and result["value"] == "1"
        answer = await agent.ok("debug", run_id=run_id, cmd="eval", expr='text_of(testid("total"))')
        result = next(a for a in answer["answers"] if a["kind"] == "command:result")
        assert result["ok"] is True and "Total: 25 EUR" in result["value"]

        # step into the helper call: the wait must not see the pause just left
        answer = await agent.ok("debug", run_id=run_id, cmd="step")
        assert [a["kind"] for a in answer["answers"]] == ["command:applied"]
        stepped = await agent.wait(run_id, "paused")
        assert stepped["state"] == "paused-step"
        assert stepped["runtime"]["current"] == {"line": 21, "col": 2}
        assert [f["fn"] for f in stepped["runtime"]["callStack"]] == ["price_of"]

        # continue: the loop's second item holds at the same breakpoint
        await agent.ok("debug", run_id=run_id, cmd="continue")
        again = await agent.wait(run_id, "paused")
        assert again["state"] == "paused-breakpoint"
        assert again["runtime"]["current"] == {"line": 10, "col": 4}
        assert again["runtime"]["vars"]["item"] == '"Kettle"'
        assert again["runtime"]["vars"]["expected"] == "25"

        cleared = await agent.ok("debug", run_id=run_id, cmd="clear-bp", line=10, col=4)
        assert cleared["answers"][0]["kind"] == "command:applied"
        await agent.ok("debug", run_id=run_id, cmd="continue")
        done = await agent.wait(run_id, "finished")
        assert done["run"]["status"] == "passed"
        assert done["state"] == "completed"

        run = await agent.ok("get_run", run_id=run_id)
        validate("RunMeta", run["run"])
        events = run["events"]
        assert events[0]["kind"] == "run:started"
        assert events[-1] == {**events[-1], "kind": "run:finished", "outcome": "completed"}
        resumed = [e for e in events if e["kind"] == "resumed"]
        assert [(e["by"], e["cmd"]) for e in resumed] == [
            ("step", "step"),
            ("continue", "continue"),
            ("continue", "continue"),
        ]
        assert [e["reason"] for e in events if e["kind"] == "paused"] == [
            "breakpoint",
            "step",
            "breakpoint",
        ]
        assert run["eventsOmitted"] == 0
        # the page after a step (images were kept: the run was under the debugger)
        after = await agent.call("get_run", run_id=run_id, step=0)
        assert [c.type for c in after.content] == ["text", "image"], after.content
        assert json.loads(after.content[0].text)["pageAfterStep"]["step"] == 0

        # the deliberate failure
        started = await agent.start("run_scenario", name="shop/known-bug")
        failing = started["runId"]
        done = await agent.wait(failing, "finished")
        assert done["run"]["status"] == "failed"
        # a finished run cannot be driven: a clear error, not a hang
        message = await agent.error("debug", run_id=failing, cmd="step")
        assert "finished" in message

        failure = await agent.call("get_failure", run_id=failing)
        assert not failure.is_error, text_of(failure)
        assert [c.type for c in failure.content] == ["text", "image"]
        report = json.loads(failure.content[0].text)
        error = report["error"]
        assert error["file"] == "unotest/e2e/shop/known-bug.test.js"
        assert (error["line"], error["col"]) == (9, 2)
        assert error["step"] == 'expect_text(testid("total"), "Total: 22.5 EUR")'
        assert error["errorName"] == "AssertionError"
        assert "Total: 25 EUR" in error["error"]
        assert report["bundlePath"].startswith(".unotest/failures/shop-known-bug__")
        assert 'paragraph: "Total: 25 EUR"' in report["ariaSnapshot"]
        assert 'button "Apply"' in report["ariaSnapshot"]
        assert isinstance(report["consoleErrors"], list)
        assert isinstance(report["failedRequests"], list)
        image = failure.content[1]
        assert image.mime_type == "image/png"
        assert base64.b64decode(image.data).startswith(b"\x89PNG\r\n\x1a\n")

        # fix the expectation to what the page really shows, check, run again
        path = agent.project / "unotest/e2e/shop/known-bug.test.js"
        source = path.read_text(encoding="utf-8")
        path.write_text(source.replace("Total: 22.5 EUR", "Total: 25 EUR"), encoding="utf-8")
        checked = await agent.ok("check", name="shop/known-bug")
        assert checked == {"ok": True, "errors": []}
        fixed = (await agent.start("run_scenario", name="shop/known-bug"))["runId"]
        done = await agent.wait(fixed, "finished")
        assert done["run"]["status"] == "passed"
        assert done["run"]["outcome"] == "completed"

        for ident in (run_id, failing, fixed):
            run_dir = agent.project / "unotest" / ".runs" / ident
            assert (run_dir / "stdout.log").is_file()
            assert (run_dir / "stderr.log").is_file()

        runs = await agent.ok("list_runs")
        assert runs["total"] == 3
        assert [r["runId"] for r in runs["runs"]] == [fixed, failing, run_id]
        assert [r["status"] for r in runs["runs"]] == ["passed", "failed", "passed"]
        for meta in runs["runs"]:
            validate("RunMeta", meta)

    drive(project, loop)


# ---------------------------------------------------------------------------
# faster tests: no browser unless said
# ---------------------------------------------------------------------------


def test_set_breakpoints_keeps_other_entries(
    project: Path, protocol_validate: Callable[[str, object], None]
) -> None:
    debugger_file = project / protocol.DEBUGGER_FILE
    debugger_file.write_text(
        json.dumps(
            {
                "version": 1,
                "scenarios": {
                    "smoke-welcome": [{"line": 5, "col": 2}],
                    "_helpers/auth": [{"line": 4, "col": 2}],
                    "shop/add-to-cart": [{"line": 5, "col": 2}],
                },
            }
        ),
        encoding="utf-8",
    )
    written: dict[str, Any] = {}

    async def steps(agent: Agent) -> None:
        answer = await agent.ok(
            "set_breakpoints", scenario="shop/add-to-cart", breakpoints=["10:4", "13", "10:4"]
        )
        assert answer["file"] == "unotest/.debugger.json"
        assert answer["breakpoints"] == [{"line": 10, "col": 4}, {"line": 13, "col": 2}]
        assert "notes" not in answer
        data = json.loads(debugger_file.read_text(encoding="utf-8"))
        assert data == {
            "version": 1,
            "scenarios": {
                "smoke-welcome": [{"line": 5, "col": 2}],
                "_helpers/auth": [{"line": 4, "col": 2}],
                "shop/add-to-cart": [{"line": 10, "col": 4}, {"line": 13, "col": 2}],
            },
        }
        written["first"] = data

        # a helper key, a position that matches no statement (kept, with a note)
        # (6:0 would be the line itself, which lands on its first statement, 6:2)
        answer = await agent.ok("set_breakpoints", scenario="_helpers/auth", breakpoints=["6:1"])
        assert answer["breakpoints"] == [{"line": 6, "col": 1}]
        assert "nearest is 6:2" in answer["notes"][0]
        data = json.loads(debugger_file.read_text(encoding="utf-8"))
        assert data["scenarios"]["_helpers/auth"] == [{"line": 6, "col": 1}]
        assert set(data["scenarios"]) == {"smoke-welcome", "_helpers/auth", "shop/add-to-cart"}

        # an empty list removes only that entry
        await agent.ok("set_breakpoints", scenario="smoke-welcome", breakpoints=[])
        data = json.loads(debugger_file.read_text(encoding="utf-8"))
        assert set(data["scenarios"]) == {"_helpers/auth", "shop/add-to-cart"}
        written["second"] = data

        # bad input changes nothing
        before = debugger_file.read_bytes()
        assert "LINE:COL" in await agent.error(
            "set_breakpoints", scenario="shop/add-to-cart", breakpoints=["ten:4"]
        )
        assert "line 19" in await agent.error(
            "set_breakpoints", scenario="shop/add-to-cart", breakpoints=["19"]
        )
        assert "no scenario" in await agent.error(
            "set_breakpoints", scenario="shop/nope", breakpoints=["1:0"]
        )
        await agent.error("set_breakpoints", scenario="../secrets", breakpoints=["1:0"])
        assert debugger_file.read_bytes() == before
        # written atomically: no temporary file left next to it
        assert sorted(p.name for p in debugger_file.parent.iterdir() if p.is_file()) == [
            ".debugger.json"
        ]

    drive(project, steps, timeout=60)
    protocol_validate("BreakpointsFile", written["first"])
    protocol_validate("BreakpointsFile", written["second"])


def test_check_reports_every_error_with_its_position(project: Path) -> None:
    async def steps(agent: Agent) -> None:
        answer = await agent.ok("check", source=DRAFT_WITH_ERRORS)
        assert answer["ok"] is False
        placed = [(e["line"], e["col"]) for e in answer["errors"]]
        assert placed == [(6, 2), (7, 2), (8, 2)], answer
        for error in answer["errors"]:
            assert error["file"] == "<source>" and error["message"]
        assert "clck" in answer["errors"][0]["message"]
        assert "expect_text" in answer["errors"][1]["message"]
        assert "no_such_helper" in answer["errors"][2]["message"]

        # a syntax error: where it is
        broken = DRAFT_WITH_ERRORS.replace('goto("/")', 'goto("/"')
        answer = await agent.ok("check", source=broken)
        assert answer["ok"] is False
        assert len(answer["errors"]) == 1
        assert answer["errors"][0]["line"] in (5, 6)
        assert isinstance(answer["errors"][0]["col"], int)

        # a draft helper may call the project's helpers; the project itself is clean
        ok = "// id-ok\n// ok\n// #000000\nfunction test_ok() {\n  sign_in('a', 'b')\n}\n"
        assert await agent.ok("check", source=ok) == {"ok": True, "errors": []}
        assert await agent.ok("check") == {"ok": True, "errors": []}

        # a file broken on disk (its header too) is still readable and checkable by name
        path = agent.project / "unotest/e2e/shop/add-to-cart.test.js"
        path.write_text("// no header\nfunction test_x( {\n", encoding="utf-8")
        read = await agent.ok("read_scenario", name="shop/add-to-cart")
        assert source_line(read, 2) == "function test_x( {"
        answer = await agent.ok("check", name="shop/add-to-cart")
        assert answer["ok"] is False
        assert answer["errors"][0]["file"] == "unotest/e2e/shop/add-to-cart.test.js"
        whole = await agent.ok("check")
        assert whole["ok"] is False

    drive(project, steps, timeout=60)


def test_bad_calls_are_one_clear_sentence_and_the_server_goes_on(project: Path) -> None:
    async def steps(agent: Agent) -> None:
        bad_calls: list[tuple[str, dict[str, Any], str]] = [
            ("read_scenario", {"name": "../../etc/passwd"}, "not a scenario name"),
            ("read_scenario", {"name": "shop/../../../../etc/passwd"}, "not a scenario name"),
            ("read_scenario", {"name": "/etc/passwd"}, "not a scenario name"),
            ("read_scenario", {"name": "_helpers/../../unotest.config"}, "not a scenario name"),
            ("read_scenario", {"name": "shop/missing"}, "no scenario named 'shop/missing'"),
            ("run_scenario", {"name": "/abs"}, "not a scenario name"),
            ("run_scenario", {"name": "../site/index"}, "not a scenario name"),
            ("run_collection", {"name": "../x"}, "no collection"),
            ("get_run", {"run_id": "../x"}, "not a run id"),
            ("get_run", {"run_id": "no-such-run-123"}, "no run 'no-such-run-123'"),
            ("inspect_runtime", {"run_id": "no-such-run-123"}, "no run"),
            ("get_failure", {"run_id": "/etc"}, "not a run id"),
            ("wait_for_run", {"run_id": "no-such-run-123"}, "no run"),
            ("debug", {"run_id": "no-such-run-123", "cmd": "step"}, "no run"),
            ("debug", {"run_id": "whatever", "cmd": "jump"}, "unknown command 'jump'"),
            # Checked before a run starts: "--headed" reached the command line's parser.
            ("run_scenario", {"name": "smoke-welcome", "breakpoints": ["--headed"]}, "'--headed'"),
            ("run_scenario", {"name": "smoke-welcome", "breakpoints": ["0:2"]}, "breakpoint"),
            ("run_collection", {"name": "smoke", "workers": 99}, "from 1 to 64, not 99"),
            ("run_collection", {"name": "smoke", "workers": 0}, "from 1 to 64, not 0"),
        ]
        for tool, arguments, expected in bad_calls:
            message = await agent.error(tool, **arguments)
            assert expected in message, (tool, arguments, message)
            # ...and the server still answers
            listing = await agent.ok("list_scenarios")
            assert listing["scenarios"]

        # arguments of the wrong type are refused by the schema, in one sentence
        said = await agent.error("list_runs", limit="many")
        assert "list_runs: the argument 'limit' input should be a valid integer" in said
        assert "pydantic" not in said
        said = await agent.error("get_run")
        assert "get_run: the argument 'run_id' is required" in said
        # a file's path reads as its name does, as write_file takes it
        by_path = await agent.ok("read_scenario", name="unotest/e2e/smoke-welcome.test.js")
        assert by_path["name"] == "smoke-welcome" and by_path["kind"] == "scenario"
        # a folder's hooks read by the name --break gives them, or by their path
        for name in ("cart/_hooks", "unotest/e2e/cart/_hooks.js"):
            hooks = await agent.ok("read_scenario", name=name)
            assert (hooks["kind"], hooks["path"]) == ("helper", "unotest/e2e/cart/_hooks.js")
            assert "function before_each()" in hooks["source"]
        # a helper that is a symlink out of unotest/e2e/ is not read (nor written)
        outside = agent.project.parent / "outside.js"
        outside.write_text("function secret_helper() {\n  log(1)\n}\n")
        (agent.project / "unotest/e2e/_helpers/linked.js").symlink_to(outside)
        refused = await agent.error("read_scenario", name="_helpers/linked")
        assert "no scenario named '_helpers/linked'" in refused and "secret_helper" not in refused
        assert (await agent.ok("list_runs"))["runs"] == []

    drive(project, steps, timeout=60)


def _fake_run(runs_dir: Path, ref: str, events: list[dict[str, Any]], **files: str) -> Path:
    """A finished run directory written by hand (what a runner leaves behind)."""
    run_id = protocol.make_run_id(ref)
    path = runs_dir / run_id
    path.mkdir(parents=True)
    manifest = {
        "schemaVersion": 1,
        "kind": "scenario",
        "ref": ref,
        "adapter": protocol.ADAPTER_NAME,
        "startedAt": 1_700_000_000_000,
    }
    (path / protocol.RUN_MANIFEST_FILE).write_text(json.dumps(manifest))
    lines = "".join(json.dumps(e) + "\n" for e in events)
    (path / protocol.STEPS_FILE).write_text(lines)
    (path / protocol.HEARTBEAT_FILE).touch()
    (path / protocol.COMMANDS_FILE).touch()
    for name, text in files.items():
        (path / name.replace("_", ".")).write_text(text)
    return path


def _finished_run(steps: int, text: str = "click('x')") -> list[dict[str, Any]]:
    t = 1_700_000_000_000
    events: list[dict[str, Any]] = [{"kind": "run:started", "runId": "x", "scenario": "s", "t": t}]
    for i in range(steps):
        events.append({"kind": "step:started", "line": i + 1, "col": 2, "text": text, "t": t + i})
        events.append({"kind": "step:ok", "durationMs": 1, "t": t + i})
    events.append({"kind": "run:finished", "outcome": "completed", "t": t + steps + 1})
    return events


def test_list_runs_and_get_run_are_bounded(project: Path) -> None:
    runs_dir = project / "unotest" / ".runs"
    for i in range(205):
        _fake_run(runs_dir, f"bulk/{i}", _finished_run(1))
    long_run = _fake_run(runs_dir, "long", _finished_run(3000))
    wide_run = _fake_run(runs_dir, "wide", _finished_run(150, "x" * 3000))
    big_output = "a line of log output\n" * 20_000
    noisy_run = _fake_run(
        runs_dir, "noisy", _finished_run(2), stdout_log=big_output + "the last line\n"
    )

    async def steps(agent: Agent) -> None:
        answer = await agent.ok("list_runs")
        assert answer["total"] == 208
        assert len(answer["runs"]) == 20
        assert len((await agent.ok("list_runs", limit=5))["runs"]) == 5
        assert len((await agent.ok("list_runs", limit=100_000))["runs"]) == 200
        # Nothing asked for is a mistake to say, not one run silently.
        assert "limit must be at least 1, not 0" in await agent.error("list_runs", limit=0)
        assert "last must be at least 1, not 0" in await agent.error("get_history", last=0)

        long = await agent.ok("get_run", run_id=long_run.name)
        assert len(long["events"]) <= 200
        assert long["eventsOmitted"] == 6002 - len(long["events"])
        assert long["events"][-1]["kind"] == "run:finished"  # newest last
        assert long["events"][-3]["line"] == 3000
        assert long["run"]["status"] == "passed"

        result = await agent.call("get_run", run_id=wide_run.name)
        assert len(text_of(result)) < 100_000
        wide = json.loads(text_of(result))
        assert wide["events"][-1]["kind"] == "run:finished"
        assert wide["eventsOmitted"] > 0

        noisy = await agent.ok("get_run", run_id=noisy_run.name)
        assert noisy["output"]["stdout"].endswith("the last line\n")
        assert len(noisy["output"]["stdout"]) <= 4_001
        assert noisy["output"]["stderr"] == ""

    drive(project, steps, timeout=60)


def test_secrets_of_the_env_file_never_reach_a_tool_result(project: Path) -> None:
    """Run files that hold a secret in plain (an older runner, a hand edit) are masked."""
    (project / protocol.ENV_FILE).write_text(f"API_TOKEN={SECRET}\n", encoding="utf-8")
    runs_dir = project / "unotest" / ".runs"
    bundle = project / ".unotest" / "failures" / "s__2026__1"
    bundle.mkdir(parents=True)
    (bundle / "error.json").write_text(
        json.dumps(
            {
                "error": f"expected 'x', received '{SECRET}'",
                "errorName": "AssertionError",
                "file": "unotest/e2e/s.test.js",
                "line": 6,
                "col": 2,
                "step": f'fill("Token", "{SECRET}")',
            }
        )
    )
    (bundle / "page.aria.yaml").write_text(f'- textbox "Token": {SECRET}\n')
    (bundle / "console.json").write_text(json.dumps([{"type": "error", "text": SECRET}]))
    (bundle / "network.json").write_text(
        json.dumps([{"method": "GET", "url": f"http://h/?t={SECRET}", "status": 500}])
    )
    events = [
        *_finished_run(1, f'fill("Token", "{SECRET}")')[:-1],
        {"kind": "step:fail", "error": {"message": SECRET, "name": "AssertionError"}, "t": 1},
        {"kind": "failure-bundle:written", "bundlePath": ".unotest/failures/s__2026__1", "t": 2},
        {"kind": "run:finished", "outcome": "failed", "t": 3},
    ]
    run = _fake_run(
        runs_dir,
        "s",
        events,
        stdout_log=f"token is {SECRET}\n",
        stderr_log=f"warning about {SECRET}\n",
    )
    (run / protocol.RUNTIME_FILE).write_text(
        json.dumps(
            {
                "runId": run.name,
                "scenario": "s",
                "testFn": "test_s",
                "state": "failed",
                "current": None,
                "vars": {"token": json.dumps(SECRET)},
                "callStack": [],
                "lastFailure": None,
                "updatedAt": 1,
            }
        )
    )

    async def steps(agent: Agent) -> None:
        texts = []
        for tool in ("get_run", "inspect_runtime", "get_failure", "wait_for_run"):
            result = await agent.call(tool, run_id=run.name)
            assert not result.is_error, text_of(result)
            texts.append(text_of(result))
        texts.append(text_of(await agent.call("list_runs")))
        for text in texts:
            assert SECRET not in text
        joined = "\n".join(texts)
        assert joined.count(MASK) >= 8
        run_answer = json.loads(texts[0])
        assert run_answer["output"]["stdout"] == f"token is {MASK}\n"
        failure = json.loads(texts[2])
        assert failure["error"]["error"] == f"expected 'x', received '{MASK}'"
        assert failure["ariaSnapshot"] == f'- textbox "Token": {MASK}\n'
        assert json.loads(texts[1])["vars"]["token"] == json.dumps(MASK)

    drive(project, steps, timeout=60)


def test_a_logged_secret_stays_masked_through_a_debugged_run(project: Path) -> None:
    (project / protocol.ENV_FILE).write_text(f"API_TOKEN={SECRET}\n", encoding="utf-8")
    scenario = project / "unotest/e2e/secret-echo.test.js"
    scenario.write_text(SECRET_SCENARIO, encoding="utf-8")

    async def steps(agent: Agent) -> None:
        run_id = (await agent.start("run_scenario", name="secret-echo", breakpoints=["7"]))["runId"]
        texts = []
        paused = await agent.wait(run_id, "paused")
        assert paused["runtime"]["current"] == {"line": 7, "col": 2}
        texts.append(json.dumps(paused))
        runtime = await agent.call("inspect_runtime", run_id=run_id)
        texts.append(text_of(runtime))
        assert json.loads(text_of(runtime))["vars"]["token"] == json.dumps(MASK)
        answer = await agent.call("debug", run_id=run_id, cmd="eval", expr="token")
        texts.append(text_of(answer))
        assert MASK in text_of(answer)

        # a failure pause first (debug mode), then the run ends failed
        await agent.ok("debug", run_id=run_id, cmd="continue")
        failed = await agent.wait(run_id, "paused")
        assert failed["state"] == "paused-failure"
        texts.append(json.dumps(failed))
        await agent.ok("debug", run_id=run_id, cmd="continue")
        done = await agent.wait(run_id, "finished")
        assert done["run"]["status"] == "failed"
        texts.append(json.dumps(done))

        for tool in ("get_run", "get_failure", "inspect_runtime"):
            result = await agent.call(tool, run_id=run_id)
            assert not result.is_error, text_of(result)
            texts.append(text_of(result))
        assert json.loads(texts[-3])["output"]["stdout"].count(f"token is {MASK}") == 1
        for text in texts:
            assert SECRET not in text
        run_dir = agent.project / "unotest" / ".runs" / run_id
        for name in ("stdout.log", "stderr.log", "steps.jsonl", "runtime.json"):
            assert SECRET not in (run_dir / name).read_text(encoding="utf-8")

    drive(project, steps, timeout=120)


def test_run_collection_reaches_finished(project: Path) -> None:
    async def steps(agent: Agent) -> None:
        started = await agent.start("run_collection", name="smoke", workers=1)
        run_id = started["runId"]
        assert run_id.startswith("smoke-")
        done = await agent.wait(run_id, "finished", timeout_s=90)
        assert done["run"]["kind"] == "collection"
        assert done["run"]["status"] == "passed"
        run = await agent.ok("get_run", run_id=run_id)
        kinds = [e["kind"] for e in run["events"]]
        assert kinds[0] == "collection-run:started"
        assert kinds[-1] == "collection-run:finished"
        runs = (await agent.ok("list_runs"))["runs"]
        children = [r for r in runs if r.get("parentRunId") == run_id]
        assert [(c["ref"], c["status"]) for c in children] == [("smoke-welcome", "passed")]
        run_dir = agent.project / started["runDir"]
        assert (run_dir / "stdout.log").is_file() and (run_dir / "stderr.log").is_file()
        assert "no collection named 'nope'" in await agent.error("run_collection", name="nope")
        # A collection has no failure or runtime of its own: each says where to look.
        said = await agent.error("get_failure", run_id=run_id)
        assert "has no scenario that did not pass" in said
        assert "is a collection's" in await agent.error("inspect_runtime", run_id=run_id)

        collections = agent.project / "unotest" / "e2e" / "_collections"
        (collections / "broken.yaml").write_text("scenarios: [smoke-welcome, shop/known-bug]\n")
        started = await agent.start("run_collection", name="broken", workers=1)
        await agent.wait(started["runId"], "finished", timeout_s=90)
        failures = await agent.ok("get_failure", run_id=started["runId"])
        [failed] = failures["scenariosNotPassed"]
        assert failed["scenario"] == "shop/known-bug" and failed["outcome"] == "failed"
        failure = await agent.call("get_failure", run_id=failed["runId"])
        assert not failure.is_error and '"location"' in failure.content[0].text

    drive(project, steps, timeout=180)


@pytest.mark.parametrize("name", ["README.md", "docs/mcp.md"])
def test_docs_name_every_advertised_tool(name: str, tmp_path: Path) -> None:
    """docs/mcp.md documents each tool with each of its parameters and defaults."""
    text = (REPO / name).read_text(encoding="utf-8")
    assert '"mcpServers"' in text and '"mcp", "--root"' in text
    if name == "README.md":
        return
    # what the server advertises (the loop test checks the same list over stdio)
    tools = anyio.run(build_server(copy_examples(tmp_path)).list_tools)
    assert len(tools) == 15
    for tool in tools:
        heading = re.search(rf"^### `{re.escape(tool.name)}`", text, re.MULTILINE)
        assert heading, f"docs/mcp.md has no section for {tool.name}"
        section = text[heading.end() :].split("\n### ", 1)[0]
        for parameter, schema in tool.input_schema.get("properties", {}).items():
            assert f"`{parameter}`" in section, f"{tool.name}.{parameter} is not documented"
            if "default" in schema:
                default = json.dumps(schema["default"])
                assert default in section, f"{tool.name}.{parameter} default {default}"


# ---------------------------------------------------------------------------
# runs end with the session that started them, unless detached (issue 13)
# ---------------------------------------------------------------------------


def _events_of(run_dir: Path) -> list[dict[str, Any]]:
    path = run_dir / "steps.jsonl"
    lines = path.read_bytes().split(b"\n")[:-1] if path.exists() else []
    return [json.loads(line) for line in lines]


async def _until_finished(run_dir: Path, timeout: float = 30) -> list[dict[str, Any]]:
    with anyio.fail_after(timeout):
        while not any(e["kind"] == "run:finished" for e in _events_of(run_dir)):
            await anyio.sleep(0.1)
    return _events_of(run_dir)


def _parent_of(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rfind(")") + 2 :].split()[1])


def _ended_by(events: list[dict[str, Any]]) -> str:
    """The id of the abort that ended a run, which must have ended ``aborted``."""
    assert events[-1]["kind"] == "run:finished" and events[-1]["outcome"] == "aborted", events
    aborts = [e for e in events if e["kind"] == "command:applied" and e["cmd"] == "abort"]
    assert len(aborts) == 1, aborts
    return str(aborts[0]["id"])


@pytest.mark.skipif(not HAS_PROC, reason="finds leftover processes through /proc")
def test_runs_end_with_the_session_unless_started_detached(project: Path) -> None:
    marker = uuid.uuid4().hex
    started: dict[str, dict[str, Any]] = {}

    async def first_session() -> None:
        async with connect(project, marker) as agent:
            for name, detach in (("owned", False), ("detached", True)):
                started[name] = await agent.start(
                    "run_scenario", name="smoke-welcome", breakpoints=["6"], detach=detach
                )
            for run in started.values():
                await agent.wait(run["runId"], "paused")
        # The session is closed (the server has exited): the owned run ended with it.
        owned = await _until_finished(project / started["owned"]["runDir"])
        assert _ended_by(owned).startswith("mcp-session-closed-"), owned
        detached_dir = project / started["detached"]["runDir"]
        await anyio.sleep(1.0)  # past the server's end and a few of the run's own checks
        detached = _events_of(detached_dir)
        # Still paused: nothing after the pause but the page's image at it.
        last = [e for e in detached if e["kind"] != "page:image"][-1]
        assert last["kind"] == "paused", detached
        assert started["detached"]["pid"] in marked_processes(marker)
        runtime = json.loads((detached_dir / "runtime.json").read_text())
        assert runtime["state"] == "paused-breakpoint"

    async def second_session() -> None:
        async with connect(project, marker) as agent:
            run_id = started["detached"]["runId"]
            await agent.ok("debug", run_id=run_id, cmd="continue")
            done = await agent.wait(run_id, "finished")
            assert done["run"]["status"] == "passed"

    try:
        anyio.run(first_session)
        anyio.run(second_session)
    finally:
        left = wait_for_no_leftovers(marker, 15)
        for run in started.values():
            stop_run(run["pid"], marker)
    assert not left, f"processes left after the test: {left}"


@pytest.mark.skipif(not HAS_PROC, reason="finds the server and leftovers through /proc")
def test_a_server_killed_with_sigkill_takes_its_runs_along(project: Path) -> None:
    marker = uuid.uuid4().hex
    started: dict[str, Any] = {}

    async def session() -> None:
        async with connect(project, marker) as agent:
            started.update(
                await agent.start("run_scenario", name="smoke-welcome", breakpoints=["6"])
            )
            await agent.wait(started["runId"], "paused")
            server = _parent_of(started["pid"])
            assert server in marked_processes(marker) and server != os.getpid()
            os.kill(server, signal.SIGKILL)  # no shutdown code of the server runs
            events = await _until_finished(project / started["runDir"])
            assert _ended_by(events) == "unotest-owner-gone", events

    try:
        anyio.run(session)
        stderr = (project / started["runDir"] / "stderr.log").read_text()
        assert "the MCP session that started this run has closed: aborting it" in stderr
    finally:
        left = wait_for_no_leftovers(marker, 15)
        if "pid" in started:
            stop_run(started["pid"], marker)
    assert not left, f"processes left after the test: {left}"


def test_a_run_that_finished_is_not_aborted_when_the_session_closes(project: Path) -> None:
    """Its process may outlive its run:finished a moment (writing its reports, waiting
    for the webServer's other users): the session's close named it among the runs it
    aborted and appended an abort to its commands.jsonl."""
    from unotest.mcp.run_tools import OwnedRun, RunTools
    from unotest.mcp.state import ToolState

    tools = RunTools(ToolState(project))
    run_dir = project / "unotest" / ".runs" / "smoke-welcome-finished-000001"
    run_dir.mkdir(parents=True)
    manifest = {"schemaVersion": 1, "kind": "scenario", "ref": "smoke-welcome",
                "adapter": "@unotest/web", "startedAt": 1, "pid": os.getpid()}  # fmt: skip
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    (run_dir / "steps.jsonl").write_text(
        '{"kind":"run:started","runId":"x","scenario":"smoke-welcome","t":1}\n'
        '{"kind":"run:finished","outcome":"failed","t":2}\n'
    )
    lingering = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        tools.owned.append(OwnedRun(lingering, run_dir, "scenario"))
        assert tools.end_owned_runs() == []
        assert not (run_dir / "commands.jsonl").exists()
    finally:
        lingering.kill()
        lingering.wait()
