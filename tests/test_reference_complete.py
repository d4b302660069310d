"""docs/reference.md documents every built-in ``unotest check`` knows, and the docs point
nowhere outside the repository.

The convention the reference follows, and these tests check:

- **One entry per built-in**: a level-3 heading made only of the built-in's call forms in
  code spans, ``### `click(t, options?)` `` or, for a built-in with two forms,
  ``### `press(key)` or `press(t, key)` ``. A parameter ending in ``?`` is optional and
  ``...values`` takes any number, so the heading's forms give the arity ``check`` must
  allow (:data:`dsl.builtins.PURE_SIGNATURES`, :data:`runner.project.signatures.
  BROWSER_SIGNATURES`). The entry is the text down to the next heading of level 1 to 3.
- **Every option key** of the built-in (:data:`dsl.builtins.PURE_OPTIONS`,
  :data:`runner.project.signatures.BROWSER_OPTIONS`) is named in a code span of its entry
  (``{timeout, waitUntil}``).
- **Every entry** names its counterpart (a ``**Playwright**`` or ``**JavaScript /
  Python**`` line) and has an example, a ``js`` code block; every example of the page
  passes ``unotest check`` (statements are checked as the body of a test function; a
  block that declares functions is checked as a whole file).
- **No pointer outside the repository** in README.md and docs/*.md: every relative link
  leads to a file of the repository (and to a heading there, when it names one), and no
  text points at a specification kept elsewhere (``spec/``, ``../shared``).

The checks are functions of a text, so the last tests feed them a broken reference and
see each problem reported.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from dsl.builtins import PURE_OPTIONS, PURE_SIGNATURES
from dsl.checker import check_program
from dsl.errors import ScenarioSyntaxError
from dsl.parser import parse_program
from runner.project.signatures import BROWSER_OPTIONS, BROWSER_SIGNATURES

REPO = Path(__file__).resolve().parents[1]
REFERENCE = REPO / "docs" / "reference.md"
SIGNATURES: dict[str, tuple[int, int | None]] = {**PURE_SIGNATURES, **BROWSER_SIGNATURES}
OPTIONS: dict[str, frozenset[str]] = {**PURE_OPTIONS, **BROWSER_OPTIONS}

_FORM = r"`[a-z_][a-z0-9_]*\([^)`]*\)`"
ENTRY_HEADING = re.compile(rf"^### ({_FORM}(?: or {_FORM})*)[ \t]*$", re.MULTILINE)
FORM = re.compile(r"`([a-z_][a-z0-9_]*)\(([^)`]*)\)`")
HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)
FENCE = re.compile(r"^([ \t]*)(```|~~~)(.*)$")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)
OUTSIDE_POINTERS = (
    (re.compile(r"(?<![\w./-])spec/"), "a specification's folder (spec/)"),
    (re.compile(r"\.\./shared\b|(?<![\w-])shared/spec\b"), "the shared folder (../shared)"),
    (re.compile(r"\bproduct specification\b", re.IGNORECASE), "the product specification"),
)


# --- reading a markdown page ---------------------------------------------------------------


def _blank_fences(text: str) -> str:
    """``text`` with the lines of fenced code blocks blanked (every offset kept): a
    ``# comment`` in a bash block is no heading, and a path in an example no link."""
    out: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        match = FENCE.match(line)
        if fence is None and match is not None:
            fence = match.group(2)
            out.append(" " * len(line))
        elif fence is not None:
            if match is not None and match.group(2) == fence and not match.group(3).strip():
                fence = None
            out.append(" " * len(line))
        else:
            out.append(line)
    return "\n".join(out)


