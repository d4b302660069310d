"""Retries: which outcomes earn another attempt, how many attempts a run gets, what the
attempts add up to, and how each retry's run directory is linked to the first: the one
rule of ``unotest e2e`` (:mod:`runner.run.attempts`) and of a collection.

A failed scenario runs again from its start in a fresh browser context, each attempt a
run directory of its own (so the viewer and MCP see every attempt). A scenario that
fails and then passes is ``flaky``: it does not fail the run, and every report says
so. The link between attempts is two additive manifest fields, ``attempt`` (from 1)
and ``retryOf`` (the first attempt's run id), written into a retry's manifest as soon
as its directory exists. So that a reader finds a chain without opening every run's
manifest, the first attempt's directory also holds ``attempts.json`` (our file, not the
protocol's), the run ids of its retries in the order they were marked: an index only,
each retry's own manifest stays the truth.

An *infrastructure retry* is none of this: a collection scenario whose run was lost
with its browser endpoint (``runner.workers.pool``) runs again elsewhere, that run's
manifest naming the lost one in ``infraRetryOf`` (:func:`mark_infra_retry`); it is no
attempt, fails nothing and makes nothing flaky.
"""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from runner import protocol
from runner.errors import RunWriteError, UsageError
from runner.files import atomic_write
from runner.project.config import MAX_RETRIES, Config
from runner.protocol import ScenarioOutcomeKind
from runner.store.envelope import Status
from runner.store.run_index import note_linked, shared_index
from runner.store.runs import run_meta
from runner.text import one_line

__all__ = [
    "ATTEMPTS_FILE",
    "Attempt",
    "AttemptChain",
    "attempt_chain",
    "final_status",
    "flaky_line",
    "mark_attempt",
    "mark_infra_retry",
    "retries_of",
    "retryable",
]

ATTEMPTS_FILE = "attempts.json"
"""In a first attempt's run directory: ``{"retries": [runId, ...]}``, its retries."""


@dataclass(frozen=True)
class Attempt:
    """One finished attempt of a scenario (``number`` counts from 1)."""

    number: int
    run_id: str | None
    outcome: ScenarioOutcomeKind
    duration_ms: int
    error_message: str | None = None
    error_name: str | None = None


def retryable(outcome: ScenarioOutcomeKind) -> bool:
    """A failure earns another attempt; an abort (a person or a signal) or a skip does not."""
    return outcome in ("failed", "interrupted")


def final_status(outcome: ScenarioOutcomeKind, failed_before: int) -> Status:
    """The status of the last attempt, ``flaky`` when it passed after failures."""
    if outcome == "completed":
        return "flaky" if failed_before else "passed"
    if outcome == "skipped":
        return "skipped"
    return "failed"


def mark_attempt(run_dir: Path, attempt: int, retry_of: str) -> None:
    """Add ``attempt`` and ``retryOf`` to a retry's manifest (replaced atomically, so a
    reader sees the manifest before or after, never half of it), and the retry to the
    first attempt's ``attempts.json``. A missing or unreadable manifest is left alone:
    the link is a convenience, not the run.

    The index is written first: a reader checks every run it lists against that run's
    manifest, so a crash between the two writes lists a run that is then left out, as
    if never marked. An index that cannot be written is removed, and readers fall back
    to the run index's link lines (:func:`attempt_chain`), written here after the manifest."""
    path = run_dir / protocol.RUN_MANIFEST_FILE
    try:
        manifest = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return
    if not isinstance(manifest, dict):
        return
    _index_retry(run_dir.parent / retry_of, run_dir.name, attempt)
    manifest.update(attempt=attempt, retryOf=retry_of)
    atomic_write(path, _json_bytes(manifest), fsync=True)
    note_linked(run_dir.parent, run_dir.name, retry_of, attempt)


def mark_infra_retry(run_dir: Path, lost_run_id: str) -> None:
    """Add ``infraRetryOf`` (the run lost with its browser endpoint, which this one runs
    again) to this run's manifest, replaced atomically; a manifest that cannot be read
    is left alone, as :func:`mark_attempt` leaves it."""
    path = run_dir / protocol.RUN_MANIFEST_FILE
    try:
        manifest = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return
    if isinstance(manifest, dict):
        manifest["infraRetryOf"] = lost_run_id
        atomic_write(path, _json_bytes(manifest), fsync=True)


def _json_bytes(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=True, allow_nan=False, indent=2).encode("ascii") + b"\n"


def _indexed(first_dir: Path) -> list[str] | None:
    """The retries ``attempts.json`` lists; ``None`` without a readable index (a chain
    marked before the index existed, or one whose index could not be written)."""
    try:
        value = json.loads((first_dir / ATTEMPTS_FILE).read_bytes())
    except (OSError, ValueError):
        return None
    retries = value.get("retries") if isinstance(value, dict) else None
    if not isinstance(retries, list) or not all(isinstance(r, str) for r in retries):
        return None
    return list(retries)


