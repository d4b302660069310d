"""Lexing help the grammar cannot express: template literals and string escapes.

A template literal may nest expressions that hold braces, strings and further
templates (`` `a ${ {b: `c${d}`}.b } e` ``). A regular expression cannot count braces,
so the contextual lexer is given one small extension: when the parser state accepts a
``TEMPLATE`` and the text has a backtick, the template is scanned here, by hand.
Everything else stays Lark's contextual lexer.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from lark.lexer import BasicLexer, ContextualLexer, Token

from dsl.values import well_formed

__all__ = [
    "REGEX_AFTER_WORDS",
    "TEMPLATE_END",
    "TEMPLATE_START",
    "WORD",
    "EscapeError",
    "TemplateContextualLexer",
    "TemplatePart",
    "code_marks",
    "cook",
    "new_token",
    "scan_template",
    "skip_regex",
]


@dataclass(frozen=True, slots=True)
class TemplatePart:
    """A ``${}`` expression of a template: absolute offsets of the text inside the braces."""

    start: int
    end: int


def scan_template(
    text: str, pos: int, end: int
) -> tuple[int, list[str], list[TemplatePart]] | None:
    """Scan the template starting at ``text[pos] == '`'``.

    Returns the offset just past the closing backtick, the raw text pieces (one more
    than the expressions) and the top-level expressions; ``None`` when unterminated.
    """
    simple = _scan_simple_template(text, pos, end)
    return simple if simple is not None else _scan_full_template(text, pos, end)


def _scan_full_template(
    text: str, pos: int, end: int
) -> tuple[int, list[str], list[TemplatePart]] | None:
    """:func:`scan_template` for any template: a walk over :func:`code_marks`."""
    raws: list[str] = []
    parts: list[TemplatePart] = []
    piece_start = pos + 1
    expr_start = 0
    depth = 1  # templates open, this one included: only its own `${}` are parts
    for mark, i in code_marks(text, pos + 1, end, in_template=True):
        if mark == TEMPLATE_START:
            depth += 1
        elif mark == TEMPLATE_END:
            depth -= 1
            if depth == 0:
                raws.append(text[piece_start:i])
                return i + 1, raws, parts
        elif mark == "${" and depth == 1:
            raws.append(text[piece_start:i])
            expr_start = i + 2
        elif mark == "}$" and depth == 1:
            parts.append(TemplatePart(expr_start, i))
            piece_start = i + 1
    return None


# Template text: anything but a backtick, a backslash or `${`, and escapes.
_TEMPLATE_TEXT = re.compile(r"(?:[^`\\$]|\\[\s\S]|\$(?!\{))*")
# A `${}` whose code holds no string, template, comment, regex or brace: the first `}`
# ends it.
_SIMPLE_EXPRESSION = re.compile(r"[^`'\"{}/]*\}")


def _scan_simple_template(
    text: str, pos: int, end: int
) -> tuple[int, list[str], list[TemplatePart]] | None:
    """:func:`scan_template` for the usual template, by two regular expressions instead
    of a loop per character: text and `${}` whose code holds nothing that could hide a
    brace or a backtick. Anything else gives ``None``, and the full scan decides (it
    finds the same pieces wherever this one finds any)."""
    raws: list[str] = []
    parts: list[TemplatePart] = []
    i = pos + 1
    while True:
        j = _TEMPLATE_TEXT.match(text, i, end).end()  # type: ignore[union-attr]
        if j < end and text[j] == "`":
            raws.append(text[i:j])
            return j + 1, raws, parts
        if not text.startswith("${", j, end):
            return None
        expression = _SIMPLE_EXPRESSION.match(text, j + 2, end)
        if expression is None:
            return None
        raws.append(text[i:j])
        close = expression.end() - 1
        parts.append(TemplatePart(j + 2, close))
        i = close + 1


TEMPLATE_START = "`"
TEMPLATE_END = "`$"


def code_marks(
    text: str, pos: int, end: int, in_template: bool = False
) -> Iterator[tuple[str, int]]:
    """The structure of code from ``pos``: every bracket, and where templates and their
    ``${}`` start and end, outside strings, comments, regexes and template text.

    Marks are ``( ) [ ] { }``, ``${`` and ``}$`` (the brace that ends it),
    :data:`TEMPLATE_START` and :data:`TEMPLATE_END`, each with its offset. A stack of
    modes, not recursion, so deep nesting cannot exhaust Python's stack. A ``/`` after an
    operand divides and anywhere else starts a regex, as in a JavaScript lexer, so that
    ``/\\(/`` or ``${ s.replace(/}/g, "") }`` hold no bracket. An unterminated block
    comment ends the scan.
    """
    # "`" while in template text; an int (depth of plain braces) inside a `${}`.
    modes: list[str | int] = ["`"] if in_template else []
    after_operand = False
    i = pos
    while i < end:
        ch = text[i]
        top = modes[-1] if modes else None
        if top == "`":
            if ch == "\\":
                i += 2
            elif ch == "`":
                modes.pop()
                yield TEMPLATE_END, i
                after_operand = True
                i += 1
            elif ch == "$" and text.startswith("{", i + 1):
                modes.append(0)
                yield "${", i
                after_operand = False
                i += 2
            else:
                i += 1
            continue
        skipped = _skip_non_code(text, i, end, after_operand)
        if skipped is not None:
            i, after_operand = skipped
            continue
        word = WORD.match(text, i, end)
        if word is not None:
            after_operand = word.group() not in REGEX_AFTER_WORDS
            i = word.end()
            continue
        if ch == "`":
            modes.append("`")
            yield TEMPLATE_START, i
        elif ch == "}" and top == 0:
            modes.pop()
            yield "}$", i
        elif ch in "()[]{}":
            if isinstance(top, int) and ch in "{}":
                modes[-1] = top + (1 if ch == "{" else -1)
            yield ch, i
        if not ch.isspace():
            after_operand = ch in ")]}"
        i += 1


def _skip_non_code(text: str, i: int, end: int, after_operand: bool) -> tuple[int, bool] | None:
    """Past the string, comment or regex at ``i`` (and whether an operand now stands
    before the next token), or ``None`` when code starts there."""
    ch = text[i]
    if ch in "\"'":
        return _skip_string(text, i, end), True
    if ch != "/":
        return None
    if text.startswith("/", i + 1):
        newline = text.find("\n", i, end)
        return (end if newline < 0 else newline), after_operand
    if text.startswith("*", i + 1):
        close = text.find("*/", i + 2, end)
        return (end if close < 0 else close + 2), after_operand
    if not after_operand:
        return skip_regex(text, i, end), True
    return None


WORD = re.compile(r"[0-9][0-9A-Za-z_$.]*|[A-Za-z_$][A-Za-z0-9_$]*")
"""A name, keyword or (part of a) number: after one, a ``/`` divides."""

REGEX_AFTER_WORDS = frozenset(["return", "throw", "of", "in", "typeof", "case", "do", "else"])
"""Words after which a ``/`` starts a regex, as in a JavaScript lexer."""


def skip_regex(text: str, i: int, end: int) -> int:
    """The offset just past the regex literal at ``text[i] == '/'`` (or its line's end).

    Used where the contextual lexer cannot help (template expressions before they are
    parsed, bracket counting): a ``/`` that does not follow an operand starts a regex.
    """
    in_class = False
    i += 1
    while i < end and text[i] not in "\n\r":
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":
            in_class = True
        elif ch == "]":
            in_class = False
        elif ch == "/" and not in_class:
            return i + 1
        i += 1
    return min(i, end)


def _skip_string(text: str, i: int, end: int) -> int:
    quote = text[i]
    i += 1
    while i < end:
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == quote or ch == "\n":
            return i + 1
        i += 1
    return end


class EscapeError(Exception):
    """A malformed escape; ``offset`` is relative to the raw text given to :func:`cook`."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset


_SIMPLE_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "b": "\b",
    "f": "\f",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "`": "`",
    "$": "$",
}
_HEX = frozenset("0123456789abcdefABCDEF")


