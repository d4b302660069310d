"""``alert``, ``confirm`` and ``prompt`` as a ported suite meets them: real Chromium,
``unotest e2e``. Dismissed until the scenario says ``on_dialog("accept", text?)``; the
last message read with ``dialog_message()``; each dialog noted in the failure bundle's
``console.json``, so a failure after a dismissed confirm says what happened."""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from sites import config_yaml, e2e_json, scenario_source, unotest_env, write_project

PAGE = """<!doctype html>
<title>Dialogs</title>
<button onclick="r.textContent = confirm('Delete everything?') ? 'deleted' : 'kept'">Delete</button>
<button onclick="n.textContent = prompt('Your name?') ?? 'nobody'">Name</button>
<button onclick="alert('Saved!'); a.textContent = 'after alert'">Save</button>
<p id=r></p><p id=n></p><p id=a></p>
"""

DIALOGS = r"""  goto("dialogs.html")
  expect_equal(dialog_message(), null)
  click("Delete")
  expect_text(css("#r"), "kept")
  expect_equal(dialog_message(), "Delete everything?")
  click("Save")
  expect_text(css("#a"), "after alert")
  on_dialog("accept")
  click("Delete")
  expect_text(css("#r"), "deleted")
  on_dialog("accept", "Ada")
  click("Name")
  expect_text(css("#n"), "Ada")
  expect_equal(dialog_message(), "Your name?")
  on_dialog("dismiss")
  click("Name")
  expect_text(css("#n"), "nobody")
"""

DISMISSED = r"""  goto("dialogs.html")
  click("Delete")
  expect_text(css("#r"), "deleted")
"""

MISUSED = r"""  try { on_dialog("yes") } catch (e) { log("@@ " + e.message) }
  try { on_dialog("dismiss", "Ada") } catch (e) { log("@@ " + e.message) }
"""


def test_dialogs_are_dismissed_until_the_scenario_accepts_them(
    tmp_path: Path, static_site: str, chromium_path: str
) -> None:
    timeout = {"action": 5000, "expect": 1500, "navigation": 10000, "scenario": 60000}
    project = write_project(
        tmp_path,
        config_yaml(f"{static_site}/site/", timeout=timeout, chromium=chromium_path),
        {
            "dialogs": scenario_source("dialogs", DIALOGS, fn="test_dialogs"),
            "dismissed": scenario_source("dismissed", DISMISSED, fn="test_dismissed"),
            "misused": scenario_source("misused", MISUSED, fn="test_misused"),
        },
        files={"site/dialogs.html": PAGE},
    )
    check = subprocess.run(
        [sys.executable, "-m", "unotest", "check"],
        cwd=project,
        env=unotest_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert check.returncode == 0, check.stdout + check.stderr  # check knows the built-ins
    with ThreadPoolExecutor(max_workers=2) as pool:
        dialogs, dismissed, misused = pool.map(
            lambda name: e2e_json(project, name), ["dialogs", "dismissed", "misused"]
        )

    code, result, output = dialogs
    assert code == 0 and result["outcome"] == "completed", output

    code, result, output = misused
    assert code == 0, output
    said = [line[3:] for line in output.splitlines() if line.startswith("@@ ")]
    assert said[0] == 'on_dialog() takes "accept" or "dismiss", got "yes"', said
    assert said[1].startswith('on_dialog("accept", text): the text is what a prompt() gets'), said

    # The confirm was dismissed (as Playwright does when nobody listens): the failure's
    # bundle says so, so the person sees why "kept" came instead of "deleted".
    code, result, output = dismissed
    assert code == 1 and result["outcome"] == "failed", output
    console = json.loads((project / result["bundlePath"] / "console.json").read_text())
    noted = [entry["text"] for entry in console if entry["type"] == "dialog"]
    assert noted == ["confirm 'Delete everything?' dismissed"], console
