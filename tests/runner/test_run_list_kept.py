"""The newest names of a listing kept for the next process
(``runner.store.run_list.KeptListing``, ``unotest/.cache/runs-listing.json``): a first
page read from it while the folder is as it was, and never once a run directory was
added or removed since, or when the file is not what a listing writes.

Whether the folder was listed is seen by counting ``os.listdir`` calls of the module;
"settled" (a listing taken well after the folder's last change) is made by setting the
folder's modification time a minute back instead of waiting.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fake_runs import fake_run

from runner.protocol import to_base36
from runner.store import run_list as run_list_module
from runner.store.run_index import RunIndex, index_path
from runner.store.run_list import LISTING_FILE, RunLister, RunQuery

NOW = time.time_ns() // 1_000_000
MINUTE = 60_000


def fresh(runs_dir: Path) -> RunLister:
    """What one CLI command has: a lister and an index that have read nothing yet."""
    return RunLister(runs_dir, RunIndex(index_path(runs_dir)))


def settle(runs_dir: Path) -> None:
    """The folder's last change a minute ago: a listing taken now holds until it changes."""
    back = time.time_ns() - 60 * 1_000_000_000
    os.utime(runs_dir, ns=(back, back))


def first_page(runs_dir: Path, limit: int) -> list[str]:
    return [str(m["runId"]) for m in fresh(runs_dir).page(RunQuery(limit=limit)).runs]


