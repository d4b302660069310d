"""Edit and continue through MCP only: ``write_file``, ``debug reload``, ``debug restart``.

The real server (``unotest mcp``) through the SDK's stdio client, on a copy of
``examples/`` (its webServer on a free port), as in test_mcp.py, whose client and
leftover checks this module shares: after each test no process its runs started may
be left (runner, Chromium, web server).

Covered: ``write_file`` (a scenario by name, a helper by ``_helpers/<name>``, a path;
the new problems placed at file:line:col and the statement starts; one clear sentence
for a path out of ``unotest/e2e/``, a collection or a name of no source kind, the
file left as it was); ``debug restart`` of a paused run (the answer's ``newRunId``,
``restartOf``, the breakpoint kept, the webServer and browser kept, ``get_run``'s
``restartOf``/``restartedAs``/``latestRestart`` both ways and over two restarts, the new
run driven to the end and ended with the session); the whole fix flow: a debug run
paused on its failure, the fixed file written with ``write_file``, ``debug reload``,
``debug retry``, the run completing in the same run directory with one ``step:fail``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from test_mcp import Agent, drive, project  # noqa: F401  (project: the fixture)

from runner import protocol

KNOWN_BUG = "unotest/e2e/shop/known-bug.test.js"
WRONG_TOTAL = '"Total: 22.5 EUR"'
RIGHT_TOTAL = '"Total: 25 EUR"'  # the discount code is not applied: Teapot alone
HELPER = "unotest/e2e/_helpers/cart.js"


def events_of(root: Path, run_id: str) -> list[dict[str, Any]]:
    lines = (root / protocol.UNOTEST_DIR / ".runs" / run_id / "steps.jsonl").read_text()
    return [json.loads(line) for line in lines.splitlines()]


def closed_steps(events: list[dict[str, Any]]) -> list[tuple[str, int, str]]:
    """(``step:ok``/``step:fail``, line, text) of each step as it closed: each closes the
    innermost ``step:started`` still open."""
    open_steps: list[dict[str, Any]] = []
    closed = []
    for event in events:
        if event["kind"] == "step:started":
            open_steps.append(event)
        elif event["kind"] in ("step:ok", "step:fail"):
            started = open_steps.pop()
            closed.append((event["kind"], started["line"], started["text"]))
    return closed


def test_write_file_validates_like_the_viewer(project: Path) -> None:  # noqa: F811
    async def flow(agent: Agent) -> None:
        before = sorted(p.name for p in project.iterdir())
        original = (project / KNOWN_BUG).read_text()
        broken = original.replace('click("Apply")', 'click("Apply"')
        written = await agent.ok("write_file", file="shop/known-bug", text=broken)
        assert written["path"] == KNOWN_BUG and written["ok"] is False
        assert [(p["file"], p["line"]) for p in written["problems"]] == [(KNOWN_BUG, 9)]
        assert (project / KNOWN_BUG).read_text() == broken  # saved, as the viewer saves

        written = await agent.ok("write_file", file=KNOWN_BUG, text=original)
        assert written == {
            "path": KNOWN_BUG,
            "ok": True,
            "problems": [],
            "statements": [{"line": n, "col": 2} for n in (5, 6, 7, 8, 9)],
            "version": hashlib.sha256(original.encode()).hexdigest()[:16],
        }

        helper = "function total_of(cart) {\n  return cart.length * no_such_thing\n}\n"
        written = await agent.ok("write_file", file="_helpers/cart", text=helper)
        assert written["path"] == HELPER and written["ok"] is False
        (problem,) = written["problems"]
        assert (problem["line"], problem["col"]) == (2, 23), problem
        assert "no_such_thing" in problem["message"]
        assert written["statements"] == [{"line": 2, "col": 2}]

        for bad in (
            "../outside.test.js",
            "unotest/e2e/../../evil.test.js",
            "/etc/passwd",
            "unotest/e2e/_collections/nightly.yaml",
            "unotest/e2e/notes.txt",
            "unotest/.debugger.json",
            "unotest/e2e/.hidden.test.js",
            "shop/../../../outside",
            # Names of other files: they became unotest/e2e/<name>.test.js scenarios.
            "unotest.config.yaml",
            "package.json",
            "shop/known-bug.js",
        ):
            message = await agent.error("write_file", file=bad, text="x")
            assert bad.split("/")[-1] in message or "path" in message, message
        assert not (project.parent / "outside.test.js").exists()
        assert list((project / "unotest/e2e").glob("*.*.test.js")) == []
        assert not (project / "unotest/e2e/shop/known-bug.js.test.js").exists()
        assert sorted(p.name for p in project.iterdir()) == before
        assert "scenarios:" in (project / "unotest/e2e/_collections/nightly.yaml").read_text()

    drive(project, flow)


def test_restart_through_mcp(project: Path) -> None:  # noqa: F811
    async def flow(agent: Agent) -> None:
        started = await agent.start("run_scenario", name="shop/add-to-cart", breakpoints=["10:4"])
        old_id = started["runId"]
        await agent.wait(old_id, "paused")
        answer = await agent.ok("debug", run_id=old_id, cmd="restart")
        kinds = [a["kind"] for a in answer["answers"]]
        assert kinds == ["command:applied", "command:result"], answer
        new_id = answer["newRunId"]
        assert new_id != old_id and answer["answers"][1]["value"] == new_id
        assert answer["newRunDir"] == f"unotest/.runs/{new_id}"

        old = await agent.wait(old_id, "finished")
        assert old["run"]["status"] == "aborted"
        linked = await agent.ok("get_run", run_id=old_id)  # an agent holding the old id
        assert [linked[k] for k in ("restartOf", "restartedAs", "latestRestart")] == [
            None,
            new_id,
            new_id,
        ]
        linked = await agent.ok("get_run", run_id=new_id)
        assert [linked[k] for k in ("restartOf", "restartedAs", "latestRestart")] == [
            old_id,
            None,
            None,
        ]
        assert linked["run"]["restartOf"] == old_id  # RunMeta has the link too
        assert linked["attemptChain"] == {"attempts": [new_id], "status": None}  # running
        paused = await agent.wait(new_id, "paused")  # the breakpoint was kept
        assert paused["runtime"]["current"] == {"line": 10, "col": 4}
        manifest = json.loads((project / answer["newRunDir"] / "manifest.json").read_text())
        assert manifest["restartOf"] == old_id and manifest["pid"] == started["pid"]
        await agent.ok("debug", run_id=new_id, cmd="clear-bp", line=10, col=4)
        await agent.ok("debug", run_id=new_id, cmd="continue")
        done = await agent.wait(new_id, "finished")
        assert done["run"]["status"] == "passed"

        # A restarted run that still goes ends with the session, as the first one would.
        started = await agent.start("run_scenario", name="shop/add-to-cart", breakpoints=["10:4"])
        await agent.wait(started["runId"], "paused")
        answer = await agent.ok("debug", run_id=started["runId"], cmd="restart")
        middle = answer["newRunId"]
        await agent.wait(middle, "paused")
        answer = await agent.ok("debug", run_id=middle, cmd="restart")  # twice
        await agent.wait(answer["newRunId"], "paused")
        linked = await agent.ok("get_run", run_id=started["runId"])
        assert (linked["restartedAs"], linked["latestRestart"]) == (middle, answer["newRunId"])
        going.append(answer["newRunId"])

    going: list[str] = []
    drive(project, flow)
    events = events_of(project, going[0])
    aborts = [e for e in events if e["kind"] == "command:applied" and e["cmd"] == "abort"]
    assert [e["id"][: len("mcp-session-closed-")] for e in aborts] == ["mcp-session-closed-"]
    assert events[-1]["kind"] == "run:finished" and events[-1]["outcome"] == "aborted"


def test_fix_reload_retry_through_mcp_only(project: Path) -> None:  # noqa: F811
    async def flow(agent: Agent) -> None:
        started = await agent.start("run_scenario", name="shop/known-bug", debug=True)
        run_id = started["runId"]
        paused = await agent.wait(run_id, "paused", timeout_s=90)
        assert paused["state"] == "paused-failure"
        assert paused["runtime"]["current"]["line"] == 9
        # What failed, asked at the pause (it answered "has no failure" there).
        failure = await agent.ok("get_failure", run_id=run_id)
        assert failure["bundle"] is None and "paused at this failure" in failure["paused"]
        assert failure["failure"]["line"] == 9 and failure["failure"]["error"]["message"]

        read = await agent.ok("read_scenario", name="shop/known-bug")
        assert WRONG_TOTAL in read["source"]
        fixed = (project / KNOWN_BUG).read_text().replace(WRONG_TOTAL, RIGHT_TOTAL)
        # The version read guards the write: nobody saved the file since.
        written = await agent.ok(
            "write_file", file="shop/known-bug", text=fixed, base_version=read["version"]
        )
        assert written["ok"] is True, written
        assert written["version"] != read["version"]

        reload = await agent.ok("debug", run_id=run_id, cmd="reload")
        kinds = [a["kind"] for a in reload["answers"]]
        assert kinds == ["command:applied", "command:result"], reload  # what it did
        assert reload["answers"][1]["ok"] is True and "newRunId" not in reload
        retry = await agent.ok("debug", run_id=run_id, cmd="retry")
        assert [a["kind"] for a in retry["answers"]] == ["command:applied"], retry
        done = await agent.wait(run_id, "finished")
        assert done["run"]["status"] == "passed", done

        events = events_of(project, run_id)
        steps = closed_steps(events)
        assert [(kind, line) for kind, line, _ in steps] == [
            *(("step:ok", line) for line in (5, 6, 7, 8)),
            ("step:fail", 9),
            ("step:ok", 9),  # the edited expectation, retried in the same run
        ], steps
        assert WRONG_TOTAL in steps[4][2] and RIGHT_TOTAL in steps[5][2]
        assert events[-1] == {"kind": "run:finished", "outcome": "completed", "t": events[-1]["t"]}
        runs = sorted(p.name for p in (project / "unotest" / ".runs").iterdir())
        assert runs == [run_id]  # no second run: the fix continued this one

    drive(project, flow)


def test_write_file_with_a_stale_base_version_is_refused(project: Path) -> None:  # noqa: F811
    """``base_version``: the write is refused when the file changed since that version
    (a person saved it in the viewer, an editor); ``null``: only a new file."""

    async def flow(agent: Agent) -> None:
        path = project / KNOWN_BUG
        original = path.read_text()
        first = await agent.ok("write_file", file="shop/known-bug", text=original + "// 1\n")
        theirs = original + "// a person's edit\n"
        path.write_text(theirs)
        message = await agent.error(
            "write_file",
            file="shop/known-bug",
            text=original + "// 2\n",
            base_version=first["version"],
        )
        assert f"{KNOWN_BUG} changed on disk since you opened it" in message, message
        now = hashlib.sha256(theirs.encode()).hexdigest()[:16]
        assert now in message
        assert path.read_text() == theirs
        again = await agent.ok(
            "write_file", file="shop/known-bug", text=theirs + "// 2\n", base_version=now
        )
        assert path.read_text() == theirs + "// 2\n"
        assert again["version"] == hashlib.sha256((theirs + "// 2\n").encode()).hexdigest()[:16]
        message = await agent.error(
            "write_file", file="shop/known-bug", text="// new\n", base_version=None
        )
        assert "exists already" in message, message
        fresh = await agent.ok("write_file", file="shop/fresh", text=original, base_version=None)
        assert fresh["path"] == "unotest/e2e/shop/fresh.test.js"

    drive(project, flow)
