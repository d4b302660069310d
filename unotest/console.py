"""What every command prints the same way: JSON, warnings, ``file:line:col`` problems."""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
from collections.abc import Iterable
from typing import TextIO

from dsl.errors import Diagnostic
from runner.text import one_line, replace_controls

__all__ = [
    "ReaderMayLeave",
    "diagnostic_json",
    "format_diagnostic",
    "json_dump",
    "plural",
    "print_warnings",
]

_MAX_SHOWN = 160


def json_dump(data: object) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2, allow_nan=False)


def plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def print_warnings(
    warnings: Iterable[str], prefix: str = "warning", stream: TextIO | None = None
) -> None:
    """Each warning on one line of stderr, control characters escaped."""
    for warning in warnings:
        print(f"{prefix}: {one_line(warning)}", file=stream or sys.stderr)


def diagnostic_json(d: Diagnostic) -> dict[str, object]:
    """A problem as ``check --json``, ``list --json`` and the viewer give it."""
    return {"path": d.file, "line": d.line, "col": d.col, "message": d.message}


def format_diagnostic(d: Diagnostic) -> str:
    """``file:line:col: message``, the source line (cut around the column) and a caret:
    control characters from the file are never echoed to the terminal."""
    head = replace_controls(f"{d.file}:{d.line}:{d.col}: {d.message}")
    line = d.source_line.rstrip("\r\n")
    if not line.strip():
        return head
    col = max(0, min(d.col, len(line)))
    prefix = suffix = ""
    if len(line) > _MAX_SHOWN:
        start = max(0, min(col - _MAX_SHOWN // 3, len(line) - _MAX_SHOWN))
        if start > 0:
            prefix = "…"
        if start + _MAX_SHOWN < len(line):
            suffix = "…"
        line = line[start : start + _MAX_SHOWN]
        col -= start
    pad = "".join("\t" if ch == "\t" else " " for ch in prefix + line[:col])
    return f"{head}\n    {prefix}{replace_controls(line)}{suffix}\n    {pad}^"


class ReaderMayLeave(io.TextIOBase):
    """stdout for a command that must finish whoever reads it: once the reader has
    gone (``unotest collection nightly | head -1``), what is printed is dropped and the
    run goes on, its reports written and its exit code its own; the closed pipe used to
    stop the collection with exit 0 and no report."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__()
        self._stream = stream
        self.reader_gone = False

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self._stream.isatty()

    def fileno(self) -> int:
        return self._stream.fileno()

    def write(self, text: str) -> int:
        if not self.reader_gone:
            try:
                self._stream.write(text)
            except BrokenPipeError:
                self._gone()
        return len(text)

    def flush(self) -> None:
        if not self.reader_gone:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._gone()

    def _gone(self) -> None:
        self.reader_gone = True
        # Python flushes the real stdout once more at exit: let it write to nowhere
        # rather than print "Exception ignored ... BrokenPipeError".
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
