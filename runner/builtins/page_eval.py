"""``evaluate``, and scenario values crossing into and out of the page.

A script is the one place where the page's own JavaScript answers the scenario, so its
rules are kept together: what may be passed in (data only, :func:`page_arg`), what an
answer becomes (its JSON value, :func:`from_page`, bounded so a page cannot hand back a
cycle or an explosion of shared parts), and how long a script may run (the action
timeout: Playwright's evaluate has none, and a step must end). An exception thrown by the
script is an ``Error`` in the script's own words. An element as the whole answer is
a target every built-in takes (``const b = evaluate("document.activeElement");
click(b)``): Playwright has no way from an element handle to a locator, so the element
is marked in the page and the target finds the mark
(:func:`runner.builtins.locators.element_ref`). Expectations reuse :func:`from_page` to
show what every element holds; ``dispatch_event`` reuses :func:`page_arg`.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import re
import secrets
from collections.abc import Awaitable
from urllib.parse import ParseResult

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import JSHandle, Locator

from dsl.errors import BuiltinError
from dsl.values import HostValue, RegexValue, Value, type_name, well_formed
from runner.builtins.locators import (
    REF_ATTRIBUTE,
    LocatorValue,
    StepArgs,
    element_ref,
    to_pattern,
)
from runner.builtins.page_calls import PageCalls, first_line, string_arg

__all__ = ["MAX_PAGE_DEPTH", "MAX_PAGE_ITEMS", "evaluate", "from_page", "page_arg"]

MAX_PAGE_DEPTH = 200
MAX_PAGE_ITEMS = 1_000_000
Steps = tuple[tuple[str, StepArgs], ...]
"""A locator's steps (:class:`runner.builtins.locators.LocatorValue`)."""


def evaluate(calls: PageCalls, *args: Value) -> Value:
    """``evaluate(js, arg?)`` in the page, ``evaluate(locator, js, arg?)`` on the
    element: Playwright's ``evaluate`` (a function is called with the argument, after
    the element; anything else is evaluated as an expression; a promise is awaited),
    the answer as a scenario value, an element as a target (:func:`_answer`). The
    target must be a Locator: a string first argument is the script."""
    if args and isinstance(args[0], LocatorValue):
        if len(args) < 2:
            raise BuiltinError(
                "TypeError", "evaluate(locator, js, arg?) needs the JavaScript to run"
            )
        script = string_arg("evaluate", args[1], "the JavaScript to run")
        arg = page_arg("evaluate", args[2] if len(args) > 2 else None)
        target = args[0]
        return calls.query(
            "evaluate", target, lambda loc: _on_element(calls, loc, target, script, arg)
        )
    if len(args) > 2:
        raise BuiltinError(
            "TypeError",
            "evaluate() takes (js, arg?) in the page or (locator, js, arg?) on an element, "
            f"whose target is a Locator (got {type_name(args[0])})",
        )
    script = string_arg("evaluate", args[0], "the JavaScript to run (or a Locator, then it)")
    arg = page_arg("evaluate", args[1] if len(args) > 1 else None)
    calls.touch()

    async def run() -> Value:
        return await _script(calls, "evaluate", calls.page.evaluate_handle(script, arg), ())

    return calls.bridge.call(run())


async def _on_element(
    calls: PageCalls, locator: Locator, target: LocatorValue, script: str, arg: object
) -> Value:
    # Locator.evaluate waits for the element (strictly) with no timeout of its own for
    # the script; the element is waited for first, with the action timeout, and the
    # script then gets a timeout of its own.
    handle = await locator.element_handle(timeout=calls.timeouts.action)
    try:
        return await _script(
            calls,
            f"evaluate on {target.render()}",
            handle.evaluate_handle(script, arg),
            target.frame_prefix(),
        )
    finally:
        with contextlib.suppress(PlaywrightError):  # the page is gone, and the handle
            await handle.dispose()


async def _script(
    calls: PageCalls, what: str, evaluation: Awaitable[JSHandle], frame: Steps
) -> Value:
    """A script's answer, within the action timeout (Playwright's evaluate has none,
    and a step must end); an exception thrown in the page becomes an ``Error``.
    ``frame``: the steps to the document the script ran in (none: the page's)."""
    waited = calls.timeouts.action
    try:
        return await asyncio.wait_for(_answer(what, evaluation, frame), waited / 1000)
    except PlaywrightError as err:
        raise BuiltinError("Error", f"{what}: {_script_error(err)}") from None
    except TimeoutError:
        raise BuiltinError(
            "TimeoutError", f"{what}: the script did not finish within {int(waited)} ms"
        ) from None


_MARK = """(node, mark) => {
  if (node.nodeType !== Node.ELEMENT_NODE) return null;
  if (node.ownerDocument !== document) return '';
  const old = node.getAttribute('ATTRIBUTE');
  const same = old && node.getRootNode().querySelectorAll('[ATTRIBUTE="' + old + '"]');
  if (/^[0-9a-f]+-[0-9]+$/.test(old || '') && same.length === 1) return old;
  node.setAttribute('ATTRIBUTE', mark);
  return mark;
}""".replace("ATTRIBUTE", REF_ATTRIBUTE)
"""Marks an element of the script's own document and answers the mark; null for another
node, '' for an element of another document (an iframe's, reached through
``contentDocument``). An element returned again keeps its mark (one target for it),
unless the page copied it (``cloneNode``): then the copy it is gets a mark of its own."""
_RUN_TOKEN = secrets.token_hex(4)
"""Part of every mark, so that marks of two processes (a worker's scenarios, a restart
on a warm browser) never meet."""
_next_ref = [1]
"""The number of the next mark: taken only by an element that gets a new one."""


