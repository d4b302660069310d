"""A worker's orders, read from its stdin on the event loop's own thread.

A collection sends a worker its next run while the current one runs, and may abort
that queued run by its id (Ctrl-C, ``--bail``) a moment before the current one ends.
The worker must then see the abort before it starts the queued run: an order read by
a thread of its own reached the loop only as a callback queued behind the current
run's end, so a Ctrl-C could start the very run it aborted (seen in CI). Read here,
everything the orchestrator wrote before the worker decides is read when it decides
(:meth:`OrderPipe.read_now`), in the order it was written.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import Callable

from runner.protocol import JSONObject

__all__ = ["OrderPipe"]

_CHUNK = 1 << 16


class OrderPipe:
    """JSON lines from a file descriptor, each whole order handed to ``deliver`` in the
    order written; ``None`` once, at end-of-file (the orchestrator is gone). A line that
    is not a JSON object is skipped: a worker obeys what it understands."""

    def __init__(self, fd: int, deliver: Callable[[JSONObject | None], None]) -> None:
        self.fd = fd
        self.deliver = deliver
        self.pending = b""
        self.ended = False
        self.loop: asyncio.AbstractEventLoop | None = None
        with contextlib.suppress(OSError):  # a closed descriptor reads as the end
            os.set_blocking(fd, False)

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        """Read as the orders arrive. A descriptor that cannot be watched (a regular
        file, ``/dev/null``) never blocks either: read to its end at once."""
        try:
            loop.add_reader(self.fd, self.read_now)
        except (OSError, ValueError):
            self.read_now()  # at worst an end-of-file: nobody can give orders
            return
        self.loop = loop

    def read_now(self) -> None:
        """Deliver every order written so far, without waiting for more."""
        if self.ended:
            return
        end = False
        while True:
            try:
                chunk = os.read(self.fd, _CHUNK)
            except BlockingIOError:
                break
            except OSError:
                chunk = b""
            if not chunk:
                end = True
                break
            self.pending += chunk
        *lines, self.pending = self.pending.split(b"\n")
        if end and self.pending:
            lines.append(self.pending)  # a last order without its newline
            self.pending = b""
        for line in lines:
            order = _order(line)
            if order is not None:
                self.deliver(order)
        if end:
            self.ended = True
            self.stop()
            self.deliver(None)

    def stop(self) -> None:
        if self.loop is not None:
            with contextlib.suppress(Exception):
                self.loop.remove_reader(self.fd)
            self.loop = None


def _order(line: bytes) -> JSONObject | None:
    try:
        order = json.loads(line)
    except ValueError:
        return None
    return order if isinstance(order, dict) else None
