"""``expect_poll`` end to end: real Chromium, ``unotest e2e`` as a user runs it.

The site (written to ``tmp_path``, served on 127.0.0.1) shows ``#status`` "idle" and,
with ``?later=MS``, turns it to "ready" MS milliseconds after loading; its Next button
counts its clicks in ``#steps``. Helpers read them; the scenarios poll those helpers,
passed by name.

Covered: a poll that passes once the page changes, and one called until its third
call reads "3" (each call ordinary steps of the helper, one level deeper); a poll
that gives up with the last value it saw, at the poll's own line; an abort during the
wait between two calls ending the run at once (the wait is ten minutes: a wait that
did not end on abort would time the test out); a breakpoint in the polled function.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cli_runs import Run, launch
from events import append_command, is_kind, wait_for_event
from net import serve_directory
from sites import config_yaml, write_files, write_project

__all__ = ["launch"]  # the fixture, imported for pytest

SITE_FILES = {
    "index.html": """\
<!doctype html><title>Poll</title><h1>Poll</h1><p id="status">idle</p>
<button onclick="document.getElementById('steps').textContent++">Next</button>
<p id="steps">0</p>
<script>
const later = new URLSearchParams(location.search).get("later");
if (later) setTimeout(() => { document.getElementById("status").textContent = "ready"; }, +later);
</script>
""",
}

STATUS_FILE = "unotest/e2e/_helpers/status.js"
STATUS = """\
function page_status() {
  return text_of(css("#status"))
}

function next_step() {
  click("Next")
  return text_of(css("#steps"))
}
"""
STATUS_LINE = 2
NEXT_LINE = 6

PASSES = """\
// id-poll-passes
// The status turns ready after a while
// #16a34a
function test_passes() {
  goto("/index.html?later=700")
  expect_poll(page_status, "ready")
  expect_poll(page_status, /^rea/)
  expect_poll(next_step, "3")
  log("@ polled")
}
"""

GIVES_UP = """\
// id-poll-gives-up
// The status never turns ready
// #dc2626
function test_gives_up() {
  goto("/index.html")
  expect_poll(page_status, "ready", { timeout: 1000, intervals: [200] })
}
"""

WAITS = """\
// id-poll-waits
// Ten minutes between two calls
// #f59e0b
function test_waits() {
  goto("/index.html")
  expect_poll(page_status, "ready", { timeout: 0, intervals: [600000] })
}
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = write_files(tmp_path_factory.mktemp("poll-site"), SITE_FILES)
    with serve_directory(root, "poll-site") as url:
        yield url


def make_project(root: Path, site: str) -> Path:
    timeout = {"action": 1500, "expect": 5000, "navigation": 15000, "scenario": 60000}
    return write_project(
        root,
        config_yaml(site, timeout=timeout),
        {"passes": PASSES, "gives_up": GIVES_UP, "waits": WAITS},
        helpers={"status": STATUS},
    )


def test_expect_poll_passes_gives_up_and_stops_on_abort(
    tmp_path: Path, site: str, launch: Callable[..., Run]
) -> None:
    project = make_project(tmp_path / "proj", site)
    passes = launch(project, "e2e", "passes")
    gives_up = launch(project, "e2e", "gives_up")
    waits = launch(project, "e2e", "waits")

    # Aborted while it waits between two calls: the run ends at once, aborted.
    index, _ = wait_for_event(waits, is_kind("step:started", file=STATUS_FILE, line=STATUS_LINE))
    wait_for_event(waits, is_kind("step:ok"), after=index + 1)  # now in the ten-minute wait
    append_command(waits.run_dir, "abort")
    assert waits.wait() == 130, waits.stdout + waits.stderr
    events = waits.events()
    calls = [e for e in events if e["kind"] == "step:started" and e["file"] == STATUS_FILE]
    assert len(calls) == 1
    assert [e["errorName"] for e in events if e["kind"] == "step:fail"] == ["AbortError"]
    assert events[-1]["outcome"] == "aborted"

    # The page changes after a while: the helper is called until it reads "ready".
    assert passes.wait() == 0, passes.stdout + passes.stderr
    assert passes.logged() == ["polled"]
    events = passes.events()
    calls = [
        (e["line"], e["depth"])
        for e in events
        if e["kind"] == "step:started" and e["file"] == STATUS_FILE
    ]
    assert (STATUS_LINE, 1) in calls  # how often depends on the clock: at least once
    assert calls.count((NEXT_LINE, 1)) == 3  # "1", "2", then "3"
    assert set(calls) == {(STATUS_LINE, 1), (NEXT_LINE, 1), (NEXT_LINE + 1, 1)}
    assert not [e for e in events if e["kind"] == "step:fail"]

    # The page never changes: the poll gives up with the last value, at its own line.
    assert gives_up.wait() == 1, gives_up.stdout + gives_up.stderr
    last = gives_up.runtime()["lastFailure"]
    assert (last["line"], last["col"], last["error"]["name"]) == (6, 2, "AssertionError")
    message = last["error"]["message"]
    assert message.startswith(
        'expect_poll(page_status) gave up after 1000 ms: expected "ready", last got "idle" ('
    ), message
    bundle = next(e for e in gives_up.events() if e["kind"] == "failure-bundle:written")
    error = json.loads((project / bundle["bundlePath"] / "error.json").read_text())
    assert error["error"] == message


def test_a_breakpoint_in_the_polled_function_pauses_each_call(
    tmp_path: Path, site: str, launch: Callable[..., Run]
) -> None:
    project = make_project(tmp_path / "proj", site)
    run = launch(project, "e2e", "passes", "--break", f"_helpers/status:{STATUS_LINE}")

    index, paused = wait_for_event(run, is_kind("paused", reason="breakpoint"))
    assert paused["line"] == STATUS_LINE
    assert paused["snapshot"]["callStack"] == [
        {"fn": "page_status", "file": STATUS_FILE, "line": STATUS_LINE}
    ]
    state = run.runtime()
    assert (state["file"], state["state"]) == (STATUS_FILE, "paused-breakpoint")
    append_command(run.run_dir, "continue")
    index, paused = wait_for_event(run, is_kind("paused", reason="breakpoint"), after=index + 1)
    assert paused["line"] == STATUS_LINE  # the next call stops there again
    append_command(run.run_dir, "clear-bp", file="_helpers/status", line=STATUS_LINE)
    append_command(run.run_dir, "continue")
    assert run.wait() == 0, run.stdout + run.stderr
