"""One run's page, and every call the browser built-ins make on it.

The built-ins are split by what they do (actions and queries in
:mod:`runner.builtins.table`, expectations in :mod:`runner.builtins.expectations`, scripts in
:mod:`runner.builtins.page_eval`), but they share one page, one set of timeouts and one
translation of Playwright's errors. That shared part lives here, so each of those
modules reaches the page the same way and a failure reads the same whichever built-in
met it: a Playwright exception becomes the language's ``LocatorError`` /
``TimeoutError`` / ``NavigationError`` / ``Error`` (as :class:`dsl.errors.BuiltinError`,
which the interpreter places at the call site) here, at the boundary.

The options object an action or an expectation takes last (``click(t, {button,
timeout})``) is read here too, by one reader (:func:`read_options`) over a table of
:class:`Option` per built-in: every built-in refuses a wrong key or value in the same
sentence (the built-in, the key, what it takes, the closest key for a typo), as
``unotest check`` does before the run.
"""

from __future__ import annotations

import math
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urljoin

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Locator, Page
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from dsl.errors import BuiltinError, suggestion
from dsl.values import RegexValue, Value, render, type_name
from runner.browser.bridge import LoopBridge
from runner.builtins.locators import (
    LocatorValue,
    SmartTarget,
    TextMatcher,
    describe_candidates,
    show_matcher,
    to_pattern,
)

__all__ = [
    "INVALID",
    "MODIFIERS",
    "POSITION",
    "STRICT_VIOLATION",
    "Option",
    "PageCalls",
    "Target",
    "Timeouts",
    "first_line",
    "flag",
    "in_range",
    "one_of",
    "read_options",
    "string_arg",
    "target_of",
    "timeout_of",
    "timeout_option",
    "whole_from",
]

T = TypeVar("T")


@dataclass(frozen=True)
class Timeouts:
    action: float
    expect: float
    navigation: float


Target = LocatorValue | SmartTarget


def target_of(fn: str, value: Value, for_input: bool = False) -> Target:
    if isinstance(value, LocatorValue):
        return value
    if isinstance(value, str):
        return SmartTarget(value, for_input)
    raise BuiltinError(
        "TypeError", f"{fn}() needs a Locator or a string target, got {type_name(value)}"
    )


def string_arg(fn: str, value: Value, what: str = "a string") -> str:
    if not isinstance(value, str):
        raise BuiltinError("TypeError", f"{fn}() needs {what}, got {type_name(value)}")
    return value


MAX_TIMEOUT_MS = 2**31 - 1
"""As the config's timeouts (runner.project.config.MAX_TIMEOUT_MS)."""


def timeout_option(
    fn: str, options: Value, config_key: str, advice: Mapping[str, str] | None = None
) -> float | None:
    """The ``timeout`` of a call's last argument ``{timeout}``, in whole milliseconds
    (rounded up, as the config's are): this call's own, in place of the config's
    ``config_key``. None when it gives none (``null`` or ``{}``, as ``click`` takes
    them). ``advice``: what to write instead of an option some other tool has here
    (Playwright's ``waitFor({state})``)."""
    if options is None:
        return None
    if not isinstance(options, dict):
        raise BuiltinError(
            "TypeError",
            f"{fn}() takes an options object {{timeout}} last, got {type_name(options)}",
        )
    for key in options:
        if key != "timeout":
            said = (advice or {}).get(key)
            raise BuiltinError(
                "TypeError",
                f"{fn}() has no option '{key}' (its only option: timeout, in milliseconds)"
                + (f": {said}" if said else ""),
            )
    if "timeout" not in options:
        return None
    timeout: float = read_options(fn, options, {"timeout": timeout_of(config_key)})["timeout"]
    return timeout


# --- options objects ------------------------------------------------------------------

INVALID = object()
"""What :attr:`Option.read` answers for a value the option does not take."""


@dataclass(frozen=True)
class Option:
    """One key of a built-in's options object: Playwright's keyword argument for it,
    what it takes in words (a wrong value's message says it), and ``read``: the value
    as Playwright takes it, or :data:`INVALID`."""

    keyword: str
    takes: str
    read: Callable[[Value], object]


