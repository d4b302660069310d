"""Run-time values and the JavaScript rules the language keeps for them.

Values are plain Python objects so that built-ins, the debugger and artifact writers
can handle them without wrappers: ``str`` (string), ``float`` (every number), ``bool``,
``None`` (null), ``list`` (array), ``dict[str, Value]`` (object), :class:`RegexValue`
and :class:`HostValue` (what the host hands out, such as a Locator; a function named
without calling it, :class:`CallableValue`; an expected value that is a test,
:class:`MatcherValue`).

Where JavaScript would coerce silently the language raises ``TypeError`` instead; the
functions here state the rules once (truthiness, strict-by-value equality, rendering).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeAlias


class HostValue:
    """A value the host owns (a Locator); the language only renders and passes it on."""

    type_name = "host"

    def render(self) -> str:
        return f"<{self.type_name}>"

    def get_property(self, name: str) -> Value:
        """``value.name``; hosts override to expose read-only properties."""
        raise KeyError(name)

    def call_method(self, name: str, args: list[Value]) -> Value:
        """``value.name(args)``; raise ``KeyError`` for an unknown method."""
        raise KeyError(name)

    def method_names(self) -> tuple[str, ...]:
        return ()

    def same_as(self, other: HostValue) -> bool:
        return self is other


@dataclass(frozen=True, slots=True)
class RegexValue:
    """A regex as the scenario sees it; ``pattern`` is the translated Python regex."""

    source: str
    flags: str
    pattern: re.Pattern[str]

    def render(self) -> str:
        return f"/{self.source}/{self.flags}"


Value: TypeAlias = (
    str | float | bool | list["Value"] | dict[str, "Value"] | RegexValue | HostValue | None
)


class CallableValue(HostValue):
    """A function as a value: one of the scenario's file or of a helper, or a built-in,
    named without calling it (``expect_poll(count_items, 3)``, ``expect_poll(url, ...)``).

    The interpreter makes them (``dsl.interpreter.FunctionValue`` and ``BuiltinValue``);
    here is only what a built-in that takes a function needs of one, so that
    ``expect_poll`` and ``expect_to_pass`` treat both alike. ``type_of`` says
    ``"function"``."""

    type_name = "function"

    @property
    def name(self) -> str:
        raise NotImplementedError

    def arity(self) -> tuple[int, int | None]:
        """How many arguments a call takes: at least, at most (``None``: no limit)."""
        raise NotImplementedError

    def call(self, args: list[Value], *, caught: bool = False) -> Value:
        """Call it from the built-in now running; ``caught``: a failure inside is
        retried by the caller, so its steps are written as caught, not as the run's."""
        raise NotImplementedError


MATCHER_USE = (
    "a matcher is only the expected value of expect_equal, expect_not_equal or expect_poll"
)
"""What a matcher is for, said wherever one is misused (an operator, another built-in)."""


class MatcherValue(HostValue):
    """An expected value that is a test: ``contains("x")``, ``greater_than(3)``
    (Playwright's ``toContain``, ``toBeGreaterThan``, ...), made by the matcher
    built-ins of :mod:`dsl.builtins`.

    ``expect_equal``, ``expect_not_equal`` and ``expect_poll`` take one as the expected
    value, or inside an expected array or object (as Jest's asymmetric matchers);
    :func:`deep_equal` applies it. It renders as it was written, ``contains("x")``;
    ``wanted`` says in words what it accepts (``a value greater than 3``), for messages.
    """

    type_name = "matcher"

    def __init__(
        self, name: str, args: tuple[Value, ...], test: Callable[[Value], bool], wanted: str
    ) -> None:
        self.name = name
        self.args = args
        self.test = test
        self.wanted = wanted

    def render(self) -> str:
        return f"{self.name}({', '.join(render(arg) for arg in self.args)})"

    def same_as(self, other: HostValue) -> bool:
        return (
            isinstance(other, MatcherValue)
            and other.name == self.name
            and strict_equal(list(other.args), list(self.args))
        )


class FrozenList(list[Value]):
    """An array of a helper file's top-level ``const``: read like any array, never changed.

    Assigning an element or ``push`` is a ``TypeError`` (the interpreter and
    :mod:`dsl.methods` check for it); copies (``slice()``) are ordinary arrays.
    """

    __slots__ = ()


class FrozenDict(dict[str, Value]):
    """An object of a helper file's top-level ``const``: read like any object, never changed."""

    __slots__ = ()


def is_frozen(value: Value) -> bool:
    return isinstance(value, FrozenList | FrozenDict)


def freeze(value: Value) -> Value:
    """A deep, frozen copy: arrays and objects at any depth become Frozen ones."""
    if isinstance(value, list):
        return FrozenList(freeze(item) for item in value)
    if isinstance(value, dict):
        return FrozenDict((key, freeze(item)) for key, item in value.items())
    return value


