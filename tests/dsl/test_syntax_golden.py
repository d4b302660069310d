"""Golden syntax errors: ``tests/golden/syntax/<case>.test.js`` → ``<case>.err``.

The ``.err`` file holds exactly ``str(err)`` of the ScenarioSyntaxError(s): the
``file:line:col: SyntaxError: message`` line and the caret lines. The file in the
message is the case's path relative to ``tests/golden/syntax/``.

* ``<case>.test.js`` is loaded as a scenario (``load_scenario``: header, then parse,
  then the file-level rules);
* ``helpers/<case>.js`` is loaded as a helper file (``load_helper``, with the real
  built-in names);
* ``helpers/<case>/`` is a set of helper files, loaded in name order and joined with
  ``build_helper_table``; its ``.err`` holds every error, one after the other.

``UPDATE_GOLDEN=1 .venv/bin/pytest tests/dsl/test_syntax_golden.py`` rewrites the
``.err`` files from what the parser says now. Read every rewritten file before keeping
it: the message must say plainly what is wrong and the caret must point at it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dsl.builtins import PURE_SIGNATURES
from dsl.errors import ScenarioSyntaxError
from dsl.scenario import build_helper_table, load_helper, load_scenario
from runner.project.signatures import BROWSER_SIGNATURES

GOLDEN_DIR = Path(__file__).resolve().parents[1] / "golden" / "syntax"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
BUILTIN_NAMES = frozenset(PURE_SIGNATURES) | frozenset(BROWSER_SIGNATURES)


def _cases() -> list[Path]:
    scenarios = sorted(GOLDEN_DIR.glob("*.test.js"))
    helpers = sorted((GOLDEN_DIR / "helpers").glob("*.js"))
    helper_sets = sorted(p for p in (GOLDEN_DIR / "helpers").iterdir() if p.is_dir())
    return [*scenarios, *helpers, *helper_sets]


CASES = _cases()


def _rel(path: Path) -> str:
    return path.relative_to(GOLDEN_DIR).as_posix()


def _err_path(case: Path) -> Path:
    if case.is_dir():
        return case.with_name(case.name + ".err")
    return case.with_name(case.name.removesuffix(".test.js").removesuffix(".js") + ".err")


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def errors_of(case: Path) -> str:
    """Every syntax error the case produces, as the user would read them."""
    if case.is_dir():
        helpers = [
            load_helper(_read(p), _rel(p), p.stem, BUILTIN_NAMES) for p in sorted(case.glob("*.js"))
        ]
        _, errors = build_helper_table(helpers)
        assert errors, f"{_rel(case)}: expected at least one error"
        return "\n".join(str(err) for err in errors) + "\n"
    try:
        if case.name.endswith(".test.js"):
            load_scenario(_read(case), _rel(case), case.name.removesuffix(".test.js"))
        else:
            load_helper(_read(case), _rel(case), case.stem, BUILTIN_NAMES)
    except ScenarioSyntaxError as err:
        return str(err) + "\n"
    pytest.fail(f"{_rel(case)} parsed without a syntax error")


def test_there_are_cases() -> None:
    assert len(CASES) >= 45
    orphans = {
        _rel(p) for p in GOLDEN_DIR.rglob("*.err") if not any(_err_path(c) == p for c in CASES)
    }
    assert not orphans, f".err files without a case: {sorted(orphans)}"


@pytest.mark.parametrize("case", CASES, ids=_rel)
def test_golden_syntax_error(case: Path) -> None:
    actual = errors_of(case)
    expected_path = _err_path(case)
    if UPDATE:
        expected_path.write_text(actual, encoding="utf-8")
        return
    assert expected_path.exists(), f"run with UPDATE_GOLDEN=1 to create {_rel(expected_path)}"
    assert actual == _read(expected_path)


@pytest.mark.parametrize("case", [c for c in CASES if not c.is_dir()], ids=_rel)
def test_caret_line_is_the_source_line(case: Path) -> None:
    """The quoted line is the file's line at ``err.line``, and the caret lies within it."""
    source = _read(case)
    try:
        if case.name.endswith(".test.js"):
            load_scenario(source, _rel(case), case.stem)
        else:
            load_helper(source, _rel(case), case.stem, BUILTIN_NAMES)
    except ScenarioSyntaxError as err:
        lines = source.split("\n")
        # A header line that is missing altogether is reported on the line it should be.
        assert 1 <= err.line <= len(lines) + (not err.source_line)
        if err.source_line:
            assert err.source_line == lines[err.line - 1]
            assert 0 <= err.col <= len(err.source_line)
    else:  # pragma: no cover - test_golden_syntax_error reports it
        pytest.fail("no error")
