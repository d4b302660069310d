"""Runs a page at a time: ``GET /api/runs?limit=&before=&scenario=&status=`` on a real
``unotest view`` (its ``Link: <…>; rel="next"`` followed by a real HTTP client), its
``latest=1``, and ``unotest runs --limit N`` as a user runs it, on one project of 250
run directories written by hand (``fake_runs``) with their run index lines.

The answers are compared with what the directories alone say (``run_meta`` of each,
newest first by the time in the id, then its random suffix)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_runs import fake_run
from sites import unotest_env
from viewer_page import Viewer, page_project, running_viewer

from runner.protocol import RunOutcome, make_run_id
from runner.store.run_index import run_time
from runner.store.runs import run_meta

REFS = ["shop/cart", "shop-cart", "login"]
COUNT = 250


@pytest.fixture(scope="module")
def viewer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Viewer]:
    root = page_project(tmp_path_factory.mktemp("pages") / "project", "http://127.0.0.1:9")
    runs_dir = root / "unotest" / ".runs"
    start = time.time_ns() // 1_000_000 - 3_600_000
    for n in range(COUNT):
        outcome: RunOutcome = "failed" if n % 6 == 0 else "completed"
        fake_run(runs_dir, REFS[n % 3], start + n * 1000, outcome)
    with running_viewer(root) as running:
        yield running


def truth(viewer: Viewer) -> list[dict[str, Any]]:
    runs_dir = viewer.root / "unotest" / ".runs"
    metas = [dict(m) for m in (run_meta(p) for p in runs_dir.iterdir()) if m is not None]
    return sorted(metas, key=lambda m: (m["runId"][-15:], m["runId"]), reverse=True)


def pages(viewer: Viewer, first: str) -> list[list[dict[str, Any]]]:
    """Every page from ``first`` on, following each answer's ``Link`` header."""
    found: list[list[dict[str, Any]]] = []
    path: str | None = first
    headers = {"Authorization": f"Bearer {viewer.token}"}
    while path is not None:
        answer = viewer.client.get(viewer.base + path, headers=headers)
        assert answer.status_code == 200, answer.text
        found.append(answer.json())
        link = answer.headers.get("link")
        if link is None:
            path = None
        else:
            assert link.endswith('>; rel="next"') and link.startswith("</api/runs?")
            path = link[1 : link.index(">")]
            assert f"before={found[-1][-1]['runId']}" in path
    return found


def test_pages_of_runs_follow_their_links_newest_first(viewer: Viewer) -> None:
    every = truth(viewer)
    default = pages(viewer, "/api/runs")
    assert [len(p) for p in default] == [100, 100, 50]
    assert [m for page in default for m in page] == every
    ids = [m["runId"] for m in every]
    sized = pages(viewer, "/api/runs?limit=60")
    assert [m["runId"] for page in sized for m in page] == ids
    for ref in REFS:  # "shop/cart" and "shop-cart" share their ids' first part
        want = [m["runId"] for m in every if m["ref"] == ref and m["status"] == "failed"]
        query = f"/api/runs?limit=7&status=failed&scenario={ref.replace('/', '%2F')}"
        assert [m["runId"] for page in pages(viewer, query) for m in page] == want
    older = viewer.api("GET", f"/api/runs?limit=3&before={ids[10]}")
    assert [m["runId"] for m in older] == ids[11:14]


def test_latest_and_refused_parameters(viewer: Viewer) -> None:
    every = truth(viewer)
    newest: dict[str, dict[str, Any]] = {}
    for meta in every:
        newest.setdefault(meta["ref"], meta)
    assert viewer.api("GET", "/api/runs?latest=1") == list(newest.values())
    refused = viewer.api("GET", "/api/runs?limit=0")
    assert refused == {"error": "limit must be a whole number from 1"}
    said = viewer.api("GET", "/api/runs?status=done")
    assert said == {"error": "status must be one of running, passed, failed, aborted, interrupted"}
    assert "is not a run id" in viewer.api("GET", "/api/runs?before=a%2Fb")["error"]
    assert viewer.api("GET", "/api/runs?scenario=nobody") == []


def test_unotest_runs_limit_reads_the_newest(viewer: Viewer) -> None:
    ids = [m["runId"] for m in truth(viewer)]

    def runs(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "unotest", "runs", *args],
            cwd=viewer.root,
            env=unotest_env(),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    listed = runs("--json", "--limit", "5")
    assert listed.returncode == 0, listed.stderr
    assert [m["runId"] for m in json.loads(listed.stdout)] == ids[:5]
    table = runs("--limit", "3")
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    assert [line.split()[0] for line in lines[1:4]] == ids[:3]
    assert lines[4] == f"(3 of {COUNT} runs shown)"


def _get(viewer: Viewer, path: str) -> tuple[int, Any]:
    answer = viewer.client.get(
        viewer.base + path, headers={"Authorization": f"Bearer {viewer.token}"}
    )
    return answer.status_code, answer.json()


def test_before_a_run_that_is_gone(viewer: Viewer, tmp_path: Path) -> None:
    """A ``before`` whose run is gone is placed by the time in its id; a name that has
    none is refused, unless its directory is there (placed by its manifest)."""
    ids = [m["runId"] for m in truth(viewer)]
    made = run_time(ids[21])
    assert made is not None
    removed = make_run_id("login", now_ms=made + 500, rand_hex="abcdef")
    status, older = _get(viewer, f"/api/runs?limit=3&before={removed}")
    assert status == 200 and [m["runId"] for m in older] == ids[21:24]

    status, said = _get(viewer, "/api/runs?limit=3&before=removed-by-hand")
    assert status == 400
    assert said == {
        "error": "before='removed-by-hand' names no run here, nor a time to page from "
        "(a run id ends in -<time>-<6 hex digits>)"
    }

    runs_dir = viewer.root / "unotest" / ".runs"
    odd = runs_dir / "kept-by-hand"  # a run directory make_run_id did not name
    written = fake_run(tmp_path, "login", made + 500, indexed=False)
    shutil.move(tmp_path / written, odd)
    try:
        status, placed = _get(viewer, "/api/runs?limit=3&before=kept-by-hand")
        assert status == 200 and [m["runId"] for m in placed] == ids[21:24]
    finally:
        shutil.rmtree(odd)


def test_limits_that_are_no_whole_number_from_1_are_refused_and_a_huge_one_is_1000(
    viewer: Viewer,
) -> None:
    for limit in ("0", "-1", "abc", "1.5", "%2B5", "%D9%A3", "000"):
        status, said = _get(viewer, f"/api/runs?limit={limit}")
        assert (status, said) == (400, {"error": "limit must be a whole number from 1"}), limit
    status, every = _get(viewer, f"/api/runs?limit={'9' * 5000}")  # past int()'s 4,300 digits
    assert status == 200 and len(every) == COUNT
    status, some = _get(viewer, "/api/runs?limit=0002")
    assert status == 200 and len(some) == 2
