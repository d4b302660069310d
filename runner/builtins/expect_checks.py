"""What each expectation asks Playwright, and what it reads back when the answer is no.

:mod:`runner.builtins.expectations` runs every expectation the same way (find the element,
retry, word the failure); what differs from one kind to the next is kept here as data:
the Playwright assertion of the one-element form, the check of the list form (on every
element, in order, atomically), and the reader of what the page had instead, for the
message. A new kind of expectation is one more :class:`MatcherKind` or one more reader,
not another copy of the retrying. An expectation on one named part of the element
(an attribute, a CSS property, a JavaScript property) is one more :class:`PairKind`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import cast

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Locator, expect

from dsl.errors import BuiltinError
from dsl.values import RegexValue, Value, render, type_name
from runner.builtins.locators import (
    TextMatcher,
    contains_pattern,
    matcher_arg,
    show_matcher,
    to_pattern,
)
from runner.builtins.page_calls import first_line
from runner.builtins.page_eval import from_page, page_arg

__all__ = [
    "MATCHER_KINDS",
    "PAIR_KINDS",
    "MatcherKind",
    "PairKind",
    "assertion",
    "checked_state",
    "element_state",
    "empty_state",
    "enabled_state",
    "matcher_items",
    "read_safely",
    "safe_count",
    "viewport_state",
]


def assertion(
    locator: Locator, method: str, negated: bool = False
) -> Callable[..., Awaitable[None]]:
    """``expect(locator).method``, or its ``not_`` twin when ``negated``."""
    name = ("not_" if negated else "") + method
    return cast(Callable[..., Awaitable[None]], getattr(expect(locator), name))


# --- what was received instead --------------------------------------------------------

_NOTHING = "nothing (no element matched)"


async def read_safely(awaitable: Awaitable[str]) -> str:
    try:
        return await awaitable
    except Exception:
        return _NOTHING


async def _text(locator: Locator) -> str:
    count = await locator.count()
    if count == 0:
        return _NOTHING
    return render(" ".join((await locator.first.inner_text(timeout=500)).split()))


async def _value(locator: Locator) -> str:
    if await locator.count() == 0:
        return _NOTHING
    try:
        return render(await locator.first.input_value(timeout=500))
    except PlaywrightError:
        # Playwright's "Not an input element": an <option>, a <div>; it was found.
        tag = await locator.first.evaluate("e => e.tagName.toLowerCase()")
        return (
            f"<{tag}>, which is not an input element: only an <input>, a <textarea> or a "
            "<select> has a value"
        )


async def checked_state(locator: Locator) -> str:
    if await locator.count() == 0:
        return _NOTHING
    try:
        return "checked" if await locator.first.is_checked(timeout=500) else "unchecked"
    except PlaywrightError as err:
        return f"an element that cannot be checked ({first_line(err)})"


async def enabled_state(locator: Locator) -> str:
    if await locator.count() == 0:
        return _NOTHING
    return "enabled" if await locator.first.is_enabled(timeout=500) else "disabled"


async def focused_state(locator: Locator) -> str:
    if await locator.count() == 0:
        return _NOTHING
    focused = await locator.first.evaluate("e => e === e.ownerDocument.activeElement")
    return "focused" if focused else "not focused"


async def editable_state(locator: Locator) -> str:
    if await locator.count() == 0:
        return _NOTHING
    try:
        return "editable" if await locator.first.is_editable(timeout=500) else "not editable"
    except PlaywrightError as err:
        return f"an element that cannot be edited ({first_line(err)})"


_CONTENT = """e => (e.nodeName === 'INPUT' || e.nodeName === 'TEXTAREA')
  ? ['value', e.value] : ['text', (e.textContent || '').trim()]"""
"""What Playwright's ``toBeEmpty`` reads: a field's value, any other element's text."""


async def empty_state(locator: Locator) -> str:
    if await locator.count() == 0:
        return _NOTHING
    kind, content = await locator.first.evaluate(_CONTENT)
    if kind == "value":
        return f"the value {render(content)}" if content else "an empty value"
    return f"the text {render(' '.join(content.split()))}" if content else "no text"


_RATIO = """e => new Promise(resolve => {
  const observer = new IntersectionObserver(entries => {
    observer.disconnect();
    resolve(entries[0].intersectionRatio);
  });
  observer.observe(e);
})"""
"""How much of the element the viewport shows, as Playwright's ``toBeInViewport`` asks."""


def viewport_share(ratio: float) -> str:
    """A ratio of the element in words: ``none of it``, ``40% of it``, ``all of it``."""
    if ratio <= 0:
        return "none of it"
    if ratio >= 1:
        return "all of it"
    return f"{min(99, max(1, round(ratio * 100)))}% of it"


async def viewport_state(locator: Locator) -> str:
    if await locator.count() == 0:
        return _NOTHING
    ratio = await asyncio.wait_for(locator.first.evaluate(_RATIO), 2)
    return f"{viewport_share(float(ratio))} in the viewport"


