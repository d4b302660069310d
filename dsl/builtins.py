"""The pure built-ins of docs/reference.md: data, value assertions and their matchers,
retrying a function (``expect_poll``, ``expect_to_pass``), and output.

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
from typing import TypeGuard

from dsl.errors import BuiltinError, ScriptError, arity_text
from dsl.interpreter import Builtin
from dsl.jsregex import RegexTranslationError, compile_js_regex
from dsl.values import (
    CallableValue,
    CircularStructure,
    MatcherValue,
    RegexValue,
    Value,
    deep_equal,
    format_number,
    from_json_data,
    render,
    to_display,
    to_json_data,
    truthy,
    type_name,
)

__all__ = [
    "FUNCTION_AT",
    "MATCHERS",
    "POLL_INTERVALS_MS",
    "PURE_OPTIONS",
    "PURE_SIGNATURES",
    "PureServices",
    "arity_problem",
    "make_pure_builtins",
]

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
    ``titled(title)`` names the statement now running (``step(title, fn)``): the runner
    shows the title in place of the statement's text.
    """

    env: Callable[[str], str | None]
    log: Callable[[str], None]
    run_tag: str = "run"
    clock_ms: Callable[[], float] = lambda: time.time() * 1000.0
    sleep: Callable[[float], None] = time.sleep
    elapsed: Callable[[], float] = time.monotonic
    expect_timeout_ms: float = 5000.0
    titled: Callable[[str], None] = lambda _title: None


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
    "expect_equal": (2, 3),
    "expect_not_equal": (2, 3),
    "expect_poll": (2, 3),
    "expect_to_pass": (1, 2),
    "assert": (1, 2),
    "fail": (1, 1),
    "log": (0, None),
    "type_of": (1, 1),
    "step": (2, 3),
    # matchers (the expected value of expect_equal, expect_not_equal, expect_poll)
    "contains": (1, 1),
    "greater_than": (1, 1),
    "greater_or_equal": (1, 1),
    "less_than": (1, 1),
    "less_or_equal": (1, 1),
    "close_to": (1, 2),
    "truthy": (0, 0),
    "falsy": (0, 0),
    "has_length": (1, 1),
    "matches_object": (1, 1),
}

PURE_OPTIONS: dict[str, frozenset[str]] = {
    "expect_equal": frozenset({"soft"}),
    "expect_not_equal": frozenset({"soft"}),
    "expect_poll": frozenset({"timeout", "intervals", "args", "soft"}),
    "expect_to_pass": frozenset({"timeout", "intervals", "args", "soft"}),
    "step": frozenset({"args"}),
}
"""The keys of the options object a pure built-in takes last (``check`` flags others)."""

FUNCTION_AT: dict[str, int] = {"expect_poll": 0, "expect_to_pass": 0, "step": 1}
"""The built-ins that take a function, and at which argument: a built-in's bare name
there is a function value (``expect_poll(url, contains("/done"))``, ``step("Reload",
reload)``); the checker allows it there."""


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


def _expect_equal(actual: Value, expected: Value, options: Value = None) -> Value:
    """Jest's ``expect(actual).toEqual(expected)``; a matcher as ``expected`` (or inside
    it) tests instead (``expect_equal(len(items), greater_than(2))``); ``{soft: true}``
    is ``expect.soft``."""
    soft = _soft_option("expect_equal", options)
    _actual_first("expect_equal", actual)
    if not deep_equal(actual, expected):
        raise BuiltinError(
            "AssertionError", f"expected {_wanted(expected)}, received {render(actual)}", soft=soft
        )
    return None


def _expect_not_equal(actual: Value, expected: Value, options: Value = None) -> Value:
    """``expect(actual).not.toEqual(expected)``: the negation of :func:`_expect_equal`."""
    soft = _soft_option("expect_not_equal", options)
    _actual_first("expect_not_equal", actual)
    if deep_equal(actual, expected):
        wanted = (
            f"not {expected.wanted}"
            if isinstance(expected, MatcherValue)
            else f"a value other than {render(expected)}"
        )
        raise BuiltinError(
            "AssertionError", f"expected {wanted}, received {render(actual)}", soft=soft
        )
    return None


