"""A run's page log: every request and console message of its page, written as it happens.

Each scenario run appends to two files of its run directory, ``network.jsonl`` (a
:class:`~runner.protocol.NetworkLine` per request that finished or failed) and
``console.jsonl`` (a :class:`~runner.protocol.ConsoleLine` per console message, page
error or answered dialog), passing runs too: the recorder of
:mod:`runner.browser.bundle` hands each entry here as the page's event arrives, besides
keeping the last 200 for a failure bundle. So a viewer or an agent sees them while the
run goes, and after it, without a failure.

Each line is one ``O_APPEND`` write (:func:`runner.files.append_line`), so a reader
never sees half of one. Every string is masked with the run's secrets as they are
known at that moment, then cut to :data:`MAX_VALUE_CHARS` (:func:`masked_entry`, the one
way the bundle's entries are masked and cut too). A file is bounded: at
:data:`MAX_LINES` lines or :data:`MAX_BYTES` bytes, whichever comes first, one
:class:`~runner.protocol.PageLogCapped` line says so and nothing more is written to it,
so a page that logs in a loop cannot fill the disk. A write that fails (disk full, the
folder gone) stops that file with one warning on stderr: the page log never fails a
run, and costs it no call to the browser.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from runner import events, protocol
from runner.files import append_line, dumps_line
from runner.project.secrets import MASK_MARGIN, cut_masked
from runner.protocol import ConsoleLine, JSONObject, NetworkLine

__all__ = [
    "MAX_BYTES",
    "MAX_LINES",
    "MAX_VALUE_CHARS",
    "RECORD_CHARS",
    "PageLog",
    "keep",
    "masked_entry",
]

MAX_VALUE_CHARS = 4096
"""Each string of an entry, once masked, in the page log and the failure bundle."""
RECORD_CHARS = MAX_VALUE_CHARS + MASK_MARGIN
"""What the recorder keeps of a string: enough to mask it and cut it later."""
MAX_LINES = 5_000
"""Lines a page log file holds at most (the capped line besides)."""
MAX_BYTES = 4 * 1024 * 1024
"""Bytes a page log file holds at most (the capped line besides)."""


def keep(text: str | None) -> str | None:
    """What the recorder keeps of a string: :data:`RECORD_CHARS` characters at most."""
    return text[:RECORD_CHARS] if isinstance(text, str) else text


def masked_entry(entry: Mapping[str, object], mask: Callable[[str], str]) -> JSONObject:
    """``entry`` with every string masked, then cut to :data:`MAX_VALUE_CHARS` (in that
    order, so a cut never leaves the start of a secret)."""
    return {
        key: cut_masked(value, MAX_VALUE_CHARS, mask, truncated=len(value) >= RECORD_CHARS)
        if isinstance(value, str)
        else value
        for key, value in entry.items()
    }


class _LogFile:
    """One file of the page log: where it is, what it holds so far, whether it is shut."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lines = 0
        self.bytes = 0
        self.shut = False


class PageLog:
    """``network.jsonl`` and ``console.jsonl`` of one run directory, appended to from the
    browser's event loop (the recorder's callbacks) until :meth:`close`."""

    def __init__(
        self,
        run_dir: Path,
        mask: Callable[[str], str],
        *,
        max_lines: int = MAX_LINES,
        max_bytes: int = MAX_BYTES,
    ) -> None:
        self._mask = mask
        self._max_lines = max_lines
        self._max_bytes = max_bytes
        self._network = _LogFile(run_dir / protocol.NETWORK_LOG_FILE)
        self._console = _LogFile(run_dir / protocol.CONSOLE_LOG_FILE)
        # Both exist from the start: an empty file says "nothing happened", a missing
        # one "not recorded" (a run from before page logs, or a collection's).
        for log in (self._network, self._console):
            self._append(log, b"")

    def network(self, entry: NetworkLine) -> None:
        self._write(self._network, entry)

    def console(self, entry: ConsoleLine) -> None:
        self._write(self._console, entry)

    def close(self) -> None:
        """Nothing more is written (the run has ended; its page may still talk)."""
        self._network.shut = self._console.shut = True

    def _write(self, log: _LogFile, entry: Mapping[str, object]) -> None:
        if log.shut:
            return
        data = dumps_line(masked_entry(entry, self._mask))
        if log.lines >= self._max_lines or log.bytes + len(data) > self._max_bytes:
            capped = events.page_log_capped(
                "lines" if log.lines >= self._max_lines else "bytes", log.lines
            )
            log.shut = True
            self._append(log, dumps_line(capped))
            return
        if self._append(log, data):
            log.lines += 1
            log.bytes += len(data)

    def _append(self, log: _LogFile, data: bytes) -> bool:
        try:
            append_line(log.path, data, create=True)
        except OSError as err:
            if not log.shut:
                log.shut = True
                print(
                    f"unotest: warning: {log.path.name}: cannot write ({err.strerror or err}); "
                    "the page's later entries are not recorded there",
                    file=sys.stderr,
                    flush=True,
                )
            return False
        return True