def js_blocks(text: str) -> list[tuple[int, str]]:
    """The ``js`` fenced code blocks of ``text``, each with the line it starts on."""
    blocks: list[tuple[int, str]] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if match is None:
            i += 1
            continue
        fence, info, start = match.group(2), match.group(3).strip(), i + 1
        body: list[str] = []
        i += 1
        while i < len(lines) and not (
            (end := FENCE.match(lines[i])) and end.group(2) == fence and not end.group(3).strip()
        ):
            body.append(lines[i])
            i += 1
        i += 1
        if info.split()[:1] == ["js"]:
            blocks.append((start + 1, "\n".join(body)))
    return blocks


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped (backticks too),
    spaces as hyphens."""
    plain = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    return re.sub(r"[^\w\- ]", "", plain.strip().lower()).replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every heading's anchor, a repeated one numbered as GitHub numbers it."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    for match in HEADING.finditer(_blank_fences(text)):
        base = slug(match.group(2))
        number = seen.get(base, 0)
        seen[base] = number + 1
        found.add(base if number == 0 else f"{base}-{number}")
    return found


# --- the reference's entries ---------------------------------------------------------------


@dataclass
class Entry:
    name: str
    line: int
    forms: list[list[str]]
    text: str = ""
    problems: list[str] = field(default_factory=list)


def read_entries(text: str) -> tuple[dict[str, Entry], list[str]]:
    """The entries of a reference, by built-in name, and the problems of their headings
    (two names in one heading, a name with two entries)."""
    searchable = _blank_fences(text)
    headings = [(m.start(), len(m.group(1))) for m in HEADING.finditer(searchable)]
    entries: dict[str, Entry] = {}
    problems: list[str] = []
    for match in ENTRY_HEADING.finditer(searchable):
        line = searchable.count("\n", 0, match.start()) + 1
        forms = FORM.findall(match.group(1))
        names = {name for name, _ in forms}
        if len(names) != 1:
            problems.append(f"line {line}: one heading for several built-ins: {sorted(names)}")
            continue
        name = names.pop()
        if name in entries:
            problems.append(
                f"line {line}: a second entry for {name}() (the first: line {entries[name].line})"
            )
            continue
        following = [start for start, level in headings if start > match.start() and level <= 3]
        end = following[0] if following else len(text)
        entry = Entry(name, line, [_params(params) for _, params in forms])
        entry.text = text[match.end() : end]
        entries[name] = entry
    return entries, problems


def _params(params: str) -> list[str]:
    return [p.strip() for p in params.split(",") if p.strip()]


def heading_arity(forms: list[list[str]]) -> tuple[int, int | None]:
    """The arguments a heading's forms allow: fewest required, most in all (None: any
    number, for a ``...rest`` parameter)."""
    low = min(sum(1 for p in form if not p.endswith("?") and p[:3] != "...") for form in forms)
    if any(p.startswith("...") for form in forms for p in form):
        return low, None
    return low, max(len(form) for form in forms)


def _shown(arity: tuple[int, int | None]) -> str:
    low, high = arity
    return f"{low} or more" if high is None else (str(low) if low == high else f"{low} to {high}")


def reference_problems(
    text: str,
    signatures: Mapping[str, tuple[int, int | None]] = SIGNATURES,
    options: Mapping[str, frozenset[str]] = OPTIONS,
) -> list[str]:
    """What keeps ``text`` from documenting every built-in ``check`` knows."""
    entries, problems = read_entries(text)
    for name in sorted(set(signatures) - set(entries)):
        problems.append(f"{name}(): no entry (a heading ### `{name}(...)`)")
    for name in sorted(set(entries) - set(signatures)):
        problems.append(f"line {entries[name].line}: {name}() is no built-in check knows")
    for name, entry in sorted(entries.items()):
        if name not in signatures:
            continue
        where = f"line {entry.line}: {name}()"
        documented, known = heading_arity(entry.forms), signatures[name]
        if documented != known:
            problems.append(
                f"{where}: the heading takes {_shown(documented)} arguments, check allows "
                f"{_shown(known)}"
            )
        spans = [m.group(2) for m in CODE_SPAN.finditer(_blank_fences(entry.text))]
        for key in sorted(options.get(name, ())):
            if not any(re.search(rf"(?<![\w$]){re.escape(key)}(?![\w$])", s) for s in spans):
                problems.append(f"{where}: its option '{key}' is not named in a code span")
        if "**Playwright**" not in entry.text and "**JavaScript / Python**" not in entry.text:
            problems.append(f"{where}: no counterpart (a **Playwright** line)")
        if not js_blocks(entry.text):
            problems.append(f"{where}: no example (a js code block)")
    return problems


def example_problems(text: str, file: str = "docs/reference.md") -> list[str]:
    """Every ``js`` example of ``text`` that does not pass ``unotest check``."""
    problems: list[str] = []
    for line, block in js_blocks(text):
        if re.search(r"^function\s", block, re.MULTILINE):
            source = block
        else:
            body = "\n".join("  " + row if row else row for row in block.split("\n"))
            source = f"function test_example() {{\n{body}\n}}\n"
        try:
            program = parse_program(source, f"{file}:{line}")
        except ScenarioSyntaxError as err:
            problems.append(f"the example at line {line}: {err}")
            continue
        for diagnostic in check_program(program, {}, SIGNATURES, (), OPTIONS):
            problems.append(f"the example at line {line}: {diagnostic}")
    return problems


# --- pointers outside the repository ------------------------------------------------------


def pointer_problems(path: Path, repo: Path = REPO) -> list[str]:
    """Links of ``path`` that lead out of ``repo`` or to nothing, and text that points at
    a specification kept elsewhere."""
    text = path.read_text(encoding="utf-8")
    where = path.relative_to(repo).as_posix() if path.is_relative_to(repo) else str(path)
    problems: list[str] = []
    for pattern, what in OUTSIDE_POINTERS:
        for match in pattern.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            problems.append(f"{where}:{line}: points at {what}: {match.group(0)!r}")
    searchable = _blank_fences(text)
    for match in LINK.finditer(searchable):
        target = match.group(1)
        line = searchable.count("\n", 0, match.start()) + 1
        if re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path.resolve()
        if not linked.is_relative_to(repo.resolve()):
            problems.append(f"{where}:{line}: links outside the repository: {target}")
        elif not linked.exists():
            problems.append(f"{where}:{line}: links to a file that does not exist: {target}")
        elif (
            anchor
            and linked.suffix == ".md"
            and anchor not in anchors(linked.read_text(encoding="utf-8"))
        ):
            problems.append(f"{where}:{line}: no heading #{anchor} in {linked.name}")
    return problems


DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


# --- the tests -------------------------------------------------------------------------------


def test_every_builtin_check_knows_has_an_entry_with_its_arity_options_and_example() -> None:
    problems = reference_problems(REFERENCE.read_text(encoding="utf-8"))
    assert problems == [], "docs/reference.md:\n" + "\n".join(problems)


def test_every_example_of_the_reference_passes_check() -> None:
    problems = example_problems(REFERENCE.read_text(encoding="utf-8"))
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(REPO).as_posix())
def test_no_link_or_pointer_leads_outside_the_repository(doc: Path) -> None:
    problems = pointer_problems(doc)
    assert problems == [], "\n".join(problems)


def test_the_docs_lead_to_the_reference() -> None:
    for doc in ("README.md", "docs/language.md", "docs/browser.md"):
        assert "reference.md" in (REPO / doc).read_text(encoding="utf-8"), doc


# --- the checks fail when they should ---------------------------------------------------------


def _entry(text: str, name: str) -> str:
    """The heading and text of ``name``'s entry in ``text``."""
    entries, _ = read_entries(text)
    entry = entries[name]
    start = text.index(f"### `{name}(")
    return text[start : text.index(entry.text) + len(entry.text)]


