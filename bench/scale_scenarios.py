"""``bench/scale.py scenarios``: the viewer on a project of 10,000 scenarios (issue 34).

Generates ``--count`` scenarios (default 10,000: 100 folders of ``--per-folder`` 100),
each a small valid scenario calling a helper, in a temporary folder (or ``--dir``, kept
and reused when it already holds that many), starts a real ``unotest view`` on it and
measures, printing absolute times and ``os.getloadavg()`` before and after:

- ``GET /api/scenarios``: the first answer after the viewer listens (the index loads
  once, ahead, when the file watch is in place: a page opened at once waits for it), then
  the median (p50) and worst of ``--requests`` (20) more; the same after one scenario file
  is rewritten (the watcher bumps the generation: the next answer loads again, with the
  memo); ``GET /api/problems`` (the static check once per generation) likewise;
- the viewer's RSS (``/proc/<pid>/status``) before and after 200 requests, and after
  five more changes (each a load);
- in real Chromium (the one ``runner.browser.launch.resolve_executable`` gives, with
  ``CHROMIUM_ARGS``): page open → the first ``treeitem`` visible (time since the
  navigation started, in the page) and how many tree items the DOM holds; typing a filter
  (one scenario far down; ``@smoke``, which every scenario has; the filter cleared) and
  choosing ``Not run`` in the Status combobox → the tree updated (in the page: the value
  set, until its render is done and a frame has passed; the expected row checked),
  medians of ``--repeat``.

The requests share one kept-alive connection, as a page's do (``--fresh-connections``:
one each, as curl makes them). Asserts nothing.

    .venv/bin/python bench/scale.py scenarios [--count 10000] [--per-folder 100]
                                              [--requests 20] [--repeat 3] [--dir DIR]
                                              [--fresh-connections]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import httpx
from bench_common import clean_env, kept_or_temporary, rss_kib, stop

REPO = Path(__file__).resolve().parent.parent
HELPER = 'function open_form() {\n  goto("/index.html")\n  expect_title("Bench shop")\n}\n'


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.1f} ms"


# ---------------------------------------------------------------------------
# the project
# ---------------------------------------------------------------------------


def scenario_name(n: int, per_folder: int) -> str:
    return f"area{n // per_folder:03d}/flow{n:05d}"


def scenario_text(n: int, extra: str = "") -> str:
    body = "".join(
        f'  fill("Name", "user-{j}")\n  click(role("button", "Greet"))\n'
        f'  expect_text(css("#out"), "Hello, user-{j}!")\n'
        for j in range(3)
    )
    return (
        f"// id-flow{n:05d}\n// Flow {n} @smoke\n// #4f46e5\n"
        f"function test_flow() {{\n  open_form()\n{body}{extra}}}\n"
    )


def make_project(root: Path, count: int, per_folder: int) -> None:
    e2e = root / "unotest" / "e2e"
    (e2e / "_helpers").mkdir(parents=True, exist_ok=True)
    (root / "unotest.config.yaml").write_text("baseURL: http://127.0.0.1:9\n")
    (e2e / "_helpers" / "nav.js").write_text(HELPER)
    for n in range(count):
        path = e2e / f"{scenario_name(n, per_folder)}.test.js"
        path.parent.mkdir(exist_ok=True)
        path.write_text(scenario_text(n))


def _count(root: Path) -> int:
    e2e = root / "unotest" / "e2e"
    return sum(1 for _ in e2e.glob("area*/*.test.js")) if e2e.is_dir() else 0


def project(args: argparse.Namespace) -> AbstractContextManager[Path]:
    """The project of ``--count`` scenarios: ``--dir`` kept (and reused when it holds
    that many), else a temporary one."""
    return kept_or_temporary(
        args.dir, lambda root: _count(root) == args.count, lambda root: _generate(root, args)
    )


def _generate(root: Path, args: argparse.Namespace) -> None:
    began = time.perf_counter()
    make_project(root, args.count, args.per_folder)
    print(f"generated {args.count:,} scenarios in {time.perf_counter() - began:.1f} s")


# ---------------------------------------------------------------------------
# the server
# ---------------------------------------------------------------------------


class Viewer:
    """A real ``unotest view`` on the project: its pid, base URL and a client."""

    def __init__(self, proc: subprocess.Popen[str], url: str, keep_alive: bool) -> None:
        self.proc = proc
        self.url = url
        self.base, _, token = url.partition("/?token=")
        limits = None if keep_alive else httpx.Limits(max_keepalive_connections=0)
        self.client = httpx.Client(
            base_url=self.base,
            headers={"Authorization": f"Bearer {token}"},
            timeout=300,
            **({"limits": limits} if limits is not None else {}),
        )

    def get(self, path: str) -> httpx.Response:
        answer = self.client.get(path)
        answer.raise_for_status()
        return answer

    def timed(self, path: str) -> float:
        began = time.perf_counter()
        self.get(path)
        return time.perf_counter() - began

    def rss_kib(self) -> int:
        return rss_kib(self.proc.pid)


def child_env() -> dict[str, str]:
    env = clean_env()
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env["PYTHONSAFEPATH"] = "1"  # the project's unotest/ folder is not the package
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode cached, as an installed package has it
    return env


@contextmanager
def running_viewer(root: Path) -> Iterator[tuple[subprocess.Popen[str], str, float]]:
    """``unotest view`` on ``root``: its process, its URL and how long it took to print
    it (it listens from then on); stopped afterwards."""
    began = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "unotest", "view", "--no-open", "--port", "0"],
        cwd=root,
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        if not url.startswith("http://"):
            raise SystemExit(f"unotest view did not start: {url!r}")
        yield proc, url, time.perf_counter() - began
    finally:
        stop(proc, grace=15)
        if proc.stdout is not None:
            proc.stdout.close()


@contextmanager
def viewer(root: Path, keep_alive: bool) -> Iterator[tuple[Viewer, float]]:
    """The viewer and how long it took to print its URL."""
    with running_viewer(root) as (proc, url, started):
        one = Viewer(proc, url, keep_alive)
        try:
            yield one, started
        finally:
            one.client.close()


def p50_and_worst(took: list[float]) -> str:
    return f"p50 {ms(statistics.median(took)).strip()}, worst {ms(max(took)).strip()}"


def touch_scenario(root: Path, args: argparse.Namespace, round_: int) -> None:
    """Rewrite one scenario file (a line longer each round: its size changes)."""
    n = (round_ * 7919) % args.count
    path = root / "unotest" / "e2e" / f"{scenario_name(n, args.per_folder)}.test.js"
    path.write_text(scenario_text(n, '  log("edited")\n' * (round_ + 1)))


def measure_server(root: Path, one: Viewer, args: argparse.Namespace) -> None:
    first = one.timed("/api/scenarios")
    size = len(one.get("/api/scenarios").content)
    warm = [one.timed("/api/scenarios") for _ in range(args.requests)]
    print(f"  GET /api/scenarios, first       {ms(first)}  ({size:,} bytes)")
    print(f"  GET /api/scenarios, warm        {p50_and_worst(warm)} ({args.requests} requests)")
    first_problems = one.timed("/api/problems")
    problems = [one.timed("/api/problems") for _ in range(args.requests)]
    print(f"  GET /api/problems, first        {ms(first_problems)}")
    print(f"  GET /api/problems, warm         {p50_and_worst(problems)}")
    changed = []
    for round_ in range(args.repeat):
        touch_scenario(root, args, round_)
        time.sleep(1.0)  # the watcher's debounce and its report, with room
        changed.append(one.timed("/api/scenarios"))
    print(f"  … after one file changed        {p50_and_worst(changed)} (the next answer loads)")
    again = [one.timed("/api/scenarios") for _ in range(args.requests)]
    print(f"  … and warm again                {p50_and_worst(again)}")
    before = one.rss_kib()
    routes = ["/api/scenarios", "/api/helpers", "/api/collections", "/api/problems"]
    for n in range(200):
        one.get(routes[n % len(routes)])
    after = one.rss_kib()
    for round_ in range(5):
        touch_scenario(root, args, args.repeat + round_)
        time.sleep(1.0)
        for route in routes:
            one.get(route)
    reloaded = one.rss_kib()
    print(
        f"  viewer RSS                      {before / 1024:.1f} MiB before 200 requests, "
        f"{after / 1024:.1f} MiB after, {reloaded / 1024:.1f} MiB after 5 more changes"
    )


# ---------------------------------------------------------------------------
# the page, in Chromium
# ---------------------------------------------------------------------------

_SET_AND_WAIT = """async ([selector, value, expect, present]) => {
  // The value set as typing or choosing sets it; Preact renders in a microtask after the
  // event, so once a task has run and a frame has passed the tree is updated and drawn.
  const control = document.querySelector(selector);
  const began = performance.now();
  control.value = value;
  const kind = control.tagName === "SELECT" ? "change" : "input";
  control.dispatchEvent(new Event(kind, { bubbles: true }));
  await new Promise((r) => setTimeout(r, 0));
  await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  const took = performance.now() - began;
  const row = document.querySelector(`[role="treeitem"][aria-label="${expect}"]`);
  return [took, Boolean(row) === present];
}"""

_FIRST_ITEM = """() => {
  const item = document.querySelector('[role="treeitem"]');
  return item && item.getBoundingClientRect().height > 0 ? performance.now() : null;
}"""


def measure_page(one: Viewer, args: argparse.Namespace) -> None:
    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(REPO))
    from runner.browser.launch import CHROMIUM_ARGS, resolve_executable

    executable = resolve_executable("chromium", None, headless=True)
    with sync_playwright() as pw:
        launch: dict[str, Any] = {"headless": True, "args": list(CHROMIUM_ARGS)}
        if executable is not None:
            launch["executable_path"] = executable
        browser = pw.chromium.launch(**launch)
        try:
            context = browser.new_context(viewport={"width": 1440, "height": 900})
            for label in ("first open", "second open"):
                page = context.new_page()
                began = time.perf_counter()
                page.goto(one.url)
                in_page = page.wait_for_function(_FIRST_ITEM, timeout=120_000).json_value()
                wall = time.perf_counter() - began
                items = page.locator('[role="treeitem"]').count()
                print(
                    f"  page open → first treeitem      {ms(in_page / 1000)} since navigation "
                    f"({label}; {ms(wall).strip()} from goto; {items} tree items in the DOM)"
                )
                if label == "second open":
                    measure_filters(page, args)
                page.close()
        finally:
            browser.close()


def measure_filters(page: Any, args: argparse.Namespace) -> None:
    far = scenario_name(args.count - 1, args.per_folder)
    top = scenario_name(0, args.per_folder)
    box = 'input[aria-label="Filter"]'
    status = 'select[aria-label="Status"]'
    # Unfiltered, folders are collapsed in a big project (tree_view.js, openByDefault).
    opened = args.count <= 1000 and args.per_folder <= 50
    steps: list[tuple[str, str, str, str, bool]] = [
        (f"filter {far.split('/')[-1]!r} (one, far down)", box, far.split("/")[-1], far, True),
        ("filter cleared", box, "", far, False),
        ("filter '@smoke' (every scenario)", box, "@smoke", top, True),
        ("filter cleared", box, "", top, opened),
        ("Status: Not run (every scenario)", status, "not-run", top, True),
        ("Status: All", status, "all", top, opened),
    ]
    took: dict[str, list[float]] = {}
    for _ in range(args.repeat):
        for label, selector, value, expect, present in steps:
            value_ms, as_expected = page.evaluate(_SET_AND_WAIT, [selector, value, expect, present])
            if not as_expected:
                shown = "shown" if not present else "not shown"
                print(f"  (after {label}: {expect} {shown}, against expectation)")
            took.setdefault(label, []).append(value_ms / 1000)
    for label, times in took.items():
        print(f"  {label:<40} {ms(statistics.median(times))} → tree updated (median)")
    items = page.locator('[role="treeitem"]').count()
    print(f"  tree items in the DOM at the end: {items}")


def scenarios_part(args: argparse.Namespace) -> None:
    print(f"bench/scale.py scenarios: {args.count:,} scenarios; {load()}")
    with project(args) as root:
        print(f"project: {root}")
        with viewer(root, not args.fresh_connections) as (one, started):
            print(f"a real unotest view (listening after {started:.2f} s):")
            measure_server(root, one, args)
            print(f"  ({load()})")
            print("the page, in Chromium:")
            measure_page(one, args)
    print(f"done; {load()}")


def project_subcommand(
    parts: Any, name: str, summary: str, run: Callable[[argparse.Namespace], None]
) -> argparse.ArgumentParser:
    """A subcommand of ``bench/scale.py`` on this project (``scale_watch`` uses it too):
    ``--count``, ``--per-folder`` and ``--dir`` (``project``); its own options follow."""
    sub: argparse.ArgumentParser = parts.add_parser(name, help=summary)
    sub.add_argument("--count", type=int, default=10_000, help="scenarios")
    sub.add_argument("--per-folder", type=int, default=100, help="scenarios per folder")
    sub.add_argument("--dir", help="generate here (kept, reused when it holds --count)")
    sub.set_defaults(run=run)
    return sub


def add_parser(parts: Any) -> None:
    """``scenarios`` as a subcommand of ``bench/scale.py``."""
    summary = "10,000 scenarios: /api/scenarios, the tree"
    sub = project_subcommand(parts, "scenarios", summary, scenarios_part)
    sub.add_argument("--requests", type=int, default=20, help="warm requests per figure")
    sub.add_argument("--repeat", type=int, default=3, help="medians of this many")
    sub.add_argument("--fresh-connections", action="store_true", help="a connection per request")
