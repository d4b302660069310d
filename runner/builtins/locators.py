"""Locators as scenario values, and how a target becomes a Playwright locator.

A scenario's ``role("button", "Save")`` makes no browser call: it returns a
:class:`LocatorValue`, a recipe of steps that renders for people
(``<Locator role=button name="Save">``) and is turned into a Playwright locator on
the current page only when an action or assertion uses it. That keeps locators
printable in runtime.json and usable across navigations. An element ``evaluate``
returned is such a recipe too (:func:`element_ref`): the attribute it was marked with in
the page, since Playwright cannot turn an element handle into a locator.

A string target is a *smart match* (docs/reference.md), resolved here by trying each
strategy in the documented order against visible elements.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeAlias

from playwright.async_api import FrameLocator, Locator, Page

from dsl.errors import BuiltinError, arity_text
from dsl.values import HostValue, RegexValue, Value, render, type_name

__all__ = [
    "REF_ATTRIBUTE",
    "LocatorValue",
    "SmartTarget",
    "TextMatcher",
    "contains_pattern",
    "element_ref",
    "matcher_arg",
    "show_matcher",
    "show_matchers",
    "show_pattern",
    "to_pattern",
]

TextMatcher = str | re.Pattern[str]
"""What Playwright matches text with. ``runner.protocol.Matcher`` is the same idea on
the wire, where a regex travels as a ``RegexLiteral``; nothing converts between them."""
ACTION_ROLES = ("button", "link", "menuitem", "tab", "checkbox", "radio", "option")
ROLE_OPTIONS = (
    "exact",
    "level",
    "checked",
    "pressed",
    "selected",
    "expanded",
    "disabled",
    "include_hidden",
)
MAX_CANDIDATES = 5
REF_ATTRIBUTE = "data-unotest-ref"
"""The attribute that marks an element ``evaluate`` returned, so that a locator finds it
(:func:`element_ref`): Playwright has no way from an element handle to a locator."""


def to_pattern(value: RegexValue) -> re.Pattern[str]:
    """The regex Playwright sends to the browser, which evaluates it as JavaScript.

    Playwright serialises ``pattern.pattern`` as the JavaScript source, so the
    original source is compiled when Python accepts it; otherwise the translated
    pattern is the best available approximation.
    """
    flags = (re.IGNORECASE if "i" in value.flags else 0) | (
        re.MULTILINE if "m" in value.flags else 0
    )
    try:
        return re.compile(value.source, flags)
    except re.error:
        return value.pattern


def matcher_arg(fn: str, value: Value) -> TextMatcher:
    if isinstance(value, str):
        return value
    if isinstance(value, RegexValue):
        return to_pattern(value)
    raise BuiltinError("TypeError", f"{fn}() needs a string or a regex, got {type_name(value)}")


def contains_pattern(text: str) -> re.Pattern[str]:
    """A regex that finds ``text`` in an element's text as ``to_contain_text`` does:
    whitespace normalised (a run of it in ``text`` matches any run on the page). An
    empty text is ``(?:)``: Playwright would read an empty source as no regex at all."""
    return re.compile(r"\s+".join(re.escape(word) for word in text.split()) or "(?:)")


def show_matchers(matchers: list[TextMatcher]) -> str:
    """An array of matchers as the scenario wrote it: ``["a", /b/i]``."""
    return "[" + ", ".join(show_matcher(m) for m in matchers) + "]"


def show_pattern(pattern: re.Pattern[str]) -> str:
    """A regex as the scenario wrote it, flags included (``/save/i``, not ``/save/``)."""
    flags = ("i" if pattern.flags & re.IGNORECASE else "") + (
        "m" if pattern.flags & re.MULTILINE else ""
    )
    return f"/{pattern.pattern}/{flags}"


def show_matcher(matcher: TextMatcher) -> str:
    """A string quoted, a regex as the scenario wrote it."""
    if isinstance(matcher, re.Pattern):
        return show_pattern(matcher)
    return json.dumps(matcher, ensure_ascii=False)


def _show(value: object) -> str:
    if isinstance(value, str | re.Pattern):
        return show_matcher(value)
    if isinstance(value, LocatorValue):
        return value.render()
    return render(value)  # type: ignore[arg-type]


StepArgs: TypeAlias = tuple[Any, ...]
"""A locator step's arguments, as the Playwright method of its kind takes them (a role
name, a matcher, an index, an inner :class:`LocatorValue`, ...): :func:`_apply` passes
them on to Playwright, whose role names are a ``Literal`` no ``str`` satisfies."""


@dataclass(frozen=True, eq=False)
class LocatorValue(HostValue):
    """A chain of locator steps, e.g. ``(("css", ("#cart li",)), ("nth", (0,)))``."""

    steps: tuple[tuple[str, StepArgs], ...]
    type_name = "Locator"

    def render(self) -> str:
        if len(self.steps) == 1 and self.steps[0][0] == "ref":
            return f"<Element from evaluate #{self.steps[0][1][1]}>"
        return "<Locator " + " >> ".join(self._parts()) + ">"

    def _parts(self) -> list[str]:
        parts = []
        for kind, args in self.steps:
            if kind == "role":
                role, name, options = args
                text = f"role={role}"
                if name is not None:
                    text += f" name={_show(name)}"
                for key, val in options:
                    text += f" {key}={render(val)}"
                parts.append(text)
            elif kind in ("first", "last", "frame"):
                parts.append(kind)
            elif kind == "filter":
                has_text, has = args
                inner = []
                if has_text is not None:
                    inner.append(f"has_text={_show(has_text)}")
                if has is not None:
                    inner.append(f"has={has.render()}")
                parts.append("filter(" + ", ".join(inner) + ")")
            elif kind == "find":
                parts.extend(args[0]._parts())
            elif kind == "ref":
                parts.append(f"element from evaluate #{args[1]}")
            else:
                parts.append(f"{kind}={_show(args[0])}")
        return parts

    def frame_prefix(self) -> tuple[tuple[str, StepArgs], ...]:
        """The steps up to the document this locator's element is in: through its last
        ``.frame()`` (``.find()`` steps read as the steps they hold), none on the page."""
        flat: list[tuple[str, StepArgs]] = []

        def add(steps: tuple[tuple[str, StepArgs], ...]) -> None:
            for kind, args in steps:
                if kind == "find":
                    add(args[0].steps)
                else:
                    flat.append((kind, args))

        add(self.steps)
        frames = [i for i, (kind, _) in enumerate(flat) if kind == "frame"]
        return tuple(flat[: frames[-1] + 1]) if frames else ()

    def same_as(self, other: HostValue) -> bool:
        return isinstance(other, LocatorValue) and other.render() == self.render()

    def then(self, kind: str, *args: object) -> LocatorValue:
        return LocatorValue((*self.steps, (kind, args)))

    def method_names(self) -> tuple[str, ...]:
        return ("nth", "first", "last", "find", "filter", "frame")

    def call_method(self, name: str, args: list[Value]) -> Value:
        if name == "frame":
            # Playwright's locator.contentFrame() (page.frameLocator(s)): the document of
            # the iframe this locator finds; .find() then looks inside it.
            _arity(name, args, 0)
            return self.then("frame")
        if name in ("first", "last"):
            _arity(name, args, 0)
            return self.then(name)
        if name == "nth":
            _arity(name, args, 1)
            index = args[0]
            if (
                not isinstance(index, float | int)
                or isinstance(index, bool)
                or not float(index).is_integer()
            ):
                raise BuiltinError("TypeError", f".nth() needs a whole number, got {render(index)}")
            return self.then("nth", int(index))
        if name == "find":
            _arity(name, args, 1)
            inner = args[0]
            if not isinstance(inner, LocatorValue):
                raise BuiltinError("TypeError", f".find() needs a Locator, got {type_name(inner)}")
            return self.then("find", inner)
        if name == "filter":
            _arity(name, args, 1)
            options = args[0]
            if not isinstance(options, dict):
                raise BuiltinError("TypeError", ".filter() needs an object {has_text, has}")
            unknown = set(options) - {"has_text", "has"}
            if unknown:
                raise BuiltinError(
                    "TypeError",
                    f".filter() does not know {', '.join(sorted(unknown))} (use has_text, has)",
                )
            has_text = options.get("has_text")
            has = options.get("has")
            if has is not None and not isinstance(has, LocatorValue):
                raise BuiltinError(
                    "TypeError", f".filter() has: needs a Locator, got {type_name(has)}"
                )
            text = matcher_arg("filter", has_text) if has_text is not None else None
            return self.then("filter", text, has)
        if name == "evaluate":
            # Playwright's locator.evaluate(js): here, as for every built-in, the target
            # comes first (docs/language.md, "Browser built-ins for ported suites").
            raise BuiltinError(
                "TypeError",
                "a Locator has no method .evaluate(): write evaluate(locator, js, arg?)",
            )
        ported = _PLAYWRIGHT_METHODS.get(name)
        if ported is not None:  # a Playwright Test line ported as written
            raise BuiltinError("TypeError", f"a Locator has no method .{name}(): write {ported}")
        raise KeyError(name)

    def build(self, page: Page) -> Locator:
        """The Playwright locator for this recipe on ``page``."""
        current: Page | Locator | FrameLocator = page
        for kind, args in self.steps:
            current = _apply(current, page, kind, args)
        if isinstance(current, Page):  # pragma: no cover - a recipe always has a step
            raise BuiltinError("TypeError", "empty locator")
        if isinstance(current, FrameLocator):
            raise BuiltinError(
                "TypeError",
                f"{self.render()} is the document of an iframe, not an element: name an "
                'element in it with .find(), e.g. css("iframe").frame().find(label("Name"))',
            )
        return current


_PLAYWRIGHT_METHODS = {
    "locator": ".find(css(selector))",
    "getByRole": '.find(role("button", "Save"))',
    "getByText": ".find(text(m))",
    "getByLabel": ".find(label(m))",
    "getByPlaceholder": ".find(placeholder(m))",
    "getByTestId": ".find(testid(id))",
    "getByTitle": ".find(title(m))",
    "getByAltText": ".find(alt(m))",
    "contentFrame": ".frame()",
    "frameLocator": ".frame() on the iframe, then .find()",
    "click": "click(locator), the target first",
    "fill": "fill(locator, text), the target first",
    "count": "count(locator)",
    "textContent": "text_of(locator)",
    "innerText": "text_of(locator)",
    "isVisible": "is_visible(locator)",
}
"""Playwright's Locator methods a ported line uses, and what unotest writes instead."""