def _new_problems(found: list[str], before: list[str]) -> list[str]:
    """The problems of ``found`` that ``before`` (the real reference's, empty when it is
    complete) does not have, whatever their line numbers."""

    def unplaced(problem: str) -> str:
        return re.sub(r"^line \d+: ", "", problem)

    known = {unplaced(p) for p in before}
    return [p for p in found if unplaced(p) not in known]


def test_a_reference_missing_an_entry_an_option_or_an_arity_is_reported(tmp_path: Path) -> None:
    text = REFERENCE.read_text(encoding="utf-8")
    broken = text.replace(_entry(text, "click"), "")  # no entry for click
    goto = _entry(text, "goto")
    broken = broken.replace(goto, goto.replace("waitUntil", "wait_until"))  # an option gone
    broken = broken.replace("### `wait(ms)`", "### `wait(ms, options?)`")  # a wrong arity
    broken = broken.replace("### `url()`", "### `url()`\n\nNo example here.\n\n### `urls()`")
    (tmp_path / "reference.md").write_text(broken, encoding="utf-8")

    found = reference_problems((tmp_path / "reference.md").read_text(encoding="utf-8"))
    new = _new_problems(found, reference_problems(text))

    assert "click(): no entry (a heading ### `click(...)`)" in new
    assert any("goto(): its option 'waitUntil' is not named" in p for p in new)
    assert any("wait(): the heading takes 1 to 2 arguments, check allows 1" in p for p in new)
    assert any("url(): no counterpart" in p for p in new)
    assert any("url(): no example" in p for p in new)
    assert any("urls() is no built-in check knows" in p for p in new)
    assert len(new) == 6, new


def test_a_new_builtin_or_option_without_documentation_is_reported() -> None:
    """What the test says when a built-in, or an option, is added to check without
    documentation."""
    text = REFERENCE.read_text(encoding="utf-8")
    before = reference_problems(text)
    problems = reference_problems(text, {**SIGNATURES, "expect_shiny": (1, 2)})
    assert _new_problems(problems, before) == [
        "expect_shiny(): no entry (a heading ### `expect_shiny(...)`)"
    ]
    problems = reference_problems(text, SIGNATURES, {**OPTIONS, "click": frozenset({"steps"})})
    new = _new_problems(problems, before)
    assert len(new) == 1 and "click(): its option 'steps' is not named" in new[0], new


def test_a_broken_example_is_reported() -> None:
    problems = example_problems('```js\nclick("Save", {forse: true})\nclik("Save")\n```\n')
    assert len(problems) == 2
    assert "click() has no option 'forse'" in problems[0]
    assert "'clik' is not a function" in problems[1]


def test_a_pointer_outside_the_repository_is_reported(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "other.md").write_text("# Other\n\n## A part\n", encoding="utf-8")
    page = docs / "page.md"
    page.write_text(
        "# Page\n\n"
        "The contract is `spec/language.md` of the product specification.\n"
        "See [the grammar](../../shared/spec/language.md), [other](other.md#a-part),\n"
        "[gone](missing.md), [no part](other.md#nothing) and [the web](https://example.com).\n"
        "```bash\n# not a heading, and [not a link](../../x.md)\n```\n",
        encoding="utf-8",
    )
    problems = pointer_problems(page, tmp_path)
    assert problems == [
        "docs/page.md:3: points at a specification's folder (spec/): 'spec/'",
        "docs/page.md:4: points at the shared folder (../shared): '../shared'",
        "docs/page.md:3: points at the product specification: 'product specification'",
        "docs/page.md:4: links outside the repository: ../../shared/spec/language.md",
        "docs/page.md:5: links to a file that does not exist: missing.md",
        "docs/page.md:5: no heading #nothing in other.md",
    ]
