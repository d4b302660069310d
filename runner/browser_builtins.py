"""The browser built-ins of language.md §6, bound to one Playwright page.

Each built-in is a plain function the interpreter calls from its thread; the work
happens in a coroutine on the runner's loop (:class:`runner.bridge.LoopBridge`).
Playwright's exceptions are translated here, at the boundary, into the language's
``LocatorError`` / ``TimeoutError`` / ``AssertionError`` / ``NavigationError`` (as
:class:`dsl.errors.BuiltinError`, which the interpreter places at the call site).
"""

from __future__ import annotations

import math
import re
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast
from urllib.parse import urljoin

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Locator, Page, expect
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from dsl.errors import BuiltinError
from dsl.interpreter import Builtin
from dsl.values import RegexValue, Value, render, type_name
from runner.bridge import LoopBridge
from runner.locators import (
    LocatorValue,
    SmartTarget,
    TextMatcher,
    describe_candidates,
    matcher_arg,
    role_locator,
    show_matcher,
    to_pattern,
)
from runner.signatures import BROWSER_SIGNATURES

if TYPE_CHECKING:
    # what expect() returns; playwright.async_api does not list them in its __all__
    from playwright.async_api._generated import LocatorAssertions, PageAssertions

__all__ = ["BrowserBuiltins", "Timeouts"]

T = TypeVar("T")
MAX_WAIT_MS = 60_000


@dataclass(frozen=True)
class Timeouts:
    action: float
    expect: float
    navigation: float


Target = LocatorValue | SmartTarget


def _target(fn: str, value: Value, for_input: bool = False) -> Target:
    if isinstance(value, LocatorValue):
        return value
    if isinstance(value, str):
        return SmartTarget(value, for_input)
    raise BuiltinError(
        "TypeError", f"{fn}() needs a Locator or a string target, got {type_name(value)}"
    )


def _string(fn: str, value: Value, what: str = "a string") -> str:
    if not isinstance(value, str):
        raise BuiltinError("TypeError", f"{fn}() needs {what}, got {type_name(value)}")
    return value


def _first_line(err: BaseException) -> str:
    text = str(getattr(err, "message", None) or err).strip()
    return text.splitlines()[0] if text else type(err).__name__


_STRICT = re.compile(r"strict mode violation: .*? resolved to (\d+) elements")
# Why an action kept waiting, from Playwright's call log ("- element is not enabled").
_WAITING_BECAUSE = re.compile(
    r"^\s*(?:-|\d+ ×)\s*(element is not \w+|element is outside of the viewport"
    r"|did not find some options|.* intercepts pointer events|locator resolved to hidden .*)\s*$",
    re.MULTILINE,
)


