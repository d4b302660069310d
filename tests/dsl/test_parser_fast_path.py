"""The parser's shortcuts give what the long way gives.

Input that parses goes through our own loop over Lark's tables (``dsl.lalr_loop``:
tokens as tuples, chain reductions followed at once), templates are scanned by two
regular expressions and a bare ``${name}`` is made without a parse; Lark's own loop is
kept for input with an error. Each shortcut is checked here against the long way it replaces,
trees compared with their spans, on the benchmark's corpus, every scenario and helper
file of the repository and inputs chosen for their corners.
"""

from __future__ import annotations

import copy
import dataclasses
import importlib.util
import pickle
import random
from pathlib import Path
from typing import Any

import pytest
from lark.utils import TextSlice

from dsl import ast, lalr_loop, lexer
from dsl import parser as dsl_parser
from dsl.errors import ScenarioSyntaxError
from dsl.first_chars import ASCII, first_chars
from dsl.lalr_loop import Unexpected

_REPO = Path(__file__).resolve().parents[2]

_CORNERS = [
    # templates over several lines, nested, with `${}` holding braces and strings
    'function test_a() {\n  let x = `a\n${ 1 +\n 2 }b\n` + "q\\\n"; log(x)\n'
    "  /* multi\n line */ log(`${`${1}`}`, `${ {a: '}'}.a }`)\n}\n",
    # CRLF line ends, tabs, a regex with an escaped slash, else if
    "function test_b() {\r\n  let y = /a\\/b/gi\r\n"
    "\tif (y) { log(1) } else if (!y) { log(-2) }\r\n}",
    # no-break space and line separator between tokens, keys of every kind
    "function test_c() {\u00a0let z = {a: 1, 'b': [1,2,], 3: null}\u2028 log(z.a)\n}",
    # parameters, a trailing comma, ?? and ?:, a top-level const
    "function f(a, b,) { return a ?? b ? a : b }\nconst K = 3\n",
    # every compound statement
    "function test_d() {\n  try { x() } catch (e) { log(e) } finally { log(2) }\n"
    "  for (const q of [1]) { while (true) { break } }\n  let n\n  n += 1; throw 'x'\n}",
    # calls and members chained at a statement's start, unary operators, comments
    "function test_e() {\n  a.b[c](d)(e).f = -g * !h // end\n  x = (1 + 2) * 3 % 4 - +5\n}",
]


