"""``before_each`` / ``after_each`` end to end: real Chromium, ``unotest e2e`` as a user runs it.

A project in ``tmp_path`` has project-wide hooks in ``_helpers/hooks.js`` and scenarios
with hooks of their own; a small site (written to ``tmp_path`` and served on 127.0.0.1)
gives the hooks a page to read. Independent runs of one test are started together.

Covered: the order (project before, file before, test, file after, project after) in
the log and in steps.jsonl, with runtime.json's ``testFn`` still the test; after_each
after a failure (the failure bundle taken before it changes the page, the run's error
and ``lastFailure`` still the test's), a failing after_each (its own ``step:fail``, the
run fails, the hooks after it still run); after_each after an abort (``abort`` command
and SIGINT: the browser is still there, the run ends ``aborted``) and a second abort
skipping them; after_each after the scenario timeout with a budget of its own;
breakpoints and stepping in hooks; ``unotest check`` naming both files of a duplicate
project hook.
"""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_runs import UNOTEST, Run, launch
from events import append_command, is_kind, wait_for_event
from net import serve_directory
from sites import config_yaml, scenario_source, unotest_env, write_files, write_project

__all__ = ["launch"]  # the fixture, imported for pytest

SITE_FILES = {
    "index.html": "<!doctype html><title>Home</title><h1>Home</h1><p id='status'>idle</p>\n",
    "other.html": "<!doctype html><title>Other</title><h1>Other</h1>\n",
}

HOOKS_FILE = "unotest/e2e/_helpers/hooks.js"
HOOKS = """\
const PAGES = { home: "/index.html", other: "/other.html" }

function before_each() {
  log("@ project before_each")
  goto(PAGES.home)
}

function after_each() {
  log("@ project after_each")
}
"""
PROJECT_GOTO_LINE = 5  # goto(PAGES.home) in HOOKS

ORDER_FILE = "unotest/e2e/order.test.js"
ORDER = """\
// id-order
// Hooks run in order around the test
// #4f46e5
function before_each() {
  log("@ file before_each")
  expect_text(css("h1"), "Home")
}

function after_each() {
  log("@ file after_each")
}

function test_order() {
  log("@ the test")
}
"""
ORDER_AFTER_LINE = 10  # log("@ file after_each")

FAILING = """\
// id-failing
// The test fails, then its after_each leaves the page and fails too
// #dc2626
function after_each() {
  goto(PAGES.other)
  log("@ file after_each left the page")
  fail("cleanup broke")
}

function test_failing() {
  expect_text(css("#status"), "ready")
}
"""
FAILING_TEST_LINE = 11
FAILING_AFTER_LINE = 7  # fail("cleanup broke")

HOOK_FAILS_FILE = "unotest/e2e/hook_fails.test.js"
HOOK_FAILS = """\
// id-hook-fails
// The test passes, its after_each fails
// #dc2626
function after_each() {
  expect_equal(len(PAGES), 3)
  log("@ never logged")
}

function test_passes() {
  expect_text(css("h1"), "Home")
}
"""

ABORTED = """\
// id-aborted
// Aborted while it waits; its after_each waits CLEANUP_WAIT ms
// #f59e0b
function after_each() {
  log("@ after_each started")
  expect_text(css("h1"), "Home")
  wait(num(env("CLEANUP_WAIT", "0")))
  log("@ after_each ended")
}

function test_aborted() {
  goto("/index.html")
  wait(60000)
}
"""
ABORTED_WAIT_LINE = 13
CLEANUP_WAIT_LINE = 7


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = write_files(tmp_path_factory.mktemp("hooks-site"), SITE_FILES)
    with serve_directory(root, "hooks-site") as url:
        yield url


def make_project(
    root: Path,
    site: str,
    scenarios: dict[str, str],
    helpers: dict[str, str] | None = None,
    scenario_timeout: int = 60000,
) -> Path:
    timeout = {"action": 1500, "expect": 1500, "navigation": 15000, "scenario": scenario_timeout}
    return write_project(
        root,
        config_yaml(site, timeout=timeout),
        scenarios,
        helpers={"hooks": HOOKS} if helpers is None else helpers,
    )


def started_steps(events: list[dict[str, Any]]) -> list[tuple[str, int, int]]:
    return [(e["file"], e["line"], e["depth"]) for e in events if e["kind"] == "step:started"]


# --- order, failures ---------------------------------------------------------------------------


