"""A worker's order pipe (``runner/workers/orders.py``): real pipes, a real event loop.

What the worker's queue relies on: whatever the orchestrator has written is delivered,
whole and in order, the moment the worker asks (``read_now``), with no callback left
to come later; an order split across writes waits for its end; the end of the pipe is
delivered once, after the orders before it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import Iterator

import pytest

from runner.protocol import JSONObject
from runner.workers.orders import OrderPipe


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read, write = os.pipe()
    yield read, write
    for fd in (read, write):
        with contextlib.suppress(OSError):
            os.close(fd)


def line(order: JSONObject) -> bytes:
    return (json.dumps(order) + "\n").encode()


def test_read_now_delivers_everything_written_so_far_in_order(pipe: tuple[int, int]) -> None:
    read, write = pipe
    got: list[JSONObject | None] = []
    orders = OrderPipe(read, got.append)
    os.write(write, line({"type": "abort", "orderId": "0-1"}))
    os.write(write, line({"type": "abort", "orderId": "0-2"}) + line({"type": "exit"}))
    orders.read_now()
    assert got == [
        {"type": "abort", "orderId": "0-1"},
        {"type": "abort", "orderId": "0-2"},
        {"type": "exit"},
    ]
    orders.read_now()  # nothing new: nothing delivered, nothing blocks
    assert len(got) == 3


def test_an_order_split_across_writes_waits_for_its_end(pipe: tuple[int, int]) -> None:
    read, write = pipe
    got: list[JSONObject | None] = []
    orders = OrderPipe(read, got.append)
    whole = line({"type": "run", "scenario": "s", "orderId": "0-1"})
    os.write(write, whole[:10])
    orders.read_now()
    assert got == []
    os.write(write, whole[10:])
    orders.read_now()
    assert got == [{"type": "run", "scenario": "s", "orderId": "0-1"}]


def test_what_is_not_an_order_is_skipped(pipe: tuple[int, int]) -> None:
    read, write = pipe
    got: list[JSONObject | None] = []
    orders = OrderPipe(read, got.append)
    os.write(write, b"not json\n[1, 2]\n\n" + line({"type": "exit"}))
    orders.read_now()
    assert got == [{"type": "exit"}]


def test_the_end_comes_once_after_the_orders_before_it(pipe: tuple[int, int]) -> None:
    read, write = pipe
    got: list[JSONObject | None] = []
    orders = OrderPipe(read, got.append)
    os.write(write, line({"type": "exit"}) + b'{"type": "abort"}')  # the last without \n
    os.close(write)
    orders.read_now()
    orders.read_now()
    assert got == [{"type": "exit"}, {"type": "abort"}, None]


def test_on_the_loop_orders_arrive_as_they_are_written(pipe: tuple[int, int]) -> None:
    read, write = pipe

    async def scenario() -> list[JSONObject | None]:
        got: list[JSONObject | None] = []
        arrived = asyncio.Event()

        def deliver(order: JSONObject | None) -> None:
            got.append(order)
            if order is None:
                arrived.set()

        orders = OrderPipe(read, deliver)
        orders.start(asyncio.get_running_loop())
        os.write(write, line({"type": "run", "scenario": "a", "orderId": "0-1"}))
        os.close(write)
        await asyncio.wait_for(arrived.wait(), 10)
        return got

    assert asyncio.run(scenario()) == [
        {"type": "run", "scenario": "a", "orderId": "0-1"},
        None,
    ]


def test_a_descriptor_that_cannot_be_watched_is_read_at_once() -> None:
    """``/dev/null`` as stdin: no orders, and the end at once, not an error."""

    async def scenario() -> list[JSONObject | None]:
        got: list[JSONObject | None] = []
        fd = os.open(os.devnull, os.O_RDONLY)
        try:
            OrderPipe(fd, got.append).start(asyncio.get_running_loop())
        finally:
            os.close(fd)
        return got

    assert asyncio.run(scenario()) == [None]