class BrowserBuiltins:
    """Built-ins for one run: the page, its base URL, timeouts and project root."""

    def __init__(
        self,
        bridge: LoopBridge,
        page_provider: Callable[[], Page],
        timeouts: Timeouts,
        base_url: str | None,
        root: Path,
        take_screenshot: Callable[[str | None], Coroutine[Any, Any, None]],
    ) -> None:
        self.bridge = bridge
        self._page = page_provider
        self.timeouts = timeouts
        self.base_url = base_url
        self.root = root.resolve()
        self._take_screenshot = take_screenshot
        self.touched_page = False

    @property
    def page(self) -> Page:
        return self._page()

    def builtins(self) -> dict[str, Builtin]:
        impls: dict[str, Callable[..., Value]] = {
            "role": role_locator,
            "title": self.title,
            "testid": lambda v: LocatorValue((("testid", (_string("testid", v),)),)),
            "css": lambda v: LocatorValue((("css", (_string("css", v, "a CSS selector"),)),)),
            "xpath": lambda v: LocatorValue((("xpath", (_string("xpath", v, "an XPath"),)),)),
            "goto": self.goto,
            "click": self.click,
            "fill": self.fill,
            "type_text": self.type_text,
            "press": self.press,
            "select": self.select,
            "upload": self.upload,
            "drag": self.drag,
            "wait": self.wait,
            "wait_for": self.wait_for,
            "wait_for_url": self.wait_for_url,
            "wait_for_load": lambda: self._run(
                "wait_for_load",
                self.page.wait_for_load_state("load", timeout=self.timeouts.navigation),
            ),
            "attr_of": self.attr_of,
            "count": self.count,
            "is_visible": self.is_visible,
            "url": lambda: self.page.url,
            "expect_hidden": self.expect_hidden,
            "expect_count": self.expect_count,
            "expect_attr": self.expect_attr,
            "expect_url": self.expect_url,
            "expect_title": self.expect_title,
            "screenshot": self.screenshot,
        }
        for kind in _MATCHER_LOCATORS:
            impls[kind] = self._matcher_locator(kind)
        for name, method in _HISTORY_MOVES.items():
            impls[name] = self._history_move(name, method)
        for name, (method, for_input, is_query) in _LOCATOR_CALLS.items():
            impls[name] = self._locator_call(name, method, for_input, is_query)
        for name, (wanted, method, received) in _STATE_EXPECTATIONS.items():
            impls[name] = self._state_expectation(name, wanted, method, received)
        for name, (wanted, method, parse, received, for_input) in _MATCHER_EXPECTATIONS.items():
            impls[name] = self._matcher_expectation(
                name, wanted, method, parse, received, for_input
            )
        return {
            name: Builtin(name, impls[name], low, high)
            for name, (low, high) in BROWSER_SIGNATURES.items()
        }

    def _matcher_locator(self, kind: str) -> Callable[[Value], Value]:
        return lambda matcher: self._simple_locator(kind, matcher)

    def _history_move(self, fn: str, method: str) -> Callable[[], Value]:
        """``reload``, ``back``, ``forward``: one Page method with the navigation timeout."""
        return lambda: self._navigate(
            fn, lambda page: getattr(page, method)(timeout=self.timeouts.navigation)
        )

    def _locator_call(
        self, fn: str, method: str, for_input: bool, is_query: bool
    ) -> Callable[[Value], Value]:
        """A built-in that is one Locator method with the action timeout."""

        def call(locator: Locator) -> Awaitable[Value]:
            # every method of _LOCATOR_CALLS answers None, a str or a bool
            return cast(Awaitable[Value], getattr(locator, method)(timeout=self.timeouts.action))

        if is_query:
            return lambda value: self._query(fn, value, call, for_input=for_input)
        return lambda value: self._act(fn, value, call, for_input=for_input)

    # --- plumbing ------------------------------------------------------------------

    def _run(self, what: str, awaitable: Awaitable[T]) -> T:
        self.touched_page = True

        async def guarded() -> T:
            try:
                return await awaitable
            except BuiltinError:
                raise
            except PlaywrightTimeoutError as err:
                raise BuiltinError("TimeoutError", f"{what}: {_first_line(err)}") from None
            except PlaywrightError as err:
                raise BuiltinError("Error", f"{what}: {_first_line(err)}") from None

        return self.bridge.call(guarded())

    async def _locate(self, fn: str, target: Target, wait: bool = True) -> Locator:
        if isinstance(target, LocatorValue):
            return target.build(self.page)
        if wait:
            return await target.resolve(self.page, self.timeouts.action)
        return target.any_match(self.page)

    def _describe(self, target: Target) -> str:
        return target.render()

    def _counted(self, target: Target) -> Locator:
        """What a count looks at: a Locator as written; for a string, the visible elements
        any strategy finds (a hidden field and its label would otherwise count twice)."""
        if isinstance(target, LocatorValue):
            return target.build(self.page)
        return target.any_match(self.page).filter(visible=True)

    async def _translate_action_error(
        self, fn: str, target: Target, locator: Locator, err: Exception
    ) -> BuiltinError:
        message = _first_line(err)
        shown = self._describe(target)
        strict = _STRICT.search(str(err))
        count = int(strict.group(1)) if strict else None
        if count is None and isinstance(err, PlaywrightTimeoutError):
            try:
                found = await locator.count()
            except PlaywrightError:
                found = -1
            waited = int(self.timeouts.action)
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
        if count is not None:
            listing = await describe_candidates(locator, count)
            return BuiltinError(
                "LocatorError",
                f"{fn}: {shown} matches {count} elements ({listing}); "
                "narrow it with .first(), .nth(i) or .filter()",
            )
        return BuiltinError("Error", f"{fn} on {shown}: {message}")

    def _act(
        self,
        fn: str,
        value: Value,
        action: Callable[[Locator], Awaitable[object]],
        for_input: bool = False,
    ) -> Value:
        """An action is a query whose answer the scenario does not get."""

        async def act(locator: Locator) -> Value:
            await action(locator)
            return None

        self._query(fn, value, act, for_input)
        return None

    def _query(
        self,
        fn: str,
        value: Value,
        query: Callable[[Locator], Awaitable[Value]],
        for_input: bool = False,
    ) -> Value:
        """One call on the element a target names, waiting for it; errors in its words."""
        target = _target(fn, value, for_input)
        self.touched_page = True

        async def run() -> Value:
            locator = await self._locate(fn, target)
            try:
                result = await query(locator)
            except (PlaywrightTimeoutError, PlaywrightError) as err:
                raise await self._translate_action_error(fn, target, locator, err) from None
            return (
                result if not isinstance(result, int) or isinstance(result, bool) else float(result)
            )

        return self.bridge.call(run())

    def _simple_locator(self, kind: str, matcher: Value) -> Value:
        return LocatorValue(((kind, (matcher_arg(kind, matcher),)),))

    def _url(self, value: Value) -> str:
        url = _string("goto", value, "a URL")
        if self.base_url and not re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", url):
            return urljoin(self.base_url, url)
        return url

    def _navigate(self, fn: str, go: Callable[[Page], Awaitable[object]]) -> Value:
        self.touched_page = True

        async def run() -> None:
            try:
                await go(self.page)
            except PlaywrightTimeoutError as err:
                raise BuiltinError("TimeoutError", f"{fn}: {_first_line(err)}") from None
            except PlaywrightError as err:
                raise BuiltinError("NavigationError", f"{fn}: {_first_line(err)}") from None

        self.bridge.call(run())
        return None

    # --- navigation and actions ------------------------------------------------------

    def goto(self, value: Value) -> Value:
        url = self._url(value)
        return self._navigate("goto", lambda page: page.goto(url, timeout=self.timeouts.navigation))

    def click(self, value: Value, options: Value = None) -> Value:
        kwargs: dict[str, Any] = {}  # Locator.click's keyword options, checked below
        if options is not None:
            if not isinstance(options, dict):
                raise BuiltinError(
                    "TypeError", f"click() options must be an object, got {type_name(options)}"
                )
            for key, option in options.items():
                if key == "button" and option in ("left", "right", "middle"):
                    kwargs["button"] = option
                elif key == "count" and isinstance(option, float):
                    kwargs["click_count"] = int(option)
                elif key == "force" and isinstance(option, bool):
                    kwargs["force"] = option
                elif (
                    key == "modifiers"
                    and isinstance(option, list)
                    and all(isinstance(m, str) for m in option)
                ):
                    kwargs["modifiers"] = option
                else:
                    raise BuiltinError(
                        "TypeError",
                        f"click() option {key}: {render(option)} is not valid "
                        "(known: button, count, force, modifiers)",
                    )
        return self._act(
            "click", value, lambda loc: loc.click(timeout=self.timeouts.action, **kwargs)
        )

    def fill(self, value: Value, text: Value) -> Value:
        content = _string("fill", text, "the text to fill in")
        return self._act(
            "fill",
            value,
            lambda loc: loc.fill(content, timeout=self.timeouts.action),
            for_input=True,
        )

    def type_text(self, value: Value, text: Value) -> Value:
        content = _string("type_text", text, "the text to type")
        return self._act(
            "type_text",
            value,
            lambda loc: loc.press_sequentially(content, timeout=self.timeouts.action),
            for_input=True,
        )

    def press(self, first: Value, key: Value = None) -> Value:
        if key is None:
            key_name = _string("press", first, 'a key such as "Enter"')
            return self._run("press", self.page.keyboard.press(key_name))
        key_name = _string("press", key, 'a key such as "Enter"')
        return self._act(
            "press", first, lambda loc: loc.press(key_name, timeout=self.timeouts.action)
        )

    def select(self, value: Value, option: Value) -> Value:
        if isinstance(option, str):
            choice: str | list[str] = option
        elif isinstance(option, list) and all(isinstance(o, str) for o in option):
            choice = [str(o) for o in option]
        else:
            raise BuiltinError(
                "TypeError",
                f"select() needs an option or an array of options, got {type_name(option)}",
            )
        return self._act(
            "select",
            value,
            lambda loc: loc.select_option(choice, timeout=self.timeouts.action),
            for_input=True,
        )

    def upload(self, value: Value, paths: Value) -> Value:
        names = [paths] if isinstance(paths, str) else paths
        if not isinstance(names, list) or not all(isinstance(p, str) for p in names):
            raise BuiltinError(
                "TypeError", f"upload() needs a path or an array of paths, got {type_name(paths)}"
            )
        files: list[Path] = []
        for name in names:
            assert isinstance(name, str)
            path = (self.root / name).resolve()
            if not path.is_relative_to(self.root):
                raise BuiltinError(
                    "TypeError", f"upload() only takes files inside the project: {name} is outside"
                )
            if not path.is_file():
                raise BuiltinError("TypeError", f"upload(): no such file {name} in the project")
            files.append(path)
        return self._act(
            "upload",
            value,
            lambda loc: loc.set_input_files(files, timeout=self.timeouts.action),
            for_input=True,
        )

    def drag(self, value: Value, to: Value) -> Value:
        destination = _target("drag", to)

        async def do(loc: Locator) -> None:
            other = await self._locate("drag", destination)
            await loc.drag_to(other, timeout=self.timeouts.action)

        return self._act("drag", value, do)

    # --- waits -----------------------------------------------------------------------

    def wait(self, ms: Value) -> Value:
        # NaN compares false with everything, so it is refused explicitly (it would
        # otherwise sleep for no time at all).
        if not isinstance(ms, float | int) or isinstance(ms, bool) or math.isnan(ms) or ms < 0:
            raise BuiltinError("TypeError", f"wait() needs milliseconds, got {render(ms)}")
        if ms > MAX_WAIT_MS:
            raise BuiltinError(
                "RangeError",
                f"wait() is limited to {MAX_WAIT_MS} ms; use wait_for(...) for conditions",
            )
        import asyncio

        self.bridge.call(asyncio.sleep(float(ms) / 1000))
        return None

    def wait_for(self, value: Value) -> Value:
        return self._act(
            "wait_for",
            value,
            lambda loc: loc.wait_for(state="visible", timeout=self.timeouts.action),
        )

    def _url_matcher(self, fn: str, value: Value, in_browser: bool = False) -> TextMatcher:
        """A URL string joined to ``baseURL``, or a regex.

        ``wait_for_url`` matches in Python (the translated pattern), but
        ``expect(page).to_have_url`` sends the pattern to the browser as JavaScript,
        where the translation's Python-only syntax (``\\Z`` for ``$``) would not match.
        """
        if isinstance(value, RegexValue):
            return to_pattern(value) if in_browser else value.pattern
        return self._url(_string(fn, value, "a URL or a regex"))

    def wait_for_url(self, value: Value) -> Value:
        matcher = self._url_matcher("wait_for_url", value)
        # A string matcher is exact, as for expect_url (language.md §6); Playwright
        # would read it as a glob, where "*" and "{a,b}" are patterns.
        wanted = (lambda url: url == matcher) if isinstance(matcher, str) else matcher
        shown = render(value) if isinstance(value, RegexValue) else show_matcher(matcher)
        waited = int(self.timeouts.navigation)

        async def run() -> None:
            try:
                await self.page.wait_for_url(wanted, timeout=self.timeouts.navigation)
            except PlaywrightTimeoutError:
                raise BuiltinError(
                    "TimeoutError",
                    f"wait_for_url: the URL did not match {shown} within {waited} ms "
                    f"(it is {show_matcher(self.page.url)})",
                ) from None

        return self._run("wait_for_url", run())

    # --- queries -----------------------------------------------------------------------

    def title(self, matcher: Value = None) -> Value:
        if matcher is not None:
            return self._simple_locator("title", matcher)
        return self._run("title", self.page.title())

    def attr_of(self, value: Value, name: Value) -> Value:
        attribute = _string("attr_of", name, "an attribute name")
        return self._query(
            "attr_of", value, lambda loc: loc.get_attribute(attribute, timeout=self.timeouts.action)
        )

    def count(self, value: Value) -> Value:
        target = _target("count", value)

        async def run() -> Value:
            return float(await self._counted(target).count())

        return self._run("count", run())

    def is_visible(self, value: Value) -> Value:
        target = _target("is_visible", value)

        async def run() -> Value:
            locator = await self._locate("is_visible", target, wait=False)
            return await locator.filter(visible=True).count() > 0

        return self._run("is_visible", run())

    # --- assertions ------------------------------------------------------------------------

    def _expect(
        self,
        fn: str,
        value: Value,
        wanted: str,
        check: Callable[[LocatorAssertions], Awaitable[None]],
        received: Callable[[Locator], Awaitable[str]] | None = None,
        for_input: bool = False,
    ) -> Value:
        target = _target(fn, value, for_input)
        self.touched_page = True

        async def run() -> None:
            if isinstance(target, SmartTarget):
                try:
                    locator = await target.resolve(self.page, self.timeouts.expect)
                except BuiltinError as err:
                    if err.name == "LocatorError" and "no visible element" in err.message:
                        raise BuiltinError(
                            "AssertionError",
                            f"expected {target.render()} {wanted}, but {err.message}",
                        ) from None
                    raise
            else:
                locator = await self._locate(fn, target, wait=False)
            try:
                await check(expect(locator))
            except AssertionError as err:
                if _STRICT.search(str(err)):
                    # Playwright reports strict mode as a failed expectation; it is
                    # a locator matching too much, as for actions.
                    raise await self._translate_action_error(fn, target, locator, err) from None
                got = ""
                if received is not None:
                    got = await _safe(received(locator))
                else:
                    got = await _state(locator)
                raise BuiltinError(
                    "AssertionError",
                    f"expected {self._describe(target)} {wanted}, received {got}",
                ) from None
            except PlaywrightError as err:
                raise await self._translate_action_error(fn, target, locator, err) from None

        self.bridge.call(run())
        return None

    def expect_hidden(self, value: Value) -> Value:
        """A Locator as Playwright's ``to_be_hidden``; a string when no strategy finds
        a visible element. A string is looked up by every strategy at once, so a hidden
        field and its ``<label>`` are two matches, and strict mode would fail although
        nothing is shown."""
        target = _target("expect_hidden", value)
        if isinstance(target, LocatorValue):
            return self._expect(
                "expect_hidden",
                value,
                "to be hidden",
                lambda e: e.to_be_hidden(timeout=self.timeouts.expect),
            )

        async def run() -> None:
            visible = self._counted(target)
            try:
                await expect(visible).to_have_count(0, timeout=self.timeouts.expect)
            except AssertionError:
                count = await visible.count()
                raise BuiltinError(
                    "AssertionError",
                    f"expected {target.render()} to be hidden, received {count} visible "
                    f"element(s) ({await describe_candidates(visible, count)})",
                ) from None

        return self._run("expect_hidden", run())

    def _state_expectation(
        self,
        fn: str,
        wanted: str,
        method: str,
        received: Callable[[Locator], Awaitable[str]] | None,
    ) -> Callable[[Value], Value]:
        """``expect_checked`` and its kind: one Playwright state assertion each."""

        def check(value: Value) -> Value:
            return self._expect(
                fn,
                value,
                wanted,
                lambda e: getattr(e, method)(timeout=self.timeouts.expect),
                received=received,
            )

        return check

    def _matcher_expectation(
        self,
        fn: str,
        wanted: str,
        method: str,
        parse: Callable[[str, Value], TextMatcher],
        received: Callable[[Locator], Awaitable[str]],
        for_input: bool,
    ) -> Callable[[Value, Value], Value]:
        """``expect_text`` and its kind: one Playwright assertion with a matcher each."""

        def check(value: Value, expected: Value) -> Value:
            m = parse(fn, expected)
            return self._expect(
                fn,
                value,
                f"{wanted} {show_matcher(m)}",
                lambda e: getattr(e, method)(m, timeout=self.timeouts.expect),
                received=received,
                for_input=for_input,
            )

        return check

    def expect_count(self, value: Value, n: Value) -> Value:
        if not isinstance(n, float | int) or isinstance(n, bool) or not float(n).is_integer():
            raise BuiltinError("TypeError", f"expect_count() needs a whole number, got {render(n)}")
        wanted = int(n)
        target = _target("expect_count", value)
        self.touched_page = True

        async def run() -> None:
            locator = self._counted(target)
            try:
                await expect(locator).to_have_count(wanted, timeout=self.timeouts.expect)
            except AssertionError:
                got = await locator.count()
                raise BuiltinError(
                    "AssertionError",
                    f"expected {self._describe(target)} to match {wanted} element(s), "
                    f"received {got}",
                ) from None

        self.bridge.call(run())
        return None

    def expect_attr(self, value: Value, name: Value, matcher: Value) -> Value:
        attribute = _string("expect_attr", name, "an attribute name")
        m = matcher_arg("expect_attr", matcher)

        async def got(loc: Locator) -> str:
            result = await loc.get_attribute(attribute, timeout=500)
            return "no such attribute" if result is None else show_matcher(result)

        return self._expect(
            "expect_attr",
            value,
            f"to have {attribute}={show_matcher(m)}",
            lambda e: e.to_have_attribute(attribute, m, timeout=self.timeouts.expect),
            received=got,
        )

    def expect_url(self, matcher: Value) -> Value:
        m = self._url_matcher("expect_url", matcher, in_browser=True)

        async def url() -> str:
            return self.page.url

        return self._expect_page(
            "URL", m, lambda e: e.to_have_url(m, timeout=self.timeouts.expect), url
        )

    def expect_title(self, matcher: Value) -> Value:
        m = matcher_arg("expect_title", matcher)
        return self._expect_page(
            "title",
            m,
            lambda e: e.to_have_title(m, timeout=self.timeouts.expect),
            lambda: self.page.title(),
        )

    def _expect_page(
        self,
        what: str,
        matcher: TextMatcher,
        check: Callable[[PageAssertions], Awaitable[None]],
        current: Callable[[], Awaitable[str]],
    ) -> Value:
        """A retrying assertion on the page itself, not on an element."""
        self.touched_page = True

        async def run() -> None:
            try:
                await check(expect(self.page))
            except AssertionError:
                got = await current()
                raise BuiltinError(
                    "AssertionError",
                    f"expected {what} {show_matcher(matcher)}, received {show_matcher(got)}",
                ) from None

        self.bridge.call(run())
        return None

    def screenshot(self, name: Value = None) -> Value:
        if name is not None and not isinstance(name, str):
            raise BuiltinError("TypeError", f"screenshot() needs a name, got {type_name(name)}")
        self.touched_page = True
        self.bridge.call(self._take_screenshot(name))
        return None


