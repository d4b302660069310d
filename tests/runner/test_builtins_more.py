"""The built-ins of issue 13 in-process, on a real headless Chromium.

``evaluate`` (in the page and on an element), ``goto`` refusing ``javascript:``, every
``expect_not_*`` twin, ``expect_class``, the list forms of ``expect_text``,
``expect_contains``, ``expect_value`` and ``expect_class``, ``dispatch_event`` and
``blur``. One browser serves the whole module (``shared_browser``: the test process's),
on an event loop in a thread of its own
(as a run has: the built-ins block the calling thread on :class:`runner.browser.bridge.LoopBridge`);
every test gets a fresh page (a context of its own) showing its HTML.

Expectations that must fail run with a short expect timeout; those that must pass wait
for changes the page makes after a delay, so they pass only by retrying.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from browser_thread import BrowserThread
from playwright.async_api import Page

from dsl.errors import BuiltinError
from dsl.jsregex import compile_js_regex
from dsl.values import RegexValue, Value, render
from runner.browser.bridge import LoopBridge
from runner.builtins.locators import LocatorValue
from runner.builtins.table import BrowserBuiltins, Timeouts

T = TypeVar("T")
SHORT = 400  # ms: the expect timeout of expectations that must fail
LONG = 10_000  # ms: the timeout of those that must pass (they end as soon as they hold)


def css(selector: str) -> LocatorValue:
    return LocatorValue((("css", (selector,)),))


def xpath(selector: str) -> LocatorValue:
    return LocatorValue((("xpath", (selector,)),))


def regex(source: str, flags: str = "") -> RegexValue:
    return RegexValue(source, flags, compile_js_regex(source, flags))


class Live:
    """A page and the built-ins bound to it, called as the interpreter calls them."""

    def __init__(self, chromium: BrowserThread, page: Page, root: Path) -> None:
        self.chromium = chromium
        self.page = page
        self.bridge = LoopBridge(chromium.loop)
        self.root = root

    def show(self, html: str) -> None:
        self.chromium.run(self.page.set_content(html))

    def call(self, name: str, *args: Value, expect: int = LONG, action: int = LONG) -> Value:
        async def no_screenshot(_name: str | None) -> None:
            return None

        builtins = BrowserBuiltins(
            self.bridge,
            lambda: self.page,
            Timeouts(float(action), float(expect), 5000.0),
            None,
            self.root,
            no_screenshot,
        ).builtins()
        return builtins[name].impl(*args)

    def error(self, name: str, *args: Value, expect: int = SHORT, action: int = SHORT) -> str:
        """``name(*args)`` must fail: ``"<errorName>: <message>"``."""
        with pytest.raises(BuiltinError) as info:
            self.call(name, *args, expect=expect, action=action)
        return f"{info.value.name}: {info.value.message}"

    def js(self, script: str) -> Any:
        return self.chromium.run(self.page.evaluate(script))


@pytest.fixture
def chromium(shared_browser: BrowserThread) -> BrowserThread:
    return shared_browser


@pytest.fixture
def live(chromium: BrowserThread, tmp_path: Path) -> Iterator[Live]:
    page = chromium.run(chromium.browser.new_page())
    try:
        yield Live(chromium, page, tmp_path)
    finally:
        chromium.run(page.context.close())


def later(js: str, ms: int = 150) -> str:
    """A script tag that runs ``js`` after ``ms``: what an expectation must wait for."""
    return f"<script>setTimeout(() => {{ {js} }}, {ms})</script>"


# --- evaluate in the page ---------------------------------------------------------------


def test_evaluate_an_expression_and_a_function_with_its_argument(live: Live) -> None:
    live.show("<title>Shop</title><p>hi</p>")
    assert live.call("evaluate", "1 + 2") == 3.0
    assert live.call("evaluate", "document.title") == "Shop"
    assert live.call("evaluate", "() => 40 + 2") == 42.0
    arg: Value = {"n": 2.0, "items": ["a", "b", "c"], "on": True, "none": None}
    assert live.call("evaluate", "(o) => o.n * 10 + o.items.length", arg) == 23.0
    assert live.call("evaluate", "(o) => [o.on, o.none, typeof o.n]", arg) == [
        True,
        None,
        "number",
    ]
    # A regex crosses as a JavaScript RegExp, flags included.
    assert live.call("evaluate", "(r) => r.test('SAVE') && r.flags", regex("save", "i")) == "i"
    # A promise is awaited.
    late = "() => new Promise(done => setTimeout(() => done('late'), 50))"
    assert live.call("evaluate", late) == "late"


def test_evaluate_reads_what_the_page_stored_and_changes_the_page(live: Live) -> None:
    live.show(
        "<p id=p>before</p><script>window.app = {todos: [{title: 'milk', done: false}]}</script>"
    )
    assert live.call("evaluate", "() => window.app.todos") == [{"title": "milk", "done": False}]
    live.call("evaluate", "(t) => { document.querySelector('#p').textContent = t }", "after")
    assert live.js("document.querySelector('#p').textContent") == "after"


def test_evaluate_answers_json_values(live: Live) -> None:
    live.show("<p>x</p>")
    got = live.call(
        "evaluate",
        """() => ({
            numbers: [1, 2.5, -3], text: 'é', flag: false, nothing: null, missing: undefined,
            date: new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 6)), url: new URL('http://a.test/b?c=1'),
            error: new TypeError('bad'), re: /x/g, map: new Map([[1, 2]]), big: 7n,
        })""",
    )
    assert got == {
        "numbers": [1.0, 2.5, -3.0],
        "text": "é",
        "flag": False,
        "nothing": None,
        "missing": None,
        "date": "2024-01-02T03:04:05.006Z",
        "url": "http://a.test/b?c=1",
        "error": {"name": "TypeError", "message": "bad"},
        "re": {},
        "map": {},
        "big": 7.0,
    }
    assert isinstance(got, dict) and isinstance(got["numbers"], list)
    assert all(type(n) is float for n in got["numbers"])  # every number a float, as in the language


def test_evaluate_refuses_a_result_that_contains_itself(live: Live) -> None:
    live.show("<p>x</p>")
    message = live.error("evaluate", "() => { const a = [1]; a.push(a); return a }")
    assert message == "TypeError: evaluate(): the result contains itself, which JSON cannot hold"
    message = live.error("evaluate", "() => { const o = {}; o.self = {o}; return o }")
    assert message.startswith("TypeError: evaluate(): the result contains itself")
    # Shared parts are no cycle.
    shared = "() => { const s = {v: 1}; return [s, s] }"
    assert live.call("evaluate", shared) == [{"v": 1.0}, {"v": 1.0}]


def test_evaluate_errors_say_what_the_script_threw(live: Live) -> None:
    live.show("<p>x</p>")
    # Scripts that throw end at once: the long action timeout only keeps a busy machine
    # from turning their error into a timeout.
    assert live.error("evaluate", "() => null.x", action=LONG) == (
        "Error: evaluate: TypeError: Cannot read properties of null (reading 'x')"
    )
    assert live.error("evaluate", "() => { throw new Error('no cart') }", action=LONG) == (
        "Error: evaluate: Error: no cart"
    )
    assert live.error("evaluate", "1 +", action=LONG).startswith("Error: evaluate: SyntaxError: ")
    # Playwright's evaluate has no timeout; a step must end: the action timeout.
    assert live.error("evaluate", "() => new Promise(() => {})") == (
        f"TimeoutError: evaluate: the script did not finish within {SHORT} ms"
    )


def test_evaluate_arguments_are_checked_before_the_page(live: Live) -> None:
    live.show("<p>x</p>")
    assert live.error("evaluate", 3.0) == (
        "TypeError: evaluate() needs the JavaScript to run (or a Locator, then it), got number"
    )
    assert live.error("evaluate", "(x) => x", css("p")) == (
        "TypeError: evaluate() passes only data into the page (strings, numbers, booleans, "
        "null, arrays, objects, regexes), got Locator"
    )
    looped: list[Value] = []
    looped.append(looped)
    assert live.error("evaluate", "(x) => 1", looped) == (
        "TypeError: evaluate() cannot pass a value that contains itself"
    )
    # A string target would be ambiguous with evaluate(js, arg): the target is a Locator.
    assert live.error("evaluate", "Save", "(e) => e.id", None).startswith(
        "TypeError: evaluate() takes (js, arg?) in the page or (locator, js, arg?) on an element"
    )
    assert live.error("evaluate", css("p")) == (
        "TypeError: evaluate(locator, js, arg?) needs the JavaScript to run"
    )


# --- evaluate on an element ------------------------------------------------------------------


def test_evaluate_on_an_element_gets_the_element_then_the_argument(live: Live) -> None:
    live.show(
        "<ul><li data-id=7>one</li><li>two</li></ul>"
        + later("document.body.insertAdjacentHTML('beforeend', '<p id=late>late</p>')")
    )
    assert live.call("evaluate", css("li").then("first"), "(e, s) => e.dataset.id + s", "!") == "7!"
    assert live.call("evaluate", css("ul"), "(e) => e.children.length") == 2.0
    # The element is waited for, as for an action.
    assert live.call("evaluate", css("#late"), "(e) => e.textContent") == "late"


def test_evaluate_on_an_element_fails_like_an_action(live: Live) -> None:
    live.show("<ul><li>one</li><li>two</li></ul><p id=p>x</p>")
    assert live.error("evaluate", css("#nowhere"), "(e) => 1") == (
        f'LocatorError: evaluate: no element matches <Locator css="#nowhere"> (waited {SHORT} ms)'
    )
    message = live.error("evaluate", css("li"), "(e) => 1")
    assert message.startswith('LocatorError: evaluate: <Locator css="li"> matches 2 elements')
    assert '1) <li> "one", 2) <li> "two"' in message
    assert live.error("evaluate", css("#p"), "(e) => e.nope.x") == (
        'Error: evaluate on <Locator css="#p">: TypeError: '
        "Cannot read properties of undefined (reading 'x')"
    )


def test_a_locator_evaluate_method_points_at_the_builtin() -> None:
    with pytest.raises(BuiltinError) as info:
        css("p").call_method("evaluate", ["(e) => e.id"])
    assert info.value.name == "TypeError"
    assert info.value.message == (
        "a Locator has no method .evaluate(): write evaluate(locator, js, arg?)"
    )
    with pytest.raises(KeyError):
        css("p").call_method("evaluateAll", [])  # unknown: the interpreter lists the methods


# --- goto refuses javascript: ------------------------------------------------------------------


@pytest.mark.parametrize(
    "url", ["javascript:alert(1)", "  JavaScript:void 0", "java\tscript:x", "\x01javascript:x"]
)
def test_goto_refuses_javascript_urls(live: Live, url: str) -> None:
    live.show("<p>x</p>")
    assert live.error("goto", url) == (
        "TypeError: goto() does not run javascript: URLs; run code in the page with "
        "evaluate(js), which returns its result"
    )
    assert live.page.url == "about:blank"  # nothing ran, nothing navigated


def test_a_relative_goto_without_a_base_url_says_what_to_set(live: Live) -> None:
    """It was Playwright's "Protocol error (Page.navigate): Cannot navigate to invalid
    URL" (a project without baseURL running the sample's goto("/"))."""
    live.show("<p>x</p>")
    assert live.error("goto", "/") == (
        "NavigationError: goto: '/' is a relative URL and no baseURL is set: set baseURL "
        "in unotest.config.yaml, or give the whole URL (http://...)"
    )
    live.call("goto", "about:blank")  # a URL with its scheme still goes


