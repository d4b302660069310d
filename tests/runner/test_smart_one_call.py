"""An action on a string target in one call to the browser (``SmartTarget.in_one_call``,
``PageCalls._on_smart_target``), on a real page: the element it reaches is the one
``SmartTarget.resolve`` names, and no ``count()`` comes first unless strict mode finds
more than one element. The built-ins run on a thread of their own, as in a run: the
calls cross :class:`runner.browser.bridge.LoopBridge` to the page's loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from playwright.async_api import Locator, Page

from dsl.errors import BuiltinError
from runner.browser.bridge import LoopBridge
from runner.builtins.locators import SmartTarget
from runner.builtins.page_calls import PageCalls, Timeouts

OnPage = Callable[[str | None, Callable[[Page], Awaitable[Any]]], Any]

PAGE = """
<button>Email</button>
<label>Email <input id="email"></label>
<input id="code" placeholder="Code">
<input id="zip" placeholder="Zip"> <p>Zip</p>
<label for="archive">Archive</label> <input id="archive">
<p>Archive</p>
<button>Remove</button> <button>Remove</button>
<p hidden>Secret shelf</p>
<label>Frozen <input id="frozen" disabled></label>
"""

CASES = [  # (text, for_input): what resolve names, by id or text
    ("Email", True),  # the label: the button named Email is not asked
    ("Email", False),  # the button: the field labelled Email is not asked
    ("Code", True),  # the placeholder, as no label names it
    ("Zip", True),  # the placeholder, though a paragraph's text matches too
    ("Archive", False),  # the label, though its text and a paragraph's match too
    ("Remove", False),  # ambiguous
    ("Secret shelf", False),  # hidden: nothing
]


def test_one_call_names_what_resolve_names(on_page: OnPage) -> None:
    async def check(page: Page) -> list[tuple[str, int, str | None, str | None]]:
        async def outer(locator: Locator) -> str:
            return str(await locator.evaluate("e => e.outerHTML"))

        found = []
        for text, for_input in CASES:
            target = SmartTarget(text, for_input)
            one_call = target.in_one_call(page)
            count = await one_call.count()
            try:
                named: str | None = await outer(await target.resolve(page, 300))
            except BuiltinError as err:
                named = err.name
            found.append((text, count, await outer(one_call) if count == 1 else None, named))
        return found

    found = on_page(PAGE, check)
    for text, count, reached, named in found:
        if count == 1:  # strict mode would act on it: it must be the one named
            assert reached == named, (text, reached, named)
        elif count == 0:  # the action waits: nothing is named yet
            assert named == "LocatorError", (text, named)
        # more than one: the action stops before doing anything, and resolve decides
    by_text = {(text, count) for text, count, _, _ in found}
    assert ("Email", 1) in by_text and ("Code", 1) in by_text
    assert ("Archive", 3) in by_text  # the input, the label, the paragraph
    assert ("Zip", 2) in by_text
    assert ("Remove", 2) in by_text and ("Secret shelf", 0) in by_text


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every ``Locator.count()`` call made from now on."""
    calls: list[str] = []
    real = Locator.count

    async def count(self: Locator) -> int:
        calls.append(str(self))
        return await real(self)

    monkeypatch.setattr(Locator, "count", count)
    return calls


TIMEOUTS = Timeouts(action=2000, expect=2000, navigation=2000)


async def fill(page: Page, text: str, value: str) -> None:
    """``fill(text, value)`` called from a thread of its own, as a scenario calls it."""
    calls = PageCalls(LoopBridge(asyncio.get_running_loop()), lambda: page, TIMEOUTS, None)
    await asyncio.to_thread(
        calls.act,
        "fill",
        text,
        lambda loc: loc.fill(value, timeout=TIMEOUTS.action),
        for_input=True,
    )


def test_a_fill_asks_for_no_count_when_the_first_strategy_names_one(
    on_page: OnPage, counted: list[str]
) -> None:
    async def check(page: Page) -> tuple[str, str]:
        await fill(page, "Email", "ada@example.com")
        await fill(page, "Code", "UNO10")
        return await page.input_value("#email"), await page.input_value("#code")

    assert on_page(PAGE, check) == ("ada@example.com", "UNO10")
    assert counted == []


def test_a_fill_that_strict_mode_stops_is_settled_strategy_by_strategy(
    on_page: OnPage, counted: list[str]
) -> None:
    async def check(page: Page) -> str:
        await fill(page, "Zip", "75001")
        return await page.input_value("#zip")

    assert on_page(PAGE, check) == "75001"
    assert counted  # the slow path asked


def fill_error(on_page: OnPage, text: str) -> BuiltinError:
    """What ``fill(text, "x")`` on PAGE raises."""

    async def check(page: Page) -> BuiltinError:
        with pytest.raises(BuiltinError) as caught:
            await fill(page, text, "x")
        return caught.value

    error: BuiltinError = on_page(PAGE, check)
    return error


def test_a_fill_on_nothing_says_what_it_tried(on_page: OnPage) -> None:
    error = fill_error(on_page, "Nowhere")
    assert error.name == "LocatorError"
    assert error.message == (
        'no visible element matches "Nowhere" after 2000 ms (tried label "Nowhere"; '
        'placeholder "Nowhere"; role button/link/menuitem/tab/checkbox/radio/option named '
        '"Nowhere"; text "Nowhere")'
    )


def test_a_fill_that_times_out_on_one_element_counts_it_once(
    on_page: OnPage, counted: list[str]
) -> None:
    """The failure path asks what the target finds once, for the message."""
    error = fill_error(on_page, "Frozen")
    assert error.name == "TimeoutError"
    assert error.message.startswith('fill on "Frozen" timed out after 2000 ms: '), error.message
    assert "not enabled" in error.message, error.message
    assert len(counted) == 1, counted
