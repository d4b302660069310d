"""MCP ``get_run``'s links between runs (``--retries`` attempts) and ``get_history``.

The runs are real: ``unotest e2e NAME --retries 1`` in real Chromium against the test's
own server (tests/flaky_site.py: one scenario fails its first attempt and passes the
second, one always fails), leaving linked run directories and history files. Then the
real server (``unotest mcp``) through the SDK's stdio client reads them, as in
test_mcp.py (whose client and leftover checks this module shares). The restart links
of ``get_run`` are covered in test_mcp_edit.py, on a real restart.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from flaky_site import FlakyProject, FlakySite, find_chromium, served
from protocol_schemas import validate
from test_mcp import Agent, drive

NO_LINKS = {"restartOf": None, "restartedAs": None, "latestRestart": None}


@pytest.fixture
def site() -> Iterator[FlakySite]:
    yield from served()


@pytest.fixture
def flaky(tmp_path: Path, site: FlakySite) -> FlakyProject:
    project = FlakyProject(tmp_path / "proj", site, find_chromium())
    project.scenario("flaky", "flaky", "1")  # fails its first request only
    project.scenario("broken", "broken", "always")
    project.scenario("fresh", "fresh", "0")  # never run: no history
    return project


def test_get_run_attempt_chain_and_get_history(flaky: FlakyProject) -> None:
    assert flaky.cli("e2e", "flaky", "--retries", "1").code == 0  # flaky: passed
    assert flaky.cli("e2e", "broken", "--retries", "1").code == 1

    async def flow(agent: Agent) -> None:
        runs = (await agent.ok("list_runs"))["runs"]
        for meta in runs:
            validate("RunMeta", meta)
        by_ref: dict[str, list[dict[str, object]]] = {}
        for meta in sorted(runs, key=lambda m: m["startedAt"]):
            by_ref.setdefault(meta["ref"], []).append(meta)
        assert sorted(by_ref) == ["broken", "flaky"]
        for ref, status, outcomes in (
            ("flaky", "flaky", ["failed", "passed"]),
            ("broken", "failed", ["failed", "failed"]),
        ):
            first, second = (str(m["runId"]) for m in by_ref[ref])
            assert [m["status"] for m in by_ref[ref]] == outcomes
            assert "attempt" not in by_ref[ref][0] and "retryOf" not in by_ref[ref][0]
            assert (by_ref[ref][1]["attempt"], by_ref[ref][1]["retryOf"]) == (2, first)
            for run_id in (first, second):
                answer = await agent.ok("get_run", run_id=run_id)
                assert answer["attemptChain"] == {"attempts": [first, second], "status": status}
                assert {key: answer[key] for key in NO_LINKS} == NO_LINKS
                validate("RunMeta", answer["run"])

        every = await agent.ok("get_history")
        rows = {row["scenario"]: row for row in every["scenarios"]}
        assert list(rows) == ["broken", "flaky"]  # by name; "fresh" never ran
        assert (rows["flaky"]["strip"], rows["flaky"]["flaky"], rows["flaky"]["passRate"]) == (
            "~",
            1,
            1.0,
        )
        assert rows["flaky"]["statuses"] == ["flaky"] and rows["flaky"]["runs"] == 1
        assert (rows["broken"]["strip"], rows["broken"]["failed"]) == ("✗", 1)
        assert rows["broken"]["passRate"] == 0.0 and rows["broken"]["medianMs"] > 0
        one = await agent.ok("get_history", scenario="broken", last=1)
        assert one == {"scenarios": [rows["broken"]]}
        assert await agent.ok("get_history", scenario="fresh") == {"scenarios": []}
        message = await agent.error("get_history", scenario="freshh")
        assert "no scenario named 'freshh'" in message and "fresh" in message
        assert "not a scenario name" in await agent.error("get_history", scenario="../x")

    drive(flaky.root, flow, timeout=60)
