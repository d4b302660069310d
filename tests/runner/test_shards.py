"""``--shard i/n`` balanced by durations (runner/collection/shards.py), with given
durations: no browser, no clock.

The promise: where a split by count puts the slow scenarios in one shard (three times
and more the others' time), the split by durations keeps every shard within 30 % of
the others; the split is the same whatever order the names and durations come in;
a scenario without a duration weighs the median of the known ones; the durations
file ``unotest history --export`` writes reads back as it was written.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from runner.collection.prelaunch import planned_slice
from runner.collection.shards import durations_document, plan_shard, read_durations
from runner.errors import UsageError

# Sorted by name, the two slow ones sit at positions 0 and 2: a split by count (every
# n-th name) puts both in shard 1 of 2.
DURATIONS = {"a-slow": 10_000.0, "c-slow": 10_000.0} | {
    name: 500.0 for name in ("b", "d", "e", "f", "g", "h", "i", "j", "k", "l")
}
NAMES = sorted(DURATIONS)


def shard_times(
    names: list[str], durations: dict[str, float], split: dict[str, float]
) -> list[float]:
    """Each of 2 shards' time by ``durations``, split as ``split`` balances them."""
    return [sum(durations[n] for n in plan_shard(names, split, i, 2).names) for i in (1, 2)]


def test_balanced_shards_are_within_30_percent_where_count_based_ones_differ_threefold() -> None:
    by_count = shard_times(NAMES, DURATIONS, {})  # no duration known: a split by count
    balanced = shard_times(NAMES, DURATIONS, DURATIONS)
    assert max(by_count) >= 3 * min(by_count), by_count
    assert max(balanced) <= 1.3 * min(balanced), balanced
    first = plan_shard(NAMES, DURATIONS, 1, 2)
    assert first.loads_ms == balanced and first.expected_ms == balanced[0]


def test_the_split_is_the_same_whatever_order_its_inputs_come_in() -> None:
    """Every shard machine computes the whole split: names in another order, durations
    in another dict order, give the same shards and the same partition digest; each
    shard lists its names in the order they were given (the collection's)."""
    plans = [plan_shard(NAMES, DURATIONS, i, 3) for i in (1, 2, 3)]
    assert sorted(n for p in plans for n in p.names) == NAMES
    assert all(p.names for p in plans)
    shuffled = NAMES[:]
    random.Random(7).shuffle(shuffled)
    reordered = dict(reversed(list(DURATIONS.items())))
    for i, plan in enumerate(plans, start=1):
        again = plan_shard(shuffled, reordered, i, 3)
        assert set(again.names) == set(plan.names)
        assert again.names == [n for n in shuffled if n in plan.names]
        assert again.partition == plan.partition
    assert len({p.partition for p in plans}) == 1
    assert plan_shard(NAMES, {**DURATIONS, "b": 9_000.0}, 1, 3).partition != plans[0].partition


def test_a_scenario_without_a_duration_weighs_the_median_of_the_known_ones() -> None:
    known = {"a": 100.0, "b": 300.0, "c": 9_000.0}
    plan = plan_shard(["a", "b", "c", "new"], known, 1, 2)
    assert plan.assumed_ms == 300.0
    assert plan.names == ["c"] and plan.expected_ms == 9_000.0
    assert plan.loads_ms == [9_000.0, 700.0]
    second = plan_shard(["a", "b", "c", "new"], known, 2, 2)
    assert second.unknown == ["new"]


def test_without_durations_the_split_is_by_count_and_every_shard_gets_one() -> None:
    names = [f"s{n}" for n in range(7)]
    assert [planned_slice(names, f"{i}/3") for i in (1, 2, 3)] == [
        ["s0", "s3", "s6"],
        ["s1", "s4"],
        ["s2", "s5"],
    ]
    zero = dict.fromkeys(names, 0.0)  # durations of 0 ms still fill every shard first
    assert all(plan_shard(names, zero, i, 7).names for i in range(1, 8))
    assert plan_shard(names, {}, 1, 3).expected_ms is None


def test_the_durations_file_reads_back_as_it_was_written(tmp_path: Path) -> None:
    path = tmp_path / "durations.json"
    path.write_text(json.dumps(durations_document({"b": 1234.56, "a": 7.0})), encoding="utf-8")
    assert json.loads(path.read_text(encoding="utf-8")) == {
        "version": 1,
        "durations": {"a": 7.0, "b": 1234.6},
    }
    assert read_durations(path) == {"a": 7.0, "b": 1234.6}


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("not json", "not JSON"),
        ('{"version": 2, "durations": {}}', "durations file version 2 is not supported"),
        ('{"version": 1, "durations": {"a": -1}}', 'the duration of "a" must be a number'),
        ("[1, 2]", 'expected {"version": 1, "durations"'),
    ],
)
def test_a_durations_file_that_is_not_one_is_one_sentence(
    tmp_path: Path, text: str, said: str
) -> None:
    path = tmp_path / "d.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UsageError) as caught:
        read_durations(path)
    assert said in str(caught.value) and "\n" not in str(caught.value)
    with pytest.raises(UsageError, match="no such file"):
        read_durations(tmp_path / "missing.json")
