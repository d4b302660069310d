"""The project index cache against the CLI's own start-up, in one run.

Generates a project of 1,000 scenarios of 50 lines (and a helper file) in a temporary
folder, then times as subprocesses, each the median of ``--repeat`` runs:

- ``unotest --version`` (the reference: interpreter start and the CLI's imports);
- ``unotest list --json`` cold (no ``unotest/.cache/``: every file parsed and checked);
- ``unotest list --json`` warm (nothing changed: the cache answers);
- ``unotest check`` warm.

and prints each time and its ratio to ``--version`` (issue 19's target: warm ≤ 4×).
It asserts nothing.

    .venv/bin/python bench/index_cache.py [--scenarios 1000] [--lines 50] [--repeat 5]
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_STATEMENTS = [
    'goto("/catalog.html?page={n}")',
    'click(role("button", "Add item {n}"))',
    'fill("Email", `user{n}@example.com`)',
    "let total_{n} = {n} * 3 + 7 / 2",
    'expect_text(testid("total"), `Total: ${{{n} * 2}} EUR`)',
    'if (count(css("#cart li")) > {n}) {{ log("many", {n}) }}',
    'const names_{n} = ["Teapot", "Kettle", "Cup {n}"]',
    'for (const name of ["Teapot", "Cup {n}"]) {{ click(role("button", `Add ${{name}}`)) }}',
    'let ok_{n} = is_visible("Checkout") && greet("x{n}") != ""',
    'let data_{n} = {{ id: {n}, tags: ["a", "b"], nested: {{ deep: true }} }}',
]

_HELPER = """\
function greet(name) {
  return `hello ${name}`
}
"""


def _scenario(seed: int, lines: int) -> str:
    rng = random.Random(seed)
    body = [
        "  " + _STATEMENTS[rng.randrange(len(_STATEMENTS))].format(n=i) for i in range(lines - 5)
    ]
    head = [f"// id-bench-{seed}", f"// Benchmark scenario {seed}", "// #123456"]
    return "\n".join([*head, f"function test_bench_{seed}() {{", *body, "}", ""])


def _make_project(root: Path, scenarios: int, lines: int) -> None:
    e2e = root / "unotest" / "e2e"
    (e2e / "_helpers").mkdir(parents=True)
    (e2e / "_helpers" / "text.js").write_text(_HELPER, encoding="utf-8")
    (root / "unotest.config.yaml").write_text("baseURL: http://127.0.0.1:9\n", encoding="utf-8")
    for i in range(scenarios):
        folder = e2e / f"group{i // 100:02d}"
        folder.mkdir(exist_ok=True)
        (folder / f"flow{i:04d}.test.js").write_text(_scenario(i, lines), encoding="utf-8")


def _unotest() -> list[str]:
    found = Path(sys.executable).with_name("unotest")
    return [str(found)] if found.exists() else [sys.executable, "-m", "unotest"]


def _time(cmd: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.decode()[:500]}")
    return elapsed


def _median(cmd: list[str], cwd: Path, repeat: int, before: Path | None = None) -> float:
    times = []
    for _ in range(repeat):
        if before is not None:
            shutil.rmtree(before, ignore_errors=True)
        times.append(_time(cmd, cwd))
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=1000)
    parser.add_argument("--lines", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    unotest = _unotest()
    with tempfile.TemporaryDirectory(prefix="unotest-bench-index-") as tmp:
        root = Path(tmp)
        _make_project(root, args.scenarios, args.lines)
        cache = root / "unotest" / ".cache"
        version = _median([*unotest, "--version"], root, args.repeat)
        cold = _median([*unotest, "list", "--json"], root, max(1, args.repeat // 2), cache)
        _time([*unotest, "list", "--json"], root)  # make sure the cache is there
        warm_list = _median([*unotest, "list", "--json"], root, args.repeat)
        warm_check = _median([*unotest, "check"], root, args.repeat)
    print(f"{args.scenarios} scenarios of {args.lines} lines, median of {args.repeat} runs")
    print(f"  unotest --version        {version * 1000:8.1f} ms   1.00x")
    for label, seconds in (
        ("cold list --json", cold),
        ("warm list --json", warm_list),
        ("warm check", warm_check),
    ):
        print(f"  unotest {label:<17}{seconds * 1000:8.1f} ms  {seconds / version:5.2f}x")
    print("target (issue 19 item 4): warm <= 4x --version")


if __name__ == "__main__":
    main()
