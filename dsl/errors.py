"""The scenario language's exceptions.

One tree, split by cause, so the edges (the CLI, the runner) can map each branch to an
exit code and a protocol ``errorName`` in one place::

    DslError                      anything the language reports
    ├── ScenarioSyntaxError       parse time: file, line, col, source line and caret
    │   └── (header, structure and regex problems are syntax errors too)
    ├── ScriptError               run time, raised at a node: errorName + file:line:col
    │                             (TypeError, ReferenceError, RangeError, AssertionError,
    │                             ScenarioError, and the host's LocatorError, TimeoutError,
    │                             NavigationError: the name is data, not a Python class,
    │                             because the protocol carries it as a string)
    └── BuiltinError              raised inside a built-in, which does not know where it
                                  was called; the interpreter turns it into a ScriptError
                                  at the call site

    Interrupt (BaseException)     the host stopping a run (abort, timeout): it passes
                                  through the scenario's ``catch`` and ``finally``.

Positions: line 1-based, column 0-based, as in the protocol's events.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "BuiltinError",
    "Diagnostic",
    "DslError",
    "Interrupt",
    "ScenarioSyntaxError",
    "ScriptError",
    "arity_text",
    "caret_context",
    "closest",
    "suggestion",
]


class DslError(Exception):
    """Base of every error the language reports on purpose."""


def caret_context(source_line: str, col: int) -> str:
    """The offending line and a caret under ``col``, tabs kept so the caret lines up."""
    line = source_line.rstrip("\r\n")
    pad = "".join("\t" if ch == "\t" else " " for ch in line[:col])
    return f"    {line}\n    {pad}^"


def closest(name: str, candidates: Iterable[str]) -> str | None:
    """The candidate ``name`` is most likely a misspelling of, if one is close enough."""
    close = difflib.get_close_matches(name, sorted(candidates), n=1, cutoff=0.6)
    return close[0] if close else None


def suggestion(name: str, candidates: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest candidate, or ``""``; the checker and the
    interpreter word a misspelt name the same way."""
    close = closest(name, candidates)
    return f" (did you mean '{close}'?)" if close is not None else ""


def arity_text(low: int, high: int | None) -> str:
    """``1 argument``, ``at least 2 arguments``, ``0 to 1 argument``: what a call takes."""
    if high is None:
        return f"at least {_arguments(low)}"
    if low == high:
        return _arguments(low)
    return f"{low} to {_arguments(high)}"


def _arguments(n: int) -> str:
    return f"{n} argument" + ("" if n == 1 else "s")


class ScenarioSyntaxError(DslError):
    """A file that cannot be parsed; ``str()`` is ``file:line:col: message`` + caret."""

    def __init__(self, message: str, file: str, line: int, col: int, source_line: str) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.col = col
        self.source_line = source_line

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"

    def __str__(self) -> str:
        head = f"{self.location}: SyntaxError: {self.message}"
        if not self.source_line.strip():
            return head
        return f"{head}\n{caret_context(self.source_line, self.col)}"


@dataclass(frozen=True, slots=True)
class CallFrame:
    """One entry of a call chain as errors report it."""

    fn: str
    file: str
    line: int


class ScriptError(DslError):
    """A run-time failure at a known place in a scenario or helper.

    ``value`` is what the scenario can see in ``catch (e)``: ``{name, message}``, or
    the thrown string for ``throw "text"``.
    """

    def __init__(
        self,
        name: str,
        message: str,
        file: str,
        line: int,
        col: int,
        call_chain: tuple[CallFrame, ...] = (),
        thrown: object = None,
        *,
        soft: bool = False,
    ) -> None:
        super().__init__(message)
        self.name = name
        self.message = message
        self.file = file
        self.line = line
        self.col = col
        self.call_chain = call_chain
        self.thrown = thrown
        self.soft = soft
        """A soft assertion's failure (``{soft: true}``): the run's hook records it and
        the scenario goes on; with no hook (or inside ``expect_to_pass``) it is an
        ordinary failure."""

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"

    def __str__(self) -> str:
        return f"{self.location}: {self.name}: {self.message}"


class BuiltinError(DslError):
    """Raised by a built-in; placed at the call site by the interpreter. ``soft``: an
    expectation given ``{soft: true}`` failed (Playwright's ``expect.soft``)."""

    def __init__(self, name: str, message: str, *, soft: bool = False) -> None:
        super().__init__(message)
        self.name = name
        self.message = message
        self.soft = soft


class Interrupt(BaseException):
    """The host stopping the run: never caught by a scenario's ``try``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One problem, formatted like a compiler's: ``file:line:col: message``.

    Here rather than in :mod:`dsl.checker` (which re-exports it) so that code that only
    reads or prints problems (the project index cache) does not import the checker."""

    file: str
    line: int
    col: int
    message: str
    source_line: str = ""

    @property
    def head(self) -> str:
        """The one line ``file:line:col: message``, without the source under it."""
        return f"{self.file}:{self.line}:{self.col}: {self.message}"

    def __str__(self) -> str:
        head = self.head
        return f"{head}\n{caret_context(self.source_line, self.col)}" if self.source_line else head

    @classmethod
    def from_syntax_error(cls, err: ScenarioSyntaxError) -> Diagnostic:
        return cls(err.file, err.line, err.col, f"SyntaxError: {err.message}", err.source_line)