# --- expect_not_*: pass by retrying, fail saying what was still there --------------------------

PAGE = """
<p id=status class="busy wide">Saving</p>
<input id=name value=draft>
<input id=agree type=checkbox checked>
<input id=news type=checkbox>
<button id=send disabled>Send</button>
<div id=tip>Tip</div>
<ul><li>one</li><li>two</li></ul>
"""
CHANGES = later(
    """
    const status = document.querySelector('#status');
    status.textContent = 'Saved'; status.className = 'idle';
    document.querySelector('#name').value = 'final';
    document.querySelector('#agree').checked = false;
    document.querySelector('#send').disabled = false;
    document.querySelector('#tip').style.display = 'none';
    document.querySelector('ul').insertAdjacentHTML('beforeend', '<li>three</li>');
    """
)
NEGATED_PASSING: list[tuple[str, tuple[Value, ...]]] = [
    ("expect_not_text", (css("#status"), "Saving")),
    ("expect_not_text", (css("#status"), regex("^Sav(ing)?$"))),
    ("expect_not_contains", (css("#status"), "ving")),
    ("expect_not_value", (css("#name"), "draft")),
    ("expect_not_attr", (css("#status"), "class", regex("busy"))),
    ("expect_not_class", (css("#status"), "busy wide")),
    ("expect_not_contains_class", (css("#status"), "busy")),
    ("expect_not_class", (css("#status"), regex("wide"))),
    ("expect_not_count", (css("li"), 2.0)),
    ("expect_not_checked", (css("#agree"),)),
    ("expect_not_disabled", (css("#send"),)),
    ("expect_not_visible", (css("#tip"),)),
    ("expect_not_text", (css("li"), ["one", "two"])),
]


