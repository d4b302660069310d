"""``EventLog``: the ordered version-1 envelopes of one ``e2e`` or ``collection`` run.

Every transport reads the same log: the JSON reporter writes :attr:`EventLog.events`
as one array at the end, ``--reporter ndjson`` prints each envelope as it comes, the
live file (``events.ndjson`` in the run's directory, one ``O_APPEND`` line each) is
what the viewer's ``/api/events`` streams, and history saves the array. Keeping the
order and the counts here means no transport can disagree with another.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TextIO, cast

from runner.files import append_line
from runner.store import envelope
from runner.store.envelope import Envelope
from runner.store.retries import Attempt, final_status

__all__ = ["LIVE_EVENTS_FILE", "EventLog", "LineStream", "LiveFile", "line_stream", "output_stream"]

LIVE_EVENTS_FILE = "events.ndjson"
"""The live copy of a run's envelopes, in its run directory (the first attempt's for
``e2e``, the collection's own for ``collection``)."""

Sink = Callable[[Envelope], None]


class LiveFile:
    """A sink appending each envelope to ``events.ndjson``; envelopes emitted before the
    run directory exists are held and written once :meth:`open` names it."""

    def __init__(self) -> None:
        self.path: Path | None = None
        self._held: list[Envelope] = []

    def open(self, run_dir: Path) -> None:
        self.path = run_dir / LIVE_EVENTS_FILE
        held, self._held = self._held, []
        self._write(held)

    def __call__(self, event: Envelope) -> None:
        if self.path is None:
            self._held.append(event)
        else:
            self._write([event])

    def _write(self, events: Sequence[Envelope]) -> None:
        if self.path is None or not events:
            return
        data = "".join(envelope.to_json_line(e) + "\n" for e in events).encode("utf-8")
        try:
            append_line(self.path, data, create=True)
        except OSError:
            self.path = None  # the run directory is gone (pruned): the stream ends here


class EventLog:
    """Envelopes in emission order, each passed to every sink as it is emitted."""

    def __init__(
        self, sinks: Sequence[Sink] = (), mask: Callable[[object], object] | None = None
    ) -> None:
        """``mask`` (a run's ``SecretMasker.mask_data``) is applied to every envelope
        before any sink sees it, so no transport can carry a secret."""
        self.events: list[Envelope] = []
        self.sinks: list[Sink] = list(sinks)
        self.mask = mask
        self._lock = threading.Lock()

    def emit(self, event: Envelope) -> None:
        if self.mask is not None:
            event = cast(Envelope, self.mask(event))
        with self._lock:
            self.events.append(event)
            for sink in self.sinks:
                sink(event)

    def test_finished(
        self,
        name: str,
        suite: str | None,
        last: Attempt,
        failed: Sequence[Attempt],
        extra: Mapping[str, object] | None = None,
    ) -> None:
        """The ``retry`` events of the failed attempts, in order, then the ``test_end`` of
        the last attempt (its own duration: each retry carries its own)."""
        for attempt in failed:
            self.emit(
                envelope.retry(
                    name,
                    attempt.number,
                    final_status(attempt.outcome, 0),
                    envelope.duration_ns(attempt.duration_ms),
                    attempt.error_message,
                    extra={"suite": suite, "run_id": attempt.run_id, "outcome": attempt.outcome},
                )
            )
        status = final_status(last.outcome, len(failed))
        message = None if status in ("passed", "flaky") else last.error_message
        # A scenario that never ran (not found, not started) had no attempt at all.
        attempts = [a for a in (*failed, last) if a.run_id is not None]
        fields: dict[str, object] = {
            "outcome": last.outcome,
            "attempts": len(attempts),
            "run_id": last.run_id,
            "run_ids": [a.run_id for a in attempts],
        }
        fields.update(extra or {})
        self.emit(
            envelope.test_end(
                name, suite, status, envelope.duration_ns(last.duration_ms), message, extra=fields
            )
        )

    def counts(self) -> dict[str, int]:
        """``passed``, ``flaky``, ``failed``, ``skipped`` over the ``test_end`` events."""
        counts = dict.fromkeys(("passed", "flaky", "failed", "skipped"), 0)
        for event in self.events:
            status = event["data"].get("status")
            if event["type"] == "test_end" and isinstance(status, str) and status in counts:
                counts[status] += 1
        return counts

    def run_end(self, duration_ms: float, extra: Mapping[str, object] | None = None) -> None:
        self.emit(envelope.run_end(self.counts(), envelope.duration_ns(duration_ms), extra=extra))


class LineStream(io.TextIOBase):
    """A text stream that hands each whole line written to it to ``on_line`` (and
    passes the text on to ``target``, if any): a run's ``log_stream`` whose ``log()``
    lines become ``output`` events (``e2e``) or reports to the orchestrator (a
    collection worker), while a terminal still shows them."""

    def __init__(self, on_line: Callable[[str], None], target: TextIO | None = None) -> None:
        super().__init__()
        self.on_line = on_line
        self.target = target
        self._partial = ""

    def write(self, text: str) -> int:
        if self.target is not None:
            self.target.write(text)
        lines = (self._partial + text).split("\n")
        self._partial = lines.pop()
        for line in lines:
            self.on_line(line)
        return len(text)

    def flush(self) -> None:
        if self.target is not None:
            self.target.flush()


def line_stream(on_line: Callable[[str], None]) -> TextIO:
    """A ``log_stream`` that only hands each line to ``on_line`` (a collection worker)."""
    return cast(TextIO, LineStream(on_line))


def output_stream(log: EventLog, test_name: str, target: TextIO) -> TextIO:
    """A run's ``log_stream`` emitting each line as an ``output`` event on ``log``."""

    def on_line(line: str) -> None:
        log.emit(envelope.output("stdout", line, test_name))

    return cast(TextIO, LineStream(on_line, target))
