"""The watch daemon's point, measured: a save re-runs a scenario in a warm browser.

One run, one site (``bench/collection_flows``, served on 127.0.0.1 by this script),
one browser (the Chromium a run resolves, with the runner's own flags):

1. ``unotest watch --json`` on a throw-away project whose one scenario is the greeting
   flow, and whose helper ``open_form`` the scenario calls. The bench saves the helper
   (a comment changed) and times, from just before the write, until

   * ``batch.started`` of that save on the daemon's socket (minus the idle window:
     what the daemon itself adds; target p50 at most 250 ms), and
   * ``run.finished`` of the scenario (the whole answer to a save).

2. The same flow as a plain Playwright script (Python, sync API), run as a whole
   process each time: what a save costs without a daemon (Python, Playwright, a
   browser launch, the flow), on the same browser binary with the same flags.
   Target: (1) at most 0.5 times (2).

The two are interleaved, round by round (a save, then a plain run, while the daemon
waits idle), so that both are timed under the same load; the machine's load average
is printed before and after: a figure taken under load is not a figure.

    .venv/bin/python bench/watch_rerun.py [--rounds 10] [--idle-ms 100]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench_common import serve, watch_daemon

from runner.browser.launch import CHROMIUM_ARGS, resolve_executable

HERE = Path(__file__).resolve().parent
SITE = HERE / "collection_flows"

SCENARIO = """\
// id-greet
// Greeting flow
// #4f46e5
function test_greet() {
  open_form()
  fill("Name", "user-1")
  click(role("button", "Greet"))
  expect_text(css("#out"), "Hello, user-1!")
}
"""
HELPER = """\
// {comment}
function open_form() {{
  goto("/index.html")
  expect_title("Bench shop")
  click(role("link", "Greeting form"))
  expect_visible(role("heading", "Greeting"))
}}
"""
PLAIN = """\
import sys
from playwright.sync_api import expect, sync_playwright

base, executable, args = sys.argv[1], sys.argv[2] or None, sys.argv[3:]
with sync_playwright() as p:
    browser = p.chromium.launch(headless=True, executable_path=executable, args=args)
    page = browser.new_context(base_url=base).new_page()
    page.goto("/index.html")
    expect(page).to_have_title("Bench shop")
    page.get_by_role("link", name="Greeting form").click()
    expect(page.get_by_role("heading", name="Greeting")).to_be_visible()
    page.get_by_label("Name").fill("user-1")
    page.get_by_role("button", name="Greet").click()
    expect(page.locator("#out")).to_have_text("Hello, user-1!")
    browser.close()
"""


def make_project(root: Path, base_url: str) -> None:
    (root / "unotest/e2e/_helpers").mkdir(parents=True)
    (root / "unotest.config.yaml").write_text(
        f"baseURL: {base_url}\nheadless: true\ntrace: off\n", encoding="utf-8"
    )
    (root / "unotest/e2e/greet.test.js").write_text(SCENARIO, encoding="utf-8")
    (root / "unotest/e2e/_helpers/nav.js").write_text(HELPER.format(comment=0), "utf-8")


def daemon_rounds(
    root: Path, rounds: int, idle_ms: int, between: Callable[[], None]
) -> tuple[list[float], list[float]]:
    """(save → batch.started, save → run.finished) per round, in seconds; ``between``
    runs after each round (the plain script's run, interleaved)."""
    with watch_daemon(root, "--idle-ms", str(idle_ms), "--max-ms", "2000") as daemon:
        to_batch: list[float] = []
        to_finish: list[float] = []
        for number in range(1, rounds + 1):
            helper = root / "unotest/e2e/_helpers/nav.js"
            t0 = time.perf_counter()
            helper.write_text(HELPER.format(comment=number), encoding="utf-8")
            batch, t_batch = daemon.until("batch.started")
            finished, t_done = daemon.until("run.finished")
            status = finished["result"]["status"]
            assert status == "passed", finished["result"]
            to_batch.append(t_batch - t0)
            to_finish.append(t_done - t0)
            if number == 1:
                reason = next(iter(batch["plan"][0]["reasons"].values()))[0]
                print(f"reason: {reason['kind']} via {' → '.join(reason['via'])}")
            between()
        return to_batch, to_finish


def plain_runner(base_url: str, workdir: Path, times: list[float]) -> Callable[[], None]:
    """One run of the plain script per call, its wall time appended to ``times``; the
    browser is the one a headless unotest run resolves, with the runner's flags."""
    script = workdir / "plain_flow.py"
    script.write_text(PLAIN, encoding="utf-8")
    executable = resolve_executable("chromium", None, headless=True) or ""

    def run() -> None:
        t0 = time.perf_counter()
        subprocess.run(
            [sys.executable, str(script), base_url, executable, *CHROMIUM_ARGS], check=True
        )
        times.append(time.perf_counter() - t0)

    return run


def ms(values: list[float]) -> str:
    return f"p50 {statistics.median(values) * 1000:.0f} ms (min {min(values) * 1000:.0f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--idle-ms", type=int, default=100)
    args = parser.parse_args()
    server, base_url = serve(SITE)
    load_before = os.getloadavg()[0]
    plain: list[float] = []
    try:
        with tempfile.TemporaryDirectory(prefix="unotest-watch-bench-") as tmp:
            root = Path(tmp) / "proj"
            make_project(root, base_url)
            between = plain_runner(base_url, Path(tmp), plain)
            between()  # the file cache warmed for both
            plain.clear()
            to_batch, to_finish = daemon_rounds(root, args.rounds, args.idle_ms, between)
    finally:
        server.shutdown()
    print(f"load average: {load_before:.2f} before, {os.getloadavg()[0]:.2f} after")
    print(f"browser: {resolve_executable('chromium', None, headless=True) or 'Playwright default'}")
    after_idle = [t - args.idle_ms / 1000 for t in to_batch]
    ratio = statistics.median(to_finish) / statistics.median(plain)
    print(f"save → batch.started:         {ms(to_batch)}")
    print(f"  minus the idle window:      {ms(after_idle)}  (target p50 ≤ 250 ms)")
    print(f"save → run.finished (warm):   {ms(to_finish)}")
    print(f"plain Playwright script:      {ms(plain)}")
    print(f"ratio warm / plain:           {ratio:.2f}×  (target ≤ 0.5×)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
