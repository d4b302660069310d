"""Parse speed of the scenario language against CPython's own parser, in one run.

Generates a corpus of 1,000 scenarios of about 50 lines, parses each with
``dsl.parser.parse_program`` and prints lines per second, then parses Python sources
with the same number of lines using ``ast.parse`` and prints the ratio. The reference
is measured in the same process, interleaved, in CPU time, the fastest pass of each,
so the ratio holds on any machine, even a busy one.

    .venv/bin/python bench/parse.py [--scenarios 1000] [--repeat 3] [--profile]

``--profile`` then parses the corpus once more under ``cProfile`` and prints where the
time went (functions by their own time), to see what the next change should be.
"""

from __future__ import annotations

import argparse
import ast
import cProfile
import pstats
import random
import time

from dsl.parser import parse_program

_STATEMENTS = [
    'goto("/catalog.html?page={n}")',
    'click(role("button", "Add item {n}"))',
    'fill("Email", `user{n}@example.com`)',
    "let total_{n} = price * {n} + tax / 2",
    'expect_text(testid("total"), `Total: ${{total_{n}}} EUR`)',
    'if (count(css("#cart li")) > {n}) {{ log("many", {n}) }}',
    'const names_{n} = ["Teapot", "Kettle", "Cup {n}"]',
    'for (const name of names_{n}) {{ click(role("button", `Add ${{name}}`)) }}',
    'let ok_{n} = matches(url(), /\\/cart\\/\\d+$/) && is_visible("Checkout")',
    'let data_{n} = {{ id: {n}, tags: ["a", "b"], nested: {{ deep: true }} }}',
]
_PY_STATEMENTS = [
    'goto("/catalog.html?page={n}")',
    'click(role("button", "Add item {n}"))',
    'fill("Email", f"user{n}@example.com")',
    "total_{n} = price * {n} + tax / 2",
    'expect_text(testid("total"), f"Total: {{total_{n}}} EUR")',
    'if count(css("#cart li")) > {n}: log("many", {n})',
    'names_{n} = ["Teapot", "Kettle", "Cup {n}"]',
    'for name in names_{n}: click(role("button", f"Add {{name}}"))',
    'ok_{n} = re.search(r"/cart/\\d+$", url()) and is_visible("Checkout")',
    'data_{n} = {{"id": {n}, "tags": ["a", "b"], "nested": {{"deep": True}}}}',
]


def _scenario(seed: int, lines: int) -> str:
    rng = random.Random(seed)
    body = [
        "  " + _STATEMENTS[rng.randrange(len(_STATEMENTS))].format(n=i) for i in range(lines - 6)
    ]
    head = [f"// id-bench-{seed}", f"// Benchmark scenario {seed}", "// #123456"]
    return "\n".join([*head, f"function test_bench_{seed}() {{", *body, "}", ""])


def _python(seed: int, lines: int) -> str:
    rng = random.Random(seed)
    body = [
        "    " + _PY_STATEMENTS[rng.randrange(len(_PY_STATEMENTS))].format(n=i)
        for i in range(lines - 6)
    ]
    head = [f"# id-bench-{seed}", f"# Benchmark scenario {seed}", "# #123456"]
    return "\n".join([*head, f"def test_bench_{seed}():", *body, "    pass", ""])


def _once(fn: object, sources: list[str]) -> float:
    start = time.process_time()
    for i, source in enumerate(sources):
        fn(source, f"bench{i}")  # type: ignore[operator]
    return time.process_time() - start


def _time_both(dsl_sources: list[str], py_sources: list[str], repeat: int) -> tuple[float, float]:
    """The fastest of ``repeat`` passes of each, in CPU time, the two interleaved: on a
    shared, loaded machine wall time measures the neighbours, and the fastest pass is
    the one least disturbed (``timeit``'s advice)."""
    dsl_runs, py_runs = [], []
    for _ in range(repeat):
        dsl_runs.append(_once(parse_program, dsl_sources))
        py_runs.append(_once(lambda source, name: ast.parse(source, name), py_sources))
    return min(dsl_runs), min(py_runs)


def _profile(sources: list[str]) -> None:
    """One more pass, under cProfile (which slows calls more than loops: read it for
    the order of the costs, not their size)."""
    profile = cProfile.Profile()
    profile.enable()
    _once(parse_program, sources)
    profile.disable()
    pstats.Stats(profile).sort_stats("tottime").print_stats(25)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=1000)
    parser.add_argument("--lines", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--profile", action="store_true", help="then print a cProfile")
    args = parser.parse_args()

    dsl_sources = [_scenario(i, args.lines) for i in range(args.scenarios)]
    py_sources = [_python(i, args.lines) for i in range(args.scenarios)]
    dsl_lines = sum(s.count("\n") for s in dsl_sources)
    py_lines = sum(s.count("\n") for s in py_sources)

    dsl_seconds, py_seconds = _time_both(dsl_sources, py_sources, args.repeat)

    dsl_rate = dsl_lines / dsl_seconds
    py_rate = py_lines / py_seconds
    print(f"corpus: {args.scenarios} scenarios, {dsl_lines} lines (python: {py_lines} lines)")
    print(f"unotest parse_program: {dsl_seconds:.3f} s  {dsl_rate:,.0f} lines/s")
    print(f"python ast.parse:      {py_seconds:.3f} s  {py_rate:,.0f} lines/s")
    print(f"ratio (ast.parse speed / unotest speed): {py_rate / dsl_rate:.1f}x")
    if args.profile:
        _profile(dsl_sources)


if __name__ == "__main__":
    main()
