"""Parameterised scenarios (``const CASES`` and a test taking the case) end to end: real
Chromium through ``unotest e2e`` and ``unotest collection``, ``unotest list`` and the
index cache without a browser.

A project in ``tmp_path`` has ``shop/pay.test.js`` with three cases (``visa``,
``master``, and one without a name: ``2``), the last of which fails; its pages are
served on 127.0.0.1 by this module.

Covered: each case listed as a scenario of its own (``unotest list`` and ``--json``,
from the index cache too), run (``unotest e2e 'shop/pay[visa]'``, the case its test's
parameter), debugged (``--break`` in a case), retried and reported one by one (a
collection listing the file runs every case, one listing a case runs it alone, JUnit
and JSON name each), the file's own name or an unknown case refused in one sentence
with a did-you-mean, and a collection entry naming an unknown case warned about.
"""

from __future__ import annotations

import json
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_runs import UNOTEST, Run, launch
from events import append_command, is_kind, wait_for_event
from net import serve_directory
from sites import collection_yaml, config_yaml, unotest_env, write_files, write_project

from runner.project.index import Project, ProjectIndex
from runner.project.index_cache import load_summary
from runner.project.root import case_problem, split_case_name

__all__ = ["launch"]  # the fixture, imported for pytest

RUN_TIMEOUT_S = 180
PAY_FILE = "unotest/e2e/shop/pay.test.js"
PAY = """\
// id-pay
// Pays by card @smoke
// #4f46e5
const CASES = [
  { name: "visa", card: "4242" },
  { name: "master", card: "5555" },
  { card: "0000" },
]

function test_pay(c) {
  goto("/index.html")
  log("@ pays with " + c.card + " of " + len(CASES))
  if (c.card == "0000") {
    fail("declined")
  }
}
"""
PAY_LOG_LINE = 12
PLAIN = '// id-plain\n// Plain\n// #4f46e5\nfunction test_plain() {\n  log("@ plain")\n}\n'
CASES = ["shop/pay[visa]", "shop/pay[master]", "shop/pay[2]"]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = write_files(
        tmp_path_factory.mktemp("cases-site"),
        {"index.html": "<!doctype html><title>Pay</title><h1>Pay</h1>\n"},
    )
    with serve_directory(root, "cases-site") as url:
        yield url


def make_project(root: Path, url: str, collections: dict[str, str] | None = None) -> Path:
    timeout = {"action": 3000, "expect": 3000, "navigation": 15000, "scenario": 60000}
    return write_project(
        root,
        config_yaml(url, timeout=timeout),
        {"shop/pay": PAY, "plain": PLAIN},
        collections=collections or {},
    )


def unotest(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*UNOTEST, *args],
        cwd=project,
        env=unotest_env(NO_COLOR="1"),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
    )


# --- names, the index and its cache (no browser) ---------------------------------------------


def test_case_names_split_and_problems_are_one_sentence() -> None:
    assert split_case_name("shop/pay[visa]") == ("shop/pay", "visa")
    assert split_case_name("shop/pay") == ("shop/pay", None)
    assert split_case_name("a[b]/c") == ("a[b]/c", None)
    cases = {"shop/pay": ["visa", "master", "2"]}
    assert case_problem("shop/pay[visa]", cases) is None
    assert case_problem("smoke", cases) is None
    assert case_problem("shop/pay", cases) == (
        "'shop/pay' runs once per case of its CASES: name one, e.g. 'shop/pay[visa]' (its "
        "cases: shop/pay[visa], shop/pay[master], shop/pay[2]); a collection listing "
        "'shop/pay' runs them all"
    )
    assert case_problem("shop/pay[vsa]", cases) == (
        "'shop/pay' has no case 'vsa' (did you mean 'shop/pay[visa]'?); its cases: "
        "shop/pay[visa], shop/pay[master], shop/pay[2]"
    )
    assert case_problem("shop/pay[amex]", cases) == (
        "'shop/pay' has no case 'amex'; its cases: shop/pay[visa], shop/pay[master], shop/pay[2]"
    )


