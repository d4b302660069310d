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
from dsl.interpreter import Builtin, FunctionValue
from dsl.jsregex import RegexTranslationError, compile_js_regex
from dsl.values import (
    CircularStructure,
    RegexValue,
    Value,
    format_number,
    from_json_data,
    render,
    strict_equal,
    to_display,
    to_json_data,
    type_name,
)

__all__ = ["POLL_INTERVALS_MS", "PURE_SIGNATURES", "PureServices", "make_pure_builtins"]

MAX_RANGE = 1_000_000
POLL_INTERVALS_MS = (100.0, 250.0, 500.0, 1000.0)
"""expect_poll's waits between calls by default, the last one repeated (Playwright's)."""


@dataclass(frozen=True, slots=True)
class PureServices:
    """What the pure built-ins reach outside the language through.

    ``sleep(seconds)`` is expect_poll's wait between two calls: the runner's raises
    :class:`dsl.errors.Interrupt` at once when the run is aborted or times out.
    ``elapsed()`` is a monotonic clock in seconds (the runner's stands still while the
    debugger holds the run, so stepping through a polled function does not use up its
    timeout); ``expect_timeout_ms`` is expect_poll's timeout when it is given none.
    """

    env: Callable[[str], str | None]
    log: Callable[[str], None]
    run_tag: str = "run"
    clock_ms: Callable[[], float] = lambda: time.time() * 1000.0
    sleep: Callable[[float], None] = time.sleep
    elapsed: Callable[[], float] = time.monotonic
    expect_timeout_ms: float = 5000.0


PURE_SIGNATURES: dict[str, tuple[int, int | None]] = {
    "range": (1, 2),
    "len": (1, 1),
    "str": (1, 1),
    "num": (1, 1),
    "json": (1, 1),
    "matches": (2, 2),
    "regex": (1, 2),
    "json_parse": (1, 1),
    "unique": (0, 1),
    "now": (0, 0),
    "env": (1, 2),
    "expect_equal": (2, 2),
    "expect_poll": (2, 3),
    "assert": (1, 2),
    "fail": (1, 1),
    "log": (0, None),
}

PURE_OPTIONS: dict[str, frozenset[str]] = {"expect_poll": frozenset({"timeout", "intervals"})}
"""The keys of the options object a pure built-in takes last (``check`` flags others)."""


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


_LINE_BREAKING = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")
"""What log() writes escaped: line breaks and control characters (a tab stays)."""
_ESCAPED = {"\n": "\\n", "\r": "\\r"}


def _one_line(text: str) -> str:
    """log()'s line as one line of plain text: ``\\n``, ``\\r`` and ``\\u001b``-style
    escapes instead of line breaks and control characters, which would split it or
    drive the terminal (a page's text may hold anything)."""
    return _LINE_BREAKING.sub(lambda m: _ESCAPED.get(m[0], f"\\u{ord(m[0]):04x}"), text)


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
    try:
        data = to_json_data(value)
    except CircularStructure:
        raise BuiltinError(
            "TypeError", "json() cannot write an array or object that contains itself"
        ) from None
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def _matches(text: Value, pattern: Value) -> Value:
    if not isinstance(text, str):
        raise BuiltinError("TypeError", f"matches() needs a string first, got {type_name(text)}")
    if not isinstance(pattern, RegexValue):
        raise BuiltinError("TypeError", f"matches() needs a regex second, got {type_name(pattern)}")
    return pattern.pattern.search(text) is not None


def _regex(source: Value, flags: Value = None) -> Value:
    """``new RegExp(source, flags)``: the same translation and errors as a literal's."""
    if not isinstance(source, str):
        raise BuiltinError("TypeError", f"regex() needs a string source, got {type_name(source)}")
    if flags is not None and not isinstance(flags, str):
        raise BuiltinError("TypeError", f"regex() needs a string of flags, got {type_name(flags)}")
    try:
        pattern = compile_js_regex(source, flags or "")
    except RegexTranslationError as err:
        where = f" (at character {err.offset} of the source)" if err.offset > 0 else ""
        raise BuiltinError("SyntaxError", f"regex(): {err.message}{where}") from None
    return RegexValue(_escape_source(source), flags or "", pattern)