@pytest.mark.parametrize(("name", "args"), NEGATED_PASSING, ids=lambda v: str(v)[:40])
def test_a_negated_expectation_waits_for_the_opposite(
    live: Live, name: str, args: tuple[Value, ...]
) -> None:
    live.show(PAGE + CHANGES)
    assert live.call(name, *args) is None
    assert live.js("document.querySelector('#status').textContent") == "Saved", (
        "the expectation passed before the page changed: it did not wait"
    )


def test_the_other_negated_twins_pass_at_once(live: Live) -> None:
    live.show(PAGE)
    assert live.call("expect_not_enabled", css("#send")) is None
    assert live.call("expect_not_unchecked", css("#agree")) is None
    assert live.call("expect_not_hidden", css("#tip")) is None
    assert live.call("expect_not_visible", css("#nowhere")) is None  # expect_hidden's rule


NEGATED_FAILING: list[tuple[str, tuple[Value, ...], str]] = [
    (
        "expect_not_text",
        (css("#status"), "Saving"),
        'expected <Locator css="#status"> not to have text "Saving", still received "Saving"',
    ),
    (
        "expect_not_contains",
        (css("#status"), "avi"),
        'expected <Locator css="#status"> not to contain text "avi", still received "Saving"',
    ),
    (
        "expect_not_value",
        (css("#name"), regex("dra")),
        'expected <Locator css="#name"> not to have value /dra/, still received "draft"',
    ),
    (
        "expect_not_attr",
        (css("#status"), "class", "busy wide"),
        'expected <Locator css="#status"> not to have class="busy wide", '
        'still received "busy wide"',
    ),
    (
        "expect_not_class",
        (css("#status"), "busy wide"),
        'expected <Locator css="#status"> not to have class "busy wide", '
        'still received "busy wide"',
    ),
    (
        "expect_not_contains_class",
        (css("#status"), "wide"),
        'expected <Locator css="#status"> not to contain class "wide", still received "busy wide"',
    ),
    (
        "expect_not_count",
        (css("li"), 2.0),
        'expected <Locator css="li"> not to match 2 element(s), still received 2',
    ),
    (
        "expect_not_checked",
        (css("#agree"),),
        'expected <Locator css="#agree"> not to be checked, still received checked',
    ),
    (
        "expect_not_unchecked",
        (css("#news"),),
        'expected <Locator css="#news"> not to be unchecked, still received unchecked',
    ),
    (
        "expect_not_enabled",
        (css("#name"),),
        'expected <Locator css="#name"> not to be enabled, still received enabled',
    ),
    (
        "expect_not_disabled",
        (css("#send"),),
        'expected <Locator css="#send"> not to be disabled, still received disabled',
    ),
    (
        "expect_not_text",
        (css("li"), ["one", regex("^tw")]),
        'expected <Locator css="li"> not to have text ["one", /^tw/], '
        'still received ["one", "two"]',
    ),
    (
        "expect_not_visible",
        (css("#tip"),),
        'expected <Locator css="#tip"> not to be visible, received 1 element(s), the first visible',
    ),
    (
        "expect_not_hidden",
        (css("#nowhere"),),
        'expected <Locator css="#nowhere"> not to be hidden, received no matching element',
    ),
    (
        "expect_not_visible",
        ("Send",),
        'expected "Send" not to be visible, received 1 visible element(s) (1) <button> "Send")',
    ),
]


