"""The keyboard held: ``key_down`` and ``key_up`` (Playwright's ``keyboard.down/up``)."""

from __future__ import annotations

from collections.abc import Callable

from dsl.values import Value
from runner.builtins.page_calls import PageCalls

__all__ = ["Keyboard"]


class Keyboard:
    def __init__(self, calls: PageCalls) -> None:
        self.calls = calls

    def builtins(self) -> dict[str, Callable[..., Value]]:
        return {}
