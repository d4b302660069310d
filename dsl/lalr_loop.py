"""Lark's LALR tables and contextual lexers driven by a loop of our own.

For input that parses, :class:`FastLoop` does what Lark's ``ParserState.feed_token``
and ``ContextualLexer.lex`` do (the same tables, the same per-state lexers, the same
callbacks in the same order) with much less per token:

* a token is a plain tuple, not a Lark ``Token`` (a ``str`` subclass with eight
  attributes): ``(type, text, line, col, end_line, end_col, start, end)``, columns
  0-based, ends exclusive, a template's scan as a ninth item. Items 2 to 8 are a
  :class:`~dsl.ast.Span`'s fields in its order, so ``tuple.__new__(Span, tok[2:8])``
  is the token's span. Nothing else a callback receives is a plain tuple (nodes are
  dataclasses, repetitions lists, a ``Span`` a subclass): ``type(c) is tuple`` tells
  a token;
* the lexer is inlined: per parser state and first character, the alternation of the
  state's terminals that can start with that character (:mod:`dsl.first_chars`), in
  Lark's order; Lark's keyword callbacks as dicts; templates scanned by hand;
* each action is looked up once per (state, terminal) as ``(kind, arg, callback,
  size)``; a reduction of a literal or a name calls a function of the token itself,
  a reduction of one child replaces it in place, and after a reduction the loop goes
  straight through the chain reductions (``?rule: x``, only the state changes) its
  lookahead makes next.

On the first token or character Lark would reject, it raises :class:`Unexpected`, and
the caller parses again with Lark itself, whose errors it explains (``dsl.parser``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any, NoReturn, cast

from lark import Lark
from lark.lexer import UnlessCallback
from lark.parse_tree_builder import ChildFilter, ExpandSingleChild
from lark.parsers.lalr_analysis import Shift

from dsl.first_chars import ASCII, first_chars
from dsl.lexer import scan_template

__all__ = ["FastLoop", "Tok", "Unexpected"]

Tok = tuple[Any, ...]
"""A token: ``(type, text, line, col, end_line, end_col, start, end)`` [+ a scan]."""

# What the loop does with a (state, terminal): the action's kind, then its argument
# (the next state of a shift, the rule a reduction makes), its callback and its length.
# The loop compares kinds with the literal numbers (a constant is quicker than a name).
_SHIFT, _CHAIN, _LEAF, _ONE, _MANY = range(5)
Action = tuple[int, Any, Any, int]


class Unexpected(Exception):
    """The loop met input Lark rejects: Lark's own loop reports it."""


def _no_match(*_: Any) -> NoReturn:
    raise Unexpected


_first_chars = functools.cache(first_chars)
_COMPILED: dict[tuple[str, int], Any] = {}


def _pattern(alternatives: list[tuple[str, str, frozenset[str]]], flags: int, lead: str) -> Any:
    """The match function of the alternation of ``alternatives`` (name, regexp, ...),
    led by ``lead`` and followed by the spaces and tabs after the token (neither ever
    starts a token: ``WS`` is ignored, and no terminal starts with a space or a tab)."""
    text = "|".join(f"(?P<{name}>{regexp})" for name, regexp, _ in alternatives)
    text = f"{lead}(?:{text})[ \\t]*"
    compiled = _COMPILED.get((text, flags))
    if compiled is None:
        compiled = _COMPILED[text, flags] = re.compile(text, flags).match
    return compiled


