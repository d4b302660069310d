"""Translate JavaScript regular expression literals into Python ``re`` patterns.

Scenario files contain JavaScript regex literals such as ``/^Total: \\d+$/m``.  They are
evaluated by Python, but they must behave exactly as they would in a browser, and Python's
``re`` syntax and semantics differ from JavaScript's in many small ways.  Handing the JS
source straight to ``re.compile`` would often "work" while matching something different, so
this module translates the pattern at parse time, character by character, and rejects with a
:class:`RegexTranslationError` whatever it cannot translate faithfully.

The dialect accepted is ES2018+ *without* the ``u`` flag (including the Annex B web-compat
rules), with flags drawn from ``gim``.  The differences handled explicitly:

* ASCII classes.  With ``str`` patterns Python's ``\\d \\w \\b`` are Unicode-aware (``\\d``
  matches ``'٣'``, ``\\w`` matches ``'é'``); JavaScript's are ASCII only.  Every class escape is
  expanded into an explicit set, and ``\\b``/``\\B`` into lookarounds over ``[0-9A-Z_a-z]``.
* Whitespace.  JavaScript's ``\\s`` is its own list (it includes U+FEFF and excludes U+0085
  and U+001C-U+001F, unlike Python's); it is emitted explicitly.
* Line terminators.  In JavaScript ``.`` excludes ``\\n \\r \\u2028 \\u2029`` (Python's excludes
  only ``\\n``); ``$`` without ``m`` matches only at the very end (Python's ``$`` also matches
  before a final ``\\n``, so ``\\Z`` is emitted); with ``m``, ``^``/``$`` treat all four line
  terminators as line breaks, so they become lookarounds and ``re.MULTILINE`` is never used.
* Case-insensitivity.  JavaScript (without ``u``) folds characters with its Canonicalize
  operation (upper-casing, never mapping a non-ASCII character to an ASCII one), which differs
  from Python's ``re.IGNORECASE`` for characters like ``ſ``, the Kelvin sign ``K``, ``ı``, ``ς``
  and ``ẞ``.  With ``i``, every literal and class is therefore expanded into the exact set of
  characters JavaScript would accept (``a`` becomes ``[Aa]``), and ``re.IGNORECASE`` is not
  used.  Case-insensitive backreferences use Python's scoped ``(?ai:...)`` (ASCII folding) or
  ``(?i:...)``, whichever is exact for what the group can capture.
* Backreferences.  In JavaScript a reference to a group that did not participate matches the
  empty string (Python's fails), and a reference to a group that is still open or comes later
  always matches the empty string.  References are emitted as ``(?(n)\\n)``, or as an empty
  group when JavaScript guarantees the group is unset.
* Empty repetitions.  JavaScript rejects an optional repetition that matches the empty string
  and backtracks into it for a non-empty match; Python accepts it and stops repeating.  The
  overall match is the same unless the repeated part prefers an empty match over a longer one
  (``(?:a*?)?``, ``(?:|a)*``); such patterns are rejected.
* Syntax.  Literal ``{``, ``}`` and ``]`` (legal in JS, e.g. ``a{,5}``) are escaped; classes
  are emitted with every special character escaped, so Python never raises ``FutureWarning``
  about nested sets; ``(?<name>`` becomes ``(?P<name>``; ``\\k<name>`` becomes a named
  reference (or the literal ``k`` when the pattern has no named groups, as in JS); identity
  escapes like ``\\a``, ``\\A``, ``\\Z``, ``\\z`` mean the literal letter; ``[]`` matches
  nothing and ``[^]`` matches any character; ``\\cX``, ``\\xHH``, ``\\uHHHH`` and ``[\\b]``
  (backspace) are converted; a quantified lookahead (legal in Annex B) is normalised.

The translated pattern is self-contained: compile it with no flags (``compile_js_regex`` does).
Strings are matched as sequences of code points, not UTF-16 code units: a character outside
the Basic Multilingual Plane (an emoji, say) counts as one character for ``.`` and negated
classes.  Escaped surrogate pairs such as ``\\ud83d\\ude00`` are combined into that character.

Rejected with a clear message (all legal JavaScript unless noted):

* flags other than ``g``, ``i``, ``m`` (``s``, ``u``, ``y``, ``d``, ``v``) and duplicated flags;
* ``\\u{...}`` and ``\\p{...}``/``\\P{...}`` (they need the ``u`` flag; without it JS reads
  them as literal letters, which is never what was meant);
* backreferences to group numbers that do not exist (JS reads them as legacy octal escapes or
  literal digits), legacy octal escapes such as ``\\01`` or ``[\\1]``, and numbered
  references beyond group 99;
* backreferences inside a lookbehind (JavaScript matches lookbehinds right to left);
* backreferences to a group inside a repeated part of the pattern when some repetition may
  not set the group or may be empty (JS clears or discards the capture, Python keeps the
  previous one), e.g. ``(?:(a)|b)+\\1`` or ``(a*)+\\1``;
* case-insensitive backreferences to a group that can capture both non-ASCII letters and
  characters Python folds differently from JavaScript (e.g. ``(.)\\1`` with ``i``);
* repeating something that prefers an empty match (see "Empty repetitions" above);
* lookbehinds whose width is not fixed (Python limitation);
* lone surrogates, characters outside the BMP inside a class, and a quantifier directly after
  such a character (in JS it would repeat only the second half);
* group names that are not Python identifiers (e.g. containing ``$``) or that use escapes;
* Python-only or other non-JS syntax: ``(?P<x>...)``, ``(?P=x)``, inline flags / modifiers
  ``(?i)`` ``(?i:...)``, comments ``(?#...)``, atomic ``(?>...)``, conditionals ``(?(1)...)``,
  possessive quantifiers (``a*+`` is "nothing to repeat" in JS too);
* invalid JavaScript: unbalanced parentheses, nothing to repeat (``*a``, ``a**``, ``^*``,
  ``{2}``), ``{2,1}``, out-of-order class ranges, unterminated classes, a trailing ``\\``,
  invalid group names, duplicate group names, unknown ``\\k<name>``;
* groups nested more than 100 deep ("regex nested too deeply") and repetition counts above
  2147483646.

Known residual difference: the overall match agrees with JavaScript, but the value of a
capturing group inside a repeated part can differ when JavaScript clears or discards it on a
later repetition and no backreference uses it: ``/(?:(a)|b)+/`` on ``"ab"`` captures
``undefined`` in JavaScript and ``"a"`` here; ``/(a*)+/`` on ``"aa"`` captures ``"aa"`` in
JavaScript and ``""`` here.
"""

