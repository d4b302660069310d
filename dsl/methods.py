"""Properties and methods of strings, arrays and host values (docs/reference.md).

Arguments are checked, not coerced: ``"a".includes(1)`` is a ``TypeError`` where
JavaScript would quietly compare with ``"1"``. Index arguments follow JavaScript
(negative ``slice`` counts from the end, fractions truncate).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from dsl.errors import BuiltinError, arity_text, closest
from dsl.values import FrozenList, HostValue, RegexValue, Value, strict_equal, to_display, type_name

__all__ = ["ARRAY_METHODS", "STRING_METHODS", "call_method", "get_property"]

STRING_METHODS = [
    "includes",
    "startsWith",
    "endsWith",
    "trim",
    "toLowerCase",
    "toUpperCase",
    "split",
    "slice",
    "replace",
    "indexOf",
]
ARRAY_METHODS = ["includes", "push", "join", "slice", "indexOf"]


def _type_error(message: str) -> BuiltinError:
    return BuiltinError("TypeError", message)


def get_property(obj: Value, name: str) -> Value:
    """``obj.name`` for everything but plain objects (the interpreter reads those)."""
    if isinstance(obj, str | list):
        if name == "length":
            return float(len(obj))
        methods = STRING_METHODS if isinstance(obj, str) else ARRAY_METHODS
        if name in methods:
            raise _type_error(f"'{name}' is a method: call it as .{name}(...)")
        raise _unknown_member(obj, "property", name, ["length", *methods])
    if isinstance(obj, HostValue):
        try:
            return obj.get_property(name)
        except KeyError:
            raise _type_error(f"{type_name(obj)} has no property '{name}'") from None
    raise _unknown_member(obj, "property", name, [])


def call_method(obj: Value, name: str, args: list[Value]) -> Value:
    """``obj.name(args)``; an unknown method is a ``TypeError`` naming the type."""
    if isinstance(obj, str):
        impl = _STRING_IMPL.get(name)
        if impl is None:
            raise _unknown_member(obj, "method", name, STRING_METHODS)
        return impl(obj, args)
    if isinstance(obj, list):
        array_impl = _ARRAY_IMPL.get(name)
        if array_impl is None:
            raise _unknown_member(obj, "method", name, ARRAY_METHODS)
        return array_impl(obj, args)
    if isinstance(obj, HostValue):
        try:
            return obj.call_method(name, args)
        except KeyError:
            known = list(obj.method_names())
            listing = f" (it has: {', '.join(known)})" if known else ""
            raise _type_error(f"{type_name(obj)} has no method '{name}'{listing}") from None
    if obj is None:
        raise _type_error(f"cannot call '{name}' on null")
    raise _unknown_member(obj, "method", name, [])


# What a value with no properties or methods of its own offers instead.
_NOTHING = {
    "regex": " (it has no properties or methods: test a string with matches(s, regex))",
    "object": ' (objects have no methods: read a key with o.key or o["key"], null when it '
    "is missing; len(o) counts the keys)",
}


def _unknown_member(obj: Value, kind: str, name: str, known: list[str]) -> BuiltinError:
    """``array has no property 'lenght': did you mean 'length'? (it has: length, ...)``:
    what the type has, and a guess when a name of it is close."""
    kind_of = type_name(obj)
    if kind == "method" and name == "length" and isinstance(obj, str | list):
        return _type_error("'length' is a property, not a method: write .length without ()")
    if not known:
        listing = _NOTHING.get(kind_of, " (it has no properties or methods)")
        return _type_error(f"{kind_of} has no {kind} '{name}'{listing}")
    close = closest(name, known)
    hint = f": did you mean '{close}'?" if close is not None else ""
    return _type_error(f"{kind_of} has no {kind} '{name}'{hint} (it has: {', '.join(known)})")


def _args(name: str, args: list[Value], low: int, high: int) -> None:
    if not low <= len(args) <= high:
        raise _type_error(f".{name}() takes {arity_text(low, high)} but got {len(args)}")


def _string_arg(name: str, value: Value) -> str:
    if not isinstance(value, str):
        raise _type_error(f".{name}() needs a string, got {type_name(value)}")
    return value


def _int_arg(name: str, value: Value) -> int:
    if not isinstance(value, float | int) or isinstance(value, bool):
        raise _type_error(f".{name}() needs a number, got {type_name(value)}")
    if math.isnan(value):
        return 0
    if math.isinf(value):
        return 2**53 if value > 0 else -(2**53)
    return int(value)


def _from_index(length: int, start: int) -> int:
    """A search's start position, JavaScript-style: negative counts from the end."""
    return max(length + start, 0) if start < 0 else min(start, length)


