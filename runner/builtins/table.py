"""The browser built-ins of docs/reference.md, bound to one Playwright page.

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
from playwright.async_api import Locator, Page, Request, expect
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from dsl.errors import BuiltinError
from dsl.interpreter import Builtin
from dsl.values import RegexValue, Value, render, type_name
from runner.browser.bridge import LoopBridge
from runner.browser.bundle import Routed
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
    MODIFIERS,
    POSITION,
    Option,
    PageCalls,
    Timeouts,
    first_line,
    flag,
    in_range,
    one_of,
    read_options,
    string_arg,
    target_of,
    timeout_of,
    timeout_option,
    whole_from,
)
from runner.builtins.page_eval import evaluate, page_arg
from runner.project.signatures import BROWSER_SIGNATURES

__all__ = ["ACTION_OPTIONS", "BrowserBuiltins", "Timeouts"]

MAX_WAIT_MS = 60_000
_ACTION_TIMEOUT = timeout_of("timeout.action")
_FORCE = flag("force", "skip the actionability checks and act at once")
_TRIAL = flag("trial", "only wait until the action could be done, and not do it")
_POINTER: dict[str, Option] = {
    "force": _FORCE,
    "modifiers": MODIFIERS,
    "position": POSITION,
    "timeout": _ACTION_TIMEOUT,
    "trial": _TRIAL,
}
_PRESS = {
    "button": one_of("button", "left", "right", "middle"),
    "delay": in_range(
        "delay",
        0,
        MAX_WAIT_MS,
        f"milliseconds from 0 to {MAX_WAIT_MS} between mousedown and mouseup",
    ),
}
_CLICK_COUNT = whole_from("click_count", 1, "a whole number of clicks, 1 or more")
_FORCED: dict[str, Option] = {"force": _FORCE, "timeout": _ACTION_TIMEOUT}
ACTION_OPTIONS: dict[str, dict[str, Option]] = {
    "click": {**_POINTER, **_PRESS, "clickCount": _CLICK_COUNT, "count": _CLICK_COUNT},
    "dblclick": {**_POINTER, **_PRESS},
    "hover": _POINTER,
    "check": _FORCED,
    "uncheck": _FORCED,
    "fill": _FORCED,
    "select": _FORCED,
    "type_text": {
        "delay": in_range(
            "delay", 0, MAX_WAIT_MS, f"milliseconds from 0 to {MAX_WAIT_MS} between key presses"
        ),
        "timeout": _ACTION_TIMEOUT,
    },
    "goto": {
        "timeout": timeout_of("timeout.navigation"),
        "waitUntil": one_of("wait_until", "load", "domcontentloaded", "networkidle", "commit"),
    },
}
"""The options object each action takes last: Playwright's names (``count`` is ours, the
other name of ``clickCount``), read by :func:`runner.builtins.page_calls.read_options`;
``check`` knows the same keys (:data:`runner.project.signatures.BROWSER_OPTIONS`)."""
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
        mark_routed: Callable[[Request, Routed], None] = lambda request, how: None,
    ) -> None:
        """``log``: a line for the run's output (what the network built-ins did);
        ``add_secret``: a value masked from then on wherever the run shows it (a cookie
        or storage value a saved state holds)."""
        self.use_page = use_page
        self.log = log
        self.add_secret = add_secret
        self.mark_routed = mark_routed
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

    @property
    def page_touches(self) -> int:
        """How many calls that may change the page were made so far."""
        return self.calls.touches

    def builtins(self) -> dict[str, Builtin]:
        impls: dict[str, Callable[..., Value]] = {
            **self._actions_and_queries(),
            **Expectations(self.calls).builtins(),
            **Downloads(self.calls, self.root, self.run_dir).builtins(),
            **Files(self.calls, self.root).builtins(),
            **Dialogs(self.calls, self.dialogs).builtins(),
            **Keyboard(self.calls).builtins(),
            **Network(self.calls, self.log, self.mark_routed).builtins(),
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
            "add_init_script": self.add_init_script,
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
        for name, method in _POINTER_ACTIONS.items():
            impls[name] = self._pointer_action(name, method)
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

    def _navigate(
        self, fn: str, go: Callable[[Page], Awaitable[object]], timed_out: str | None = None
    ) -> Value:
        """``timed_out``: what a timeout says (else Playwright's first line)."""
        self.calls.touch()

        async def run() -> None:
            try:
                await go(self.page)
            except PlaywrightTimeoutError as err:
                raise BuiltinError(
                    "TimeoutError", timed_out or f"{fn}: {first_line(err)}"
                ) from None
            except PlaywrightError as err:
                raise BuiltinError("NavigationError", f"{fn}: {first_line(err)}") from None

        self.bridge.call(run())
        return None

    # --- navigation and actions ------------------------------------------------------

    def goto(self, value: Value, options: Value = None) -> Value:
        """Playwright's ``page.goto(url, {timeout, waitUntil})``: ``waitUntil`` is the
        event it waits for ("load", the default; "domcontentloaded", "networkidle",
        "commit"), within ``timeout`` (the config's ``timeout.navigation`` otherwise)."""
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
        kwargs = read_options("goto", options, ACTION_OPTIONS["goto"])
        timeout = kwargs.get("timeout", self.timeouts.navigation)
        wait_until = kwargs.get("wait_until", "load")
        return self._navigate(
            "goto",
            lambda page: page.goto(url, timeout=timeout, wait_until=wait_until),
            f'goto: {url} did not reach "{wait_until}" within {int(timeout)} ms',
        )

    def add_init_script(self, js: Value) -> Value:
        """Playwright's ``context.addInitScript(script)``: ``js`` runs in every document
        the run's pages load from now on (this page's next navigations and frames, the
        tabs it opens), before the page's own scripts; not in the document shown now.
        A function's source is called, as ``addInitScript(fn)`` calls ``fn``."""
        script = string_arg("add_init_script", js, "the script's source")
        if _FUNCTION_SOURCE.match(script):
            script = f"({script})()"
        context = self.page.context

        async def add() -> None:
            await context.add_init_script(script)

        return self.calls.run("add_init_script", add())

    def _act(
        self,
        fn: str,
        value: Value,
        options: Value,
        do: Callable[[Locator, dict[str, Any]], Awaitable[object]],
        for_input: bool = False,
    ) -> Value:
        """An action with its options object (:data:`ACTION_OPTIONS`): ``do`` gets the
        element and Playwright's keyword arguments, ``timeout`` always among them (the
        call's own, else the config's action timeout)."""
        kwargs = read_options(fn, options, ACTION_OPTIONS[fn])
        own = kwargs.get("timeout")
        kwargs["timeout"] = own if own is not None else self.timeouts.action
        return self.calls.act(
            fn, value, lambda loc: do(loc, kwargs), for_input=for_input, timeout_ms=own
        )

    def _pointer_action(self, fn: str, method: str) -> Callable[..., Value]:
        """``click``, ``dblclick``, ``hover``, ``check``, ``uncheck``: one Locator method
        with the options the action takes."""

        def act(value: Value, options: Value = None) -> Value:
            return self._act(fn, value, options, lambda loc, kw: getattr(loc, method)(**kw))

        return act

    def fill(self, value: Value, text: Value, options: Value = None) -> Value:
        content = string_arg("fill", text, "the text to fill in")
        return self._act(
            "fill", value, options, lambda loc, kw: loc.fill(content, **kw), for_input=True
        )

    def type_text(self, value: Value, text: Value, options: Value = None) -> Value:
        """Playwright's ``pressSequentially(text, {delay})``, after waiting as ``fill``
        waits (:func:`_type_into`)."""
        content = string_arg("type_text", text, "the text to type")
        return self._act(
            "type_text",
            value,
            options,
            lambda loc, kw: _type_into(loc, content, kw),
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

    def select(self, value: Value, option: Value, options: Value = None) -> Value:
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
            "select", value, options, lambda loc, kw: loc.select_option(choice, **kw), True
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
        # A string matcher is exact, as for expect_url (docs/reference.md); Playwright
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
        self.calls.touch()
        self.bridge.call(self._take_screenshot(name))
        return None


async def _type_into(locator: Locator, text: str, kwargs: dict[str, Any]) -> None:
    """Playwright's ``pressSequentially`` after the waits of ``fill``: the element
    visible, enabled and editable within the action's timeout. ``pressSequentially``
    itself focuses the element and presses the keys whatever its state, so typing into
    a hidden or disabled field typed nothing, and passed; a field that never becomes
    editable fails as ``fill`` does, saying why."""
    timeout: float = kwargs["timeout"]
    loop = asyncio.get_running_loop()
    started = loop.time()
    try:
        await expect(locator.filter(visible=True)).to_be_editable(timeout=timeout)
    except AssertionError as err:
        # Raised as Playwright raises an action's errors, so that the action's own
        # translation words them: no element, several, not a field, or why it waited.
        wrong = _NOT_A_FIELD.search(str(err))
        if wrong is not None:
            raise PlaywrightError(wrong.group(0)) from None
        why = await _not_editable_because(locator)
        raise PlaywrightTimeoutError(f"Timeout {int(timeout)}ms exceeded.\n  - {why}") from None
    left = timeout - (loop.time() - started) * 1000
    await locator.press_sequentially(text, delay=kwargs.get("delay"), timeout=max(1.0, left))


_NOT_A_FIELD = re.compile(r"Element is not an <input>, <textarea>.*")


async def _not_editable_because(locator: Locator) -> str:
    """Why ``type_text`` waited for its element in vain, in the words of ``fill``'s."""
    try:
        if await locator.count() == 1 and await locator.is_visible():
            enabled = await locator.is_enabled(timeout=500)
            return "element is not editable" if enabled else "element is not enabled"
    except PlaywrightError:
        pass
    return "element is not visible"


_SCHEME = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*:")


def _is_javascript_url(url: str) -> bool:
    """``javascript:`` as a browser reads it: leading spaces and controls dropped, tabs
    and line breaks anywhere ignored, any case."""
    cleaned = re.sub(r"[\t\n\r]", "", url).lstrip("".join(map(chr, range(0x21))))
    return cleaned.lower().startswith("javascript:")


_MATCHER_LOCATORS = ("text", "label", "placeholder", "alt")
_HISTORY_MOVES = {"reload": "reload", "back": "go_back", "forward": "go_forward"}
_POINTER_ACTIONS = {
    "click": "click",
    "dblclick": "dblclick",
    "hover": "hover",
    "check": "check",
    "uncheck": "uncheck",
}
"""Built-ins that are one Locator method with their options (:data:`ACTION_OPTIONS`)."""
_FUNCTION_SOURCE = re.compile(
    r"\s*(?:async\s+)?(?:function\s*\*?\s*\(|\([^()]*\)\s*=>|[A-Za-z_$][\w$]*\s*=>)"
)
"""The source of a function expression (``() => {...}``, ``function () {...}``), which
Playwright's ``addInitScript(fn)`` calls; a named ``function f() {}`` declares ``f``."""
_LOCATOR_CALLS: dict[str, tuple[str, bool, bool]] = {
    # built-in: (Locator method, the target is an input, the scenario gets the answer)
    "focus": ("focus", False, False),
    "blur": ("blur", False, False),
    "scroll_to": ("scroll_into_view_if_needed", False, False),
    "text_of": ("inner_text", False, True),
    "value_of": ("input_value", True, True),
    "is_checked": ("is_checked", False, True),
    "is_enabled": ("is_enabled", False, True),
}
