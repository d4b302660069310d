"""runner/ws_messages.py: every WsMessage kind of 0.5.0, each valid against its schema."""

from __future__ import annotations

from collections.abc import Callable

from runner import ws_messages
from runner.ws_messages import WsMessage


def every_message() -> list[WsMessage]:
    step = {"kind": "step:ok", "durationMs": 3, "t": 1}
    collection = {"kind": "collection-run:finished", "outcome": "failed", "t": 2}
    return [
        ws_messages.scenarios_changed(),
        ws_messages.helpers_changed(),
        ws_messages.collections_changed(),
        ws_messages.bp_changed(),
        ws_messages.run_started("r1", "smoke"),
        ws_messages.run_step("r1", dict(step)),
        ws_messages.collection_run_step("c1", dict(collection)),
        ws_messages.run_finished("r1", "interrupted"),
        ws_messages.log_line("r1", "stderr", "boom"),
        ws_messages.error("the watcher restarted"),
    ]


def test_one_constructor_per_kind_and_each_valid(
    protocol_validate: Callable[[str, object], None],
) -> None:
    messages = every_message()
    kinds = [m["kind"] for m in messages]
    assert kinds == [
        "fs:scenarios-changed",
        "fs:helpers-changed",
        "fs:collections-changed",
        "fs:bp-changed",
        "fs:run-started",
        "fs:run-step",
        "fs:collection-run-step",
        "fs:run-finished",
        "log:line",
        "error",
    ]
    for message in messages:
        protocol_validate("WsMessage", message)
    assert messages[8] == {"kind": "log:line", "runId": "r1", "stream": "stderr", "line": "boom"}