def _soft_option(name: str, options: Value) -> bool:
    """The ``{soft}`` of expect_equal's options (``null``: none): a failure that the run
    records while the scenario goes on, failing the run at its end."""
    if options is None:
        return False
    if not isinstance(options, dict):
        raise BuiltinError(
            "TypeError",
            f"{name}() takes its options as an object {{soft}}, got {type_name(options)}",
        )
    unknown = sorted(set(options) - {"soft"})
    if unknown:
        raise BuiltinError(
            "TypeError", f"{name}() has no option '{unknown[0]}' (its only option: soft)"
        )
    return _soft_value(name, options.get("soft", False))


def _soft_value(name: str, soft: Value) -> bool:
    if not isinstance(soft, bool):
        raise BuiltinError("TypeError", f"{name}()'s soft is true or false, got {render(soft)}")
    return soft


def _actual_first(name: str, actual: Value) -> None:
    """A matcher belongs second: it is what is expected, not what was found."""
    if isinstance(actual, MatcherValue):
        raise BuiltinError(
            "TypeError",
            f"{name}(actual, expected) takes the matcher second: {name}(value, {actual.render()})",
        )


def _wanted(expected: Value, regex_matches: bool = False) -> str:
    """What an expectation wanted, in words: a matcher's, a regex's match (for
    expect_poll), else the value itself."""
    if isinstance(expected, MatcherValue):
        return expected.wanted
    if regex_matches and isinstance(expected, RegexValue):
        return f"a match of {render(expected)}"
    return render(expected)


def _assert(condition: Value, message: Value = None) -> Value:
    if isinstance(condition, MatcherValue):
        raise BuiltinError(
            "TypeError",
            f"assert() takes a condition, not a matcher ({condition.render()}): check a value "
            f"with expect_equal(value, {condition.render()})",
        )
    if not truthy(condition):
        text = to_display(message) if message is not None else "assertion failed"
        raise BuiltinError("AssertionError", f"{text} (got {render(condition)})")
    return None


def _fail(message: Value) -> Value:
    raise BuiltinError("ScenarioError", to_display(message))


