"""The run index (``runner/store/run_index.py``) and the listing through it
(``runner.store.run_list.RunLister``): a cache that is never trusted over the directories.

Real writers (``RunDirectory``, ``end_abandoned_run``, ``mark_attempt``) and run
directories written by hand (``fake_runs``); every answer is compared with what the
directories alone say (``run_meta`` of each). Whether a directory was read is seen by
counting ``read_manifest`` calls.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from fake_runs import fake_run
from sites import write_project

from runner import events
from runner.project.index import Project
from runner.protocol import RunOutcome
from runner.store import runs as runs_module
from runner.store.prune import prune_runs
from runner.store.retries import mark_attempt
from runner.store.run_index import RunIndex, index_path, run_time
from runner.store.run_list import RunLister, RunQuery
from runner.store.rundir import RunDirectory, end_abandoned_run
from runner.store.runs import run_meta

NOW = time.time_ns() // 1_000_000
HOUR = 3_600_000


def fresh(runs_dir: Path) -> RunLister:
    """What one CLI command has: a lister and an index that have read nothing yet."""
    return RunLister(runs_dir, RunIndex(index_path(runs_dir)))


def every_page(lister: RunLister, query: RunQuery) -> list[str]:
    """The run ids of every page of ``query``, asked as a client pages through them."""
    ids: list[str] = []
    while True:
        page = lister.page(query)
        ids += [m["runId"] for m in page.runs]
        if not page.more:
            return ids
        assert page.next_before == ids[-1]
        query = RunQuery(query.limit, page.next_before, query.ref, query.status, query.parent)


def by_directories(runs_dir: Path) -> list[dict[str, object]]:
    """Every run as its directory says, newest first: by the time in its id, then its
    random suffix (``make_run_id``'s ``<name>-<time>-<suffix>``)."""
    metas = [run_meta(p) for p in runs_dir.iterdir()]
    found = [dict(m) for m in metas if m is not None]
    assert all(run_time(str(m["runId"])) for m in found)
    return sorted(found, key=lambda m: (str(m["runId"])[-15:], str(m["runId"])), reverse=True)


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The run directories whose manifest a listing reads."""
    seen: list[str] = []
    real = runs_module.read_manifest

    def counting(run_dir: Path) -> object:
        seen.append(run_dir.name)
        return real(run_dir)

    monkeypatch.setattr(runs_module, "read_manifest", counting)
    return seen


def real_run(runs_dir: Path, ref: str, outcome: str | None, **create: object) -> RunDirectory:
    run = RunDirectory.create(runs_dir, "scenario", ref, **create)  # type: ignore[arg-type]
    run.append(events.run_started(run.run_id, ref))
    if outcome is not None:
        run.append(events.run_finished(outcome))  # type: ignore[arg-type]
    run.close()
    return run


def test_the_index_answers_as_the_directories_and_a_missing_one_is_rebuilt(
    tmp_path: Path, reads: list[str]
) -> None:
    runs_dir = tmp_path / "unotest" / ".runs"
    first = real_run(runs_dir, "shop/cart", "failed")
    retry = real_run(runs_dir, "shop/cart", "completed")
    mark_attempt(retry.path, 2, first.run_id)
    restarted = real_run(runs_dir, "login", "aborted", restart_of=first.run_id)
    collection = RunDirectory.create(runs_dir, "collection", "nightly")
    collection.append(events.collection_run_started(collection.run_id, "nightly", []))
    child = real_run(runs_dir, "login", "completed", parent_run_id=collection.run_id)
    collection.append(events.collection_run_finished("completed"))
    collection.close()
    lines = index_path(runs_dir).read_bytes().splitlines()
    assert len(lines) == 11  # a start and a finish line each, the retry's link
    assert all(json.loads(line)["run"] for line in lines)

    truth = by_directories(runs_dir)
    reads.clear()
    assert fresh(runs_dir).page(RunQuery()).runs == truth
    assert reads == []  # finished and indexed: no directory read
    metas = {m["runId"]: m for m in truth}
    assert metas[retry.run_id]["retryOf"] == first.run_id
    assert metas[restarted.run_id]["restartOf"] == first.run_id
    assert metas[child.run_id]["parentRunId"] == collection.run_id
    children = fresh(runs_dir).page(RunQuery(parent=collection.run_id)).runs
    assert [m["runId"] for m in children] == [child.run_id]

    index_path(runs_dir).unlink()  # deleted: every run is read once, its lines written again
    assert fresh(runs_dir).page(RunQuery()).runs == truth
    assert sorted(reads) == sorted(str(m["runId"]) for m in truth)
    reads.clear()
    assert fresh(runs_dir).page(RunQuery()).runs == truth
    assert reads == []


def test_a_stale_index_never_wins_over_the_directories(tmp_path: Path, reads: list[str]) -> None:
    runs_dir = tmp_path / "unotest" / ".runs"
    kept = [fake_run(runs_dir, "a", NOW - HOUR + n * 1000) for n in range(5)]
    gone = fake_run(runs_dir, "a", NOW - HOUR + 10_000)
    unindexed = fake_run(runs_dir, "b", NOW - HOUR + 20_000, "failed", indexed=False)
    killed = fake_run(runs_dir, "b", NOW - HOUR + 30_000, None)  # a start line, no end
    running = real_run(runs_dir, "c", None)  # its runner (this process) lives
    late = real_run(runs_dir, "c", None)
    ended = json.dumps({"kind": "run:finished", "outcome": "failed", "t": NOW})
    with open(late.path / "steps.jsonl", "a") as steps:  # its end, whose line was lost
        steps.write(ended + "\n")
    for path in (runs_dir / gone).iterdir():
        path.unlink()
    (runs_dir / gone).rmdir()

    lister = fresh(runs_dir)
    listed = lister.page(RunQuery()).runs
    assert listed == by_directories(runs_dir)
    status = {m["runId"]: m["status"] for m in listed}
    assert gone not in status  # its lines are there, its directory is not
    assert status[unindexed] == "failed"
    assert status[killed] == "interrupted"  # read from its directory, as before
    assert status[running.run_id] == "running"
    assert status[late.run_id] == "failed"  # a start line without an end: the directory
    assert [status[k] for k in kept] == ["passed"] * 5
    # The finished runs it read are in the index now; the killed and the running are not.
    reads.clear()
    again = fresh(runs_dir).page(RunQuery())
    assert again.runs == listed
    assert sorted(reads) == sorted([killed, running.run_id])
    # A killed worker's run ended in its place gets its end line too.
    end_abandoned_run(runs_dir / killed)
    assert {m["runId"]: m["status"] for m in fresh(runs_dir).page(RunQuery()).runs}[
        killed
    ] == "aborted"


def test_pages_meet_without_a_gap_or_a_repeat_and_filter_on_the_index(
    tmp_path: Path, reads: list[str]
) -> None:
    runs_dir = tmp_path / "unotest" / ".runs"
    for n in range(230):
        outcome: RunOutcome = "failed" if n % 7 == 0 else "completed"
        fake_run(runs_dir, ["shop/cart", "shop-cart", "login"][n % 3], NOW - HOUR + n * 10, outcome)
    fake_run(runs_dir, "login", NOW - HOUR + 10, "failed")  # the same ms as another
    truth = by_directories(runs_dir)
    lister = fresh(runs_dir)
    reads.clear()
    assert every_page(lister, RunQuery(limit=40)) == [m["runId"] for m in truth]
    # "shop-cart" and "shop/cart" share their ids' first part: the ref decides.
    for ref in ("shop/cart", "shop-cart", "login"):
        want = [m["runId"] for m in truth if m["ref"] == ref]
        assert every_page(fresh(runs_dir), RunQuery(limit=25, ref=ref)) == want
    failed = [m["runId"] for m in truth if m["status"] == "failed"]
    assert every_page(fresh(runs_dir), RunQuery(limit=9, status="failed")) == failed
    both = [m["runId"] for m in truth if m["status"] == "failed" and m["ref"] == "login"]
    assert every_page(lister, RunQuery(limit=3, ref="login", status="failed")) == both
    assert reads == []
    page = fresh(runs_dir).page(RunQuery(limit=20))
    assert page.total == 231 and page.more and len(page.runs) == 20


def test_whole_lines_from_processes_appending_at_once(tmp_path: Path) -> None:
    runs_dir = tmp_path / "unotest" / ".runs"
    writer = textwrap.dedent(
        """
        import sys
        from pathlib import Path
        from runner.store.run_index import note_finished, note_started
        runs, me = Path(sys.argv[1]), sys.argv[2]
        for n in range(300):
            run = f"{me}-{n}"
            note_started(runs, run, kind="scenario", ref="x" * 5000, started_at=n)
            note_finished(runs, run, n + 1, "completed")
        """
    )
    repo = Path(__file__).resolve().parents[2]
    procs = [
        subprocess.Popen([sys.executable, "-c", writer, str(runs_dir), f"w{k}"], cwd=repo)
        for k in range(4)
    ]
    assert [p.wait(120) for p in procs] == [0, 0, 0, 0]
    lines = index_path(runs_dir).read_bytes().split(b"\n")
    assert lines.pop() == b""
    records = [json.loads(line) for line in lines]  # each line whole: every one parses
    assert len(records) == 4 * 300 * 2
    index = RunIndex(index_path(runs_dir))
    index.refresh()
    index.read_all()
    assert len(index.entries) == 1200
    assert all(e.outcome == "completed" and e.ref == "x" * 5000 for e in index.entries.values())


def test_prune_reads_through_the_index_and_compacts_it(tmp_path: Path) -> None:
    project = Project(write_project(tmp_path / "proj", "headless: true\n"))
    runs_dir = project.runs_dir
    ids = [fake_run(runs_dir, "s", NOW - 10 * 24 * HOUR + n * HOUR) for n in range(6)]
    live = real_run(runs_dir, "s", None)
    result = prune_runs(project, None, 2)
    assert sorted(result.removed) == sorted(ids[:5])  # the newest two kept, and the live one
    lines = [json.loads(line) for line in index_path(runs_dir).read_bytes().splitlines()]
    assert {line["run"] for line in lines} == {ids[5], live.run_id}
    assert [m["runId"] for m in fresh(runs_dir).page(RunQuery()).runs] == [live.run_id, ids[5]]


def test_each_refs_newest_run_of_many_read_in_one_pass_as_the_directories_say(
    tmp_path: Path, reads: list[str]
) -> None:
    """A viewer's first ``latest()`` over more than a thousand runs takes every ref from
    one pass over the index's start lines (``RunIndex.start_refs``): the same answer as
    the directories, with refs that share their ids' first part ("shop/cart",
    "shop-cart"), a scenario and a collection of one name, a ref the index writes with
    escapes, runs the index lacks, a killed run and a directory named by hand."""
    runs_dir = tmp_path / "unotest" / ".runs"
    refs = ["shop/cart", "shop-cart", "nightly", "café/ünï"]
    start = NOW - 5 * HOUR
    for n in range(1100):
        fake_run(runs_dir, refs[n % 4], start + n * 1000, "failed" if n % 7 == 0 else "completed")
    fake_run(runs_dir, "nightly", start + 1_101_000, kind="collection")
    lost = fake_run(runs_dir, "shop/cart", start + 1_102_000, indexed=False)  # lines lost
    alone = fake_run(runs_dir, "only-in-its-directory", start + 50_000, indexed=False)
    killed = fake_run(runs_dir, "café/ünï", start + 1_103_000, None)  # no end
    handmade = runs_dir / "copied-from-ci"  # its index lines name it as it was made
    (runs_dir / fake_run(runs_dir, "from-ci", start + 1_104_000)).rename(handmade)

    newest: dict[tuple[object, object], dict[str, object]] = {}
    metas = [dict(m) for m in (run_meta(p) for p in runs_dir.iterdir()) if m is not None]
    for meta in sorted(metas, key=lambda m: (m["startedAt"], m["runId"]), reverse=True):
        newest.setdefault((meta["kind"], meta["ref"]), meta)
    want = sorted(newest.values(), key=lambda m: (m["startedAt"], m["runId"]), reverse=True)

    reads.clear()
    lister = fresh(runs_dir)
    assert [dict(m) for m in lister.latest()] == want
    # Only the runs the index lacks or has not seen end are read from their directories
    # (the hand-named one twice: its place among the names, then its run).
    assert sorted(set(reads)) == sorted([lost, alone, killed, handmade.name])
    assert fresh(runs_dir).latest() == lister.latest()  # the lines it repaired agree
