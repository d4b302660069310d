"""``unotest history`` and ``unotest runs --prune`` after real runs in real Chromium.

Several ``e2e`` and ``collection`` runs against the test's own server (one scenario
fails once, one is flaky under a retry) leave history files; ``history`` shows each
scenario's strip, pass rate, flaky count and median; pruning removes runs (and their
failure bundles) that history no longer points to and keeps the ones it does.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from flaky_site import FlakyProject, FlakySite, find_chromium, served


@pytest.fixture
def site() -> Iterator[FlakySite]:
    yield from served()


@pytest.fixture
def project(tmp_path: Path, site: FlakySite) -> FlakyProject:
    return FlakyProject(tmp_path / "proj", site, find_chromium())


def age_history(project: FlakyProject) -> None:
    """History files in the order they were written, a second apart (mtime orders them)."""
    for i, path in enumerate(sorted(project.history_files(), key=lambda p: p.stat().st_mtime)):
        os.utime(path, (1_700_000_000 + i, 1_700_000_000 + i))


def test_history_strips_after_several_runs(project: FlakyProject) -> None:
    project.scenario("steady", "steady", "1")  # fails its first request only
    project.scenario("flaky", "flaky", "1")
    project.scenario("never-ran", "never-ran", "0")
    project.collection("nightly", ["steady", "flaky"])
    assert project.cli("e2e", "steady").code == 1
    assert project.cli("e2e", "steady").code == 0
    assert project.cli("collection", "nightly", "--retries", "1").code == 0
    age_history(project)

    done = project.cli("history", "--json")
    assert done.code == 0, done
    rows = {row["scenario"]: row for row in json.loads(done.out)}
    assert rows["steady"]["strip"] == "✗✓✓"
    assert rows["steady"]["statuses"] == ["failed", "passed", "passed"]
    assert rows["steady"]["passRate"] == pytest.approx(2 / 3)
    assert rows["steady"]["flaky"] == 0 and rows["steady"]["failed"] == 1
    assert rows["steady"]["medianMs"] > 0
    assert rows["flaky"]["strip"] == "~" and rows["flaky"]["flaky"] == 1
    assert rows["flaky"]["passRate"] == 1.0

    table = project.cli("history", "steady")
    assert table.code == 0, table
    header, line = table.out.splitlines()
    assert header.split()[:2] == ["SCENARIO", "LAST"]
    assert line.split()[:3] == ["steady", "✗✓✓", "67%"]
    assert project.cli("history", "steady", "--last", "1").out.splitlines()[1].split()[1] == "✓"
    nothing = project.cli("history", "never-ran")
    assert nothing.code == 0 and "no history for 'never-ran' yet" in nothing.out
    # A name that is no scenario at all is a mistake, said as e2e says it (it was exit 0).
    typo = project.cli("history", "stedy")
    assert typo.code == 2
    assert typo.err.strip() == (
        "unotest: no scenario named 'stedy' (did you mean 'steady'?); 'unotest list' shows them"
    )


def test_prune_keeps_what_history_needs(project: FlakyProject) -> None:
    project.scenario("steady", "steady", "1")
    assert project.cli("e2e", "steady").code == 1  # a failure: a run and a bundle
    assert project.cli("e2e", "steady").code == 0
    runs = project.root / "unotest/.runs"
    failures = project.root / ".unotest/failures"
    assert len(list(runs.iterdir())) == 2 and len(list(failures.iterdir())) == 1

    kept = project.cli("runs", "--prune", "--keep", "0", "--json")
    assert kept.code == 0, kept
    answer = json.loads(kept.out)
    assert answer["removed"] == [] and len(answer["keptForHistory"]) == 2

    # history lets go of the failed run (its file bounded away): now it can go
    failed_history = min(project.history_files(), key=lambda p: p.stat().st_mtime)
    failed_run = json.loads(failed_history.read_text())[-2]["data"]["run_id"]
    failed_history.unlink()
    done = project.cli("runs", "--prune", "--older-than", "0")
    assert done.code == 0, done
    assert "removed 1 run(s) and 1 failure bundle(s); kept 1 that history points to" in done.out
    assert not (runs / failed_run).exists() and list(failures.iterdir()) == []
    assert len(list(runs.iterdir())) == 1
    assert project.cli("history", "--json").code == 0


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["runs", "--prune"], "--prune needs --older-than DAYS and/or --keep N"),
        (["runs", "--keep", "3"], "--older-than and --keep go with --prune"),
        (["runs", "--prune", "--keep", "-1"], "--keep -1: must be 0 or more"),
        (["history", "--last", "0"], "--last 0: must be at least 1"),
    ],
)
def test_bad_prune_and_history_arguments(
    project: FlakyProject, args: list[str], words: str
) -> None:
    done = project.cli(*args)
    assert done.code == 2 and words in done.err, done


def test_a_history_file_of_a_newer_version_is_one_sentence(project: FlakyProject) -> None:
    folder = project.root / "unotest/.history"
    folder.mkdir(parents=True)
    (folder / "x.json").write_text(json.dumps([{"protocol_version": 2, "type": "t", "data": {}}]))
    done = project.cli("history")
    assert done.code == 2, done
    assert done.err.strip() == (
        "unotest: unotest/.history/x.json: event protocol version 2 is not supported "
        "(this unotest reads version 1)"
    )
    pruned = project.cli("runs", "--prune", "--keep", "0")
    assert pruned.code == 2 and "version 2 is not supported" in pruned.err, pruned
    # a collection still runs: only its longest-first ordering does without history
    project.scenario("ok", "ok", "0")
    project.collection("c", ["ok"])
    done = project.cli("collection", "c")
    assert done.code == 0, done
    assert "warning: unotest/.history/x.json: event protocol version 2" in done.err


def test_a_collection_starts_the_longest_scenario_first(project: FlakyProject) -> None:
    from runner.store import envelope

    for name in ("quick", "slow", "fresh"):
        project.scenario(name, name, "0")
    project.collection("c", ["quick", "slow", "fresh"])
    past = [envelope.run_start(2)]
    for name, ms in (("quick", 100), ("slow", 900)):
        past.append(envelope.test_end(name, None, "passed", ms * 1_000_000))
    folder = project.root / "unotest/.history"
    folder.mkdir(parents=True)
    (folder / "old.json").write_text(json.dumps(past))

    report = project.root / "report.json"
    done = project.cli("collection", "c", "--workers", "1", "--reporter", f"json={report}")
    assert done.code == 0, done
    events = json.loads(report.read_text())
    started = [e["data"]["name"] for e in events if e["type"] == "test_start"]
    assert started == ["fresh", "slow", "quick"]  # no history first, then longest first
    ended = [e["data"]["name"] for e in events if e["type"] == "test_end"]
    assert ended == started
