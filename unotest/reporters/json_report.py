"""``--reporter json=PATH``: every envelope of the run, written as one JSON array once
the run has ended."""

from __future__ import annotations

import json
from pathlib import Path

from runner.store.envelope import Envelope
from unotest.reporters.report_file import write_report

__all__ = ["JsonReport"]


class JsonReport:
    """A sink keeping each envelope it receives; :meth:`finish` writes them."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.events: list[Envelope] = []

    def __call__(self, event: Envelope) -> None:
        self.events.append(event)

    def finish(self) -> None:
        text = json.dumps(self.events, ensure_ascii=False, indent=2)
        write_report(self.path, text + "\n")