def cook(raw: str) -> str:
    """Apply JavaScript's string escapes to the text between the quotes."""
    if "\\" not in raw:
        return raw
    out: list[str] = []
    i = 0
    n = len(raw)
    while i < n:
        ch = raw[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        if i + 1 >= n:
            raise EscapeError("a backslash ends the string", i)
        esc = raw[i + 1]
        if esc in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[esc])
            i += 2
        elif esc == "0" and not (i + 2 < n and raw[i + 2].isdigit()):
            out.append("\0")
            i += 2
        elif esc in "123456789" or esc == "0":
            raise EscapeError("octal escapes are not allowed; use \\xHH or \\uHHHH", i)
        elif esc == "x":
            out.append(_hex_char(raw, i, 2, "\\x must be followed by two hex digits"))
            i += 4
        elif esc == "u":
            if raw.startswith("{", i + 2):
                close = raw.find("}", i + 3)
                digits = raw[i + 3 : close] if close >= 0 else ""
                if not digits or not set(digits) <= _HEX or int(digits, 16) > 0x10FFFF:
                    raise EscapeError("\\u{...} must hold a code point in hex, at most 10FFFF", i)
                out.append(chr(int(digits, 16)))
                i = close + 1
            else:
                out.append(_hex_char(raw, i, 4, "\\u must be followed by four hex digits or {...}"))
                i += 6
        elif esc == "\r":
            i += 3 if raw.startswith("\n", i + 2) else 2  # line continuation
        elif esc in "\n\u2028\u2029":
            i += 2  # line continuation
        else:
            out.append(esc)  # identity escape, as JavaScript allows
            i += 2
    return _join_surrogates("".join(out))


