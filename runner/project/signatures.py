"""Names and argument counts of the browser built-ins (language.md §6).

Declared apart from their Playwright implementations so that ``unotest check`` can
flag unknown calls and wrong argument counts without importing Playwright.
``title`` is both a locator (``title("Close")``) and the page-title query
(``title()``), hence 0 to 1 arguments; ``evaluate`` is ``evaluate(js, arg?)`` in the
page and ``evaluate(locator, js, arg?)`` on an element, hence 1 to 3.
"""

from __future__ import annotations

__all__ = ["BROWSER_OPTIONS", "BROWSER_SIGNATURES", "EXPECTATIONS"]

BROWSER_SIGNATURES: dict[str, tuple[int, int | None]] = {
    # locators
    "role": (1, 3),
    "text": (1, 1),
    "label": (1, 1),
    "placeholder": (1, 1),
    "alt": (1, 1),
    "title": (0, 1),
    "testid": (1, 1),
    "css": (1, 1),
    "xpath": (1, 1),
    # navigation
    "goto": (1, 1),
    "reload": (0, 0),
    "back": (0, 0),
    "forward": (0, 0),
    # actions
    "click": (1, 2),
    "download": (1, 2),
    "dblclick": (1, 1),
    "fill": (2, 2),
    "type_text": (2, 2),
    "press": (1, 2),
    "check": (1, 1),
    "uncheck": (1, 1),
    "select": (2, 2),
    "hover": (1, 1),
    "focus": (1, 1),
    "blur": (1, 1),
    "dispatch_event": (2, 3),
    "upload": (2, 2),
    "scroll_to": (1, 1),
    "drag": (2, 2),
    # waits
    "wait": (1, 1),
    "wait_for": (1, 2),
    "wait_for_url": (1, 2),
    "wait_for_load": (0, 1),
    # queries
    "text_of": (1, 1),
    "value_of": (1, 1),
    "attr_of": (2, 2),
    "count": (1, 1),
    "is_visible": (1, 1),
    "is_checked": (1, 1),
    "is_enabled": (1, 1),
    "url": (0, 0),
    # the page's own JavaScript
    "evaluate": (1, 3),
    # retrying assertions
    "expect_visible": (1, 1),
    "expect_hidden": (1, 1),
    "expect_text": (2, 2),
    "expect_contains": (2, 2),
    "expect_value": (2, 2),
    "expect_count": (2, 2),
    "expect_checked": (1, 1),
    "expect_unchecked": (1, 1),
    "expect_enabled": (1, 1),
    "expect_disabled": (1, 1),
    "expect_attr": (3, 3),
    "expect_class": (2, 2),
    "expect_url": (1, 1),
    "expect_title": (1, 1),
    # their negations, retrying until the opposite holds
    "expect_not_visible": (1, 1),
    "expect_not_hidden": (1, 1),
    "expect_not_text": (2, 2),
    "expect_not_contains": (2, 2),
    "expect_not_value": (2, 2),
    "expect_not_count": (2, 2),
    "expect_not_checked": (1, 1),
    "expect_not_unchecked": (1, 1),
    "expect_not_enabled": (1, 1),
    "expect_not_disabled": (1, 1),
    "expect_focused": (1, 1),
    "expect_not_focused": (1, 1),
    "expect_editable": (1, 1),
    "expect_not_editable": (1, 1),
    "expect_not_attr": (3, 3),
    "expect_not_class": (2, 2),
    # output
    "screenshot": (0, 1),
    # pages: another tab of the run (a popup, target=_blank)
    "switch_page": (1, 1),
    # dialogs (alert, confirm, prompt)
    "on_dialog": (1, 2),
    "dialog_message": (0, 0),
}

EXPECTATIONS = frozenset(name for name in BROWSER_SIGNATURES if name.startswith("expect_"))
"""The retrying assertions: each takes one more, last argument, an options object
``{timeout}`` (Playwright's ``expect(locator).toBeVisible({timeout})``); the counts above
are their arguments without it."""
for _name in EXPECTATIONS:
    _low, _high = BROWSER_SIGNATURES[_name]
    BROWSER_SIGNATURES[_name] = (_low, (_high if _high is not None else _low) + 1)


# --- options ------------------------------------------------------------------------------
# The keys of the options object a built-in takes as its last argument; ``check`` flags
# any other key of one written as an object literal. Each group of built-ins keeps its
# own lines below (a new built-in with options adds its row to its group).

BROWSER_OPTIONS: dict[str, frozenset[str]] = {
    # actions (Playwright's names; `count` is ours for clickCount)
    "click": frozenset({"button", "count", "force", "modifiers", "timeout"}),
    "download": frozenset({"timeout"}),
    # waits
    "wait_for": frozenset({"timeout"}),
    "wait_for_url": frozenset({"timeout"}),
    # network (issue 30)
    # browser state (issue 30)
    # clock (issue 30)
    # files (issue 30)
    # dialogs and keys (issue 30)
}
for _name in EXPECTATIONS:
    BROWSER_OPTIONS.setdefault(_name, frozenset({"timeout"}))