def _arity(name: str, args: list[Value], count: int) -> None:
    if len(args) != count:
        raise BuiltinError(
            "TypeError",
            f".{name}() takes {arity_text(count, count)} but got {len(args)}",
        )


_GET_BY = {
    "text": "get_by_text",
    "label": "get_by_label",
    "placeholder": "get_by_placeholder",
    "alt": "get_by_alt_text",
    "title": "get_by_title",
}


def _apply(
    current: Page | Locator | FrameLocator, page: Page, kind: str, args: StepArgs
) -> Page | Locator | FrameLocator:
    if kind == "role":
        role, name, options = args
        kwargs = dict(options)
        if name is not None:
            kwargs["name"] = name
            # A string matcher is exact after whitespace normalisation (docs/reference.md);
            # Playwright's default would be a case-insensitive substring.
            if isinstance(name, str):
                kwargs.setdefault("exact", True)
        return current.get_by_role(role, **kwargs)
    if kind in _GET_BY:
        # A string matcher is exact (docs/reference.md), as for role names.
        found: Locator = getattr(current, _GET_BY[kind])(args[0], exact=isinstance(args[0], str))
        return found
    if kind == "testid":
        return current.get_by_test_id(args[0])
    if kind == "css":
        return current.locator(args[0])
    if kind == "xpath":
        return current.locator(f"xpath={args[0]}")
    if kind == "ref":
        return current.locator(f'[{REF_ATTRIBUTE}="{args[0]}"]')
    if isinstance(current, Page):
        raise BuiltinError("TypeError", f"a locator cannot start with .{kind}()")
    if kind == "frame":
        if isinstance(current, FrameLocator):
            raise BuiltinError("TypeError", ".frame() needs an iframe element, not a frame")
        return current.content_frame
    if isinstance(current, FrameLocator) and kind == "filter":
        raise BuiltinError("TypeError", "a frame has no .filter(): .find() an element in it first")
    if kind == "nth":
        return current.nth(args[0])
    if kind == "first":
        return current.first
    if kind == "last":
        return current.last
    if kind == "find":
        inner: LocatorValue = args[0]
        for inner_kind, inner_args in inner.steps:
            current = _apply(current, page, inner_kind, inner_args)
        return current
    if kind == "filter":
        assert isinstance(current, Locator)
        has_text, has = args
        return current.filter(has_text=has_text, has=has.build(page) if has is not None else None)
    raise AssertionError(kind)  # pragma: no cover


