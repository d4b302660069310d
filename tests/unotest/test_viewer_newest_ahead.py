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
from unotest.viewer import routes_runs, server
from unotest.viewer.context import ViewerContext


def _project(root: Path) -> Path:
    (root / "unotest" / "e2e").mkdir(parents=True)
    runs_dir = root / "unotest" / ".runs"
    start = time.time_ns() // 1_000_000 - 60_000
    for n in range(12):
        fake_run(runs_dir, ("shop/cart", "login", "search")[n % 3], start + n * 1000)
    return root


def _joined(name: str) -> None:
    """Wait for the thread ``name`` if it still runs (what it did, the tests check)."""
    for thread in [t for t in threading.enumerate() if t.name == name]:
        thread.join(30)
        assert not thread.is_alive()


class _ListeningServer:
    """What ``server._serve`` asks of uvicorn's server: it has started, and serves until
    the test's loop ends."""

    started = True

    async def serve(self, sockets: list[object]) -> None:
        await asyncio.sleep(0)


def _serving(ctx: ViewerContext) -> None:
    """The server listens and its URL is out: ``server._serve`` runs what the route
    modules left for then."""
    ready: list[bool] = []
    asyncio.run(server._serve(ctx, _ListeningServer(), None, lambda: ready.append(True)))  # type: ignore[arg-type]
    assert ready == [True]


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
    # nothing before the server listens: the start is not slowed
    assert "viewer-newest" not in {thread.name for thread in threading.enumerate()}
    _serving(ctx)
    _joined("viewer-newest")
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
    asked: list[bool] = []

    def broken(self: RunLister) -> object:
        asked.append(True)
        raise OSError("disk gone")

    escaped: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: escaped.append(args.exc_value))
    ctx = ViewerContext(_project(tmp_path), token="t" * 32)
    monkeypatch.setattr(RunLister, "latest", broken)
    asyncio.run(routes_runs.startup(ctx))
    _serving(ctx)
    _joined("viewer-newest")
    assert asked == [True]
    assert escaped == []  # nothing printed at the viewer's start: the request will say it
