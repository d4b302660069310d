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

__all__ = ["Attempt", "final_status", "mark_attempt", "retryable"]


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
