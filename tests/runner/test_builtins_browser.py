"""The browser built-ins of language.md §6, end to end with a real Chromium.

Every test builds a project in ``tmp_path`` whose ``baseURL`` is the site in
``site_builtins/`` (served on 127.0.0.1), then runs ``unotest e2e NAME --json`` in a
subprocess, exactly as a person or an agent would. Assertions read the JSON result
on stdout and the ``log()`` lines (stderr in ``--json`` mode, prefixed ``@@``).

A browser start costs seconds, so one passing scenario exercises every built-in,
one scenario catches many errors with ``try``/``catch`` and reports each as a JSON
log line, and the scenarios that must fail for real (to check the JSON ``error``,
its name, message, line and column) run concurrently in one batch. Every run is
tagged with an environment marker, and afterwards no process carrying it (the
Playwright driver, Chromium and its helpers) may be left alive.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from events import read_events
from net import free_port, serve_directory
from sites import config_yaml, scenario_source, write_project

REPO = Path(__file__).resolve().parents[2]
SITE = Path(__file__).resolve().parent / "site_builtins"
MARKER_VAR = "UNOTEST_BUILTINS_TEST_MARK"
LOG_PREFIX = "@@ "
STRATEGIES = (
    'role button/link/menuitem/tab/checkbox/radio/option named "{0}"; '
    'label "{0}"; placeholder "{0}"; text "{0}"'
)

# --- the site, the project, the runs --------------------------------------------------


@pytest.fixture(scope="session")
def site_url() -> Iterator[str]:
    """``http://127.0.0.1:PORT`` serving ``site_builtins/`` for the whole session."""
    with serve_directory(SITE, "builtins-site") as url:
        yield url


def scenario_file(slug: str, body: str, extra: str = "") -> str:
    """A scenario with the mandatory header and one ``test_`` function."""
    fn = "test_" + slug.replace("-", "_")
    return scenario_source(slug, body + "\n", title=f"Built-in check {slug}", fn=fn) + extra


def make_project(
    root: Path,
    site: str,
    chromium: str,
    scenarios: dict[str, str],
    *,
    action: int = 2000,
    expect: int = 2000,
    navigation: int = 10000,
) -> Path:
    timeout = {"action": action, "expect": expect, "navigation": navigation, "scenario": 60000}
    return write_project(
        root,
        config_yaml(site, timeout=timeout, chromium=chromium),
        scenarios,
        files={"files/hello.txt": "hello\n", "files/data.csv": "a,b\n1,2\n"},
    )


@dataclass
class Run:
    name: str
    code: int
    result: dict[str, Any]
    stderr: str

    @property
    def logs(self) -> list[str]:
        return [
            line[len(LOG_PREFIX) :]
            for line in self.stderr.splitlines()
            if line.startswith(LOG_PREFIX)
        ]

    def explain(self) -> str:
        result = json.dumps(self.result, indent=1)
        return f"unotest e2e {self.name}: exit {self.code}\n{result}\n{self.stderr}"


def _marked_processes(marker: str) -> list[str]:
    """Live processes (this user's) whose environment carries ``marker``."""
    needle = f"{MARKER_VAR}={marker}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if stat[stat.rfind(")") + 2 :].startswith("Z"):
            continue
        found.append(f"{entry.name}: {(entry / 'cmdline').read_bytes()[:120]!r}")
    return found


