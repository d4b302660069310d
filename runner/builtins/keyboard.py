"""The keyboard held: ``key_down`` and ``key_up`` (Playwright's ``keyboard.down/up``).

``press`` is a key pressed and released at once; a suite that holds Shift while it
types or clicks (a range selection, a shift-click) needs the two halves apart. They are
page-wide (the focused element gets the keys), so they take a key and no target, and a
key still held changes every later key press, typed text and click of the run until
``key_up`` (with Shift, each key event and click carries ``shiftKey``, and
``press("KeyA")`` types "A"; text given to ``type_text`` is typed as written).
"""

from __future__ import annotations

from collections.abc import Callable

from dsl.errors import BuiltinError
from dsl.values import Value
from runner.builtins.page_calls import PageCalls, string_arg

__all__ = ["Keyboard"]


class Keyboard:
    def __init__(self, calls: PageCalls) -> None:
        self.calls = calls

    def builtins(self) -> dict[str, Callable[..., Value]]:
        return {"key_down": self.key_down, "key_up": self.key_up}

    def key_down(self, key: Value) -> Value:
        """Playwright's ``keyboard.down(key)``: the key held until ``key_up(key)``."""
        name = _key_name("key_down", key)
        return self.calls.run("key_down", self.calls.page.keyboard.down(name))

    def key_up(self, key: Value) -> Value:
        """Playwright's ``keyboard.up(key)``: the key released."""
        name = _key_name("key_up", key)
        return self.calls.run("key_up", self.calls.page.keyboard.up(name))


def _key_name(fn: str, key: Value) -> str:
    """One key's name; a chord (``"Shift+A"``) is ``press``'s, said at once. A name the
    browser does not know is said by Playwright, in the scenario's words
    (:func:`runner.builtins.page_calls.PageCalls.run`)."""
    name = string_arg(fn, key, 'a key name such as "Shift"')
    if "+" in name[1:]:
        first = name.split("+", 1)[0]
        raise BuiltinError(
            "TypeError",
            f"{fn}() holds one key, got {name!r}: hold each with its own call, "
            f'{fn}("{first}"), or press the chord at once with press({name!r})',
        )
    return name
