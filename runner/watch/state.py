"""What a client connecting now must see first: the daemon's state, kept from the bus.

``DaemonState`` listens to every event the bus publishes and folds it into the
``snapshot`` a socket sends as the first line of every connection (``DaemonSnapshot``:
the daemon's metadata, whether a batch is running, the complete last batch, per-file
state and accumulated totals), so a client renders at once instead of waiting for
the next save.
"""

from __future__ import annotations

import copy
from typing import Any

from runner.watch.daemon_events import BATCH_PRECEDENCE, Event

__all__ = ["DaemonState"]


class DaemonState:
    def __init__(self) -> None:
        self.daemon: dict[str, Any] = {}
        self.running = False
        self.last_batch: dict[str, Any] | None = None
        self.files: dict[str, dict[str, Any]] = {}
        self.totals: dict[str, int] = {"batches": 0, "runs": 0} | dict.fromkeys(BATCH_PRECEDENCE, 0)

    def __call__(self, event: Event) -> None:
        kind = event["type"]
        if kind == "daemon.started":
            self.daemon = {k: v for k, v in event.items() if k not in ("type", "seq", "timestamp")}
            self.daemon["startedAt"] = event["timestamp"]
        elif kind == "batch.started":
            self._batch_started(event)
        elif kind == "run.finished":
            self._run_finished(event)
        elif kind == "batch.finished":
            self.running = False
            self.totals["batches"] += 1
            if self.last_batch is not None:
                self.last_batch["result"] = event["result"]
        elif kind == "daemon.stopped":
            self.running = False

    def _batch_started(self, event: Event) -> None:
        self.running = True
        batch = {k: v for k, v in event.items() if k not in ("type", "seq")}
        self.last_batch = {**batch, "runs": [], "result": None}
        for entry in event["plan"]:
            for test_file in entry["testFiles"]:
                state = self.files.setdefault(test_file, {})
                state.update(status="queued", batchId=event["batchId"])
                state["reasons"] = entry["reasons"].get(test_file, [])

    def _run_finished(self, event: Event) -> None:
        result = event["result"]
        status = result["status"]
        self.totals["runs"] += 1
        self.totals[status] = self.totals.get(status, 0) + 1
        if self.last_batch is not None and self.last_batch["batchId"] == event["batchId"]:
            self.last_batch["runs"].append(result)
        for test_file in result.get("testFiles", []):
            state = self.files.setdefault(test_file, {})
            state.update(
                status=status,
                scenario=result.get("scenario"),
                runId=result.get("runId"),
                runDir=result.get("runDir"),
                durationMs=result.get("durationMs"),
                batchId=event["batchId"],
            )

    def snapshot_state(self) -> dict[str, Any]:
        """A deep copy: the snapshot is written later, while the state moves on."""
        return copy.deepcopy(
            {
                "daemon": self.daemon,
                "running": self.running,
                "lastBatch": self.last_batch,
                "files": self.files,
                "totals": self.totals,
            }
        )
