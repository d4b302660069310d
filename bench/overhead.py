"""The cost of unotest around Playwright: one 30-step flow, two ways, same run.

Runs the same flow as a scenario through ``unotest e2e`` (a subprocess, as a user
runs it: parse, run directory, events, runtime.json, heartbeat) and as a plain
Playwright Python script (a subprocess too, same browser, same launch flags), a few
times each, against a page served on 127.0.0.1 by this script, and prints the
median wall time of each and their ratio.

    .venv/bin/python bench/overhead.py [--repeat 5] [--page-images]

``--page-images`` times a third way in the same rounds: ``unotest e2e`` with
``pageImages.steps: on`` (an image after each step that touched the page), against
the default (``on-debug``: no step images in a run without the debugger).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from bench_common import UNOTEST, run_timed, serve_page, write_project

from runner.browser.launch import CHROMIUM_ARGS, resolve_executable

PAGE = """<!doctype html>
<html><head><title>Bench</title></head><body>
<h1>Bench</h1>
<label>Item <input id="item"></label>
<button id="add">Add</button>
<ul id="list"></ul>
<p data-testid="count">0 items</p>
<script>
  const list = document.getElementById("list");
  document.getElementById("add").addEventListener("click", () => {
    const li = document.createElement("li");
    li.textContent = document.getElementById("item").value;
    list.appendChild(li);
    document.querySelector("[data-testid=count]").textContent = list.children.length + " items";
  });
</script></body></html>
"""

# 1 goto + 9 × (fill, click, expect_text) + 2 checks = 30 steps.
SCENARIO = (
    """\
// id-bench-overhead
// Thirty steps against a local page
// #123456
function test_overhead() {
  goto("/index.html")
"""
    + "".join(
        f'  fill("Item", "item {i}")\n  click("Add")\n  expect_text(testid("count"), "{i} items")\n'
        for i in range(1, 10)
    )
    + """  expect_count(css("#list li"), 9)
  expect_title("Bench")
}
"""
)

SCRIPT = """\
import sys
from playwright.sync_api import sync_playwright, expect

base, executable = sys.argv[1], sys.argv[2] or None
with sync_playwright() as p:
    browser = p.chromium.launch(executable_path=executable, args={args!r})
    page = browser.new_context(base_url=base).new_page()
    page.goto("/index.html")
    for i in range(1, 10):
        page.get_by_label("Item", exact=True).fill(f"item {{i}}")
        page.get_by_role("button", name="Add", exact=True).click()
        expect(page.get_by_test_id("count")).to_have_text(f"{{i}} items")
    expect(page.locator("#list li")).to_have_count(9)
    expect(page).to_have_title("Bench")
    browser.close()
"""


def _timed(command: list[str], cwd: Path) -> float:
    return run_timed(command, cwd)[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--page-images", action="store_true", help="also time pageImages on")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base_dir = Path(tmp)
        server, base_url = serve_page(base_dir, PAGE)
        config = f"baseURL: {base_url}\ntrace: off\n"
        project = write_project(base_dir / "project", config, {"overhead": SCENARIO})
        imaging_config = config + "pageImages:\n  steps: on\n"
        imaging = write_project(base_dir / "imaging", imaging_config, {"overhead": SCENARIO})
        script = base_dir / "plain.py"
        script.write_text(SCRIPT.format(args=list(CHROMIUM_ARGS)))
        executable = resolve_executable("chromium", None) or ""
        unotest_cmd = [UNOTEST, "e2e", "overhead"]
        plain_cmd = [sys.executable, str(script), base_url, executable]
        _timed(plain_cmd, base_dir)  # warm the file cache for both
        unotest_times, plain_times, imaging_times = [], [], []
        for _ in range(args.repeat):
            plain_times.append(_timed(plain_cmd, base_dir))
            unotest_times.append(_timed(unotest_cmd, project))
            if args.page_images:
                imaging_times.append(_timed(unotest_cmd, imaging))
        server.shutdown()
    plain = statistics.median(plain_times)
    ours = statistics.median(unotest_times)
    print(f"flow: 30 steps, {args.repeat} repetitions each, medians")
    print(f"plain Playwright script: {plain:.3f} s")
    print(f"unotest e2e:             {ours:.3f} s")
    per_step = (ours - plain) * 1000 / 30
    print(f"ratio unotest / plain:   {ours / plain:.2f}x  (+{per_step:.1f} ms per step)")
    if imaging_times:
        imaged = statistics.median(imaging_times)
        extra = (imaged - ours) * 1000 / 30
        print(f"unotest, pageImages on:  {imaged:.3f} s")
        print(f"ratio images on / off:   {imaged / ours:.2f}x  (+{extra:.1f} ms per step)")


if __name__ == "__main__":
    main()