from __future__ import annotations

import bisect
import functools
import re
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NoReturn

__all__ = ["RegexTranslationError", "compile_js_regex", "translate"]

_Ranges = list[tuple[int, int]]

_ALLOWED_FLAGS = "gim"
_MAX_DEPTH = 100
_MAX_COUNT = 2_147_483_646
_MAX_BACKREF_NUMBER = 99
_MAX_CODE_POINT = 0x10FFFF

_DIGIT: _Ranges = [(0x30, 0x39)]
_WORD: _Ranges = [(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)]
_SPACE: _Ranges = [
    (0x09, 0x0D),  # \t \n \v \f \r
    (0x20, 0x20),
    (0xA0, 0xA0),
    (0x1680, 0x1680),
    (0x2000, 0x200A),
    (0x2028, 0x2029),
    (0x202F, 0x202F),
    (0x205F, 0x205F),
    (0x3000, 0x3000),
    (0xFEFF, 0xFEFF),
]
_LINE_TERMINATORS: _Ranges = [(0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029)]

_W = "[0-9A-Z_a-z]"
_WORD_BOUNDARY = f"(?:(?<={_W})(?!{_W})|(?<!{_W})(?={_W}))"
_NOT_WORD_BOUNDARY = f"(?:(?<={_W})(?={_W})|(?<!{_W})(?!{_W}))"
_NOT_TERMINATOR = r"[^\n\r\u2028\u2029]"
_LINE_START = f"(?<!{_NOT_TERMINATOR})"
_LINE_END = f"(?!{_NOT_TERMINATOR})"

_CONTROL_ESCAPES = {"t": 0x09, "n": 0x0A, "v": 0x0B, "f": 0x0C, "r": 0x0D}
_BRACE_QUANTIFIER = re.compile(r"\{([0-9]+)(?:(,)([0-9]*))?\}")
_HEX2 = re.compile(r"[0-9A-Fa-f]{2}")
_HEX4 = re.compile(r"[0-9A-Fa-f]{4}")
_UNICODE_ESCAPE = re.compile(r"\\u([0-9A-Fa-f]{4})")
_DIGITS = re.compile(r"[0-9]+")


class RegexTranslationError(Exception):
    """A JavaScript regex that is invalid or cannot be translated faithfully to Python.

    ``message`` is a plain-language description; ``offset`` is the 0-based offset into the
    pattern source where the problem is (-1 for a problem with the flags, which the caller
    places itself).
    """

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset

    def __str__(self) -> str:
        return self.message


# ---------------------------------------------------------------------------------------------
# Code point sets, as sorted lists of disjoint inclusive ranges.


def _normalize(ranges: Iterable[tuple[int, int]]) -> _Ranges:
    out: _Ranges = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            if hi > out[-1][1]:
                out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return out


def _negate(ranges: _Ranges) -> _Ranges:
    out: _Ranges = []
    nxt = 0
    for lo, hi in ranges:
        if lo > nxt:
            out.append((nxt, lo - 1))
        nxt = hi + 1
    if nxt <= _MAX_CODE_POINT:
        out.append((nxt, _MAX_CODE_POINT))
    return out


def _contains(ranges: _Ranges, cp: int) -> bool:
    index = bisect.bisect_right(ranges, (cp, _MAX_CODE_POINT + 1)) - 1
    return index >= 0 and ranges[index][0] <= cp <= ranges[index][1]


def _js_canonicalize(cp: int) -> int:
    """JavaScript's Canonicalize(ch) for case-insensitive matching without the ``u`` flag."""
    if cp > 0xFFFF:  # a UTF-16 surrogate pair: surrogates have no case
        return cp
    upper = chr(cp).upper()
    if len(upper) != 1:
        return cp
    mapped = ord(upper)
    if cp >= 0x80 and mapped < 0x80:
        return cp
    return mapped


def _python_backref_fold(cp: int) -> int:
    """The simple lowercase mapping Python's ``re`` uses to compare ``(?i:\\1)``."""
    if cp == 0x130:  # the only character whose full lowercase mapping is not one character
        return 0x69
    lower = chr(cp).lower()
    return ord(lower) if len(lower) == 1 else cp


def _equivalence_classes(key: dict[int, int]) -> dict[int, tuple[int, ...]]:
    groups: dict[int, list[int]] = {}
    for cp, k in key.items():
        groups.setdefault(k, []).append(cp)
    members: dict[int, tuple[int, ...]] = {}
    for group in groups.values():
        if len(group) > 1:
            frozen = tuple(group)
            for cp in frozen:
                members[cp] = frozen
    return members


@functools.cache
def _js_case_classes() -> tuple[tuple[int, ...], dict[int, tuple[int, ...]]]:
    """BMP characters with case variants under JS Canonicalize, and their classes."""
    members = _equivalence_classes({cp: _js_canonicalize(cp) for cp in range(0x10000)})
    return tuple(sorted(members)), members


