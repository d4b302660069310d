"""The expectations of issue 30 in real Chromium, through ``unotest e2e``:
``expect_not_url``/``expect_not_title``, ``expect_css`` (``toHaveCSS``), ``expect_empty``
(``toBeEmpty``), ``expect_in_viewport`` (``toBeInViewport({ratio})``),
``expect_js_property`` (``toHaveJSProperty``) and their ``expect_not_`` twins: each one
passing (after the page changes, so the retry is seen) and failing with a message that
says what was found; and ``expect_value`` on an ``<option>``, which says what it found
instead of "no element matched".
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from sites import config_yaml, e2e_json, scenario_source, write_project

PAGE = """<!doctype html>
<title>Expectations</title>
<style>body { margin: 0 } p { margin: 0 }</style>
<div id=tall style="height: 1440px">
  <p id=red style="color: rgb(255, 0, 0)">red</p>
  <p id=late style="color: rgb(0, 0, 255)">late</p>
  <div id=empty></div>
  <div id=full>Some   text</div>
  <div id=status>Saving</div>
  <input id=blank><input id=filled value=abc>
  <div id=box></div>
  <select><option value=a>A</option></select>
</div>
<div id=far style="margin-top: 3000px">far</div>
<script>
  document.querySelector('#box').data = {a: 1, b: [1, 'two']};
  if (location.search !== '?still') setTimeout(() => {
    document.querySelector('#late').style.color = 'rgb(0, 128, 0)';
    document.querySelector('#status').textContent = '';
    document.querySelector('#box').custom = 42;
    document.title = 'Changed';
    history.pushState(null, '', 'expect.html?moved');
  }, 500);
</script>
"""

REPORT = """
function report(tag, e) {
  log("@@ " + json({tag: tag, name: e.name, message: e.message}))
}
"""

PASSES = r"""  goto("expect.html")
  expect_not_title("Expectations")
  expect_title("Changed")
  expect_not_url("expect.html")
  expect_not_url(/other/)
  expect_css(css("#red"), "color", "rgb(255, 0, 0)")
  expect_css(css("#red"), "color", /255, 0, 0/)
  expect_not_css(css("#red"), "color", "rgb(0, 0, 0)")
  expect_css(css("#late"), "color", "rgb(0, 128, 0)")
  expect_empty(css("#empty"))
  expect_empty(css("#blank"))
  expect_empty(css("#status"))
  expect_not_empty(css("#full"))
  expect_not_empty(css("#filled"))
  expect_js_property(css("#box"), "custom", 42)
  expect_js_property(css("#box"), "data", {a: 1, b: [1, "two"]})
  expect_not_js_property(css("#box"), "custom", 41)
  expect_js_property(css("#filled"), "value", "abc")
  expect_in_viewport(css("#red"))
  expect_in_viewport(css("#tall"), {ratio: 0.3, timeout: 3000})
  expect_not_in_viewport(css("#tall"), {ratio: 0.9})
  expect_not_in_viewport(css("#far"))
  scroll_to(css("#far"))
  expect_in_viewport(css("#far"))
  expect_not_in_viewport(css("#red"))
"""

FAILURES = r"""  goto("expect.html?still")
  const t = {timeout: 300}
  try { expect_not_title("Expectations", t) } catch (e) { report("not-title", e) }
  try { expect_not_url(url(), t) } catch (e) { report("not-url", e) }
  try { expect_css(css("#red"), "color", "rgb(0, 0, 0)", t) } catch (e) { report("css", e) }
  try { expect_not_css(css("#red"), "color", /255/, t) } catch (e) { report("not-css", e) }
  try { expect_not_css(css("#nothing"), "color", "x", t) } catch (e) { report("not-css-none", e) }
  try { expect_empty(css("#full"), t) } catch (e) { report("empty-text", e) }
  try { expect_empty(css("#filled"), t) } catch (e) { report("empty-value", e) }
  try { expect_not_empty(css("#empty"), t) } catch (e) { report("not-empty", e) }
  try { expect_in_viewport(css("#far"), t) } catch (e) { report("viewport", e) }
  const most = {ratio: 0.9, timeout: 300}
  try { expect_in_viewport(css("#tall"), most) } catch (e) { report("ratio", e) }
  try { expect_not_in_viewport(css("#red"), t) } catch (e) { report("not-viewport", e) }
  try { expect_js_property(css("#blank"), "value", "x", t) } catch (e) { report("js", e) }
  try { expect_js_property(css("#box"), "data", {a: 2}, t) } catch (e) { report("js-object", e) }
  const filled = css("#filled")
  try { expect_not_js_property(filled, "value", "abc", t) } catch (e) { report("not-js", e) }
  try { expect_value(css("option"), "a", t) } catch (e) { report("value-option", e) }
  try { expect_in_viewport(css("#red"), {ratio: 2}) } catch (e) { report("ratio-range", e) }
  const typo = {ration: 0.5}
  try { expect_in_viewport(css("#red"), typo) } catch (e) { report("ratio-typo", e) }
  try { expect_js_property(css("#box"), "custom", /4/) } catch (e) { report("js-regex", e) }
  try { expect_css(css("#red"), 5, "red") } catch (e) { report("css-name", e) }
  log("@@ " + json({tag: "end", name: "", message: ""}))