def read_options(fn: str, options: Value, known: Mapping[str, Option]) -> dict[str, Any]:
    """The options object a built-in got last (``null``: none) as Playwright's keyword
    arguments, every key and value checked: an unknown key names the closest one and
    every key there is, a wrong value what its key takes."""
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise BuiltinError(
            "TypeError", f"{fn}() options must be an object, got {type_name(options)}"
        )
    kwargs: dict[str, Any] = {}
    given_as: dict[str, str] = {}
    for key, given in options.items():
        option = known.get(key)
        if option is None:
            raise BuiltinError(
                "TypeError",
                f"{fn}() has no option '{key}'{suggestion(key, known)} "
                f"(its options: {', '.join(sorted(known))})",
            )
        read = option.read(given)
        if read is INVALID:
            raise BuiltinError(
                "TypeError", f"{fn}() option {key}: {render(given)} is not valid: {option.takes}"
            )
        if option.keyword in given_as:
            raise BuiltinError(
                "TypeError",
                f"{fn}() options {given_as[option.keyword]} and {key} are one option "
                "under two names: give one of them",
            )
        given_as[option.keyword] = key
        kwargs[option.keyword] = read
    return kwargs


def _number(value: Value) -> float | None:
    """A finite number, or None (a boolean, NaN and the infinities are no numbers here)."""
    if isinstance(value, float | int) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def flag(keyword: str, meaning: str) -> Option:
    """``true`` or ``false``."""
    return Option(
        keyword, f"true or false ({meaning})", lambda v: v if isinstance(v, bool) else INVALID
    )


def whole_from(keyword: str, low: int, takes: str) -> Option:
    """A whole number from ``low``."""

    def read(value: Value) -> object:
        n = _number(value)
        return int(n) if n is not None and n.is_integer() and n >= low else INVALID

    return Option(keyword, takes, read)


def in_range(keyword: str, low: float, high: float, takes: str) -> Option:
    """A number from ``low`` to ``high``."""

    def read(value: Value) -> object:
        n = _number(value)
        return n if n is not None and low <= n <= high else INVALID

    return Option(keyword, takes, read)


def one_of(keyword: str, *choices: str) -> Option:
    """One of ``choices``, each a string."""
    shown = [f'"{c}"' for c in choices]
    return Option(
        keyword,
        ", ".join(shown[:-1]) + f" or {shown[-1]}",
        lambda v: v if isinstance(v, str) and v in choices else INVALID,
    )


def _position(value: Value) -> object:
    if not isinstance(value, dict) or set(value) != {"x", "y"}:
        return INVALID
    x, y = _number(value["x"]), _number(value["y"])
    return INVALID if x is None or y is None else {"x": x, "y": y}


_MODIFIER_KEYS = ("Alt", "Control", "ControlOrMeta", "Meta", "Shift")


def _modifiers(value: Value) -> object:
    if isinstance(value, list) and all(m in _MODIFIER_KEYS for m in value):
        return list(value)
    return INVALID


def timeout_of(config_key: str) -> Option:
    """``timeout``: this call's own, in whole milliseconds (rounded up, as the config's
    are), in place of the config's ``config_key``."""

    def read(value: Value) -> object:
        n = _number(value)
        if n is None or not 0 < n <= MAX_TIMEOUT_MS:
            return INVALID
        return float(max(1, math.ceil(n)))

    return Option(
        "timeout",
        f"milliseconds, more than 0 and at most {MAX_TIMEOUT_MS} (this call's own; the "
        f"config's {config_key} otherwise)",
        read,
    )


POSITION = Option(
    "position",
    "an object {x, y}: pixels from the top-left corner of the element's padding box",
    _position,
)
MODIFIERS = Option(
    "modifiers",
    "an array of the keys held down meanwhile: " + ", ".join(f'"{k}"' for k in _MODIFIER_KEYS),
    _modifiers,
)


def first_line(err: BaseException) -> str:
    text = str(getattr(err, "message", None) or err).strip()
    return text.splitlines()[0] if text else type(err).__name__


STRICT_VIOLATION = re.compile(r"strict mode violation: .*? resolved to (\d+) elements")
# Why an action kept waiting, from Playwright's call log ("- element is not enabled").
_WAITING_BECAUSE = re.compile(
    r"^\s*(?:-|\d+ ×)\s*(element is not \w+|element is outside of the viewport"
    r"|did not find some options|.* intercepts pointer events|locator resolved to hidden .*)\s*$",
    re.MULTILINE,
)


