"""Following ``restart`` from a run to the run that restarted it, for a reader.

A restart links two run directories both ways (:mod:`runner.debug.restart`): the new
manifest's ``restartOf`` names the old run, the old run's ``command:result`` for the
``restart`` names the new run id in ``value``. A front end that follows the runs it
started (the MCP server ending them with its session, an agent told the new id) reads
the link here, without importing the engine that makes it (no Playwright).
"""

from __future__ import annotations

import json
from pathlib import Path

from runner import protocol
from runner.store.runs import read_events

__all__ = ["latest_restart", "restarted_as"]


def restarted_as(run_dir: Path) -> Path | None:
    """The run that restarted ``run_dir``, if one did: named by a ``command:result`` of
    ``run_dir`` and naming it back in ``restartOf`` (so an ``eval`` result that happens
    to look like a run id is not taken for one)."""
    for event in read_events(run_dir / protocol.STEPS_FILE):
        value = event.get("value")
        if event.get("kind") != "command:result" or event.get("ok") is not True:
            continue
        if not isinstance(value, str) or not value or "/" in value or value.startswith("."):
            continue
        try:
            manifest = json.loads((run_dir.parent / value / protocol.RUN_MANIFEST_FILE).read_text())
        except (OSError, ValueError):
            continue
        if isinstance(manifest, dict) and manifest.get("restartOf") == run_dir.name:
            return run_dir.parent / value
    return None


def latest_restart(run_dir: Path, limit: int = 1000) -> Path:
    """The last run of the chain of restarts that starts at ``run_dir`` (itself if none)."""
    for _ in range(limit):
        following = restarted_as(run_dir)
        if following is None:
            break
        run_dir = following
    return run_dir
