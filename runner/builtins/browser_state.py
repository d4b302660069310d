"""The browser's state in a scenario: cookies, local storage, a saved storage state.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from dsl.values import Value
from runner.builtins.page_calls import PageCalls

__all__ = ["BrowserState"]


class BrowserState:
    def __init__(self, calls: PageCalls, root: Path, add_secret: Callable[[str], None]) -> None:
        self.calls = calls
        self.root = root.resolve()
        self.add_secret = add_secret

    def builtins(self) -> dict[str, Callable[..., Value]]:
        return {}