def _type_of(value: Value) -> Value:
    """JavaScript's ``typeof``: there is no ``undefined`` (a missing key reads ``null``,
    which is an ``"object"``, as in JavaScript), and every value that is not a number,
    string, boolean or function (an array, an object, a regex, a Locator, a matcher) is
    an ``"object"``."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, float | int):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, CallableValue):
        return "function"
    return "object"


# --- matchers: Playwright's (Jest's) toContain, toBeGreaterThan, ... as values -----------


def _is_number(value: Value) -> TypeGuard[float | int]:
    return isinstance(value, float | int) and not isinstance(value, bool)


def _contains(item: Value) -> Value:
    """``toContain``: a string's substring, or an array's element (deeply equal, as
    ``toContainEqual``: the language's ``==`` is by value)."""

    def test(value: Value) -> bool:
        if isinstance(value, str):
            return isinstance(item, str) and item in value
        if isinstance(value, list):
            return any(deep_equal(element, item) for element in value)
        return False

    return MatcherValue("contains", (item,), test, f"a value containing {render(item)}")


def _comparison(
    name: str, words: str, compare: Callable[[float, float], bool]
) -> Callable[[Value], Value]:
    """``greater_than(n)`` and its kind: ``toBeGreaterThan(n)`` and the like; a value
    that is no number never matches."""

    def make(bound: Value) -> Value:
        n = _number(name, bound)
        return MatcherValue(
            name,
            (bound,),
            lambda v: _is_number(v) and compare(float(v), n),
            f"a value {words} {format_number(n)}",
        )

    return make


def _close_to(expected: Value, digits: Value = None) -> Value:
    """``toBeCloseTo(n, digits = 2)``: ``|value - n| < 10^-digits / 2``; Infinity is
    close to Infinity only."""
    n = _number("close_to", expected)
    places = 2.0 if digits is None else _number("close_to", digits, "a whole number of digits")
    if not places.is_integer():
        raise BuiltinError(
            "TypeError", f"close_to() needs a whole number of digits, got {render(digits)}"
        )
    margin: float = 10.0**-places / 2

    def test(value: Value) -> bool:
        if not _is_number(value):
            return False
        v = float(value)
        if math.isinf(n) or math.isinf(v):
            return v == n
        return abs(v - n) < margin

    args = (expected,) if digits is None else (expected, digits)
    wanted = f"a number close to {format_number(n)} (a difference < {format_number(margin)})"
    return MatcherValue("close_to", args, test, wanted)


def _has_length(length: Value) -> Value:
    """``toHaveLength(n)``: what has a ``length`` of ``n``: a string (in code points, as
    ``len``), an array, or an object with a ``length`` key (as Jest reads the property;
    an object's keys are not its length)."""
    n = _number("has_length", length, "a whole number from 0")
    if not n.is_integer() or n < 0:
        raise BuiltinError(
            "TypeError", f"has_length() needs a whole number from 0, got {render(length)}"
        )

    def test(value: Value) -> bool:
        if isinstance(value, str | list):
            return len(value) == n
        return isinstance(value, dict) and _is_number(value.get("length")) and value["length"] == n

    return MatcherValue("has_length", (length,), test, f"a value of length {format_number(n)}")


def _matches_object(pattern: Value) -> Value:
    """``toMatchObject(o)``: an object with at least ``o``'s keys, each value matching,
    recursively (an array in ``o`` matches an array of its length, item by item)."""
    if not isinstance(pattern, dict | list):
        raise BuiltinError(
            "TypeError", f"matches_object() needs an object or an array, got {type_name(pattern)}"
        )
    what = "an object" if isinstance(pattern, dict) else "an array"
    return MatcherValue(
        "matches_object",
        (pattern,),
        lambda v: _subset(v, pattern),
        f"{what} matching {render(pattern)}",
    )


def _subset(actual: Value, pattern: Value) -> bool:
    if isinstance(pattern, dict):
        return isinstance(actual, dict) and all(
            key in actual and _subset(actual[key], part) for key, part in pattern.items()
        )
    if isinstance(pattern, list):
        return (
            isinstance(actual, list)
            and len(actual) == len(pattern)
            and all(_subset(a, p) for a, p in zip(actual, pattern, strict=True))
        )
    return deep_equal(actual, pattern)


def _state_matcher(name: str, wanted: str, test: Callable[[Value], bool]) -> Callable[[], Value]:
    return lambda: MatcherValue(name, (), test, wanted)


MATCHERS: dict[str, Callable[..., Value]] = {
    "contains": _contains,
    "greater_than": _comparison("greater_than", "greater than", lambda v, n: v > n),
    "greater_or_equal": _comparison(
        "greater_or_equal", "greater than or equal to", lambda v, n: v >= n
    ),
    "less_than": _comparison("less_than", "less than", lambda v, n: v < n),
    "less_or_equal": _comparison("less_or_equal", "less than or equal to", lambda v, n: v <= n),
    "close_to": _close_to,
    "truthy": _state_matcher("truthy", "a truthy value", truthy),
    "falsy": _state_matcher("falsy", "a falsy value", lambda v: not truthy(v)),
    "has_length": _has_length,
    "matches_object": _matches_object,
}
"""The matcher built-ins: each makes a :class:`dsl.values.MatcherValue` (pure, no state);
their arities are in :data:`PURE_SIGNATURES`."""


# --- expect_poll and expect_to_pass: a function called until it satisfies ----------------


@dataclass(frozen=True, slots=True)
class _PollOptions:
    timeout_ms: float
    intervals_ms: tuple[float, ...]
    args: tuple[Value, ...]
    soft: bool = False


_RETRY_OPTIONS = ("timeout", "intervals", "args", "soft")


def _poll_options(name: str, options: Value, default_timeout_ms: float) -> _PollOptions:
    if options is None:
        return _PollOptions(default_timeout_ms, POLL_INTERVALS_MS, ())
    if not isinstance(options, dict):
        raise BuiltinError(
            "TypeError",
            f"{name}() takes its options as an object {{timeout, intervals, args, soft}}, "
            f"got {type_name(options)}",
        )
    unknown = sorted(set(options) - set(_RETRY_OPTIONS))
    if unknown:
        raise BuiltinError(
            "TypeError",
            f"{name}() has no option '{unknown[0]}' (its options: {', '.join(_RETRY_OPTIONS)})",
        )
    timeout = options.get("timeout")
    if timeout is None:
        timeout = default_timeout_ms
    elif not _is_duration(timeout):
        raise BuiltinError(
            "TypeError", f"{name}()'s timeout is a number of ms >= 0, got {render(timeout)}"
        )
    intervals = options.get("intervals")
    if intervals is None:
        intervals = list(POLL_INTERVALS_MS)
    elif not isinstance(intervals, list) or not intervals or not all(map(_is_duration, intervals)):
        raise BuiltinError(
            "TypeError",
            f"{name}()'s intervals are a non-empty array of ms >= 0, got {render(intervals)}",
        )
    return _PollOptions(
        float(timeout),  # type: ignore[arg-type]
        tuple(float(i) for i in intervals),  # type: ignore[arg-type]
        _args_option(name, options),
        _soft_value(name, options.get("soft", False)),
    )


def _args_option(name: str, options: dict[str, Value]) -> tuple[Value, ...]:
    args = options.get("args")
    if args is not None and not isinstance(args, list):
        raise BuiltinError(
            "TypeError",
            f"{name}()'s args are an array of the function's arguments, got {type_name(args)}",
        )
    return tuple(args or ())


def _is_duration(value: Value) -> bool:
    if not isinstance(value, float | int) or isinstance(value, bool):
        return False
    return not math.isnan(value) and 0 <= value < math.inf


def arity_problem(taker: str, fn: str, given: int, low: int, high: int | None) -> str | None:
    """Why ``taker`` (expect_poll, expect_to_pass) cannot call ``fn`` with ``given``
    arguments (its ``args``), or ``None``; the checker says it in the same words."""
    if low <= given and (high is None or given <= high):
        return None
    takes = arity_text(low, high)
    if given == 0:
        verb = {"expect_poll": "poll", "step": "run"}.get(taker, "retry")
        return (
            f"{taker}() calls {fn}() without arguments, but it takes {takes}: give them in "
            f"its options ({{args: [...]}}) or {verb} a function without parameters"
        )
    given_text = arity_text(given, given)
    return f"{taker}() calls {fn}() with {given_text} (its args), but it takes {takes}"


def _target(name: str, fn: Value, args: tuple[Value, ...]) -> CallableValue:
    """The function ``name`` calls: a function value, callable with ``args``."""
    if not isinstance(fn, CallableValue):
        example = 'step("Log in", log_in)' if name == "step" else f"{name}(count_items, ...)"
        raise BuiltinError(
            "TypeError",
            f"{name}() needs a function passed by name (of the scenario's file, a helper or a "
            f"built-in: {example}), got {type_name(fn)}",
        )
    problem = arity_problem(name, fn.name, len(args), *fn.arity())
    if problem is not None:
        raise BuiltinError("TypeError", problem)
    return fn


def _until(services: PureServices, poll: _PollOptions, attempt: Callable[[], bool]) -> int:
    """Call ``attempt`` until it answers True, waiting the next of ``poll``'s intervals
    between calls (the last one repeated); give up when the timeout would pass before
    the next call (a timeout of 0: none of its own). Returns 0 when it passed, else
    the number of calls made."""
    deadline = services.elapsed() + poll.timeout_ms / 1000 if poll.timeout_ms > 0 else None
    waits = list(poll.intervals_ms)
    last_wait = waits.pop()
    calls = 0
    while True:
        calls += 1
        if attempt():
            return 0
        wait_ms = waits.pop(0) if waits else last_wait
        if deadline is not None and deadline <= services.elapsed() + wait_ms / 1000:
            return calls
        services.sleep(wait_ms / 1000)


def _calls(n: int) -> str:
    return f"{n} call{'' if n == 1 else 's'}"


def _expect_poll(services: PureServices, fn: Value, expected: Value, options: Value) -> None:
    """Playwright's ``expect.poll(fn).toEqual(expected)``, ``toMatch`` for a regex, or
    the matcher's (``contains(x)``: ``toContain(x)``); ``{args}`` are ``fn``'s.

    A failure inside ``fn`` is the step's failure at once, as a throwing callback is in
    Playwright.
    """
    poll = _poll_options("expect_poll", options, services.expect_timeout_ms)
    target = _target("expect_poll", fn, poll.args)
    last: list[Value] = [None]

    def attempt() -> bool:
        value = last[0] = target.call(list(poll.args))
        if isinstance(expected, RegexValue):
            return isinstance(value, str) and expected.pattern.search(value) is not None
        return deep_equal(value, expected)

    calls = _until(services, poll, attempt)
    if calls:
        raise BuiltinError(
            "AssertionError",
            f"expect_poll({target.name}) gave up after {format_number(poll.timeout_ms)} ms: "
            f"expected {_wanted(expected, regex_matches=True)}, last got {render(last[0])} "
            f"({_calls(calls)})",
            soft=poll.soft,
        )


def _expect_to_pass(services: PureServices, fn: Value, options: Value) -> None:
    """Playwright's ``expect(fn).toPass()``: ``fn`` is called until a call completes
    without an error; giving up, the last call's error is the failure (its name kept,
    where it happened in the message).

    The calls are caught calls (:meth:`dsl.values.CallableValue.call`): a failed
    attempt's steps are written ``caught``, never the run's failure; only this
    built-in's own, at its statement, can be.
    """
    poll = _poll_options("expect_to_pass", options, services.expect_timeout_ms)
    target = _target("expect_to_pass", fn, poll.args)
    last: list[ScriptError | BuiltinError] = []

    def attempt() -> bool:
        try:
            target.call(list(poll.args), caught=True)
        except (ScriptError, BuiltinError) as err:
            last[:] = [err]
            return False
        return True

    calls = _until(services, poll, attempt)
    if calls:
        error = last[0]
        where = f" at {error.location}" if isinstance(error, ScriptError) else ""
        raise BuiltinError(
            error.name,
            f"expect_to_pass({target.name}) gave up after {format_number(poll.timeout_ms)} ms "
            f"({_calls(calls)}); the last call failed{where}: {error.message}",
            soft=poll.soft,
        )


def _step(services: PureServices, title: Value, fn: Value, options: Value) -> Value:
    """Playwright's ``test.step(title, body)``: ``fn`` called (with ``{args}``) as part of
    the statement, which the runner names ``title``; its steps are that statement's
    children, as a ``step`` inside it nests. Its value is ``fn``'s."""
    if not isinstance(title, str) or not title.strip():
        raise BuiltinError(
            "TypeError", f"step() needs a title, a string that is not empty, got {render(title)}"
        )
    if options is not None and not isinstance(options, dict):
        raise BuiltinError(
            "TypeError", f"step() takes its options as an object {{args}}, got {type_name(options)}"
        )
    given = options or {}
    unknown = sorted(set(given) - {"args"})
    if unknown:
        raise BuiltinError(
            "TypeError", f"step() has no option '{unknown[0]}' (its only option: args)"
        )
    args = _args_option("step", given)
    target = _target("step", fn, args)
    services.titled(title)
    return target.call(list(args))


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

    def expect_to_pass(fn: Value, options: Value = None) -> Value:
        _expect_to_pass(services, fn, options)
        return None

    def step(title: Value, fn: Value, options: Value = None) -> Value:
        return _step(services, title, fn, options)

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
        "expect_not_equal": _expect_not_equal,
        "expect_poll": expect_poll,
        "expect_to_pass": expect_to_pass,
        "assert": _assert,
        "fail": _fail,
        "log": log,
        "type_of": _type_of,
        "step": step,
        **MATCHERS,
    }
    return {
        name: Builtin(name, impls[name], low, high, FUNCTION_AT.get(name))
        for name, (low, high) in PURE_SIGNATURES.items()
    }
