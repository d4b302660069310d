"""The output of every live run as ``log:line`` messages, read from its run directory.

A run started without a terminal (by a viewer, by MCP) writes its stdout and stderr
into its ``stdout.log``/``stderr.log`` (:func:`runner.store.rundir.capture_output_into`).
:class:`RunLogs` tails both files of each run :class:`runner.store.tail.RunsTailer`
follows, by byte offset, whole lines only, and hands every new line on masked. Reading
the files, not a pipe of the process that started the run, is what lets a viewer
restarted while a run goes on follow its output again: a run that was live when the
viewer started is followed from the files' current ends (the page reads what came
before over REST when it reconnects), one found later from their starts. A run that has
ended is still read for a few ticks: the last lines it prints (a ``restart``'s answer)
can land just after its end.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from runner import protocol, ws_messages
from runner.project.secrets import EnvSecrets
from runner.store.tail import LineTailer, RunsTailer, RunTail
from runner.ws_messages import LogStream, WsMessage

__all__ = ["ENDED_TICKS", "RunLogs"]

ENDED_TICKS = 3
"""Ticks a run's logs are still read after its end."""
BATCH_BYTES = 256 * 1024
"""What one poll reads of one file at most (the rest at the next event or tick)."""
_STREAMS: tuple[tuple[LogStream, str], ...] = (
    ("stdout", protocol.STDOUT_FILE),
    ("stderr", protocol.STDERR_FILE),
)


def _tailer(path: Path, from_end: bool) -> LineTailer:
    offset = 0
    if from_end:
        try:
            offset = path.stat().st_size
        except OSError:
            offset = 0
    return LineTailer(path, offset)


@dataclass
class _Followed:
    """One run's two logs being read, and the ticks left once the run has ended."""

    run_id: str
    tailers: list[tuple[LogStream, LineTailer]]
    ticks_left: int | None = None
    """``None`` while the run lives."""

    @classmethod
    def of(cls, run_dir: Path, *, from_end: bool) -> _Followed:
        tailers = [(stream, _tailer(run_dir / name, from_end)) for stream, name in _STREAMS]
        return cls(run_dir.name, tailers)

    def read(self) -> Iterator[tuple[LogStream, str]]:
        for stream, tailer in self.tailers:
            for line in tailer.read(BATCH_BYTES):
                yield stream, line.decode("utf-8", "replace")


@dataclass
class RunLogs:
    """The logs of the runs one viewer follows, as ``log:line`` messages."""

    root: Path
    followed: dict[str, _Followed] = field(default_factory=dict)
    secrets: EnvSecrets = field(init=False)
    """The project's ``.env`` secrets: runs are masked when written, this is the second
    lock, as for every file the viewer serves from a run."""

    def __post_init__(self) -> None:
        self.secrets = EnvSecrets(self.root)

    def prime(self, live: Mapping[str, RunTail]) -> None:
        """The runs live when the viewer starts: followed from their logs' current ends."""
        for run_id, tail in live.items():
            self.followed[run_id] = _Followed.of(tail.run_dir, from_end=True)

    def sync(self, runs: RunsTailer) -> None:
        """Follow every run newly live, and every run found and ended since the last call
        (its logs read to their ends, then forgotten), from their logs' starts; count
        down the ended."""
        for run_id, tail in itertools.chain(runs.live.items(), runs.take_ended().items()):
            if run_id not in self.followed:
                self.followed[run_id] = _Followed.of(tail.run_dir, from_end=False)
        for run_id, run in self.followed.items():
            if run_id not in runs.live and run.ticks_left is None:
                run.ticks_left = ENDED_TICKS

    def poll(self, run_id: str) -> Iterator[WsMessage]:
        """New lines of one run whose directory changed. (Read as they are published,
        under the publisher's lock: lines are never read ahead of their turn.)"""
        run = self.followed.get(run_id)
        if run is not None:
            yield from self._messages(run)

    def tick(self) -> Iterator[WsMessage]:
        """New lines of every followed run; a run ended long enough is read a last time
        and forgotten."""
        for run in list(self.followed.values()):
            yield from self._messages(run)
            if run.ticks_left is not None:
                run.ticks_left -= 1
                if run.ticks_left <= 0:
                    self.followed.pop(run.run_id, None)

    def _messages(self, run: _Followed) -> Iterator[WsMessage]:
        lines = list(run.read())
        if lines:
            mask = self.secrets.masker().mask
            for stream, line in lines:
                yield ws_messages.log_line(run.run_id, stream, mask(line))
