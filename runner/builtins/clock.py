"""The page's clock: fixed time, timers run forward (Playwright's ``page.clock``).
"""

from __future__ import annotations

from collections.abc import Callable

from dsl.values import Value
from runner.builtins.page_calls import PageCalls

__all__ = ["Clock"]


class Clock:
    def __init__(self, calls: PageCalls) -> None:
        self.calls = calls

    def builtins(self) -> dict[str, Callable[..., Value]]:
        return {}
