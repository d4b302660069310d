"""A failure two helpers deep and a caught one, through the CLI on real Chromium.

One project (a to-do page served by the test): ``smoke`` first fails inside its own
``try`` (caught), then fails in ``check_items`` called by ``add_and_check``. Run by
``unotest e2e``, ``unotest collection --reporter junit=…,json=…`` and ``unotest e2e
--debug`` (a failure pause resumed through commands.jsonl), it must be reported at the
scenario's line first with its chain in the console, JUnit, the JSON report,
error.json, runtime.json, ``--json``, ``unotest inspect`` and MCP ``get_failure``, never
at the caught failure, and every artifact must validate against the 0.5.0 schemas.
In-process checks of the same rules are in test_failure_chain.py.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from events import append_command, is_kind, read_events, wait_for_event
from net import serve_directory
from procs import run_dir_of, wait_for_run_dir
from protocol_keys import PROTOCOL_KINDS
from sites import collection_yaml, config_yaml, scenario_source, unotest_env, write_project

Validate = Callable[[str, object], None]
RUN_TIMEOUT_S = 120

PAGE = "<!doctype html><title>Todo</title><h1>Todos</h1><ul><li>milk</li><li>eggs</li></ul>\n"
SMOKE = scenario_source(
    "smoke",
    """\
  goto("/index.html")
  try {
    check_items(["nope"])
  } catch (e) {
    log("caught", e.name)
  }
  add_and_check("bread")
""",
)
TODO = """\
// Helpers of the to-do list.
function add_and_check(item) {
  log("adding", item)
  check_items([item])
}