def _index_retry(first_dir: Path, run_id: str, attempt: int) -> None:
    """``run_id`` added to the first attempt's index, replaced atomically. Retries of one
    scenario are marked one after another by one process, so nothing races this.

    Only the first retry (attempt 2) starts an index: a later one finding none means an
    earlier write failed, and an index without that retry would hide it from readers."""
    index = first_dir / ATTEMPTS_FILE
    retries = _indexed(first_dir)
    if retries is None:
        if attempt != 2 or index.exists() or not first_dir.is_dir():
            return  # unreadable, lost or nowhere to go: readers scan
        retries = []
    if run_id not in retries:
        retries.append(run_id)
    try:
        atomic_write(index, _json_bytes({"retries": retries}), fsync=True)
    except RunWriteError:  # the index is optional: without it, readers scan
        with contextlib.suppress(OSError):
            index.unlink()


def flaky_line(scenario: str, failed: list[Attempt]) -> str:
    """What a scenario that passed after ``failed`` attempts is called, the same after
    ``e2e --retries`` as in a collection's summary: a clean pass's line would hide it."""
    first = failed[0]
    why = f"{first.error_name}: " if first.error_name else ""
    return (
        f"~ {scenario}: flaky, passed on attempt {len(failed) + 1} "
        f"(attempt 1: {why}{one_line(first.error_message or first.outcome)})"
    )


def retries_of(given: int | None, config: Config, debug: bool = False) -> int:
    """``--retries`` wins over ``retries:`` in the config; a debug run never retries
    (the person at it is the retry)."""
    if given is not None and not 0 <= given <= MAX_RETRIES:
        raise UsageError(f"--retries {given}: expected a whole number from 0 to {MAX_RETRIES}")
    if debug:
        return 0
    return given if given is not None else config.retries


@dataclass(frozen=True)
class AttemptChain:
    """Every attempt of one scenario run, first to last, and what they add up to
    (``flaky``: the last passed after failures). For MCP ``get_run`` and the viewer."""

    run_ids: tuple[str, ...]
    status: Status | None
    """``None`` while the last attempt still runs (or cannot be read)."""

    def to_json(self) -> dict[str, object]:
        return {"attempts": list(self.run_ids), "status": self.status}


def _manifest(run_dir: Path) -> dict[str, object]:
    try:
        value = json.loads((run_dir / protocol.RUN_MANIFEST_FILE).read_bytes())
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


_RUN_ID_TAIL = re.compile(r"-[0-9a-z]+-[0-9a-f]{6}")
"""What ``make_run_id`` puts after the scenario's sanitised name."""


def _candidates(runs_dir: Path, first: str) -> list[str]:
    """The runs that may be retries of ``first`` when neither its ``attempts.json`` nor
    the run index knows them (a run older than both): only runs of the same scenario
    (the same run id segment) can be, so only their manifests are read. An id not made
    by ``make_run_id`` gives every run."""
    tail = _RUN_ID_TAIL.search(first)
    segment = first[: tail.start()] if tail is not None and tail.end() == len(first) else None
    try:
        names = [p.name for p in runs_dir.iterdir() if p.name != first]
    except OSError:
        return []
    if segment is not None:
        prefix = segment + "-"
        names = [
            n for n in names if n.startswith(prefix) and _RUN_ID_TAIL.fullmatch(n[len(segment) :])
        ]
    return [n for n in names if (runs_dir / n).is_dir()]


def attempt_chain(runs_dir: Path, run_id: str) -> AttemptChain:
    """The attempts linked to ``run_id`` (itself, its first attempt, the retries whose
    manifest names that first one in ``retryOf``), ordered by ``attempt``.

    Its cost is the chain's, not the project's: the first attempt is named by
    ``retryOf``, its retries by its ``attempts.json``, else by their link lines in the
    run index (read back only as far as the first attempt's own start line); a run
    older than both reads the runs of the same scenario. Every one is checked against
    its manifest."""
    first = _manifest(runs_dir / run_id).get("retryOf")
    first = first if isinstance(first, str) else run_id
    linked: list[tuple[int, str]] = [(1, first)]
    names = _indexed(runs_dir / first)
    if names is None:
        names = shared_index(runs_dir).retries_of(first)
    if names is None:
        names = _candidates(runs_dir, first)
    for name in dict.fromkeys(names):
        if name == first:
            continue
        manifest = _manifest(runs_dir / name)
        number = manifest.get("attempt")
        if manifest.get("retryOf") == first and isinstance(number, int):
            linked.append((number, name))
    linked.sort()
    ids = tuple(name for _, name in linked)
    meta = run_meta(runs_dir / ids[-1])
    outcome = meta["outcome"] if meta is not None else None
    if outcome is None:
        return AttemptChain(ids, None)
    return AttemptChain(ids, final_status(outcome, len(ids) - 1))