class FastLoop:
    """One grammar's tables, as the loop uses them.

    ``lark`` is built with a transformer whose every callback carries, as ``fast``, the
    function the loop calls instead (with our tokens); ``leaves`` maps the alias of a
    one-token rule (``identifier``, ``string``, ...) to a function of that token.
    """

    def __init__(self, lark: Lark, leaves: dict[str, Callable[[Tok], Any]]) -> None:
        frontend: Any = lark.parser
        self._lalr: Any = frontend.parser.parser  # lark.parsers.lalr_parser._Parser
        assert not any(isinstance(key, str) for key in self._lalr.callbacks), "no terminal ones"
        self._lexers: dict[int, Any] = frontend.lexer.lexers
        self._leaves = leaves
        self.start_states: dict[str, int] = self._lalr.parse_table.start_states
        self.end_states: dict[str, int] = self._lalr.parse_table.end_states
        # Lists indexed by state (Lark numbers its states from 0): quicker than dicts.
        states: dict[int, Any] = self._lalr.parse_table.states
        assert sorted(states) == list(range(len(states))), "states numbered from 0"
        reduction = functools.cache(self._reduction)  # a rule is reduced in many states
        self.actions: list[dict[str, Action]] = [
            {
                symbol: (_SHIFT, arg, None, 0) if action is Shift else reduction(arg)
                for symbol, (action, arg) in states[state].items()
            }
            for state in range(len(states))
        ]
        # state -> rule -> the state after reducing to it (Lark keeps them as shifts)
        self.gotos: list[dict[str, int]] = [
            {symbol: arg for symbol, (action, arg) in states[state].items() if action is Shift}
            for state in range(len(states))
        ]
        # Per state, what the inlined lexer needs: built on first use.
        self.lexers: list[tuple[Any, ...] | None] = [None] * len(states)
        # below -> rule -> lookahead -> the state (see _through_chains), filled as met.
        self.through: list[dict[str, dict[str, int]]] = [{} for _ in states]
        # state -> its terminals (see _alternatives_of) and the flags of its pattern
        self._terminals: dict[int, tuple[list[tuple[str, str, frozenset[str]]], int]] = {}

    # --- the tables ------------------------------------------------------------------

    def _reduction(self, rule: Any) -> Action:
        """A reduction as the loop needs it: ``_CHAIN`` when the callback returns its
        one child unchanged (a ``?rule`` with one symbol: only the state changes),
        ``_LEAF`` for a literal or a name (its function takes the token itself),
        ``_ONE`` for another rule of one child (both replaced in place on the stacks),
        else ``_MANY``."""
        callback = self._lalr.callbacks[rule]
        size = len(rule.expansion)
        origin: str = rule.origin.name
        if size == 1 and type(callback) is ExpandSingleChild:
            return _CHAIN, origin, None, 1
        leaf = self._leaves.get(rule.alias or origin)
        if size == 1 and leaf is not None and rule.expansion[0].is_term:
            return _LEAF, origin, leaf, 1
        return (_ONE if size == 1 else _MANY), origin, _compiled(callback), size

    def _lexer(self, state: int) -> tuple[Any, ...]:
        """The state's lexer (``TemplateContextualLexer.fast_state``) as the loop uses it:
        a dispatch from the character at hand to a match function (filled by
        :meth:`_matcher` as characters come), the ignored and multi-line terminals, and
        Lark's keyword callbacks (a ``NAME`` that is ``if`` becomes ``IF``: a full match
        against the plain-string terminals) as one dict per terminal.

        Spaces and tabs before a token are skipped by the match that finds it, and
        those after it by the match that found it (``WS`` is ignored, and no other
        terminal starts with a space or a tab, so the tokens are the same).
        ``TEMPLATE``'s placeholder pattern becomes a lone backtick: the loop scans the
        template by hand from there, as the lexer does. A state whose lexer does
        anything else gets an empty dispatch that matches nothing: Lark parses.
        """
        match, template_ok, ignore_types, newline_types, callbacks = self._lexers[
            state
        ].fast_state()
        keywords: dict[str, dict[str, str]] = {}
        for type_, callback in callbacks.items():
            scanner: Any = getattr(callback, "scanner", None)
            plain = (
                type(callback) is UnlessCallback
                and type_ not in ignore_types
                and not scanner.g_regex_flags
                and all(t.pattern.type == "str" and not t.pattern.flags for t in scanner.terminals)
            )
            if not plain:  # pragma: no cover - not in this grammar
                match = None
                break
            keywords[type_] = {t.pattern.value: t.name for t in scanner.terminals}
        dispatch: dict[str, Any] = {}
        alternatives = None if match is None else self._alternatives_of(state, match.__self__)
        if alternatives is not None:
            names = [name for name, _, _ in alternatives]
            if template_ok == ("TEMPLATE" in names):
                flags: int = match.__self__.flags
                self._terminals[state] = (alternatives, flags)
                whole = _pattern(alternatives, flags, "[ \\t]*")  # after spaces or tabs
                dispatch = {" ": whole, "\t": whole}
        return dispatch, ignore_types, newline_types, keywords

    def _alternatives_of(
        self, state: int, pattern: re.Pattern[str]
    ) -> list[tuple[str, str, frozenset[str]]] | None:
        """The state's terminals in Lark's order: name, regular expression (a lone
        backtick for a template), the characters it can start with; ``None`` when they
        do not make the pattern Lark matches with."""
        terminals = self._lexers[state].scanner.terminals
        regexps = [(t.name, t.pattern.to_regexp()) for t in terminals]
        if "|".join(f"(?P<{name}>{regexp})" for name, regexp in regexps) != pattern.pattern:
            return None  # pragma: no cover - more terminals than one re allows
        return [
            (name, "`" if name == "TEMPLATE" else regexp, _first_chars(regexp, pattern.flags))
            for name, regexp in regexps
        ]

    def _matcher(self, state: int, ch: str) -> Any:
        """The match function for a token starting with ``ch`` in ``state``: the
        alternation of the terminals that can start with it, in Lark's order (the
        others could only fail there), followed by the spaces after the token, so that
        the next token usually starts at once. Kept in the state's dispatch."""
        lexer = self.lexers[state]
        assert lexer is not None
        terminals = self._terminals.get(state)
        if terminals is None:  # pragma: no cover - not in this grammar: Lark parses
            matcher: Any = _no_match
        elif ch in ASCII:
            alternatives, flags = terminals
            chosen = [entry for entry in alternatives if ch in entry[2]]
            matcher = _pattern(chosen, flags, "") if chosen else _no_match
        else:  # a character only the whole alternation answers for
            matcher = _pattern(terminals[0], terminals[1], "")
        lexer[0][ch] = matcher
        return matcher

    def _through_chains(self, below: int, origin: str, lookahead: str) -> int:
        """The state after a reduction to ``origin`` over the state ``below``, and after
        the chain reductions that ``lookahead`` makes right away: an operand reduced
        with ``,`` next becomes an ``expression`` without a turn of the loop. Each chain
        pops one state and goes to from ``below`` again, so the three together decide
        the state; where the lookahead has no action, the first state is kept, for the
        loop to fail on as Lark would."""
        state = self.gotos[below][origin]
        while True:
            action = self.actions[state].get(lookahead)
            if action is None or action[0] != _CHAIN:
                break
            state = self.gotos[below][action[1]]
        self.through[below].setdefault(origin, {})[lookahead] = state
        return state

    # --- the loop --------------------------------------------------------------------

    def parse(self, source: str, start: int, end: int, rule: str) -> Any:
        """``source[start:end]`` parsed from ``rule``: what the callbacks make of it, or
        :class:`Unexpected` where Lark would report an error."""
        actions, gotos, lexers, through = self.actions, self.gotos, self.lexers, self.through
        state_stack = [self.start_states[rule]]
        value_stack: list[Any] = []
        pos = start
        line = source.count("\n", 0, start) + 1
        line_start = source.rfind("\n", 0, start) + 1
        while True:
            state = state_stack[-1]
            fast = lexers[state]
            if fast is None:
                fast = lexers[state] = self._lexer(state)
            dispatch, ignore_types, newline_types, keywords = fast
            # The contextual lexer, inlined: the next token this state accepts, matched
            # by the terminals that can start with the character at hand (_matcher).
            while pos < end:
                try:
                    m = dispatch[source[pos]](source, pos, end)
                except KeyError:
                    m = self._matcher(state, source[pos])(source, pos, end)
                if m is None:
                    raise Unexpected
                lex_type = m.lastgroup
                tstart, tend = m.span(lex_type)
                pos = m.end()  # past the spaces after the token too
                if lex_type in ignore_types:
                    if lex_type in newline_types:
                        value = source[tstart:tend]
                        newlines = value.count("\n")
                        if newlines:
                            line += newlines
                            line_start = tstart + value.rindex("\n") + 1
                    continue
                if lex_type == "TEMPLATE":  # scanned by hand (nested `${}`)
                    token = _template_token(source, tstart, end, line, line_start)
                    pos = token[7]
                    if token[4] != line:
                        line = token[4]
                        line_start = source.rindex("\n", tstart, pos) + 1
                    break
                value = source[tstart:tend]
                if lex_type in keywords:
                    lex_type = keywords[lex_type].get(value, lex_type)
                # Only a terminal Lark counts lines in (newline_types) can hold a newline.
                if "\n" in value:
                    first_line, col = line, tstart - line_start
                    line += value.count("\n")
                    line_start = tstart + value.rindex("\n") + 1
                    token = (
                        lex_type,
                        value,
                        first_line,
                        col,
                        line,
                        tend - line_start,
                        tstart,
                        tend,
                    )
                else:
                    token = (
                        lex_type,
                        value,
                        line,
                        tstart - line_start,
                        line,
                        tend - line_start,
                        tstart,
                        tend,
                    )
                break
            else:
                return self._finish(state_stack, value_stack, self.end_states[rule])
            type_ = token[0]
            while True:
                try:
                    kind, arg, callback, size = actions[state_stack[-1]][type_]
                except KeyError:
                    raise Unexpected from None
                if kind == 0:  # _SHIFT
                    state_stack.append(arg)
                    value_stack.append(token)
                    break
                # After a reduction, the state comes from `through`, which has followed
                # the chain reductions this lookahead makes next (_through_chains).
                if kind == 2:  # _LEAF
                    value_stack[-1] = callback(value_stack[-1])
                    below = state_stack[-2]
                    try:
                        state_stack[-1] = through[below][arg][type_]
                    except KeyError:
                        state_stack[-1] = self._through_chains(below, arg, type_)
                elif kind == 4:  # _MANY
                    if size:
                        children = value_stack[-size:]
                        del state_stack[-size:]
                        del value_stack[-size:]
                    else:
                        children = []
                    value_stack.append(callback(children))
                    below = state_stack[-1]
                    try:
                        state_stack.append(through[below][arg][type_])
                    except KeyError:
                        state_stack.append(self._through_chains(below, arg, type_))
                elif kind == 1:  # _CHAIN: one child, kept as it is
                    state_stack[-1] = gotos[state_stack[-2]][arg]
                else:  # _ONE
                    value_stack[-1] = callback([value_stack[-1]])
                    below = state_stack[-2]
                    try:
                        state_stack[-1] = through[below][arg][type_]
                    except KeyError:
                        state_stack[-1] = self._through_chains(below, arg, type_)

    def _finish(self, state_stack: list[int], value_stack: list[Any], end_state: int) -> Any:
        """The reductions the end of the input makes, up to the rule's end state."""
        gotos = self.gotos
        while True:
            try:
                kind, arg, callback, size = self.actions[state_stack[-1]]["$END"]
            except KeyError:
                raise Unexpected from None
            if kind == _SHIFT:  # pragma: no cover - $END is never shifted
                raise Unexpected
            if kind == _CHAIN:
                state_stack[-1] = gotos[state_stack[-2]][arg]
            elif kind in (_LEAF, _ONE):
                value_stack[-1] = callback(value_stack[-1] if kind == _LEAF else [value_stack[-1]])
                state_stack[-1] = gotos[state_stack[-2]][arg]
            else:
                if size:
                    children = value_stack[-size:]
                    del state_stack[-size:]
                    del value_stack[-size:]
                else:
                    children = []
                value_stack.append(callback(children))
                state_stack.append(gotos[state_stack[-1]][arg])
            if state_stack[-1] == end_state:
                return value_stack[-1]