_NOTHING = "nothing (no element matched)"


async def _safe(awaitable: Awaitable[str]) -> str:
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
    return render(await locator.first.input_value(timeout=500))


async def _checked_state(locator: Locator) -> str:
    if await locator.count() == 0:
        return _NOTHING
    try:
        return "checked" if await locator.first.is_checked(timeout=500) else "unchecked"
    except PlaywrightError as err:
        return f"an element that cannot be checked ({_first_line(err)})"


async def _enabled_state(locator: Locator) -> str:
    if await locator.count() == 0:
        return _NOTHING
    return "enabled" if await locator.first.is_enabled(timeout=500) else "disabled"


async def _state(locator: Locator) -> str:
    try:
        count = await locator.count()
    except PlaywrightError:
        return "an error reading the page"
    if count == 0:
        return "no matching element"
    visible = await locator.first.is_visible()
    return f"{count} element(s), the first {'visible' if visible else 'hidden'}"


_MATCHER_LOCATORS = ("text", "label", "placeholder", "alt")
_HISTORY_MOVES = {"reload": "reload", "back": "go_back", "forward": "go_forward"}
_LOCATOR_CALLS: dict[str, tuple[str, bool, bool]] = {
    # built-in: (Locator method, the target is an input, the scenario gets the answer)
    "dblclick": ("dblclick", False, False),
    "check": ("check", False, False),
    "uncheck": ("uncheck", False, False),
    "hover": ("hover", False, False),
    "focus": ("focus", False, False),
    "scroll_to": ("scroll_into_view_if_needed", False, False),
    "text_of": ("inner_text", False, True),
    "value_of": ("input_value", True, True),
    "is_checked": ("is_checked", False, True),
    "is_enabled": ("is_enabled", False, True),
}
# built-in: (the wanted state in words, the Playwright assertion, what was received
# instead; None says how many elements matched and whether the first is visible)
_STATE_EXPECTATIONS: dict[str, tuple[str, str, Callable[[Locator], Awaitable[str]] | None]] = {
    "expect_visible": ("to be visible", "to_be_visible", None),
    "expect_checked": ("to be checked", "to_be_checked", _checked_state),
    "expect_unchecked": ("to be unchecked", "not_to_be_checked", _checked_state),
    "expect_enabled": ("to be enabled", "to_be_enabled", _enabled_state),
    "expect_disabled": ("to be disabled", "to_be_disabled", _enabled_state),
}
# built-in: (the wanted text in words, the Playwright assertion, how the argument is
# read, what was received instead, the target is an input)
_MATCHER_EXPECTATIONS: dict[
    str,
    tuple[str, str, Callable[[str, Value], TextMatcher], Callable[[Locator], Awaitable[str]], bool],
] = {
    "expect_text": ("to have text", "to_have_text", matcher_arg, _text, False),
    "expect_contains": ("to contain text", "to_contain_text", _string, _text, False),
    "expect_value": ("to have value", "to_have_value", matcher_arg, _value, True),
}
