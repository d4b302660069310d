"""A tab the page opens (a ``target=_blank`` link, ``window.open``), as Playwright Test's
``waitForEvent('popup')`` follows it: ``switch_page(url or title)`` in real Chromium; the
new tab is recorded (its dialogs answered), and one that never opens is one sentence
naming the pages there are."""

from __future__ import annotations

from pathlib import Path

from sites import config_yaml, e2e_json, scenario_source, write_project

HOME = """<!doctype html>
<title>Shop</title>
<a href="terms.html" target="_blank">Terms</a>
<button onclick="window.open('help.html')">Help</button>
"""
TERMS = """<!doctype html><title>Terms of service</title><h1>Terms</h1>"""
HELP = """<!doctype html><title>Help</title>
<button onclick="r.textContent = confirm('Call us?') ? 'calling' : 'not now'">Call</button>
<p id=r></p>"""

TABS = r"""  goto("home.html")
  wait_for_load("networkidle")
  wait_for_load("domcontentloaded")
  try { wait_for_load("idle") } catch (e) { expect_equal(e.name, "TypeError") }
  click("Terms")
  switch_page("Terms of service")
  expect_title("Terms of service")
  expect_visible(role("heading", "Terms"))
  switch_page("Shop")
  click("Help")
  switch_page(/help\.html$/)
  on_dialog("accept")
  click("Call")
  expect_text(css("#r"), "calling")
  switch_page("home.html")
  expect_title("Shop")
"""

NEVER = r"""  goto("home.html")
  switch_page("Nowhere")
"""


def test_switch_page_follows_a_tab_the_page_opened(
    tmp_path: Path, static_site: str, chromium_path: str
) -> None:
    timeout = {"action": 3000, "expect": 2000, "navigation": 1500, "scenario": 60000}
    project = write_project(
        tmp_path,
        config_yaml(f"{static_site}/site/", timeout=timeout, chromium=chromium_path),
        {
            "tabs": scenario_source("tabs", TABS, fn="test_tabs"),
            "never": scenario_source("never", NEVER, fn="test_never"),
        },
        files={"site/home.html": HOME, "site/terms.html": TERMS, "site/help.html": HELP},
    )
    results = {name: e2e_json(project, name) for name in ("tabs", "never")}
    code, result, output = results["tabs"]
    assert code == 0 and result["outcome"] == "completed", output
    code, result, output = results["never"]
    assert code == 1, output
    error = result["error"]
    assert error["errorName"] == "TimeoutError", error
    assert error["error"].startswith(
        "switch_page: no page's URL or title matched 'Nowhere' within 1500 ms (the pages: "
    ), error
    assert "home.html ('Shop')" in error["error"], error
