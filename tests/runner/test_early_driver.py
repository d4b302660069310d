"""``unotest e2e`` starts Playwright's driver as soon as its arguments parse
(runner.browser.early_driver): every way out closes it, and nothing it started outlives the
command, checked at once when the command exits (no grace period: a driver left to
notice its closed pipe on its own would still be there).

Every process the command starts carries a marker in its environment (inherited by the
driver and Chromium whoever their parent becomes), found through /proc afterwards.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from procs import cmdline, descendants, marked, outlivers
from sites import config_yaml, scenario_source, unotest_env, write_project

from runner.browser import early_driver
from unotest.cli import main

MARK = "UNOTEST_TEST_EARLY_DRIVER"
# What an event loop closed with its tasks or transports still open says at exit.
UNCLEAN = ("Traceback", "Task was destroyed", "Event loop is closed", "Exception ignored")


def _e2e(root: Path, *args: str) -> tuple[int, str, str]:
    """``unotest e2e ARGS`` in ``root``; afterwards no process of its own is left."""
    marker = uuid.uuid4().hex
    proc = subprocess.run(
        [sys.executable, "-m", "unotest", "e2e", *args],
        cwd=root,
        env=unotest_env(**{MARK: marker}),
        capture_output=True,
        text=True,
        timeout=120,
    )
    left = marked(MARK, marker)
    outlivers(MARK, marker, grace=5)  # never leave them running, even when failing
    assert left == [], f"left running after exit: {left}\n{proc.stderr}"
    for sign in UNCLEAN:
        assert sign not in proc.stderr, proc.stderr
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture
def project(tmp_path: Path, chromium_path: str) -> Path:
    return write_project(
        tmp_path,
        config_yaml(None, chromium=chromium_path),
        {
            "fine": scenario_source("fine", '  expect_equal(1, 1)\n  log("ran")\n'),
            "broken": scenario_source("broken", "  no_such_builtin()\n"),
        },
    )


def test_an_unknown_scenario_exits_2_and_leaves_no_driver(project: Path) -> None:
    code, _, err = _e2e(project, "nosuch")
    assert code == 2
    assert err.strip().splitlines() == [
        "unotest: no scenario named 'nosuch'; 'unotest list' shows them all"
    ], err


def test_a_scenario_with_a_problem_exits_2_and_leaves_no_driver(project: Path) -> None:
    code, _, err = _e2e(project, "broken")
    assert code == 2
    assert "scenario 'broken' cannot run" in err


def test_a_bad_break_refused_by_the_run_leaves_no_driver(project: Path) -> None:
    """The run has taken the loop and the driver when it checks the breakpoints."""
    code, _, err = _e2e(project, "fine", "--break", "nofile:3")
    assert code == 2
    assert err.strip().splitlines() == [
        "unotest: --break nofile:3: no such scenario or helper file here (name one as fine, "
        "_helpers/<name> or its path under the project)"
    ], err


def test_a_usage_error_from_argparse_closes_the_driver(project: Path) -> None:
    code, _, err = _e2e(project, "fine", "--retries", "many")
    assert code == 2
    assert "--retries" in err


def test_a_run_on_the_early_driver_passes_and_closes_everything(project: Path) -> None:
    code, out, err = _e2e(project, "fine")
    assert code == 0, out + err
    assert "ran" in out
    assert "passed" in out or "completed" in out, out


def test_a_project_that_is_not_there_leaves_no_driver(tmp_path: Path) -> None:
    code, _, err = _e2e(tmp_path, "fine")
    assert code == 2, err
    assert err.startswith("unotest: "), err


# In this process: a driver nobody closes would still be running here afterwards, so
# these tell a closed driver from one left to end with the process.


_OTHERS: set[int] = set()
"""Descendants this process had before these tests: pytest-playwright's session driver,
started by a page test this xdist worker ran earlier, lives until the session ends."""


@pytest.fixture(autouse=True)
def _others() -> None:
    _OTHERS.clear()
    _OTHERS.update(descendants(os.getpid()))


def _drivers() -> list[str]:
    """This process's descendants that are Playwright's driver (or anything it ran),
    besides those it had before the test."""
    return [cmdline(pid) for pid in descendants(os.getpid()) if pid not in _OTHERS]


def test_take_hands_over_a_started_driver_and_close_ends_it() -> None:
    early_driver.start()
    early = early_driver.take()
    assert early is not None and early.error is None
    assert early.task is not None  # started, perhaps not up yet: it goes on on this thread
    playwright = early.loop.run_until_complete(early.task)
    assert playwright.chromium.name == "chromium"
    assert any("playwright" in line or "node" in line for line in _drivers()), _drivers()
    assert early_driver.take() is None  # taken: the caller's now, nobody else's
    early.close()
    assert early.loop.is_closed()
    assert _drivers() == []


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["nosuch"], "no scenario named 'nosuch'"),
        (["broken"], "scenario 'broken' cannot run"),
        (["fine", "--break", "nofile:3"], "no such scenario or helper file"),
    ],
)
def test_main_closes_the_driver_on_an_early_exit(
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    said: str,
) -> None:
    monkeypatch.chdir(project)
    assert main(["e2e", *args]) == 2
    assert said in capsys.readouterr().err
    assert early_driver.take() is None
    assert _drivers() == []


def test_main_closes_the_driver_when_argparse_exits(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``e2e --help``: argparse prints and exits; the driver started for e2e is closed."""
    monkeypatch.chdir(project)
    with pytest.raises(SystemExit) as exited:
        main(["e2e", "--help"])
    assert exited.value.code == 0
    assert "--break" in capsys.readouterr().out
    assert early_driver.take() is None
    assert _drivers() == []


def test_a_break_may_name_a_file_as_it_is_named_on_disk(tmp_path: Path) -> None:
    """``--break _helpers/greet.js:2:2`` (the helper's file name) and
    ``--break fine.test.js:5`` were refused as "no such scenario or helper file"; the
    name without .js and the project path worked."""
    from runner.debug.setup import DebugOptions, prepare_breakpoints
    from runner.project.index import ProjectIndex
    from runner.project.root import Project

    root = write_project(
        tmp_path,
        None,
        {"fine": scenario_source("fine", "  greet()\n  greet()\n")},
        helpers={"greet": 'function greet() {\n  log("hi")\n}\n'},
    )
    index = ProjectIndex.load(Project(root))
    scenario = index.scenarios["fine"]
    helper = "unotest/e2e/_helpers/greet.js"
    for name in ("_helpers/greet.js", "_helpers/greet", helper):
        options = DebugOptions(breaks=((name, 2, 2),))
        breakpoints, _ = prepare_breakpoints(
            options, scenario, index.helper_table, root, lambda text: None
        )
        assert breakpoints.active() == {helper: ["2:2"]}, name
    for name in ("fine.test.js", "fine", scenario.file):
        options = DebugOptions(breaks=((name, 6, None),))
        breakpoints, _ = prepare_breakpoints(
            options, scenario, index.helper_table, root, lambda text: None
        )
        assert breakpoints.active() == {scenario.file: ["6:2"]}, name