@pytest.mark.parametrize(("name", "args", "message"), NEGATED_FAILING, ids=lambda v: str(v)[:40])
def test_a_negated_expectation_fails_saying_what_was_still_there(
    live: Live, name: str, args: tuple[Value, ...], message: str
) -> None:
    live.show(PAGE)
    got = live.error(name, *args)
    assert got.startswith(f"AssertionError: {message}"), got
    if "still received" in message:
        assert got.endswith(f" after {SHORT} ms"), got


def test_a_negated_expectation_needs_its_element(live: Live) -> None:
    live.show(PAGE)
    for name, args in [
        ("expect_not_text", (css("#gone"), "x")),
        ("expect_not_class", (css("#gone"), "x")),
        ("expect_not_enabled", (css("#gone"),)),
    ]:
        got = live.error(name, *args)
        assert got.startswith('AssertionError: expected <Locator css="#gone"> not to '), got
        assert got.endswith(
            "but no element matched: a negated expectation needs the element, as Playwright's "
            "not does (expect_hidden waits for it to go)"
        ), got


def test_a_negated_expectation_on_too_many_elements_is_a_locator_error(live: Live) -> None:
    live.show(PAGE)
    got = live.error("expect_not_text", css("li"), "three")
    assert got.startswith('LocatorError: expect_not_text: <Locator css="li"> matches 2 elements')


# --- expect_class ------------------------------------------------------------------------------


