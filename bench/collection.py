"""A collection of 24 flows three ways, same run, same site, same browser, 2 at a time.

1. ``unotest collection bench --workers 2``: two workers, as lanes of one worker process
   by default (one driver, one browser, a fresh context per scenario; ``--lanes 1``
   passed on: a process and a browser each).
2. The same flows as pytest tests with pytest-playwright, ``pytest -n 2``
   (pytest-xdist): the reference for "one browser per worker, one context per test".
   A generated conftest launches the same Chromium with the same flags
   (``runner.browser.launch.resolve_executable`` and ``CHROMIUM_ARGS``).
3. The same flows as a Playwright Test spec, ``playwright test --workers 2``, when
   ``@playwright/test`` resolves next to this repository (``node`` finds it); the
   bench says which peers are not installed and compares with the fastest measured.
4. Each scenario as its own ``unotest e2e`` process, two processes at a time: what a
   shell loop or a naive CI matrix would do (a browser launch per scenario).

The collection and its peers run ``--repeat`` times each, interleaved; medians.

Everything is generated into a temporary directory; the site is served on 127.0.0.1 by
this script. Printed: wall times and ratios, and what a scenario costs inside a warm
worker, which must be the price of a fresh context plus tens of milliseconds, not a
browser launch:

- *startup*: from launching ``unotest collection`` to its first ``scenario-started``;
- *warm per scenario*: (collection wall time - startup) / scenarios per worker;
- *besides its steps*: from the run directories, the time of each run outside its
  steps (run directory, fresh context and page, closing) plus the gap between two
  scenarios of one worker (report, dispatch); minus Playwright's own new context +
  page + close, measured with as many browsers busy at once, this is unotest's share.

    .venv/bin/python bench/collection.py [--scenarios 24] [--parallel 2] [--repeat 3]
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import itertools
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench_common import UNOTEST, read_events, run_timed, serve, spread, write_project
from proc_cpu import ProcessCpu

from runner.browser.launch import CHROMIUM_ARGS, resolve_executable

HERE = Path(__file__).resolve().parent
SITE = HERE / "collection_flows"
COLLECTION = "unotest collection"  # its name in the CPU report
MEMORY = " (memory)"  # a runner's peak memory, beside its CPU in the same readings

# Three flows, each in 8 variants: (unotest body, pytest body), formatted with {n}.
FLOWS = [
    (
        """\
  goto("/index.html")
  expect_title("Bench shop")
  click(role("link", "Greeting form"))
  expect_visible(role("heading", "Greeting"))
  fill("Name", "user-{n}")
  click(role("button", "Greet"))
  expect_text(css("#out"), "Hello, user-{n}!")
""",
        """\
    page.goto("/index.html")
    expect(page).to_have_title("Bench shop")
    page.get_by_role("link", name="Greeting form").click()
    expect(page.get_by_role("heading", name="Greeting")).to_be_visible()
    page.get_by_label("Name").fill("user-{n}")
    page.get_by_role("button", name="Greet").click()
    expect(page.locator("#out")).to_have_text("Hello, user-{n}!")
""",
    ),
    (
        """\
  goto("/list.html")
  for (const i of range({n} % 4 + 2)) {{
    fill("Item", "item " + str(i))
    click(role("button", "Add"))
  }}
  expect_count(css("#list li"), {n} % 4 + 2)
  expect_text(testid("count"), "{count} items")
""",
        """\
    page.goto("/list.html")
    for i in range({n} % 4 + 2):
        page.get_by_label("Item").fill(f"item {{i}}")
        page.get_by_role("button", name="Add").click()
    expect(page.locator("#list li")).to_have_count({n} % 4 + 2)
    expect(page.get_by_test_id("count")).to_have_text("{count} items")
""",
    ),
    (
        """\
  goto("/settings.html")
  check(label("Dark mode"))
  select(label("Language"), "fr")
  click(role("button", "Save"))
  expect_text(css("#saved"), "dark=on lang=fr")
  expect_checked(label("Dark mode"))
""",
        """\
    page.goto("/settings.html")
    page.get_by_label("Dark mode").check()
    page.get_by_label("Language").select_option("fr")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#saved")).to_have_text("dark=on lang=fr")
    expect(page.get_by_label("Dark mode")).to_be_checked()