def _template_token(source: str, pos: int, end: int, line: int, line_start: int) -> Tok:
    """The template literal at ``source[pos] == '`'``, scanned (its scan kept in the
    token for the callback), or :class:`Unexpected` when it never ends."""
    scanned = scan_template(source, pos, end)
    if scanned is None:
        raise Unexpected
    stop = scanned[0]
    value = source[pos:stop]
    newlines = value.count("\n")
    end_line, end_col = line, stop - line_start
    if newlines:
        end_line, end_col = line + newlines, stop - (pos + value.rindex("\n") + 1)
    return ("TEMPLATE", value, line, pos - line_start, end_line, end_col, pos, stop, scanned)


# --- Lark's callbacks, compiled ---------------------------------------------------


def _is_default(builder: Any) -> bool:
    """Whether ``builder`` is Lark's for a rule with no callback of ours (the
    ``__x_star_n`` rules Lark makes for repetitions): it builds a ``Tree``."""
    if not isinstance(builder, functools.partial):
        return False
    assert str(builder.args[0]).startswith("__"), builder  # every rule of ours has a method
    return True


def _compiled(callback: Any) -> Any:
    """Lark's callback for a rule as one small function: the same children handed to
    the same function of ours (the ``fast`` of Lark's callback), without Lark's generic
    filtering loop and the ``Tree`` of each repetition (the loop keeps a repetition as
    a plain list, which the rule that holds it spreads in place, as Lark spreads the
    tree's children).

    Lark's own parse (of input with an error) keeps Lark's callbacks.
    """
    if _is_default(callback):
        return _list_of
    if type(callback) is ExpandSingleChild:  # with more than one child: the inner one
        return _compiled(callback.node_builder)
    if not isinstance(callback, ChildFilter):
        return callback.fast  # one of ours, called with the children as they are
    builder = None if _is_default(callback.node_builder) else callback.node_builder.fast
    steps: list[str] = []
    for entry in callback.to_include:
        index, spread = entry[0], entry[1]
        steps += ["r.append(None)"] * (entry[2] if len(entry) > 2 else 0)
        steps.append(f"r.extend(c[{index}])" if spread else f"r.append(c[{index}])")
    steps += ["r.append(None)"] * (getattr(callback, "append_none", None) or 0)
    # A repetition first (left recursion) grows its own list, as Lark's filter does.
    first = steps[0]
    head = "r = c[0]" if first == "r.extend(c[0])" else f"r = []\n    {first}"
    body = "\n    ".join([head, *steps[1:], "return r" if builder is None else "return b(r)"])
    namespace: dict[str, Any] = {"b": builder}
    exec(f"def f(c):\n    {body}\n", namespace)  # code made here, from the grammar
    return cast(Callable[[list[Any]], Any], namespace["f"])


def _list_of(children: list[Any]) -> list[Any]:
    return children