def test_expect_class_is_the_whole_attribute_or_a_regex(live: Live) -> None:
    """Playwright's toHaveClass: a string is the class attribute exactly as written."""
    live.show(
        '<p id=p class="card is-active">x</p><p id=bare>y</p>'
        + later("document.querySelector('#p').classList.add('done')")
    )
    p = css("#p")
    assert live.call("expect_class", p, "card is-active done") is None  # added later: retried
    assert live.call("expect_class", p, regex("^card\\s+is-")) is None  # a search of it
    assert live.call("expect_class", css("#bare"), "") is None  # no class attribute
    got = live.error("expect_class", p, "is-active")  # a part is not the whole attribute
    assert got == (
        'AssertionError: expected <Locator css="#p"> to have class "is-active", '
        'received "card is-active done"'
    )
    assert live.error("expect_class", p, "done card is-active").startswith(  # in its order
        'AssertionError: expected <Locator css="#p"> to have class "done card is-active", '
    )
    assert live.error("expect_class", p, regex("^is")).startswith(
        'AssertionError: expected <Locator css="#p"> to have class /^is/, received "card'
    )
    assert live.error("expect_class", p, 1.0) == (
        "TypeError: expect_class() needs the class attribute (a string), a regex or an array "
        "of them, got number"
    )


def test_expect_contains_class_a_name_or_names(live: Live) -> None:
    """Playwright's toContainClass: every class named is one of the element's."""
    live.show(
        '<p id=p class="card  is-active md:w-1/2">x</p>'
        + later("document.querySelector('#p').classList.add('done')")
    )
    p = css("#p")
    assert live.call("expect_contains_class", p, "is-active") is None
    assert live.call("expect_contains_class", p, " md:w-1/2  card ") is None  # any order
    assert live.call("expect_contains_class", p, "done") is None  # added later: retried
    got = live.error("expect_contains_class", p, "active")  # a name is a whole class
    assert got == (
        'AssertionError: expected <Locator css="#p"> to contain class "active", '
        'received "card is-active md:w-1/2 done"'  # classList.add rewrote it
    )
    assert live.error("expect_contains_class", p, "  ") == (
        "TypeError: expect_contains_class() needs a class name, got an empty string"
    )
    assert live.error("expect_contains_class", p, regex("card")) == (
        "TypeError: expect_contains_class() takes class names, not a regex (as Playwright's "
        "toContainClass): match the whole class attribute with expect_class(t, /card/)"
    )


def test_expect_class_on_a_missing_element(live: Live) -> None:
    live.show("<p>x</p>")
    assert live.error("expect_class", css("#none"), "a") == (
        'AssertionError: expected <Locator css="#none"> to have class "a", '
        "received nothing (no element matched)"
    )


# --- list forms: every element, in order, atomically -------------------------------------------

LIST = """
<ul>
  <li class="item done">Apple   pie</li>
  <li class="item">Banana</li>
</ul>
<input class=f value=ann><input class=f value=bob><textarea class=f>note</textarea>
"""


def test_list_forms_pass_on_every_element_in_order(live: Live) -> None:
    live.show(LIST)
    li = css("li")
    assert live.call("expect_text", li, ["Apple pie", regex("^Ban")]) is None
    assert live.call("expect_contains", li, ["pple p", "nan"]) is None
    assert live.call("expect_contains", li, ["Apple pie", ""]) is None
    assert live.call("expect_class", li, ["item done", "item"]) is None
    assert live.call("expect_class", li, [regex("^item done$"), "item"]) is None
    assert live.call("expect_contains_class", li, ["done", "item"]) is None
    assert live.call("expect_value", css(".f"), ["ann", regex("^b"), "note"]) is None
    assert live.call("expect_text", css("li.none"), []) is None


LIST_FAILING: list[tuple[str, tuple[Value, ...], str]] = [
    (
        "expect_text",
        (css("li"), ["Apple pie"]),
        'expected <Locator css="li"> to have text ["Apple pie"], received ["Apple pie", "Banana"]',
    ),
    (
        "expect_text",
        (css("li"), ["Banana", "Apple pie"]),  # in order
        'to have text ["Banana", "Apple pie"], received ["Apple pie", "Banana"]',
    ),
    (
        # Every element: Playwright's array to_contain_text would accept a subsequence.
        "expect_contains",
        (css("li"), ["Apple"]),
        'expected <Locator css="li"> to contain text ["Apple"], received ["Apple pie", "Banana"]',
    ),
    (
        "expect_contains",
        (css("li"), ["Apple", "nana!"]),
        'to contain text ["Apple", "nana!"], received ["Apple pie", "Banana"]',
    ),
    (
        "expect_class",
        (css("li"), ["item", "done"]),
        'expected <Locator css="li"> to have class ["item", "done"], '
        'received ["item done", "item"]',
    ),
    (
        "expect_class",
        (css("li"), ["done", regex("done")]),
        'to have class ["done", /done/], received ["item done", "item"]',
    ),
    (
        "expect_value",
        (css(".f"), ["ann", "bob"]),
        'expected <Locator css=".f"> to have value ["ann", "bob"], received ["ann", "bob", "note"]',
    ),
    (
        "expect_value",
        (css("li, .f"), ["ann"]),
        'to have value ["ann"], received [null, null, "ann", "bob", "note"]',
    ),
    (
        "expect_not_value",
        (css(".f"), ["ann", "bob", regex("^n")]),
        'expected <Locator css=".f"> not to have value ["ann", "bob", /^n/], '
        'still received ["ann", "bob", "note"] after 400 ms',
    ),
    (
        "expect_not_class",
        (css("li"), ["item done", "item"]),
        'not to have class ["item done", "item"], still received ["item done", "item"] '
        "after 400 ms",
    ),
    (
        "expect_not_contains_class",
        (css("li"), ["item", "item"]),
        'not to contain class ["item", "item"], still received ["item done", "item"] after 400 ms',
    ),
    (
        "expect_not_contains",
        (css("li"), ["pie", "Ban"]),
        'not to contain text ["pie", "Ban"], still received ["Apple pie", "Banana"]',
    ),
]