@functools.cache
def _backref_fold_mismatch() -> _Ranges:
    """Characters that JS and Python's ``re`` compare differently in ``(?i:\\1)``."""
    # Planes 2 and up contain no cased characters.
    js = _equivalence_classes({cp: _js_canonicalize(cp) for cp in range(0x20000)})
    py = _equivalence_classes({cp: _python_backref_fold(cp) for cp in range(0x20000)})
    mismatched = [(cp, cp) for cp in set(js) | set(py) if js.get(cp, (cp,)) != py.get(cp, (cp,))]
    return _normalize(mismatched)


@functools.cache
def _non_ascii_cased() -> _Ranges:
    """Non-ASCII characters that have case variants for JS Canonicalize."""
    return _normalize((cp, cp) for cp in _js_case_classes()[0] if cp >= 0x80)


def _case_closure(ranges: _Ranges) -> _Ranges:
    """All characters that match some member of ``ranges`` case-insensitively in JS."""
    return list(_case_closure_cached(tuple(ranges)))


@functools.lru_cache(maxsize=512)
def _case_closure_cached(ranges: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
    cased, members = _js_case_classes()
    extra: _Ranges = []
    for lo, hi in ranges:
        if lo > 0xFFFF:
            break
        for cp in cased[bisect.bisect_left(cased, lo) : bisect.bisect_right(cased, hi)]:
            extra.extend((member, member) for member in members[cp])
    return tuple(_normalize([*ranges, *extra])) if extra else ranges


def _first_common(a: _Ranges, b: _Ranges) -> int | None:
    """The smallest code point in both sets, if any."""
    for lo, hi in a:
        index = bisect.bisect_right(b, (lo, _MAX_CODE_POINT + 1)) - 1
        if index >= 0 and b[index][1] >= lo:
            return lo
        if index + 1 < len(b) and b[index + 1][0] <= hi:
            return b[index + 1][0]
    return None


# ---------------------------------------------------------------------------------------------
# Emitting Python syntax.


def _escape_code_point(cp: int) -> str:
    if cp < 0x100:
        return f"\\x{cp:02x}"
    if cp < 0x10000:
        return f"\\u{cp:04x}"
    return f"\\U{cp:08x}"


def _class_char(cp: int) -> str:
    char = chr(cp)
    if char.isascii() and char.isalnum():
        return char
    return _escape_code_point(cp)


def _literal(cp: int) -> str:
    char = chr(cp)
    if char.isascii():
        if char.isalnum() or char == "_":
            return char
        if char.isprintable():
            return "\\" + char
        return _escape_code_point(cp)
    if char.isprintable() and not 0xD800 <= cp <= 0xDFFF:
        return char
    return _escape_code_point(cp)


def _class_body(ranges: _Ranges) -> str:
    parts: list[str] = []
    for lo, hi in ranges:
        if lo == hi:
            parts.append(_class_char(lo))
        elif hi == lo + 1:
            parts.append(_class_char(lo) + _class_char(hi))
        else:
            parts.append(f"{_class_char(lo)}-{_class_char(hi)}")
    return "".join(parts)


def _emit_set(ranges: _Ranges) -> tuple[str, bool]:
    """Python syntax matching exactly one character of ``ranges``, and whether it is atomic."""
    if not ranges:
        return "(?!)", False
    if len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
        return _literal(ranges[0][0]), True
    complement = _negate(ranges)
    if not complement:
        return "[\\x00-\\U0010ffff]", True
    if len(complement) < len(ranges):
        return f"[^{_class_body(complement)}]", True
    return f"[{_class_body(ranges)}]", True


def _is_surrogate(cp: int) -> bool:
    return 0xD800 <= cp <= 0xDFFF


def _describe(cp: int) -> str:
    return f"\\u{cp:04x}" if cp <= 0xFFFF else chr(cp)


# ---------------------------------------------------------------------------------------------
# The scanner.


@dataclass
class _Node:
    """A group-like construct, kept for the backreference analysis."""

    kind: str
    parent: int
    has_alternation: bool = False
    min_width: int = 0
    max_width: int | None = 0
    min_count: int = 1
    max_count: int | None = 1


@dataclass
class _Item:
    """One translated term of an alternative."""

    text: str
    min_width: int
    max_width: int | None
    kind: str  # char, set, group, lookahead, lookbehind, assertion, backref
    atomic: bool = True
    node: int = -1
    astral: bool = False
    quantified: bool = False
    empty_last: bool = True  # no non-empty match is preferred after an empty one


def _repeated(item: _Item, qmin: int, qmax: int | None, lazy: bool) -> _Item:
    """``item`` under a quantifier, with the widths and empty-match order that follow."""
    optional_repetitions = qmax is None or qmax > qmin
    if item.max_width == 0 or (item.min_width > 0 and qmin > 0):
        empty_last = True
    elif lazy and optional_repetitions:
        empty_last = False
    else:
        empty_last = qmin == 0 or item.empty_last
    if qmax == 0:
        max_width: int | None = 0
    elif qmax is None or item.max_width is None:
        max_width = None if item.max_width != 0 else 0
    else:
        max_width = item.max_width * qmax
    base = item.text if item.atomic else f"(?:{item.text})"
    return _Item(
        base + _quantifier_text(qmin, qmax) + ("?" if lazy else ""),
        item.min_width * qmin,
        max_width,
        item.kind,
        atomic=False,
        node=item.node,
        quantified=True,
        empty_last=empty_last,
    )


def _quantifier_text(qmin: int, qmax: int | None) -> str:
    """The shortest Python spelling of ``{qmin,qmax}``."""
    if (qmin, qmax) == (0, None):
        return "*"
    if (qmin, qmax) == (1, None):
        return "+"
    if (qmin, qmax) == (0, 1):
        return "?"
    if qmax is None:
        return f"{{{qmin},}}"
    if qmin == qmax:
        return f"{{{qmin}}}"
    return f"{{{qmin},{qmax}}}"


@dataclass
class _Frame:
    """A group being scanned (or the whole pattern, ``kind == "root"``)."""

    kind: str
    offset: int
    opener: str
    node: int
    group: int = 0
    in_lookbehind: bool = False
    alternatives: list[list[_Item]] = field(default_factory=list)
    items: list[_Item] = field(default_factory=list)
    chars: _Ranges = field(default_factory=list)


@dataclass
class _Prescan:
    group_count: int
    names: dict[str, int]
    has_named_groups: bool


def _prescan(source: str) -> _Prescan:
    """Count capturing groups and find group names, as JS does before parsing."""
    count = 0
    names: dict[str, int] = {}
    has_named = False
    i, n = 0, len(source)
    in_class = False
    while i < n:
        ch = source[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
        elif ch == "(":
            if source.startswith("(?<", i) and source[i + 3 : i + 4] not in ("=", "!"):
                count += 1
                has_named = True
                end = source.find(">", i + 3)
                if end >= 0:
                    names.setdefault(source[i + 3 : end], count)
            elif source[i + 1 : i + 2] != "?":
                count += 1
        i += 1
    return _Prescan(count, names, has_named)


class _Translator:
    def __init__(self, source: str, flags: str) -> None:
        self.source = source
        self.ignore_case = "i" in flags
        self.multiline = "m" in flags
        self.pos = 0
        prescan = _prescan(source)
        self.group_total = prescan.group_count
        self.group_names = prescan.names
        self.named_mode = prescan.has_named_groups
        self.opened_groups = 0
        self.closed_groups: set[int] = set()
        self.group_node: dict[int, int] = {}
        self.group_chars: dict[int, _Ranges] = {}
        self.number_names: dict[int, str] = {}
        self.seen_names: set[str] = set()
        self.nodes: list[_Node] = [_Node("root", -1)]
        self.stack: list[_Frame] = [_Frame("root", 0, "", 0)]
        self.backward_refs: list[tuple[int, int]] = []

    # -- helpers ------------------------------------------------------------------------------

    @staticmethod
    def fail(message: str, offset: int) -> NoReturn:
        raise RegexTranslationError(message, offset)

    @property
    def frame(self) -> _Frame:
        return self.stack[-1]

    def peek(self, offset: int = 0) -> str:
        index = self.pos + offset
        return self.source[index] if index < len(self.source) else ""

    def push(self, item: _Item, chars: _Ranges | None = None) -> None:
        self.frame.items.append(item)
        if chars and self.ignore_case:
            self.frame.chars.extend(chars)

    def push_set(self, ranges: _Ranges) -> None:
        if self.ignore_case:
            ranges = _case_closure(ranges)
        text, atomic = _emit_set(ranges)
        self.push(_Item(text, 1, 1, "set", atomic=atomic), ranges)

    def push_char(self, cp: int) -> None:
        if cp > 0xFFFF:
            self.push(_Item(_literal(cp), 1, 1, "char", astral=True), [(cp, cp)])
        elif self.ignore_case and cp in _js_case_classes()[1]:
            self.push_set([(cp, cp)])
        else:
            self.push(_Item(_literal(cp), 1, 1, "char"), [(cp, cp)])

    def read_source_char(self, in_class: bool) -> int:
        """Read one literal character of the source (combining a surrogate pair)."""
        start = self.pos
        cp = ord(self.source[start])
        self.pos += 1
        if 0xD800 <= cp <= 0xDBFF and 0xDC00 <= ord(self.peek() or "\0") <= 0xDFFF:
            cp = 0x10000 + ((cp - 0xD800) << 10) + (ord(self.peek()) - 0xDC00)
            self.pos += 1
        self.check_code_point(cp, start, in_class)
        return cp

    def check_code_point(self, cp: int, offset: int, in_class: bool) -> None:
        if _is_surrogate(cp):
            self.fail(
                f"lone surrogate {_describe(cp)}: this runner matches whole characters, "
                "not UTF-16 code units; write the character itself or a complete "
                "\\uXXXX\\uXXXX surrogate pair",
                offset,
            )
        if in_class and cp > 0xFFFF:
            self.fail(
                f"the character {chr(cp)!r} is outside the Basic Multilingual Plane; inside a "
                "character class JavaScript without the u flag would match each half of it "
                "separately, which is not supported (use an alternation such as (?:a|b))",
                offset,
            )

    def read_unicode_escape(self, in_class: bool) -> int:
        """Read ``\\uHHHH`` at ``pos`` (already validated), combining a surrogate pair."""
        start = self.pos
        cp = int(self.source[start + 2 : start + 6], 16)
        self.pos += 6
        if 0xD800 <= cp <= 0xDBFF:
            low = _UNICODE_ESCAPE.match(self.source, self.pos)
            if low and 0xDC00 <= int(low.group(1), 16) <= 0xDFFF:
                cp = 0x10000 + ((cp - 0xD800) << 10) + (int(low.group(1), 16) - 0xDC00)
                self.pos = low.end()
        self.check_code_point(cp, start, in_class)
        return cp

    # -- main loop ----------------------------------------------------------------------------

    def run(self) -> str:
        source = self.source
        while self.pos < len(source):
            ch = source[self.pos]
            if ch == "|":
                self.frame.alternatives.append(self.frame.items)
                self.frame.items = []
                self.pos += 1
            elif ch == "(":
                self.open_group()
            elif ch == ")":
                self.close_group()
            elif ch in "*+?":
                qmin, qmax = {"*": (0, None), "+": (1, None), "?": (0, 1)}[ch]
                self.quantify(qmin, qmax, self.pos, self.pos + 1)
            elif ch == "{":
                self.brace()
            elif ch == "[":
                self.character_class()
            elif ch == ".":
                self.pos += 1
                self.push_set(_negate(_LINE_TERMINATORS))
            elif ch == "^":
                self.pos += 1
                self.push(_Item(_LINE_START if self.multiline else "\\A", 0, 0, "assertion"))
            elif ch == "$":
                self.pos += 1
                self.push(_Item(_LINE_END if self.multiline else "\\Z", 0, 0, "assertion"))
            elif ch == "\\":
                self.atom_escape()
            else:
                self.push_char(self.read_source_char(in_class=False))
        if len(self.stack) > 1:
            self.fail(
                f"missing ')': the group opened at offset {self.frame.offset} is never closed",
                self.frame.offset,
            )
        if self.opened_groups != self.group_total:  # pragma: no cover - internal consistency
            self.fail("internal error: capturing groups were miscounted", 0)
        self.check_backreferences()
        return self.frame_body(self.frame)[0]

    # -- groups -------------------------------------------------------------------------------

    def open_group(self) -> None:
        start = self.pos
        source = self.source
        if len(self.stack) > _MAX_DEPTH:
            self.fail(f"regex nested too deeply (more than {_MAX_DEPTH} levels of groups)", start)
        group = 0
        if not source.startswith("(?", start):
            kind, opener, length = "group", "(", 1
        else:
            marker = source[start + 2 : start + 3]
            after = source[start + 3 : start + 4]
            if marker == ":":
                kind, opener, length = "noncapture", "(?:", 3
            elif marker == "=":
                kind, opener, length = "lookahead", "(?=", 3
            elif marker == "!":
                kind, opener, length = "negative-lookahead", "(?!", 3
            elif marker == "<" and after == "=":
                kind, opener, length = "lookbehind", "(?<=", 4
            elif marker == "<" and after == "!":
                kind, opener, length = "negative-lookbehind", "(?<!", 4
            elif marker == "<":
                kind, length = "group", 0
                opener = self.group_name(start)
            elif marker == "P":
                self.fail(
                    "'(?P' is Python syntax, not JavaScript: write named groups as "
                    "(?<name>...) and refer to them with \\k<name>",
                    start,
                )
            elif marker == "#":
                self.fail("'(?#...)' comments are not JavaScript regex syntax", start)
            elif marker == ">":
                self.fail("atomic groups '(?>...)' are not JavaScript regex syntax", start)
            elif marker == "(":
                self.fail("conditional groups '(?(...)...)' are not JavaScript regex syntax", start)
            elif marker.isalpha() or marker == "-":
                self.fail(
                    f"inline flags '(?{marker}' are not supported; put the flags after the "
                    "closing '/', e.g. /abc/i",
                    start,
                )
            elif marker == "":
                self.fail("incomplete group '(?' at the end of the pattern", start)
            else:
                self.fail(f"invalid group '(?{marker}'", start)
        if kind == "group":
            self.opened_groups += 1
            group = self.opened_groups
        node = len(self.nodes)
        self.nodes.append(_Node(kind, self.frame.node))
        if group:
            self.group_node[group] = node
            if opener != "(":
                self.number_names[group] = opener[4:-1]
        in_lookbehind = self.frame.in_lookbehind or kind.endswith("lookbehind")
        self.stack.append(_Frame(kind, start, opener, node, group, in_lookbehind))
        self.pos += length

    def group_name(self, start: int) -> str:
        """Parse ``(?<name>`` at ``start``; return the Python opener and advance past it."""
        end = self.source.find(">", start + 3)
        if end < 0:
            self.fail("unterminated group name: missing '>'", start)
        name = self.source[start + 3 : end]
        if "\\" in name:
            self.fail("escapes in group names are not supported", start)
        if "$" in name:
            self.fail(f"group name {name!r}: '$' in group names is not supported", start)
        if not name.isidentifier():
            self.fail(f"invalid capture group name {name!r}", start)
        if name in self.seen_names:
            self.fail(f"duplicate capture group name {name!r}", start)
        self.seen_names.add(name)
        self.pos = end + 1
        return f"(?P<{name}>"

    def close_group(self) -> None:
        if len(self.stack) == 1:
            self.fail("unmatched ')'", self.pos)
        frame = self.stack.pop()
        self.pos += 1
        body, min_width, max_width, empty_last = self.frame_body(frame)
        self.nodes[frame.node].has_alternation = bool(frame.alternatives)
        self.nodes[frame.node].min_width = min_width
        self.nodes[frame.node].max_width = max_width
        text = f"{frame.opener}{body})"
        if frame.kind.endswith("lookbehind"):
            if max_width is None or min_width != max_width:
                self.fail(
                    "lookbehind must have a fixed width in this runner (Python's re cannot "
                    "match a lookbehind whose length varies)",
                    frame.offset,
                )
            if min_width > _MAX_COUNT:
                self.fail(
                    f"lookbehind is too long (more than {_MAX_COUNT} characters)", frame.offset
                )
            item = _Item(text, 0, 0, "lookbehind", node=frame.node)
        elif frame.kind.endswith("lookahead"):
            item = _Item(text, 0, 0, "lookahead", node=frame.node)
        else:
            item = _Item(text, min_width, max_width, "group", node=frame.node)
            item.empty_last = empty_last
        chars = _normalize(frame.chars) if self.ignore_case else []
        if frame.group:
            self.closed_groups.add(frame.group)
            self.group_chars[frame.group] = chars
        self.push(item, chars)

    @staticmethod
    def frame_body(frame: _Frame) -> tuple[str, int, int | None, bool]:
        """The Python text, minimum and maximum width and ``empty_last`` of a group's body.

        ``empty_last`` is a conservative syntactic check that no non-empty match of the body
        is preferred (tried later by backtracking) after an empty match; see ``quantify``.
        """
        texts: list[str] = []
        mins: list[int] = []
        maxes: list[int | None] = []
        empty_lasts: list[bool] = []
        for alternative in [*frame.alternatives, frame.items]:
            texts.append("".join(item.text for item in alternative))
            mins.append(sum(item.min_width for item in alternative))
            widths = [item.max_width for item in alternative]
            maxes.append(None if None in widths else sum(w for w in widths if w is not None))
            empty_lasts.append(mins[-1] > 0 or all(item.empty_last for item in alternative))
        max_width = None if None in maxes else max(w for w in maxes if w is not None)
        # In an alternation, an alternative that can match "" must be the last one that can
        # match anything else.
        empty_last = all(
            empty_lasts[i] and all(later == 0 for later in maxes[i + 1 :])
            for i in range(len(mins))
            if mins[i] == 0
        )
        return "|".join(texts), min(mins), max_width, empty_last

    # -- quantifiers --------------------------------------------------------------------------

    def brace(self) -> None:
        match = _BRACE_QUANTIFIER.match(self.source, self.pos)
        if match is None:  # not a quantifier: a literal '{' (Annex B)
            self.pos += 1
            self.push_char(ord("{"))
            return
        qmin = int(match.group(1))
        if match.group(2) is None:
            qmax: int | None = qmin
        else:
            qmax = int(match.group(3)) if match.group(3) else None
        for count in (qmin, qmax):
            if count is not None and count > _MAX_COUNT:
                self.fail(
                    f"repetition count {count} is too large (the limit is {_MAX_COUNT})",
                    self.pos,
                )
        if qmax is not None and qmin > qmax:
            self.fail(f"numbers out of order in {match.group(0)} quantifier", self.pos)
        self.quantify(qmin, qmax, self.pos, match.end())

    def quantify(self, qmin: int, qmax: int | None, start: int, end: int) -> None:
        token = self.source[start:end]
        items = self.frame.items
        if not items:
            self.fail(f"nothing to repeat before '{token}'", start)
        item = items[-1]
        self.check_repeatable(item, token, start)
        lazy = self.source[end : end + 1] == "?"
        self.pos = end + 1 if lazy else end
        if item.kind == "lookahead":
            # Annex B allows repeating a lookahead.  Every repetition matches the same empty
            # string, so JS's empty-check rejects all optional repetitions: with a minimum of
            # zero the lookahead is never tried, otherwise it is tried exactly once.
            if qmin == 0:
                self.nodes[item.node].min_count = 0
                text = f"(?:(?!){item.text})?"
            else:
                text = item.text
            items[-1] = _Item(text, 0, 0, "lookahead", atomic=False, quantified=True)
            return
        optional_repetitions = qmax is None or qmax > qmin
        can_be_empty = item.min_width == 0 and item.max_width != 0
        if optional_repetitions and can_be_empty and not item.empty_last:
            # JS rejects an optional repetition that matches "" and backtracks into it for a
            # non-empty match first; Python accepts it and stops repeating.  The results only
            # agree when the empty match is the last one the repeated part would try.
            self.fail(
                f"'{token}' repeats something that can match the empty string before trying "
                "a non-empty match (like (?:a*?)? or (?:|a)*); JavaScript skips such empty "
                "repetitions and Python does not, so this is not supported",
                start,
            )
        if item.node >= 0:
            self.nodes[item.node].min_count = qmin
            self.nodes[item.node].max_count = qmax
        items[-1] = _repeated(item, qmin, qmax, lazy)

    def check_repeatable(self, item: _Item, token: str, start: int) -> None:
        """Refuse what JavaScript cannot repeat, or repeats differently without the u flag."""
        if item.quantified:
            self.fail(f"nothing to repeat: '{token}' follows another quantifier", start)
        if item.kind == "assertion":
            self.fail(f"nothing to repeat: '{token}' follows an assertion", start)
        if item.kind == "lookbehind":
            self.fail(f"nothing to repeat: a lookbehind cannot be repeated ('{token}')", start)
        if item.astral:
            self.fail(
                f"'{token}' after a character outside the Basic Multilingual Plane would "
                "repeat only its second half in JavaScript without the u flag; wrap the "
                "character in a group, e.g. (?:x)+",
                start,
            )

    # -- escapes outside classes --------------------------------------------------------------

    def atom_escape(self) -> None:
        start = self.pos
        ch = self.peek(1)
        if ch == "":
            self.fail("'\\' at the end of the pattern", start)
        if ch == "b":
            self.pos += 2
            self.push(_Item(_WORD_BOUNDARY, 0, 0, "assertion"))
        elif ch == "B":
            self.pos += 2
            self.push(_Item(_NOT_WORD_BOUNDARY, 0, 0, "assertion"))
        elif ch in "123456789":
            match = _DIGITS.match(self.source, self.pos + 1)
            assert match is not None
            digits = match.group(0)
            number = int(digits)
            if number > self.group_total:
                self.fail(
                    f"'\\{digits}' is not a backreference: the pattern has only "
                    f"{self.group_total} capturing group(s); JavaScript would read it as a "
                    "legacy octal escape or a literal digit, which is not supported "
                    "(write \\xHH for a character code)",
                    start,
                )
            self.pos = match.end()
            self.backreference(number, start)
        elif ch == "k" and self.named_mode:
            if self.peek(2) != "<":
                self.fail("invalid named reference: '\\k' must be followed by <name>", start)
            end = self.source.find(">", self.pos + 3)
            if end < 0:
                self.fail("invalid named reference: missing '>' after '\\k<'", start)
            name = self.source[self.pos + 3 : end]
            if name not in self.group_names:
                self.fail(f"\\k<{name}> refers to a group name that does not exist", start)
            self.pos = end + 1
            self.backreference(self.group_names[name], start)
        else:
            value = self.character_escape(in_class=False)
            if isinstance(value, int):
                self.push_char(value)
            else:
                self.push_set(value)

    def backreference(self, number: int, start: int) -> None:
        if self.frame.in_lookbehind:
            self.fail(
                "backreferences inside a lookbehind are not supported (JavaScript matches "
                "lookbehinds right to left, Python left to right)",
                start,
            )
        if number not in self.closed_groups:
            # The group is still open or comes later: JS guarantees it is unset here (it is
            # cleared on every repetition of any loop around both), so this matches "".
            self.push(_Item("(?:)", 0, 0, "backref", atomic=False))
            return
        name = self.number_names.get(number)
        if name is None and number > _MAX_BACKREF_NUMBER:
            self.fail(
                f"backreferences to groups after group {_MAX_BACKREF_NUMBER} are not "
                "supported; name the group and use \\k<name>",
                start,
            )
        chars = self.group_chars.get(number, [])
        reference = f"(?P={name})" if name is not None else f"\\{number}"
        if self.ignore_case:
            # Python compares (?i:\1) with its own simple lowercase mapping, which differs
            # from JS Canonicalize for a few characters (including 'i' and 'k', because of
            # U+0130 and the Kelvin sign).  ASCII-only folding (?ai:) is exact when the group
            # cannot capture a non-ASCII cased character; (?i:) is exact when it cannot
            # capture one of the characters that fold differently.
            non_ascii = _first_common(chars, _non_ascii_cased())
            clash = _first_common(chars, _backref_fold_mismatch())
            if non_ascii is None:
                reference = f"(?ai:{reference})"
            elif clash is None:
                reference = f"(?i:{reference})"
            else:
                self.fail(
                    f"case-insensitive backreference to group {number}, which can capture "
                    f"both non-ASCII letters like {chr(non_ascii)!r} and characters like "
                    f"{chr(clash)!r} that Python case-folds differently from JavaScript; "
                    "limit the group to ASCII (e.g. [a-z]) or drop the i flag",
                    start,
                )
        condition = name if name is not None else str(number)
        self.backward_refs.append((number, start))
        self.push(_Item(f"(?({condition}){reference})", 0, None, "backref", atomic=False), chars)

    def character_escape(self, in_class: bool) -> int | _Ranges:
        """Translate an escape at ``pos`` that denotes a character or a class escape.

        Handles what is shared between the inside and the outside of a class; returns a code
        point or a set and advances ``pos``.
        """
        start = self.pos
        source = self.source
        ch = self.peek(1)
        if ch == "":
            self.fail("'\\' at the end of the pattern", start)
        if ch in "dDwWsS":
            self.pos += 2
            base = {"d": _DIGIT, "w": _WORD, "s": _SPACE}[ch.lower()]
            return _negate(base) if ch.isupper() else base
        if ch in _CONTROL_ESCAPES:
            self.pos += 2
            return _CONTROL_ESCAPES[ch]
        if ch == "c":
            letter = self.peek(2)
            valid = letter.isascii() and (
                letter.isalpha() or (in_class and (letter.isdigit() or letter == "_"))
            )
            if letter and valid:
                self.pos += 3
                return ord(letter) % 32
            self.pos += 1  # Annex B: a backslash that does not start an escape
            return ord("\\")
        if ch == "0" and not self.peek(2).isdigit():
            self.pos += 2
            return 0
        if ch in "01234567":
            self.fail(
                f"legacy octal escape '\\{ch}...' is not supported; write \\xHH or \\uHHHH",
                start,
            )
        if ch == "x" and _HEX2.match(source, start + 2):
            self.pos += 4
            return int(source[start + 2 : start + 4], 16)
        if ch == "u" and _HEX4.match(source, start + 2):
            return self.read_unicode_escape(in_class)
        self.refuse_identity_escape(ch, in_class, start)
        # Identity escape: the character itself (\a is 'a', \A is 'A', \/ is '/', ...).
        self.pos += 1
        return self.read_source_char(in_class)

    def refuse_identity_escape(self, ch: str, in_class: bool, start: int) -> None:
        """Escapes that JavaScript without the u flag reads as the bare letter, where the
        author surely meant the u-flag syntax (or, for ``\\k``, a named reference)."""
        if ch == "u" and self.peek(2) == "{":
            self.fail(
                "'\\u{...}' needs the u flag, which is not supported (without it JavaScript "
                "reads it as repeated 'u'); write \\uHHHH or a surrogate pair",
                start,
            )
        if ch in "pP" and self.peek(2) == "{":
            self.fail(
                f"Unicode property escapes '\\{ch}{{...}}' need the u flag, which is not "
                f"supported (without it JavaScript reads them as the literal letter '{ch}')",
                start,
            )
        if ch == "k" and in_class and self.named_mode:
            self.fail(
                "'\\k' is not allowed in a character class of a pattern with named groups", start
            )

    # -- character classes --------------------------------------------------------------------

    def character_class(self) -> None:
        start = self.pos
        source = self.source
        self.pos += 1
        negate = self.peek() == "^"
        if negate:
            self.pos += 1
        ranges: _Ranges = []
        while True:
            if self.pos >= len(source):
                self.fail("unterminated character class: missing ']'", start)
            if source[self.pos] == "]":
                self.pos += 1
                break
            atom_start = self.pos
            first = self.class_atom()
            if self.peek() == "-" and self.peek(1) not in ("", "]"):
                self.pos += 1
                second = self.class_atom()
                if isinstance(first, int) and isinstance(second, int):
                    if first > second:
                        self.fail(
                            "range out of order in character class: "
                            f"{source[atom_start : self.pos]!r}",
                            atom_start,
                        )
                    ranges.append((first, second))
                else:  # Annex B: [\d-z] is \d, '-' and 'z'
                    for atom in (first, ord("-"), second):
                        ranges.extend([(atom, atom)] if isinstance(atom, int) else atom)
            else:
                ranges.extend([(first, first)] if isinstance(first, int) else first)
        result = _normalize(ranges)
        if self.ignore_case:
            result = _case_closure(result)
        if negate:
            result = _negate(result)
        text, atomic = _emit_set(result)
        self.push(_Item(text, 1, 1, "set", atomic=atomic), result)

    def class_atom(self) -> int | _Ranges:
        if self.peek() != "\\":
            return self.read_source_char(in_class=True)
        ch = self.peek(1)
        if ch == "b":
            self.pos += 2
            return 0x08
        if ch in "89":  # Annex B identity escapes (no backreferences inside a class)
            self.pos += 2
            return ord(ch)
        return self.character_escape(in_class=True)

    # -- backreference analysis ---------------------------------------------------------------

    def check_backreferences(self) -> None:
        """Reject references that could see a capture JavaScript would have discarded.

        JavaScript clears the groups inside a quantified atom at the start of each repetition,
        and discards a repetition beyond the minimum that matches the empty string; Python
        keeps the previous repetition's capture and keeps empty repetitions.  The two agree
        when every repetition of every repeated construct around the group is guaranteed to
        set the group and cannot be empty.
        """
        for number, offset in self.backward_refs:
            path: list[int] = []
            index = self.group_node[number]
            while index >= 0:
                path.append(index)
                node = self.nodes[index]
                index = node.parent
                if node.kind.endswith("lookahead"):
                    continue  # a quantified lookahead is emitted once or never (see quantify)
                repeated = node.max_count is None or node.max_count > 1
                if repeated and not self.mandatory(path):
                    self.fail(
                        f"backreference to group {number} inside a repeated part of the "
                        "pattern: JavaScript clears the group on each repetition that does not "
                        "set it but Python keeps the old capture, so this is not supported",
                        offset,
                    )
                quantified = (node.min_count, node.max_count) != (1, 1)
                captured_in_lookahead = any(
                    self.nodes[inner].kind.endswith("lookahead") for inner in path[:-1]
                )
                can_be_empty = node.min_width == 0 and (
                    node.max_width != 0 or captured_in_lookahead
                )
                if quantified and can_be_empty and (repeated or captured_in_lookahead):
                    self.fail(
                        f"backreference to group {number} inside a quantified part of the "
                        "pattern that can match the empty string: JavaScript discards such an "
                        "empty repetition and its captures but Python keeps them, so this is "
                        "not supported",
                        offset,
                    )

    def mandatory(self, path: list[int]) -> bool:
        """Whether every pass through ``path[-1]`` sets the group ``path[0]``."""
        for index in path[:-1]:
            node = self.nodes[index]
            if node.min_count == 0 or node.kind.startswith("negative"):
                return False
        return not any(self.nodes[index].has_alternation for index in path[1:])


# ---------------------------------------------------------------------------------------------
# Public API.


def _check_flags(flags: str) -> None:
    seen: set[str] = set()
    for flag in flags:
        if flag not in _ALLOWED_FLAGS:
            raise RegexTranslationError(
                f"regex flag {flag!r} is not allowed: flags are a subset of {_ALLOWED_FLAGS}", -1
            )
        if flag in seen:
            raise RegexTranslationError(f"regex flag {flag!r} appears twice", -1)
        seen.add(flag)


def translate(source: str, flags: str) -> str:
    """Return a Python ``re`` pattern string equivalent to the JS pattern ``source``/``flags``.

    The result encodes the ``i`` and ``m`` flags itself and must be compiled with no Python
    flags.  Raises :class:`RegexTranslationError` (and nothing else) when the flags are invalid
    or the pattern is invalid JavaScript or cannot be translated faithfully.
    """
    _check_flags(flags)
    try:
        return _Translator(source, flags).run()
    except RegexTranslationError:
        raise
    except RecursionError as exc:
        raise RegexTranslationError("regex nested too deeply", 0) from exc
    except Exception as exc:  # defensive: never leak an unexpected exception type
        raise RegexTranslationError(f"cannot translate regex: {exc}", 0) from exc


def compile_js_regex(source: str, flags: str) -> re.Pattern[str]:
    """Translate the JS regex ``/source/flags`` and compile it.

    ``g`` has no meaning for compilation; ``i`` and ``m`` are encoded in the translated
    pattern (see the module docstring), so no Python flags are used.  Raises
    :class:`RegexTranslationError` (never ``re.error``, a warning or anything else) for
    anything invalid.
    """
    pattern = translate(source, flags)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            return re.compile(pattern)
    except re.error as exc:
        raise RegexTranslationError(f"invalid regex: {exc.msg}", 0) from exc
    except RecursionError as exc:
        raise RegexTranslationError("regex nested too deeply", 0) from exc
    except Exception as exc:  # OverflowError, a warning turned into an error, ...
        raise RegexTranslationError(f"invalid regex: {exc}", 0) from exc
