"""``--reporter ndjson``: each envelope printed the moment it is emitted."""

from __future__ import annotations

from collections.abc import Callable
from typing import TextIO

from runner.store import envelope
from runner.store.envelope import Envelope

__all__ = ["ndjson_printer"]


def ndjson_printer(out: TextIO) -> Callable[[Envelope], None]:
    """Each envelope as one line on ``out``, flushed, for a pipe reading it live."""

    def sink(event: Envelope) -> None:
        out.write(envelope.to_json_line(event) + "\n")
        out.flush()

    return sink