_LINE_ESCAPES = {"\n": "\\n", "\r": "\\r", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def _escape_source(source: str) -> str:
    """What JavaScript's ``RegExp(source).source`` shows: a ``/`` outside a class and
    line breaks escaped, so the rendering ``/source/flags`` reads back as the same regex
    (``regex("a/b")`` renders ``/a\\/b/``); an empty source is ``(?:)``."""
    if not source:
        return "(?:)"
    out: list[str] = []
    in_class = escaped = False
    for ch in source:
        if escaped:
            out.append(_LINE_ESCAPES[ch][1:] if ch in _LINE_ESCAPES else ch)
            escaped = False
            continue
        if ch == "\\":
            escaped = True
        elif ch == "[":
            in_class = True
        elif ch == "]":
            in_class = False
        elif ch == "/" and not in_class:
            out.append("\\/")
            continue
        out.append(_LINE_ESCAPES.get(ch, ch))
    return "".join(out)


def _json_parse(text: Value) -> Value:
    """``JSON.parse(text)``: JSON's values as scenario values, every number a float."""
    if not isinstance(text, str):
        raise BuiltinError("TypeError", f"json_parse() needs a string, got {type_name(text)}")
    try:
        data = json.loads(text, parse_int=float, parse_constant=_no_constant)
        return from_json_data(data)
    except json.JSONDecodeError as err:
        raise BuiltinError(
            "SyntaxError", f"json_parse(): {err.msg} at position {err.pos}: not valid JSON"
        ) from None
    except _NotJson as err:
        raise BuiltinError("SyntaxError", f"json_parse(): {err} is not JSON") from None
    except RecursionError:
        raise BuiltinError("SyntaxError", "json_parse(): the JSON is nested too deeply") from None


class _NotJson(ValueError):
    pass


def _no_constant(name: str) -> object:
    """Python's json reads NaN and Infinity; JSON (and JSON.parse) does not."""
    raise _NotJson(name)


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


@dataclass(frozen=True, slots=True)
class _PollOptions:
    timeout_ms: float
    intervals_ms: tuple[float, ...]


def _poll_options(options: Value, default_timeout_ms: float) -> _PollOptions:
    if options is None:
        return _PollOptions(default_timeout_ms, POLL_INTERVALS_MS)
    if not isinstance(options, dict):
        raise BuiltinError(
            "TypeError",
            f"expect_poll() takes its options as an object {{timeout, intervals}}, "
            f"got {type_name(options)}",
        )
    unknown = sorted(set(options) - {"timeout", "intervals"})
    if unknown:
        raise BuiltinError(
            "TypeError",
            f"expect_poll() has no option '{unknown[0]}' (its options: timeout, intervals)",
        )
    timeout = options.get("timeout")
    intervals = options.get("intervals")
    if timeout is None:
        timeout = default_timeout_ms
    elif not _is_duration(timeout):
        raise BuiltinError(
            "TypeError", f"expect_poll()'s timeout is a number of ms >= 0, got {render(timeout)}"
        )
    if intervals is None:
        return _PollOptions(float(timeout), POLL_INTERVALS_MS)  # type: ignore[arg-type]
    if not isinstance(intervals, list) or not intervals or not all(map(_is_duration, intervals)):
        raise BuiltinError(
            "TypeError",
            f"expect_poll()'s intervals are a non-empty array of ms >= 0, got {render(intervals)}",
        )
    return _PollOptions(float(timeout), tuple(float(i) for i in intervals))  # type: ignore[arg-type]


def _is_duration(value: Value) -> bool:
    if not isinstance(value, float | int) or isinstance(value, bool):
        return False
    return not math.isnan(value) and 0 <= value < math.inf


def _poll_matches(value: Value, expected: Value) -> bool:
    if isinstance(expected, RegexValue):
        return isinstance(value, str) and expected.pattern.search(value) is not None
    return _same(value, expected)


def _expect_poll(services: PureServices, fn: Value, expected: Value, options: Value) -> None:
    """Playwright's ``expect.poll(fn).toEqual(expected)`` (or ``toMatch`` for a regex).

    ``fn`` is called until its value matches, waiting the next of ``intervals`` between
    calls (the last one repeated); it gives up when the timeout would pass before the
    next call (a timeout of 0: no timeout of its own). A failure inside ``fn`` is the
    step's failure at once, as a throwing callback is in Playwright.
    """
    if not isinstance(fn, FunctionValue):
        raise BuiltinError(
            "TypeError",
            "expect_poll() needs a function of the scenario's file or of a helper, passed by "
            f"name (expect_poll(count_items, 3)), got {type_name(fn)}",
        )
    if fn.params:
        raise BuiltinError(
            "TypeError",
            f"expect_poll() calls {fn.name}() without arguments, but it takes "
            f"{len(fn.params)}: poll a function without parameters",
        )
    poll = _poll_options(options, services.expect_timeout_ms)
    deadline = services.elapsed() + poll.timeout_ms / 1000 if poll.timeout_ms > 0 else None
    waits = list(poll.intervals_ms)
    last_wait = waits.pop()
    calls = 0
    while True:
        value = fn.call([])
        calls += 1
        if _poll_matches(value, expected):
            return
        wait_ms = waits.pop(0) if waits else last_wait
        if deadline is not None and deadline <= services.elapsed() + wait_ms / 1000:
            break
        services.sleep(wait_ms / 1000)
    wanted = (
        f"a match of {render(expected)}" if isinstance(expected, RegexValue) else render(expected)
    )
    raise BuiltinError(
        "AssertionError",
        f"expect_poll({fn.name}) gave up after {format_number(poll.timeout_ms)} ms: expected "
        f"{wanted}, last value {render(value)} ({calls} call{'' if calls == 1 else 's'})",
    )


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
        services.log(_one_line(" ".join(to_display(v) for v in values)))
        return None

    def expect_poll(fn: Value, expected: Value, options: Value = None) -> Value:
        _expect_poll(services, fn, expected, options)
        return None

    impls: dict[str, Callable[..., Value]] = {
        "range": _range,
        "len": _len,
        "str": to_display,
        "num": _num,
        "json": _json,
        "matches": _matches,
        "regex": _regex,
        "json_parse": _json_parse,
        "unique": unique,
        "now": now,
        "env": env,
        "expect_equal": _expect_equal,
        "expect_poll": expect_poll,
        "assert": _assert,
        "fail": _fail,
        "log": log,
    }
    return {
        name: Builtin(name, impls[name], low, high) for name, (low, high) in PURE_SIGNATURES.items()
    }
