"""Golden tests for the interpreter: ``tests/golden/run/<case>.test.js`` → ``<case>.expected``.

Each case holds plain functions (no scenario header) and a ``test_main()``. The
expected file is every ``log(...)`` line in order, then one last line:

* ``=> <render(return value)>`` when ``test_main()`` returns, or
* ``!! <errorName> <line>:<col> <message>`` when it fails with a ScriptError
  (line 1-based, column 0-based).

A case may have a helper file beside it, ``<case>.helper.js`` (loaded as
``_helpers/<case>.js``): its functions and consts are the case's helpers. Time is
fake and starts at 0: ``now()`` is 1000 + the seconds slept × 1000, and the only
sleep is expect_poll's wait (its timeout is 5000 ms, as by default).

``UPDATE_GOLDEN=1 .venv/bin/pytest tests/dsl/test_golden_run.py`` rewrites the
expected files from what the interpreter does now. Read every rewritten file before
keeping it: an expected file must say what JavaScript (or language.md, where it
deliberately differs) says, not merely what the interpreter happens to do.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dsl.builtins import PURE_SIGNATURES, PureServices, make_pure_builtins
from dsl.errors import ScriptError
from dsl.interpreter import Interpreter
from dsl.parser import parse_program
from dsl.scenario import HelperTable, build_helper_table, load_helper
from dsl.values import render

GOLDEN_DIR = Path(__file__).resolve().parents[1] / "golden" / "run"
CASES = sorted(p.name.removesuffix(".test.js") for p in GOLDEN_DIR.glob("*.test.js"))
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"

# What env() sees: one set variable, one set to the empty string, nothing else.
ENV = {"BASE_URL": "https://shop.example", "EMPTY_VAR": ""}


class FakeTime:
    """Seconds since the case started; only ``sleep`` moves them."""

    def __init__(self) -> None:
        self.now = 0.0

    def sleep(self, seconds: float) -> None:
        self.now += seconds

    def elapsed(self) -> float:
        return self.now

    def clock_ms(self) -> float:
        return 1000.0 + self.now * 1000.0


def helpers_of(case: str) -> HelperTable:
    path = GOLDEN_DIR / f"{case}.helper.js"
    if not path.exists():
        return HelperTable()
    helper = load_helper(
        path.read_text(encoding="utf-8"), f"_helpers/{case}.js", case, PURE_SIGNATURES
    )
    table, errors = build_helper_table([helper])
    assert not errors
    return table


def run_case(source: str, file: str, helpers: HelperTable | None = None) -> str:
    """The transcript of one case, in the expected file's format."""
    lines: list[str] = []
    time = FakeTime()
    services = PureServices(
        env=ENV.get,
        log=lines.append,
        run_tag="t",
        clock_ms=time.clock_ms,
        sleep=time.sleep,
        elapsed=time.elapsed,
    )
    builtins = make_pure_builtins(services)
    program = parse_program(source, file)
    table = helpers if helpers is not None else HelperTable()
    try:
        interpreter = Interpreter(builtins, table, consts=table.const_values())
        result = interpreter.run(program, "test_main")
    except ScriptError as err:
        lines.append(f"!! {err.name} {err.line}:{err.col} {err.message}")
    else:
        lines.append(f"=> {render(result)}")
    return "\n".join(lines) + "\n"


def test_there_are_cases() -> None:
    assert len(CASES) >= 40


@pytest.mark.parametrize("case", CASES)
def test_golden(case: str) -> None:
    source_path = GOLDEN_DIR / f"{case}.test.js"
    expected_path = GOLDEN_DIR / f"{case}.expected"
    actual = run_case(source_path.read_text(encoding="utf-8"), source_path.name, helpers_of(case))
    if UPDATE:
        expected_path.write_text(actual, encoding="utf-8")
        return
    assert expected_path.exists(), f"{expected_path.name} is missing: run with UPDATE_GOLDEN=1"
    assert actual == expected_path.read_text(encoding="utf-8")
