"""The version-1 event envelope ``{"protocol_version": 1, "type", "data"}`` (docs/reporting.md).

One constructor per event type of version 1, with the seed's names and fields, so the
JSON reporter, the NDJSON and server-sent-event streams and history files all carry
the same envelopes; optional fields are always present, ``null`` when absent. Events
may carry more fields than the table names (``run_id``, ``outcome``, ...): version 1
allows additive fields and its consumers ignore the ones they do not know.

:func:`read_envelopes` is the one reader: it refuses a major version other than 1
with one sentence (:class:`runner.errors.EventProtocolError`) rather than reading a
newer stream as if it were ours.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Literal, TypedDict, cast

from runner.errors import EventProtocolError
from runner.protocol import JSONObject

__all__ = [
    "EVENT_TYPES",
    "PROTOCOL_VERSION",
    "Envelope",
    "HookKind",
    "Status",
    "duration_ns",
    "hook",
    "output",
    "read_envelopes",
    "retry",
    "run_end",
    "run_start",
    "sse_frame",
    "suite_end",
    "suite_start",
    "test_end",
    "test_start",
    "to_json_line",
]

PROTOCOL_VERSION = 1
EVENT_TYPES = (
    "run_start",
    "run_end",
    "suite_start",
    "suite_end",
    "test_start",
    "test_end",
    "hook",
    "output",
    "retry",
    "coverage",
)
Status = Literal["pending", "running", "passed", "flaky", "failed", "skipped"]
HookKind = Literal["before_all", "before_each", "after_each", "after_all"]
Stream = Literal["stdout", "stderr"]


class Envelope(TypedDict):
    """One event: the major version, its type, its fields."""

    protocol_version: int
    type: str
    data: JSONObject


def _envelope(kind: str, data: JSONObject, extra: Mapping[str, object] | None) -> Envelope:
    """Extra fields never replace a field of the table."""
    merged: JSONObject = {**(extra or {}), **data}
    return {"protocol_version": PROTOCOL_VERSION, "type": kind, "data": merged}


def duration_ns(milliseconds: float) -> int:
    """Milliseconds as the unsigned integer nanoseconds every ``duration_ns`` is."""
    return max(0, round(milliseconds * 1_000_000))


def run_start(
    total: int, random_seed: int | None = None, extra: Mapping[str, object] | None = None
) -> Envelope:
    return _envelope("run_start", {"total": total, "random_seed": random_seed}, extra)


def run_end(
    counts: Mapping[str, int],
    duration: int,
    random_seed: int | None = None,
    extra: Mapping[str, object] | None = None,
) -> Envelope:
    """``counts`` has ``passed``, ``flaky``, ``failed``, ``skipped``; total is their sum."""
    names = ("passed", "flaky", "failed", "skipped")
    data: JSONObject = {"total": sum(counts.get(k, 0) for k in names)}
    data.update({k: counts.get(k, 0) for k in names})
    data.update(duration_ns=duration, random_seed=random_seed)
    return _envelope("run_end", data, extra)


def suite_start(name: str) -> Envelope:
    return _envelope("suite_start", {"name": name}, None)


def suite_end(name: str) -> Envelope:
    return _envelope("suite_end", {"name": name}, None)


def test_start(
    name: str, suite: str | None = None, extra: Mapping[str, object] | None = None
) -> Envelope:
    return _envelope("test_start", {"name": name, "suite": suite}, extra)


def test_end(
    name: str,
    suite: str | None,
    status: Status,
    duration: int,
    error_message: str | None = None,
    extra: Mapping[str, object] | None = None,
) -> Envelope:
    data: JSONObject = {
        "name": name,
        "suite": suite,
        "status": status,
        "duration_ns": duration,
        "error_message": error_message,
    }
    return _envelope("test_end", data, extra)


def retry(
    name: str,
    attempt: int,
    status: Status,
    duration: int,
    error_message: str | None = None,
    repetition: int = 1,
    extra: Mapping[str, object] | None = None,
) -> Envelope:
    """One attempt before the last: ``attempt`` counts from 1 (the first run)."""
    data: JSONObject = {
        "name": name,
        "attempt": attempt,
        "repetition": repetition,
        "status": status,
        "duration_ns": duration,
        "error_message": error_message,
    }
    return _envelope("retry", data, extra)


def hook(
    kind: HookKind,
    status: Status,
    duration: int,
    suite: str | None = None,
    test_name: str | None = None,
    error_message: str | None = None,
) -> Envelope:
    data: JSONObject = {
        "kind": kind,
        "suite": suite,
        "test_name": test_name,
        "status": status,
        "duration_ns": duration,
        "error_message": error_message,
    }
    return _envelope("hook", data, None)


def output(stream: Stream, text: str, test_name: str | None = None) -> Envelope:
    return _envelope("output", {"stream": stream, "text": text, "test_name": test_name}, None)


def to_json_line(envelope: Envelope) -> str:
    """One envelope as one line of NDJSON (no newline inside, none at the end)."""
    return json.dumps(envelope, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def sse_frame(envelope: Envelope) -> str:
    """A server-sent event whose event name is the envelope's type."""
    return f"event: {envelope['type']}\ndata: {to_json_line(envelope)}\n\n"


def read_envelopes(value: object, where: str) -> list[Envelope]:
    """Envelopes from a decoded JSON array (a report or a history file).

    Anything that is not an envelope is skipped (a consumer ignores what it does not
    understand); a ``protocol_version`` other than 1 stops the reading with one
    sentence naming ``where``, since a newer major version may mean other things.
    """
    if not isinstance(value, list):
        raise EventProtocolError(f"{where}: expected a JSON array of event envelopes")
    found: list[Envelope] = []
    for item in value:
        if not isinstance(item, dict):
            continue
        version = item.get("protocol_version")
        if version != PROTOCOL_VERSION:
            raise EventProtocolError(
                f"{where}: event protocol version {version!r} is not supported "
                f"(this unotest reads version {PROTOCOL_VERSION})"
            )
        if isinstance(item.get("type"), str) and isinstance(item.get("data"), dict):
            found.append(cast(Envelope, item))
    return found