@pytest.mark.parametrize(("name", "args", "message"), LIST_FAILING, ids=lambda v: str(v)[:40])
def test_list_forms_fail_showing_every_element(
    live: Live, name: str, args: tuple[Value, ...], message: str
) -> None:
    live.show(LIST)
    got = live.error(name, *args)
    assert got.startswith("AssertionError: ") and message in got, got


def test_list_forms_retry_until_every_element_matches(live: Live) -> None:
    grow = later(
        """
        document.querySelector('ul').insertAdjacentHTML('beforeend',
            '<li class="item new">Cherry</li>');
        document.querySelectorAll('.f')[1].value = 'eve';
        """
    )
    for name, args in [
        ("expect_text", (css("li"), ["Apple pie", "Banana", "Cherry"])),
        ("expect_contains", (css("li"), ["pie", "nan", "err"])),
        ("expect_class", (css("li"), ["item done", "item", "item new"])),
        ("expect_contains_class", (css("li"), ["done", "item", "new"])),
        ("expect_value", (css(".f"), ["ann", "eve", "note"])),
    ]:
        live.show(LIST + grow)
        assert live.call(name, *args) is None, name
        assert live.js("document.querySelectorAll('li').length") == 3, f"{name} did not wait"


FLIP = """
<ul><li>a</li><li>x</li></ul>
<input class=f value=a><input class=f value=x>
<script>
  // The two items are never "a" and "b" at the same time; each is, half of the time.
  let flip = false;
  setInterval(() => {
    flip = !flip;
    const [first, second] = document.querySelectorAll('li');
    first.textContent = flip ? 'y' : 'a'; second.textContent = flip ? 'b' : 'x';
    const [one, two] = document.querySelectorAll('.f');
    one.value = flip ? 'y' : 'a'; two.value = flip ? 'b' : 'x';
  }, 5);
</script>
"""


@pytest.mark.parametrize("name", ["expect_text", "expect_value"])
def test_a_list_is_matched_atomically(live: Live, name: str) -> None:
    """Element by element, each would match at some moment; all at once, never."""
    live.show(FLIP)
    target = css("li") if name == "expect_text" else css(".f")
    got = live.error(name, target, ["a", "b"], expect=1000)
    assert got.startswith(f"AssertionError: expected {target.render()} to have ")


def test_string_targets_in_the_new_expectations(live: Live) -> None:
    live.show(
        '<button class="buy one">Buy</button><button class="buy two">Buy</button>'
        '<label>Name <input value=ann></label><button style="display:none">Buy</button>'
    )
    # A list: every visible element a strategy finds, as expect_count counts them.
    assert live.call("expect_text", "Buy", ["Buy", "Buy"]) is None
    assert live.call("expect_contains_class", "Buy", ["one", "two"]) is None
    # One element: the smart match, strict as for actions.
    assert live.call("expect_not_value", "Name", "bob") is None
    assert live.error("expect_not_value", "Name", "ann") == (
        'AssertionError: expected "Name" not to have value "ann", still received "ann" '
        f"after {SHORT} ms"
    )
    assert live.error("expect_not_text", "Sell", "x").startswith(
        'AssertionError: expected "Sell" not to have text "x", but no visible element '
        'matches "Sell"'
    )
    assert live.error("expect_class", "Buy", "buy").startswith(
        'LocatorError: "Buy" is ambiguous: role button/link/menuitem/tab/checkbox/radio/option '
        'named "Buy" matches 2 visible elements'
    )


def test_list_items_are_checked(live: Live) -> None:
    live.show(LIST)
    assert live.error("expect_text", css("li"), ["a", 3.0]) == (
        "TypeError: expect_text() needs a string, a regex or an array of them, got number "
        "(at index 1 of the array)"
    )
    assert live.error("expect_contains", css("li"), [regex("a")]) == (
        "TypeError: expect_contains() needs a string or an array of strings, got regex "
        "(at index 0 of the array)"
    )
    assert live.error("expect_class", css("li"), [[]]) == (
        "TypeError: expect_class() needs the class attribute (a string), a regex or an array "
        "of them, got array (at index 0 of the array)"
    )


