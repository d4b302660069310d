"""The ``expect_*`` built-ins and their ``expect_not_*`` twins: retrying assertions.

Unlike an action, an expectation keeps asking until the page agrees or the expect
timeout ends, and its failure is an ``AssertionError`` that says what was wanted and
what was there instead (for a negated one, what was still there). Every expectation on
an element goes through one path, :meth:`Expectations._expect`, so they all find the
element, treat strict mode and word a failure alike; what each kind asks Playwright and
reads back is in :mod:`runner.builtins.expect_checks`. The table of names to built-ins is
:meth:`Expectations.builtins`, merged into the browser built-ins by
:class:`runner.builtins.table.BrowserBuiltins`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Locator, expect

from dsl.errors import BuiltinError
from dsl.values import Value, render
from runner.builtins.expect_checks import (
    MATCHER_KINDS,
    PAIR_KINDS,
    MatcherKind,
    PairKind,
    assertion,
    checked_state,
    editable_state,
    element_state,
    empty_state,
    enabled_state,
    focused_state,
    matcher_items,
    read_safely,
    safe_count,
    viewport_share,
    viewport_state,
)
from runner.builtins.locators import (
    LocatorValue,
    TextMatcher,
    describe_candidates,
    matcher_arg,
    show_matcher,
    show_matchers,
)
from runner.builtins.page_calls import (
    STRICT_VIOLATION,
    Option,
    PageCalls,
    Target,
    flag,
    in_range,
    read_options,
    string_arg,
    target_of,
    timeout_of,
)
from runner.project.signatures import BROWSER_SIGNATURES

__all__ = ["Expectations"]


class Expectations:
    """The expectations of one run, on the page :class:`runner.builtins.page_calls.PageCalls`
    reaches, with its expect timeout."""

    def __init__(self, calls: PageCalls) -> None:
        self.calls = calls
        self._own_timeout: float | None = None
        """The ``{timeout}`` of the expectation being checked, if it gave one."""
        self._options: dict[str, Any] = {}
        """Its other options (``expect_in_viewport``'s ``ratio``), as Playwright's."""

    def _timeout(self) -> float:
        """The expect timeout of the expectation being checked: its own ``{timeout}``,
        else the config's ``timeout.expect``."""
        own = self._own_timeout
        return own if own is not None else self.calls.timeouts.expect

    def builtins(self) -> dict[str, Callable[..., Value]]:
        """Every ``expect_*`` and ``expect_not_*`` built-in, by name, each taking a last
        ``{timeout}`` object besides its own arguments."""
        return {name: self._with_options(name, impl) for name, impl in self._impls().items()}

    def _with_options(self, fn: str, impl: Callable[..., Value]) -> Callable[..., Value]:
        """``impl`` taking one more, last argument: ``{timeout, soft}``. ``timeout``, in
        milliseconds, is this expectation's own (Playwright's
        ``expect(loc).toBeVisible({timeout})``); ``soft: true`` makes its failure a soft
        one (``expect.soft``: the run records it and the scenario goes on). The
        scenario thread checks one expectation at a time, so the options are kept on
        ``self`` while ``impl`` runs."""
        with_options = BROWSER_SIGNATURES[fn][1]
        known = {**_COMMON_OPTIONS, **_MORE_OPTIONS.get(fn, {})}

        def call(*args: Value) -> Value:
            if len(args) != with_options:
                return impl(*args)
            self._options = read_options(fn, args[-1], known)
            self._own_timeout = self._options.pop("timeout", None)
            soft = self._options.pop("soft", False)
            try:
                return impl(*args[:-1])
            except BuiltinError as err:
                # What was wanted is not there: soft. A wrong argument stays an error.
                if soft and err.name != "TypeError":
                    err.soft = True
                raise
            finally:
                self._own_timeout = None
                self._options = {}

        return call

    def _impls(self) -> dict[str, Callable[..., Value]]:
        impls: dict[str, Callable[..., Value]] = {
            "expect_hidden": lambda v: self._expect_hidden("expect_hidden", v, "to be hidden"),
            "expect_not_visible": lambda v: self._expect_hidden(
                "expect_not_visible", v, "not to be visible"
            ),
        }
        for name, (wanted, method, received, negated) in _STATE_EXPECTATIONS.items():
            impls[name] = self._state_expectation(name, wanted, method, received, negated)
        for negated, prefix in ((False, "expect_"), (True, "expect_not_")):
            for kind, matcher_kind in MATCHER_KINDS.items():
                impls[prefix + kind] = self._matcher_expectation(
                    prefix + kind, matcher_kind, negated
                )
            impls[prefix + "count"] = self._count_expectation(prefix + "count", negated)
            for kind, pair_kind in PAIR_KINDS.items():
                impls[prefix + kind] = self._pair_expectation(prefix + kind, pair_kind, negated)
            impls[prefix + "in_viewport"] = self._viewport_expectation(
                prefix + "in_viewport", negated
            )
            impls[prefix + "url"] = self._url_expectation(prefix + "url", negated)
            impls[prefix + "title"] = self._title_expectation(prefix + "title", negated)
        return impls

    async def _expected(self, target: Target, wanted: str) -> Locator:
        """What an expectation on one element checks: a Locator as written; a string's
        one visible element (finding none is the expectation failing)."""
        if isinstance(target, LocatorValue):
            return target.build(self.calls.page)
        try:
            return await target.resolve(self.calls.page, self._timeout())
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
        target = target_of(fn, value, for_input)
        calls = self.calls
        calls.touch()

        async def run() -> None:
            locator = calls.counted(target) if every else await self._expected(target, wanted)
            try:
                await check(locator)
            except AssertionError as err:
                if STRICT_VIOLATION.search(str(err)):
                    # Playwright reports strict mode as a failed expectation; it is
                    # a locator matching too much, as for actions.
                    raise await calls.translate_action_error(fn, target, locator, err) from None
                got = (
                    await read_safely(received(locator))
                    if received
                    else await element_state(locator)
                )
                raise await self._unmet(target, locator, wanted, got, negated, every) from None
            except PlaywrightError as err:
                raise await calls.translate_action_error(fn, target, locator, err) from None

        calls.bridge.call(run())
        return None

    async def _unmet(
        self, target: Target, locator: Locator, wanted: str, got: str, negated: bool, every: bool
    ) -> BuiltinError:
        """The failure of an expectation: what was wanted, what was there instead (for a
        negated one, what was still there)."""
        shown = target.render()
        if not negated:
            return BuiltinError("AssertionError", f"expected {shown} {wanted}, received {got}")
        if not every and await safe_count(locator) == 0:
            return BuiltinError(
                "AssertionError",
                f"expected {shown} {wanted}, but no element matched: a negated expectation "
                "needs the element, as Playwright's not does (expect_hidden waits for it to go)",
            )
        return BuiltinError(
            "AssertionError",
            f"expected {shown} {wanted}, still received {got} after {int(self._timeout())} ms",
        )

    def _expect_hidden(self, fn: str, value: Value, wanted: str) -> Value:
        """A Locator as Playwright's ``to_be_hidden``; a string when no strategy finds
        a visible element. A string is looked up by every strategy at once, so a hidden
        field and its ``<label>`` are two matches, and strict mode would fail although
        nothing is shown. ``expect_not_visible`` is this too."""
        target = target_of(fn, value)
        if isinstance(target, LocatorValue):
            return self._expect(
                fn,
                value,
                wanted,
                lambda loc: expect(loc).to_be_hidden(timeout=self._timeout()),
            )

        async def run() -> None:
            visible = self.calls.counted(target)
            try:
                await expect(visible).to_have_count(0, timeout=self._timeout())
            except AssertionError:
                count = await visible.count()
                raise BuiltinError(
                    "AssertionError",
                    f"expected {target.render()} {wanted}, received {count} visible "
                    f"element(s) ({await describe_candidates(visible, count)})",
                ) from None

        return self.calls.run(fn, run())

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
                lambda loc: assertion(loc, method)(timeout=self._timeout()),
                received=received,
                negated=negated,
            )

        return check

    def _matcher_expectation(
        self, fn: str, kind: MatcherKind, negated: bool
    ) -> Callable[[Value, Value], Value]:
        """``expect_text`` and its kind, and their ``expect_not_`` twins: a matcher checks
        the one element; an array of them checks every element, in order, atomically."""
        wanted = ("not " if negated else "") + kind.wanted

        def check(value: Value, expected: Value) -> Value:
            timeout = self._timeout()
            if isinstance(expected, list):
                matchers = matcher_items(fn, expected, kind.parse)
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
        """``expect_count`` and ``expect_not_count``: what
        :meth:`runner.builtins.page_calls.PageCalls.counted` finds."""

        def check(value: Value, n: Value) -> Value:
            if (
                not isinstance(n, float | int)
                or isinstance(n, bool)
                or not float(n).is_integer()
                or n < 0
            ):
                # -1 waited the whole timeout for a count no page can have.
                raise BuiltinError(
                    "TypeError", f"{fn}() needs a whole number from 0, got {render(n)}"
                )
            wanted = int(n)

            async def got(locator: Locator) -> str:
                return str(await locator.count())

            return self._expect(
                fn,
                value,
                f"{'not ' if negated else ''}to match {wanted} element(s)",
                lambda loc: assertion(loc, "to_have_count", negated)(
                    wanted, timeout=self._timeout()
                ),
                received=got,
                negated=negated,
                every=True,
            )

        return check

    def _pair_expectation(
        self, fn: str, kind: PairKind, negated: bool
    ) -> Callable[[Value, Value, Value], Value]:
        """``expect_attr``, ``expect_css``, ``expect_js_property`` and their twins: one
        named part of the element (:data:`runner.builtins.expect_checks.PAIR_KINDS`)."""

        def check(value: Value, name: Value, expected: Value) -> Value:
            key = string_arg(fn, name, kind.name_is)
            wanted, shown = kind.parse(fn, expected)

            async def got(loc: Locator) -> str:
                return await kind.received(loc, key)

            return self._expect(
                fn,
                value,
                f"{'not ' if negated else ''}{kind.wanted(key, shown)}",
                lambda loc: assertion(loc, kind.method, negated)(
                    key, wanted, timeout=self._timeout()
                ),
                received=got,
                negated=negated,
            )

        return check

    def _viewport_expectation(self, fn: str, negated: bool) -> Callable[[Value], Value]:
        """``expect_in_viewport(t, {ratio})`` and its twin: Playwright's
        ``toBeInViewport({ratio})``, the part of the element the viewport must show."""

        def check(value: Value) -> Value:
            ratio = self._options.get("ratio")
            wanted = "to be in the viewport"
            if ratio:
                wanted = f"to have at least {viewport_share(ratio)} in the viewport"
            kwargs = {} if ratio is None else {"ratio": ratio}
            return self._expect(
                fn,
                value,
                ("not " if negated else "") + wanted,
                lambda loc: assertion(loc, "to_be_in_viewport", negated)(
                    timeout=self._timeout(), **kwargs
                ),
                received=viewport_state,
                negated=negated,
            )

        return check

    def _url_expectation(self, fn: str, negated: bool) -> Callable[[Value], Value]:
        def check(matcher: Value) -> Value:
            m = self.calls.url_matcher(fn, matcher, in_browser=True)

            async def url() -> str:
                return self.calls.page.url

            return self._expect_page("URL", m, "to_have_url", url, negated)

        return check

    def _title_expectation(self, fn: str, negated: bool) -> Callable[[Value], Value]:
        def check(matcher: Value) -> Value:
            m = matcher_arg(fn, matcher)
            return self._expect_page("title", m, "to_have_title", self.calls.page.title, negated)

        return check

    def _expect_page(
        self,
        what: str,
        matcher: TextMatcher,
        method: str,
        current: Callable[[], Awaitable[str]],
        negated: bool,
    ) -> Value:
        """A retrying assertion on the page itself, not on an element: Playwright's
        ``expect(page).method`` (or its ``not_`` twin when ``negated``)."""
        calls = self.calls
        calls.touch()
        name = ("not_" if negated else "") + method

        async def run() -> None:
            try:
                check: Callable[..., Awaitable[None]] = getattr(expect(calls.page), name)
                await check(matcher, timeout=self._timeout())
            except AssertionError:
                got = show_matcher(await current())
                shown = show_matcher(matcher)
                raise BuiltinError(
                    "AssertionError",
                    f"expected {what} not {shown}, still received {got} after "
                    f"{int(self._timeout())} ms"
                    if negated
                    else f"expected {what} {shown}, received {got}",
                ) from None

        calls.bridge.call(run())
        return None