def element_ref(
    mark: str, number: int, prefix: tuple[tuple[str, StepArgs], ...] = ()
) -> LocatorValue:
    """The target of the element ``evaluate`` marked with ``mark`` (its
    :data:`REF_ATTRIBUTE`), shown as ``<Element from evaluate #number>``; ``prefix``: the
    steps to the iframe's document it is in (:meth:`LocatorValue.frame_prefix`). The mark
    is in the page, so it goes with the element: once the page removes or re-renders it,
    the target matches nothing and a built-in says so as for any other."""
    return LocatorValue((*prefix, ("ref", (mark, number))))


def role_locator(role: Value, name: Value = None, options: Value = None) -> LocatorValue:
    if not isinstance(role, str):
        raise BuiltinError(
            "TypeError", f'role() needs a role name such as "button", got {type_name(role)}'
        )
    if isinstance(name, dict) and options is None:
        name, options = None, name  # role("button", {disabled: true}): options, no name
    name_matcher = matcher_arg("role", name) if name is not None else None
    opts: list[tuple[str, int | bool]] = []
    if options is not None:
        if not isinstance(options, dict):
            raise BuiltinError(
                "TypeError", f"role() options must be an object, got {type_name(options)}"
            )
        for key, val in options.items():
            if key == "name" and name is None and isinstance(val, str | RegexValue):
                # Playwright's getByRole("button", {name: "Save"}), ported as written.
                shown = render(val)
                raise BuiltinError(
                    "TypeError",
                    f"role() takes the name second, not as an option: write "
                    f"role({render(role)}, {shown})",
                )
            if key not in ROLE_OPTIONS:
                raise BuiltinError(
                    "TypeError",
                    f"role() does not know the option '{key}' (known: {', '.join(ROLE_OPTIONS)})",
                )
            if key == "level":
                if not isinstance(val, float | int) or isinstance(val, bool):
                    raise BuiltinError("TypeError", "role() option 'level' needs a number")
                opts.append((key, int(val)))
            elif not isinstance(val, bool):
                raise BuiltinError("TypeError", f"role() option '{key}' needs true or false")
            else:
                opts.append((key, val))
    return LocatorValue((("role", (role, name_matcher, tuple(opts))),))


