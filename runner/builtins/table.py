"""The browser built-ins of language.md §6, bound to one Playwright page.

Each built-in is a plain function the interpreter calls from its thread; the work
happens in a coroutine on the runner's loop (:class:`runner.browser.bridge.LoopBridge`).
Playwright's exceptions are translated at the boundary, in :mod:`runner.builtins.page_calls`,
into the language's ``LocatorError`` / ``TimeoutError`` / ``AssertionError`` /
``NavigationError`` (as :class:`dsl.errors.BuiltinError`, which the interpreter places
at the call site); an exception thrown by an ``evaluate`` script is an ``Error`` in the
script's own words. The built-ins added for ported suites (``evaluate``, the
``expect_not_*`` twins, list forms, ``expect_class``, ``dispatch_event``, ``blur``) are
described, with their Playwright counterparts, in docs/language.md.

:class:`BrowserBuiltins` is the facade a run builds: it holds the actions, queries,
navigation and waits, and assembles the name → built-in table with the expectations of
:mod:`runner.builtins.expectations` and ``evaluate`` of :mod:`runner.builtins.page_eval`,
all sharing one :class:`runner.builtins.page_calls.PageCalls`. The arities come from
:data:`runner.project.signatures.BROWSER_SIGNATURES`, so ``check`` knows them without
Playwright.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Awaitable, Callable, Coroutine
from functools import partial
from pathlib import Path
from typing import Any, cast

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Locator, Page
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from dsl.errors import BuiltinError
from dsl.interpreter import Builtin
from dsl.values import RegexValue, Value, render, type_name
from runner.browser.bridge import LoopBridge
from runner.browser.dialogs import DialogPolicy
from runner.builtins.browser_state import BrowserState
from runner.builtins.clock import Clock
from runner.builtins.dialogs import Dialogs
from runner.builtins.downloads import Downloads
from runner.builtins.expectations import Expectations
from runner.builtins.files import Files
from runner.builtins.keyboard import Keyboard
from runner.builtins.locators import LocatorValue, matcher_arg, role_locator, show_matcher
from runner.builtins.network import Network
from runner.builtins.page_calls import (
    PageCalls,
    Timeouts,
    first_line,
    string_arg,
    target_of,
    timeout_option,
)
from runner.builtins.page_eval import evaluate, page_arg
from runner.project.signatures import BROWSER_SIGNATURES
from runner.text import did_you_mean

__all__ = ["BrowserBuiltins", "Timeouts"]

MAX_WAIT_MS = 60_000
MAX_ACTION_TIMEOUT_MS = 2**31 - 1
"""As the config's timeouts (runner.project.config.MAX_TIMEOUT_MS)."""
_CLICK_OPTIONS = {
    "button": '"left", "right" or "middle"',
    "count": "a whole number of clicks, 1 or more",
    "force": "true or false (skip the actionability checks)",
    "modifiers": 'an array of keys such as ["Shift", "Control"]',
    "timeout": "milliseconds, more than 0 (this click's own; the config's timeout.action "
    "otherwise)",
}
"""click()'s options and what each takes."""
_WAIT_FOR_ADVICE = {
    "state": "it waits for the element to be visible; to wait for it to go, write "
    "expect_hidden(t, {timeout})",
}
"""What to write for Playwright's ``waitFor({state})``, often in a ported suite."""


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
        dialogs: DialogPolicy | None = None,
        use_page: Callable[[Page], None] | None = None,
        run_dir: Path | None = None,
        log: Callable[[str], None] = lambda line: None,
        add_secret: Callable[[str], None] = lambda value: None,
    ) -> None:
        """``log``: a line for the run's output (what the network built-ins did);
        ``add_secret``: a value masked from then on wherever the run shows it (a cookie
        or storage value a saved state holds)."""
        self.use_page = use_page
        self.log = log
        self.add_secret = add_secret
        self.run_dir = run_dir
        """Where the run keeps its artifacts (``download`` saves its files there)."""
        self.calls = PageCalls(bridge, page_provider, timeouts, base_url)
        self.bridge = bridge
        self.timeouts = timeouts
        self.base_url = base_url
        self.root = root.resolve()
        self._take_screenshot = take_screenshot
        self.dialogs = dialogs if dialogs is not None else DialogPolicy()

    @property
    def page(self) -> Page:
        return self.calls.page

    @property
    def touched_page(self) -> bool:
        """Whether a built-in may have changed the page since the run last cleared it."""
        return self.calls.touched_page

    @touched_page.setter
    def touched_page(self, touched: bool) -> None:
        self.calls.touched_page = touched

    def builtins(self) -> dict[str, Builtin]:
        impls: dict[str, Callable[..., Value]] = {
            **self._actions_and_queries(),
            **Expectations(self.calls).builtins(),
            **Downloads(self.calls, self.root, self.run_dir).builtins(),
            **Files(self.calls, self.root).builtins(),
            **Dialogs(self.calls, self.dialogs).builtins(),
            **Keyboard(self.calls).builtins(),
            **Network(self.calls, self.log).builtins(),
            **BrowserState(self.calls, self.root, self.add_secret).builtins(),
            **Clock(self.calls).builtins(),
            "evaluate": partial(evaluate, self.calls),
        }
        return {
            name: Builtin(name, impls[name], low, high)
            for name, (low, high) in BROWSER_SIGNATURES.items()
        }

    def _actions_and_queries(self) -> dict[str, Callable[..., Value]]:
        impls: dict[str, Callable[..., Value]] = {
            "role": role_locator,
            "title": self.title,
            "testid": lambda v: LocatorValue((("testid", (string_arg("testid", v),)),)),
            "css": lambda v: LocatorValue((("css", (string_arg("css", v, "a CSS selector"),)),)),
            "xpath": lambda v: LocatorValue((("xpath", (string_arg("xpath", v, "an XPath"),)),)),
            "goto": self.goto,
            "click": self.click,
            "fill": self.fill,
            "type_text": self.type_text,
            "press": self.press,
            "select": self.select,
            "drag": self.drag,
            "wait": self.wait,
            "wait_for": self.wait_for,
            "wait_for_url": self.wait_for_url,
            "wait_for_load": self.wait_for_load,
            "attr_of": self.attr_of,
            "count": self.count,
            "is_visible": self.is_visible,
            "url": lambda: self.page.url,
            "dispatch_event": self.dispatch_event,
            "screenshot": self.screenshot,
            "switch_page": self.switch_page,
        }
        for kind in _MATCHER_LOCATORS:
            impls[kind] = self._matcher_locator(kind)
        for name, method in _HISTORY_MOVES.items():
            impls[name] = self._history_move(name, method)
        for name, (method, for_input, is_query) in _LOCATOR_CALLS.items():
            impls[name] = self._locator_call(name, method, for_input, is_query)
        return impls

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
            return lambda value: self.calls.query(fn, value, call, for_input=for_input)
        return lambda value: self.calls.act(fn, value, call, for_input=for_input)

    def _simple_locator(self, kind: str, matcher: Value) -> Value:
        return LocatorValue(((kind, (matcher_arg(kind, matcher),)),))

    def _navigate(self, fn: str, go: Callable[[Page], Awaitable[object]]) -> Value:
        self.calls.touched_page = True

        async def run() -> None:
            try:
                await go(self.page)
            except PlaywrightTimeoutError as err:
                raise BuiltinError("TimeoutError", f"{fn}: {first_line(err)}") from None
            except PlaywrightError as err:
                raise BuiltinError("NavigationError", f"{fn}: {first_line(err)}") from None

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
        url = self.calls.url(value)
        if not _SCHEME.match(url):  # relative, and no baseURL to join it to
            raise BuiltinError(
                "NavigationError",
                f"goto: {url!r} is a relative URL and no baseURL is set: set baseURL in "
                "unotest.config.yaml, or give the whole URL (http://...)",
            )
        return self._navigate("goto", lambda page: page.goto(url, timeout=self.timeouts.navigation))

    def click(self, value: Value, options: Value = None) -> Value:
        kwargs: dict[str, Any] = {}  # Locator.click's keyword options, checked below
        timeout = self.timeouts.action
        if options is not None:
            if not isinstance(options, dict):
                raise BuiltinError(
                    "TypeError", f"click() options must be an object, got {type_name(options)}"
                )
            for key, option in options.items():
                if key not in _CLICK_OPTIONS:
                    raise BuiltinError(
                        "TypeError",
                        f"click() has no option '{key}'{did_you_mean(key, _CLICK_OPTIONS)} "
                        f"(its options: {', '.join(_CLICK_OPTIONS)})",
                    )
                if (
                    key == "timeout"
                    and isinstance(option, float)
                    and 0 < option <= MAX_ACTION_TIMEOUT_MS
                ):
                    timeout = option  # this click's own, as Playwright's click({timeout})
                elif key == "button" and option in ("left", "right", "middle"):
                    kwargs["button"] = option
                elif (
                    key == "count"
                    and isinstance(option, float)
                    and option.is_integer()
                    and option >= 1
                ):
                    kwargs["click_count"] = int(option)  # 0 or -3 clicked nothing, and passed
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
                        f"click() option {key}: {render(option)} is not valid: "
                        f"{_CLICK_OPTIONS[key]}",
                    )
        return self.calls.act(
            "click",
            value,
            lambda loc: loc.click(timeout=timeout, **kwargs),
            timeout_ms=timeout if timeout != self.timeouts.action else None,
        )

    def fill(self, value: Value, text: Value) -> Value:
        content = string_arg("fill", text, "the text to fill in")
        return self.calls.act(
            "fill",
            value,
            lambda loc: loc.fill(content, timeout=self.timeouts.action),
            for_input=True,
        )

    def type_text(self, value: Value, text: Value) -> Value:
        content = string_arg("type_text", text, "the text to type")
        return self.calls.act(
            "type_text",
            value,
            lambda loc: loc.press_sequentially(content, timeout=self.timeouts.action),
            for_input=True,
        )

    def press(self, first: Value, key: Value = None) -> Value:
        if key is None:
            key_name = string_arg("press", first, 'a key such as "Enter"')
            return self.calls.run("press", self.page.keyboard.press(key_name))
        key_name = string_arg("press", key, 'a key such as "Enter"')
        return self.calls.act(
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
        return self.calls.act(
            "select",
            value,
            lambda loc: loc.select_option(choice, timeout=self.timeouts.action),
            for_input=True,
        )

    def drag(self, value: Value, to: Value) -> Value:
        destination = target_of("drag", to)

        async def do(loc: Locator) -> None:
            other = await self.calls.locate("drag", destination)
            await loc.drag_to(other, timeout=self.timeouts.action)

        return self.calls.act("drag", value, do)

    def dispatch_event(self, value: Value, event_type: Value, init: Value = None) -> Value:
        """Playwright's ``dispatch_event``: the event is made and sent to the element
        whatever its state (no actionability checks), ``init`` as its properties."""
        kind = string_arg("dispatch_event", event_type, 'an event type such as "click"')
        if init is not None and not isinstance(init, dict):
            raise BuiltinError(
                "TypeError",
                f"dispatch_event() takes the event's properties as an object, "
                f"got {type_name(init)}",
            )
        properties = page_arg("dispatch_event", init)
        return self.calls.act(
            "dispatch_event",
            value,
            lambda loc: loc.dispatch_event(kind, properties, timeout=self.timeouts.action),
        )

    # --- pages -----------------------------------------------------------------------

    def switch_page(self, matcher: Value) -> Value:
        """Drive another page of the run's context from now on (a tab a link opened with
        target=_blank, a window.open popup, or the first page again), the first whose
        URL (a string: exact, joined to baseURL) or title matches; waits for it up to
        the navigation timeout, as Playwright's ``waitForEvent('popup')`` would."""
        if isinstance(matcher, RegexValue):
            pattern = matcher.pattern

            def wanted(url: str, title: str) -> bool:
                return pattern.search(url) is not None or pattern.search(title) is not None

        elif isinstance(matcher, str):
            exact = matcher
            joined = self.calls.url(matcher)

            def wanted(url: str, title: str) -> bool:
                return url == joined or title == exact

        else:
            raise BuiltinError(
                "TypeError",
                f"switch_page() needs the page's URL or title (a string or a regex), "
                f"got {type_name(matcher)}",
            )
        waited = self.timeouts.navigation
        shown = render(matcher) if isinstance(matcher, RegexValue) else repr(matcher)

        async def find() -> Page:
            deadline = asyncio.get_running_loop().time() + waited / 1000
            while True:
                seen: list[str] = []
                for page in self.page.context.pages:
                    if page.is_closed():
                        continue
                    title = await page.title()
                    if wanted(page.url, title):
                        if self.use_page is not None:
                            self.use_page(page)  # on the loop: it subscribes to events
                        return page
                    seen.append(f"{page.url} ({title!r})")
                if asyncio.get_running_loop().time() >= deadline:
                    raise BuiltinError(
                        "TimeoutError",
                        f"switch_page: no page's URL or title matched {shown} within "
                        f"{int(waited)} ms (the pages: {'; '.join(seen) or 'none'})",
                    )
                await asyncio.sleep(0.05)

        self.calls.run("switch_page", find())
        return None

    def wait_for_load(self, state: Value = None) -> Value:
        """Playwright's ``waitForLoadState(state)``: ``"load"`` (the default),
        ``"domcontentloaded"`` or ``"networkidle"`` (no request for 500 ms)."""
        wanted = "load" if state is None else state
        if wanted not in ("load", "domcontentloaded", "networkidle"):
            raise BuiltinError(
                "TypeError",
                'wait_for_load() takes "load", "domcontentloaded" or "networkidle", '
                f"got {render(state)}",
            )
        return self.calls.run(
            "wait_for_load",
            self.page.wait_for_load_state(wanted, timeout=self.timeouts.navigation),  # type: ignore[arg-type]
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
        self.bridge.call(asyncio.sleep(float(ms) / 1000))
        return None

    def wait_for(self, value: Value, options: Value = None) -> Value:
        """``options``: ``{timeout}``, this wait's own (Playwright's
        ``locator.waitFor({timeout})``), else the config's action timeout."""
        own = timeout_option("wait_for", options, "timeout.action", _WAIT_FOR_ADVICE)
        timeout = own if own is not None else self.timeouts.action
        return self.calls.act(
            "wait_for",
            value,
            lambda loc: loc.wait_for(state="visible", timeout=timeout),
            timeout_ms=own,
        )

    def wait_for_url(self, value: Value, options: Value = None) -> Value:
        """``options``: ``{timeout}``, this wait's own, else the navigation timeout."""
        matcher = self.calls.url_matcher("wait_for_url", value)
        # A string matcher is exact, as for expect_url (language.md §6); Playwright
        # would read it as a glob, where "*" and "{a,b}" are patterns.
        wanted = (lambda url: url == matcher) if isinstance(matcher, str) else matcher
        shown = render(value) if isinstance(value, RegexValue) else show_matcher(matcher)
        own = timeout_option("wait_for_url", options, "timeout.navigation")
        timeout = own if own is not None else self.timeouts.navigation
        waited = int(timeout)

        async def run() -> None:
            try:
                await self.page.wait_for_url(wanted, timeout=timeout)
            except PlaywrightTimeoutError:
                raise BuiltinError(
                    "TimeoutError",
                    f"wait_for_url: the URL did not match {shown} within {waited} ms "
                    f"(it is {show_matcher(self.page.url)})",
                ) from None

        return self.calls.run("wait_for_url", run())

    # --- queries -----------------------------------------------------------------------

    def title(self, matcher: Value = None) -> Value:
        if matcher is not None:
            return self._simple_locator("title", matcher)
        return self.calls.run("title", self.page.title())

    def attr_of(self, value: Value, name: Value) -> Value:
        attribute = string_arg("attr_of", name, "an attribute name")
        return self.calls.query(
            "attr_of", value, lambda loc: loc.get_attribute(attribute, timeout=self.timeouts.action)
        )

    def count(self, value: Value) -> Value:
        target = target_of("count", value)

        async def run() -> Value:
            return float(await self.calls.counted(target).count())

        return self.calls.run("count", run())

    def is_visible(self, value: Value) -> Value:
        target = target_of("is_visible", value)

        async def run() -> Value:
            locator = await self.calls.locate("is_visible", target, wait=False)
            return await locator.filter(visible=True).count() > 0

        return self.calls.run("is_visible", run())

    def screenshot(self, name: Value = None) -> Value:
        if name is not None and not isinstance(name, str):
            raise BuiltinError("TypeError", f"screenshot() needs a name, got {type_name(name)}")
        self.calls.touched_page = True
        self.bridge.call(self._take_screenshot(name))
        return None


_SCHEME = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*:")


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