# built-in: (the wanted state in words, the Playwright assertion, what was received
# instead (None: how many elements matched and whether the first is visible), negated:
# a failure says what was still there and a missing element is named as such)
_STATE_EXPECTATIONS: dict[
    str, tuple[str, str, Callable[[Locator], Awaitable[str]] | None, bool]
] = {
    "expect_visible": ("to be visible", "to_be_visible", None, False),
    "expect_not_hidden": ("not to be hidden", "to_be_visible", None, False),
    "expect_checked": ("to be checked", "to_be_checked", checked_state, False),
    "expect_not_checked": ("not to be checked", "not_to_be_checked", checked_state, True),
    "expect_unchecked": ("to be unchecked", "not_to_be_checked", checked_state, False),
    "expect_not_unchecked": ("not to be unchecked", "to_be_checked", checked_state, True),
    "expect_enabled": ("to be enabled", "to_be_enabled", enabled_state, False),
    "expect_not_enabled": ("not to be enabled", "not_to_be_enabled", enabled_state, True),
    "expect_disabled": ("to be disabled", "to_be_disabled", enabled_state, False),
    "expect_not_disabled": ("not to be disabled", "not_to_be_disabled", enabled_state, True),
    "expect_focused": ("to be focused", "to_be_focused", focused_state, False),
    "expect_not_focused": ("not to be focused", "not_to_be_focused", focused_state, True),
    "expect_editable": ("to be editable", "to_be_editable", editable_state, False),
    "expect_not_editable": ("not to be editable", "not_to_be_editable", editable_state, True),
    "expect_empty": ("to be empty", "to_be_empty", empty_state, False),
    "expect_not_empty": ("not to be empty", "not_to_be_empty", empty_state, True),
}
_COMMON_OPTIONS: dict[str, Option] = {
    "timeout": timeout_of("timeout.expect"),
    "soft": flag("soft", "a failure the run records while the scenario goes on"),
}
"""What every expectation's options object takes."""

_MORE_OPTIONS: dict[str, dict[str, Option]] = {
    name: {
        "ratio": in_range(
            "ratio", 0, 1, "a number from 0 to 1: the part of the element the viewport shows"
        ),
    }
    for name in ("expect_in_viewport", "expect_not_in_viewport")
}
"""The expectations whose options are more than ``{timeout, soft}``, and what each takes."""
