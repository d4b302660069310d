"""A scenario's run in a batch as the daemon reports it: a ``TestRunResult``.

``run.finished`` carries the command that would run the same scenario alone, counts,
one case with its failure message, ``stdoutTail``/``stderrTail`` and the selection
reasons, with ``status`` one of ``passed``, ``failed``, ``errored`` (could not run:
a problem in its files, a worker that died, the runner's own failure), ``skipped``
or ``cancelled`` (a newer batch, or the daemon stopping, made it obsolete). The run
directory is the usual one under ``unotest/.runs/`` (``runId``/``runDir``), so the
viewer and MCP see the run as any other.
"""

from __future__ import annotations

import shlex
from typing import Any

from runner.protocol import JSONObject
from runner.run.result import RunResult, error_location, summary_lines
from runner.watch.daemon_events import (
    ADAPTER_ID,
    BATCH_PRECEDENCE,
    RUNNER_KEY,
    RunStatus,
    SelectionReason,
)

__all__ = ["TAIL_CHARS", "ScenarioJob", "make_test_run_result", "status_of"]

TAIL_CHARS = 4000


class ScenarioJob:
    """One selected scenario of a batch: what is needed to report on it."""

    def __init__(self, name: str, test_file: str, reasons: list[SelectionReason]) -> None:
        self.name = name
        self.test_file = test_file
        self.reasons = reasons

    @property
    def command(self) -> str:
        return f"unotest e2e {shlex.quote(self.name)}"


def _tail(lines: list[str]) -> str:
    text = "\n".join(line.strip("\n") for line in lines)
    return text[-TAIL_CHARS:]


def make_test_run_result(
    job: ScenarioJob,
    status: RunStatus,
    *,
    result: RunResult | None = None,
    message: str | None = None,
    run_id: str | None = None,
) -> dict[str, Any]:
    """The TestRunResult of ``job``: from its run's result, or from ``message`` (why it
    could not run or did not finish)."""
    duration = result.duration_ms if result is not None else 0
    failure = message
    stdout: list[str] = []
    if result is not None:
        stdout = summary_lines(result)
        if result.error is not None and failure is None:
            # Where it failed first, as `unotest e2e` and the pytest plugin print it, so
            # that a watch user can go to the line.
            location = error_location(result.error)
            where = f"{location}: " if location else ""
            name = result.error.get("errorName", "Error")
            failure = f"{where}{name}: {result.error.get('error', '')}"
    counts = dict.fromkeys(BATCH_PRECEDENCE, 0) | {"total": 1}
    counts[status] = 1
    return {
        "runnerKey": RUNNER_KEY,
        "adapterId": ADAPTER_ID,
        "command": job.command,
        "status": status,
        "scenario": job.name,
        "testFiles": [job.test_file],
        "runId": result.run_id if result is not None else run_id,
        "runDir": result.run_dir if result is not None else None,
        "durationMs": duration,
        "counts": counts,
        "cases": [
            {
                "name": job.name,
                "file": job.test_file,
                "status": status,
                "durationMs": duration,
                "failureMessage": failure if status != "passed" else None,
                "steps": result.steps if result is not None else 0,
                "bundlePath": result.bundle_path if result is not None else None,
            }
        ],
        "stdoutTail": _tail(stdout),
        "stderrTail": _tail([failure]) if failure and status != "passed" else "",
        "reasons": job.reasons,
    }


def status_of(
    report: JSONObject | None, cancelled: bool, worker: int = 0
) -> tuple[RunStatus, RunResult | None, str]:
    """A worker's ``finished`` report (None: the worker died, or there was none:
    ``worker`` < 0) as a status, the run's result when there is one, and a message
    when there is no result."""
    if report is None:
        why = "no worker is left to run it" if worker < 0 else "the worker running it died"
        return "errored", None, why
    data = report.get("result")
    if not isinstance(data, dict):
        error = report.get("error")
        text = error.get("error") if isinstance(error, dict) else None
        # Aborted before it started (its batch was cancelled): nothing ran, nothing broke.
        return ("cancelled" if cancelled else "errored"), None, str(text or "the runner failed")
    try:
        result = RunResult.from_json(data)
    except ValueError as err:
        return "errored", None, f"the worker's report is unreadable: {err}"
    if result.outcome == "completed":
        return "passed", result, ""
    if result.outcome == "aborted":
        return ("cancelled" if cancelled else "errored"), result, "the run was aborted"
    return "failed", result, ""