async def _answer(what: str, evaluation: Awaitable[JSHandle], frame: Steps) -> Value:
    """What a script answered: an element as a target (Playwright's
    ``evaluateHandle`` then ``asElement``: it is marked in the page, see
    :func:`runner.builtins.locators.element_ref`), anything else as its JSON value."""
    handle = await evaluation
    try:
        element = handle.as_element()
        if element is not None:
            number = _next_ref[0]
            mark = await element.evaluate(_MARK, f"{_RUN_TOKEN}-{number}")
            if mark == f"{_RUN_TOKEN}-{number}":
                _next_ref[0] = number + 1
            if mark == "":
                raise BuiltinError(
                    "TypeError",
                    f"{what}: the element the script returned is in another document (an "
                    "iframe's): return it from a script run in that frame, "
                    'evaluate(css("iframe").frame().find(css("body")), "(body) => ...")',
                )
            if isinstance(mark, str):
                return element_ref(mark, int(mark.rsplit("-", 1)[1]), frame)
        return from_page(await handle.json_value())
    finally:
        with contextlib.suppress(PlaywrightError):  # the page is gone, and the handle
            await handle.dispose()


_EVALUATE_PREFIX = re.compile(r"^\w+\.evaluate(?:_all|_handle)?: ")


def _script_error(err: PlaywrightError) -> str:
    """A script's exception as ``TypeError: x is not a function``, without Playwright's
    ``Page.evaluate:`` and the stack of its own wrapper."""
    return _EVALUATE_PREFIX.sub("", first_line(err))


def page_arg(fn: str, value: Value, active: frozenset[int] = frozenset()) -> object:
    """A scenario value as Playwright serialises an argument into the page."""
    if value is None or isinstance(value, str | bool | float | int):
        return value
    if isinstance(value, RegexValue):
        return to_pattern(value)  # a RegExp in the page
    if isinstance(value, list | dict):
        if id(value) in active:
            raise BuiltinError("TypeError", f"{fn}() cannot pass a value that contains itself")
        inside = active | {id(value)}
        if isinstance(value, list):
            return [page_arg(fn, item, inside) for item in value]
        return {key: page_arg(fn, item, inside) for key, item in value.items()}
    assert isinstance(value, HostValue)
    raise BuiltinError(
        "TypeError",
        f"{fn}() passes only data into the page (strings, numbers, booleans, null, arrays, "
        f"objects, regexes), got {type_name(value)}",
    )


def from_page(data: object) -> Value:
    """What an evaluation answered, as a scenario value: its JSON value (a Date as its
    ISO text, a URL as its href, an Error as ``{name, message}``, a Map, Set or RegExp as
    ``{}``, as ``JSON.stringify`` writes them; a DOM node inside the answer, or a node
    that is no element, stays Playwright's ``"ref: <Node>"``)."""
    return _PageValues().convert(data, 0)


class _PageValues:
    """One conversion: the values seen so far (a cycle is refused, a result may not
    explode through shared parts) and the arrays and objects open around the current one."""

    def __init__(self) -> None:
        self.left = MAX_PAGE_ITEMS
        self.open: set[int] = set()

    def convert(self, data: object, depth: int) -> Value:
        self.left -= 1
        if self.left < 0:
            raise BuiltinError(
                "RangeError", f"evaluate(): the result holds more than {MAX_PAGE_ITEMS:,} values"
            )
        if isinstance(data, str):
            return well_formed(data)
        if data is None or isinstance(data, bool):
            return data
        if isinstance(data, int | float):
            return float(data)
        if isinstance(data, datetime.datetime):
            utc = data.astimezone(datetime.UTC)
            return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"
        if isinstance(data, ParseResult):
            return data.geturl()
        if isinstance(data, PlaywrightError):
            return {"name": data.name or "Error", "message": data.message}
        if isinstance(data, list | dict):
            return self._container(data, depth)
        return {}  # a RegExp: JSON.stringify writes {}

    def _container(self, data: list[object] | dict[object, object], depth: int) -> Value:
        if id(data) in self.open:
            raise BuiltinError(
                "TypeError", "evaluate(): the result contains itself, which JSON cannot hold"
            )
        if depth >= MAX_PAGE_DEPTH:
            raise BuiltinError(
                "RangeError", f"evaluate(): the result is nested deeper than {MAX_PAGE_DEPTH}"
            )
        self.open.add(id(data))
        try:
            if isinstance(data, list):
                return [self.convert(item, depth + 1) for item in data]
            return {
                well_formed(str(key)): self.convert(item, depth + 1) for key, item in data.items()
            }
        finally:
            self.open.discard(id(data))
