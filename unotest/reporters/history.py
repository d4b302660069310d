"""History, the third transport: a finished run's envelopes saved under ``unotest/.history``."""

from __future__ import annotations

import sys

from runner.project.config import Config
from runner.project.root import Project
from runner.store.envelope import Envelope
from runner.store.history import save_history

__all__ = ["history_quietly"]


def history_quietly(project: Project, run_id: str, events: list[Envelope], config: Config) -> None:
    """Save the run to history; a history that cannot be written costs a warning, never
    the run's own exit code."""
    try:
        save_history(project, run_id, events, config.history)
    except OSError as err:
        print(f"warning: history not saved: {err.strerror or err}", file=sys.stderr)
