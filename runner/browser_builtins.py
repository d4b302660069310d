"""The browser built-ins of language.md §6, bound to one Playwright page.

Each built-in is a plain function the interpreter calls from its thread; the work
happens in a coroutine on the runner's loop (:class:`runner.bridge.LoopBridge`).
Playwright's exceptions are translated here, at the boundary, into the language's
``LocatorError`` / ``TimeoutError`` / ``AssertionError`` / ``NavigationError`` (as
:class:`dsl.errors.BuiltinError`, which the interpreter places at the call site); an
exception thrown by an ``evaluate`` script is an ``Error`` in the script's own words.
The built-ins added for ported suites (``evaluate``, the ``expect_not_*`` twins, list
forms, ``expect_class``, ``dispatch_event``, ``blur``) are described, with their
Playwright counterparts, in docs/language.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import math
import re
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast
from urllib.parse import ParseResult, urljoin

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Locator, Page, expect
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from dsl.errors import BuiltinError
from dsl.interpreter import Builtin
from dsl.values import HostValue, RegexValue, Value, render, type_name
from runner.bridge import LoopBridge
from runner.locators import (
    LocatorValue,
    SmartTarget,
    TextMatcher,
    class_matcher,
    class_pattern,
    contains_pattern,
    describe_candidates,
    matcher_arg,
    role_locator,
    show_matcher,
    show_matchers,
    to_pattern,
)
from runner.signatures import BROWSER_SIGNATURES

if TYPE_CHECKING:
    # what expect() returns; playwright.async_api does not list them in its __all__
    from playwright.async_api._generated import PageAssertions

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
            "evaluate": self.evaluate,
            "dispatch_event": self.dispatch_event,
            "expect_hidden": lambda v: self._expect_hidden("expect_hidden", v, "to be hidden"),
            "expect_not_visible": lambda v: self._expect_hidden(
                "expect_not_visible", v, "not to be visible"
            ),
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
        for name, (wanted, method, received, negated) in _STATE_EXPECTATIONS.items():
            impls[name] = self._state_expectation(name, wanted, method, received, negated)
        for negated, prefix in ((False, "expect_"), (True, "expect_not_")):
            for kind, matcher_kind in _MATCHER_KINDS.items():
                impls[prefix + kind] = self._matcher_expectation(
                    prefix + kind, matcher_kind, negated
                )
            impls[prefix + "count"] = self._count_expectation(prefix + "count", negated)
            impls[prefix + "attr"] = self._attr_expectation(prefix + "attr", negated)
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
        if isinstance(value, str) and _is_javascript_url(value):
            raise BuiltinError(
                "TypeError",
                "goto() does not run javascript: URLs; run code in the page with "
                "evaluate(js), which returns its result",
            )
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

    def dispatch_event(self, value: Value, event_type: Value, init: Value = None) -> Value:
        """Playwright's ``dispatch_event``: the event is made and sent to the element
        whatever its state (no actionability checks), ``init`` as its properties."""
        kind = _string("dispatch_event", event_type, 'an event type such as "click"')
        if init is not None and not isinstance(init, dict):
            raise BuiltinError(
                "TypeError",
                f"dispatch_event() takes the event's properties as an object, "
                f"got {type_name(init)}",
            )
        properties = _page_arg("dispatch_event", init)
        return self._act(
            "dispatch_event",
            value,
            lambda loc: loc.dispatch_event(kind, properties, timeout=self.timeouts.action),
        )

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

    # --- the page's own JavaScript ------------------------------------------------------

    def evaluate(self, *args: Value) -> Value:
        """``evaluate(js, arg?)`` in the page, ``evaluate(locator, js, arg?)`` on the
        element: Playwright's ``evaluate`` (a function is called with the argument, after
        the element; anything else is evaluated as an expression; a promise is awaited),
        the answer as a scenario value. The target must be a Locator: a string first
        argument is the script."""
        if args and isinstance(args[0], LocatorValue):
            if len(args) < 2:
                raise BuiltinError(
                    "TypeError", "evaluate(locator, js, arg?) needs the JavaScript to run"
                )
            script = _string("evaluate", args[1], "the JavaScript to run")
            arg = _page_arg("evaluate", args[2] if len(args) > 2 else None)
            shown = args[0].render()
            return self._query(
                "evaluate", args[0], lambda loc: self._on_element(loc, shown, script, arg)
            )
        if len(args) > 2:
            raise BuiltinError(
                "TypeError",
                "evaluate() takes (js, arg?) in the page or (locator, js, arg?) on an element, "
                f"whose target is a Locator (got {type_name(args[0])})",
            )
        script = _string("evaluate", args[0], "the JavaScript to run (or a Locator, then it)")
        arg = _page_arg("evaluate", args[1] if len(args) > 1 else None)
        self.touched_page = True

        async def run() -> Value:
            return await self._script("evaluate", self.page.evaluate(script, arg))

        return self.bridge.call(run())

    async def _on_element(self, locator: Locator, shown: str, script: str, arg: object) -> Value:
        # Locator.evaluate waits for the element (strictly) with no timeout of its own for
        # the script; the element is waited for first, with the action timeout, and the
        # script then gets a timeout of its own.
        handle = await locator.element_handle(timeout=self.timeouts.action)
        try:
            return await self._script(f"evaluate on {shown}", handle.evaluate(script, arg))
        finally:
            with contextlib.suppress(PlaywrightError):  # the page is gone, and the handle
                await handle.dispose()

    async def _script(self, what: str, evaluation: Awaitable[object]) -> Value:
        """A script's answer, within the action timeout (Playwright's evaluate has none,
        and a step must end); an exception thrown in the page becomes an ``Error``."""
        waited = self.timeouts.action
        try:
            result = await asyncio.wait_for(evaluation, waited / 1000)
        except PlaywrightError as err:
            raise BuiltinError("Error", f"{what}: {_script_error(err)}") from None
        except TimeoutError:
            raise BuiltinError(
                "TimeoutError", f"{what}: the script did not finish within {int(waited)} ms"
            ) from None
        return _from_page(result)

    # --- assertions ------------------------------------------------------------------------

    async def _expected(self, target: Target, wanted: str) -> Locator:
        """What an expectation on one element checks: a Locator as written; a string's
        one visible element (finding none is the expectation failing)."""
        if isinstance(target, LocatorValue):
            return target.build(self.page)
        try:
            return await target.resolve(self.page, self.timeouts.expect)
        except BuiltinError as err:
            if err.name == "LocatorError" and "no visible element" in err.message:
                raise BuiltinError(
                    "AssertionError", f"expected {target.render()} {wanted}, but {err.message}"
                ) from None
            raise

    def _expect(
        self,
        fn: str,
        value: Value,
        wanted: str,
        check: Callable[[Locator], Awaitable[None]],
        received: Callable[[Locator], Awaitable[str]] | None = None,
        *,
        for_input: bool = False,
        negated: bool = False,
        every: bool = False,
    ) -> Value:
        """One retrying Playwright assertion on what ``value`` names; ``every``: on all
        the elements it matches (a string: every visible match), not on exactly one."""
        target = _target(fn, value, for_input)
        self.touched_page = True

        async def run() -> None:
            locator = self._counted(target) if every else await self._expected(target, wanted)
            try:
                await check(locator)
            except AssertionError as err:
                if _STRICT.search(str(err)):
                    # Playwright reports strict mode as a failed expectation; it is
                    # a locator matching too much, as for actions.
                    raise await self._translate_action_error(fn, target, locator, err) from None
                got = await _safe(received(locator)) if received else await _state(locator)
                raise await self._unmet(target, locator, wanted, got, negated, every) from None
            except PlaywrightError as err:
                raise await self._translate_action_error(fn, target, locator, err) from None

        self.bridge.call(run())
        return None

    async def _unmet(
        self, target: Target, locator: Locator, wanted: str, got: str, negated: bool, every: bool
    ) -> BuiltinError:
        """The failure of an expectation: what was wanted, what was there instead (for a
        negated one, what was still there)."""
        shown = target.render()
        if not negated:
            return BuiltinError("AssertionError", f"expected {shown} {wanted}, received {got}")
        if not every and await _count(locator) == 0:
            return BuiltinError(
                "AssertionError",
                f"expected {shown} {wanted}, but no element matched: a negated expectation "
                "needs the element, as Playwright's not does (expect_hidden waits for it to go)",
            )
        return BuiltinError(
            "AssertionError",
            f"expected {shown} {wanted}, still received {got} after "
            f"{int(self.timeouts.expect)} ms",
        )

    def _expect_hidden(self, fn: str, value: Value, wanted: str) -> Value:
        """A Locator as Playwright's ``to_be_hidden``; a string when no strategy finds
        a visible element. A string is looked up by every strategy at once, so a hidden
        field and its ``<label>`` are two matches, and strict mode would fail although
        nothing is shown. ``expect_not_visible`` is this too."""
        target = _target(fn, value)
        if isinstance(target, LocatorValue):
            return self._expect(
                fn,
                value,
                wanted,
                lambda loc: expect(loc).to_be_hidden(timeout=self.timeouts.expect),
            )

        async def run() -> None:
            visible = self._counted(target)
            try:
                await expect(visible).to_have_count(0, timeout=self.timeouts.expect)
            except AssertionError:
                count = await visible.count()
                raise BuiltinError(
                    "AssertionError",
                    f"expected {target.render()} {wanted}, received {count} visible "
                    f"element(s) ({await describe_candidates(visible, count)})",
                ) from None

        return self._run(fn, run())

    def _state_expectation(
        self,
        fn: str,
        wanted: str,
        method: str,
        received: Callable[[Locator], Awaitable[str]] | None,
        negated: bool,
    ) -> Callable[[Value], Value]:
        """``expect_checked`` and its kind: one Playwright state assertion each."""

        def check(value: Value) -> Value:
            return self._expect(
                fn,
                value,
                wanted,
                lambda loc: _assertion(loc, method)(timeout=self.timeouts.expect),
                received=received,
                negated=negated,
            )

        return check

    def _matcher_expectation(
        self, fn: str, kind: _MatcherKind, negated: bool
    ) -> Callable[[Value, Value], Value]:
        """``expect_text`` and its kind, and their ``expect_not_`` twins: a matcher checks
        the one element; an array of them checks every element, in order, atomically."""
        wanted = ("not " if negated else "") + kind.wanted

        def check(value: Value, expected: Value) -> Value:
            timeout = self.timeouts.expect
            if isinstance(expected, list):
                matchers = _matcher_items(fn, expected, kind.parse)
                return self._expect(
                    fn,
                    value,
                    f"{wanted} {show_matchers(matchers)}",
                    lambda loc: kind.every(loc, matchers, negated, timeout),
                    received=kind.received_all,
                    for_input=kind.for_input,
                    negated=negated,
                    every=True,
                )
            m = kind.parse(fn, expected)
            return self._expect(
                fn,
                value,
                f"{wanted} {show_matcher(m)}",
                lambda loc: kind.one(loc, m, negated, timeout),
                received=kind.received,
                for_input=kind.for_input,
                negated=negated,
            )

        return check

    def _count_expectation(self, fn: str, negated: bool) -> Callable[[Value, Value], Value]:
        """``expect_count`` and ``expect_not_count``: what :meth:`_counted` finds."""

        def check(value: Value, n: Value) -> Value:
            if not isinstance(n, float | int) or isinstance(n, bool) or not float(n).is_integer():
                raise BuiltinError("TypeError", f"{fn}() needs a whole number, got {render(n)}")
            wanted = int(n)

            async def got(locator: Locator) -> str:
                return str(await locator.count())

            return self._expect(
                fn,
                value,
                f"{'not ' if negated else ''}to match {wanted} element(s)",
                lambda loc: _assertion(loc, "to_have_count", negated)(
                    wanted, timeout=self.timeouts.expect
                ),
                received=got,
                negated=negated,
                every=True,
            )

        return check

    def _attr_expectation(self, fn: str, negated: bool) -> Callable[[Value, Value, Value], Value]:
        """``expect_attr`` and ``expect_not_attr``."""

        def check(value: Value, name: Value, matcher: Value) -> Value:
            attribute = _string(fn, name, "an attribute name")
            m = matcher_arg(fn, matcher)

            async def got(loc: Locator) -> str:
                result = await loc.get_attribute(attribute, timeout=500)
                return "no such attribute" if result is None else show_matcher(result)

            return self._expect(
                fn,
                value,
                f"{'not ' if negated else ''}to have {attribute}={show_matcher(m)}",
                lambda loc: _assertion(loc, "to_have_attribute", negated)(
                    attribute, m, timeout=self.timeouts.expect
                ),
                received=got,
                negated=negated,
            )

        return check

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


async def _count(locator: Locator) -> int:
    try:
        return await locator.count()
    except PlaywrightError:
        return -1


def _assertion(
    locator: Locator, method: str, negated: bool = False
) -> Callable[..., Awaitable[None]]:
    """``expect(locator).method``, or its ``not_`` twin when ``negated``."""
    name = ("not_" if negated else "") + method
    return cast(Callable[..., Awaitable[None]], getattr(expect(locator), name))


# --- matcher expectations: one element, or every element in order -----------------------


def _text_matcher(fn: str, value: Value) -> TextMatcher:
    if isinstance(value, str | RegexValue):
        return matcher_arg(fn, value)
    raise BuiltinError(
        "TypeError", f"{fn}() needs a string, a regex or an array of them, got {type_name(value)}"
    )


def _contained(fn: str, value: Value) -> TextMatcher:
    if isinstance(value, str):
        return value
    raise BuiltinError(
        "TypeError", f"{fn}() needs a string or an array of strings, got {type_name(value)}"
    )


def _matcher_items(
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
        return _assertion(locator, method, negated)(m, timeout=timeout)

    return one


async def _one_class(locator: Locator, m: TextMatcher, negated: bool, timeout: float) -> None:
    # Class names: the class list contains them; a regex: searched in the attribute.
    method = "to_contain_class" if isinstance(m, str) else "to_have_class"
    await _assertion(locator, method, negated)(m, timeout=timeout)


async def _every_text(
    locator: Locator, matchers: list[TextMatcher], negated: bool, timeout: float
) -> None:
    await _assertion(locator, "to_have_text", negated)(matchers, timeout=timeout)


async def _every_contained(
    locator: Locator, matchers: list[TextMatcher], negated: bool, timeout: float
) -> None:
    # Playwright's array to_contain_text matches a subsequence of the elements; here
    # every element is matched in order, so each string becomes a search of to_have_text.
    patterns = [contains_pattern(m) if isinstance(m, str) else m for m in matchers]
    await _assertion(locator, "to_have_text", negated)(patterns, timeout=timeout)


async def _every_class(
    locator: Locator, matchers: list[TextMatcher], negated: bool, timeout: float
) -> None:
    if all(isinstance(m, str) for m in matchers):
        await _assertion(locator, "to_contain_class", negated)(matchers, timeout=timeout)
        return
    patterns = [class_pattern(m) if isinstance(m, str) else m for m in matchers]
    await _assertion(locator, "to_have_class", negated)(patterns, timeout=timeout)


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
    return render(_from_page(await locator.evaluate_all(script)))


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
class _MatcherKind:
    """One kind of matcher expectation, for ``expect_<kind>`` and ``expect_not_<kind>``."""

    wanted: str  # in words: "to have text"
    parse: Callable[[str, Value], TextMatcher]  # one matcher (or one item of an array)
    one: Callable[[Locator, TextMatcher, bool, float], Awaitable[None]]
    every: Callable[[Locator, list[TextMatcher], bool, float], Awaitable[None]]
    received: Callable[[Locator], Awaitable[str]]  # what the one element has instead
    received_all: Callable[[Locator], Awaitable[str]]  # what every element has instead
    for_input: bool = False  # a string target is looked up as a form field first


_MATCHER_KINDS = {
    "text": _MatcherKind(
        "to have text", _text_matcher, _one("to_have_text"), _every_text, _text, _texts
    ),
    "contains": _MatcherKind(
        "to contain text", _contained, _one("to_contain_text"), _every_contained, _text, _texts
    ),
    "value": _MatcherKind(
        "to have value", _text_matcher, _one("to_have_value"), _every_value, _value, _values, True
    ),
    "class": _MatcherKind(
        "to have class", class_matcher, _one_class, _every_class, _class_attr, _classes
    ),
}


# --- values crossing into and out of the page ---------------------------------------------

MAX_PAGE_DEPTH = 200
MAX_PAGE_ITEMS = 1_000_000


def _page_arg(fn: str, value: Value, active: frozenset[int] = frozenset()) -> object:
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
            return [_page_arg(fn, item, inside) for item in value]
        return {key: _page_arg(fn, item, inside) for key, item in value.items()}
    assert isinstance(value, HostValue)
    raise BuiltinError(
        "TypeError",
        f"{fn}() passes only data into the page (strings, numbers, booleans, null, arrays, "
        f"objects, regexes), got {type_name(value)}",
    )


def _from_page(data: object) -> Value:
    """What an evaluation answered, as a scenario value: its JSON value (a Date as its
    ISO text, a URL as its href, an Error as ``{name, message}``, a Map, Set or RegExp as
    ``{}``, as ``JSON.stringify`` writes them; a DOM node stays Playwright's
    ``"ref: <Node>"``)."""
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
        if data is None or isinstance(data, str | bool):
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
            return {str(key): self.convert(item, depth + 1) for key, item in data.items()}
        finally:
            self.open.discard(id(data))


_EVALUATE_PREFIX = re.compile(r"^\w+\.evaluate(?:_all)?: ")


def _script_error(err: PlaywrightError) -> str:
    """A script's exception as ``TypeError: x is not a function``, without Playwright's
    ``Page.evaluate:`` and the stack of its own wrapper."""
    return _EVALUATE_PREFIX.sub("", _first_line(err))


def _is_javascript_url(url: str) -> bool:
    """``javascript:`` as a browser reads it: leading spaces and controls dropped, tabs
    and line breaks anywhere ignored, any case."""
    cleaned = re.sub(r"[\t\n\r]", "", url).lstrip("".join(map(chr, range(0x21))))
    return cleaned.lower().startswith("javascript:")


_MATCHER_LOCATORS = ("text", "label", "placeholder", "alt")
_HISTORY_MOVES = {"reload": "reload", "back": "go_back", "forward": "go_forward"}
_LOCATOR_CALLS: dict[str, tuple[str, bool, bool]] = {
    # built-in: (Locator method, the target is an input, the scenario gets the answer)
    "dblclick": ("dblclick", False, False),
    "check": ("check", False, False),
    "uncheck": ("uncheck", False, False),
    "hover": ("hover", False, False),
    "focus": ("focus", False, False),
    "blur": ("blur", False, False),
    "scroll_to": ("scroll_into_view_if_needed", False, False),
    "text_of": ("inner_text", False, True),
    "value_of": ("input_value", True, True),
    "is_checked": ("is_checked", False, True),
    "is_enabled": ("is_enabled", False, True),
}
# built-in: (the wanted state in words, the Playwright assertion, what was received
# instead (None: how many elements matched and whether the first is visible), negated:
# a failure says what was still there and a missing element is named as such)
_STATE_EXPECTATIONS: dict[
    str, tuple[str, str, Callable[[Locator], Awaitable[str]] | None, bool]
] = {
    "expect_visible": ("to be visible", "to_be_visible", None, False),
    "expect_not_hidden": ("not to be hidden", "to_be_visible", None, False),
    "expect_checked": ("to be checked", "to_be_checked", _checked_state, False),
    "expect_not_checked": ("not to be checked", "not_to_be_checked", _checked_state, True),
    "expect_unchecked": ("to be unchecked", "not_to_be_checked", _checked_state, False),
    "expect_not_unchecked": ("not to be unchecked", "to_be_checked", _checked_state, True),
    "expect_enabled": ("to be enabled", "to_be_enabled", _enabled_state, False),
    "expect_not_enabled": ("not to be enabled", "not_to_be_enabled", _enabled_state, True),
    "expect_disabled": ("to be disabled", "to_be_disabled", _enabled_state, False),
    "expect_not_disabled": ("not to be disabled", "not_to_be_disabled", _enabled_state, True),
}