# --- dispatch_event and blur -------------------------------------------------------------------

EVENTS = """
<input id=field>
<button id=hidden style="display:none">hidden</button>
<p id=out></p>
<script>
  const out = document.querySelector('#out');
  const field = document.querySelector('#field');
  field.addEventListener('blur', () => out.textContent += 'blur;');
  field.addEventListener('keydown', e => out.textContent += 'key=' + e.key + ';');
  document.addEventListener('ping', e => out.textContent += 'ping bubbles=' + e.bubbles + ';');
  document.querySelector('#hidden').addEventListener('click', () => out.textContent += 'click;');
</script>
"""


def test_dispatch_event_sends_the_event_whatever_the_element_state(live: Live) -> None:
    live.show(EVENTS)
    live.call("dispatch_event", css("#hidden"), "click")  # no actionability checks
    live.call("dispatch_event", css("#field"), "keydown", {"key": "Enter"})
    live.call("dispatch_event", css("#field"), "ping", {"bubbles": True})
    live.call("dispatch_event", css("#field"), "ping")  # Playwright's default: it bubbles
    live.call("dispatch_event", css("#field"), "ping", {"bubbles": False})  # not to document
    assert live.js("document.querySelector('#out').textContent") == (
        "click;key=Enter;ping bubbles=true;ping bubbles=true;"
    )


def test_dispatch_event_errors(live: Live) -> None:
    live.show(EVENTS)
    assert live.error("dispatch_event", css("#field"), "ping", "x") == (
        "TypeError: dispatch_event() takes the event's properties as an object, got string"
    )
    assert live.error("dispatch_event", css("#field"), 1.0) == (
        'TypeError: dispatch_event() needs an event type such as "click", got number'
    )
    assert live.error("dispatch_event", css("#none"), "click") == (
        "LocatorError: dispatch_event: no element matches "
        f'<Locator css="#none"> (waited {SHORT} ms)'
    )


def test_blur_takes_the_focus_away(live: Live) -> None:
    live.show(EVENTS)
    live.call("focus", css("#field"))
    assert live.js("document.activeElement.id") == "field"
    live.call("blur", css("#field"))
    assert live.js("document.activeElement === document.body") is True
    assert live.js("document.querySelector('#out').textContent") == "blur;"
    assert live.error("blur", css("#none")) == (
        f'LocatorError: blur: no element matches <Locator css="#none"> (waited {SHORT} ms)'
    )


def test_an_invalid_css_selector_is_named_as_such(live: Live) -> None:
    """It was Playwright's line, ending "Did you mean to CSS.escape it?"."""
    live.show("<button>x</button>")
    assert live.error("click", css("#a[b")) == (
        "LocatorError: click: <Locator css=\"#a[b\">: '#a[b' is not a valid CSS selector "
        "(it ends too soon)"
    )
    assert live.error("click", css("button::")) == (
        "LocatorError: click: <Locator css=\"button::\">: 'button::' is not a valid CSS "
        "selector (unexpected ':')"
    )
    # A count and a key press said "Error" and Playwright's own API names.
    assert live.error("count", css("###")) == (
        "LocatorError: count: '###' is not a valid CSS selector (unexpected '#')"
    )
    assert live.error("press", "NotAKey") == (
        "TypeError: press: 'NotAKey' is no key name: keys are named as a browser names "
        'them ("Enter", "Tab", "ArrowDown", "a", "Control+A")'
    )
    assert live.error("press", css("button"), "NotAKey").startswith(
        "TypeError: press: <Locator css=\"button\">: 'NotAKey' is no key name"
    )


def test_counts_that_cannot_be_are_type_errors_at_once(live: Live) -> None:
    """click(x, {count: 0}) clicked nothing and passed; expect_count(x, -1) waited the
    whole timeout for a count no page can have."""
    live.show("<button>Go</button><ul><li>a</li><li>b</li></ul>")
    for count in (0.0, -3.0, 2.5):
        assert live.error("click", css("button"), {"count": count}).startswith(
            f"TypeError: click() option count: {render(count)} is not valid"
        )
    assert live.error("expect_count", css("li"), -1.0) == (
        "TypeError: expect_count() needs a whole number from 0, got -1"
    )
    live.call("click", css("button"), {"count": 2.0})  # a double click still goes


