"""The watch daemon's warm pool: real worker processes, real Chromium, a real site.

What the daemon relies on: a worker runs scenario after scenario in its one browser,
reads the project again when told (``reload``), and an ``abort`` naming an order
reaches that order's run only, whether or not the worker has started it yet.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from sites import config_yaml, scenario_source, write_project

from runner.watch.pool import PoolOutcome, WarmPool
from runner.workers import messages

EXPECT = '  goto("/index.html")\n  expect_visible("{}")\n'


@pytest.fixture
def root(tmp_path: Path, static_site: str, chromium_path: str) -> Path:
    (tmp_path / "index.html").write_text("<h1>Welcome</h1>", encoding="utf-8")
    return write_project(
        tmp_path / "proj",
        config_yaml(static_site, chromium=chromium_path),
        {
            "quick": scenario_source("quick", '  goto("/index.html")\n  log("x")\n'),
            "edited": scenario_source("edited", EXPECT.format("Nope")),
        },
    )


def outcome_of(result: PoolOutcome | None) -> str:
    assert result is not None and result.report is not None
    data = result.report.get("result")
    return str(data["outcome"]) if isinstance(data, dict) else "unfinished"


def test_a_warm_worker_reloads_and_aborts_only_the_order_named(root: Path) -> None:
    async def scenario() -> None:
        degraded: list[str] = []
        pool = WarmPool(root, 1, lambda scope, *_: degraded.append(scope))
        await pool.start()
        try:
            (pid,) = pool.pids
            started: list[str] = []
            first = await pool.run("quick", started.append, lambda: True)
            assert outcome_of(first) == "completed" and len(started) == 1

            # A fix saved while the daemon runs: the worker reads it before its next run.
            source = scenario_source("edited", EXPECT.format("Welcome"))
            (root / "unotest/e2e/edited.test.js").write_text(source, encoding="utf-8")
            pool.reload()
            assert outcome_of(await pool.run("edited", started.append, lambda: True)) == "completed"

            # An abort sent in the same breath as the run order: the run never completes,
            # whether the worker had started it (aborted) or not (not run at all).
            running = asyncio.ensure_future(pool.run("quick", started.append, lambda: True))
            await asyncio.sleep(0)
            member = pool.members[0]
            assert member.busy and member.order_id is not None
            pool.abort_running()
            assert outcome_of(await running) in ("aborted", "unfinished")

            # An abort for an order that already ended hits nothing later.
            member.host.send(messages.abort_order("order-1"))
            assert outcome_of(await pool.run("quick", started.append, lambda: True)) == "completed"
            # No longer wanted once a worker is free: not run at all.
            assert await pool.run("quick", started.append, lambda: False) is None
            assert pool.pids == [pid] and degraded == []
        finally:
            await pool.close()
        assert pool.members == {}

    asyncio.run(scenario())
