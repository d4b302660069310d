"""Names and argument counts of the browser built-ins (docs/reference.md).

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
    "goto": (1, 2),
    "reload": (0, 0),
    "back": (0, 0),
    "forward": (0, 0),
    # actions
    "click": (1, 2),
    "download": (1, 2),
    "dblclick": (1, 2),
    "fill": (2, 3),
    "type_text": (2, 3),
    "press": (1, 2),
    "check": (1, 2),
    "uncheck": (1, 2),
    "select": (2, 3),
    "hover": (1, 2),
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
    "expect_contains_class": (2, 2),
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
    "expect_not_contains_class": (2, 2),
    # output
    "screenshot": (0, 1),
    # pages: another tab of the run (a popup, target=_blank)
    "switch_page": (1, 1),
    # dialogs (alert, confirm, prompt)
    "on_dialog": (1, 2),
    "dialog_message": (0, 0),
    # browser state, clock, viewport, files (issue 30)
    "cookies": (0, 1),
    "add_cookies": (1, 1),
    "clear_cookies": (0, 1),
    "save_storage_state": (1, 1),
    "clock_install": (0, 1),
    "clock_set_fixed_time": (1, 1),
    "clock_set_system_time": (1, 1),
    "clock_run_for": (1, 1),
    "clock_fast_forward": (1, 1),
    "clock_pause_at": (1, 1),
    "clock_resume": (0, 0),
    "set_viewport": (2, 2),
    "read_file": (1, 1),
    # network (issue 30)
    "route": (1, 2),
    "unroute": (1, 1),
    "wait_for_response": (1, 2),
    "request": (2, 3),
    # actions and expectations (issue 30)
    "add_init_script": (1, 1),
    "expect_not_url": (1, 1),
    "expect_not_title": (1, 1),
    "expect_css": (3, 3),
    "expect_not_css": (3, 3),
    "expect_empty": (1, 1),
    "expect_not_empty": (1, 1),
    "expect_in_viewport": (1, 1),
    "expect_not_in_viewport": (1, 1),
    "expect_js_property": (3, 3),
    "expect_not_js_property": (3, 3),
    # dialogs, handles and keys (issue 30)
    "wait_for_dialog": (0, 1),
    "key_down": (1, 1),
    "key_up": (1, 1),
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
    "click": frozenset(
        {
            "button",
            "clickCount",
            "count",
            "delay",
            "force",
            "modifiers",
            "position",
            "timeout",
            "trial",
        }
    ),
    "dblclick": frozenset(
        {"button", "delay", "force", "modifiers", "position", "timeout", "trial"}
    ),
    "hover": frozenset({"force", "modifiers", "position", "timeout", "trial"}),
    "check": frozenset({"force", "timeout"}),
    "uncheck": frozenset({"force", "timeout"}),
    "fill": frozenset({"force", "timeout"}),
    "select": frozenset({"force", "timeout"}),
    "type_text": frozenset({"delay", "timeout"}),
    "goto": frozenset({"timeout", "waitUntil"}),
    "download": frozenset({"timeout"}),
    # waits
    "wait_for": frozenset({"timeout"}),
    "wait_for_url": frozenset({"timeout"}),
    # expectations (issue 30)
    "expect_in_viewport": frozenset({"ratio", "soft", "timeout"}),
    "expect_not_in_viewport": frozenset({"ratio", "soft", "timeout"}),
    # network (issue 30)
    "route": frozenset({"status", "headers", "contentType", "body", "json"}),
    "wait_for_response": frozenset({"timeout"}),
    "request": frozenset({"headers", "params", "data", "json", "form", "timeout"}),
    # browser state (issue 30)
    "clear_cookies": frozenset({"name", "domain", "path"}),
    # clock (issue 30)
    "clock_install": frozenset({"time"}),
    # files (issue 30)
    # dialogs and keys (issue 30)
    "wait_for_dialog": frozenset({"timeout"}),
}
for _name in EXPECTATIONS:
    BROWSER_OPTIONS.setdefault(_name, frozenset({"soft", "timeout"}))