""",
    ),
]

# The same flows for Playwright Test (``@playwright/test``), formatted with {n}.
PW_FLOWS = [
    """\
  await page.goto("/index.html");
  await expect(page).toHaveTitle("Bench shop");
  await page.getByRole("link", {{ name: "Greeting form" }}).click();
  await expect(page.getByRole("heading", {{ name: "Greeting" }})).toBeVisible();
  await page.getByLabel("Name").fill("user-{n}");
  await page.getByRole("button", {{ name: "Greet" }}).click();
  await expect(page.locator("#out")).toHaveText("Hello, user-{n}!");
""",
    """\
  await page.goto("/list.html");
  for (let i = 0; i < {n} % 4 + 2; i++) {{
    await page.getByLabel("Item").fill("item " + i);
    await page.getByRole("button", {{ name: "Add" }}).click();
  }}
  await expect(page.locator("#list li")).toHaveCount({n} % 4 + 2);
  await expect(page.getByTestId("count")).toHaveText("{count} items");
""",
    """\
  await page.goto("/settings.html");
  await page.getByLabel("Dark mode").check();
  await page.getByLabel("Language").selectOption("fr");
  await page.getByRole("button", {{ name: "Save" }}).click();
  await expect(page.locator("#saved")).toHaveText("dark=on lang=fr");
  await expect(page.getByLabel("Dark mode")).toBeChecked();
""",
]
PW_CONFIG = """\
module.exports = {{
  testDir: ".",
  fullyParallel: true,
  reporter: "line",
  use: {{ baseURL: {base_url}, launchOptions: {{ executablePath: {executable}, args: {args} }} }},
}};
"""
FIND_PW_TEST = "console.log(require.resolve('@playwright/test'))"


def _playwright_test(cwd: Path) -> Path | None:
    """Where ``@playwright/test`` resolves from ``cwd`` (``node`` itself, as ``npx
    playwright test`` would), or ``None`` when node or the package is missing."""
    try:
        done = subprocess.run(
            ["node", "-e", FIND_PW_TEST], cwd=cwd, capture_output=True, text=True, check=False
        )
    except FileNotFoundError:
        return None
    return Path(done.stdout.strip()) if done.returncode == 0 and done.stdout.strip() else None


def _make_playwright_test(
    root: Path,
    flows: list[tuple[str, str, str]],
    base_url: str,
    executable: str | None,
    package: Path,
) -> None:
    """The flows as one spec file; the package is required by its path, so the spec
    finds it from a temporary folder."""
    root.mkdir()
    (root / "playwright.config.js").write_text(
        PW_CONFIG.format(
            base_url=json.dumps(base_url),
            executable=json.dumps(executable),
            args=json.dumps(list(CHROMIUM_ARGS)),
        ),
        encoding="utf-8",
    )
    tests = [f"const {{ test, expect }} = require({json.dumps(str(package))});\n"]
    for n, (name, _, _) in enumerate(flows):
        body = PW_FLOWS[n % len(PW_FLOWS)].format(n=n, count=n % 4 + 2)
        tests.append(f"\ntest({json.dumps(name)}, async ({{ page }}) => {{\n{body}}});\n")
    (root / "flows.spec.js").write_text("".join(tests), encoding="utf-8")


CONFTEST = """\
import pytest

from runner.browser.launch import CHROMIUM_ARGS, resolve_executable


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    executable = resolve_executable("chromium", None)
    extra = {"executable_path": executable} if executable else {}
    return {**browser_type_launch_args, **extra, "args": list(CHROMIUM_ARGS)}
