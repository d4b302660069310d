"""``unotest runs --prune``: remove old run directories and their failure bundles, by
age or by count, keeping every run that history still points to.

History (:mod:`runner.store.history`) names the runs behind its outcomes; removing one of
those would leave ``unotest history`` pointing at nothing, so they stay until history
itself lets them go (its own age and size bounds). A run still running is never
removed. A failure bundle goes with the run whose ``failure-bundle:written`` event
names it, and only when it lies under ``.unotest/failures/``.

The runs are read through the run index (:mod:`runner.store.run_index`): a finished run
costs its lines, not its directory. Once runs are removed the index is rewritten
without their lines (and without those of any other directory that is gone).
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from runner import protocol
from runner.project.root import Project
from runner.store.history import referenced_run_ids
from runner.store.run_index import compact_index
from runner.store.run_list import RunLister, RunQuery

__all__ = ["PruneResult", "prune_runs"]

FAILURES_SUBDIR = ".unotest/failures"
_DAY_MS = 24 * 60 * 60 * 1000


@dataclass
class PruneResult:
    removed: list[str] = field(default_factory=list)
    bundles: list[str] = field(default_factory=list)
    kept_for_history: list[str] = field(default_factory=list)


def _candidates(
    metas: list[protocol.RunMeta], older_than_days: float | None, keep: int | None, now_ms: int
) -> list[protocol.RunMeta]:
    """Runs past either bound (newest first in ``metas``), none still running."""
    chosen: list[protocol.RunMeta] = []
    for position, meta in enumerate(metas):
        if meta["status"] == "running":
            continue
        too_many = keep is not None and position >= keep
        too_old = (
            older_than_days is not None and now_ms - meta["startedAt"] > older_than_days * _DAY_MS
        )
        if too_many or too_old:
            chosen.append(meta)
    return chosen


def _bundles_of(project: Project, run_dir: Path) -> list[Path]:
    """The failure bundles a run's events name, if they are under .unotest/failures/."""
    failures = (project.root / FAILURES_SUBDIR).resolve()
    found: list[Path] = []
    try:
        lines = (run_dir / protocol.STEPS_FILE).read_bytes().splitlines()
    except OSError:
        return found
    for line in lines:
        if b"failure-bundle:written" not in line:
            continue
        try:
            relative = json.loads(line).get("bundlePath")
        except (ValueError, AttributeError):
            continue
        if isinstance(relative, str):
            path = (project.root / relative).resolve()
            if path.parent == failures and path.is_dir():
                found.append(path)
    return found


def prune_runs(
    project: Project,
    older_than_days: float | None,
    keep: int | None,
    now_ms: int | None = None,
    dry_run: bool = False,
) -> PruneResult:
    """Remove the runs past the bounds, with their bundles; what was removed and kept."""
    now_ms = time.time_ns() // 1_000_000 if now_ms is None else now_ms
    needed = referenced_run_ids(project)
    result = PruneResult()
    lister = RunLister(project.runs_dir)
    lister.index.read_all()  # every run is asked for: one read of the whole file
    metas = lister.page(RunQuery()).runs
    for meta in _candidates(metas, older_than_days, keep, now_ms):
        run_id = meta["runId"]
        if run_id in needed:
            result.kept_for_history.append(run_id)
            continue
        run_dir = project.runs_dir / run_id
        bundles = _bundles_of(project, run_dir)
        if not dry_run:
            for bundle in bundles:
                shutil.rmtree(bundle, ignore_errors=True)
            shutil.rmtree(run_dir, ignore_errors=True)
        result.removed.append(run_id)
        result.bundles.extend(project.relative(b) for b in bundles)
    if result.removed and not dry_run:
        compact_index(project.runs_dir)
    return result