async def element_state(locator: Locator) -> str:
    try:
        count = await locator.count()
    except PlaywrightError:
        return "an error reading the page"
    if count == 0:
        return "no matching element"
    visible = await locator.first.is_visible()
    return f"{count} element(s), the first {'visible' if visible else 'hidden'}"


async def safe_count(locator: Locator) -> int:
    try:
        return await locator.count()
    except PlaywrightError:
        return -1


# --- matcher expectations: one element, or every element in order -----------------------


def _text_matcher(fn: str, value: Value) -> TextMatcher:
    if isinstance(value, str | RegexValue):
        return matcher_arg(fn, value)
    raise BuiltinError(
        "TypeError", f"{fn}() needs a string, a regex or an array of them, got {type_name(value)}"
    )


def _whole_class(fn: str, value: Value) -> TextMatcher:
    """``expect_class``'s matcher, Playwright's ``toHaveClass``: a string is the whole
    ``class`` attribute, exactly as written (spaces too; ``""``: an element without
    classes), a regex searches it."""
    if isinstance(value, str):
        return value
    if isinstance(value, RegexValue):
        return to_pattern(value)
    raise BuiltinError(
        "TypeError",
        f"{fn}() needs the class attribute (a string), a regex or an array of them, "
        f"got {type_name(value)}",
    )


def _class_names(fn: str, value: Value) -> TextMatcher:
    """``expect_contains_class``'s, Playwright's ``toContainClass``: class names
    separated by spaces, each a whole class of the element, in any order. No regex (as
    Playwright's), and no empty string (Playwright's would hold for any element)."""
    if isinstance(value, str):
        names = value.split()
        if not names:
            raise BuiltinError("TypeError", f"{fn}() needs a class name, got an empty string")
        return " ".join(names)
    if isinstance(value, RegexValue):
        raise BuiltinError(
            "TypeError",
            f"{fn}() takes class names, not a regex (as Playwright's toContainClass): match "
            f"the whole class attribute with expect_class(t, {value.render()})",
        )
    raise BuiltinError(
        "TypeError",
        f"{fn}() needs class names (a string) or an array of them, got {type_name(value)}",
    )


def _contained(fn: str, value: Value) -> TextMatcher:
    if isinstance(value, str):
        return value
    raise BuiltinError(
        "TypeError", f"{fn}() needs a string or an array of strings, got {type_name(value)}"
    )


def matcher_items(
    fn: str, items: list[Value], parse: Callable[[str, Value], TextMatcher]
) -> list[TextMatcher]:
    matchers = []
    for i, item in enumerate(items):
        try:
            matchers.append(parse(fn, item))
        except BuiltinError as err:
            raise BuiltinError(err.name, f"{err.message} (at index {i} of the array)") from None
    return matchers


def _one(method: str) -> Callable[[Locator, TextMatcher, bool, float], Awaitable[None]]:
    """The one-element form: Playwright's ``method`` (or ``not_method``) with the matcher."""

    def one(locator: Locator, m: TextMatcher, negated: bool, timeout: float) -> Awaitable[None]:
        return assertion(locator, method, negated)(m, timeout=timeout)

    return one


def _every(
    method: str,
) -> Callable[[Locator, list[TextMatcher], bool, float], Awaitable[None]]:
    """The list form: Playwright's ``method`` (or ``not_method``) with the array, as many
    elements as matchers, each matching the one at its place."""

    def every(
        locator: Locator, matchers: list[TextMatcher], negated: bool, timeout: float
    ) -> Awaitable[None]:
        return assertion(locator, method, negated)(matchers, timeout=timeout)

    return every


async def _every_contained(
    locator: Locator, matchers: list[TextMatcher], negated: bool, timeout: float
) -> None:
    # Playwright's array to_contain_text matches a subsequence of the elements; here
    # every element is matched in order, so each string becomes a search of to_have_text.
    patterns = [contains_pattern(m) if isinstance(m, str) else m for m in matchers]
    await assertion(locator, "to_have_text", negated)(patterns, timeout=timeout)


_VALUES = (
    "els => els.map(e => ['INPUT', 'TEXTAREA', 'SELECT'].includes(e.tagName) ? e.value : null)"
)
_VALUES_MATCH = f"""(els, wanted) => {{
  const values = ({_VALUES})(els);
  return values.length === wanted.length && values.every((v, i) => v !== null
    && (typeof wanted[i] === 'string' ? v === wanted[i] : wanted[i].test(v)));
}}"""
# Playwright's expect polls after 100, 250, 500 ms, then every second.
_POLL_PAUSES = (0.1, 0.25, 0.5, 1.0)