def type_name(value: Value) -> str:
    """The name a scenario author knows: ``string``, ``number``, ``array``, ..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, float | int):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, RegexValue):
        return "regex"
    return value.type_name


def truthy(value: Value) -> bool:
    """JavaScript truthiness: ``0 "" null false NaN`` are falsy, ``[]`` and ``{}`` are not."""
    if value is None or value is False:
        return False
    if value is True:
        return True
    if isinstance(value, float | int):
        return not (value == 0 or math.isnan(value))
    if isinstance(value, str):
        return value != ""
    return True


def deep_equal(actual: Value, expected: Value) -> bool:
    """What the expectations compare with (``expect_equal``, ``expect_poll``): ``===``,
    except that NaN equals NaN at any depth, and a :class:`MatcherValue` in ``expected``
    (at the top or inside an array or object) tests the actual value at its place.

    What every JavaScript assertion library does (``assert.deepStrictEqual``, Jest's
    ``toEqual`` with its asymmetric matchers); otherwise a failure would read "expected
    NaN, received NaN".
    """
    if isinstance(expected, MatcherValue):
        return expected.test(actual)
    if (
        isinstance(actual, float)
        and isinstance(expected, float)
        and math.isnan(actual)
        and math.isnan(expected)
    ):
        return True
    if isinstance(actual, list) and isinstance(expected, list):
        return len(actual) == len(expected) and all(
            deep_equal(a, e) for a, e in zip(actual, expected, strict=True)
        )
    if isinstance(actual, dict) and isinstance(expected, dict):
        return actual.keys() == expected.keys() and all(
            deep_equal(actual[k], expected[k]) for k in actual
        )
    return strict_equal(actual, expected)


def strict_equal(a: Value, b: Value, _comparing: set[tuple[int, int]] | None = None) -> bool:
    """``===`` (and ``==``, which the language makes strict): arrays and objects by value.

    Two structures that contain themselves compare as Node's deep equality does: a pair
    met again while it is being compared counts as equal (the rest decides), where the
    plain recursion ran out of stack at the statement."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    if isinstance(a, float | int) and isinstance(b, float | int):
        return a == b  # NaN != NaN, 0 == -0, as in JavaScript
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    if a is None or b is None:
        return a is b
    if a is b and isinstance(a, list | dict):
        return True  # and an array that contains itself ends here
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return False
        return _pairwise(a, b, zip(a, b, strict=True), _comparing)
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return False
        return _pairwise(a, b, ((a[k], b[k]) for k in a), _comparing)
    if isinstance(a, RegexValue) and isinstance(b, RegexValue):
        return a.source == b.source and a.flags == b.flags
    if isinstance(a, HostValue) and isinstance(b, HostValue):
        return a.same_as(b)
    return False


def _pairwise(
    a: Value, b: Value, pairs: Iterator[tuple[Value, Value]], comparing: set[tuple[int, int]] | None
) -> bool:
    key = (id(a), id(b))
    if comparing is None:
        comparing = set()
    elif key in comparing:
        return True  # met again inside itself: the comparison already under way decides
    comparing.add(key)
    try:
        return all(strict_equal(x, y, comparing) for x, y in pairs)
    finally:
        comparing.discard(key)


