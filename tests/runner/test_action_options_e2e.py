"""The actions' options as Playwright's (issue 30): ``click``/``dblclick`` at a position,
with a button, modifiers, a click count, a delay, ``force`` and ``trial``; ``hover`` at a
position; ``fill``/``check``/``select`` with ``force``; ``type_text`` with a delay and
waiting, as ``fill`` does, for a field that is visible, enabled and editable; ``goto``
with ``waitUntil`` and ``timeout``; ``add_init_script``. Real Chromium through
``unotest e2e``, on pages served on 127.0.0.1 by the test (one of them with an image
that takes seconds, so ``waitUntil`` makes a difference). And ``unotest check``, which
knows every new arity and option key before any browser starts.
"""

from __future__ import annotations

import http.server
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from net import serve_handler
from sites import config_yaml, e2e_json, scenario_source, unotest_env, write_project

from runner.builtins.table import ACTION_OPTIONS
from runner.project.signatures import BROWSER_OPTIONS, BROWSER_SIGNATURES

SLOW_IMAGE_SECONDS = 4

ACTIONS_PAGE = """<!doctype html>
<title>Actions</title>
<style>
  body { margin: 0; font: 14px sans-serif }
  #pad { position: absolute; left: 0; top: 0; width: 200px; height: 100px; background: #eee }
  #hoverpad { position: absolute; left: 0; top: 120px; width: 100px; height: 40px }
  .box { position: absolute; left: 0; width: 200px; height: 40px }
  .cover { position: absolute; inset: 0; background: rgba(0, 0, 0, .2) }
  #zero { width: 0; height: 0; border: 0; padding: 0 }
</style>
<div id=pad></div>
<div id=hoverpad></div>
<div class=box style="top: 180px">
  <button id=covered onclick="hit.textContent = 'button'">Covered</button>
  <div class=cover onclick="hit.textContent = 'cover'"></div>
</div>
<div class=box style="top: 230px">
  <input type=checkbox id=cb style="opacity: 0; margin: 0; width: 20px; height: 20px">
  <span id=skin onclick="cb.checked = !cb.checked"
    style="position: absolute; left: 0; top: 0; width: 20px; height: 20px; background: #999"></span>
</div>
<div style="position: absolute; top: 280px">
  <p id=out></p><p id=hit></p><p id=moved></p>
  <input id=typed><input id=zero>
  <select id=hidden-select style="display: none"><option>a</option><option>b</option></select>
</div>
<script>
  window.events = [];
  const pad = document.querySelector('#pad');
  for (const type of ['click', 'dblclick', 'contextmenu']) {
    pad.addEventListener(type, e => {
      e.preventDefault();
      const at = `x=${Math.round(e.offsetX)} y=${Math.round(e.offsetY)}`;
      const line = `${type} button=${e.button} ${at}`
        + ` shift=${e.shiftKey} ctrl=${e.ctrlKey} detail=${e.detail}`;
      window.events.push(line);
      out.textContent = line;
    });
  }
  pad.addEventListener('mousedown', () => { window.downAt = performance.now(); });
  pad.addEventListener('mouseup', () => { window.held = performance.now() - window.downAt; });
  hoverpad.addEventListener('mousemove', e => {
    moved.textContent = `move x=${Math.round(e.offsetX)} y=${Math.round(e.offsetY)}`;
  });
  window.keyTimes = [];
  typed.addEventListener('keydown', () => window.keyTimes.push(performance.now()));
</script>
"""

FIELDS_PAGE = """<!doctype html>
<title>Fields</title>
<input id=later disabled>
<input id=never disabled>
<input id=hid style="display: none">
<input id=ro readonly value=fixed>
<p id=para>Not a field</p>
<script>setTimeout(() => { document.querySelector('#later').disabled = false }, 800)</script>
"""

INIT_PAGE = """<!doctype html>
<title>Init</title>
<p id=seen></p>
<script>
  document.querySelector('#seen').textContent =
    typeof window.seeded === 'string' ? window.seeded : 'missing';
</script>
"""

SLOW_PAGE = """<!doctype html>
<title>Slow</title>
<p id=ready>ready</p>
<img src="slow.png">
"""

REPORT = """
function report(tag, e) {
  log("@@ " + json({tag: tag, name: e.name, message: e.message}))
}
"""

