"""``attempt_chain`` costs the chain, not the project (issue 18 follow-up).

Real run directories (``RunDirectory.create``, real ``run:started``/``run:finished``
lines), chains linked by the real ``mark_attempt``, among many runs of other scenarios
(one of them named so that its run ids start like the chain's). The answer is compared
with the whole-directory scan ``attempt_chain`` used to do (kept below as the
reference), and every manifest read is recorded: only the chain's own runs are opened
with the first attempt's ``attempts.json``; without it, only runs of the same scenario.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from runner import events, protocol
from runner.errors import RunWriteError
from runner.store import retries
from runner.store.retries import (
    ATTEMPTS_FILE,
    AttemptChain,
    attempt_chain,
    final_status,
    mark_attempt,
)
from runner.store.rundir import RunDirectory
from runner.store.runs import run_meta

SCENARIO = "shop"
"""Its run ids start ``shop-``; the unrelated ``shop/cart``'s start ``shop-cart-``."""


def finished_run(runs: Path, ref: str, outcome: protocol.RunOutcome) -> str:
    run = RunDirectory.create(runs, "scenario", ref)
    with run:
        run.append(events.run_started(run.run_id, ref))
        run.append(events.run_finished(outcome))
    return run.run_id


def reference_chain(runs_dir: Path, run_id: str) -> AttemptChain:
    """``attempt_chain`` as it was: every run directory's manifest read."""

    def manifest(run_dir: Path) -> dict[str, object]:
        try:
            value = json.loads((run_dir / protocol.RUN_MANIFEST_FILE).read_bytes())
        except (OSError, ValueError):
            return {}
        return value if isinstance(value, dict) else {}

    first = manifest(runs_dir / run_id).get("retryOf")
    first = first if isinstance(first, str) else run_id
    linked = [(1, first)]
    for path in runs_dir.iterdir():
        if path.is_dir() and path.name != first:
            found = manifest(path)
            number = found.get("attempt")
            if found.get("retryOf") == first and isinstance(number, int):
                linked.append((number, path.name))
    ids = tuple(name for _, name in sorted(linked))
    meta = run_meta(runs_dir / ids[-1])
    outcome = meta["outcome"] if meta is not None else None
    return AttemptChain(ids, None if outcome is None else final_status(outcome, len(ids) - 1))


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    """60 runs of other scenarios, some of them retried chains of their own."""
    runs = tmp_path / "unotest" / ".runs"
    for index in range(20):
        for ref in ("shop/cart", "login", "shopping"):
            first = finished_run(runs, ref, "failed")
            if index % 5 == 0:
                retry = finished_run(runs, ref, "completed")
                mark_attempt(runs / retry, 2, first)
    return runs


def chain_of(runs: Path, outcomes: list[protocol.RunOutcome]) -> list[str]:
    """One scenario's attempts, the retries marked as ``--retries`` marks them."""
    ids = [finished_run(runs, SCENARIO, outcomes[0])]
    for number, outcome in enumerate(outcomes[1:], start=2):
        ids.append(finished_run(runs, SCENARIO, outcome))
        mark_attempt(runs / ids[-1], number, ids[0])
    return ids


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Path]]:
    """Every file read through ``Path.read_bytes`` (how manifests and the index are read)."""
    seen: list[Path] = []
    original = Path.read_bytes

    def recording(self: Path) -> bytes:
        seen.append(self)
        return original(self)

    monkeypatch.setattr(Path, "read_bytes", recording)
    yield seen


def manifests_read(seen: list[Path]) -> set[str]:
    return {p.parent.name for p in seen if p.name == protocol.RUN_MANIFEST_FILE}


def test_the_chain_is_the_same_and_only_its_runs_are_opened(runs: Path, reads: list[Path]) -> None:
    ids = chain_of(runs, ["failed", "interrupted", "completed"])
    index = json.loads((runs / ids[0] / ATTEMPTS_FILE).read_text())
    assert index == {"retries": ids[1:]}
    others = [p.name for p in runs.iterdir() if p.name not in ids]
    assert len(others) == 72
    # An unrelated run whose manifest is not JSON: nothing reads it.
    (runs / others[0] / protocol.RUN_MANIFEST_FILE).write_text("{not json")

    for run_id in ids:
        reads.clear()
        chain = attempt_chain(runs, run_id)
        assert set(ids[1:]) <= manifests_read(reads) <= set(ids)
        assert chain == AttemptChain(tuple(ids), "flaky")
        assert chain == reference_chain(runs, run_id)


