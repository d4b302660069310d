"""The page's ``alert``, ``confirm`` and ``prompt`` dialogs: answered as the scenario says.

Playwright dismisses a dialog nobody listens for: a ``confirm("Delete?")`` then reads
``false``, and a suite ported from Playwright Test (``page.once('dialog', d =>
d.accept())``) had no way to say otherwise, nor any trace that a dialog had opened.
Here one listener per page answers every dialog by the scenario's policy
(``on_dialog("accept" | "dismiss", text?)``, dismiss until told), keeps the last one for
``dialog_message()``, and notes each in the page's console record (``console.json`` of
a failure bundle), so a failure after a dismissed confirm says what happened.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from playwright.async_api import Dialog
from playwright.async_api import Error as PlaywrightError

__all__ = ["DialogAction", "DialogPolicy", "SeenDialog"]

DialogAction = Literal["accept", "dismiss"]


@dataclass(frozen=True)
class SeenDialog:
    kind: str
    """``alert``, ``confirm``, ``prompt`` or ``beforeunload``."""
    message: str
    answer: str
    """How it was answered, as the console record says it: ``accepted``, ``dismissed``."""


class DialogPolicy:
    """How the run answers dialogs, and the dialogs it answered (safe from any thread:
    the scenario's thread sets the policy, the loop's answers)."""

    def __init__(self, note: Callable[[str], None] = lambda text: None) -> None:
        self.action: DialogAction = "dismiss"
        self.prompt_text: str | None = None
        self.last: SeenDialog | None = None
        self._note = note
        self._tasks: set[asyncio.Task[None]] = set()

    def set(self, action: DialogAction, prompt_text: str | None = None) -> None:
        self.action = action
        self.prompt_text = prompt_text

    def on_dialog(self, dialog: Dialog) -> None:
        """The page's ``dialog`` event (on the loop): answered without waiting here."""
        task = asyncio.get_running_loop().create_task(self._answer(dialog))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _answer(self, dialog: Dialog) -> None:
        kind, message = dialog.type, dialog.message
        # A beforeunload is accepted whatever the policy: dismissing it would keep the
        # page from closing at the end of the run.
        accept = self.action == "accept" or kind == "beforeunload"
        answer = "accepted" if accept else "dismissed"
        self.last = SeenDialog(kind, message, answer)
        typed = f" with {self.prompt_text!r}" if accept and kind == "prompt" else ""
        self._note(f"{kind} {message!r} {answer}{typed}")
        with contextlib.suppress(PlaywrightError):  # the page closed meanwhile
            if accept:
                await (
                    dialog.accept(self.prompt_text)
                    if kind == "prompt" and self.prompt_text is not None
                    else dialog.accept()
                )
            else:
                await dialog.dismiss()
