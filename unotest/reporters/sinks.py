"""The reporters a ``--reporter`` list names, as sinks of the run's one event log.

The command puts :attr:`ReportSinks.sinks` in its :class:`~runner.store.event_log.EventLog`
(every envelope reaches each of them as it is emitted) and calls
:meth:`ReportSinks.finish` once the run has ended: the NDJSON printer has printed all
along, the JUnit and JSON reporters write their files then, JUnit first.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol, TextIO

from runner.store.envelope import Envelope
from unotest.reporters.json_report import JsonReport
from unotest.reporters.junit import JUnitReport
from unotest.reporters.ndjson import ndjson_printer
from unotest.reporters.options import Reporters

__all__ = ["FileReporter", "ReportSinks"]


class FileReporter(Protocol):
    """A reporter writing a file: it receives every envelope, then writes at ``finish``."""

    def __call__(self, event: Envelope) -> None: ...

    def finish(self) -> None: ...


class ReportSinks:
    """``reporters`` as sinks: ``out`` is where NDJSON goes, ``started`` (seconds since
    the epoch, now when not given) the run's start as JUnit stamps it."""

    def __init__(self, reporters: Reporters, out: TextIO, started: float | None = None) -> None:
        self.files: list[FileReporter] = []
        if reporters.junit is not None:
            stamp = time.time() if started is None else started
            self.files.append(JUnitReport(reporters.junit, stamp))
        if reporters.json is not None:
            self.files.append(JsonReport(reporters.json))
        self.sinks: list[Callable[[Envelope], None]] = [*self.files]
        if reporters.ndjson:
            self.sinks.insert(0, ndjson_printer(out))

    def finish(self) -> None:
        """Write the report files (a file that cannot be written is a usage error)."""
        for report in self.files:
            report.finish()
