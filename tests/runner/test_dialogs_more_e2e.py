"""Dialogs answered one by one and read in turn, as a ported suite meets them: real
Chromium, ``unotest e2e``, the page served on 127.0.0.1 by the test.

``on_dialog([...])`` answers the next dialogs one each (Playwright's ``page.once``), then
the standing answer comes back; ``"accept"`` gives a prompt its default value;
``wait_for_dialog()`` returns each dialog once, oldest first, whether it opened before
the call or while it waits, and times out in one sentence. ``unotest check`` knows the
new built-ins' arities and options before any browser starts.
"""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from sites import caught, config_yaml, e2e_json, scenario_source, unotest_env, write_project

PAGE = """<!doctype html>
<title>Dialogs</title>
<button onclick="two.textContent = [prompt('First name?', 'Grace'),
  prompt('Last name?', 'Hopper')].join(' ')">Two prompts</button>
<button onclick="r.textContent = confirm('Delete everything?') ? 'deleted' : 'kept'">Delete</button>
<button onclick="setTimeout(() => { later.textContent = confirm('Proceed?') }, 300)">Later</button>
<p id=two></p><p id=r></p><p id=later></p>
"""

LISTS = r"""  goto("dialogs.html")
  on_dialog(["accept", {action: "accept", text: "Ada"}, "dismiss"])
  click("Two prompts")
  expect_text(css("#two"), "Grace Ada")
  expect_equal(wait_for_dialog(), {type: "prompt", message: "First name?",
    default_value: "Grace", answer: "accepted", text: "Grace"})
  const second = wait_for_dialog()
  expect_equal([second.message, second.text], ["Last name?", "Ada"])
  click("Delete")
  expect_text(css("#r"), "kept")
  on_dialog("accept")
  click("Two prompts")
  expect_text(css("#two"), "Grace Hopper")
  on_dialog(["dismiss"])
  click("Delete")
  expect_text(css("#r"), "kept")
  click("Delete")
  expect_text(css("#r"), "deleted")
  on_dialog(["accept", "accept"])
  on_dialog("dismiss")
  click("Delete")
  expect_text(css("#r"), "kept")
  on_dialog("accept", "")
  click("Two prompts")
  expect_text(css("#two"), " ")
"""
"""The list answers the two prompts of one click differently, then the confirm; used
up, the standing answer (dismiss) is back; accept without text gives the default values;
a list after a standing accept is used first; a standing answer drops what a list had
left; accept with "" gives an empty answer."""

WAITS = r"""  goto("dialogs.html")
  click("Later")
  const d = wait_for_dialog()
  expect_equal([d.type, d.message, d.default_value, d.answer, d.text],
    ["confirm", "Proceed?", "", "dismissed", null])
  expect_text(css("#later"), "false")
  click("Delete")
  click("Delete")
  expect_equal(wait_for_dialog().message, "Delete everything?")
  expect_equal(wait_for_dialog().type, "confirm")
  try { wait_for_dialog({timeout: 300}) } catch (e) { log("@@ " + e.name + ": " + e.message) }
  expect_equal(dialog_message(), "Delete everything?")
"""
"""A confirm that opens while wait_for_dialog waits; two that opened before, each
returned once, oldest first; then none left: the timeout, in one sentence."""

TIMES_OUT = r"""  goto("dialogs.html")
  wait_for_dialog({timeout: 250})
"""


def unotest_check(project: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "unotest", "check"],
        cwd=project,
        env=unotest_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )


MISUSED = "  const no_key = {wait: 1}\n" + caught(
    "on_dialog([])",
    "on_dialog([1])",
    'on_dialog(["accept"], "Ada")',
    'on_dialog([{action: "dismiss", text: "x"}])',
    'on_dialog([{action: "accept", text: 3}])',
    "on_dialog(3)",
    "wait_for_dialog(5)",
    "wait_for_dialog({timeout: -1})",
    "wait_for_dialog(no_key)",
)

CHECKED = r"""  wait_for_dialog({timout: 5})
  wait_for_dialog({}, 1)
  key_down()
  key_up("a", "b")
"""