class PageCalls:
    """The page of one run, its base URL and timeouts, and the calls made on it.

    ``touched_page`` is set by every call that may have changed the page, so the run
    knows when the title it shows must be read again; ``touches`` counts those calls
    (a step that made none leaves the page image of the step before valid).
    """

    def __init__(
        self,
        bridge: LoopBridge,
        page_provider: Callable[[], Page],
        timeouts: Timeouts,
        base_url: str | None,
    ) -> None:
        self.bridge = bridge
        self._page = page_provider
        self.timeouts = timeouts
        self.base_url = base_url
        self.touched_page = False
        self.touches = 0

    def touch(self) -> None:
        """A call that may change the page is made."""
        self.touched_page = True
        self.touches += 1

    @property
    def page(self) -> Page:
        return self._page()

    def run(self, what: str, awaitable: Awaitable[T]) -> T:
        self.touch()

        async def guarded() -> T:
            try:
                return await awaitable
            except BuiltinError:
                raise
            except PlaywrightTimeoutError as err:
                raise BuiltinError("TimeoutError", f"{what}: {first_line(err)}") from None
            except PlaywrightError as err:
                message = first_line(err)
                raise (
                    _known_error(what, message)
                    or BuiltinError("Error", f"{what}: {_API_NAME.sub('', message)}")
                ) from None

        return self.bridge.call(guarded())

    async def locate(
        self, fn: str, target: Target, wait: bool = True, timeout_ms: float | None = None
    ) -> Locator:
        if isinstance(target, LocatorValue):
            return target.build(self.page)
        if wait:
            return await target.resolve(self.page, timeout_ms or self.timeouts.action)
        return target.any_match(self.page)

    def counted(self, target: Target) -> Locator:
        """What a count looks at: a Locator as written; for a string, the visible elements
        any strategy finds (a hidden field and its label would otherwise count twice)."""
        if isinstance(target, LocatorValue):
            return target.build(self.page)
        return target.any_match(self.page).filter(visible=True)

    async def translate_action_error(
        self,
        fn: str,
        target: Target,
        locator: Locator,
        err: Exception,
        found: int | None = None,
        timeout_ms: float | None = None,
    ) -> BuiltinError:
        """``found``: what ``locator`` counted after the error, when the caller asked
        already (-1: the count failed); asked here otherwise, for a timeout."""
        message = first_line(err)
        shown = target.render()
        strict = STRICT_VIOLATION.search(str(err))
        count = int(strict.group(1)) if strict else None
        if count is None and isinstance(err, PlaywrightTimeoutError):
            if found is None:
                found = await _count(locator)
            waited = int(timeout_ms or self.timeouts.action)
            if found == 0:
                return BuiltinError(
                    "LocatorError", f"{fn}: no element matches {shown} (waited {waited} ms)"
                )
            if found > 1:
                # Every action is strict: on a slow page the timeout can come before
                # Playwright reports the strict-mode violation, which is the real cause.
                count = found
            else:
                # The first line only says "Timeout exceeded"; the call log says why
                # (disabled, hidden, covered), which is what a person can act on.
                reasons = _WAITING_BECAUSE.findall(str(err))
                return BuiltinError(
                    "TimeoutError",
                    f"{fn} on {shown} timed out after {waited} ms: "
                    + (reasons[-1] if reasons else message),
                )
        for needle, says in _WRONG_ELEMENT:
            if count is None and needle in message:
                return BuiltinError("LocatorError", f"{fn}: {shown} {says}")
        known = _known_error(f"{fn}: {shown}", message) if count is None else None
        if known is not None:
            return known
        if count is not None:
            listing = await describe_candidates(locator, count)
            return BuiltinError(
                "LocatorError",
                f"{fn}: {shown} matches {count} elements ({listing}); "
                "narrow it with .first(), .nth(i) or .filter()",
            )
        return BuiltinError("Error", f"{fn} on {shown}: {message}")

    def act(
        self,
        fn: str,
        value: Value,
        action: Callable[[Locator], Awaitable[object]],
        for_input: bool = False,
        timeout_ms: float | None = None,
    ) -> Value:
        """An action is a query whose answer the scenario does not get. ``timeout_ms``:
        this call's own (``click(t, {timeout})``), else the config's action timeout."""

        async def act(locator: Locator) -> Value:
            await action(locator)
            return None

        self.query(fn, value, act, for_input, timeout_ms)
        return None

    def query(
        self,
        fn: str,
        value: Value,
        query: Callable[[Locator], Awaitable[Value]],
        for_input: bool = False,
        timeout_ms: float | None = None,
    ) -> Value:
        """One call on the element a target names, waiting for it; errors in its words."""
        target = target_of(fn, value, for_input)
        self.touch()

        async def run() -> Value:
            if isinstance(target, SmartTarget):
                result = await self._on_smart_target(fn, target, query, timeout_ms)
            else:
                locator = await self.locate(fn, target, timeout_ms=timeout_ms)
                try:
                    result = await query(locator)
                except (PlaywrightTimeoutError, PlaywrightError) as err:
                    raise await self.translate_action_error(
                        fn, target, locator, err, timeout_ms=timeout_ms
                    ) from None
            return (
                result if not isinstance(result, int) or isinstance(result, bool) else float(result)
            )

        return self.bridge.call(run())

    async def _on_smart_target(
        self,
        fn: str,
        target: SmartTarget,
        query: Callable[[Locator], Awaitable[Value]],
        timeout_ms: float | None = None,
    ) -> Value:
        """``query`` through :meth:`SmartTarget.in_one_call`: one call to the browser
        where finding the element first took another. When strict mode reports more
        than one element (nothing was done to the page yet), the strategies are asked
        one by one (:meth:`SmartTarget.resolve`), as they always were."""
        locator = target.in_one_call(self.page)
        try:
            return await query(locator)
        except (PlaywrightTimeoutError, PlaywrightError) as err:
            if STRICT_VIOLATION.search(str(err)) is None:
                found = None
                if isinstance(err, PlaywrightTimeoutError):
                    found = await _count(locator)
                    if found == 0:
                        raise target.not_found(timeout_ms or self.timeouts.action) from None
                raise await self.translate_action_error(
                    fn, target, locator, err, found, timeout_ms
                ) from None
        locator = await target.resolve(self.page, timeout_ms or self.timeouts.action)
        try:
            return await query(locator)
        except (PlaywrightTimeoutError, PlaywrightError) as err:
            raise await self.translate_action_error(
                fn, target, locator, err, timeout_ms=timeout_ms
            ) from None

    def url(self, value: Value) -> str:
        url = string_arg("goto", value, "a URL")
        if self.base_url and not re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", url):
            return urljoin(self.base_url, url)
        return url

    def url_matcher(self, fn: str, value: Value, in_browser: bool = False) -> TextMatcher:
        """A URL string joined to ``baseURL``, or a regex.

        ``wait_for_url`` matches in Python (the translated pattern), but
        ``expect(page).to_have_url`` sends the pattern to the browser as JavaScript,
        where the translation's Python-only syntax (``\\Z`` for ``$``) would not match.
        """
        if isinstance(value, RegexValue):
            return to_pattern(value) if in_browser else value.pattern
        text = string_arg(fn, value, "a URL or a regex")
        if "*" in text:
            # Playwright reads "**/cart" as a glob; here a string is the exact URL, so
            # waiting for it could only time out: said at once, with what to write.
            tail = text.rsplit("*", 1)[1] or "/path"
            raise BuiltinError(
                "TypeError",
                f"{fn}(): {show_matcher(text)} looks like a Playwright glob, but a string "
                f"here is the exact URL (joined to baseURL); match part of it with a regex, "
                f"e.g. /{re.escape(tail).replace('/', chr(92) + '/')}$/",
            )
        return self.url(text)


