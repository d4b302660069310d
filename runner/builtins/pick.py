"""``pick``: the best target for an element of the live page, in the language's forms.

What Playwright's "pick locator" and Cypress's selector playground give: a person points
at the page (or an agent names an element of its aria snapshot) and gets a target to
paste into the scenario. The element is found by hit-testing the point (the nearest
ancestor a person would act on: a control, a link, a labelled or test-id'd element) or
by the smart targets' strategies for a name. Candidates follow the smart targets'
preference (``role`` with the accessible name, then ``testid``, ``label``,
``placeholder``, ``text``; a field: ``label`` and ``placeholder`` first, as ``fill``
looks), then ``css``; each is checked on the page to find that one element only, so an
answer is a target that works now. Only the top document is looked at: an element
inside an iframe is answered as its iframe.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Locator, Page

from runner.browser.bridge import LoopBridge
from runner.builtins.locators import strategies
from runner.errors import CommandError

__all__ = ["PagePicker", "Picked", "pick_at", "pick_named"]

MARK = "data-unotest-pick"
MAX_TEXT = 80
PICK_TIMEOUT_S = 10.0
ORDER = ("role", "testid", "label", "placeholder", "text")
FIELD_ORDER = ("label", "placeholder", "role", "testid", "text")
_ARIA_LINE = re.compile(r'^- ([a-z]+) "((?:[^"\\]|\\.)*)"')

# Finds the element at a point, climbs to what a person acts on, marks it and says what
# it is: the facts the candidates are made of.
_HIT = """([x, y, mark]) => {
  let el = document.elementFromPoint(x, y);
  if (!el || el === document.body || el === document.documentElement) return false;
  const acts = (e) => e.matches(
    'a[href], button, input, select, textarea, summary, label, option, [role], [data-testid],'
    + ' [contenteditable=""], [contenteditable="true"], [aria-label]');
  let up = el;
  for (let depth = 0; up && up !== document.body && depth < 6; depth++) {
    if (acts(up)) { el = up; break; }
    up = up.parentElement;
  }
  if (el.tagName === 'LABEL' && el.control) el = el.control;
  el.setAttribute(mark, '1');
  return true;
}"""

_FACTS = """(el) => {
  const text = (s) => (s || '').replace(/\\s+/g, ' ').trim();
  const field = /^(INPUT|SELECT|TEXTAREA)$/.test(el.tagName);
  const label = el.labels && el.labels.length ? text(el.labels[0].textContent) : '';
  const own = field ? '' : text(el.innerText !== undefined ? el.innerText : el.textContent);
  return {
    tag: el.tagName.toLowerCase(),
    field,
    id: el.id || '',
    testid: el.getAttribute('data-testid') || '',
    label,
    placeholder: el.getAttribute('placeholder') || '',
    text: own,
    classes: Array.from(el.classList).filter((c) => /^[A-Za-z_-][\\w-]*$/.test(c)).slice(0, 2),
  };
}"""

_CSS_PATH = """(el) => {
  const parts = [];
  for (let e = el; e && e.nodeType === 1 && e !== document.documentElement; e = e.parentElement) {
    if (e.id && /^[A-Za-z][\\w-]*$/.test(e.id)) { parts.unshift('#' + e.id); break; }
    let part = e.tagName.toLowerCase();
    const siblings = e.parentElement ? Array.from(e.parentElement.children) : [];
    const same = siblings.filter((c) => c.tagName === e.tagName);
    if (same.length > 1) part += ':nth-of-type(' + (same.indexOf(e) + 1) + ')';
    parts.unshift(part);
  }
  return parts.join(' > ');
}"""


@dataclass(frozen=True)
class Picked:
    """The answer: ``target`` first, ``alternatives`` that find the same element,
    ``element`` what it is (its role and name, or its tag)."""

    target: str
    alternatives: tuple[str, ...]
    element: str

    def to_json(self) -> str:
        return json.dumps(
            {
                "target": self.target,
                "alternatives": list(self.alternatives),
                "element": self.element,
            },
            ensure_ascii=False,
        )


class PagePicker:
    """``pick`` for the debugger, from the scenario's thread at a pause: the answer as
    JSON text, masked (a target quotes the page's text, which may hold a secret)."""

    def __init__(
        self, bridge: LoopBridge, page: Callable[[], Page | None], mask: Callable[[str], str]
    ) -> None:
        self.bridge = bridge
        self.page = page
        self.mask = mask

    def __call__(
        self, point: tuple[float, float] | None, name: str | None, role: str | None
    ) -> str:
        page = self.page()
        if page is None or page.is_closed():
            raise CommandError("the run has no page open to pick from")
        if point is not None:
            found = pick_at(page, *point)
        else:
            assert name is not None  # the command's parser asked for one of the two
            found = pick_named(page, name, role)
        try:
            picked = self.bridge.call(asyncio.wait_for(found, PICK_TIMEOUT_S))
        except TimeoutError:
            raise CommandError(f"the page did not answer within {PICK_TIMEOUT_S:g} s") from None
        except PlaywrightError as err:
            raise CommandError(f"the page refused: {str(err).splitlines()[0]}") from None
        return self.mask(picked.to_json())


def _q(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


async def pick_at(page: Page, x: float, y: float) -> Picked:
    """The target for the element at ``(x, y)``, CSS pixels of the viewport."""
    await _unmark(page)
    found = await page.evaluate(_HIT, [x, y, MARK])
    if not found:
        raise CommandError(f"no element at {x:g}, {y:g}: only the page's background is there")
    try:
        return await _answer(page, page.locator(f"[{MARK}]"))
    finally:
        await _unmark(page)


async def pick_named(page: Page, name: str, role: str | None) -> Picked:
    """The target for the one visible element with that accessible name (and role), or
    that a smart target with the text would find."""
    if role is not None:
        tried: Sequence[Locator] = [page.get_by_role(role, name=name, exact=True)]  # type: ignore[arg-type]
    else:
        tried = [s.make(page) for s in strategies(name, for_input=False)]
    for locator in tried:
        visible = locator.locator("visible=true")
        count = await visible.count()
        if count == 1:
            await _unmark(page)
            await visible.evaluate(f"(el) => el.setAttribute('{MARK}', '1')")
            try:
                return await _answer(page, page.locator(f"[{MARK}]"))
            finally:
                await _unmark(page)
        if count > 1:
            raise CommandError(
                f"{count} visible elements are named {_q(name)}: pick one by its point instead"
            )
    what = f"{role} named {_q(name)}" if role else f"named {_q(name)}"
    raise CommandError(f"no visible element {what}")


async def _unmark(page: Page) -> None:
    await page.evaluate(
        f"() => document.querySelectorAll('[{MARK}]').forEach((e) => e.removeAttribute('{MARK}'))"
    )


async def _answer(page: Page, marked: Locator) -> Picked:
    facts: dict[str, Any] = await marked.evaluate(_FACTS)
    role, name = await _role_and_name(marked)
    candidates = _candidates(page, facts, role, name)
    css_path: str = await marked.evaluate(_CSS_PATH)
    candidates.append((f"css({_q(css_path)})", page.locator(css_path)))
    working: list[str] = []
    for text, locator in candidates:
        if text in working:
            continue
        try:
            if await locator.count() == 1 and await locator.evaluate(
                f"(el) => el.hasAttribute('{MARK}')"
            ):
                working.append(text)
        except Exception:
            continue  # a candidate Playwright cannot read (an odd selector) is no answer
    if not working:
        raise CommandError("no target finds that element alone")
    element = f"{role} {_q(name)}" if role and name else f"<{facts['tag']}>"
    return Picked(working[0], tuple(working[1:]), element)


async def _role_and_name(marked: Locator) -> tuple[str | None, str | None]:
    """The element's role and accessible name, as Playwright's aria snapshot says them
    (its first line: ``- button "Save"``), so ``role(...)`` means what Playwright reads."""
    try:
        snapshot = await marked.aria_snapshot(timeout=2000)
    except Exception:
        return None, None
    first = snapshot.splitlines()[0] if snapshot else ""
    match = _ARIA_LINE.match(first)
    if match is None:
        return None, None
    return match.group(1), json.loads(f'"{match.group(2)}"')


def _candidates(
    page: Page, facts: dict[str, Any], role: str | None, name: str | None
) -> list[tuple[str, Locator]]:
    """The targets to try, best first (the smart targets' order; a field's own first)."""
    found: dict[str, tuple[str, Locator]] = {}
    if role and name:
        found["role"] = (
            f"role({_q(role)}, {_q(name)})",
            page.get_by_role(role, name=name, exact=True),  # type: ignore[arg-type]
        )
    if facts["testid"]:
        found["testid"] = (f"testid({_q(facts['testid'])})", page.get_by_test_id(facts["testid"]))
    if facts["label"]:
        found["label"] = (
            f"label({_q(facts['label'])})",
            page.get_by_label(facts["label"], exact=True),
        )
    if facts["placeholder"]:
        found["placeholder"] = (
            f"placeholder({_q(facts['placeholder'])})",
            page.get_by_placeholder(facts["placeholder"], exact=True),
        )
    text = facts["text"]
    if text and len(text) <= MAX_TEXT:
        found["text"] = (f"text({_q(text)})", page.get_by_text(text, exact=True))
    order = FIELD_ORDER if facts["field"] else ORDER
    return [found[kind] for kind in order if kind in found]