# --- smart string targets --------------------------------------------------------


@dataclass(frozen=True)
class Strategy:
    description: str
    make: Callable[[Page], Locator]


def strategies(text: str, for_input: bool) -> list[Strategy]:
    """The documented order: roles, label, placeholder, exact text (inputs: label first)."""
    shown = json.dumps(text, ensure_ascii=False)

    def roles(page: Page) -> Locator:
        locator = page.get_by_role(ACTION_ROLES[0], name=text, exact=True)  # type: ignore[arg-type]
        for role in ACTION_ROLES[1:]:
            locator = locator.or_(page.get_by_role(role, name=text, exact=True))  # type: ignore[arg-type]
        return locator

    role_strategy = Strategy(f"role {'/'.join(ACTION_ROLES)} named {shown}", roles)
    label = Strategy(f"label {shown}", lambda page: page.get_by_label(text, exact=True))
    placeholder = Strategy(
        f"placeholder {shown}", lambda page: page.get_by_placeholder(text, exact=True)
    )
    exact_text = Strategy(f"text {shown}", lambda page: page.get_by_text(text, exact=True))
    if for_input:
        return [label, placeholder, role_strategy, exact_text]
    return [role_strategy, label, placeholder, exact_text]


@dataclass(frozen=True)
class SmartTarget:
    """A string target resolved against the page, with what was tried."""

    text: str
    for_input: bool = False

    def render(self) -> str:
        return json.dumps(self.text, ensure_ascii=False)

    def any_match(self, page: Page) -> Locator:
        """One locator for every strategy at once (for hidden/count checks)."""
        found = strategies(self.text, self.for_input)
        locator = found[0].make(page)
        for strategy in found[1:]:
            locator = locator.or_(strategy.make(page))
        return locator

    def in_one_call(self, page: Page) -> Locator:
        """One locator that names what :meth:`resolve` would, for an action to wait on
        and act through in a single call (no ``count()`` first): the first strategy's
        visible elements, or, only while it has none, those of the others together.

        "Only while it has none" is ``:root`` without a descendant the first strategy
        matches, with the others looked up inside it. Strict mode then settles it as
        :meth:`resolve` does: one element is the one named (the first strategy's, or the
        one the others' union holds, which is the first of them that matches anything);
        none makes the action wait for one; more than one fails at once, before
        anything is done to the page, and :meth:`resolve` sorts out which strategy
        names one or reports the ambiguity.
        """
        tried = strategies(self.text, self.for_input)
        first = tried[0].make(page).filter(visible=True)
        others = tried[1].make(page)
        for strategy in tried[2:]:
            others = others.or_(strategy.make(page))
        while_first_has_none = page.locator(":root").filter(has_not=first)
        return first.or_(while_first_has_none.locator(others.filter(visible=True)))

    def not_found(self, timeout_ms: float) -> BuiltinError:
        names = "; ".join(s.description for s in strategies(self.text, self.for_input))
        return BuiltinError(
            "LocatorError",
            f"no visible element matches {self.render()} after {int(timeout_ms)} ms "
            f"(tried {names})",
        )

    async def resolve(self, page: Page, timeout_ms: float) -> Locator:
        """The single visible element this text names, waiting up to ``timeout_ms``.

        The first strategy is asked alone (most targets are found by it); the others,
        when it finds nothing, together in one round trip: when their union holds one
        visible element, that element is the one the first of them matching anything
        names (a strategy matching it matches nothing else), so asking them one by one
        is needed only when the union holds more (which one wins, or an ambiguity).
        """
        deadline = time.monotonic() + timeout_ms / 1000
        tried = strategies(self.text, self.for_input)
        first, others = tried[0], tried[1:]
        while True:
            found = await _unique(self, first, first.make(page).filter(visible=True))
            if found is None:
                found = await self._among(page, others)
            if found is not None:
                return found
            if time.monotonic() >= deadline:
                raise self.not_found(timeout_ms)
            await asyncio.sleep(0.1)

    async def _among(self, page: Page, others: list[Strategy]) -> Locator | None:
        """The element the later strategies name: their union in one round trip, one by
        one only when it holds more than one element."""
        union = others[0].make(page)
        for strategy in others[1:]:
            union = union.or_(strategy.make(page))
        union = union.filter(visible=True)
        count = await union.count()
        if count == 1:
            return union
        for strategy in others if count > 1 else []:
            found = await _unique(self, strategy, strategy.make(page).filter(visible=True))
            if found is not None:
                return found
        return None


