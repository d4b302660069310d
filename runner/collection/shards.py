"""``--shard i/n``: a collection's scenarios split into n shards of about the same time.

A split by count (positions i, i + n, ...) put the slow scenarios wherever the list
put them: a shard holding them took many times longer than the others, and the CI
matrix waited for it. Here each scenario weighs its median duration (from history, or
from a file ``unotest history --export`` wrote, read with ``--durations``), and the
scenarios go longest first into the least loaded shard (the LPT rule, as
``pytest-split``'s ``least_duration`` algorithm splits a suite); a scenario
without a duration weighs the median of the known ones, and with no duration known at
all every scenario weighs 1, which is a split by count.

Every shard of one CI matrix computes the whole split and keeps its own part, so the
split must come out the same on every machine given the same names and durations:
ties in weight are broken by name, ties in load by the shard's number of scenarios,
then its index; nothing depends on dict order or the clock. The split's digest
(``partition``) goes into each shard's JSON report, so ``unotest merge-reports`` can
tell shards that were split differently (one machine balanced by its own history,
another by none) instead of merging a run that ran a scenario twice or never.

Only the standard library and :mod:`runner.errors`: :mod:`runner.collection.prelaunch`
splits with it before the orchestrator's imports.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from runner.errors import UsageError

__all__ = [
    "DURATIONS_VERSION",
    "ShardPlan",
    "balance",
    "durations_document",
    "plan_shard",
    "read_durations",
    "weights_of",
]

DURATIONS_VERSION = 1
"""The version of the durations file (``{"version": 1, "durations": {name: ms}}``)."""
MAX_DURATIONS_BYTES = 16 * 1024 * 1024
"""A durations file larger than this is no durations file (about 300,000 scenarios)."""


def weights_of(
    names: Sequence[str], durations: Mapping[str, float]
) -> tuple[dict[str, float], float | None]:
    """Each name's weight, and the weight assumed for names without a duration (the
    median of the known ones; None when none is known: every name then weighs 1)."""
    known = [durations[name] for name in names if name in durations]
    if not known:
        return dict.fromkeys(names, 1.0), None
    assumed = _median(known)
    return {name: float(durations.get(name, assumed)) for name in names}, assumed


def _median(values: Sequence[float]) -> float:
    """``statistics.median`` without its import (random, fractions, decimal: several
    milliseconds before a collection's workers can start)."""
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return float(ordered[middle])
    return (ordered[middle - 1] + ordered[middle]) / 2


def balance(names: Sequence[str], weights: Mapping[str, float], total: int) -> list[list[str]]:
    """``names`` in ``total`` shards, heaviest first into the least loaded one; each
    shard's names keep their order in ``names``."""
    loads = [0.0] * total
    members: list[list[str]] = [[] for _ in range(total)]
    for name in sorted(names, key=lambda n: (-weights[n], n)):
        index = min(range(total), key=lambda k: (loads[k], len(members[k]), k))
        loads[index] += weights[name]
        members[index].append(name)
    position = {name: at for at, name in enumerate(names)}
    return [sorted(shard, key=position.__getitem__) for shard in members]


@dataclass(frozen=True)
class ShardPlan:
    """Shard ``current`` of ``total``: its scenarios and what the split expects of it."""

    current: int
    total: int
    names: list[str]
    """This shard's scenarios, in the collection's order."""
    expected_ms: float | None
    """The sum of its scenarios' durations (None: no duration known, a split by count)."""
    loads_ms: list[float] | None
    """Every shard's expected time, first to last (None as above)."""
    assumed_ms: float | None
    """The duration assumed for a scenario without one (the median of the known)."""
    unknown: list[str]
    """This shard's scenarios without a duration of their own."""
    partition: str
    """A digest of the whole split: equal on every shard split the same way."""

    def header(self) -> dict[str, object]:
        """The shard as a collection's ``run_start`` carries it (our additive ``shard``)."""
        return {"current": self.current, "total": self.total, "partition": self.partition}


def plan_shard(
    names: Sequence[str], durations: Mapping[str, float], current: int, total: int
) -> ShardPlan:
    """Shard ``current`` (1-based) of ``total`` of ``names``, balanced by ``durations``
    (scenario name → milliseconds)."""
    weights, assumed = weights_of(names, durations)
    shards = balance(names, weights, total)
    # Of the names alone, each shard's sorted: the same split from names in any order.
    canonical = [sorted(shard) for shard in shards]
    digest = hashlib.sha256(json.dumps(canonical, ensure_ascii=False).encode("utf-8"))
    mine = shards[current - 1]
    loads = None if assumed is None else [sum(weights[n] for n in s) for s in canonical]
    return ShardPlan(
        current,
        total,
        mine,
        None if loads is None else loads[current - 1],
        loads,
        assumed,
        [name for name in mine if name not in durations],
        digest.hexdigest()[:16],
    )


def durations_document(medians: Mapping[str, float]) -> dict[str, object]:
    """What ``unotest history --export`` writes: the version and each scenario's median
    in milliseconds (to a tenth), by name, so the same history gives the same file."""
    return {
        "version": DURATIONS_VERSION,
        "durations": {name: round(medians[name], 1) for name in sorted(medians)},
    }


def read_durations(path: Path) -> dict[str, float]:
    """A durations file (``--durations PATH``) as scenario name → milliseconds; anything
    else is one sentence naming the file."""
    where = f"--durations {path}"
    try:
        if path.stat().st_size > MAX_DURATIONS_BYTES:
            raise UsageError(f"{where}: larger than {MAX_DURATIONS_BYTES // 2**20} MB")
        value = json.loads(path.read_bytes())
    except FileNotFoundError:
        raise UsageError(f"{where}: no such file") from None
    except OSError as err:
        raise UsageError(f"{where}: cannot read it: {err.strerror or err}") from None
    except (ValueError, RecursionError):
        raise UsageError(
            f"{where}: not JSON (write it with 'unotest history --export PATH')"
        ) from None
    if not isinstance(value, dict) or "durations" not in value:
        raise UsageError(
            f'{where}: expected {{"version": {DURATIONS_VERSION}, "durations": '
            "{scenario: milliseconds}}, as 'unotest history --export PATH' writes"
        )
    if value.get("version") != DURATIONS_VERSION:
        raise UsageError(
            f"{where}: durations file version {value.get('version')!r} is not supported "
            f"(this unotest reads version {DURATIONS_VERSION})"
        )
    table = value["durations"]
    if not isinstance(table, dict):
        raise UsageError(f"{where}: 'durations' must map each scenario to milliseconds")
    found: dict[str, float] = {}
    for name, ms in table.items():
        good = isinstance(ms, int | float) and not isinstance(ms, bool) and math.isfinite(ms)
        if not good or ms < 0:
            scalar = ms is None or isinstance(ms, bool | int | float)
            shown = json.dumps(ms) if scalar else "no number"
            raise UsageError(
                f"{where}: the duration of {json.dumps(name)} must be a number of "
                f"milliseconds, at least 0 (it is {shown})"
            )
        found[name] = float(ms)
    return found