async def _every_value(
    locator: Locator, matchers: list[TextMatcher], negated: bool, timeout: float
) -> None:
    """Playwright has no array form of ``to_have_value``: every value is read and
    matched in one evaluation (so the check is atomic), retried as its expect retries.
    Regexes travel to the page as JavaScript ones, as Playwright's own matchers do."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout / 1000
    attempt = 0
    while True:
        try:
            if await locator.evaluate_all(_VALUES_MATCH, matchers) != negated:
                return
        except PlaywrightError as err:
            if "context was destroyed" not in str(err):
                raise
            # a navigation in between: read the new page's values next time
        left = deadline - loop.time()
        if left <= 0:
            raise AssertionError("the values did not match")
        await asyncio.sleep(min(_POLL_PAUSES[min(attempt, len(_POLL_PAUSES) - 1)], left))
        attempt += 1


async def _every_of(locator: Locator, script: str) -> str:
    return render(from_page(await locator.evaluate_all(script)))


async def _texts(locator: Locator) -> str:
    texts: list[Value] = [" ".join(t.split()) for t in await locator.all_inner_texts()]
    return render(texts)


async def _values(locator: Locator) -> str:
    return await _every_of(locator, _VALUES)


async def _classes(locator: Locator) -> str:
    return await _every_of(locator, "els => els.map(e => e.getAttribute('class'))")


async def _class_attr(locator: Locator) -> str:
    if await locator.count() == 0:
        return _NOTHING
    found = await locator.first.get_attribute("class", timeout=500)
    return "no class attribute" if found is None else show_matcher(found)


@dataclass(frozen=True)
class MatcherKind:
    """One kind of matcher expectation, for ``expect_<kind>`` and ``expect_not_<kind>``."""

    wanted: str  # in words: "to have text"
    parse: Callable[[str, Value], TextMatcher]  # one matcher (or one item of an array)
    one: Callable[[Locator, TextMatcher, bool, float], Awaitable[None]]
    every: Callable[[Locator, list[TextMatcher], bool, float], Awaitable[None]]
    received: Callable[[Locator], Awaitable[str]]  # what the one element has instead
    received_all: Callable[[Locator], Awaitable[str]]  # what every element has instead
    for_input: bool = False  # a string target is looked up as a form field first


MATCHER_KINDS = {
    "text": MatcherKind(
        "to have text", _text_matcher, _one("to_have_text"), _every("to_have_text"), _text, _texts
    ),
    "contains": MatcherKind(
        "to contain text", _contained, _one("to_contain_text"), _every_contained, _text, _texts
    ),
    "value": MatcherKind(
        "to have value", _text_matcher, _one("to_have_value"), _every_value, _value, _values, True
    ),
    "class": MatcherKind(
        "to have class",
        _whole_class,
        _one("to_have_class"),
        _every("to_have_class"),
        _class_attr,
        _classes,
    ),
    "contains_class": MatcherKind(
        "to contain class",
        _class_names,
        _one("to_contain_class"),
        _every("to_contain_class"),
        _class_attr,
        _classes,
    ),
}


# --- one named part of the element: expect_attr, expect_css, expect_js_property -----------


def _matched(fn: str, value: Value) -> tuple[object, str]:
    m = matcher_arg(fn, value)
    return m, show_matcher(m)


def _data(fn: str, value: Value) -> tuple[object, str]:
    if isinstance(value, RegexValue):
        raise BuiltinError(
            "TypeError",
            f"{fn}() compares the property with a value (a string, number, boolean, null, "
            "array or object), not with a regex",
        )
    return page_arg(fn, value), render(value)


async def _attribute(locator: Locator, name: str) -> str:
    result = await locator.get_attribute(name, timeout=500)
    return "no such attribute" if result is None else show_matcher(result)


async def _css_value(locator: Locator, name: str) -> str:
    if await locator.count() == 0:
        return _NOTHING
    script = "(e, name) => getComputedStyle(e).getPropertyValue(name)"
    return show_matcher(await locator.first.evaluate(script, name))


async def _js_property(locator: Locator, name: str) -> str:
    if await locator.count() == 0:
        return _NOTHING
    return render(from_page(await locator.first.evaluate("(e, name) => e[name]", name)))


@dataclass(frozen=True)
class PairKind:
    """``expect_<kind>(t, name, value)`` and its twin: Playwright's ``method(name,
    value)`` on one named part of the element."""

    name_is: str  # what the name is, in words: "an attribute name"
    wanted: Callable[[str, str], str]  # the name and the shown value, in words
    method: str  # Playwright's assertion
    parse: Callable[[str, Value], tuple[object, str]]  # the expected value, and shown
    received: Callable[[Locator, str], Awaitable[str]]  # what the element has instead


PAIR_KINDS = {
    "attr": PairKind(
        "an attribute name",
        lambda n, v: f"to have {n}={v}",
        "to_have_attribute",
        _matched,
        _attribute,
    ),
    "css": PairKind(
        "a CSS property name",
        lambda n, v: f"to have CSS {n} {v}",
        "to_have_css",
        _matched,
        _css_value,
    ),
    "js_property": PairKind(
        "a property name",
        lambda n, v: f"to have JS property {n} {v}",
        "to_have_js_property",
        _data,
        _js_property,
    ),
}