def _hex_char(raw: str, i: int, count: int, problem: str) -> str:
    """The character of the ``count`` hex digits after the escape letter at ``i + 1``."""
    digits = raw[i + 2 : i + 2 + count]
    if len(digits) != count or not set(digits) <= _HEX:
        raise EscapeError(problem, i)
    return chr(int(digits, 16))


def _join_surrogates(text: str) -> str:
    """``"\\uD83D\\uDE00"`` is one emoji in JavaScript; make it one code point here too."""
    return well_formed(text)


# Token() checks its keyword arguments for a deprecated name on every call.
new_token: Any = getattr(Token, "_future_new", Token)


class _TemplateBasicLexer(BasicLexer):
    """A per-state lexer that hands backticks to :func:`scan_template`."""

    _template_ok: bool | None = None

    def match(self, text: Any, pos: int) -> Any:
        # Lark builds the scanner, and with it ``self.callback`` (read by next_token
        # after every match), lazily on the first ``super().match``. A lexer whose very
        # first token is a template (``x=`a```) would otherwise crash on a missing
        # attribute, so build it before taking the template shortcut.
        self.scanner  # noqa: B018
        full: str = text.text
        if full[pos] == "`" and self._accepts_template():
            scanned = scan_template(full, pos, text.end)
            if scanned is None:
                return None  # reported by the parser as an unterminated template
            return full[pos : scanned[0]], "TEMPLATE"
        return super().match(text, pos)  # type: ignore[no-untyped-call]

    _fast: tuple[Any, ...] | None = None

    def next_token(self, lex_state: Any, parser_state: Any = None) -> Any:
        """Lark's ``BasicLexer.next_token``, inlined for the common case.

        The same regex, the same keyword callbacks and the same line counting
        (``LineCounter.feed``); anything unusual (a backtick, no match, a regex split
        over several patterns) goes to Lark's own method at the same position, so
        tokens and errors are Lark's.
        """
        fast = self._fast
        if fast is None:
            fast = self._fast = self.fast_state()
        match, template_ok, ignore_types, newline_types, callback = fast
        if match is None:  # pragma: no cover - more terminals than one re allows
            return super().next_token(lex_state, parser_state)
        line_ctr = lex_state.line_ctr
        text: str = lex_state.text.text
        end: int = lex_state.text.end
        pos: int = line_ctr.char_pos
        while pos < end:
            if template_ok and text[pos] == "`":
                return super().next_token(lex_state, parser_state)
            m = match(text, pos, end)
            if m is None:
                return super().next_token(lex_state, parser_state)
            value = m.group(0)
            type_ = m.lastgroup
            ignored = type_ in ignore_types
            t = None
            if not ignored or type_ in callback:
                t = new_token(type_, value, pos, line_ctr.line, line_ctr.column)
            # LineCounter.feed, inlined
            end_pos = pos + len(value)
            if type_ in newline_types:
                newlines = value.count("\n")
                if newlines:
                    line_ctr.line += newlines
                    line_ctr.line_start_pos = pos + value.rindex("\n") + 1
            line_ctr.char_pos = end_pos
            line_ctr.column = end_pos - line_ctr.line_start_pos + 1
            pos = end_pos
            if t is not None:
                t.end_line = line_ctr.line
                t.end_column = line_ctr.column
                t.end_pos = end_pos
                if type_ in callback:
                    t = callback[type_](t)
                if not ignored:
                    lex_state.last_token = t
                    return t
        raise EOFError(self)

    def fast_state(self) -> tuple[Any, ...]:
        """What an inlined lexer needs: match, template?, ignored, multi-line, callbacks."""
        scanner = self.scanner
        match = scanner._mres[0].match if len(scanner._mres) == 1 else None
        return match, self._accepts_template(), self.ignore_types, self.newline_types, self.callback

    def _accepts_template(self) -> bool:
        if self._template_ok is None:
            self._template_ok = any(t.name == "TEMPLATE" for t in self.terminals)
        return self._template_ok


class TemplateContextualLexer(ContextualLexer):
    """Lark's contextual lexer with template literals scanned by hand."""

    BasicLexer = _TemplateBasicLexer