def test_hooks_run_in_order_and_after_each_runs_after_any_failure(
    tmp_path: Path, site: str, launch: Callable[..., Run]
) -> None:
    project = make_project(
        tmp_path / "proj",
        site,
        {"order": ORDER, "failing": FAILING, "hook_fails": HOOK_FAILS},
    )
    order = launch(project, "e2e", "order")
    failing = launch(project, "e2e", "failing")
    hook_fails = launch(project, "e2e", "hook_fails")

    assert order.wait() == 0, order.stdout + order.stderr
    assert order.logged() == [
        "project before_each",
        "file before_each",
        "the test",
        "file after_each",
        "project after_each",
    ]
    assert started_steps(order.events()) == [
        (HOOKS_FILE, 4, 0),
        (HOOKS_FILE, 5, 0),
        (ORDER_FILE, 5, 0),
        (ORDER_FILE, 6, 0),
        (ORDER_FILE, 14, 0),
        (ORDER_FILE, 10, 0),
        (HOOKS_FILE, 9, 0),
    ]
    assert order.runtime()["testFn"] == "test_order"

    # The test fails: its after_each still runs (and fails too), then the project's.
    assert failing.wait() == 1, failing.stdout + failing.stderr
    assert failing.logged() == [
        "project before_each",
        "file after_each left the page",
        "project after_each",
    ]
    assert (
        "after_each failed too: unotest/e2e/failing.test.js:7:2: ScenarioError: cleanup broke"
        in (failing.stdout)
    )
    events = failing.events()
    fails = [(i, e["errorName"]) for i, e in enumerate(events) if e["kind"] == "step:fail"]
    assert [name for _, name in fails] == ["AssertionError", "ScenarioError"]
    # The bundle is taken when the test failed, before after_each went to another page.
    bundle_at = next(i for i, e in enumerate(events) if e["kind"] == "failure-bundle:written")
    assert fails[0][0] < bundle_at < fails[1][0]
    bundle = project / events[bundle_at]["bundlePath"]
    error = json.loads((bundle / "error.json").read_text())
    assert error["url"].endswith("/index.html") and error["title"] == "Home"
    assert (error["line"], error["errorName"]) == (FAILING_TEST_LINE, "AssertionError")
    # The run's failure stays the test's, in runtime.json too.
    last = failing.runtime()["lastFailure"]
    assert (last["line"], last["error"]["name"]) == (FAILING_TEST_LINE, "AssertionError")
    assert f"failing.test.js:{FAILING_TEST_LINE}:2: AssertionError" in failing.stdout

    # The test passes and after_each fails: the run fails with after_each's failure, and
    # the project's after_each still runs.
    assert hook_fails.wait() == 1, hook_fails.stdout + hook_fails.stderr
    assert hook_fails.logged() == ["project before_each", "project after_each"]
    assert [e["errorName"] for e in hook_fails.events() if e["kind"] == "step:fail"] == [
        "AssertionError"
    ]
    assert f"{HOOK_FAILS_FILE}:5:2: AssertionError: expected 3, received 2" in hook_fails.stdout
    last = hook_fails.runtime()["lastFailure"]
    assert (last["line"], last["col"]) == (5, 2)


# --- aborts and timeouts -----------------------------------------------------------------------


def test_after_each_runs_after_an_abort_and_a_second_abort_skips_it(
    tmp_path: Path, site: str, launch: Callable[..., Run]
) -> None:
    project = make_project(tmp_path / "proj", site, {"aborted": ABORTED})
    by_command = launch(project, "e2e", "aborted")
    by_signal = launch(project, "e2e", "aborted")
    twice = launch(project, "e2e", "aborted", CLEANUP_WAIT="60000")

    for run in (by_command, by_signal, twice):
        wait_for_event(run, is_kind("step:started", line=ABORTED_WAIT_LINE))
    append_command(by_command.run_dir, "abort")
    by_signal.proc.send_signal(signal.SIGINT)
    append_command(twice.run_dir, "abort")

    for run in (by_command, by_signal):
        assert run.wait() == 130, run.stdout + run.stderr
        # The browser was still there: after_each read the page, then the project's ran.
        assert run.logged()[-3:] == ["after_each started", "after_each ended", "project after_each"]
        events = run.events()
        fails = [e["errorName"] for e in events if e["kind"] == "step:fail"]
        assert fails == ["AbortError"]
        after_abort = events[next(i for i, e in enumerate(events) if e["kind"] == "step:fail") :]
        assert [e["kind"] for e in after_abort].count("step:ok") == 5  # 4 + the project's 1
        assert events[-1] == {**events[-1], "kind": "run:finished", "outcome": "aborted"}
        assert run.runtime()["state"] == "aborted"

    # A second abort while after_each runs skips the rest of it, and the project's.
    wait_for_event(twice, is_kind("step:started", line=CLEANUP_WAIT_LINE))
    append_command(twice.run_dir, "abort")
    assert twice.wait() == 130, twice.stdout + twice.stderr
    assert twice.logged()[-1] == "after_each started"
    assert "project after_each" not in twice.logged()
    events = twice.events()
    assert [e["errorName"] for e in events if e["kind"] == "step:fail"] == ["AbortError"] * 2
    assert events[-1]["outcome"] == "aborted"