"""


def make_flows(count: int) -> list[tuple[str, str, str]]:
    """(name, unotest body, pytest body) for ``count`` scenarios (``bench/pool.py`` runs
    them too)."""
    flows = []
    for n in range(count):
        unotest_body, pytest_body = FLOWS[n % len(FLOWS)]
        values = {"n": n, "count": n % 4 + 2}
        flows.append((f"flow-{n:02d}", unotest_body.format(**values), pytest_body.format(**values)))
    return flows


def make_project(root: Path, config: str, flows: list[tuple[str, str, str]]) -> None:
    """The flows as scenarios of a project with ``config``, and the collection ``bench``
    of them all (``bench/pool.py`` makes its two projects so)."""
    scenarios = {
        name: f"// id-{name}\n// Bench {name}\n// #0f766e\n"
        f"function test_{name.replace('-', '_')}() {{\n{body}}}\n"
        for name, body, _ in flows
    }
    collections = write_project(root, config, scenarios) / "unotest" / "e2e" / "_collections"
    collections.mkdir()
    (collections / "bench.yaml").write_text(
        "scenarios:\n" + "".join(f"  - {name}\n" for name, _, _ in flows), encoding="utf-8"
    )


def _make_pytest(root: Path, flows: list[tuple[str, str, str]]) -> None:
    root.mkdir()
    (root / "conftest.py").write_text(CONFTEST, encoding="utf-8")
    tests = ["from playwright.sync_api import expect\n"]
    for name, _, body in flows:
        tests.append(f"\n\ndef test_{name.replace('-', '_')}(page):\n{body}")
    (root / "test_flows.py").write_text("".join(tests), encoding="utf-8")


def collection_events(project: Path) -> tuple[Path, list[dict[str, Any]], list[dict[str, Any]]]:
    """The project's runs folder, the events of its one run of the collection ``bench``,
    and of those its ``scenario-started`` (``bench/pool.py`` reads them too)."""
    runs = project / "unotest" / ".runs"
    (collection,) = [d for d in runs.iterdir() if d.name.startswith("bench-")]
    events = read_events(collection / "steps.jsonl")
    starts = [e for e in events if e["kind"] == "collection-run:scenario-started"]
    return runs, events, starts


def _analyse(project: Path, launched_ms: float, wall_s: float, parallel: int) -> dict[str, float]:
    """Startup, warm per-scenario time and runner overhead from the run directories."""
    runs, events, starts = collection_events(project)
    startup_s = (starts[0]["t"] - launched_ms) / 1000
    per_worker = len(starts) / parallel
    overheads = []
    for event in starts:
        steps = read_events(runs / event["scenarioRunId"] / "steps.jsonl")
        run_ms = steps[-1]["t"] - steps[0]["t"]  # run:started .. run:finished
        step_times = [e["t"] for e in steps if e["kind"] in ("step:started", "step:ok")]
        overheads.append(run_ms - (max(step_times) - min(step_times)))
    # Between two scenarios of one worker: report, dispatch, next run directory.
    finished = {
        e["scenarioRunId"]: e["t"] for e in events if e["kind"].endswith("scenario-finished")
    }
    # By worker (lane): the lanes of one process run side by side, each its own series.
    by_worker: dict[int, list[tuple[int, str]]] = {}
    processes = set()
    for event in starts:
        manifest = json.loads((runs / event["scenarioRunId"] / "manifest.json").read_text())
        processes.add(manifest["pid"])
        by_worker.setdefault(event["worker"], []).append((event["t"], event["scenarioRunId"]))
    gaps = []
    for items in by_worker.values():
        items.sort()
        for (_, previous), (start, _) in itertools.pairwise(items):
            gaps.append(start - finished[previous])
    return {
        "startup_s": startup_s,
        "warm_per_scenario_ms": (wall_s - startup_s) * 1000 / per_worker,
        "overhead_ms": statistics.mean(overheads) + (statistics.mean(gaps) if gaps else 0),
        "in_run_overhead_ms": statistics.mean(overheads),
        "gap_ms": statistics.mean(gaps) if gaps else 0.0,
        "workers": len(processes),
    }


CONTEXT_LOOP = """\
import json, sys, time
from playwright.sync_api import sync_playwright

executable, base_url, rounds = sys.argv[1] or None, sys.argv[2], int(sys.argv[3])
with sync_playwright() as playwright:
    browser = playwright.chromium.launch(
        executable_path=executable, args=json.loads(sys.argv[4]), headless=True
    )
    times = []
    for _ in range(rounds + 1):
        start = time.perf_counter()
        context = browser.new_context(base_url=base_url)
        context.new_page()
        context.close()
        times.append((time.perf_counter() - start) * 1000)
    browser.close()
