"""Which characters can start a match of a regular expression.

The fast parse loop (:mod:`dsl.lalr_loop`) matches each token with an alternation of
the terminals its parser state accepts, tried in Lark's order. A terminal that cannot
start with the character at hand can only fail there, so matching with just the
terminals that can (in the same order) finds the same token, sooner.

The answer is read off the pattern's parse (``re._parser``, the ``re`` module's own)
and errs on the safe side: any construct not understood here counts as able to start
with anything. Only ASCII characters are answered for; the caller matches anything
else with the whole alternation.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

__all__ = ["ASCII", "first_chars"]

ASCII = frozenset(chr(code) for code in range(128))

_parser: Any = importlib.import_module("re._parser")  # untyped, internal to re
_CATEGORIES = {
    "CATEGORY_DIGIT": r"\d",
    "CATEGORY_NOT_DIGIT": r"\D",
    "CATEGORY_SPACE": r"\s",
    "CATEGORY_NOT_SPACE": r"\S",
    "CATEGORY_WORD": r"\w",
    "CATEGORY_NOT_WORD": r"\W",
}
_ZERO_WIDTH = frozenset(["AT", "ASSERT", "ASSERT_NOT"])
_REPEATS = frozenset(["MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"])


def first_chars(pattern: str, flags: int = 0) -> frozenset[str]:
    """The ASCII characters a match of ``pattern`` can start with (a superset)."""
    if flags & (re.IGNORECASE | re.VERBOSE):
        return ASCII
    try:
        chars, _ = _sequence(_parser.parse(pattern, flags))
    except _Unknown:
        return ASCII
    return frozenset(chars)


class _Unknown(Exception):
    """A construct this module does not read: any character may start it."""


def _sequence(items: Any) -> tuple[set[str], bool]:
    """First characters of items in a row, and whether the row can match nothing."""
    chars: set[str] = set()
    for op, arg in items:
        first, empty = _item(str(op), arg)
        chars |= first
        if not empty:
            return chars, False
    return chars, True


def _item(op: str, arg: Any) -> tuple[set[str], bool]:
    if op == "LITERAL":
        return {chr(arg)} & ASCII, False
    if op == "IN":
        return _class(arg), False
    if op == "SUBPATTERN":
        _group, add_flags, _del_flags, items = arg
        if add_flags & re.IGNORECASE:
            raise _Unknown
        return _sequence(items)
    if op == "BRANCH":
        chars: set[str] = set()
        empty = False
        for alternative in arg[1]:
            first, alternative_empty = _sequence(alternative)
            chars |= first
            empty |= alternative_empty
        return chars, empty
    if op in _REPEATS:
        low, _high, items = arg
        first, empty = _sequence(items)
        return first, empty or low == 0
    if op in _ZERO_WIDTH:  # matches no character; what follows it starts the match
        return set(), True
    raise _Unknown  # NOT_LITERAL, ANY, group references, ...: anything


def _class(items: Any) -> set[str]:
    """The ASCII members of a character class ``[...]``."""
    members: set[str] = set()
    negated = False
    for op, arg in items:
        kind = str(op)
        if kind == "NEGATE":
            negated = True
        elif kind == "LITERAL":
            members |= {chr(arg)} & ASCII
        elif kind == "RANGE":
            low, high = arg
            members |= {chr(code) for code in range(low, min(high, 127) + 1)}
        elif kind == "CATEGORY" and str(arg) in _CATEGORIES:
            category = re.compile(_CATEGORIES[str(arg)])
            members |= {ch for ch in ASCII if category.match(ch)}
        else:
            raise _Unknown
    return set(ASCII - members) if negated else members