MISUSED_SAYS = [
    'TypeError: on_dialog([]) answers no dialog: give one answer per dialog, e.g. ["accept", '
    '"dismiss"]',
    'TypeError: on_dialog() list item 1: 1 is no answer: "accept", "dismiss" or '
    '{action: "accept", text: "..."}',
    "TypeError: on_dialog(list) takes no text: give a prompt's text in its item, "
    '{action: "accept", text: "Ada"}',
    "TypeError: on_dialog() list item 1: the text is what an accepted prompt() gets, a "
    'string, and goes only with accept; got { action: "dismiss", text: "x" }',
    "TypeError: on_dialog() list item 1: the text is what an accepted prompt() gets, a "
    'string, and goes only with accept; got { action: "accept", text: 3 }',
    'TypeError: on_dialog() takes "accept", "dismiss" or a list of answers (one per '
    "dialog), got number",
    "TypeError: wait_for_dialog() takes an options object {timeout} last, got number",
    "TypeError: wait_for_dialog() option timeout: -1 is not valid: milliseconds",
    "TypeError: wait_for_dialog() has no option 'wait'",
]
"""What MISUSED logs, one sentence for each call: each line starts so (the options'
sentences, shared by every built-in, go on to say what the option takes)."""


def test_a_list_answers_dialogs_one_by_one_and_wait_for_dialog_reads_them(
    tmp_path: Path, static_site: str, chromium_path: str
) -> None:
    timeout = {"action": 5000, "expect": 2000, "navigation": 10000, "scenario": 60000}
    project = write_project(
        tmp_path,
        config_yaml(f"{static_site}/site/", timeout=timeout, chromium=chromium_path),
        {
            "lists": scenario_source("lists", LISTS, fn="test_lists"),
            "waits": scenario_source("waits", WAITS, fn="test_waits"),
            "times-out": scenario_source("times-out", TIMES_OUT, fn="test_times_out"),
            "misused": scenario_source("misused", MISUSED, fn="test_misused"),
        },
        files={"site/dialogs.html": PAGE},
    )
    check = unotest_check(project)
    assert check.returncode == 0, check.stdout + check.stderr  # check knows the built-ins
    with ThreadPoolExecutor(max_workers=2) as pool:
        lists, waits, times_out, misused = pool.map(
            lambda name: e2e_json(project, name), ["lists", "waits", "times-out", "misused"]
        )

    code, result, output = lists
    assert code == 0 and result["outcome"] == "completed", output

    code, result, output = waits
    assert code == 0 and result["outcome"] == "completed", output
    said = [line[3:] for line in output.splitlines() if line.startswith("@@ ")]
    assert said == [
        "TimeoutError: wait_for_dialog: no dialog opened within 300 ms (the last one, "
        'confirm "Delete everything?", was returned by an earlier wait_for_dialog)'
    ], output

    code, result, output = times_out
    assert code == 1 and result["outcome"] == "failed", output
    error = result["error"]
    assert error["errorName"] == "TimeoutError", error
    assert error["error"] == "wait_for_dialog: no dialog opened within 250 ms", error
    assert (error["line"], error["col"]) == (6, 2), error

    code, result, output = misused
    assert code == 0, output
    said = [line[3:] for line in output.splitlines() if line.startswith("@@ ")]
    assert len(said) == len(MISUSED_SAYS), said
    for line, start in zip(said, MISUSED_SAYS, strict=True):
        assert line.startswith(start), said


def test_check_knows_the_arities_and_options_of_dialogs_and_keys(tmp_path: Path) -> None:
    project = write_project(
        tmp_path,
        config_yaml("http://127.0.0.1:9/"),
        {"checked": scenario_source("checked", CHECKED, fn="test_checked")},
    )
    check = unotest_check(project)
    said = check.stdout + check.stderr
    assert check.returncode != 0, said
    where = "unotest/e2e/checked.test.js"
    assert f"{where}:5:" in said and "timout" in said, said  # the options key
    for line in (6, 7, 8):  # the arities
        assert f"{where}:{line}:" in said, said
    assert "wait_for_dialog" in said and "key_down" in said and "key_up" in said, said
