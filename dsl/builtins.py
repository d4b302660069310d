"""The pure built-ins of language.md §6: data, value assertions and output.

They need nothing from a browser, so they live here and are tested in milliseconds.
What they need from the outside world (the environment, where log lines go, the
clock) is passed in, so that the runner can mask secrets and two runs in one process
never share state.
"""

from __future__ import annotations

import itertools
import json
import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass

from dsl.errors import BuiltinError
from dsl.interpreter import Builtin
from dsl.values import RegexValue, Value, render, strict_equal, to_display, to_json_data, type_name

__all__ = ["PURE_SIGNATURES", "PureServices", "make_pure_builtins"]

MAX_RANGE = 1_000_000


@dataclass(frozen=True, slots=True)
class PureServices:
    """What the pure built-ins reach outside the language through."""

    env: Callable[[str], str | None]
    log: Callable[[str], None]
    run_tag: str = "run"
    clock_ms: Callable[[], float] = lambda: time.time() * 1000.0


PURE_SIGNATURES: dict[str, tuple[int, int | None]] = {
    "range": (1, 2),
    "len": (1, 1),
    "str": (1, 1),
    "num": (1, 1),
    "json": (1, 1),
    "matches": (2, 2),
    "unique": (0, 1),
    "now": (0, 0),
    "env": (1, 2),
    "expect_equal": (2, 2),
    "assert": (1, 2),
    "fail": (1, 1),
    "log": (0, None),
}


def _number(name: str, value: Value, what: str = "a number") -> float:
    if not isinstance(value, float | int) or isinstance(value, bool):
        raise BuiltinError("TypeError", f"{name}() needs {what}, got {type_name(value)}")
    return float(value)


def _range(*args: Value) -> Value:
    if len(args) == 1:
        start, stop = 0.0, _number("range", args[0])
    else:
        start, stop = _number("range", args[0]), _number("range", args[1])
    if not (start.is_integer() and stop.is_integer()):
        raise BuiltinError("TypeError", "range() needs whole numbers")
    if stop - start > MAX_RANGE:
        raise BuiltinError("RangeError", f"range() is limited to {MAX_RANGE:,} numbers")
    return [float(i) for i in range(int(start), int(stop))]


def _len(value: Value) -> Value:
    if isinstance(value, str | list | dict):
        return float(len(value))
    raise BuiltinError(
        "TypeError", f"len() needs a string, array or object, got {type_name(value)}"
    )


# JavaScript's StringNumericLiteral (what Number("...") accepts), ASCII digits only:
# Python's float() would also take "nan", "infinity", "1_0" and non-ASCII digits, and
# int(text, 16) a signed "-0x1F", none of which JavaScript reads as a number.
_RADIX_TEXT = re.compile(r"0(?:[xX][0-9a-fA-F]+|[bB][01]+|[oO][0-7]+)")
_DECIMAL_TEXT = re.compile(r"[+-]?(?:Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)")


def _num(value: Value) -> Value:
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, float | int):
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        if _RADIX_TEXT.fullmatch(text):
            return float(int(text[2:], {"x": 16, "b": 2, "o": 8}[text[1].lower()]))
        if _DECIMAL_TEXT.fullmatch(text):
            return float(text.replace("Infinity", "inf"))
        raise BuiltinError("TypeError", f"num() cannot read a number from {render(value)}")
    raise BuiltinError(
        "TypeError", f"num() needs a string, number or boolean, got {type_name(value)}"
    )


def _json(value: Value) -> Value:
    return json.dumps(to_json_data(value), ensure_ascii=False, separators=(",", ":"))


def _matches(text: Value, pattern: Value) -> Value:
    if not isinstance(text, str):
        raise BuiltinError("TypeError", f"matches() needs a string first, got {type_name(text)}")
    if not isinstance(pattern, RegexValue):
        raise BuiltinError("TypeError", f"matches() needs a regex second, got {type_name(pattern)}")
    return pattern.pattern.search(text) is not None


def _same(a: Value, b: Value) -> bool:
    """``strict_equal``, except that NaN equals NaN, at any depth.

    What every JavaScript assertion library does (``assert.deepStrictEqual``, Jest's
    ``toEqual``); otherwise a failure would read "expected NaN, received NaN".
    """
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return strict_equal(a, b)


def _expect_equal(actual: Value, expected: Value) -> Value:
    if not _same(actual, expected):
        raise BuiltinError(
            "AssertionError", f"expected {render(expected)}, received {render(actual)}"
        )
    return None


def _assert(condition: Value, message: Value = None) -> Value:
    from dsl.values import truthy

    if not truthy(condition):
        text = to_display(message) if message is not None else "assertion failed"
        raise BuiltinError("AssertionError", f"{text} (got {render(condition)})")
    return None


def _fail(message: Value) -> Value:
    raise BuiltinError("ScenarioError", to_display(message))


def make_pure_builtins(services: PureServices) -> dict[str, Builtin]:
    """The pure built-ins, bound to one run's environment, log sink and clock."""
    counter = itertools.count(1)

    def env(name: Value, default: Value = None) -> Value:
        if not isinstance(name, str):
            raise BuiltinError("TypeError", f"env() needs a variable name, got {type_name(name)}")
        value = services.env(name)
        return value if value is not None else default

    def unique(prefix: Value = None) -> Value:
        if prefix is not None and not isinstance(prefix, str):
            raise BuiltinError(
                "TypeError", f"unique() needs a string prefix, got {type_name(prefix)}"
            )
        return f"{prefix or ''}{services.run_tag}-{next(counter)}"

    def now() -> Value:
        return float(math.floor(services.clock_ms()))

    def log(*values: Value) -> Value:
        services.log(" ".join(to_display(v) for v in values))
        return None

    impls: dict[str, Callable[..., Value]] = {
        "range": _range,
        "len": _len,
        "str": to_display,
        "num": _num,
        "json": _json,
        "matches": _matches,
        "unique": unique,
        "now": now,
        "env": env,
        "expect_equal": _expect_equal,
        "assert": _assert,
        "fail": _fail,
        "log": log,
    }
    return {
        name: Builtin(name, impls[name], low, high) for name, (low, high) in PURE_SIGNATURES.items()
    }
