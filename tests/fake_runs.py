"""Run directories written by hand, fast and many: what a runner leaves behind (a manifest,
``steps.jsonl`` from ``run:started`` to ``run:finished`` or not, heartbeat, commands) and,
when asked, its lines in the run index as that runner would have appended them.

Imported as ``from fake_runs import fake_run`` (``tests/`` is on ``sys.path``).
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

from runner import protocol
from runner.store.run_index import finished_line, note_lines, started_line

DEAD_PID = 4_194_000
"""A pid no process has here (above any pid_max): a run naming it was killed."""


def fake_run(
    runs_dir: Path,
    ref: str,
    started: int,
    outcome: protocol.RunOutcome | None = "completed",
    *,
    kind: str = "scenario",
    parent: str | None = None,
    indexed: bool = True,
) -> str:
    """A run of ``ref`` whose directory was made at ``started`` (ms) and which lasted
    90 ms; ``outcome`` ``None``: killed before its end (a dead pid, no ``run:finished``).
    ``indexed``: its run index lines are appended too. Returns its run id."""
    run_id = protocol.make_run_id(ref, now_ms=started)
    run_dir = runs_dir / run_id
    run_dir.mkdir(parents=True)
    manifest: dict[str, object] = {
        "schemaVersion": 1,
        "kind": kind,
        "ref": ref,
        "adapter": protocol.ADAPTER_NAME,
        "startedAt": started,
        "pid": DEAD_PID,
        "pidStartTime": 1,
        "hostname": socket.gethostname(),
    }
    if parent is not None:
        manifest["parentRunId"] = parent
    (run_dir / protocol.RUN_MANIFEST_FILE).write_text(json.dumps(manifest))
    first = "run:started" if kind == "scenario" else "collection-run:started"
    events: list[dict[str, object]] = [{"kind": first, "runId": run_id, "t": started + 3}]
    if outcome is not None:
        last = "run:finished" if kind == "scenario" else "collection-run:finished"
        events.append({"kind": last, "outcome": outcome, "t": started + 93})
    lines = "".join(json.dumps(e) + "\n" for e in events)
    (run_dir / protocol.STEPS_FILE).write_text(lines)
    (run_dir / protocol.HEARTBEAT_FILE).write_bytes(b"")
    (run_dir / protocol.COMMANDS_FILE).write_bytes(b"")
    if indexed:
        index = [
            started_line(
                run_id,
                kind="collection" if kind == "collection" else "scenario",
                ref=ref,
                started_at=started + 3,
                parent=parent,
            )
        ]
        if outcome is not None:
            index.append(finished_line(run_id, started + 93, outcome))
        note_lines(runs_dir, index)
    return run_id