CLICKS = r"""  goto("actions.html")
  click(css("#pad"), {position: {x: 30, y: 40}})
  expect_text(css("#out"), "click button=0 x=30 y=40 shift=false ctrl=false detail=1")
  click(css("#pad"), {button: "right"})
  expect_text(css("#out"), "contextmenu button=2 x=100 y=50 shift=false ctrl=false detail=0")
  click(css("#pad"), {modifiers: ["Shift", "Control"], position: {x: 5, y: 6}})
  expect_text(css("#out"), "click button=0 x=5 y=6 shift=true ctrl=true detail=1")
  dblclick(css("#pad"), {position: {x: 10, y: 10}})
  expect_text(css("#out"), "dblclick button=0 x=10 y=10 shift=false ctrl=false detail=2")
  click(css("#pad"), {clickCount: 3})
  const last = evaluate("window.events.slice(-1)[0]")
  expect_equal(last, "click button=0 x=100 y=50 shift=false ctrl=false detail=3")
  click(css("#pad"), {count: 2})
  expect_text(css("#out"), "dblclick button=0 x=100 y=50 shift=false ctrl=false detail=2")
  click(css("#pad"), {delay: 300})
  expect_equal(evaluate("window.held >= 280"), true)
  const before = evaluate("window.events.length")
  click(css("#pad"), {trial: true})
  expect_equal(evaluate("window.events.length"), before)
  const trial = {trial: true, timeout: 300}
  try { click(css("#covered"), trial) } catch (e) { report("trial-covered", e) }
  expect_text(css("#hit"), "")
  try { click(css("#covered"), {timeout: 300}) } catch (e) { report("click-covered", e) }
  click(css("#covered"), {force: true})
  expect_text(css("#hit"), "cover")
  hover(css("#hoverpad"), {position: {x: 5, y: 7}})
  expect_text(css("#moved"), "move x=5 y=7")
  type_text(css("#typed"), "abcd", {delay: 100})
  expect_value(css("#typed"), "abcd")
  expect_equal(evaluate("window.keyTimes[3] - window.keyTimes[0] >= 250"), true)
  try { fill(css("#zero"), "y", {timeout: 300}) } catch (e) { report("fill-zero", e) }
  fill(css("#zero"), "x", {force: true})
  expect_value(css("#zero"), "x")
  try { check(css("#cb"), {timeout: 300}) } catch (e) { report("check-covered", e) }
  check(css("#cb"), {force: true})
  expect_checked(css("#cb"))
  uncheck(css("#cb"), {force: true})
  expect_unchecked(css("#cb"))
  const hidden_select = css("#hidden-select")
  try { select(hidden_select, "b", {timeout: 300}) } catch (e) { report("select-hidden", e) }
  select(css("#hidden-select"), "b", {force: true})
  expect_value(css("#hidden-select"), "b")
  log("@@ " + json({tag: "end", name: "", message: ""}))
"""

MISUSED = r"""  goto("actions.html")
  const typo = {forse: true}
  try { click(css("#pad"), typo) } catch (e) { report("typo", e) }
  const wrong_key = {trial: true}
  try { fill(css("#typed"), "x", wrong_key) } catch (e) { report("fill-trial", e) }
  try { click(css("#pad"), {position: {x: 1}}) } catch (e) { report("position", e) }
  try { click(css("#pad"), {modifiers: ["Shift", "Ctrl"]}) } catch (e) { report("modifiers", e) }
  try { click(css("#pad"), {count: 2, clickCount: 2}) } catch (e) { report("two-names", e) }
  try { click(css("#pad"), {clickCount: 0}) } catch (e) { report("click-count", e) }
  try { dblclick(css("#pad"), {delay: -1}) } catch (e) { report("delay", e) }
  try { hover(css("#pad"), {force: "yes"}) } catch (e) { report("force", e) }
  try { type_text(css("#typed"), "x", {delay: 100000}) } catch (e) { report("type-delay", e) }
  try { goto("actions.html", {waitUntil: "idle"}) } catch (e) { report("wait-until", e) }
  try { goto("actions.html", {timeout: 0}) } catch (e) { report("goto-timeout-zero", e) }
  try { check(css("#cb"), "force") } catch (e) { report("not-object", e) }
  try { add_init_script(42) } catch (e) { report("init-type", e) }
  log("@@ " + json({tag: "end", name: "", message: ""}))
"""

TYPING = r"""  goto("fields.html")
  type_text(css("#later"), "hello")
  expect_value(css("#later"), "hello")
  try { type_text(css("#never"), "x", {timeout: 500}) } catch (e) { report("disabled", e) }
  try { type_text(css("#hid"), "x", {timeout: 300}) } catch (e) { report("hidden", e) }
  try { type_text(css("#ro"), "x", {timeout: 300}) } catch (e) { report("readonly", e) }
  try { type_text(css("#para"), "x", {timeout: 300}) } catch (e) { report("not-a-field", e) }
  try { type_text(css("#nothing"), "x", {timeout: 300}) } catch (e) { report("none", e) }
  expect_value(css("#never"), "")
  expect_value(css("#ro"), "fixed")
  log("@@ " + json({tag: "end", name: "", message: ""}))
"""

