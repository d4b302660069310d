"""runner.builtins.locators in-process: locator recipes, their rendering, and how they and smart
string targets resolve on a real page (headless Chromium through Playwright's async API,
content from ``page.set_content``; ``on_page`` in conftest.py)."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from playwright.async_api import Page

from dsl.errors import BuiltinError
from dsl.values import RegexValue
from runner.builtins.locators import (
    MAX_CANDIDATES,
    LocatorValue,
    SmartTarget,
    describe_candidates,
    matcher_arg,
    role_locator,
    show_matcher,
    show_pattern,
    strategies,
    to_pattern,
)

OnPage = Callable[[str | None, Callable[[Page], Awaitable[Any]]], Any]

FORM = """
<h1>Shop</h1>
<button>Save</button>
<button>Save draft</button>
<a href="#help">Help</a>
<label>Email <input id="email" placeholder="you@example.com"></label>
<input id="code" placeholder="Code">
<button>Email</button>
<ul id="cart">
  <li data-testid="item">Apple <button>Remove</button></li>
  <li data-testid="item">Pear <button>Remove</button></li>
  <li data-testid="item">Plum <span class="sale">sale</span></li>
</ul>
<img alt="Logo" src="data:," title="Our logo">
<p hidden>Secret shelf</p>
<p>Closed on Sunday</p>
"""


def regex(source: str, flags: str = "") -> RegexValue:
    return RegexValue(source, flags, re.compile(source, re.I if "i" in flags else 0))


def css(selector: str) -> LocatorValue:
    return LocatorValue((("css", (selector,)),))


# --- recipes and how they render (no browser) -------------------------------------------------


def test_recipes_render_as_a_person_reads_them() -> None:
    save = role_locator("button", "Save", {"exact": False, "level": 2.0})
    assert save.render() == '<Locator role=button name="Save" exact=false level=2>'
    assert role_locator("link").render() == "<Locator role=link>"
    # Options without a name, as Playwright's getByRole takes them (was a TypeError).
    assert role_locator("button", {"disabled": True}).render() == (
        "<Locator role=button disabled=true>"
    )
    assert role_locator("button", regex("sa+ve", "i")).render() == (
        "<Locator role=button name=/sa+ve/i>"
    )
    chain = (
        css("#cart li")
        .call_method("filter", [{"has_text": "Apple", "has": css("button")}])
        .call_method("find", [role_locator("button", "Remove")])
        .call_method("first", [])
    )
    assert isinstance(chain, LocatorValue)
    assert chain.render() == (
        '<Locator css="#cart li" >> filter(has_text="Apple", has=<Locator css="button">)'
        ' >> role=button name="Remove" >> first>'
    )
    assert css("li").call_method("nth", [1.0]).render() == '<Locator css="li" >> nth=1>'
    assert css("li").call_method("last", []).render() == '<Locator css="li" >> last>'


def test_locators_are_the_same_when_they_render_the_same() -> None:
    assert css("#a").same_as(css("#a"))
    assert not css("#a").same_as(css("#b"))
    assert css("#a").then("first").same_as(css("#a").call_method("first", []))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("name", "args", "message"),
    [
        ("nth", [1.5], ".nth() needs a whole number, got 1.5"),
        ("nth", [True], ".nth() needs a whole number, got true"),
        ("nth", [], ".nth() takes 1 argument but got 0"),
        ("first", [1.0], ".first() takes 0 arguments but got 1"),
        ("find", ["li"], ".find() needs a Locator, got string"),
        ("filter", ["Apple"], ".filter() needs an object {has_text, has}"),
        ("filter", [{"text": "x"}], ".filter() does not know text (use has_text, has)"),
        ("filter", [{"has": "li"}], ".filter() has: needs a Locator, got string"),
        ("filter", [{"has_text": 3.0}], "filter() needs a string or a regex, got number"),
    ],
)
def test_locator_methods_refuse_wrong_arguments(name: str, args: list[Any], message: str) -> None:
    with pytest.raises(BuiltinError) as caught:
        css("li").call_method(name, args)
    assert (caught.value.name, caught.value.message) == ("TypeError", message)


def test_an_unknown_locator_method_is_not_one() -> None:
    assert "blur" not in css("li").method_names()
    with pytest.raises(KeyError):
        css("li").call_method("blur", [])


@pytest.mark.parametrize(
    ("name", "written"),
    [
        ("locator", ".find(css(selector))"),
        ("getByRole", '.find(role("button", "Save"))'),
        ("getByText", ".find(text(m))"),
        ("contentFrame", ".frame()"),
        ("click", "click(locator), the target first"),
        ("textContent", "text_of(locator)"),
    ],
)
def test_a_playwright_locator_method_says_what_to_write(name: str, written: str) -> None:
    """A Playwright Test line ported as written (`css("#q").getByRole(...)`)."""
    with pytest.raises(BuiltinError) as caught:
        css("li").call_method(name, [])
    assert caught.value.message == f"a Locator has no method .{name}(): write {written}"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((3.0,), 'role() needs a role name such as "button", got number'),
        (("button", "Save", "x"), "role() options must be an object, got string"),
        (("button", None, {"bold": True}), "role() does not know the option 'bold' (known: "),
        (("button", None, {"level": "2"}), "role() option 'level' needs a number"),
        (("button", None, {"checked": 1.0}), "role() option 'checked' needs true or false"),
        # Playwright's getByRole("button", {name: "Price"}), ported as written
        (
            ("button", {"name": "Price"}),
            'role() takes the name second, not as an option: write role("button", "Price")',
        ),
    ],
)
def test_role_refuses_what_it_cannot_use(args: tuple[Any, ...], message: str) -> None:
    with pytest.raises(BuiltinError) as caught:
        role_locator(*args)
    assert caught.value.message.startswith(message), caught.value.message


def test_regexes_travel_as_the_scenario_wrote_them() -> None:
    pattern = to_pattern(regex("sa+ve", "im"))
    assert pattern.pattern == "sa+ve" and pattern.flags & re.IGNORECASE
    assert pattern.flags & re.MULTILINE
    assert show_pattern(pattern) == "/sa+ve/im"
    assert show_matcher("Save \u00e9") == '"Save \u00e9"'
    assert show_matcher(re.compile("x")) == "/x/"
    assert matcher_arg("text", "Save") == "Save"
    assert matcher_arg("text", regex("a")).pattern == "a"  # type: ignore[union-attr]
    with pytest.raises(BuiltinError, match=r"text\(\) needs a string or a regex, got boolean"):
        matcher_arg("text", True)
    # A JavaScript-only source (a named group the JS way): the translated pattern is used.
    translated = re.compile("(?P<y>\\d+)")
    js_only = RegexValue("(?<y>\\d+)", "", translated)
    assert to_pattern(js_only) is translated


def test_smart_targets_try_roles_first_and_inputs_labels_first() -> None:
    assert [s.description.split(" ")[0] for s in strategies("Email", False)] == [
        "role",
        "label",
        "placeholder",
        "text",
    ]
    assert [s.description.split(" ")[0] for s in strategies("Email", True)] == [
        "label",
        "placeholder",
        "role",
        "text",
    ]
    assert SmartTarget('Say "hi"').render() == '"Say \\"hi\\""'


# --- on a page --------------------------------------------------------------------------------


def test_recipes_build_playwright_locators_on_the_page(on_page: OnPage) -> None:
    async def check(page: Page) -> dict[str, Any]:
        async def count(value: LocatorValue) -> int:
            return await value.build(page).count()

        async def text(value: LocatorValue) -> str:
            return (await value.build(page).inner_text()).strip()

        def step(kind: str, *args: Any) -> LocatorValue:
            return LocatorValue(((kind, args),))

        found = {
            # A string name is exact: "Save" is not "Save draft".
            "role exact": await count(role_locator("button", "Save")),
            "role regex": await count(role_locator("button", regex("^save", "i"))),
            "role level": await count(role_locator("heading", None, {"level": 1.0})),
            "text exact": await count(step("text", "Closed on")),
            "text regex": await count(step("text", re.compile("Closed on"))),
            "label": await page.get_attribute("#email", "id")
            == await step("label", "Email").build(page).get_attribute("id"),
            "placeholder": await count(step("placeholder", "Code")),
            "alt": await count(step("alt", "Logo")),
            "title": await count(step("title", "Our logo")),
            "testid": await count(step("testid", "item")),
            "xpath": await count(step("xpath", "//ul/li[2]")),
            "nth": await text(css("#cart li").then("nth", 1).then("find", css("button"))),
            "last": await text(css("#cart li").then("last")),
            "filter text": await count(css("#cart li").then("filter", "Pear", None)),
            "filter has": await text(css("#cart li").then("filter", None, css(".sale"))),
            "find": await count(css("#cart").then("find", role_locator("button", "Remove"))),
        }
        with pytest.raises(BuiltinError, match=r"a locator cannot start with \.nth\(\)"):
            step("nth", 0).build(page)
        return found

    found = on_page(FORM, check)
    assert found == {
        "role exact": 1,
        "role regex": 2,
        "role level": 1,
        "text exact": 0,
        "text regex": 1,
        "label": True,
        "placeholder": 1,
        "alt": 1,
        "title": 1,
        "testid": 3,
        "xpath": 1,
        "nth": "Remove",
        "last": "Plum sale",
        "filter text": 1,
        "filter has": "Plum sale",
        "find": 2,
    }


def test_a_smart_target_resolves_to_the_one_visible_element_it_names(on_page: OnPage) -> None:
    async def check(page: Page) -> dict[str, str | None]:
        async def resolved(text: str, for_input: bool = False) -> str | None:
            locator = await SmartTarget(text, for_input).resolve(page, 2000)
            return await locator.evaluate("e => e.outerHTML")

        return {
            "button": await resolved("Save draft"),
            "link": await resolved("Help"),
            # A click on "Email" finds the button named Email; a fill finds the input.
            "click Email": await resolved("Email"),
            "fill Email": await resolved("Email", for_input=True),
            "placeholder": await resolved("Code", for_input=True),
            "text": await resolved("Closed on Sunday"),
        }

    found = on_page(FORM, check)
    assert found == {
        "button": "<button>Save draft</button>",
        "link": '<a href="#help">Help</a>',
        "click Email": "<button>Email</button>",
        "fill Email": '<input id="email" placeholder="you@example.com">',
        "placeholder": '<input id="code" placeholder="Code">',
        "text": "<p>Closed on Sunday</p>",
    }


def test_a_smart_target_that_is_ambiguous_or_absent_says_what_it_tried(
    on_page: OnPage,
) -> None:
    async def check(page: Page) -> tuple[BuiltinError, BuiltinError, list[str]]:
        with pytest.raises(BuiltinError) as ambiguous:
            await SmartTarget("Remove").resolve(page, 2000)
        with pytest.raises(BuiltinError) as absent:
            await SmartTarget("Secret shelf").resolve(page, 300)  # hidden: not a match
        every = SmartTarget("Email").any_match(page)
        tags = await every.evaluate_all("elements => elements.map(e => e.tagName)")
        return ambiguous.value, absent.value, tags

    ambiguous, absent, tags = on_page(FORM, check)
    assert ambiguous.name == "LocatorError"
    assert ambiguous.message == (
        '"Remove" is ambiguous: role button/link/menuitem/tab/checkbox/radio/option named '
        '"Remove" matches 2 visible elements (1) <button> "Remove", 2) <button> "Remove"); '
        "use a locator with .first(), .nth(i) or a more precise role/label"
    )
    assert absent.name == "LocatorError"
    assert absent.message == (
        'no visible element matches "Secret shelf" after 300 ms (tried role '
        'button/link/menuitem/tab/checkbox/radio/option named "Secret shelf"; label '
        '"Secret shelf"; placeholder "Secret shelf"; text "Secret shelf")'
    )
    # Every strategy at once: the button named Email, the input labelled Email, and the
    # label, whose exact text is "Email".
    assert sorted(tags) == ["BUTTON", "INPUT", "LABEL"]


def test_candidates_are_listed_up_to_five_then_counted(on_page: OnPage) -> None:
    page_html = "".join(f"<button>  Item\n {i} </button>" for i in range(7))

    async def check(page: Page) -> tuple[str, str]:
        buttons = page.locator("button")
        return (
            await describe_candidates(buttons, 7),
            await describe_candidates(page.locator("nothing-here"), 2),
        )

    listed, missing = on_page(page_html, check)
    shown = ", ".join(f'{i + 1}) <button> "Item {i}"' for i in range(MAX_CANDIDATES))
    assert listed == shown + ", and 2 more"
    assert missing == "1) ?, 2) ?"  # counted, but gone by the time they are described