def format_number(value: float) -> str:
    """``Number.prototype.toString()``: integral values without ``.0``, JS exponents."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    # repr gives the shortest round-tripping digits, as JavaScript does; only the
    # placement of the decimal point differs (ECMA-262 Number::toString).
    mantissa, _, exp_text = repr(abs(value)).partition("e")
    int_part, _, frac_part = mantissa.partition(".")
    digits = (int_part + frac_part.rstrip("0")).lstrip("0") or "0"
    leading_zeros = len(int_part + frac_part) - len((int_part + frac_part).lstrip("0"))
    n = len(int_part) - leading_zeros + (int(exp_text) if exp_text else 0)
    k = len(digits)
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    exponent = n - 1
    body = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{sign}{body}e{'+' if exponent >= 0 else '-'}{abs(exponent)}"


def to_display(value: Value) -> str:
    """What ``log()``, ``str()`` and template literals show: strings as they are."""
    if isinstance(value, str):
        return value
    return render(value)


CIRCULAR = "[Circular]"
"""What an array or object that contains itself shows where it comes again (Node's word)."""


class CircularStructure(ValueError):
    """``json()`` of an array or object that contains itself (JavaScript's TypeError)."""


def render(value: Value, _open: frozenset[int] = frozenset()) -> str:
    """One line that a person reads in vars, messages and logs; strings are quoted.

    An array or object met again inside itself is ``[Circular]``: ``a.push(a)`` is legal,
    and its rendering must end."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, float | int):
        return format_number(float(value))
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list | dict):
        if id(value) in _open:
            return CIRCULAR
        inside = _open | {id(value)}
        if isinstance(value, list):
            return "[" + ", ".join(render(item, inside) for item in value) + "]"
        if not value:
            return "{}"
        inner = ", ".join(f"{_render_key(k)}: {render(v, inside)}" for k, v in value.items())
        return "{ " + inner + " }"
    if isinstance(value, RegexValue):
        return value.render()
    return value.render()


_PLAIN_KEY = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*\Z")


def _render_key(key: str) -> str:
    return key if _PLAIN_KEY.match(key) else json.dumps(key, ensure_ascii=False)


def to_json_data(
    value: Value, *, display: bool = False, _open: frozenset[int] = frozenset()
) -> object:
    """What ``json(x)`` serialises: JSON's own types, host values as their rendering.

    An array or object that contains itself raises :class:`CircularStructure`, as
    ``JSON.stringify`` throws. ``display``: for a person (runtime.json's variables)
    rather than ``json()``: ``NaN`` and ``Infinity`` stay themselves (``json.dumps``
    writes them so), and a structure met again inside itself is ``"[Circular]"``."""
    if isinstance(value, float | int) and not isinstance(value, bool):
        if math.isnan(value) or math.isinf(value):
            return value if display else None  # JSON.stringify writes null
        return int(value) if value.is_integer() and abs(value) < 2**53 else value
    if isinstance(value, list | dict):
        if id(value) in _open:
            if display:
                return CIRCULAR
            raise CircularStructure("the value contains itself")
        inside = _open | {id(value)}
        if isinstance(value, list):
            return [to_json_data(item, display=display, _open=inside) for item in value]
        return {k: to_json_data(v, display=display, _open=inside) for k, v in value.items()}
    if isinstance(value, RegexValue):
        return {}
    if isinstance(value, HostValue):
        return value.render()
    return value


def well_formed(text: str) -> str:
    """``text`` with each lone UTF-16 surrogate (JSON's ``"\\ud800"``, an environment
    variable that is not UTF-8, a page's broken string) as U+FFFD and each escaped pair
    joined, as string literals are: such a string cannot be written as UTF-8, so it would
    break every log, event and report it reached."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def from_json_data(data: object) -> Value:
    """Turn parsed JSON (or YAML) data into language values: every number a float."""
    if isinstance(data, str):
        return well_formed(data)
    if isinstance(data, bool) or data is None:
        return data
    if isinstance(data, int | float):
        return float(data)
    if isinstance(data, list):
        return [from_json_data(item) for item in data]
    if isinstance(data, dict):
        return {well_formed(str(k)): from_json_data(v) for k, v in data.items()}
    return str(data)


def display_json_head(value: Value, budget: int) -> tuple[str, bool]:
    """``json.dumps(to_json_data(value, display=True), ensure_ascii=False)``, or its
    first ``budget`` characters and more (then ``True``): a variable shown 4 KB at a time
    costs what those 4 KB cost, not a walk of its 100,000 items on every step. Written
    without recursion, so a value nested thousands deep is no deeper a Python stack."""
    out: list[str] = []
    size = 0
    path: set[int] = set()
    stack: list[Iterator[Value | _Text]] = [iter((value,))]
    while stack:
        if size > budget:
            return "".join(out), True
        item = next(stack[-1], _END)
        if item is _END:
            stack.pop()
            continue
        if isinstance(item, _Text):
            text = item.text
        elif isinstance(item, list | dict) and item and id(item) not in path:
            stack.append(_parts(item, path))
            continue
        elif isinstance(item, list | dict):
            text = json.dumps(CIRCULAR) if item else ("[]" if isinstance(item, list) else "{}")
        elif isinstance(item, str):
            text = _encode_string(item)
        else:
            text = json.dumps(to_json_data(item, display=True), ensure_ascii=False)
        out.append(text)
        size += len(text)
    return "".join(out), size > budget


_encode_string: Callable[[str], str] = json.encoder.encode_basestring
"""``json.dumps(text, ensure_ascii=False)`` without its per-call set-up (the same C code)."""


class _Text:
    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


_END = _Text("")
_COMMA = _Text(", ")


def _parts(value: list[Value] | dict[str, Value], path: set[int]) -> Iterator[Value | _Text]:
    """A non-empty array's or object's text, a piece (or an item to write) at a time;
    it is on ``path`` (a value met again inside itself is ``[Circular]``) until its end."""
    ident = id(value)
    path.add(ident)
    if isinstance(value, list):
        yield _Text("[")
        for index, item in enumerate(value):
            if index:
                yield _COMMA
            yield item
        path.discard(ident)
        yield _Text("]")
        return
    yield _Text("{")
    for index, (key, item) in enumerate(value.items()):
        if index:
            yield _COMMA
        yield _Text(_encode_string(key) + ": ")
        yield item
    path.discard(ident)
    yield _Text("}")