function check_items(items) {
  expect_text(css("li").first(), items[0])
}
"""
FILE = "unotest/e2e/smoke.test.js"
HELPER = "unotest/e2e/_helpers/todo.js"
CHAIN = [
    {"file": FILE, "line": 11, "col": 2, "fn": "test_it"},
    {"file": HELPER, "line": 4, "col": 2, "fn": "add_and_check"},
    {"file": HELPER, "line": 8, "col": 2, "fn": "check_items"},
]
CHAIN_TEXT = f"{FILE}:11:2 → {HELPER}:4:2 add_and_check → {HELPER}:8:2 check_items"
MESSAGE = 'expected <Locator css="li" >> first> to have text "bread", received "milk"'


@dataclass
class Done:
    code: int
    stdout: str
    stderr: str
    run_dir: Path | None


@dataclass
class Project:
    root: Path
    site: str

    def start(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "unotest", *args],
            cwd=self.root,
            env=unotest_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def finish(self, proc: subprocess.Popen[str]) -> Done:
        stdout, stderr = proc.communicate(timeout=RUN_TIMEOUT_S)
        return Done(proc.returncode, stdout, stderr, run_dir_of(self.root, proc.pid))

    def cli(self, *args: str) -> Done:
        return self.finish(self.start(*args))


@pytest.fixture
def project(tmp_path: Path, chromium_path: str) -> Iterator[Project]:
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "index.html").write_text(PAGE)
    with serve_directory(tmp_path / "site", "todo-site") as url:
        root = write_project(
            tmp_path / "proj",
            config_yaml(url, chromium=chromium_path, timeout={"expect": 500}),
            {"smoke": SMOKE},
            helpers={"todo": TODO},
            collections={"ci": collection_yaml(["smoke"])},
        )
        yield Project(root, url)


def validate_run(run_dir: Path, validate: Validate) -> list[dict[str, Any]]:
    events = read_events(run_dir, finished=True)
    for event in events:
        if event["kind"] in PROTOCOL_KINDS:  # ours (command:applied, …) have no schema
            validate("RunArtifact", event)
    validate("RuntimeStateFile", json.loads((run_dir / "runtime.json").read_text()))
    return events


def check_events(events: list[dict[str, Any]]) -> None:
    """Two caught fails (the helper's step and the call in the try), then three that are
    the run's failure (the failing step, the helper calling it, the scenario's call)."""
    fails = [e for e in events if e["kind"] == "step:fail"]
    assert [e.get("caught", False) for e in fails] == [True, True, False, False, False]
    assert all(e["error"] == MESSAGE for e in fails[2:])


def test_e2e_reports_the_chain_everywhere_and_never_the_caught_failure(
    project: Project, protocol_validate: Validate
) -> None:
    both = [project.start("e2e", "smoke"), project.start("e2e", "smoke", "--json")]
    plain, as_json = (project.finish(proc) for proc in both)

    # the console: caught steps marked ○, helper steps with their file, calls first
    assert plain.code == 1, plain
    lines = plain.stdout.splitlines()
    caught = [line for line in lines if line.lstrip().startswith("○")]
    assert any("○ _helpers/todo.js:8:2  expect_text(" in line for line in caught), caught
    assert any('○ 7:4  check_items(["nope"])  (caught AssertionError' in line for line in caught)
    start = lines.index('  … 11:2  add_and_check("bread")')
    assert lines[start + 1 :].index("    … _helpers/todo.js:4:2  check_items([item])") > 0
    assert any(line.startswith("      ✗ _helpers/todo.js:8:2  expect_text(") for line in lines)
    assert f"  {CHAIN_TEXT}: AssertionError: {MESSAGE}" in lines

    # the run directory, error.json and runtime.json
    assert plain.run_dir is not None
    check_events(validate_run(plain.run_dir, protocol_validate))
    runtime = json.loads((plain.run_dir / "runtime.json").read_text())
    assert runtime["lastFailure"] == {
        "line": 8,
        "col": 2,
        "error": {"message": MESSAGE, "name": "AssertionError"},
        "file": HELPER,
        "stack": CHAIN,
    }
    bundle = next(e for e in read_events(plain.run_dir) if e["kind"] == "failure-bundle:written")
    error = json.loads((project.root / bundle["bundlePath"] / "error.json").read_text())
    assert (error["file"], error["line"], error["col"]) == (HELPER, 8, 2)
    assert error["at"] == CHAIN[0] and error["chain"] == CHAIN

    # --json, unotest inspect
    assert as_json.code == 1, as_json
    result = json.loads(as_json.stdout)
    assert result["error"]["chain"] == CHAIN and result["error"]["at"] == CHAIN[0]
    inspected = project.cli("inspect", plain.run_dir.name)
    assert inspected.code == 0, inspected
    assert f"failure   {CHAIN_TEXT}: AssertionError: {MESSAGE}" in inspected.stdout.splitlines()


def test_mcp_get_failure_names_the_chain(project: Project) -> None:
    from unotest.mcp.server import build_server

    done = project.cli("e2e", "smoke")
    assert done.code == 1 and done.run_dir is not None, done

    run_id = done.run_dir.name

    async def ask() -> Any:
        return await build_server(project.root).call_tool("get_failure", {"run_id": run_id})

    answer = asyncio.run(ask())
    assert not answer.is_error
    report = json.loads(answer.content[0].text)
    assert report["location"] == CHAIN_TEXT
    assert report["error"]["chain"] == CHAIN and report["error"]["at"] == CHAIN[0]


def test_collection_junit_and_json_report_name_the_chain(project: Project, tmp_path: Path) -> None:
    junit, report = tmp_path / "junit.xml", tmp_path / "report.json"
    done = project.cli("collection", "ci", "--reporter", f"list,junit={junit},json={report}")

    assert done.code == 1, done
    assert f"✗ smoke: {CHAIN_TEXT}: AssertionError: {MESSAGE}" in done.stdout
    failure = ET.parse(junit).getroot().find("./testsuite/testcase/failure")
    assert failure is not None and failure.get("type") == "AssertionError"
    assert failure.get("message") == f"{CHAIN_TEXT}: {MESSAGE}"
    assert failure.text is not None and f"\nat {CHAIN_TEXT}\n" in failure.text
    [end] = [e["data"] for e in json.loads(report.read_text()) if e["type"] == "test_end"]
    assert end["location"] == f"{HELPER}:8:2" and end["chain"] == CHAIN


def test_a_failure_pause_is_written_as_paused_ms_not_duration(
    project: Project, protocol_validate: Validate
) -> None:
    proc = project.start("e2e", "smoke", "--debug")
    try:
        run_dir = wait_for_run_dir(project.root, proc)
        # the caught failure does not pause; the uncaught one does, at the helper's line
        _, paused = wait_for_event(run_dir, is_kind("paused", reason="failure"))
        assert (paused["line"], paused["col"]) == (8, 2)
        append_command(run_dir, "continue")
        done = project.finish(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert done.code == 1, done
    events = validate_run(run_dir, protocol_validate)
    check_events(events)
    assert [e["kind"] for e in events].count("paused") == 1
    ends = [e for e in events if e["kind"] in ("step:ok", "step:fail")]
    # The failing step is closed before its pause; only the calls it is in were open
    # during it.
    assert [("pausedMs" in e) for e in ends][-3:] == [False, True, True]
    assert not any("pausedMs" in e for e in ends[:-3])
    assert all(e["pausedMs"] > 0 for e in ends[-2:])
    failed_line = next(line for line in done.stdout.splitlines() if "✗ _helpers/todo.js:8" in line)
    assert ", paused " not in failed_line, failed_line


def test_a_timeout_inside_a_helper_names_its_chain(
    tmp_path: Path, chromium_path: str, protocol_validate: Validate
) -> None:
    spin = "// Spins.\nfunction spin() {\n  let n = 0\n  while (true) {\n    n += 1\n  }\n}\n"
    root = write_project(
        tmp_path / "slow",
        config_yaml(None, chromium=chromium_path, timeout={"scenario": 1500}),
        {"slow": scenario_source("slow", "  let a = 1\n  spin()\n")},
        helpers={"spin": spin},
    )
    done = Project(root, "").cli("e2e", "slow")

    assert done.code == 1 and done.run_dir is not None, done
    validate_run(done.run_dir, protocol_validate)
    failure = json.loads((done.run_dir / "runtime.json").read_text())["lastFailure"]
    assert failure["error"]["name"] == "TimeoutError"
    assert failure["file"] == "unotest/e2e/_helpers/spin.js"
    scenario_place, helper_place = failure["stack"]
    assert scenario_place == {
        "file": "unotest/e2e/slow.test.js",
        "line": 6,
        "col": 2,
        "fn": "test_it",
    }
    assert (helper_place["file"], helper_place["fn"]) == ("unotest/e2e/_helpers/spin.js", "spin")
    assert (helper_place["line"], helper_place["col"]) == (failure["line"], failure["col"])
    assert "unotest/e2e/slow.test.js:6:2 → unotest/e2e/_helpers/spin.js:" in done.stdout
