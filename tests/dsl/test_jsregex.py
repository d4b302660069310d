"""Tests for dsl.jsregex: JavaScript regex literals translated to Python ``re``.

The expectations in MATCH_CASES and REJECTIONS are JavaScript's; when ``node`` is installed,
``test_tables_agree_with_javascript`` checks them against a real JavaScript engine.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import warnings
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsl.jsregex import RegexTranslationError, compile_js_regex, translate


@pytest.fixture(autouse=True)
def _warnings_are_errors() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


# (pattern source, flags, input, expected group(0) of search(), or None for no match)
MATCH_CASES: list[tuple[str, str, str, str | None]] = [
    # ASCII-only class escapes
    (r"\d", "", "٣", None),
    (r"\d+", "", "x٣42", "42"),
    (r"\D", "", "٣", "٣"),
    (r"\w", "", "é", None),
    (r"\w+", "", "éa_1é", "a_1"),
    (r"\W", "", "é", "é"),
    (r"[\w]+", "", "éab", "ab"),
    (r"[^\w]", "", "aé", "é"),
    (r"\s", "", "\u00a0", "\u00a0"),
    (r"\s", "", "\u0085", None),
    (r"\s", "", "\ufeff", "\ufeff"),
    (r"\s", "", "\x1c", None),
    (r"\s+", "", "a\t\n\v\f\r \u2028\u3000b", "\t\n\v\f\r \u2028\u3000"),
    (r"\S", "", "\u0085", "\u0085"),
    (r"[\s]", "", "\u2028", "\u2028"),
    (r"\bfoo\b", "", "éfooé", "foo"),
    (r"\bfoo", "", "afoo", None),
    (r"\Bfoo", "", "éfoo", None),
    (r"\Boo", "", "foo", "oo"),
    (r"[\b]", "", "a\x08", "\x08"),
    # class escapes inside classes, negated ones included
    (r"[\D]+", "", "12ab3", "ab"),
    (r"[^\D]+", "", "ab12", "12"),
    (r"[^\S]", "", "a b", " "),
    (r"[\W\d]+", "", "ab1-2c", "1-2"),
    (r"[\d-z]+", "", "a-z9", "-z9"),
    (r"[\B]", "", "bB", "B"),
    # '.' and line terminators
    (".", "", "\r", None),
    (".", "", "\n", None),
    (".", "", "\u2028", None),
    (".", "", "\u2029", None),
    (".", "", "\u0085", "\u0085"),
    ("a.c", "", "a\rc", None),
    # ^ and $
    ("a$", "", "a\n", None),
    ("a$", "", "ba", "a"),
    ("^a", "", "ba", None),
    ("^b", "", "a\nb", None),
    ("a$", "m", "a\rb", "a"),
    ("^b", "m", "a\rb", "b"),
    ("^b", "m", "a\u2028b", "b"),
    ("^b$", "m", "a\nb\r\nc", "b"),
    ("x^", "m", "x\r", None),
    ("^$", "m", "a\r\rb", ""),
    # [] matches nothing, [^] matches anything
    ("[]", "", "abc", None),
    ("a[]", "", "a", None),
    ("[]*a", "", "a", "a"),
    ("[^]", "", "\n", "\n"),
    ("a[^]c", "", "a\rc", "a\rc"),
    ("[^]*", "", "x\ny", "x\ny"),
    # named groups and backreferences
    (r"(?<y>\d{4})-\k<y>", "", "2024-2024", "2024-2024"),
    (r"(?<y>\d{4})-\k<y>", "", "2024-2025", None),
    (r"(a)\1", "", "aa", "aa"),
    (r"(a)\1", "", "aA", None),
    (r"(a)\1", "i", "aA", "aA"),
    (r"(a)?b\1", "", "b", "b"),
    (r"(a)|b\1", "", "b", "b"),
    (r"\1(a)", "", "aa", "a"),
    (r"(a\1)", "", "aa", "a"),
    (r"(?:(\w)\1)+", "", "aabbc", "aabb"),
    (r"(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)\10", "", "abcdefghijj", "abcdefghijj"),
    (r"\k<a>", "", "k<a>", "k<a>"),
    (r"(?<n>x)\k<n>", "i", "xX", "xX"),
    (r"(\w)\1", "i", "kK", "kK"),
    (r"(\w)\1", "i", "k\u212a", None),
    (r"(é)\1", "i", "éÉ", "éÉ"),
    # lazy quantifiers
    ("a+?", "", "aaa", "a"),
    ("a*?b", "", "aab", "aab"),
    ("<.+?>", "", "<a><b>", "<a>"),
    ("a{2,}?", "", "aaaa", "aa"),
    ("a??b", "", "ab", "ab"),
    # braces that are not quantifiers are literal
    ("a{,5}", "", "a{,5}", "a{,5}"),
    ("{", "", "x{", "{"),
    ("}", "", "}", "}"),
    ("]", "", "]", "]"),
    ("x{a}", "", "x{a}", "x{a}"),
    ("{1", "", "{1", "{1"),
    ("a{2,3", "", "aa{2,3", "a{2,3"),
    ("a{2}", "", "aaa", "aa"),
    ("a{0}b", "", "ab", "b"),
    ("(?:ab){2}", "", "ababab", "abab"),
    # escapes
    (r"\/", "", "a/b", "/"),
    ("a/b", "", "a/b", "a/b"),
    (r"\cJ", "", "a\nb", "\n"),
    (r"\cj", "", "\n", "\n"),
    (r"\c1", "", "\\c1", "\\c1"),
    (r"\c", "", "\\c", "\\c"),
    (r"[\c1]", "", "\x11", "\x11"),
    (r"[\c_]", "", "\x1f", "\x1f"),
    (r"\x41", "", "A", "A"),
    (r"\x4", "", "x4", "x4"),
    (r"\u0041", "", "A", "A"),
    (r"\u004", "", "u004", "u004"),
    (r"\ud83d\ude00", "", "x😀", "😀"),
    (r"\0", "", "\x00", "\x00"),
    (r"\t\v\f", "", "\t\v\f", "\t\v\f"),
    (r"\a\e\z\A\Z\Q\E", "", "aezAZQE", "aezAZQE"),
    (r"\-\ \#\%", "", "- #%", "- #%"),
    (r"\k", "", "k", "k"),
    (r"[\-]", "", "-", "-"),
    # case-insensitive flag: JavaScript's Canonicalize, not Python's folding
    ("abc", "i", "xABC", "ABC"),
    ("[a-z]+", "i", "ABC", "ABC"),
    ("[^a]", "i", "A", None),
    ("k", "i", "\u212a", None),
    ("s", "i", "ſ", None),
    ("[a-z]", "i", "ſ", None),
    ("ſ", "i", "S", None),
    ("ß", "i", "ẞ", None),
    ("σ", "i", "ς", "ς"),
    ("é", "i", "É", "É"),
    ("µ", "i", "μ", "μ"),
    ("i", "i", "İ", None),
    ("ı", "i", "I", None),
    (r"\w", "i", "ſ", None),
    ("ABC", "", "abc", None),
    # characters Python treats as set syntax inside classes
    ("[[]", "", "[", "["),
    ("[a&&b]+", "", "&", "&"),
    ("[--/]+", "", "-./", "-./"),
    ("[a~~b]", "", "~", "~"),
    ("[a||b]", "", "|", "|"),
    ("[[a]]", "", "a]", "a]"),
    (r"[\]]", "", "]", "]"),
    ("[^[]", "", "[a", "a"),
    ("[a-]", "", "-", "-"),
    ("[-a]", "", "-", "-"),
    ("[a-c-e]+", "", "-e", "-e"),
    (r"[\^]", "", "^", "^"),
    ("[x^]", "", "^", "^"),
    # quantified lookaheads (Annex B)
    ("(?=a)*a", "", "a", "a"),
    ("(?=a)+b", "", "b", None),
    ("(?=a){2}a", "", "a", "a"),
    ("(?!a)?a", "", "a", "a"),
    # lookbehind
    (r"(?<=\$)\d+", "", "$42", "42"),
    (r"(?<!\$)\b\d+", "", "$42 17", "17"),
    ("(?<=ab|cd)x", "", "cdx", "x"),
    # alternation and repetition of things that can be empty
    ("a|", "", "b", ""),
    ("(?:a|b)+", "", "abc", "ab"),
    ("(?:a*)*b", "", "aab", "aab"),
    ("(?:a|)*b", "", "aab", "aab"),
    ("(a*)+b", "", "aab", "aab"),
    ("x*", "", "", ""),
]

# Python strings are sequences of code points: these differ from JavaScript's UTF-16 view.
CODE_POINT_CASES: list[tuple[str, str, str, str | None]] = [
    (".", "", "😀", "😀"),
    ("^.$", "", "😀", "😀"),
    ("[^a]", "", "😀", "😀"),
    ("(?:😀)+", "", "😀😀", "😀😀"),
]


@pytest.mark.parametrize(("pattern", "flags", "text", "expected"), MATCH_CASES + CODE_POINT_CASES)
def test_js_semantics(pattern: str, flags: str, text: str, expected: str | None) -> None:
    match = compile_js_regex(pattern, flags).search(text)
    assert (match.group(0) if match else None) == expected


# (pattern source, flags, part of the message, offset, valid JavaScript? None: engine-dependent)
REJECTIONS: list[tuple[str, str, str, int, bool | None]] = [
    ("a)", "", "unmatched ')'", 1, False),
    ("(a", "", "missing ')'", 0, False),
    ("((a)", "", "missing ')'", 0, False),
    ("(?P<x>a)", "", "(?P", 0, False),
    ("(a)(?P=x)", "", "(?P", 3, False),
    ("(?i)a", "", "inline flags", 0, False),
    ("a(?i:b)", "", "inline flags", 1, None),  # ES2025 modifiers
    ("(?#c)", "", "comments", 0, False),
    ("(?>a)", "", "atomic", 0, False),
    ("(?(1)a)", "", "conditional", 0, False),
    ("(?", "", "incomplete group", 0, False),
    ("(?~a)", "", "invalid group", 0, False),
    (r"\u{41}", "", "\\u{...}' needs the u flag", 0, True),
    (r"a\p{L}", "", "property escapes", 1, True),
    (r"\P{L}", "", "property escapes", 0, True),
    ("*a", "", "nothing to repeat", 0, False),
    ("a**", "", "nothing to repeat", 2, False),
    ("a*+", "", "nothing to repeat", 2, False),
    ("a|*", "", "nothing to repeat", 2, False),
    ("(*)", "", "nothing to repeat", 1, False),
    ("^*", "", "assertion", 1, False),
    (r"\b+", "", "assertion", 2, False),
    ("{2}", "", "nothing to repeat", 0, False),
    ("a{2}{3}", "", "nothing to repeat", 4, False),
    ("(?<=a)*", "", "lookbehind cannot be repeated", 6, False),
    ("a{2,1}", "", "out of order", 1, False),
    ("[z-a]", "", "range out of order", 1, False),
    ("[a", "", "unterminated character class", 0, False),
    ("x[^", "", "unterminated character class", 1, False),
    ("a\\", "", "end of the pattern", 1, False),
    ("(?<=a+)b", "", "fixed width", 0, True),
    ("x(?<!a|bc)d", "", "fixed width", 1, True),
    ("(?<1a>x)", "", "invalid capture group name", 0, False),
    ("(?<a", "", "unterminated group name", 0, False),
    ("(?<$a>x)", "", "'$'", 0, True),
    (r"(?<a\u0062>x)", "", "escapes in group names", 0, True),
    ("(?<a>x)(?<a>y)", "", "duplicate", 7, False),
    (r"(?<a>x)\k<b>", "", "does not exist", 7, False),
    (r"(?<a>x)\k", "", "\\k", 7, False),
    (r"[\k](?<a>.)", "", "\\k", 1, False),
    (r"\8", "", "not a backreference", 0, True),
    (r"(a)\2", "", "not a backreference", 3, True),
    (r"\01", "", "legacy octal", 0, True),
    (r"[\1]", "", "legacy octal", 1, True),
    (r"(a)(?<=\1)", "", "inside a lookbehind", 7, True),
    (r"(?:(a)|b)+\1", "", "repeated part", 10, True),
    (r"(a*)+\1", "", "can match the empty string", 5, True),
    (r"(.)\1", "i", "case-insensitive backreference", 3, True),
    (r"(σ)\1", "i", "case-insensitive backreference", 3, True),
    ("(?:a*?)?", "", "empty string", 7, True),
    ("(?:|a)*", "", "empty string", 6, True),
    (r"\ud83d", "", "lone surrogate", 0, True),
    (r"a\ude00", "", "lone surrogate", 1, True),
    ("[😀]", "", "Basic Multilingual Plane", 1, True),
    ("😀+", "", "Basic Multilingual Plane", 1, True),
    ("a{3000000000}", "", "too large", 1, True),
    ("x(?<=a{2147483646}b{2147483646}c{9})", "", "lookbehind is too long", 1, None),
    ("(" * 10_000, "", "nested too deeply", 100, False),
]


@pytest.mark.parametrize(("pattern", "flags", "fragment", "offset", "js_valid"), REJECTIONS)
def test_rejections(
    pattern: str, flags: str, fragment: str, offset: int, js_valid: bool | None
) -> None:
    with pytest.raises(RegexTranslationError) as info:
        compile_js_regex(pattern, flags)
    assert fragment in info.value.message
    assert info.value.offset == offset
    assert str(info.value) == info.value.message
    with pytest.raises(RegexTranslationError):
        translate(pattern, flags)


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ("gg", "regex flag 'g' appears twice"),
        ("gig", "regex flag 'g' appears twice"),
        ("x", "regex flag 'x' is not allowed: flags are a subset of gim"),
        ("s", "regex flag 's' is not allowed: flags are a subset of gim"),
        ("u", "regex flag 'u' is not allowed: flags are a subset of gim"),
        ("y", "regex flag 'y' is not allowed: flags are a subset of gim"),
        ("d", "regex flag 'd' is not allowed: flags are a subset of gim"),
        ("I", "regex flag 'I' is not allowed: flags are a subset of gim"),
    ],
)
def test_flag_errors(flags: str, message: str) -> None:
    for function in (compile_js_regex, translate):
        with pytest.raises(RegexTranslationError) as info:
            function("a", flags)
        assert info.value.message == message
        assert info.value.offset == -1


@pytest.mark.parametrize("flags", ["", "g", "i", "m", "gim", "mig"])
def test_valid_flags(flags: str) -> None:
    assert compile_js_regex("a", flags).search("A" if "i" in flags else "a")


def test_translate_is_self_contained() -> None:
    pattern = translate(r"^\w+$", "im")
    assert isinstance(pattern, str)
    compiled = compile_js_regex(r"^\w+$", "im")
    assert compiled.pattern == pattern
    assert compiled.flags & (re.IGNORECASE | re.MULTILINE) == 0
    assert re.compile(pattern).search("é\rAbc\n") is not None


def test_named_groups_are_python_groups() -> None:
    compiled = compile_js_regex(r"(?<year>\d{4})-(?<month>\d\d)", "")
    assert compiled.groupindex == {"year": 1, "month": 2}
    match = compiled.search("on 2024-05-01")
    assert match is not None
    assert match.group("year", "month") == ("2024", "05")


def test_unset_group_reads_none() -> None:
    match = compile_js_regex(r"(a)?(b)", "").search("b")
    assert match is not None
    assert match.groups() == (None, "b")


def test_error_is_not_re_error() -> None:
    assert not issubclass(RegexTranslationError, re.error)
    error = RegexTranslationError("boom", 3)
    assert (error.message, error.offset, str(error)) == ("boom", 3, "boom")


def test_deep_nesting_is_an_error_not_a_recursion_error() -> None:
    with pytest.raises(RegexTranslationError, match="nested too deeply"):
        compile_js_regex("(" * 10_000 + "a" + ")" * 10_000, "")
    with pytest.raises(RegexTranslationError, match="nested too deeply"):
        compile_js_regex("(?:" * 5_000 + ")" * 5_000, "i")


def test_maximum_nesting_compiles() -> None:
    assert compile_js_regex("(?=" * 100 + "a" + ")*" * 100, "im").search("a")
    assert compile_js_regex("(" * 100 + "a" + ")" * 100, "").search("a")


def test_no_future_warning_for_set_syntax() -> None:
    # The autouse fixture already turns warnings into errors; be explicit here anyway.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for source in [
            "[[]",
            "[a&&b]",
            "[--a]",
            "[!--]",
            "[a~~b]",
            "[a||b]",
            "[[:alpha:]]",
            "[\\[-\\]]",
        ]:
            compile_js_regex(source, "")
            compile_js_regex(source, "i")


_FLAG_SETS = st.lists(st.sampled_from("gim"), unique=True).map("".join)
_REGEX_ALPHABET = st.sampled_from(
    [*"()[]{}|*+?^$.\\-,:=!<>/PkbBdDwWsSucxp0123456789aAzZ_é٣ſK ", "\n", "\u2028", "😀"]
)


def _check_total(source: str, flags: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            compiled = compile_js_regex(source, flags)
        except RegexTranslationError as exc:
            assert isinstance(exc.message, str)
            assert exc.message
            assert 0 <= exc.offset <= len(source)
        else:
            assert isinstance(compiled, re.Pattern)
            compiled.search("ab\n1 éK_")


@settings(max_examples=300, deadline=None)
@given(source=st.text(), flags=_FLAG_SETS)
def test_arbitrary_text_compiles_or_raises_translation_error(source: str, flags: str) -> None:
    _check_total(source, flags)


@settings(max_examples=500, deadline=None)
@given(source=st.text(_REGEX_ALPHABET, max_size=40), flags=_FLAG_SETS)
def test_regex_like_text_compiles_or_raises_translation_error(source: str, flags: str) -> None:
    _check_total(source, flags)


_NODE = shutil.which("node")
_NODE_SCRIPT = """
const rows = JSON.parse(require("fs").readFileSync(0, "utf8"));
const out = rows.map(([pattern, flags, text]) => {
  try {
    const match = new RegExp(pattern, flags).exec(text);
    return {valid: true, match: match === null ? null : match[0]};
  } catch (error) {
    return {valid: false, match: null};
  }
});
process.stdout.write(JSON.stringify(out));
"""


@pytest.mark.skipif(_NODE is None, reason="node is not installed")
def test_tables_agree_with_javascript() -> None:
    """The expected values above are what a real JavaScript engine does."""
    assert _NODE is not None
    rows = [[p, f, t] for p, f, t, _ in MATCH_CASES] + [[p, f, ""] for p, f, *_ in REJECTIONS]
    completed = subprocess.run(
        [_NODE, "-e", _NODE_SCRIPT],
        input=json.dumps(rows),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    results = json.loads(completed.stdout)
    expected_matches = [expected for *_, expected in MATCH_CASES]
    for (pattern, flags, text), result, expected in zip(
        rows[: len(MATCH_CASES)], results[: len(MATCH_CASES)], expected_matches, strict=True
    ):
        assert result == {"valid": True, "match": expected}, (pattern, flags, text)
    for (pattern, flags, *_, js_valid), result in zip(
        REJECTIONS, results[len(MATCH_CASES) :], strict=True
    ):
        if js_valid is not None:
            assert result["valid"] == js_valid, (pattern, flags)
