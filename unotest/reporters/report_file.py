"""The one writer of a report file (JUnit, JSON): its folder made, a failure one sentence."""

from __future__ import annotations

from pathlib import Path

from runner.errors import UsageError

__all__ = ["write_report"]


def write_report(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as err:
        raise UsageError(f"cannot write report {path}: {err.strerror or err}") from None