async def _unique(target: SmartTarget, strategy: Strategy, locator: Locator) -> Locator | None:
    """``locator`` when it finds one visible element, ``None`` when none; more is an
    ambiguity, reported with the elements it found."""
    count = await locator.count()
    if count == 1:
        return locator
    if count > 1:
        listing = await describe_candidates(locator, count)
        raise BuiltinError(
            "LocatorError",
            f"{target.render()} is ambiguous: {strategy.description} matches {count} "
            f"visible elements ({listing}); use a locator with .first(), .nth(i) "
            "or a more precise role/label",
        )
    return None


_DESCRIBE = """(elements, limit) => elements.slice(0, limit).map(e => {
  const tag = e.tagName.toLowerCase();
  const raw = e.getAttribute('aria-label') || e.innerText || e.value
    || e.getAttribute('placeholder') || '';
  const text = raw.trim().replace(/\\s+/g, ' ');
  return '<' + tag + '> ' + JSON.stringify(text.slice(0, 60));
})"""


async def describe_candidates(locator: Locator, count: int) -> str:
    """Up to MAX_CANDIDATES elements as ``1) <button> "Save"``, for strict-mode errors.

    One ``evaluate_all`` for all of them: it does not wait, where one evaluation per
    element (each with its own timeout) could give up on a busy machine and show "?".
    """
    try:
        texts = await locator.evaluate_all(_DESCRIBE, MAX_CANDIDATES)
    except Exception:
        texts = []
    shown = [f"{i + 1}) {text}" for i, text in enumerate(texts)]
    shown += [f"{i + 1}) ?" for i in range(len(shown), min(count, MAX_CANDIDATES))]
    more = f", and {count - MAX_CANDIDATES} more" if count > MAX_CANDIDATES else ""
    return ", ".join(shown) + more