print(sum(times[1:]) / rounds)
"""


def _context_cost(executable: str | None, base_url: str, parallel: int, rounds: int = 12) -> float:
    """Mean ms of Playwright's own fresh context + page + close in a warm browser, with
    ``parallel`` browsers busy at once as in the collection: the part of a scenario's
    overhead that any runner with isolated contexts pays."""
    command = [
        sys.executable,
        "-c",
        CONTEXT_LOOP,
        executable or "",
        base_url,
        str(rounds),
        json.dumps(list(CHROMIUM_ARGS)),
    ]
    with ThreadPoolExecutor(parallel) as pool:
        outputs = list(pool.map(lambda _: run_timed(command, HERE)[1], range(parallel)))
    return statistics.mean(float(out) for out in outputs)


def _pytest_command(pytest_dir: Path, parallel: int, base_url: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-n",
        str(parallel),
        "--browser",
        "chromium",
        "--base-url",
        base_url,
        str(pytest_dir),
    ]


def _run_peers(
    base: Path, flows: list[tuple[str, str, str]], base_url: str, args: argparse.Namespace
) -> tuple[dict[str, tuple[list[str], Path]], list[str]]:
    """The peers' commands (name -> argv and the folder to run it in) and which peers
    are not installed."""
    executable = resolve_executable("chromium", None)
    peers: dict[str, tuple[list[str], Path]] = {}
    missing: list[str] = []
    pytest_dir = base / "pytest"
    _make_pytest(pytest_dir, flows)
    if importlib.util.find_spec("pytest_playwright") and importlib.util.find_spec("xdist"):
        name = f"pytest-playwright, pytest -n {args.parallel}"
        peers[name] = (_pytest_command(pytest_dir, args.parallel, base_url), pytest_dir)
    else:
        missing.append("pytest-playwright and pytest-xdist (pip install both)")
    found = _playwright_test(HERE.parent)
    if found is None:
        missing.append("Playwright Test (npm install @playwright/test, next to this repository)")
    else:
        pw_dir = base / "playwright-test"
        _make_playwright_test(pw_dir, flows, base_url, executable, found)
        cli = found.parent / "cli.js"
        command = ["node", str(cli), "test", "--workers", str(args.parallel)]
        peers[f"Playwright Test --workers {args.parallel}"] = (command, pw_dir)
    return peers, missing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=24)
    parser.add_argument("--parallel", type=int, default=2, help="workers / processes at once")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each, interleaved")
    parser.add_argument(
        "--lanes", type=int, help="unotest's --lanes (default: unotest's own default)"
    )
    parser.add_argument(
        "--cpu",
        action="store_true",
        help="also the CPU time and peak memory (PSS) of each run's processes, by kind "
        "(Linux: reads /proc)",
    )
    args = parser.parse_args()
    flows = make_flows(args.scenarios)
    executable = resolve_executable("chromium", None)
    with tempfile.TemporaryDirectory(prefix="unotest-bench-") as tmp:
        base = Path(tmp)
        server, base_url = serve(SITE)
        project = base / "project"
        make_project(project, f"baseURL: {base_url}\nheadless: true\ntrace: off\n", flows)
        peers, missing = _run_peers(base, flows, base_url, args)

        # Warm the file cache (Python, Playwright's driver, Chromium) for every mode.
        run_timed([UNOTEST, "e2e", flows[0][0]], project)
        collection_times: list[float] = []
        peer_times: dict[str, list[float]] = {name: [] for name in peers}
        cpu: dict[str, list[dict[str, float]]] = {}
        run = functools.partial(_run_measured, cpu if args.cpu else None)
        lanes = ["--lanes", str(args.lanes)] if args.lanes is not None else []
        stats: dict[str, float] = {}
        for _ in range(args.repeat):
            shutil.rmtree(project / "unotest" / ".runs", ignore_errors=True)
            launched_ms = time.time() * 1000
            collection_s, _ = run(
                COLLECTION,
                [UNOTEST, "collection", "bench", "--workers", str(args.parallel), *lanes],
                project,
            )
            collection_times.append(collection_s)
            if not stats or collection_s <= min(collection_times):
                stats = _analyse(project, launched_ms, collection_s, args.parallel)
            for name, (command, cwd) in peers.items():
                elapsed, out = run(name, command, cwd)
                if "pytest" in name and f"{args.scenarios} passed" not in out:
                    sys.exit(f"pytest did not pass every test:\n{out}")
                peer_times[name].append(elapsed)

        start = time.perf_counter()
        with ThreadPoolExecutor(args.parallel) as pool:
            list(pool.map(lambda flow: run_timed([UNOTEST, "e2e", flow[0]], project), flows))
        separate_s = time.perf_counter() - start
        context_ms = _context_cost(executable, base_url, args.parallel)
        server.shutdown()
    _report(args, executable, collection_times, peer_times, missing, separate_s, stats, context_ms)
    if cpu:
        _report_cpu(cpu)


def _report(
    args: argparse.Namespace,
    executable: str | None,
    collection_times: list[float],
    peer_times: dict[str, list[float]],
    missing: list[str],
    separate_s: float,
    stats: dict[str, float],
    context_ms: float,
) -> None:
    n, p = args.scenarios, args.parallel
    per_worker = n / p
    collection_s = statistics.median(collection_times)
    own_ms = stats["overhead_ms"] - context_ms
    print(f"{n} scenarios, {p} at a time, Chromium {executable or '(Playwright default)'}")
    print(f"medians of {args.repeat} runs each, interleaved")
    print(f"unotest collection --workers {p}:      {collection_s:7.2f} s{spread(collection_times)}")
    peers = {name: statistics.median(times) for name, times in peer_times.items()}
    for name, seconds in peers.items():
        print(f"{name + ':':38s}{seconds:7.2f} s{spread(peer_times[name])}")
    for name in missing:
        print(f"not installed, not measured: {name}")
    print(f"unotest e2e per scenario, {p} at once: {separate_s:7.2f} s")
    if peers:
        fastest = min(peers, key=lambda name: peers[name])
        print(
            f"ratio collection / fastest peer ({fastest}): "
            f"{collection_s / peers[fastest]:5.2f}x (target <= 0.80x)"
        )
        # Each round runs everything back to back: its own ratio is the least touched by
        # the machine's drift between rounds (one busy minute slows both sides of it).
        paired = [c / t for c, t in zip(collection_times, peer_times[fastest], strict=True)]
        print(
            f"  per round: median {statistics.median(paired):.2f}x, "
            f"{min(paired):.2f}x to {max(paired):.2f}x over {len(paired)} rounds"
        )
    print(f"ratio separate e2e / collection:       {separate_s / collection_s:5.2f}x")
    print(
        f"collection startup (launch to first scenario): {stats['startup_s']:.2f} s "
        f"({stats['workers']:.0f} worker processes)"
    )
    print(
        f"warm worker, per scenario, steps included: {stats['warm_per_scenario_ms']:.0f} ms "
        f"= (wall - startup) / {per_worker:g}; separate processes: "
        f"{separate_s * p * 1000 / n:.0f} ms"
    )
    print(
        f"warm worker, per scenario besides its steps: {stats['overhead_ms']:.0f} ms "
        f"({stats['in_run_overhead_ms']:.0f} ms in the run, {stats['gap_ms']:.0f} ms "
        "between two scenarios)"
    )
    print(
        f"  Playwright's own new context + page + close, {p} browsers busy: "
        f"{context_ms:.0f} ms; unotest's own share: {own_ms:.0f} ms"
    )


def _run_measured(
    cpu: dict[str, list[dict[str, float]]] | None, name: str, command: list[str], cwd: Path
) -> tuple[float, str]:
    """``run_timed``, and with ``cpu`` given, the CPU its processes spent, by kind, and their
    peak memory (under ``name + MEMORY``)."""
    if cpu is None:
        return run_timed(command, cwd)
    with ProcessCpu(memory=True) as spent:
        done = run_timed(command, cwd)
    cpu.setdefault(name, []).append(spent.by_kind())
    cpu.setdefault(name + MEMORY, []).append(spent.peak_memory())
    return done


def _report_cpu(cpu: dict[str, list[dict[str, float]]]) -> None:
    """Per runner, the median CPU seconds of a run's processes, by kind: the browsers'
    share is the same for every runner, the rest is the runner's own."""
    print("CPU of each run's processes, medians (s):")
    for name, runs in cpu.items():
        if name.endswith(MEMORY):
            continue
        kinds = sorted({kind for spent in runs for kind in spent})
        parts = [
            f"{kind} {statistics.median(s.get(kind, 0.0) for s in runs):.2f}" for kind in kinds
        ]
        total = statistics.median(sum(spent.values()) for spent in runs)
        print(f"  {name + ':':38s}total {total:5.2f}  ({', '.join(parts)})")
    print("peak memory of each run's processes (PSS, MiB), medians:")
    for name, runs in cpu.items():
        if not name.endswith(MEMORY):
            continue
        kinds = sorted({kind for spent in runs for kind in spent})
        parts = [
            f"{kind} {statistics.median(s.get(kind, 0.0) for s in runs):.0f}" for kind in kinds
        ]
        total = statistics.median(sum(spent.values()) for spent in runs)
        label = name.removesuffix(MEMORY) + ":"
        print(f"  {label:38s}total {total:5.0f}  ({', '.join(parts)})")


if __name__ == "__main__":
    main()
