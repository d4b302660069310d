"""Take the page tour's screenshots (docs/img/*.png) from a running viewer on examples/.

    .venv/bin/python docs/screenshots.py            # all of them
    .venv/bin/python docs/screenshots.py debug env  # only these

The example project is copied to a temporary folder first (with a small ``unotest/.env``),
so the runs the tour starts never land in the repository. ``unotest view`` runs there as
a user starts it; Chromium is the one ``unotest e2e`` uses. A shot that cannot be taken
is reported and the others are still taken (exit 1 then).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import Page, expect, sync_playwright

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from runner.browser.launch import CHROMIUM_ARGS, resolve_executable  # noqa: E402

OUT = REPO / "docs" / "img"
WAIT_MS = 60_000
ENV = """# The shop's test account
SHOP_USER=ada@example.com
SHOP_PASSWORD=correct-horse-battery
SLOW_MO=0
# SHOP_URL=http://staging.example.com
"""


@contextmanager
def example_copy() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="unotest-tour-") as tmp:
        root = Path(tmp) / "examples"
        shutil.copytree(
            REPO / "examples", root,
            ignore=shutil.ignore_patterns(
                ".runs", ".unotest", ".cache", ".viewer.*", "__pycache__"
            ),
        )
        (root / "unotest" / ".env").write_text(ENV, encoding="utf-8")
        yield root


@contextmanager
def viewer(root: Path) -> Iterator[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("UNOTEST_")}
    env["PYTHONSAFEPATH"] = "1"
    # The tour's terminal finds this checkout's `unotest`, as an activated venv would.
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "unotest", "view", "--no-open", "--port", "0"],
        cwd=root, env=env, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        if not url.startswith("http://"):
            raise SystemExit(f"unotest view did not start (it printed {url!r})")
        yield url
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(20)


def open_scenario(page: Page, name: str) -> None:
    tree = page.get_by_role("tree", name="Scenarios")
    tree.get_by_role("treeitem", name=name, exact=True).click()
    expect(page.get_by_role("button", name="Debug")).to_be_visible()


def shot_sidebar(page: Page, url: str) -> None:
    open_scenario(page, "smoke-welcome")
    page.screenshot(path=OUT / "tour-scenario.png")


def shot_debug(page: Page, url: str) -> None:
    open_scenario(page, "smoke-welcome")
    page.get_by_role("button", name="Breakpoint at line 7").click()
    page.get_by_role("button", name="Debug").click()
    status = page.get_by_role("status").filter(has_text="Paused at line")
    expect(status).to_be_visible(timeout=WAIT_MS)
    page.get_by_role("button", name="Step", exact=True).click()
    paused_next = page.get_by_role("status").filter(has_text="Paused at line 8")
    expect(paused_next).to_be_visible(timeout=WAIT_MS)
    page.get_by_role("textbox", name="Evaluate").fill("1 + 1")
    page.keyboard.press("Enter")
    page.wait_for_timeout(500)
    page.screenshot(path=OUT / "tour-debug.png")
    page.get_by_role("button", name="Continue").click()
    expect(page.get_by_role("status").filter(has_text="completed")).to_be_visible(timeout=WAIT_MS)
    page.get_by_role("button", name="Breakpoint at line 7").click()  # leave none behind


def shot_page(page: Page, url: str) -> None:
    """A pause in shop/add-to-cart: the page as it is, a target picked on it."""
    open_scenario(page, "shop/add-to-cart")
    page.get_by_role("button", name="Breakpoint at line 10").click()
    page.get_by_role("button", name="Debug").click()
    status = page.get_by_role("status").filter(has_text="Paused at line 10")
    expect(status).to_be_visible(timeout=WAIT_MS)
    pane = page.get_by_role("region", name="Page")
    image = pane.get_by_role("img", name="Page at line 10:4", exact=True)
    expect(image).to_be_visible(timeout=WAIT_MS)
    pane.get_by_role("button", name="Pick target").click()
    box = image.bounding_box()
    assert box is not None
    # The catalog's heading, at about (40, 40) of its 1280×720 page.
    page.mouse.click(box["x"] + 40 / 1280 * box["width"], box["y"] + 40 / 720 * box["height"])
    expect(pane.get_by_role("textbox", name="Picked target")).not_to_have_value("", timeout=WAIT_MS)
    page.wait_for_timeout(300)
    page.screenshot(path=OUT / "tour-page.png")
    page.get_by_role("button", name="Abort").click()
    expect(page.get_by_role("status").filter(has_text="aborted")).to_be_visible(timeout=WAIT_MS)
    page.get_by_role("tab", name="shop/add-to-cart").first.click()
    page.get_by_role("button", name="Breakpoint at line 10").click()  # leave none behind


def shot_failure(page: Page, url: str) -> None:
    open_scenario(page, "shop/known-bug")
    page.get_by_role("button", name="Run", exact=True).click()
    expect(page.get_by_role("status").filter(has_text="failed")).to_be_visible(timeout=WAIT_MS)
    page.wait_for_timeout(1000)  # the screenshot of the failure loads
    page.screenshot(path=OUT / "tour-failure.png")


def shot_runs(page: Page, url: str) -> None:
    page.get_by_role("button", name="Runs", exact=True).click()
    expect(page.get_by_role("region", name="Runs")).to_be_visible()
    page.screenshot(path=OUT / "tour-runs.png")


def shot_env(page: Page, url: str) -> None:
    page.get_by_role("button", name="Env", exact=True).click()
    page.get_by_role("button", name="Reveal SHOP_PASSWORD").click()
    page.screenshot(path=OUT / "tour-env.png")


def shot_terminal(page: Page, url: str) -> None:
    page.get_by_role("button", name="New local terminal").click()
    page.locator(".xterm-helper-textarea").focus()
    page.keyboard.type("unotest list\n")
    expect(page.locator(".xterm-rows")).to_contain_text("smoke-welcome", timeout=WAIT_MS)
    page.wait_for_timeout(500)
    page.screenshot(path=OUT / "tour-terminal.png")


SHOTS: dict[str, Callable[[Page, str], None]] = {
    "scenario": shot_sidebar,
    "debug": shot_debug,
    "page": shot_page,
    "failure": shot_failure,
    "runs": shot_runs,
    "env": shot_env,
    "terminal": shot_terminal,
}


def main(names: list[str]) -> int:
    chosen = names or list(SHOTS)
    unknown = [n for n in chosen if n not in SHOTS]
    if unknown:
        print(f"unknown shot(s) {', '.join(unknown)}; known: {', '.join(SHOTS)}", file=sys.stderr)
        return 2
    OUT.mkdir(parents=True, exist_ok=True)
    failed = []
    with example_copy() as root, viewer(root) as url, sync_playwright() as pw:
        path = resolve_executable("chromium", None, headless=True)
        browser = pw.chromium.launch(executable_path=path, args=list(CHROMIUM_ARGS) if path else [])
        size = os.environ.get("TOUR_SIZE", "1400x820").split("x")
        context = browser.new_context(viewport={"width": int(size[0]), "height": int(size[1])})
        for name in chosen:
            page = context.new_page()
            page.goto(url)
            try:
                SHOTS[name](page, url)
                print(f"docs/img/tour-{name}.png")
            except Exception:
                failed.append(name)
                print(f"{name}: not taken\n{traceback.format_exc()}", file=sys.stderr)
            page.close()
        browser.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