# Playwright's words for an element of the wrong kind, as a person would say them.
_WRONG_ELEMENT = (
    (
        "Element is not an <input>, <textarea>",
        "is not a field: it takes text only as an "
        "<input>, a <textarea> or a [contenteditable] element",
    ),
    ("Not a checkbox or radio button", "is not a checkbox or a radio button"),
    (
        "Node is not an <input>, <textarea> or <select>",
        "is not a field that has a value (an <input>, a <textarea> or a <select>)",
    ),
    (
        "Non-multiple file input can only accept single file",
        "takes one file: the input has no 'multiple' attribute",
    ),
    ("is not a valid XPath expression", "is not a valid XPath expression"),
)
_BAD_CSS = re.compile(r'Unexpected token "(.*?)" while parsing css selector "(.*)"')
_UNKNOWN_KEY = re.compile(r'Unknown key: "(.*)"')
_API_NAME = re.compile(r"^[A-Z][A-Za-z]*\.[a-z][A-Za-z]*: ")
"""Playwright's ``Locator.count: `` before its message: an API the scenario never named."""


def _known_error(where: str, message: str) -> BuiltinError | None:
    """A Playwright error a person can act on, in the scenario's words (``None``: not
    one of them)."""
    bad_css = _BAD_CSS.search(message)
    if bad_css is not None:
        # Playwright's own words end "Did you mean to CSS.escape it?", a browser API.
        token = bad_css.group(1)
        why = f"unexpected {token!r}" if token else "it ends too soon"
        return BuiltinError(
            "LocatorError",
            f"{where}: {bad_css.group(2)!r} is not a valid CSS selector ({why})",
        )
    if "is not a valid XPath expression" in message:
        return BuiltinError("LocatorError", f"{where}: {_API_NAME.sub('', message)}")
    unknown_key = _UNKNOWN_KEY.search(message)
    if unknown_key is not None:
        return BuiltinError(
            "TypeError",
            f"{where}: {unknown_key.group(1)!r} is no key name: keys are named as a "
            'browser names them ("Enter", "Tab", "ArrowDown", "a", "Control+A")',
        )
    return None


async def _count(locator: Locator) -> int:
    """What ``locator`` finds now; -1 when asking fails (which is not "nothing")."""
    try:
        return await locator.count()
    except PlaywrightError:
        return -1
