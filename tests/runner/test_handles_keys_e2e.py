"""Elements returned by ``evaluate`` as targets, and keys held down: real Chromium,
``unotest e2e``, the page served on 127.0.0.1 by the test.

An element a script returns (Playwright's ``evaluateHandle`` then ``asElement``) is
marked in the page and comes back as a target every built-in takes, shown as
``<Element from evaluate #n>``; once the page re-renders it the target matches nothing,
and a built-in says so as for any target. ``key_down``/``key_up`` hold a key (Shift
types ``KeyA`` as "A", each key event and click carries shiftKey) until it is released;
a key the browser does not know, or a chord, is refused in one sentence.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from sites import caught, config_yaml, e2e_json, scenario_source, write_project

PAGE = """<!doctype html>
<title>Handles</title>
<ul id=list><li>Tea</li><li>Coffee</li></ul>
<button onclick="list.innerHTML = '<li>Tea</li><li>Coffee</li>'">Re-render</button>
<button id=go onclick="out.textContent = 'clicked ' + this.textContent">Go</button>
<input id=name aria-label="Name">
<p id=out></p>
<input aria-label="Keys" id=keys>
<button onclick="clicks.textContent += event.shiftKey ? 'S' : '-'">Shifty</button>
<p id=shifts></p><p id=clicks></p>
<iframe srcdoc="<button onclick='this.textContent = &quot;pressed&quot;'>Inside</button>"></iframe>
<script>
keys.addEventListener('keydown', e => {
  if (e.key.length === 1) shifts.textContent += e.shiftKey ? 'S' : '-'
})
</script>
"""

HANDLES = r"""  goto("handles.html")
  const go = evaluate("document.querySelector('#go')")
  log("@@ " + go)
  click(go)
  expect_text(css("#out"), "clicked Go")
  expect_equal(evaluate("document.querySelector('#go')"), go)
  const field = evaluate("() => document.getElementById('name')")
  fill(field, "Ada")
  expect_value(field, "Ada")
  expect_value(label("Name"), "Ada")
  const coffee = evaluate(css("#list"), "(ul) => ul.children[1]")
  expect_text(coffee, "Coffee")
  expect_visible(coffee)
  expect_equal(text_of(coffee), "Coffee")
  const inside = evaluate(css("iframe").frame().find(css("body")), "(b) => b.firstChild")
  log("@@ " + inside)
  click(inside)
  expect_text(css("iframe").frame().find(role("button")), "pressed")
  expect_equal(evaluate("document.querySelector('#out').firstChild"), "ref: <Node>")
  expect_equal(evaluate("[document.body]"), ["ref: <Node>"])
  click("Re-render")
  expect_count(coffee, 0)
  try { click(coffee, {timeout: 300}) } catch (e) { log("@@ " + e.name + ": " + e.message) }
"""
"""Clicked, filled, expected on; the same element twice is one target; an element in
an iframe through the element form; a node that is no element, or an element inside
an answer, is still Playwright's text; a re-rendered element is gone."""

REMOVED = r"""  goto("handles.html")
  const tea = evaluate("document.querySelector('li')")
  evaluate("document.querySelector('li').remove()")
  click(tea)
"""

KEYS = r"""  goto("handles.html")
  focus(label("Keys"))
  key_down("Shift")
  press("KeyA")
  type_text(label("Keys"), "b")
  key_up("Shift")
  type_text(label("Keys"), "c")
  expect_value(label("Keys"), "Abc")
  expect_text(css("#shifts"), "SS-")
  key_down("Shift")
  click("Shifty")
  key_up("Shift")
  click("Shifty")
  expect_text(css("#clicks"), "S-")
"""
"""Shift held: a key named by its code types its capital, typed text stays as written
(as Playwright types it) but its key events carry shiftKey, and a click is a
shift-click; released, none of them does."""


MISUSED = '  goto("handles.html")\n' + caught(
    'key_down("Shiftt")',
    'key_up("Shift+A")',
    "key_down(3)",
    "evaluate(\"document.querySelector('iframe').contentDocument.body\")",
)


def test_an_element_from_evaluate_is_a_target_and_keys_are_held(
    tmp_path: Path, static_site: str, chromium_path: str
) -> None:
    timeout = {"action": 3000, "expect": 2000, "navigation": 10000, "scenario": 60000}
    project = write_project(
        tmp_path,
        config_yaml(f"{static_site}/site/", timeout=timeout, chromium=chromium_path),
        {
            "handles": scenario_source("handles", HANDLES, fn="test_handles"),
            "removed": scenario_source("removed", REMOVED, fn="test_removed"),
            "keys": scenario_source("keys", KEYS, fn="test_keys"),
            "misused": scenario_source("misused", MISUSED, fn="test_misused"),
        },
        files={"site/handles.html": PAGE},
    )
    with ThreadPoolExecutor(max_workers=2) as pool:
        handles, removed, keys, misused = pool.map(
            lambda name: e2e_json(project, name), ["handles", "removed", "keys", "misused"]
        )

    code, result, output = handles
    assert code == 0 and result["outcome"] == "completed", output
    said = [line[3:] for line in output.splitlines() if line.startswith("@@ ")]
    assert said == [
        "<Element from evaluate #1>",
        '<Locator css="iframe" >> frame >> element from evaluate #4>',
        "LocatorError: click: no element matches <Element from evaluate #3> (waited 300 ms)",
    ], output

    code, result, output = removed
    assert code == 1 and result["outcome"] == "failed", output
    error = result["error"]
    assert error["errorName"] == "LocatorError", error
    assert error["error"] == (
        "click: no element matches <Element from evaluate #1> (waited 3000 ms)"
    ), error
    assert (error["line"], error["col"]) == (8, 2), error

    code, result, output = keys
    assert code == 0 and result["outcome"] == "completed", output

    code, result, output = misused
    assert code == 0, output
    said = [line[3:] for line in output.splitlines() if line.startswith("@@ ")]
    assert said == [
        "TypeError: key_down: 'Shiftt' is no key name: keys are named as a browser names "
        'them ("Enter", "Tab", "ArrowDown", "a", "Control+A")',
        "TypeError: key_up() holds one key, got 'Shift+A': hold each with its own call, "
        "key_up(\"Shift\"), or press the chord at once with press('Shift+A')",
        'TypeError: key_down() needs a key name such as "Shift", got number',
        "TypeError: evaluate: the element the script returned is in another document (an "
        "iframe's): return it from a script run in that frame, "
        'evaluate(css("iframe").frame().find(css("body")), "(body) => ...")',
    ], said