def run_scenarios(
    project: Path, names: list[str], env: dict[str, str] | None = None
) -> dict[str, Run]:
    """``unotest e2e NAME --json`` for each name, concurrently; no process may outlive them."""
    marker = uuid.uuid4().hex
    environ = {**os.environ, **(env or {}), MARKER_VAR: marker}
    environ.pop("UNOTEST_HEADED", None)
    environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), environ.get("PYTHONPATH")]))

    def one(name: str) -> Run:
        proc = subprocess.run(
            [sys.executable, "-m", "unotest", "e2e", name, "--json"],
            cwd=project,
            env=environ,
            capture_output=True,
            text=True,
            timeout=150,
        )
        try:
            result = json.loads(proc.stdout)
        except json.JSONDecodeError:
            pytest.fail(f"{name}: exit {proc.returncode}, no JSON:\n{proc.stdout}\n{proc.stderr}")
        return Run(name, proc.returncode, result, proc.stderr)

    with ThreadPoolExecutor(max_workers=min(len(names), 4)) as pool:
        runs = dict(zip(names, pool.map(one, names), strict=True))
    deadline = time.monotonic() + 10
    while (left := _marked_processes(marker)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not left, "processes left behind by the runs:\n" + "\n".join(left)
    return runs


# --- one scenario that exercises every built-in ------------------------------------------

EVERYTHING = r"""
  goto("index.html")
  expect_title("Builtins playground")
  expect_title(/playground$/)
  expect_equal(title(), "Builtins playground")
  expect_url("/index.html")
  expect_url(/\/index\.html$/)
  expect_equal(url(), env("SITE") + "/index.html")

  // locators
  expect_visible(role("heading", "Builtins playground", {level: 1}))
  expect_equal(count(role("heading")), 2)
  expect_text(role("heading", null, {level: 2}), "Second heading")
  expect_equal(count(role("button", /incre/i)), 1)
  expect_equal(count(role("button", "increment")), 0)
  expect_equal(count(role("button", "increment", {exact: false})), 1)
  expect_equal(count(role("button", "Locked", {disabled: true})), 1)
  expect_equal(count(role("button", "Secret note", {include_hidden: true})), 0)
  expect_visible(text("Hello world"))
  expect_equal(count(text(/^hello/i)), 1)
  expect_equal(attr_of(label("Full name"), "id"), "name")
  expect_equal(attr_of(placeholder("Search here"), "id"), "search")
  expect_equal(attr_of(alt("Company logo"), "width"), "10")
  expect_equal(text_of(title("Close dialog")), "x")
  expect_text(testid("status"), "idle")
  expect_equal(count(xpath("//ul[@id='list']/li")), 3)
  const items = css("#list li")
  expect_equal(str(items.nth(1)), "<Locator css=\"#list li\" >> nth=1>")
  expect_text(items.nth(1), /^Carrot/)
  expect_text(items.first(), "Apple fruit")
  expect_contains(items.last(), "Banana")
  expect_equal(count(items.find(css(".tag"))), 3)
  expect_equal(count(items.filter({has_text: "Banana"})), 1)
  expect_equal(count(items.filter({has: text("fruit")})), 2)
  expect_equal(count(items.filter({has_text: /^(apple|carrot)/i})), 2)
  expect_text(items.filter({has: text("veg")}).find(css(".tag")), "veg")
  expect_count(css(".item"), 3)
  expect_count(css(".nothing-here"), 0)

  // queries and state assertions
  expect_equal(text_of(css("#greeting")), "Hello world")
  expect_text(css("#greeting"), "Hello world")
  expect_text(css("#greeting"), /^Hello\s+world$/)
  expect_contains(css("#greeting"), "llo wo")
  expect_equal(is_visible(css("#hidden-note")), false)
  expect_equal(is_visible("Increment"), true)
  expect_hidden(css("#hidden-note"))
  expect_hidden("Secret note")
  expect_hidden("Ghost field")
  expect_hidden(css(".nothing-here"))
  expect_equal(is_enabled(role("button", "Locked")), false)
  expect_equal(is_enabled("Increment"), true)
  expect_disabled(role("button", "Locked"))
  expect_enabled("Increment")
  expect_equal(attr_of(css("#name"), "data-missing"), null)
  expect_attr(css("#name"), "placeholder", "Your name")
  expect_attr(css("#name"), "placeholder", /your/i)

  // actions
  click("Increment")
  click(role("button", "Increment"), {count: 2})
  expect_text(testid("clicks"), "3")
  click(css("#mouse"), {button: "right", modifiers: ["Shift"]})
  expect_text(testid("mouse-out"), "button=2 shift=true detail=1")
  click("Mouse probe", {force: true})
  expect_text(testid("mouse-out"), "button=0 shift=false detail=1")
  dblclick("Double me")
  expect_text(testid("status"), "double clicked")
  fill("Full name", "Ada Lovelace")
  expect_value("Full name", "Ada Lovelace")
  expect_equal(value_of(label("Full name")), "Ada Lovelace")
  expect_equal(value_of("Your name"), "Ada Lovelace")
  fill(placeholder("Search here"), "tea")
  type_text("Search here", " pot")
  expect_value(css("#search"), "tea pot")
  expect_value(css("#search"), /pot$/)
  press(label("Keys"), "Enter")
  expect_text(testid("lastkey"), "Enter")
  press("ArrowDown")
  expect_text(testid("lastkey"), "ArrowDown")
  focus("Focus target")
  expect_text(testid("focus-out"), "focused")
  press("x")
  expect_value(label("Focus target"), "x")
  check("I agree")
  expect_checked("I agree")
  expect_equal(is_checked(css("#agree")), true)
  expect_equal(count(role("checkbox", "I agree", {checked: true})), 1)
  uncheck(css("#agree"))
  expect_unchecked(label("I agree"))
  expect_equal(is_checked("I agree"), false)
  select("Color", "Green")
  expect_value("Color", "g")
  select(label("Languages"), ["Python", "Go"])
  expect_text(testid("langs-out"), "Python,Go")
  hover(css("#hoverbox"))
  expect_text(css("#hoverbox"), "Hovered")
  upload(label("Attachment"), "files/hello.txt")
  expect_text(testid("file-out"), "hello.txt")
  upload("Attachments", ["files/hello.txt", "./files/../files/data.csv"])
  expect_text(testid("files-out"), "hello.txt,data.csv")
  drag(css("#drag-src"), "Drop here")
  expect_text(testid("drop-out"), "dropped payload")
  scroll_to("Far away")
  expect_attr(css("body"), "data-scrolled", "yes")

  // waits
  click("Reveal later")
  expect_equal(is_visible("Appeared"), false)
  wait_for("Appeared")
  wait_for(css("#later"))
  const before = now()
  wait(150)
  assert(now() - before >= 140, "wait(150) returned early")
  wait(0)
  wait_for_load()
  screenshot("after actions")
  screenshot()

  // navigation
  click("Go to page two")
  wait_for_url(/page2\.html$/)
  wait_for_url("/page2.html")
  expect_title("Page two")
  const first_load = text_of(css("#loaded-at"))
  reload()
  wait_for_load()
  assert(text_of(css("#loaded-at")) != first_load, "reload() did not load the page again")
  back()
  expect_url(/\/index\.html$/)
  expect_title(/playground/)
  forward()
  expect_url("/page2.html")
  goto("/page2.html?from=test")
  wait_for_url("/page2.html?from=test")
  wait_for_url(/\?from=TEST$/i)
  goto("/index.html")
  expect_text(testid("clicks"), "0")
  goto(env("SITE") + "/page2.html")
  expect_url(env("SITE") + "/page2.html")

  smart_targets()
  log("@@ done " + url())
"""

SMART = r"""
function smart_targets() {
  goto("/smart.html")
  click("Save")
  expect_text(testid("out"), "button Save")
  fill("Save", "typed")
  expect_value(css("#save-field"), "typed")
  fill("Email", "ada@example.com")
  expect_value(css("#email"), "ada@example.com")
  click("Email")
  expect_text(testid("out"), "button Email")
  fill("Coupon code", "UNO10")
  expect_value(css("#coupon"), "UNO10")
  click("Coupon code")
  expect_text(testid("out"), "placeholder Coupon code")
  click("Plain target")
  expect_text(testid("out"), "text Plain target")
  click("Next")
  expect_text(testid("out"), "link Next")
  click("Twin")
  expect_text(testid("out"), "visible Twin")
  expect_equal(count("Twin"), 1)
  fill("City name", "Paris")
  expect_value(css("#city"), "Paris")
  expect_value("City name", "Paris")
  click("Archive")
  expect_text(testid("out"), "label Archive")
  fill("Archive", "2025")
  expect_value(css("#archive"), "2025")
  click("Later")
  expect_text(testid("out"), "button Later")
}
"""


def test_every_builtin_passes(tmp_path: Path, site_url: str, chromium_path: str) -> None:
    project = make_project(
        tmp_path,
        site_url,
        chromium_path,
        {"everything": scenario_file("everything", EVERYTHING, SMART)},
        action=5000,
        expect=5000,
    )
    run = run_scenarios(project, ["everything"], env={"SITE": site_url})["everything"]
    assert run.code == 0, run.explain()
    assert run.result["outcome"] == "completed", run.explain()
    assert run.result["error"] is None
    assert run.logs == [f"done {site_url}/smart.html"], run.explain()

    run_dir = project / run.result["runDir"]
    events = read_events(run_dir, finished=True)
    shots = [e["path"] for e in events if e["kind"] == "screenshot"]
    assert len(shots) == 2, shots
    assert shots[0].endswith("/screenshot/after-actions.png"), shots
    for shot in shots:
        data = (project / shot).read_bytes()
        assert data.startswith(b"\x89PNG\r\n\x1a\n"), shot
    assert not any(e["kind"] == "step:fail" for e in events)
    assert events[-1] == {**events[-1], "kind": "run:finished", "outcome": "completed"}


# --- errors caught inside four scenarios (run side by side) -------------------------------
# Most of these wait out a timeout (1000 ms here) before failing, so they are spread over
# four scenarios of about six waits each, which run at the same time.

CAUGHT_A = r"""
  goto("/errors.html")
  try { click(css(".nothing-here")) } catch (e) { report("css-none", e) }
  try { click("Remove") } catch (e) { report("smart-many", e) }
  try { fill("Nowhere", "x") } catch (e) { report("fill-none", e) }
  try { expect_visible(css(".row")) } catch (e) { report("expect-strict", e) }
  try { expect_equal(is_checked(css(".row")), true) } catch (e) { report("query-strict", e) }
  try { expect_visible("Not on the page") } catch (e) { report("expect-visible-none", e) }
  try { expect_hidden(role("heading", "Error cases")) } catch (e) { report("expect-hidden", e) }
  try { expect_count(css(".row"), 2) } catch (e) { report("expect-count", e) }
  try { expect_value(label("Quantity"), "2") } catch (e) { report("expect-value", e) }
  log("@@ " + json({tag: "end-a", name: "", message: ""}))
"""

CAUGHT_C = r"""
  goto("/errors.html")
  try { expect_attr(label("Quantity"), "value", /^9/i) } catch (e) { report("expect-attr", e) }
  try { expect_text(testid("total"), /total: 99/i) } catch (e) { report("expect-text-regex", e) }
  try { expect_contains(testid("total"), "EUROS") } catch (e) { report("expect-contains", e) }
  try { expect_url("/other.html") } catch (e) { report("expect-url", e) }
  try { expect_url(/other\.html$/) } catch (e) { report("expect-url-regex", e) }
  try { expect_title("Another title") } catch (e) { report("expect-title", e) }
  log("@@ " + json({tag: "end-c", name: "", message: ""}))
"""

CAUGHT_B = r"""
  goto("/errors.html")
  try { upload(css("input"), "../outside.txt") } catch (e) { report("upload-outside", e) }
  try { upload(css("input"), "/etc/hostname") } catch (e) { report("upload-absolute", e) }
  try { upload(css("input"), "files/missing.txt") } catch (e) { report("upload-missing", e) }
  try { click("Delete", {button: "side"}) } catch (e) { report("click-button", e) }
  try { const o = {forse: true}; click("Delete", o) } catch (e) { report("click-unknown", e) }
  try { click(css("#nothing-here"), {timeout: 7}) } catch (e) { report("click-timeout", e) }
  try { click("Delete", {timeout: 0}) } catch (e) { report("click-timeout-zero", e) }
  try { wait_for_url("**/other.html") } catch (e) { report("wait-url-glob", e) }
  try { expect_url("*/other.html") } catch (e) { report("expect-url-glob", e) }
  try { click("Delete", "left") } catch (e) { report("click-not-object", e) }
  try { wait(-1) } catch (e) { report("wait-negative", e) }
  try { wait(60001) } catch (e) { report("wait-long", e) }
  try { wait(0 / 0) } catch (e) { report("wait-nan", e) }
  try { select("Quantity", 3) } catch (e) { report("select-type", e) }
  try { click(42) } catch (e) { report("target-type", e) }
  try { css(".row").nth(1.5) } catch (e) { report("nth-fraction", e) }
  try { css(".row").filter({text: "x"}) } catch (e) { report("filter-unknown", e) }
  try { role("button", "Delete", {level: "2"}) } catch (e) { report("role-level", e) }
  try { role("button", "Delete", {pressed: 1}) } catch (e) { report("role-bool", e) }
  try { goto(42) } catch (e) { report("goto-type", e) }
  try { expect_count(css(".row"), 1.5) } catch (e) { report("count-fraction", e) }
  try { expect_text(css("#total"), "x") } catch (e) { report("expect-text-none", e) }
  try { expect_checked("Newsletter") } catch (e) { report("expect-checked", e) }
  try { expect_checked(label("Quantity")) } catch (e) { report("expect-checked-text", e) }
  try { expect_unchecked(role("checkbox", "Nope")) } catch (e) { report("unchecked-none", e) }
  try { expect_disabled("Quantity") } catch (e) { report("expect-disabled", e) }
  log("@@ " + json({tag: "end-b", name: "", message: ""}))
"""

CAUGHT_D = r"""
  goto("/errors.html")
  try { expect_enabled("Frozen") } catch (e) { report("expect-enabled", e) }
  try { expect_hidden("Delete") } catch (e) { report("expect-hidden-smart", e) }
  try { select("Size", "XL") } catch (e) { report("select-missing", e) }
  try { click("Under cover") } catch (e) { report("covered", e) }
  try { click("Frozen") } catch (e) { report("smart-disabled", e) }
  const ghost = css("button").filter({has_text: "Ghost button"})
  try { wait_for(ghost) } catch (e) { report("wait-hidden", e) }
  try { count(css("a[[")) } catch (e) { report("count-bad-css", e) }
  log("@@ " + json({tag: "end-d", name: "", message: ""}))
"""

REPORT = """
function report(tag, e) {
  log("@@ " + json({tag: tag, name: e.name, message: e.message}))
}
"""


def test_errors_are_named_and_actionable(tmp_path: Path, site_url: str, chromium_path: str) -> None:
    project = make_project(
        tmp_path,
        site_url,
        chromium_path,
        {
            "caught-a": scenario_file("caught-a", CAUGHT_A, REPORT),
            "caught-b": scenario_file("caught-b", CAUGHT_B, REPORT),
            "caught-c": scenario_file("caught-c", CAUGHT_C, REPORT),
            "caught-d": scenario_file("caught-d", CAUGHT_D, REPORT),
        },
        action=1000,
        expect=1000,
    )
    runs = run_scenarios(project, ["caught-a", "caught-b", "caught-c", "caught-d"])
    got: dict[str, tuple[str, str]] = {}
    for run in runs.values():
        assert run.code == 0, run.explain()
        for entry in map(json.loads, run.logs):
            got[entry["tag"]] = (entry["name"], entry["message"])
    ends = {"end-a", "end-b", "end-c", "end-d"}
    assert ends <= set(got), "\n".join(r.explain() for r in runs.values())

    def check(tag: str, name: str, *fragments: str) -> None:
        assert tag in got, f"{tag} did not fail\n" + "\n".join(r.explain() for r in runs.values())
        error_name, message = got[tag]
        assert error_name == name, f"{tag}: {error_name}: {message}"
        for fragment in fragments:
            assert fragment in message, f"{tag}: {fragment!r} not in {message!r}"

    check(
        "css-none",
        "LocatorError",
        'click: no element matches <Locator css=".nothing-here">',
        "1000 ms",
    )
    check(
        "smart-many",
        "LocatorError",
        '"Remove" is ambiguous',
        "matches 7 visible elements",
        '1) <button> "Remove"',
        '5) <button> "Remove"',
        "and 2 more",
        ".first()",
    )
    assert "6) <button>" not in got["smart-many"][1]
    # fill/select try the label and the placeholder first.
    check(
        "fill-none",
        "LocatorError",
        'no visible element matches "Nowhere"',
        'tried label "Nowhere"; placeholder "Nowhere"; '
        'role button/link/menuitem/tab/checkbox/radio/option named "Nowhere"; text "Nowhere"',
    )
    check(
        "expect-strict",
        "LocatorError",
        '<Locator css=".row"> matches 3 elements',
        '1) <li> "Row one"',
        '3) <li> "Row three"',
    )
    check("query-strict", "LocatorError", "matches 3 elements", '2) <li> "Row two"')
    check(
        "expect-visible-none",
        "AssertionError",
        'expected "Not on the page" to be visible',
        STRATEGIES.format("Not on the page"),
    )
    check("expect-hidden", "AssertionError", 'name="Error cases"> to be hidden', "visible")
    check(
        "expect-count", "AssertionError", 'expected <Locator css=".row"> to match 2', "received 3"
    )
    check("expect-value", "AssertionError", 'to have value "2"', 'received "1"')
    check("expect-attr", "AssertionError", "to have value=/^9/i", 'received "1"')
    check(
        "expect-text-regex",
        "AssertionError",
        "to have text /total: 99/i",
        'received "Total: 25 EUR"',
    )
    check(
        "expect-contains", "AssertionError", 'to contain text "EUROS"', 'received "Total: 25 EUR"'
    )
    check(
        "expect-url",
        "AssertionError",
        f'expected URL "{site_url}/other.html"',
        f'received "{site_url}/errors.html"',
    )
    check("expect-url-regex", "AssertionError", r"expected URL /other\.html$/", "errors.html")
    check(
        "expect-title", "AssertionError", 'expected title "Another title"', 'received "Error cases"'
    )
    check("upload-outside", "TypeError", "inside the project", "../outside.txt is outside")
    check("upload-absolute", "TypeError", "/etc/hostname is outside")
    check("upload-missing", "TypeError", "no such file files/missing.txt")
    check("click-button", "TypeError", "click() option button", "side", '"left", "right" or')
    check(
        "click-unknown",
        "TypeError",
        "click() has no option 'forse' (did you mean 'force'?)",
        "its options: button, clickCount, count, delay, force, modifiers, position, timeout, trial",
    )
    # A click's own timeout, as Playwright's click({timeout}): 7 ms, not the config's.
    check("click-timeout", "LocatorError", "no element matches", "(waited 7 ms)")
    check("click-timeout-zero", "TypeError", "click() option timeout: 0 is not valid")
    # Playwright's glob idiom is said at once (a string is the exact URL here).
    check("wait-url-glob", "TypeError", "looks like a Playwright glob", r"/\/other\.html$/")
    check("expect-url-glob", "TypeError", "expect_url(): ", "looks like a Playwright glob")
    check("click-not-object", "TypeError", "click() options must be an object, got string")
    check("wait-negative", "TypeError", "wait() needs milliseconds")
    check("wait-nan", "TypeError", "wait() needs milliseconds, got NaN")
    check("wait-long", "RangeError", "limited to 60000 ms", "wait_for")
    check("select-type", "TypeError", "select() needs an option or an array of options, got number")
    check("target-type", "TypeError", "click() needs a Locator or a string target, got number")
    check("nth-fraction", "TypeError", ".nth() needs a whole number")
    check("filter-unknown", "TypeError", ".filter() does not know text", "has_text, has")
    check("role-level", "TypeError", "'level' needs a number")
    check("role-bool", "TypeError", "'pressed' needs true or false")
    check("goto-type", "TypeError", "goto() needs a URL")
    check("count-fraction", "TypeError", "expect_count() needs a whole number")
    check(
        "expect-checked",
        "AssertionError",
        'expected "Newsletter" to be checked, received unchecked',
    )
    check(
        "expect-checked-text",
        "AssertionError",
        "received an element that cannot be checked",
        "Not a checkbox or radio button",
    )
    check("unchecked-none", "AssertionError", "to be unchecked, received nothing")
    check(
        "expect-disabled", "AssertionError", 'expected "Quantity" to be disabled, received enabled'
    )
    check("expect-enabled", "AssertionError", 'expected "Frozen" to be enabled, received disabled')
    check(
        "expect-hidden-smart",
        "AssertionError",
        'expected "Delete" to be hidden, received 2 visible element(s)',
        '1) <button> "Delete", 2) <button> "Delete"',
    )
    check(
        "select-missing", "TimeoutError", 'select on "Size" timed out', "did not find some options"
    )
    check(
        "covered",
        "TimeoutError",
        'click on "Under cover"',
        '<div id="cover"',
        "intercepts pointer events",
    )
    check(
        "smart-disabled", "TimeoutError", 'click on "Frozen" timed out after 1000 ms', "not enabled"
    )
    check("wait-hidden", "TimeoutError", "wait_for on", "locator resolved to hidden <button")
    check(
        "count-bad-css", "LocatorError", "count: 'a[[' is not a valid CSS selector (it ends"
    )
    check(
        "expect-text-none",
        "AssertionError",
        'expected <Locator css="#total"> to have text "x"',
        "nothing (no element matched)",
    )


# --- scenarios that fail for real: the JSON error ---------------------------------------------

FAILING: dict[str, tuple[str, str, int, int, tuple[str, ...]]] = {
    # name: (body, errorName, line, col, message fragments); line 5 is the body's first line;
    # columns are 0-based, as in the protocol's events.
    "smart-none": (
        '  goto("/errors.html")\n  click("Checkout now")',
        "LocatorError",
        6,
        2,
        (
            'no visible element matches "Checkout now" after 1000 ms',
            STRATEGIES.format("Checkout now"),
        ),
    ),
    "smart-ambiguous": (
        '  goto("/errors.html")\n  let n = 1\n  click("Delete")',
        "LocatorError",
        7,
        2,
        (
            '"Delete" is ambiguous: role button/link/menuitem/tab/checkbox/radio/option named '
            '"Delete" matches 2 visible elements',
            '1) <button> "Delete", 2) <button> "Delete"',
        ),
    ),
    "locator-many": (
        '  goto("/errors.html")\n  click(css("li.row"))',
        "LocatorError",
        6,
        2,
        (
            'click: <Locator css="li.row"> matches 3 elements',
            '1) <li> "Row one", 2) <li> "Row two", 3) <li> "Row three"',
            ".nth(i)",
        ),
    ),
    "locator-none": (
        '  goto("/errors.html")\n  click(css("#total").first())',
        "LocatorError",
        6,
        2,
        ('click: no element matches <Locator css="#total" >> first> (waited 1000 ms)',),
    ),
    "disabled": (
        '  goto("/errors.html")\n  click(role("button", "Frozen"))',
        "TimeoutError",
        6,
        2,
        ('click on <Locator role=button name="Frozen"> timed out after 1000 ms', "not enabled"),
    ),
    "text-mismatch": (
        '  goto("/errors.html")\n    expect_text(testid("total"), "Total: 22.5 EUR")',
        "AssertionError",
        6,
        4,
        (
            'expected <Locator testid="total"> to have text "Total: 22.5 EUR"',
            'received "Total: 25 EUR"',
        ),
    ),
    "nav-refused": (
        '  goto("http://127.0.0.1:{port}/")',
        "NavigationError",
        5,
        2,
        ("goto: ", "ERR_CONNECTION_REFUSED", "http://127.0.0.1:{port}/"),
    ),
    "url-timeout": (
        '  goto("/errors.html")\n  wait_for_url("/errors")',
        "TimeoutError",
        6,
        2,
        (
            'wait_for_url: the URL did not match "{site}/errors" within 3000 ms',
            '(it is "{site}/errors.html")',
        ),
    ),
    "role-option": (
        '  goto("/errors.html")\n  click(role("button", "Delete", {name: "x"}))',
        "TypeError",
        6,
        8,
        ("role() does not know the option 'name'", "known: exact, level"),
    ),
}


def test_failing_scenarios_report_json_errors(
    tmp_path: Path, site_url: str, chromium_path: str
) -> None:
    port = str(free_port())  # nothing listens on it

    def fill(text: str) -> str:
        return text.replace("{port}", port).replace("{site}", site_url)

    cases = {
        name: (fill(body), err, line, col, tuple(fill(f) for f in frags))
        for name, (body, err, line, col, frags) in FAILING.items()
    }
    project = make_project(
        tmp_path,
        site_url,
        chromium_path,
        {name: scenario_file(name, case[0]) for name, case in cases.items()},
        action=1000,
        expect=1000,
        navigation=3000,
    )
    runs = run_scenarios(project, list(cases))
    problems = []
    for name, (_body, error_name, line, col, fragments) in cases.items():
        run = runs[name]
        error = run.result.get("error") or {}
        expected = {
            "exit": 1,
            "outcome": "failed",
            "errorName": error_name,
            "file": f"unotest/e2e/{name}.test.js",
            "line": line,
            "col": col,
        }
        actual = {
            "exit": run.code,
            "outcome": run.result.get("outcome"),
            "errorName": error.get("errorName"),
            "file": error.get("file"),
            "line": error.get("line"),
            "col": error.get("col"),
        }
        if actual != expected:
            problems.append(f"{name}: {actual} != {expected}\n{run.explain()}")
            continue
        missing = [f for f in fragments if f not in error.get("error", "")]
        if missing:
            problems.append(f"{name}: {missing} not in {error.get('error')!r}")
        if not run.result.get("bundlePath") or not (project / run.result["bundlePath"]).is_dir():
            problems.append(f"{name}: no failure bundle ({run.result.get('bundlePath')})")
        where = f"unotest/e2e/{name}.test.js:{line}:{col}: {error_name}: "
        if where not in run.stderr:
            problems.append(
                f"{name}: the console summary does not name file:line:col\n{run.stderr}"
            )
    assert not problems, "\n\n".join(problems)
