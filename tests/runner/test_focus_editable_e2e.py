"""``expect_focused`` and ``expect_editable`` (Playwright's ``toBeFocused`` and
``toBeEditable``) and their ``expect_not_`` twins, in real Chromium: a keyboard shortcut
that focuses a field, a read-only field, and what a failure says was found."""

from __future__ import annotations

from pathlib import Path

from sites import config_yaml, e2e_json, scenario_source, write_project

PAGE = """<!doctype html>
<title>Focus</title>
<label>Search <input id=q></label>
<label>Code <input id=code readonly value=ABC></label>
<script>
  document.addEventListener('keydown', e => {
    if (e.ctrlKey && e.key === 'k') { e.preventDefault(); document.querySelector('#q').focus(); }
  });
</script>
"""

PASSES = r"""  goto("focus.html")
  expect_not_focused("Search")
  press("Control+k")
  expect_focused("Search")
  expect_not_focused("Code")
  expect_editable("Search")
  expect_not_editable("Code")
"""

FAILS = r"""  goto("focus.html")
  expect_focused("Search")
"""


def test_focus_and_editable_expectations(
    tmp_path: Path, static_site: str, chromium_path: str
) -> None:
    timeout = {"action": 3000, "expect": 1000, "navigation": 10000, "scenario": 60000}
    project = write_project(
        tmp_path,
        config_yaml(f"{static_site}/site/", timeout=timeout, chromium=chromium_path),
        {
            "passes": scenario_source("passes", PASSES, fn="test_passes"),
            "fails": scenario_source("fails", FAILS, fn="test_fails"),
        },
        files={"site/focus.html": PAGE},
    )
    results = {name: e2e_json(project, name) for name in ("passes", "fails")}
    code, result, output = results["passes"]
    assert code == 0 and result["outcome"] == "completed", output
    code, result, output = results["fails"]
    assert code == 1, output
    error = result["error"]
    assert error["errorName"] == "AssertionError", error
    assert 'expected "Search" to be focused' in error["error"], error
    assert "received not focused" in error["error"], error