def test_the_index_and_its_cache_know_the_cases(tmp_path: Path) -> None:
    project = make_project(
        tmp_path / "proj",
        "http://127.0.0.1:9",
        {
            "all": collection_yaml(["shop/pay", "plain"]),
            "one": collection_yaml(CASES[1:2]),
            "setup": "setup:\n  - shop/pay\nscenarios:\n  - plain\n",
        },
    )
    index = ProjectIndex.load(Project(project))
    assert index.errors == []
    assert index.cases == {"shop/pay": ["visa", "master", "2"]}
    assert sorted(index.scenarios) == sorted(["plain", *CASES])
    assert [m["name"] for m in index.scenario_metas] == ["plain", *CASES]
    assert index.collections["all"].meta["scenarios"] == [*CASES, "plain"]
    assert index.collections["one"].meta["scenarios"] == ["shop/pay[master]"]
    setup = index.collections["setup"]  # setup: names the file too: every case first
    assert setup.use is not None and list(setup.use.setup) == CASES
    assert setup.meta["scenarios"] == ["plain"]
    # Read from the file: a worker asked for a case parses its file once.
    worker = ProjectIndex.load_helpers(Project(project))
    master = worker.load_scenario("shop/pay[master]")
    assert master is not None and master.case is not None and master.case.name == "master"
    assert worker.load_scenario("shop/pay[visa]") is worker.scenarios["shop/pay[visa]"]
    assert worker.load_scenario("shop/pay[amex]") is None
    assert "'shop/pay' has no case 'amex'" in worker.errors[-1].message
    # The cache: the same, from its JSON, without parsing.
    first = load_summary(Project(project))
    cached = load_summary(Project(project))
    for summary in (first, cached):
        assert summary.cases == {"shop/pay": ["visa", "master", "2"]}
        assert [m["name"] for m in summary.scenario_metas] == ["plain", *CASES]
        assert summary.titles()["shop/pay[2]"] == "Pays by card @smoke [2]"
        assert summary.collection_use["setup"]["setup"] == CASES


def test_list_shows_each_case(tmp_path: Path) -> None:
    project = make_project(tmp_path / "proj", "http://127.0.0.1:9")
    text = unotest(project, "list")
    assert text.returncode == 0, text.stderr
    assert "  shop/pay[master]  Pays by card @smoke [master]  [id-pay]" in text.stdout
    assert "scenarios (4)" in text.stdout
    listed = json.loads(unotest(project, "list", "--json").stdout)["scenarios"]
    assert [(s["name"], s.get("case"), s["path"]) for s in listed] == [
        ("plain", None, "unotest/e2e/plain.test.js"),
        ("shop/pay[visa]", "visa", PAY_FILE),
        ("shop/pay[master]", "master", PAY_FILE),
        ("shop/pay[2]", "2", PAY_FILE),
    ]
    assert listed[1]["tags"] == ["@smoke"]
    grep = unotest(project, "list", "--grep", r"\[master\]")
    assert "scenarios (1 of 4 matching" in grep.stdout


def test_the_files_own_name_or_an_unknown_case_is_refused(tmp_path: Path) -> None:
    project = make_project(tmp_path / "proj", "http://127.0.0.1:9")
    own = unotest(project, "e2e", "shop/pay")
    assert own.returncode == 2
    assert own.stderr == (
        "unotest: 'shop/pay' runs once per case of its CASES: name one, e.g. "
        "'shop/pay[visa]' (its cases: shop/pay[visa], shop/pay[master], shop/pay[2]); a "
        "collection listing 'shop/pay' runs them all\n"
    )
    by_path = unotest(project, "e2e", PAY_FILE)
    assert by_path.returncode == 2 and "runs once per case" in by_path.stderr
    unknown = unotest(project, "e2e", "shop/pay[vsia]")
    assert unknown.returncode == 2
    assert unknown.stderr == (
        "unotest: 'shop/pay' has no case 'vsia' (did you mean 'shop/pay[visa]'?); its "
        "cases: shop/pay[visa], shop/pay[master], shop/pay[2]\n"
    )
    assert "Traceback" not in own.stderr + by_path.stderr + unknown.stderr


# --- running ---------------------------------------------------------------------------------