def _bench_corpus(count: int) -> list[str]:
    spec = importlib.util.spec_from_file_location("bench_parse", _REPO / "bench" / "parse.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    scenarios: list[str] = [module._scenario(i, 50) for i in range(count)]
    return scenarios


def _repository_files() -> list[Path]:
    files = sorted((_REPO / "tests").rglob("*.js")) + sorted((_REPO / "examples").rglob("*.js"))
    return [f for f in files if "node_modules" not in f.parts]


def _both_ways(source: str, rule: str = "start") -> tuple[Any, Any] | None:
    """The fast loop's result and Lark's loop's (each a value or the error it raised),
    or ``None`` when the fast loop hands the input to Lark (it has an error)."""
    dsl_parser._context.stack.append(("f.test.js", source))
    try:
        try:
            fast: Any = dsl_parser._loop.parse(source, 0, len(source), rule)
        except Unexpected:
            return None
        except ScenarioSyntaxError as err:
            fast = ("error", str(err))
        try:
            slow: Any = dsl_parser._lark.parse(TextSlice(source, 0, len(source)), start=rule)
        except ScenarioSyntaxError as err:
            slow = ("error", str(err))
        return fast, slow
    finally:
        dsl_parser._context.stack.pop()


def test_the_fast_loop_builds_the_tree_lark_builds_on_the_benchmark_corpus() -> None:
    for source in _bench_corpus(40) + _CORNERS:
        results = _both_ways(source)
        assert results is not None, source
        fast, slow = results
        assert fast == slow, source


def test_the_fast_loop_builds_the_tree_lark_builds_on_every_file_of_the_repository() -> None:
    compared = 0
    for path in _repository_files():
        results = _both_ways(path.read_text(encoding="utf-8"))
        if results is not None:
            fast, slow = results
            assert fast == slow, path
            compared += 1
    assert compared > 20  # most of them parse


@pytest.mark.parametrize(
    "source",
    ["a", "1 + 2 * 3", "f(`x${y}z`, [1, {k: 'v'}])", "!a && b || c ?? d", "a ? b : c ? d : e"],
)
def test_the_fast_loop_builds_the_expression_lark_builds(source: str) -> None:
    results = _both_ways(source, "expression")
    assert results is not None
    fast, slow = results
    assert fast == slow


def test_input_with_an_error_is_left_to_lark() -> None:
    assert _both_ways("function test_a() {\n  log(1 2)\n}\n") is None
    assert _both_ways("function test_a() {\n  log(`a${b`)\n}\n") is None


def test_the_simple_template_scan_finds_what_the_full_scan_finds() -> None:
    pieces = [*"ab $`{}\\\"'/*\n()x1", "${", "${a}", "`", "\\`", "//", "/*", "*/"]
    rng = random.Random(19)
    taken = 0
    for _ in range(20000):
        body = "".join(rng.choice(pieces) for _ in range(rng.randrange(12)))
        text = rng.choice(["", "x = "]) + "`" + body + rng.choice(["`", "", "` + 1"])
        pos = text.index("`")
        end = rng.choice([len(text), max(pos + 1, len(text) - 1)])
        simple = lexer._scan_simple_template(text, pos, end)
        if simple is None:
            continue
        taken += 1
        full = lexer._scan_full_template(text, pos, end)
        assert simple == full, (text, end)
    assert taken > 5000  # the shortcut is taken often enough to be tested


_NAMES = ["a", " a ", "\ta\t", "$x", "_", "true", "null", "if", "var", "undefined", "a b", "1a"]


def test_a_bare_name_in_a_template_is_the_identifier_a_parse_makes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sources = [
        f"function test_a() {{\n  let q = 1\n  log(`{lead}x${{{name}}}y`)\n}}\n"
        for lead in ("", "\n", "ab\n", "  ")
        for name in [*_NAMES, "a\n", "\na"]
    ]

    def outcome(source: str) -> object:
        try:
            return dsl_parser.parse_program(source, "f.test.js")
        except ScenarioSyntaxError as err:
            return ("error", str(err), err.line, err.col)

    with_shortcut = [outcome(s) for s in sources]
    monkeypatch.setattr(dsl_parser, "_bare_name", lambda *_: None)
    assert [outcome(s) for s in sources] == with_shortcut


def test_a_span_keeps_the_face_of_a_frozen_dataclass() -> None:
    span = ast.Span(1, 2, 3, 4, 5, 6)
    assert (span.line, span.col, span.end_line, span.end_col, span.start, span.end) == (
        1,
        2,
        3,
        4,
        5,
        6,
    )
    assert [f.name for f in dataclasses.fields(span)] == [
        *("line", "col", "end_line", "end_col", "start", "end")
    ]
    assert dataclasses.is_dataclass(ast.Span(1, 2, 3, 4, 5, 6))
    assert dataclasses.replace(span, line=9) == ast.Span(9, 2, 3, 4, 5, 6)
    assert dataclasses.asdict(span)["end_col"] == 4
    assert span == ast.Span(1, 2, 3, 4, 5, 6)
    assert hash(span) == hash(ast.Span(1, 2, 3, 4, 5, 6))
    assert span != (1, 2, 3, 4, 5, 6)
    assert (1, 2, 3, 4, 5, 6) != span  # noqa: SIM300 - the tuple's own == is asked first
    assert span != ast.Span(1, 2, 3, 4, 5, 7)
    assert copy.deepcopy(span) == span
    assert pickle.loads(pickle.dumps(span)) == span
    assert repr(span) == "Span(line=1, col=2, end_line=3, end_col=4, start=5, end=6)"
    assert span.cover(ast.Span(7, 8, 9, 10, 11, 12)) == ast.Span(1, 2, 9, 10, 5, 12)
    with pytest.raises(AttributeError):
        span.line = 2  # type: ignore[misc]
    match span:
        case ast.Span(line=1, col=col):
            assert col == 2
        case _:
            pytest.fail("a Span matches by its fields")


def test_the_characters_a_pattern_can_start_with() -> None:
    letters = {chr(c) for c in range(ord("a"), ord("z") + 1)}
    letters |= {ch.upper() for ch in letters}
    assert first_chars(r"[A-Za-z_$][A-Za-z0-9_$]*") == letters | {"_", "$"}
    assert first_chars(r"a?b*c") == {"a", "b", "c"}  # what may be skipped counts too
    assert first_chars(r"(?:===|!=)") == {"=", "!"}
    assert first_chars(r"(?![*/])/x") == {"/"}
    assert first_chars(r"\d") == set("0123456789")
    assert {" ", "\t", "\n", "\r"} <= first_chars(r"\s+")
    assert first_chars(r"[^ab]") == ASCII - {"a", "b"}
    assert first_chars(r".") == ASCII  # not read here: anything
    assert first_chars(r"(?i:a)") == ASCII


def _matched(match: Any, source: str, pos: int) -> tuple[str, int, int] | None:
    try:
        found = match(source, pos, len(source))
    except Unexpected:
        return None
    if found is None:
        return None
    return found.lastgroup, *found.span(found.lastgroup)


def test_a_token_is_matched_by_the_terminals_that_can_start_with_its_first_character() -> None:
    sources = [*_bench_corpus(3), *_CORNERS, "x = \u00a0y\u2028 `\u00e9` // é\n/* é */ 'é' ~ #"]
    for source in sources[:-1]:
        dsl_parser.parse_program(source, "f.test.js")  # the states the corpus meets
    loop = dsl_parser._loop
    assert len(loop._terminals) > 20
    for state, (alternatives, flags) in loop._terminals.items():
        whole = lalr_loop._pattern(alternatives, flags, "")
        for source in sources:
            for pos, ch in enumerate(source):
                if ch not in " \t":  # the whole alternation answers after a space
                    chosen = loop._matcher(state, ch)
                    assert _matched(chosen, source, pos) == _matched(whole, source, pos)
