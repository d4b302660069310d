"""Exit codes, and the one table that maps the product's exceptions to them.

0 all passed / clean, 1 a scenario failed or a check found problems,
2 usage or configuration error, 130 interrupted by SIGINT. Commands return the first
two; the last two come from exceptions, translated in ``unotest.cli.main`` through
``exit_code_for`` and nowhere else.
"""

from __future__ import annotations

import signal

from runner.errors import UnotestError
from runner.protocol import RunOutcome

__all__ = [
    "EXIT_ABORTED",
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_USAGE",
    "exit_code_for",
    "exit_code_for_run",
    "signal_exit_code",
]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_ABORTED = 130


def exit_code_for(err: BaseException) -> int:
    """The exit code of an exception that reached the edge."""
    if isinstance(err, KeyboardInterrupt):
        return EXIT_ABORTED
    if isinstance(err, UnotestError):
        return EXIT_USAGE  # every error of the tree is the user's to fix: usage, config, ...
    return EXIT_USAGE


def signal_exit_code(name: str | None) -> int:
    """128 + the signal's number, as a shell reports a death by it (SIGINT when unknown)."""
    try:
        return 128 + signal.Signals[name or "SIGINT"].value
    except KeyError:
        return EXIT_ABORTED


def exit_code_for_run(outcome: RunOutcome, signal_name: str | None = None) -> int:
    """A scenario's or collection's end: passed 0, failed 1, aborted by a signal 128+n."""
    if outcome == "completed":
        return EXIT_OK
    if outcome == "aborted":
        return signal_exit_code(signal_name)
    return EXIT_FAILED