NAVIGATION = r"""  add_init_script("window.seeded = 'from init'")
  add_init_script("() => { window.called = 'called' }")
  goto("init.html")
  expect_text(css("#seen"), "from init")
  expect_equal(evaluate("window.called"), "called")
  goto("slow.html", {waitUntil: "domcontentloaded"})
  expect_text(css("#ready"), "ready")
  expect_equal(evaluate("document.readyState"), "interactive")
  goto("init.html", {waitUntil: "commit"})
  expect_text(css("#seen"), "from init")
  try { goto("slow.html", {timeout: 500}) } catch (e) { report("goto-timeout", e) }
  goto("init.html", {waitUntil: "networkidle", timeout: 10000})
  expect_text(css("#seen"), "from init")
  log("@@ " + json({tag: "end", name: "", message: ""}))
"""


COVERED = '<Locator css="#covered"> timed out after 300 ms: <div class="cover"'
"""A click on the covered button waits: the cover is on top."""

CLICKS_FAIL: dict[str, tuple[str, str]] = {
    # trial waits for what a click waits for, and does nothing
    "trial-covered": ("TimeoutError", f"click on {COVERED}"),
    "click-covered": ("TimeoutError", f"click on {COVERED}"),
    "fill-zero": ("TimeoutError", "after 300 ms: element is not visible"),
    "check-covered": ("TimeoutError", '<span id="skin"'),
    "select-hidden": ("TimeoutError", "after 300 ms: element is not visible"),
}
"""What the clicks scenario caught: each tag, the error's name and part of its message."""

MISUSED_FAIL: dict[str, tuple[str, str]] = {
    "typo": (
        "TypeError",
        "click() has no option 'forse' (did you mean 'force'?) (its options: button, "
        "clickCount, count, delay, force, modifiers, position, timeout, trial)",
    ),
    "fill-trial": (
        "TypeError",
        "fill() has no option 'trial' (its options: force, timeout)",
    ),
    "position": (
        "TypeError",
        "click() option position: { x: 1 } is not valid: an object {x, y}: pixels",
    ),
    "modifiers": (
        "TypeError",
        'click() option modifiers: ["Shift", "Ctrl"] is not valid: an array of the keys '
        'held down meanwhile: "Alt", "Control", "ControlOrMeta", "Meta", "Shift"',
    ),
    "two-names": (
        "TypeError",
        "click() options count and clickCount are one option under two names",
    ),
    "click-count": (
        "TypeError",
        "click() option clickCount: 0 is not valid: a whole number of clicks, 1 or more",
    ),
    "delay": (
        "TypeError",
        "dblclick() option delay: -1 is not valid: milliseconds from 0 to 60000",
    ),
    "force": ("TypeError", 'hover() option force: "yes" is not valid: true or false'),
    "type-delay": (
        "TypeError",
        "type_text() option delay: 100000 is not valid: milliseconds from 0 to 60000 "
        "between key presses",
    ),
    "wait-until": (
        "TypeError",
        'goto() option waitUntil: "idle" is not valid: "load", "domcontentloaded", '
        '"networkidle" or "commit"',
    ),
    "goto-timeout-zero": (
        "TypeError",
        "goto() option timeout: 0 is not valid: milliseconds, more than 0 and at most "
        "2147483647 (this call's own; the config's timeout.navigation otherwise)",
    ),
    "not-object": ("TypeError", "check() options must be an object, got string"),
    "init-type": ("TypeError", "add_init_script() needs the script's source, got number"),
}
"""Wrong options, each refused in one sentence naming the built-in, key and what it takes."""

TYPING_FAIL: dict[str, tuple[str, str]] = {
    "disabled": (
        "TimeoutError",
        'type_text on <Locator css="#never"> timed out after 500 ms: element is not enabled',
    ),
    "hidden": ("TimeoutError", "timed out after 300 ms: element is not visible"),
    "readonly": ("TimeoutError", "timed out after 300 ms: element is not editable"),
    "not-a-field": ("LocatorError", 'type_text: <Locator css="#para"> is not a field'),
    "none": (
        "LocatorError",
        'type_text: no element matches <Locator css="#nothing"> (waited 300 ms)',
    ),
}
"""type_text waits as fill does, and says why it gave up."""

NAVIGATION_FAIL: dict[str, tuple[str, str]] = {
    "goto-timeout": ("TimeoutError", 'slow.html did not reach "load" within 500 ms')
}
"""goto within its own timeout, waiting for "load" by default."""


@pytest.fixture
def slow_site(tmp_path: Path) -> Iterator[str]:
    """``http://127.0.0.1:PORT`` serving ``tmp_path``, whose ``slow.png`` takes seconds."""
    root = str(tmp_path)

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=root, **kwargs)

        def do_GET(self) -> None:
            if self.path.endswith("/slow.png"):
                time.sleep(SLOW_IMAGE_SECONDS)
            super().do_GET()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    with serve_handler(Handler, "slow-site") as url:
        yield url


