"""A scenario's attempts: ``--retries`` for one scenario, the same rule everywhere.

A failed scenario runs again from its start, each attempt a new
:class:`~runner.run.session.ScenarioRun` (its own browser, its own run directory linked
to the first by :func:`runner.store.retries.mark_attempt`), until it passes, is
stopped, or has failed ``retries + 1`` times; a debug run never retries (the person at
it is the retry). The attempts' version-1 envelopes go to one
:class:`~runner.store.event_log.EventLog`. ``unotest e2e`` runs a scenario through
here; the viewer and MCP start ``unotest e2e`` (:mod:`runner.launch`); a collection's
orchestrator applies the same rules (:mod:`runner.store.retries`: which outcomes are
retried, how many times, what the attempts add up to).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TextIO

from runner.browser.early_driver import EarlyDriver
from runner.project.root import Project
from runner.run.result import RunResult
from runner.run.session import ScenarioRun
from runner.store import envelope
from runner.store.event_log import EventLog, LiveFile, output_stream
from runner.store.retries import Attempt, mark_attempt, retryable
from runner.store.step_titles import read_titled_steps
from runner.webserver.server import WebServer

__all__ = ["MakeRun", "ScenarioAttempts", "run_attempts"]


class ScenarioAttempts:
    """One ``e2e`` run's attempts and its envelopes: ``run_start``, the scenario's folder
    as its suite, ``test_start``, ``output`` lines, ``retry`` per failed attempt, then
    ``test_end``, ``suite_end`` and ``run_end``."""

    def __init__(
        self,
        project: Project,
        name: str,
        log: EventLog,
        live: LiveFile,
        stream: TextIO,
        title: str | None = None,
    ) -> None:
        """``title``: the scenario's description line, carried by ``test_start`` and
        ``test_end`` (JUnit's testcase name, history's title)."""
        self.project = project
        self.name = name
        self.title = title
        self.suite = name.rpartition("/")[0] or None
        self.log = log
        self.live = live
        self.stream = stream
        self.failed: list[Attempt] = []
        self.first_run_id: str | None = None
        self.attempt_opened = False
        self.test_started = False
        self.started = time.monotonic()

    def begin(self) -> None:
        self.log.emit(envelope.run_start(1, extra={"scenario": self.name}))
        if self.suite is not None:
            self.log.emit(envelope.suite_start(self.suite))

    def _test_start(self, run_id: str | None) -> None:
        """``test_start`` once, with the first attempt's run (as a collection writes it;
        ``worker`` is null: no worker runs it), or without one for a run that never
        started (before its ``test_end``)."""
        if not self.test_started:
            self.test_started = True
            extra = {"run_id": run_id, "worker": None, "title": self.title}
            self.log.emit(envelope.test_start(self.name, self.suite, extra=extra))

    def on_started(self, run_id: str) -> None:
        """The first attempt's directory holds the live events; a retry is linked to it.
        Only an attempt's first run is: a debugger ``restart`` within an attempt makes
        runs of its own (linked by ``restartOf``), which are no attempts."""
        run_dir = self.project.runs_dir / run_id
        if self.first_run_id is None:
            self.first_run_id = run_id
            self.live.open(run_dir)
            self._test_start(run_id)
        elif not self.attempt_opened:
            mark_attempt(run_dir, len(self.failed) + 1, self.first_run_id)
        self.attempt_opened = True

    def attempt(self, result: RunResult) -> Attempt:
        error: Mapping[str, object] = result.error or {}
        return Attempt(
            len(self.failed) + 1,
            result.run_id,
            result.outcome,
            result.duration_ms,
            str(error["error"]) if error.get("error") else None,
            str(error["errorName"]) if error.get("errorName") else None,
        )

    def status(self, result: RunResult) -> str:
        return (
            "flaky"
            if result.outcome == "completed" and self.failed
            else ("passed" if result.outcome == "completed" else "failed")
        )

    def end(self, result: RunResult) -> None:
        self._test_start(None)
        extra: dict[str, object] = {"title": self.title}
        titled = read_titled_steps(self.project.runs_dir / result.run_id)
        if titled:
            extra["steps"] = titled  # the titled steps (step(title, fn)) of the last attempt
        self.log.test_finished(self.name, self.suite, self.attempt(result), self.failed, extra)
        if self.suite is not None:
            self.log.emit(envelope.suite_end(self.suite))
        elapsed = (time.monotonic() - self.started) * 1000
        extra = {"outcome": result.outcome, "scenario": self.name, "runId": self.first_run_id}
        self.log.run_end(elapsed, extra=extra)


MakeRun = Callable[[Callable[[str], None], TextIO, WebServer | None], ScenarioRun]


def run_attempts(
    attempts: ScenarioAttempts, retries: int, early: EarlyDriver | None, make_run: MakeRun
) -> RunResult:
    """Run the scenario until it passes, is stopped, or has failed ``retries + 1`` times;
    each attempt a new :class:`ScenarioRun` (its own browser, its own run directory);
    the first on ``early``'s loop and driver when there is one. The webServer the first
    attempt started serves them all, and stops after the last."""
    web_server: WebServer | None = None
    try:
        while True:
            tee = output_stream(attempts.log, attempts.name, attempts.stream)
            attempts.attempt_opened = False
            run = make_run(attempts.on_started, tee, web_server)
            try:
                result = run.run(early)
            finally:
                web_server = run.kept_web_server
            early = None
            if not retryable(result.outcome) or len(attempts.failed) >= retries:
                return result
            attempt = attempts.attempt(result)
            attempts.failed.append(attempt)
            print(
                f"attempt {attempt.number} of {retries + 1} {result.outcome}: "
                f"running {attempts.name} again",
                file=attempts.stream,
                flush=True,
            )
    finally:
        if web_server is not None:
            web_server.stop()
