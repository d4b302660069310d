"""Retries: which outcomes earn another attempt, what the attempts add up to, and how
each retry's run directory is linked to the first.

A failed scenario runs again from its start in a fresh browser context, each attempt a
run directory of its own (so the viewer and MCP see every attempt). A scenario that
fails and then passes is ``flaky``: it does not fail the run, and every report says
so. The link between attempts is two additive manifest fields, ``attempt`` (from 1)
and ``retryOf`` (the first attempt's run id), written into a retry's manifest as soon
as its directory exists.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from runner import protocol
from runner.envelope import Status
from runner.protocol import ScenarioOutcomeKind
from runner.rundir import atomic_write
from runner.runs import run_meta

__all__ = ["Attempt", "AttemptChain", "attempt_chain", "final_status", "mark_attempt", "retryable"]


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
    reader sees the manifest before or after, never half of it). A missing or
    unreadable manifest is left alone: the link is a convenience, not the run."""
    path = run_dir / protocol.RUN_MANIFEST_FILE
    try:
        manifest = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return
    if not isinstance(manifest, dict):
        return
    manifest.update(attempt=attempt, retryOf=retry_of)
    data = json.dumps(manifest, ensure_ascii=True, allow_nan=False, indent=2).encode("ascii")
    atomic_write(path, data + b"\n", fsync=True)


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


def attempt_chain(runs_dir: Path, run_id: str) -> AttemptChain:
    """The attempts linked to ``run_id`` (itself, its first attempt, the retries whose
    manifest names that first one in ``retryOf``), ordered by ``attempt``."""
    first = _manifest(runs_dir / run_id).get("retryOf")
    first = first if isinstance(first, str) else run_id
    linked: list[tuple[int, str]] = [(1, first)]
    try:
        entries = [p for p in runs_dir.iterdir() if p.is_dir() and p.name != first]
    except OSError:
        entries = []
    for path in entries:
        manifest = _manifest(path)
        number = manifest.get("attempt")
        if manifest.get("retryOf") == first and isinstance(number, int):
            linked.append((number, path.name))
    linked.sort()
    ids = tuple(name for _, name in linked)
    meta = run_meta(runs_dir / ids[-1])
    outcome = meta["outcome"] if meta is not None else None
    if outcome is None:
        return AttemptChain(ids, None)
    return AttemptChain(ids, final_status(outcome, len(ids) - 1))