def _reports(output: str) -> dict[str, tuple[str, str]]:
    got = {}
    for line in output.splitlines():
        if line.startswith("@@ "):
            entry = json.loads(line[3:])
            got[entry["tag"]] = (entry["name"], entry["message"])
    return got


def _expect_reports(output: str, wanted: dict[str, tuple[str, str]]) -> None:
    """Each tag of ``wanted`` was reported with its error name and a message containing
    its fragment, and the scenario reached its end."""
    got = _reports(output)
    assert "end" in got, output
    for tag, (name, fragment) in wanted.items():
        assert tag in got, f"{tag} did not fail\n{output}"
        assert got[tag][0] == name, (tag, got[tag])
        assert fragment in got[tag][1], (tag, fragment, got[tag][1])


def test_action_options_in_chromium(tmp_path: Path, slow_site: str, chromium_path: str) -> None:
    timeout = {"action": 5000, "expect": 2000, "navigation": 15000, "scenario": 90000}
    scenarios = {"clicks": CLICKS, "misused": MISUSED, "typing": TYPING, "navigation": NAVIGATION}
    project = write_project(
        tmp_path,
        config_yaml(f"{slow_site}/site/", timeout=timeout, chromium=chromium_path),
        {
            name: scenario_source(name, body, fn=f"test_{name}") + REPORT
            for name, body in scenarios.items()
        },
        files={
            "site/actions.html": ACTIONS_PAGE,
            "site/fields.html": FIELDS_PAGE,
            "site/init.html": INIT_PAGE,
            "site/slow.html": SLOW_PAGE,
            "site/slow.png": b"",
        },
    )
    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = pool.map(lambda n: e2e_json(project, n), scenarios)
        results = dict(zip(scenarios, runs, strict=True))
    for name, (code, result, output) in results.items():
        assert code == 0 and result["outcome"] == "completed", f"{name}\n{output}"

    for name, wanted in (
        ("clicks", CLICKS_FAIL),
        ("misused", MISUSED_FAIL),
        ("typing", TYPING_FAIL),
        ("navigation", NAVIGATION_FAIL),
    ):
        _expect_reports(results[name][2], wanted)


def test_check_knows_the_new_arities_and_option_keys(tmp_path: Path) -> None:
    """``unotest check`` flags a misspelt option of any action, and the arities grew."""
    body = (
        '  click("Save", {forse: true})\n'
        '  fill("Name", "Ada", {force: true, timout: 5})\n'
        '  goto("/", {waitUntill: "load"})\n'
        '  expect_in_viewport("Save", {ration: 0.5})\n'
        '  expect_css("Save", "color", "red", {timeout: 5})\n'
        '  dblclick("Save", {}, 3)\n'
        '  add_init_script("window.x = 1", {})\n'
        '  type_text("Name", "x", {delay: 5, timeout: 5})\n'
    )
    project = write_project(tmp_path, config_yaml(None), {"opts": scenario_source("opts", body)})
    done = subprocess.run(
        [sys.executable, "-m", "unotest", "check"],
        cwd=project,
        env=unotest_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    found = [line.split(": ", 1) for line in done.stdout.splitlines()]
    where = {
        place.removeprefix("unotest/e2e/opts.test.js:"): message
        for place, message in (pair for pair in found if len(pair) == 2)
        if place.startswith("unotest/e2e/opts.test.js:")
    }
    assert where == {
        "5:17": "TypeError: click() has no option 'forse' (did you mean 'force'?) (its options: "
        "button, clickCount, count, delay, force, modifiers, position, timeout, trial)",
        "6:36": "TypeError: fill() has no option 'timout' (did you mean 'timeout'?) (its "
        "options: force, timeout)",
        "7:13": "TypeError: goto() has no option 'waitUntill' (did you mean 'waitUntil'?) (its "
        "options: timeout, waitUntil)",
        "8:30": "TypeError: expect_in_viewport() has no option 'ration' (did you mean 'ratio'?) "
        "(its options: ratio, soft, timeout)",
        "10:2": "TypeError: dblclick() takes 1 to 2 arguments but got 3",
        "11:2": "TypeError: add_init_script() takes 1 argument but got 2",
    }, done.stdout


def test_every_action_option_is_known_to_check() -> None:
    """The options an action reads at run time are the keys ``check`` knows."""
    for name, options in ACTION_OPTIONS.items():
        assert frozenset(options) == BROWSER_OPTIONS[name], name
        low, high = BROWSER_SIGNATURES[name]
        assert high == low + 1, name  # the options object is the one optional argument