def test_a_run_never_retried_reads_only_its_own_manifest(runs: Path, reads: list[Path]) -> None:
    """Without ``attempts.json`` the run index's link lines say it has no retries."""
    earlier = finished_run(runs, SCENARIO, "completed")
    alone = finished_run(runs, SCENARIO, "failed")
    reads.clear()
    chain = attempt_chain(runs, alone)
    assert manifests_read(reads) == {alone}
    assert chain == AttemptChain((alone,), "failed") == reference_chain(runs, alone)
    assert earlier != alone


def test_without_either_index_only_the_scenarios_runs_are_read(
    runs: Path, reads: list[Path]
) -> None:
    """A run older than the run index (its file deleted here): the scenario's own runs
    are the candidates, never shop/cart's, shopping's or login's."""
    earlier = finished_run(runs, SCENARIO, "completed")
    alone = finished_run(runs, SCENARIO, "failed")
    (runs.parent / ".cache" / "runs.jsonl").unlink()
    reads.clear()
    chain = attempt_chain(runs, alone)
    assert manifests_read(reads) == {alone, earlier}
    assert chain == AttemptChain((alone,), "failed") == reference_chain(runs, alone)


def test_without_the_index_the_scenarios_runs_give_the_same_chain(
    runs: Path, reads: list[Path]
) -> None:
    """A chain marked before the index existed (or whose index could not be written)."""
    ids = chain_of(runs, ["failed", "failed", "failed"])
    (runs / ids[0] / ATTEMPTS_FILE).unlink()
    for run_id in ids:
        reads.clear()
        chain = attempt_chain(runs, run_id)
        assert set(ids[1:]) <= manifests_read(reads) <= set(ids)
        assert chain == AttemptChain(tuple(ids), "failed") == reference_chain(runs, run_id)


def test_an_index_is_checked_against_each_retrys_manifest(runs: Path) -> None:
    """A crash between the index and the manifest write lists an unmarked run, and a
    pruned retry leaves a name behind: both are left out, as the scan left them out."""
    ids = chain_of(runs, ["failed", "failed", "completed"])
    unmarked = finished_run(runs, SCENARIO, "completed")
    index = runs / ids[0] / ATTEMPTS_FILE
    index.write_text(json.dumps({"retries": [*ids[1:], unmarked]}))
    shutil.rmtree(runs / ids[2])
    chain = attempt_chain(runs, ids[0])
    assert chain == AttemptChain(tuple(ids[:2]), "failed") == reference_chain(runs, ids[0])


def test_marking_the_same_retry_twice_lists_it_once(runs: Path) -> None:
    ids = chain_of(runs, ["failed", "completed"])
    mark_attempt(runs / ids[1], 2, ids[0])
    assert json.loads((runs / ids[0] / ATTEMPTS_FILE).read_text()) == {"retries": [ids[1]]}
    assert attempt_chain(runs, ids[1]) == AttemptChain(tuple(ids), "flaky")


def test_an_unreadable_index_falls_back_to_the_scan(runs: Path) -> None:
    ids = chain_of(runs, ["failed", "completed"])
    index = runs / ids[0] / ATTEMPTS_FILE
    index.write_text("[broken")
    later = finished_run(runs, SCENARIO, "completed")
    mark_attempt(runs / later, 3, ids[0])  # not ours to repair: left as it is
    assert index.read_text() == "[broken"
    chain = attempt_chain(runs, ids[0])
    assert chain == AttemptChain((*ids, later), "flaky") == reference_chain(runs, ids[0])


def test_an_index_that_failed_once_is_not_started_again(
    runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first retry's index write fails (a full disk, say): the second retry must not
    start an index that lacks the first, so readers keep scanning and see both."""
    first = finished_run(runs, SCENARIO, "failed")
    second = finished_run(runs, SCENARIO, "failed")
    third = finished_run(runs, SCENARIO, "completed")
    real_write = retries.atomic_write

    def failing_index(path: Path, data: bytes, **kwargs: Any) -> None:
        if path.name == ATTEMPTS_FILE:
            raise RunWriteError(f"cannot write {path}: No space left on device")
        real_write(path, data, **kwargs)

    monkeypatch.setattr(retries, "atomic_write", failing_index)
    mark_attempt(runs / second, 2, first)
    monkeypatch.setattr(retries, "atomic_write", real_write)
    mark_attempt(runs / third, 3, first)
    assert not (runs / first / ATTEMPTS_FILE).exists()
    chain = attempt_chain(runs, first)
    assert chain == AttemptChain((first, second, third), "flaky") == reference_chain(runs, first)