def test_a_case_runs_as_a_scenario_of_its_own(
    tmp_path: Path, site: str, launch: Callable[..., Run]
) -> None:
    project = make_project(tmp_path / "proj", site)
    visa = launch(project, "e2e", "shop/pay[visa]")
    declined = launch(project, "e2e", "shop/pay[2]", "--retries", "1")
    debugged = launch(project, "e2e", "shop/pay[master]", "--break", f"shop/pay:{PAY_LOG_LINE}")

    assert visa.wait() == 0, visa.stdout + visa.stderr
    assert visa.logged() == ["pays with 4242 of 3"]
    assert "passed  shop/pay[visa]" in visa.stdout
    manifest = json.loads((visa.run_dir / "manifest.json").read_text())
    assert manifest["ref"] == "shop/pay[visa]"
    assert visa.runtime()["testFn"] == "test_pay"

    # Retried as a scenario: two attempts, each a run of the case.
    assert declined.wait() == 1, declined.stdout + declined.stderr
    assert declined.logged() == ["pays with 0000 of 3"] * 2
    assert f"{PAY_FILE}:14:4: ScenarioError: declined" in declined.stdout

    # --break in the case's file (by its file's name) pauses there; the case is a variable.
    _, paused = wait_for_event(debugged, is_kind("paused", reason="breakpoint"))
    assert paused["line"] == PAY_LOG_LINE
    runtime = debugged.runtime()
    assert runtime["file"] == PAY_FILE
    assert "master" in json.dumps(runtime.get("vars", {}))
    append_command(debugged.run_dir, "continue")
    assert debugged.wait() == 0, debugged.stdout + debugged.stderr
    assert debugged.logged() == ["pays with 5555 of 3"]


def junit_cases(path: Path) -> dict[str, dict[str, Any]]:
    found = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        found[case.get("classname", "")] = {
            "name": case.get("name"),
            "children": [child.tag for child in case],
        }
    return found


def test_a_collection_runs_and_reports_each_case(tmp_path: Path, site: str) -> None:
    project = make_project(
        tmp_path / "proj",
        site,
        {
            "all": collection_yaml(["shop/pay", "plain"]),
            "one": collection_yaml(["shop/pay[master]", "shop/pay[amex]"]),
        },
    )
    junit, report = tmp_path / "all.xml", tmp_path / "all.json"
    done = unotest(
        project,
        "collection",
        "all",
        "--workers",
        "2",
        "--retries",
        "1",
        "--reporter",
        f"list,junit={junit},json={report}",
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "unotest collection all: 4 scenarios, 2 worker(s)" in done.stdout
    passed = [line for line in done.stdout.splitlines() if line.startswith("  ✓ ")]
    for name in ("shop/pay[visa]", "shop/pay[master]", "plain"):
        assert any(f"] {name}  (" in line for line in passed), (name, passed)
    assert "↻" in done.stdout and "shop/pay[2]" in done.stdout  # retried
    cases = junit_cases(junit)
    assert {name: case["name"] for name, case in cases.items()} == {
        "shop/pay[visa]": "Pays by card @smoke [visa]",
        "shop/pay[master]": "Pays by card @smoke [master]",
        "shop/pay[2]": "Pays by card @smoke [2]",
        "plain": "Plain",
    }
    assert "failure" in cases["shop/pay[2]"]["children"]
    assert cases["shop/pay[visa]"]["children"] in ([], ["system-out"])
    ends = [e["data"] for e in json.loads(report.read_text()) if e["type"] == "test_end"]
    assert sorted((e["name"], e["status"]) for e in ends) == [
        ("plain", "passed"),
        ("shop/pay[2]", "failed"),
        ("shop/pay[master]", "passed"),
        ("shop/pay[visa]", "passed"),
    ]

    one = unotest(project, "collection", "one")
    assert one.returncode == 0, one.stdout + one.stderr
    assert "unotest collection one: 2 scenarios (1 not found), 1 worker(s)" in one.stdout
    assert (
        "scenario 'shop/pay[amex]' does not exist; skipped (did you mean 'shop/pay[master]'?)"
        in one.stderr
    )
    assert "pays with 5555" not in one.stdout  # a worker's log goes to its events