"""

OPTION_VALUE = r"""  goto("expect.html")
  expect_value(css("option"), "a")
"""


def failures(site: str) -> dict[str, str]:
    """What each failing expectation of FAILURES says, by its tag (``site``: the page's URL)."""
    red, tall = '<Locator css="#red">', '<Locator css="#tall">'
    return {
        "not-title": 'expected title not "Expectations", still received "Expectations" '
        "after 300 ms",
        "not-url": f'expected URL not "{site}", still received "{site}" after 300 ms',
        "css": f'expected {red} to have CSS color "rgb(0, 0, 0)", received "rgb(255, 0, 0)"',
        "not-css": f"expected {red} not to have CSS color /255/, still received "
        '"rgb(255, 0, 0)" after 300 ms',
        "not-css-none": 'expected <Locator css="#nothing"> not to have CSS color "x", but no '
        "element matched: a negated expectation needs the element, as Playwright's not does "
        "(expect_hidden waits for it to go)",
        "empty-text": 'expected <Locator css="#full"> to be empty, received the text "Some text"',
        "empty-value": 'expected <Locator css="#filled"> to be empty, received the value "abc"',
        "not-empty": 'expected <Locator css="#empty"> not to be empty, still received no text '
        "after 300 ms",
        "viewport": 'expected <Locator css="#far"> to be in the viewport, received none of it '
        "in the viewport",
        "ratio": f"expected {tall} to have at least 90% of it in the viewport, received 50% of "
        "it in the viewport",
        "not-viewport": f"expected {red} not to be in the viewport, still received all of it in "
        "the viewport after 300 ms",
        "js": 'expected <Locator css="#blank"> to have JS property value "x", received ""',
        "js-object": '<Locator css="#box"> to have JS property data { a: 2 }, received '
        '{ a: 1, b: [1, "two"] }',
        "not-js": 'expected <Locator css="#filled"> not to have JS property value "abc", still '
        'received "abc" after 300 ms',
        "value-option": 'expected <Locator css="option"> to have value "a", received <option>, '
        "which is not an input element",
        "ratio-range": "expect_in_viewport() option ratio: 2 is not valid: a number from 0 to 1",
        "ratio-typo": "expect_in_viewport() has no option 'ration' (did you mean 'ratio'?) "
        "(its options: ratio, soft, timeout)",
        "js-regex": "expect_js_property() compares the property with a value",
        "css-name": "expect_css() needs a CSS property name, got number",
    }


def test_new_expectations_pass_and_fail_saying_what_they_found(
    tmp_path: Path, static_site: str, chromium_path: str
) -> None:
    timeout = {"action": 3000, "expect": 3000, "navigation": 10000, "scenario": 60000}
    scenarios = {"passes": PASSES, "failures": FAILURES, "option": OPTION_VALUE}
    project = write_project(
        tmp_path,
        config_yaml(f"{static_site}/site/", timeout=timeout, chromium=chromium_path),
        {
            name: scenario_source(name, body, fn=f"test_{name}") + REPORT
            for name, body in scenarios.items()
        },
        files={"site/expect.html": PAGE},
    )
    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = pool.map(lambda n: e2e_json(project, n), scenarios)
        results = dict(zip(scenarios, runs, strict=True))

    code, result, output = results["passes"]
    assert code == 0 and result["outcome"] == "completed", output

    # An <option> has no value: said at once, with what was found.
    code, result, output = results["option"]
    assert code == 1 and result["outcome"] == "failed", output
    assert result["error"]["errorName"] == "AssertionError", result["error"]
    assert result["error"]["error"] == (
        'expected <Locator css="option"> to have value "a", received <option>, which is not '
        "an input element: only an <input>, a <textarea> or a <select> has a value"
    ), result["error"]

    code, result, output = results["failures"]
    assert code == 0, output
    got = {}
    for line in output.splitlines():
        if line.startswith("@@ "):
            entry = json.loads(line[3:])
            got[entry["tag"]] = (entry["name"], entry["message"])
    assert "end" in got, output
    wanted = failures(f"{static_site}/site/expect.html?still")
    misused = {"ratio-range", "ratio-typo", "js-regex", "css-name"}  # before any retry
    for tag, fragment in wanted.items():
        assert tag in got, f"{tag} did not fail\n{output}"
        name, message = got[tag]
        assert name == ("TypeError" if tag in misused else "AssertionError"), (tag, message)
        assert fragment in message, (tag, message)
