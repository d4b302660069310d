"""The browser pool: which of ``wsEndpoint``'s Playwright servers each worker's browser
comes from, which servers are down, and when a down one is tried again.

``wsEndpoint`` may list several servers (``playwright run-server`` on several hosts, a
browser grid's endpoints), each holding ``capacity`` browsers at once (by default as
many as the collection has workers). A collection's orchestrator and ``unotest
watch``'s warm pool place each new worker on the endpoint with the most free capacity
for its size (the largest share of it free; then the most places free; then the first
in the list), and tell it which through ``UNOTEST_BROWSER_ENDPOINT``
(:data:`ENDPOINT_ENV`); a worker started before anyone could tell it (the
collection's pre-launch) takes the same place by :func:`spread`, from its index and
the worker count alone, and says where it went in its ``ready`` report.

An endpoint that refuses a connection, or drops one and then refuses the worker's
reconnection, is down: the pool says so once (:meth:`BrowserPool.went_down` answers
the back-off the first time only), places no worker there, and after the back-off
(:data:`BACKOFF_FIRST_S`, doubled at each failed try up to :data:`BACKOFF_MAX_S`)
lets one worker try it again; one that connects brings it back. When every endpoint
is down at once the pool is :attr:`~BrowserPool.exhausted` and the collection stops.

Only the standard library and the config's :class:`BrowserEndpoint` are used: the
orchestrator, the watch pool and the worker share these rules.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from runner.project.config import BrowserEndpoint

__all__ = [
    "BACKOFF_FIRST_S",
    "BACKOFF_MAX_S",
    "ENDPOINT_ENV",
    "MAX_INFRA_RETRIES",
    "BrowserPool",
    "capacities",
    "endpoint_label",
    "short_reason",
    "spread",
    "worker_endpoint",
]

ENDPOINT_ENV = "UNOTEST_BROWSER_ENDPOINT"
"""A worker's endpoint: its index in the config's ``wsEndpoint`` list."""
BACKOFF_FIRST_S = 2.0
"""How long a down endpoint rests before a worker tries it again."""
BACKOFF_MAX_S = 60.0
"""The longest rest, however often it failed."""
MAX_INFRA_RETRIES = 3
"""How many times one scenario runs again after losing its browser endpoint: past
that, a scenario that takes every server down with it keeps the outcome it had."""


def capacities(endpoints: Sequence[BrowserEndpoint], workers: int) -> list[int]:
    """Each endpoint's capacity: its own, else the worker count (one server takes them
    all, several share them evenly)."""
    return [e.capacity if e.capacity is not None else max(1, workers) for e in endpoints]


def _freest(capacity: Sequence[int], used: Sequence[int], among: Sequence[int]) -> int:
    """Of the endpoints ``among``, the one with the largest share of its capacity free,
    then the most places free, then the first."""
    return max(
        among, key=lambda i: ((capacity[i] - used[i]) / capacity[i], capacity[i] - used[i], -i)
    )


def spread(capacity: Sequence[int], count: int) -> list[int]:
    """The endpoint of each of ``count`` workers placed one after another where the
    most capacity is free (:func:`_freest`); a worker past the pool's whole capacity
    shares the least loaded one."""
    used = [0] * len(capacity)
    placed: list[int] = []
    for _ in range(count):
        best = _freest(capacity, used, range(len(capacity)))
        used[best] += 1
        placed.append(best)
    return placed


def worker_endpoint(endpoints: Sequence[BrowserEndpoint], environ: Mapping[str, str]) -> int | None:
    """The endpoint a worker connects to: the one it was told (``ENDPOINT_ENV``), else
    its place by :func:`spread` among ``UNOTEST_WORKER_COUNT`` workers; None when the
    config has no ``wsEndpoint`` (a browser launched here)."""
    if not endpoints:
        return None
    told = environ.get(ENDPOINT_ENV, "")
    if told.isdigit() and int(told) < len(endpoints):
        return int(told)
    index, count = environ.get("UNOTEST_WORKER_INDEX", ""), environ.get("UNOTEST_WORKER_COUNT", "")
    if not (index.isdigit() and count.isdigit() and int(index) < int(count)):
        return 0
    return spread(capacities(endpoints, int(count)), int(count))[int(index)]


def short_reason(error: str) -> str:
    """Why an endpoint failed in the connection's own words: a launch error without its
    "could not connect to the Playwright server at … (wsEndpoint): " (the endpoint is
    named beside it anyway)."""
    return error.split("(wsEndpoint): ", 1)[-1]


def endpoint_label(shown: str) -> str:
    """An endpoint as the console's worker column shows it: host, port and a path
    other than ``/`` (``127.0.0.1:3001``)."""
    rest = shown.split("://", 1)[-1]
    return rest[:-1] if rest.endswith("/") else rest


@dataclass
class _Endpoint:
    shown: str
    capacity: int
    workers: set[int] = field(default_factory=set)
    down: bool = False
    failures: int = 0
    """Failed tries in a row (the back-off doubles with each)."""
    retry_at: float = 0.0
    reason: str = ""


class BrowserPool:
    """The endpoints of ``wsEndpoint`` and the workers on each (none: browsers are
    launched where the workers run, and the pool places nothing)."""

    def __init__(
        self,
        endpoints: Sequence[BrowserEndpoint],
        workers: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.clock = clock
        self.endpoints = [
            _Endpoint(e.shown, c)
            for e, c in zip(endpoints, capacities(endpoints, workers), strict=True)
        ]

    @property
    def remote(self) -> bool:
        """Browsers come from Playwright servers (``wsEndpoint`` is set)."""
        return bool(self.endpoints)

    @property
    def size(self) -> int:
        """How many browsers the pool holds at once, every endpoint up."""
        return sum(e.capacity for e in self.endpoints)

    def shown(self, endpoint: int) -> str:
        return self.endpoints[endpoint].shown

    def choose(self) -> int | None:
        """Where a new worker goes: the up endpoint with the most free capacity (as
        :func:`spread` places them); else a down one whose back-off is over and that
        nobody tries yet (the longest waiting); None when no endpoint takes a worker now."""
        free = [
            i for i, e in enumerate(self.endpoints) if not e.down and len(e.workers) < e.capacity
        ]
        if free:
            capacity = [e.capacity for e in self.endpoints]
            return _freest(capacity, [len(e.workers) for e in self.endpoints], free)
        now = self.clock()
        due = [
            (e.retry_at, i)
            for i, e in enumerate(self.endpoints)
            if e.down and not e.workers and e.retry_at <= now
        ]
        return min(due)[1] if due else None

    def attach(self, worker: int, endpoint: int) -> None:
        """``worker`` is on ``endpoint`` (placed there, or it says it went there)."""
        self.detach(worker)
        self.endpoints[endpoint].workers.add(worker)

    def detach(self, worker: int) -> None:
        """``worker`` ended: its place is free."""
        for endpoint in self.endpoints:
            endpoint.workers.discard(worker)

    def endpoint_of(self, worker: int) -> int | None:
        return next((i for i, e in enumerate(self.endpoints) if worker in e.workers), None)

    def went_down(self, endpoint: int, reason: str) -> float | None:
        """``endpoint`` refused a connection or dropped one: down, tried again after a
        back-off. Answers that back-off in seconds when it was up until now (to be
        said, once), None when it was down already (a try that failed again)."""
        state = self.endpoints[endpoint]
        reason = short_reason(reason)
        was_up = not state.down
        if not was_up and state.retry_at > self.clock():
            return None  # another worker of the same outage: no try failed, no longer wait
        state.down = True
        state.failures += 1
        backoff: float = min(BACKOFF_MAX_S, BACKOFF_FIRST_S * 2.0 ** (state.failures - 1))
        state.retry_at = self.clock() + backoff
        if was_up:
            state.reason = reason
            return backoff
        return None

    def came_up(self, endpoint: int) -> bool:
        """A worker connected to ``endpoint``: it is up (True when it was down)."""
        state = self.endpoints[endpoint]
        was_down = state.down
        state.down = False
        state.failures = 0
        return was_down

    @property
    def exhausted(self) -> bool:
        """Every endpoint is down: no browser is left to run on."""
        return self.remote and all(e.down for e in self.endpoints)

    def wait_s(self) -> float | None:
        """Seconds until a down endpoint may be tried again (None: none is down)."""
        due = [e.retry_at for e in self.endpoints if e.down and not e.workers]
        return max(0.0, min(due) - self.clock()) if due else None

    def down_list(self) -> str:
        """The endpoints down, each with why: the sentence of an exhausted pool."""
        return "; ".join(f"{e.shown}: {e.reason}" for e in self.endpoints if e.down)
