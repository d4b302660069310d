"""The built-ins over the page's dialogs (``alert``, ``confirm``, ``prompt``): how the
next ones are answered (:class:`runner.browser.dialogs.DialogPolicy`), what the last one
said, and each one read in turn.

They are a group of their own because the answers are given on the browser's loop, as
the dialogs open, while the scenario only says beforehand how (``on_dialog``) and reads
afterwards what happened (``dialog_message``, ``wait_for_dialog``): the policy is the
one place both sides meet, and the rules of its answers are kept in one module.
"""

from __future__ import annotations

from collections.abc import Callable

from dsl.errors import BuiltinError
from dsl.values import Value, render, type_name
from runner.browser.dialogs import DialogAnswer, DialogPolicy, SeenDialog
from runner.builtins.page_calls import PageCalls, timeout_option

__all__ = ["Dialogs"]

_ANSWER = '"accept", "dismiss" or {action: "accept", text: "..."}'
"""What one item of ``on_dialog([...])`` may be."""


class Dialogs:
    def __init__(self, calls: PageCalls, dialogs: DialogPolicy) -> None:
        self.calls = calls
        self.dialogs = dialogs

    def builtins(self) -> dict[str, Callable[..., Value]]:
        return {
            "on_dialog": self.on_dialog,
            "dialog_message": self.dialog_message,
            "wait_for_dialog": self.wait_for_dialog,
        }

    def on_dialog(self, action: Value, text: Value = None) -> Value:
        """How the page's next dialogs are answered (Playwright's ``page.on('dialog',
        d => d.accept(text))``; dismissed until then), or, given a list, the next ones
        one by one (``page.once``), the standing answer coming back after it."""
        if isinstance(action, list):
            if text is not None:
                raise BuiltinError(
                    "TypeError",
                    "on_dialog(list) takes no text: give a prompt's text in its item, "
                    '{action: "accept", text: "Ada"}',
                )
            if not action:
                raise BuiltinError(
                    "TypeError",
                    'on_dialog([]) answers no dialog: give one answer per dialog, e.g. ["accept", '
                    '"dismiss"]',
                )
            answers = [_list_item(i + 1, item) for i, item in enumerate(action)]
            self.dialogs.answer_next(answers)
            return None
        if action not in ("accept", "dismiss"):
            if isinstance(action, str):
                said = f'on_dialog() takes "accept" or "dismiss", got {render(action)}'
            else:
                said = (
                    'on_dialog() takes "accept", "dismiss" or a list of answers (one per '
                    f"dialog), got {type_name(action)}"
                )
            raise BuiltinError("TypeError", said)
        if text is not None and (action != "accept" or not isinstance(text, str)):
            raise BuiltinError(
                "TypeError",
                'on_dialog("accept", text): the text is what a prompt() gets, a string; '
                f"got {render(text)}" + (" with dismiss" if action == "dismiss" else ""),
            )
        answer = DialogAnswer("accept", text) if action == "accept" else DialogAnswer("dismiss")
        self.dialogs.answer_always(answer)
        return None

    def dialog_message(self) -> Value:
        """The message of the last dialog the page opened (null: none yet)."""
        last = self.dialogs.last
        return last.message if last is not None else None

    def wait_for_dialog(self, options: Value = None) -> Value:
        """The oldest dialog opened in this run that no earlier call returned, waiting for
        one to open up to the action timeout (or ``{timeout}``); it was answered by the
        policy as it opened (Playwright's ``page.waitForEvent('dialog')``)."""
        own = timeout_option("wait_for_dialog", options, "timeout.action")
        waited = own if own is not None else self.calls.timeouts.action
        seen = self.calls.bridge.call(self.dialogs.next_unread(waited / 1000))
        if seen is None:
            raise BuiltinError(
                "TimeoutError",
                f"wait_for_dialog: no dialog opened within {int(waited)} ms"
                + _already_read(self.dialogs.last_read),
            )
        return {
            "type": seen.kind,
            "message": seen.message,
            "default_value": seen.default_value,
            "answer": seen.answer,
            "text": seen.text,
        }


def _already_read(last: SeenDialog | None) -> str:
    if last is None:
        return ""
    return (
        f" (the last one, {last.kind} {render(last.message)}, was returned by an earlier "
        "wait_for_dialog)"
    )


def _list_item(number: int, item: Value) -> DialogAnswer:
    """One answer of ``on_dialog([...])``: ``"accept"``, ``"dismiss"`` or ``{action,
    text?}``, said in one sentence when it is none of them."""
    if item in ("accept", "dismiss"):
        return DialogAnswer("accept" if item == "accept" else "dismiss")
    if isinstance(item, dict) and set(item) <= {"action", "text"}:
        action, text = item.get("action"), item.get("text")
        if action == "accept" and (text is None or isinstance(text, str)):
            return DialogAnswer("accept", text)
        if action == "dismiss" and text is None:
            return DialogAnswer("dismiss")
        if action == "dismiss" or (action == "accept" and not isinstance(text, str)):
            raise BuiltinError(
                "TypeError",
                f"on_dialog() list item {number}: the text is what an accepted prompt() "
                f"gets, a string, and goes only with accept; got {render(item)}",
            )
    raise BuiltinError(
        "TypeError", f"on_dialog() list item {number}: {render(item)} is no answer: {_ANSWER}"
    )
