"""How one scenario run links to others, for the readers that show it (MCP ``get_run``,
the viewer's ``GET /api/runs/<runId>``): the attempts of its ``--retries``
(:func:`runner.store.retries.attempt_chain`) and the restarts before and after it
(:mod:`runner.store.restart_links`), and the run an infrastructure retry runs again. One
shape, so an agent and the page read the same links.
"""

from __future__ import annotations

from pathlib import Path
from typing import TypedDict

from runner.store.restart_links import latest_restart, restarted_as
from runner.store.retries import attempt_chain
from runner.store.runs import read_manifest

__all__ = ["RunLinks", "run_links"]


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
