"""The built-ins over the page's dialogs (``alert``, ``confirm``, ``prompt``): how the
next ones are answered (:class:`runner.browser.dialogs.DialogPolicy`), and what the
last one said.
"""

from __future__ import annotations

from collections.abc import Callable

from dsl.errors import BuiltinError
from dsl.values import Value, render
from runner.browser.dialogs import DialogPolicy
from runner.builtins.page_calls import PageCalls

__all__ = ["Dialogs"]


class Dialogs:
    def __init__(self, calls: PageCalls, dialogs: DialogPolicy) -> None:
        self.calls = calls
        self.dialogs = dialogs

    def builtins(self) -> dict[str, Callable[..., Value]]:
        return {"on_dialog": self.on_dialog, "dialog_message": self.dialog_message}

    def on_dialog(self, action: Value, text: Value = None) -> Value:
        """How the page's next dialogs are answered, until said otherwise (Playwright's
        ``page.on('dialog', d => d.accept(text))``); dismissed until then."""
        if action not in ("accept", "dismiss"):
            raise BuiltinError(
                "TypeError",
                f'on_dialog() takes "accept" or "dismiss", got {render(action)}',
            )
        if text is not None and (action != "accept" or not isinstance(text, str)):
            raise BuiltinError(
                "TypeError",
                'on_dialog("accept", text): the text is what a prompt() gets, a string; '
                f"got {render(text)}" + (" with dismiss" if action == "dismiss" else ""),
            )
        self.dialogs.set("accept" if action == "accept" else "dismiss", text)
        return None

    def dialog_message(self) -> Value:
        """The message of the last dialog the page opened (null: none yet)."""
        last = self.dialogs.last
        return last.message if last is not None else None