@pytest.fixture
def listings(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The folders listed (``os.listdir`` is what the module lists with)."""
    seen: list[str] = []
    real = os.listdir

    def counting(path: str | Path) -> list[str]:
        seen.append(str(path))
        return real(path)

    monkeypatch.setattr(os, "listdir", counting)
    return seen


@pytest.fixture
def runs_dir(tmp_path: Path) -> Path:
    runs = tmp_path / "unotest" / ".runs"
    for n in range(30):
        fake_run(runs, f"area{n % 3}/flow", NOW - MINUTE + n * 100)
    return runs


def newest(runs_dir: Path, count: int) -> list[str]:
    """The newest ``count`` run ids as the directories say (ids sort by their time)."""
    with os.scandir(runs_dir) as entries:  # not os.listdir: the listings counted
        names = sorted((e.name for e in entries), key=lambda n: (n[-15:], n), reverse=True)
    return names[:count]


def test_a_settled_folder_is_listed_once_for_every_process_after(
    runs_dir: Path, listings: list[str]
) -> None:
    settle(runs_dir)
    assert first_page(runs_dir, 5) == newest(runs_dir, 5)
    assert len(listings) == 1
    kept = json.loads((runs_dir.parent / ".cache" / LISTING_FILE).read_text())
    assert kept["total"] == 30
    assert [name for _key, name in kept["newest"]] == newest(runs_dir, 30)

    listings.clear()
    page = fresh(runs_dir).page(RunQuery(limit=5))
    assert [m["runId"] for m in page.runs] == newest(runs_dir, 5)
    assert (page.more, page.total) == (True, 30)
    assert listings == []  # read from the kept listing
    assert first_page(runs_dir, 30) == newest(runs_dir, 30)
    assert listings == []


def test_a_run_added_or_removed_since_is_never_missed(runs_dir: Path, listings: list[str]) -> None:
    settle(runs_dir)
    first_page(runs_dir, 5)
    added = fake_run(runs_dir, "late", NOW + 1000)  # sets the folder's time to now
    listings.clear()
    assert first_page(runs_dir, 5)[0] == added
    assert len(listings) == 1  # listed again: the folder changed since

    settle(runs_dir)
    first_page(runs_dir, 5)  # kept again, with the added run
    shutil.rmtree(runs_dir / added)
    listings.clear()
    page = fresh(runs_dir).page(RunQuery(limit=5))
    assert added not in [m["runId"] for m in page.runs]
    assert page.total == 30
    assert len(listings) == 1


def test_a_listing_taken_just_after_a_change_is_not_kept(
    runs_dir: Path, listings: list[str]
) -> None:
    # Made just now: another run made in the same tick of the file system's clock would
    # leave the folder's time as it is, so this listing could miss it.
    first_page(runs_dir, 5)
    assert not (runs_dir.parent / ".cache" / LISTING_FILE).exists()
    first_page(runs_dir, 5)
    assert len(listings) == 2


def test_a_page_larger_than_what_is_kept_lists_the_folder(
    runs_dir: Path, listings: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run_list_module, "_KEPT_NAMES", 10)
    settle(runs_dir)
    first_page(runs_dir, 3)
    listings.clear()
    assert first_page(runs_dir, 9) == newest(runs_dir, 9)
    assert listings == []
    assert first_page(runs_dir, 12) == newest(runs_dir, 12)  # 13 asked: more than kept
    assert len(listings) == 1


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda kept: "{not json", id="not JSON"),
        pytest.param(lambda kept: json.dumps([kept]), id="not an object"),
        pytest.param(lambda kept: json.dumps({**kept, "version": 2}), id="another version"),
        pytest.param(
            lambda kept: json.dumps({**kept, "newest": [["0", "../../elsewhere"]]}),
            id="a name with a slash",
        ),
        pytest.param(
            lambda kept: json.dumps({**kept, "newest": [["0", ".hidden"]]}), id="a dot name"
        ),
        pytest.param(lambda kept: json.dumps({**kept, "total": 1}), id="fewer than it holds"),
        pytest.param(
            lambda kept: json.dumps({**kept, "listedAt": kept["folder"][2]}),
            id="taken as the folder changed",
        ),
        pytest.param(lambda kept: json.dumps({**kept, "folder": [0, 0, 0, 0]}), id="another"),
    ],
)
def test_a_kept_listing_that_is_not_what_a_listing_writes_is_ignored(
    runs_dir: Path, listings: list[str], damage: object
) -> None:
    settle(runs_dir)
    first_page(runs_dir, 5)
    path = runs_dir.parent / ".cache" / LISTING_FILE
    kept = json.loads(path.read_text())
    path.write_text(damage(kept))  # type: ignore[operator]
    listings.clear()
    assert first_page(runs_dir, 5) == newest(runs_dir, 5)
    assert len(listings) == 1


def test_a_listing_that_cannot_be_kept_costs_only_the_listing(
    runs_dir: Path, listings: list[str]
) -> None:
    # Where the file would go, a folder: the write fails as on a read-only disk (a test
    # run as root writes into a read-only folder anyway).
    (runs_dir.parent / ".cache" / LISTING_FILE).mkdir(parents=True)
    settle(runs_dir)
    assert first_page(runs_dir, 5) == newest(runs_dir, 5)
    assert first_page(runs_dir, 5) == newest(runs_dir, 5)
    assert len(listings) == 2
    assert sorted(p.name for p in (runs_dir.parent / ".cache").iterdir()) == [
        LISTING_FILE,
        "runs.jsonl",
    ]


def test_unotest_runs_shows_what_the_directories_hold(runs_dir: Path) -> None:
    """As a user runs it: twice on a settled folder, then after removing a run by hand."""
    project = runs_dir.parent.parent

    def runs(*args: str) -> list[str]:
        proc = subprocess.run(
            [sys.executable, "-m", "unotest", "runs", "--json", *args],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        return [m["runId"] for m in json.loads(proc.stdout)]

    (project / "unotest" / "e2e").mkdir()
    settle(runs_dir)
    assert runs("--limit", "4") == newest(runs_dir, 4)
    assert (runs_dir.parent / ".cache" / LISTING_FILE).exists()
    assert runs("--limit", "4") == newest(runs_dir, 4)
    gone = newest(runs_dir, 1)[0]
    shutil.rmtree(runs_dir / gone)
    assert runs("--limit", "4") == newest(runs_dir, 4)
    assert gone not in runs("--limit", "4")


def test_a_kept_page_whose_newest_directories_hold_no_run_goes_on_to_older_runs(
    runs_dir: Path, listings: list[str]
) -> None:
    # Two run directories made and never written (their runners killed before the
    # manifest): the newest names, which a page skips. A page read from the kept listing
    # holds as many runs, and says there are more, as the page that lists the folder.
    for n in range(2):
        os.mkdir(runs_dir / f"flow-{n}-{to_base36(NOW + 5000 + n)}-00000{n}")
    settle(runs_dir)
    listed = fresh(runs_dir).page(RunQuery(limit=5))
    assert [m["runId"] for m in listed.runs] == newest(runs_dir, 7)[2:]
    assert (listed.more, listed.total) == (True, 32)
    listings.clear()
    page = fresh(runs_dir).page(RunQuery(limit=5))
    assert [m["runId"] for m in page.runs] == [m["runId"] for m in listed.runs]
    assert (page.more, page.total) == (True, 32)
    assert len(listings) == 1  # the kept names ran out before the page was full