def test_a_timeout_gives_after_each_a_budget_of_its_own(
    tmp_path: Path, site: str, launch: Callable[..., Run]
) -> None:
    project = make_project(
        tmp_path / "proj", site, {"aborted": ABORTED}, helpers={}, scenario_timeout=3000
    )
    cleans_up = launch(project, "e2e", "aborted")
    hangs_too = launch(project, "e2e", "aborted", CLEANUP_WAIT="60000")

    assert cleans_up.wait() == 1, cleans_up.stdout + cleans_up.stderr
    assert cleans_up.logged() == ["after_each started", "after_each ended"]
    last = cleans_up.runtime()["lastFailure"]
    assert (last["line"], last["error"]["name"]) == (ABORTED_WAIT_LINE, "TimeoutError")
    assert [e["errorName"] for e in cleans_up.events() if e["kind"] == "step:fail"] == [
        "TimeoutError"
    ]

    # after_each runs out of its own budget too: the run's error stays the test's timeout.
    assert hangs_too.wait() == 1, hangs_too.stdout + hangs_too.stderr
    fails = [e for e in hangs_too.events() if e["kind"] == "step:fail"]
    assert [e["error"] for e in fails] == [
        "the scenario took longer than its timeout of 3000 ms",
        "the after hooks took longer than their own timeout of 3000 ms",
    ]
    last = hangs_too.runtime()["lastFailure"]
    assert (last["line"], last["error"]["name"]) == (ABORTED_WAIT_LINE, "TimeoutError")


# --- the debugger in hooks -----------------------------------------------------------------------


def test_breakpoints_and_stepping_work_in_hooks(
    tmp_path: Path, site: str, launch: Callable[..., Run]
) -> None:
    project = make_project(tmp_path / "proj", site, {"order": ORDER, "failing": FAILING})
    order = launch(
        project,
        "e2e",
        "order",
        "--break",
        f"_helpers/hooks:{PROJECT_GOTO_LINE}",
        "--break",
        f"order:{ORDER_AFTER_LINE}",
    )
    failing = launch(project, "e2e", "failing", "--break", f"failing:{FAILING_AFTER_LINE}")

    index, paused = wait_for_event(order, is_kind("paused", reason="breakpoint"))
    assert (paused["line"], order.runtime()["file"]) == (PROJECT_GOTO_LINE, HOOKS_FILE)
    assert order.runtime()["testFn"] == "test_order"
    append_command(order.run_dir, "step")
    index, paused = wait_for_event(order, is_kind("paused", reason="step"), after=index + 1)
    assert (paused["line"], order.runtime()["file"]) == (5, ORDER_FILE)  # file before_each
    append_command(order.run_dir, "continue")
    index, paused = wait_for_event(order, is_kind("paused", reason="breakpoint"), after=index + 1)
    assert (paused["line"], order.runtime()["file"]) == (ORDER_AFTER_LINE, ORDER_FILE)
    assert "the test" in order.logged()  # the test ran before this after_each
    append_command(order.run_dir, "continue")
    assert order.wait() == 0, order.stdout + order.stderr

    # After a failure (paused on it first), a breakpoint in after_each still holds.
    index, paused = wait_for_event(failing, is_kind("paused", reason="failure"))
    assert paused["line"] == FAILING_TEST_LINE
    append_command(failing.run_dir, "continue")
    index, paused = wait_for_event(failing, is_kind("paused", reason="breakpoint"), after=index + 1)
    assert paused["line"] == FAILING_AFTER_LINE
    assert failing.logged()[-1] == "file after_each left the page"
    append_command(failing.run_dir, "continue")
    _, paused = wait_for_event(failing, is_kind("paused", reason="failure"), after=index + 1)
    assert paused["line"] == FAILING_AFTER_LINE  # the hook's own failure pauses too
    append_command(failing.run_dir, "continue")
    assert failing.wait() == 1, failing.stdout + failing.stderr
    assert failing.logged()[-1] == "project after_each"


# --- check ---------------------------------------------------------------------------------


def test_check_names_both_files_of_a_duplicate_project_hook(tmp_path: Path) -> None:
    second = 'function empty_cart() {\n}\n\nfunction before_each() {\n  goto("/cart")\n}\n'
    project = write_project(
        tmp_path / "proj",
        config_yaml("http://127.0.0.1:9"),
        {"order": scenario_source("order", '  log("x")\n')},
        helpers={"hooks": HOOKS, "shop/cart": second},
    )
    done = subprocess.run(
        [*UNOTEST, "check"],
        cwd=project,
        env=unotest_env(NO_COLOR="1"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0, done.stdout
    output = done.stdout + done.stderr
    assert (
        "unotest/e2e/_helpers/shop/cart.js:4:9: SyntaxError: project hook 'before_each' is "
        "declared in two helper files: unotest/e2e/_helpers/hooks.js:3 and "
        "unotest/e2e/_helpers/shop/cart.js:4; a project has at most one"
    ) in output, output
