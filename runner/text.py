"""Text from files, argv and pages made safe for one terminal line: the one home of it.

A file name, a scenario name, a YAML value or a source line can hold an ESC (a
terminal escape sequence), a C1 control (CSI U+009B starts one on many terminals), a
line break or a Unicode line separator. Echoed raw, it would rewrite the user's screen
or split a one-sentence error over lines. Two treatments share one table of what is
unprintable:

- ``one_line``/``show_name`` *escape* it (``\\x1b``, ``\\u2028``), for messages: the
  user sees exactly what the name holds;
- ``replace_controls`` swaps each for U+FFFD, one character for one, for a source line
  shown under a caret: the caret must stay in its column.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = [
    "did_you_mean",
    "has_control_character",
    "keep_lines",
    "one_line",
    "printable",
    "replace_controls",
    "show_name",
]

# C0 (tab apart: harmless on one line), DEL, C1, and the line/paragraph separators.
_UNPRINTABLE = (*range(0x00, 0x09), *range(0x0A, 0x20), *range(0x7F, 0xA0), 0x2028, 0x2029)
_ESCAPED = {i: f"\\x{i:02x}" if i < 0x100 else f"\\u{i:04x}" for i in _UNPRINTABLE}
# A name is refused or quoted for a tab as well: it has no business in a scenario name.
_NAME_ESCAPED = {**_ESCAPED, 0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"}
_REPLACED = {i: "\ufffd" for i in _UNPRINTABLE}
_LINES_KEPT = {i: text for i, text in _ESCAPED.items() if i != 0x0A}


def one_line(text: str) -> str:
    """``text`` with control characters and line separators shown as escapes."""
    return text.translate(_ESCAPED)


def keep_lines(text: str) -> str:
    """``one_line`` but for its line breaks: for a message shown as a block (a JSON
    answer the page shows, where a syntax error's code frame needs its lines)."""
    return text.translate(_LINES_KEPT)


def show_name(text: str) -> str:
    """``text`` quoted for a one-line message, every control character escaped."""
    return f"'{text.translate(_NAME_ESCAPED)}'"


def has_control_character(text: str) -> bool:
    """A C0/C1 control (tab, NUL, ESC, DEL, ...) or a Unicode line/paragraph separator."""
    return any(ord(ch) in _NAME_ESCAPED for ch in text)


def replace_controls(text: str) -> str:
    """One line fit for a terminal, each unprintable character replaced one for one."""
    return text.translate(_REPLACED)


def printable(text: str) -> str:
    """An id or ref in a table cell: anything ``str.isprintable`` refuses is escaped."""
    return "".join(
        ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text
    )


def did_you_mean(given: str, known: Iterable[str], cutoff: float = 0.6) -> str:
    """`` (did you mean 'x'?)`` for the closest known name (case-insensitive), or ``""``."""
    by_lower = {k.lower(): k for k in sorted(known)}
    import difflib  # here: only a mistyped name asks, and every command imports this module

    close = difflib.get_close_matches(given.lower(), list(by_lower), n=1, cutoff=cutoff)
    return f" (did you mean '{by_lower[close[0]]}'?)" if close else ""
