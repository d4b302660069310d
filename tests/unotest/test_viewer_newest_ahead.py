"""The viewer finds each scenario's newest run ahead, when it starts
(``routes_runs.startup``): at 100,000 runs that first answer takes about a second,
which the tree's badges waited for when the page opened."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest
from fake_runs import fake_run

from runner.store.run_list import RunLister
from unotest.viewer import routes_runs
from unotest.viewer.context import ViewerContext


def _project(root: Path) -> Path:
    (root / "unotest" / "e2e").mkdir(parents=True)
    runs_dir = root / "unotest" / ".runs"
    start = time.time_ns() // 1_000_000 - 60_000
    for n in range(12):
        fake_run(runs_dir, ("shop/cart", "login", "search")[n % 3], start + n * 1000)
    return root


def _wait_for(name: str) -> None:
    for thread in threading.enumerate():
        if thread.name == name:
            thread.join(30)
            assert not thread.is_alive()


def _serving(ctx: ViewerContext) -> None:
    """What ``server.serve`` does once the server listens and its URL is out."""
    for later in ctx.when_serving:
        later()


def test_startup_finds_the_newest_runs_before_any_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    resolved: list[str] = []
    own_ref = RunLister._ref

    def counted(self: RunLister, name: str, *args: object, **kwargs: object) -> object:
        resolved.append(name)
        return own_ref(self, name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(RunLister, "_ref", counted)
    ctx = ViewerContext(_project(tmp_path), token="t" * 32)
    asyncio.run(routes_runs.startup(ctx))
    assert resolved == []  # nothing before the server listens: the start is not slowed
    _serving(ctx)
    _wait_for("viewer-newest")
    assert len(resolved) == 12  # every run's ref read ahead, once

    latest = ctx.newest_runs.latest()  # what GET /api/runs?latest=1 answers
    assert len(resolved) == 12  # the request read none again
    assert sorted(m["ref"] for m in latest) == ["login", "search", "shop/cart"]
    assert [m["runId"] for m in latest] == sorted(
        (m["runId"] for m in latest), key=lambda r: r[-15:], reverse=True
    )


def test_a_failing_lookup_ahead_leaves_the_request_to_say_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: RunLister) -> object:
        raise OSError("disk gone")

    escaped: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: escaped.append(args.exc_value))
    ctx = ViewerContext(_project(tmp_path), token="t" * 32)
    monkeypatch.setattr(RunLister, "latest", broken)
    asyncio.run(routes_runs.startup(ctx))
    _serving(ctx)
    _wait_for("viewer-newest")
    assert escaped == []  # nothing printed at the viewer's start: the request will say it
