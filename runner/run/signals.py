"""How a run is stopped from outside: the first signal or abort ends it cleanly; a
later one, more than a second after (a double Ctrl-C is one), means "stop now".

Stopping now still ends the run directory with ``run:finished``; then the process
exits as the shell says (128 + the signal's number), and the Playwright driver, seeing
its pipe close, takes the browser with it. Signals a whole process group receives
also kill the driver at once, which :func:`quiet_driver_loss` keeps quiet about.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, NoReturn

from runner import events

if TYPE_CHECKING:
    from runner.run.console import ConsoleOutput
    from runner.run.runtime_state import RuntimeState
    from runner.run.steps import StepRecord
    from runner.store.rundir import RunDirectory

__all__ = [
    "DRIVER_LOST",
    "FORCE_AFTER_S",
    "RunStopper",
    "force_stop",
    "install_signal_handlers",
    "quiet_driver_loss",
]

FORCE_AFTER_S = 1.0
DRIVER_LOST = "Connection closed while reading from the driver"
SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")


class RunStopper:
    """The first stop request of a run, and what a later one means.

    ``on_first(name)`` stops the run cleanly; ``on_force()`` (only when ``can_force``:
    the run owns the process's signals) stops the process at once.
    """

    def __init__(
        self,
        on_first: Callable[[str], None],
        on_force: Callable[[], None],
        *,
        can_force: bool,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.on_first = on_first
        self.on_force = on_force
        self.can_force = can_force
        self.clock = clock
        self.signal_name: str | None = None
        self.first_signal_at = 0.0

    @property
    def stopped(self) -> bool:
        return self.signal_name is not None

    def request(self, name: str) -> None:
        now = self.clock()
        if self.signal_name is not None:
            if now - self.first_signal_at >= FORCE_AFTER_S and self.can_force:
                self.on_force()
            return
        self.signal_name = name
        self.first_signal_at = now
        self.on_first(name)


def install_signal_handlers(
    loop: asyncio.AbstractEventLoop, handler: Callable[[str], None]
) -> None:
    """SIGINT, SIGTERM and SIGHUP call ``handler(name)`` on ``loop``, where it can."""
    for name in SIGNALS:
        signum = getattr(signal, name)
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signum, handler, name)


def force_stop(
    console: ConsoleOutput,
    steps: StepRecord | None,
    runtime: RuntimeState | None,
    rundir: RunDirectory | None,
    signal_name: str | None,
) -> NoReturn:
    """End the run directory (best effort) and exit the process now."""
    console.line("stopping now")
    with contextlib.suppress(Exception):
        if steps is not None:
            steps.close_open_steps("the run was aborted", "AbortError")
        if rundir is not None:
            rundir.append(events.run_finished("aborted"))
        if runtime is not None:
            runtime.write_final("aborted")
        if rundir is not None:
            rundir.close()
    os._exit(128 + signal.Signals[signal_name or "SIGINT"].value)  # as the shell says


def quiet_driver_loss(loop: asyncio.AbstractEventLoop, context: dict[str, object]) -> None:
    """The loop's exception handler: everything but the driver's lost connection.

    SIGTERM or SIGHUP sent to the whole process group (a cancelled CI job, a closed
    terminal) kills the Playwright driver at once; Playwright then leaves a future
    holding this error that nobody awaits, and asyncio would print "Future exception
    was never retrieved" about a run that was aborted cleanly.
    """
    exc = context.get("exception")
    if type(exc) is Exception and str(exc) == DRIVER_LOST:
        return
    loop.default_exception_handler(context)
