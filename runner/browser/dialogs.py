"""The page's ``alert``, ``confirm`` and ``prompt`` dialogs: answered as the scenario says.

Playwright dismisses a dialog nobody listens for: a ``confirm("Delete?")`` then reads
``false``, and a suite ported from Playwright Test (``page.once('dialog', d =>
d.accept())``) had no way to say otherwise, nor any trace that a dialog had opened.
Here one listener per page answers every dialog as it opens, by the scenario's policy:
the next answer of a list given by ``on_dialog([...])`` (Playwright's ``once``), else the
standing one (``on_dialog("accept" | "dismiss", text?)``, dismiss until told). It keeps
the last dialog for ``dialog_message()`` and every dialog not yet read for
``wait_for_dialog()``, and notes each in the page's console record (``console.json`` of a
failure bundle), so a failure after a dismissed confirm says what happened.

Why answered at once rather than held for the scenario: while a dialog is open the page
is frozen, and the action that opened it (a click) does not return until it is
answered, so the scenario could never get to read it first. The answer is decided when
the dialog opens, in the order the dialogs open, and ``wait_for_dialog`` then reads what
happened: each dialog once, oldest first, whether it opened before the call or during it.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

from playwright.async_api import Dialog
from playwright.async_api import Error as PlaywrightError

__all__ = ["MAX_UNREAD", "DialogAction", "DialogAnswer", "DialogPolicy", "SeenDialog"]

DialogAction = Literal["accept", "dismiss"]
MAX_UNREAD = 1000
"""Dialogs kept for ``wait_for_dialog`` at most; beyond, the oldest unread is dropped (a
page opening alerts in a loop must not grow the run without bound)."""


@dataclass(frozen=True)
class DialogAnswer:
    """How one dialog is answered."""

    action: DialogAction
    text: str | None = None
    """What an accepted prompt gets; None: its default value (``prompt(msg, default)``'s
    second argument, "" when it has none), as the OK button of a browser gives it."""


@dataclass(frozen=True)
class SeenDialog:
    kind: str
    """``alert``, ``confirm``, ``prompt`` or ``beforeunload``."""
    message: str
    answer: str
    """How it was answered, as the console record says it: ``accepted``, ``dismissed``."""
    default_value: str = ""
    """A prompt's default value ("" for the others, as Playwright's ``defaultValue``)."""
    text: str | None = None
    """What an accepted prompt was given (None: not a prompt, or dismissed)."""

    def noted(self) -> str:
        """The console record's line: ``prompt 'Name?' accepted with 'Ada'``."""
        typed = f" with {self.text!r}" if self.text is not None else ""
        return f"{self.kind} {self.message!r} {self.answer}{typed}"


class DialogPolicy:
    """How the run answers dialogs, and the dialogs it answered (safe from any thread:
    the scenario's thread sets the policy, the loop's answers and reads them)."""

    def __init__(self, note: Callable[[str], None] = lambda text: None) -> None:
        self._lock = threading.Lock()
        self.standing = DialogAnswer("dismiss")
        self._once: deque[DialogAnswer] = deque()
        self.last: SeenDialog | None = None
        self.last_read: SeenDialog | None = None
        """The dialog ``wait_for_dialog`` returned last (for its timeout's message)."""
        self._unread: deque[SeenDialog] = deque(maxlen=MAX_UNREAD)
        self._waiters: list[asyncio.Future[None]] = []
        self._note = note
        self._tasks: set[asyncio.Task[None]] = set()

    def answer_always(self, answer: DialogAnswer) -> None:
        """The standing answer from now on; the answers of a list not used yet are dropped."""
        with self._lock:
            self.standing = answer
            self._once.clear()

    def answer_next(self, answers: Iterable[DialogAnswer]) -> None:
        """One answer per dialog for the next dialogs, in order, then the standing answer
        again; replaces the answers of an earlier list not used yet."""
        with self._lock:
            self._once = deque(answers)

    def on_dialog(self, dialog: Dialog) -> None:
        """The page's ``dialog`` event (on the loop): its answer decided now, in the order
        the dialogs open, and given without waiting here."""
        seen = self._decide(dialog)
        self.last = seen
        self._unread.append(seen)
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)
        self._note(seen.noted())
        task = asyncio.get_running_loop().create_task(self._answer(dialog, seen))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _decide(self, dialog: Dialog) -> SeenDialog:
        kind, default = dialog.type, dialog.default_value
        if kind == "beforeunload":
            # Accepted whatever the policy, and no answer of a list used: dismissing it
            # would keep the page from closing at the end of the run.
            answer = DialogAnswer("accept")
        else:
            with self._lock:
                answer = self._once.popleft() if self._once else self.standing
        accept = answer.action == "accept"
        text = None
        if accept and kind == "prompt":
            text = answer.text if answer.text is not None else default
        return SeenDialog(
            kind, dialog.message, "accepted" if accept else "dismissed", default, text
        )

    async def _answer(self, dialog: Dialog, seen: SeenDialog) -> None:
        with contextlib.suppress(PlaywrightError):  # the page closed meanwhile
            if seen.answer == "dismissed":
                await dialog.dismiss()
            elif seen.text is not None:
                await dialog.accept(seen.text)
            else:
                await dialog.accept()

    async def next_unread(self, timeout_s: float) -> SeenDialog | None:
        """The oldest dialog not returned yet, waiting up to ``timeout_s`` for one to
        open (on the loop, as the dialogs come); None when none did."""
        if not self._unread:
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await asyncio.wait_for(waiter, timeout_s)
            except TimeoutError:
                return None
            finally:
                self._waiters.remove(waiter)
        seen = self._unread.popleft()
        self.last_read = seen
        return seen
