"""The network in a scenario: routes that mock, abort or record requests, waiting for
the exchanges they matched, and API requests sharing the page's cookies.
"""

from __future__ import annotations

from collections.abc import Callable

from dsl.values import Value
from runner.builtins.page_calls import PageCalls

__all__ = ["Network"]


class Network:
    def __init__(self, calls: PageCalls, log: Callable[[str], None]) -> None:
        self.calls = calls
        self.log = log

    def builtins(self) -> dict[str, Callable[..., Value]]:
        return {}