def _clamp_slice(length: int, start: int, end: int | None) -> tuple[int, int]:
    return _from_index(length, start), (length if end is None else _from_index(length, end))


# --- strings ----------------------------------------------------------------------


def _s_includes(s: str, args: list[Value]) -> Value:
    _args("includes", args, 1, 2)
    start = _int_arg("includes", args[1]) if len(args) > 1 else 0
    return _string_arg("includes", args[0]) in s[max(start, 0) :]


def _s_starts(s: str, args: list[Value]) -> Value:
    _args("startsWith", args, 1, 2)
    start = _int_arg("startsWith", args[1]) if len(args) > 1 else 0
    # Clamped to the length as in JavaScript: "".startsWith("", 99) is true, while
    # Python's startswith() with a start past the end is False.
    return s.startswith(_string_arg("startsWith", args[0]), min(max(start, 0), len(s)))


def _s_ends(s: str, args: list[Value]) -> Value:
    _args("endsWith", args, 1, 2)
    end = _int_arg("endsWith", args[1]) if len(args) > 1 else len(s)
    return s[: max(end, 0)].endswith(_string_arg("endsWith", args[0]))


_JS_WHITESPACE = (
    " \t\n\v\f\r\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def _s_trim(s: str, args: list[Value]) -> Value:
    _args("trim", args, 0, 0)
    return s.strip(_JS_WHITESPACE)


def _s_lower(s: str, args: list[Value]) -> Value:
    _args("toLowerCase", args, 0, 0)
    return s.lower()


def _s_upper(s: str, args: list[Value]) -> Value:
    _args("toUpperCase", args, 0, 0)
    return s.upper()


def _s_split(s: str, args: list[Value]) -> Value:
    _args("split", args, 0, 2)
    # JavaScript reads the limit as ToUint32: -1 means "no limit", not "nothing".
    limit = _int_arg("split", args[1]) % 2**32 if len(args) > 1 else None
    if not args:
        parts: list[str] = [s]
    elif isinstance(args[0], RegexValue):
        parts = _regex_split(s, args[0].pattern)
    else:
        sep = _string_arg("split", args[0])
        parts = list(s) if sep == "" else s.split(sep)
    result: list[Value] = list(parts)
    return result if limit is None else result[: max(limit, 0)]


def _regex_split(s: str, pattern: re.Pattern[str]) -> list[str]:
    """ECMA-262 ``RegExp.prototype[@@split]``: a sticky match tried at each position.

    Not ``finditer``: Python also reports an empty match right after a non-empty one
    (``"abc".split(/b*/)`` would gain an extra ``""``), which JavaScript never does.
    """
    if s == "":
        return [] if pattern.match(s) else [s]
    out: list[str] = []
    last = 0
    at = 0
    while at < len(s):
        m = pattern.match(s, at)
        if m is None or m.end() == last:
            at += 1
            continue
        out.append(s[last:at])
        out.extend(g if g is not None else "" for g in m.groups())
        last = at = m.end()
    out.append(s[last:])
    return out


def _s_slice(s: str, args: list[Value]) -> Value:
    _args("slice", args, 0, 2)
    start = _int_arg("slice", args[0]) if args else 0
    end = _int_arg("slice", args[1]) if len(args) > 1 else None
    a, b = _clamp_slice(len(s), start, end)
    return s[a:b]


def _s_index_of(s: str, args: list[Value]) -> Value:
    _args("indexOf", args, 1, 2)
    start = _int_arg("indexOf", args[1]) if len(args) > 1 else 0
    # Clamped to the length as in JavaScript: "abc".indexOf("", 99) is 3, not -1.
    return float(s.find(_string_arg("indexOf", args[0]), min(max(start, 0), len(s))))


_REPLACEMENT = re.compile(r"\$(\$|&|`|'|\d{1,2}|<[^>]*>)")


def _expand(replacement: str, m: re.Match[str]) -> str:
    """JavaScript's replacement patterns: ``$$ $& $` $' $1 $<name>``."""

    def one(token: re.Match[str]) -> str:
        code = token.group(1)
        if code == "$":
            return "$"
        if code == "&":
            return m.group(0)
        if code == "`":
            return m.string[: m.start()]
        if code == "'":
            return m.string[m.end() :]
        if code.startswith("<"):
            name = code[1:-1]
            try:
                return m.group(name) or ""
            except IndexError:
                return token.group(0)
        number = int(code)
        if 1 <= number <= (m.re.groups or 0):
            return m.group(number) or ""
        if len(code) == 2 and 1 <= int(code[0]) <= (m.re.groups or 0):
            return (m.group(int(code[0])) or "") + code[1]
        return token.group(0)

    return _REPLACEMENT.sub(one, replacement)


def _s_replace(s: str, args: list[Value]) -> Value:
    _args("replace", args, 2, 2)
    pattern, replacement = args
    replacement_text = _string_arg("replace", replacement)
    if isinstance(pattern, RegexValue):
        return _regex_replace(s, pattern, replacement_text)
    needle = _string_arg("replace", pattern)
    at = s.find(needle)
    if at < 0:
        return s
    m = re.compile(re.escape(needle)).search(s, at)
    assert m is not None
    return s[:at] + _expand(replacement_text, m) + s[at + len(needle) :]


def _regex_replace(s: str, regex: RegexValue, replacement: str) -> str:
    """JavaScript's replace with a regex: after an empty match the search moves on.

    Not ``re.sub``: Python also takes a non-empty match at the position of an empty
    one, so ``"aaa".replace(/a*?/g, "-")`` would give ``"-------"``, not ``"-a-a-a-"``.
    """
    out: list[str] = []
    last = 0
    at = 0
    while at <= len(s):
        m = regex.pattern.search(s, at)
        if m is None:
            break
        out.append(s[last : m.start()])
        out.append(_expand(replacement, m))
        last = m.end()
        if "g" not in regex.flags:
            break
        at = m.end() if m.end() > m.start() else m.end() + 1
    out.append(s[last:])
    return "".join(out)


_STRING_IMPL: dict[str, Callable[[str, list[Value]], Value]] = {
    "includes": _s_includes,
    "startsWith": _s_starts,
    "endsWith": _s_ends,
    "trim": _s_trim,
    "toLowerCase": _s_lower,
    "toUpperCase": _s_upper,
    "split": _s_split,
    "slice": _s_slice,
    "replace": _s_replace,
    "indexOf": _s_index_of,
}

# --- arrays -----------------------------------------------------------------------


def _same_value_zero(a: Value, b: Value) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return strict_equal(a, b)


def _a_includes(a: list[Value], args: list[Value]) -> Value:
    _args("includes", args, 1, 2)
    start = _from_index(len(a), _int_arg("includes", args[1])) if len(args) > 1 else 0
    return any(_same_value_zero(item, args[0]) for item in a[start:])


def _a_push(a: list[Value], args: list[Value]) -> Value:
    if isinstance(a, FrozenList):
        raise _type_error(
            "cannot push onto this array: it is a helper const, frozen "
            "(copy it with .slice() and push onto the copy)"
        )
    a.extend(args)
    return float(len(a))


def _a_join(a: list[Value], args: list[Value]) -> Value:
    _args("join", args, 0, 1)
    sep = _string_arg("join", args[0]) if args else ","
    return sep.join("" if item is None else to_display(item) for item in a)


def _a_slice(a: list[Value], args: list[Value]) -> Value:
    _args("slice", args, 0, 2)
    start = _int_arg("slice", args[0]) if args else 0
    end = _int_arg("slice", args[1]) if len(args) > 1 else None
    lo, hi = _clamp_slice(len(a), start, end)
    return a[lo:hi]


def _a_index_of(a: list[Value], args: list[Value]) -> Value:
    _args("indexOf", args, 1, 2)
    start = _from_index(len(a), _int_arg("indexOf", args[1])) if len(args) > 1 else 0
    for i in range(start, len(a)):
        if strict_equal(a[i], args[0]):
            return float(i)
    return -1.0


_ARRAY_IMPL: dict[str, Callable[[list[Value], list[Value]], Value]] = {
    "includes": _a_includes,
    "push": _a_push,
    "join": _a_join,
    "slice": _a_slice,
    "indexOf": _a_index_of,
}