def test_an_element_of_the_wrong_kind_is_named_as_such(live: Live) -> None:
    """Each was Playwright's own line ("Locator.fill: Error: Element is not an
    <input>...") under the bare name Error."""
    live.show('<p id="status">Idle</p><input id="one" type="file">')
    status = css("#status")
    shown = '<Locator css="#status">'
    assert live.error("fill", status, "x") == (
        f"LocatorError: fill: {shown} is not a field: it takes text only as an <input>, "
        "a <textarea> or a [contenteditable] element"
    )
    assert live.error("check", status) == (
        f"LocatorError: check: {shown} is not a checkbox or a radio button"
    )
    assert live.error("value_of", status) == (
        f"LocatorError: value_of: {shown} is not a field that has a value (an <input>, a "
        "<textarea> or a <select>)"
    )
    assert live.error("click", xpath("//[")).endswith("is not a valid XPath expression")


def test_an_expectation_takes_a_timeout_of_its_own(live: Live) -> None:
    """``{timeout}`` last, as Playwright's ``expect(loc).toBeVisible({timeout})``: this
    expectation's own, whatever the config's expect timeout (here 400 ms for those that
    pass only by waiting 2 s, 10 s for the one that fails)."""
    live.show(
        '<p id="status">Saving</p><p id="late" hidden>Saved at last</p>'
        + later("document.querySelector('#late').hidden = false", 2000)
    )
    own = {"timeout": 10_000.0}
    live.call("expect_visible", css("#late"), own, expect=SHORT)
    live.call("expect_visible", "Saved at last", own, expect=SHORT)  # a string target too
    live.call("expect_text", css("#late"), "Saved at last", own, expect=SHORT)
    live.call("expect_url", regex("^about:"), own, expect=SHORT)
    got = live.error("expect_not_text", css("#status"), "Saving", {"timeout": 300.0}, expect=LONG)
    assert got == (
        'AssertionError: expected <Locator css="#status"> not to have text "Saving", '
        'still received "Saving" after 300 ms'
    )
    # The next expectation without one has the config's timeout again; so has one given
    # null or {} (as click() takes them); a fraction is rounded up, as the config's are.
    for none in [(), (None,), ({},)]:
        got = live.error("expect_not_text", css("#status"), "Saving", *none, expect=SHORT)
        assert got.endswith(f" after {SHORT} ms"), got
    got = live.error("expect_not_text", css("#status"), "Saving", {"timeout": 0.4})
    assert got.endswith(" after 1 ms"), got


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (5000.0, "expect_visible() options must be an object, got number"),
        ({"wait": 5.0}, "expect_visible() has no option 'wait' (its options: soft, timeout)"),
        (
            {"timeout": 0.0},
            "expect_visible() option timeout: 0 is not valid: milliseconds, more than 0 "
            "and at most 2147483647 (this call's own; the config's timeout.expect otherwise)",
        ),
        ({"timeout": "5s"}, 'expect_visible() option timeout: "5s" is not valid'),
        ({"timeout": 3e9}, "expect_visible() option timeout: 3000000000 is not valid"),
        ({"timeout": float("nan")}, "expect_visible() option timeout: NaN is not valid"),
    ],
    ids=["number", "unknown", "zero", "string", "too-big", "nan"],
)
def test_an_expectation_refuses_options_it_does_not_have(
    live: Live, options: Value, message: str
) -> None:
    live.show("<p>Here</p>")
    got = live.error("expect_visible", "Here", options)
    assert got.startswith(f"TypeError: {message}"), got


def test_wait_for_and_wait_for_url_take_a_timeout_of_their_own(live: Live) -> None:
    """``wait_for(t, {timeout})`` (``locator.waitFor({timeout})``) in place of the action
    timeout, ``wait_for_url(m, {timeout})`` in place of the navigation timeout (5 s here)."""
    live.show(
        '<p id="late" hidden>Saved at last</p>'
        + later("document.querySelector('#late').hidden = false", 2000)
    )
    live.call("wait_for", css("#late"), {"timeout": 10_000.0}, action=SHORT)
    got = live.error("wait_for", css("#never"), {"timeout": 300.0}, action=LONG)
    assert (
        got == 'LocatorError: wait_for: no element matches <Locator css="#never"> (waited 300 ms)'
    )
    got = live.error("wait_for_url", regex("never"), {"timeout": 300.0})
    assert got == (
        "TimeoutError: wait_for_url: the URL did not match /never/ within 300 ms "
        '(it is "about:blank")'
    )
    # Playwright's waitFor({state}) is met with what to write here.
    assert live.error("wait_for", css("#late"), {"state": "hidden"}) == (
        "TypeError: wait_for() has no option 'state' (its only option: timeout, in "
        "milliseconds): it waits for the element to be visible; to wait for it to go, write "
        "expect_hidden(t, {timeout})"
    )
