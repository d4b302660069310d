"""How one scenario run links to others, for the readers that show it (MCP ``get_run``,
the viewer's ``GET /api/runs/<runId>``): the attempts of its ``--retries``
(:func:`runner.store.retries.attempt_chain`) and the restarts before and after it, and
the run an infrastructure retry runs again. One shape, so an agent and the page read the
same links.

A restart links two run directories both ways (:mod:`runner.debug.restart`): the new
manifest's ``restartOf`` names the old run, the old run's ``command:result`` for the
``restart`` names the new run id in ``value``. A front end that follows the runs it
started (the MCP server ending them with its session, an agent told the new id) reads
the link here (:func:`restarted_as`, :func:`latest_restart`), without importing the
engine that makes it (no Playwright).
"""

from __future__ import annotations

from pathlib import Path
from typing import TypedDict

from runner import protocol
from runner.store.retries import attempt_chain
from runner.store.runs import read_events, read_manifest

__all__ = ["RunLinks", "latest_restart", "restarted_as", "run_links"]


class RunLinks(TypedDict):
    attemptChain: dict[str, object] | None
    """``{"attempts": [runId, …], "status": "passed" | "flaky" | "failed" | null}``."""
    restartOf: str | None
    """The run this one restarted."""
    restartedAs: str | None
    """The run that restarted this one."""
    latestRestart: str | None
    """The newest run of the chain of restarts after this one: the run to follow now."""
    infraRetryOf: str | None
    """The run this one runs again, lost with its browser endpoint (a collection's)."""


def run_links(run_dir: Path) -> RunLinks:
    """The links of the run in ``run_dir``; all ``None`` for a collection run (its
    scenarios' runs carry theirs) or a directory without a readable manifest."""
    manifest = read_manifest(run_dir)
    if manifest is None or manifest.get("kind") != "scenario":
        return RunLinks(
            attemptChain=None,
            restartOf=None,
            restartedAs=None,
            latestRestart=None,
            infraRetryOf=None,
        )
    restart_of = manifest.get("restartOf")
    infra_of = manifest.get("infraRetryOf")
    following = restarted_as(run_dir)
    latest = latest_restart(following) if following is not None else None
    return {
        "attemptChain": attempt_chain(run_dir.parent, run_dir.name).to_json(),
        "restartOf": restart_of if isinstance(restart_of, str) else None,
        "restartedAs": following.name if following is not None else None,
        "latestRestart": latest.name if latest is not None else None,
        "infraRetryOf": infra_of if isinstance(infra_of, str) else None,
    }


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
        manifest = read_manifest(run_dir.parent / value)
        if manifest is not None and manifest.get("restartOf") == run_dir.name:
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
