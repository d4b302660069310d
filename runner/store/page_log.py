"""A run's page log read back: ``network.jsonl`` and ``console.jsonl``, for the front ends.

A scenario run appends its page's requests and console messages to these two files as
they happen (:mod:`runner.browser.page_log`). The viewer reads them from a byte offset
while the run goes (:func:`read_page_log`: the entries since, and where to go on from),
MCP's ``get_run`` as counts with the failed requests and the errors in a few words
(:func:`page_log_summary`). Nothing here masks: the files are masked when written, and
a front end masks what it serves once more.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, TypedDict

from runner import protocol
from runner.protocol import JSONObject
from runner.store.runs import parse_event_line

__all__ = [
    "MAX_READ_BYTES",
    "PageLogChunk",
    "PageLogKind",
    "PageLogSummary",
    "is_console_error",
    "is_failed_request",
    "page_log_summary",
    "read_page_log",
]

PageLogKind = Literal["network", "console"]
MAX_READ_BYTES = 1024 * 1024
"""What one :func:`read_page_log` reads at most; ``next`` says where to go on from."""
_FILES: dict[PageLogKind, str] = {
    "network": protocol.NETWORK_LOG_FILE,
    "console": protocol.CONSOLE_LOG_FILE,
}
_SHORT_CHARS = 300
"""A failed request or an error in a summary: at most this many characters."""


class PageLogChunk(TypedDict):
    """Entries of one page log file from a byte offset: ``next`` is the offset after the
    last whole line read (ask again from there), ``more`` whether the file held more
    than one read takes; ``capped`` the file's last line once it reached its bound
    (nothing comes after it); ``recorded`` false when the run has no such file (it is
    older than page logs, or a collection run)."""

    entries: list[JSONObject]
    next: int
    more: bool
    capped: JSONObject | None
    recorded: bool


class _KindSummary(TypedDict):
    count: int
    capped: bool
    problems: int
    shown: list[str]


class PageLogSummary(TypedDict):
    """A run's page log in a few words: each file's entry count, whether it was capped,
    and its failed requests (network) or errors (console), the last few worded short."""

    network: _KindSummary
    console: _KindSummary


def read_page_log(
    run_dir: Path, kind: PageLogKind, start: int = 0, max_bytes: int = MAX_READ_BYTES
) -> PageLogChunk:
    """The whole lines of the run's ``kind`` log from byte ``start`` (at most
    ``max_bytes`` of them, one line at least); an unterminated tail is being written and
    waits for the next read. A ``start`` past the end reads from the start again."""
    path = run_dir / _FILES[kind]
    try:
        with open(path, "rb") as handle:
            size = handle.seek(0, 2)
            start = start if 0 <= start <= size else 0
            handle.seek(start)
            data = handle.read(max_bytes)
            if data and not data.endswith(b"\n") and b"\n" not in data:
                data += handle.readline()  # a line longer than max_bytes, whole
    except OSError:
        return {"entries": [], "next": 0, "more": False, "capped": None, "recorded": False}
    end = data.rfind(b"\n") + 1
    entries: list[JSONObject] = []
    capped: JSONObject | None = None
    for line in data[:end].splitlines():
        entry = parse_event_line(line)
        if entry is None:
            continue
        if entry.get("capped") is True:
            capped = entry
        else:
            entries.append(entry)
    return {
        "entries": entries,
        "next": start + end,
        "more": start + len(data) < size,
        "capped": capped,
        "recorded": True,
    }


def is_failed_request(entry: JSONObject) -> bool:
    """A request that failed (no answer, or aborted) or was answered 400 or above."""
    status = entry.get("status")
    return bool(entry.get("failure")) or (isinstance(status, int) and status >= 400)


def is_console_error(entry: JSONObject) -> bool:
    """A console error or an uncaught page error."""
    return entry.get("type") in ("error", "pageerror")


def _short(text: str) -> str:
    return text if len(text) <= _SHORT_CHARS else text[: _SHORT_CHARS - 1] + "…"


def _request_words(entry: JSONObject) -> str:
    """``GET http://…/api 503 (fulfilled by a route)``, ``GET … net::ERR_FAILED``."""
    outcome = entry.get("failure") or entry.get("status")
    routed = f" ({entry['routed']} by a route)" if entry.get("routed") else ""
    return _short(f"{entry.get('method')} {entry.get('url')} {outcome}{routed}")


def _error_words(entry: JSONObject) -> str:
    """``pageerror: Error: boom``, ``error: Failed to load … (http://…/a.js:3)``."""
    place = f" ({entry.get('url')}:{entry.get('line')})" if entry.get("url") else ""
    return _short(f"{entry.get('type')}: {entry.get('text')}{place}")


def page_log_summary(run_dir: Path, max_shown: int) -> PageLogSummary | None:
    """Counts, caps and the last ``max_shown`` failed requests and errors, worded short;
    ``None`` when the run has no page log (older, or a collection run)."""
    network = _whole(run_dir, "network")
    console = _whole(run_dir, "console")
    if not network["recorded"] and not console["recorded"]:
        return None
    failed = [_request_words(e) for e in network["entries"] if is_failed_request(e)]
    errors = [_error_words(e) for e in console["entries"] if is_console_error(e)]
    return {
        "network": _kind_summary(network, failed, max_shown),
        "console": _kind_summary(console, errors, max_shown),
    }


def _whole(run_dir: Path, kind: PageLogKind) -> PageLogChunk:
    """The whole file (bounded by its writer: a few MB at most)."""
    return read_page_log(run_dir, kind, 0, 64 * MAX_READ_BYTES)


def _kind_summary(chunk: PageLogChunk, problems: list[str], max_shown: int) -> _KindSummary:
    return {
        "count": len(chunk["entries"]),
        "capped": chunk["capped"] is not None,
        "problems": len(problems),
        "shown": problems[-max_shown:] if max_shown > 0 else [],
    }
