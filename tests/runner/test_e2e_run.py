"""``unotest e2e`` end to end: real Chromium, driven through the CLI as a user runs it.

Each test builds a project in ``tmp_path`` (``unotest.config.yaml`` + scenarios +
helpers), serves ``site_lifecycle/`` on 127.0.0.1 and runs
``python -m unotest e2e NAME`` as a subprocess with the project as working
directory. Independent runs of one test are started together to keep the file fast.

What is checked: exit codes and console output (runner.md §8), the run directory
(§1-2, validated against the protocol's JSON Schemas and key by key), failure
bundles (§4), secret masking in every artifact (§5), SIGINT/SIGTERM (exit 130/143,
``aborted``, no Chromium left), the scenario timeout (§7) and ``webServer`` (§7), plus
``unotest runs --json``.
Headed runs (``--headed`` / ``UNOTEST_HEADED=1``) need a display and are not tested.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import pytest
from events import read_events, read_lines
from net import free_port
from procs import alive as _alive
from procs import cmdline as _cmdline
from procs import descendants as _descendants
from procs import proc_stat as _stat
from procs import run_dir_of as _run_dir_of
from protocol_keys import (
    MANIFEST_ADDITIVE_KEYS,
    MANIFEST_KEYS,
    MANIFEST_OPTIONAL_KEYS,
    PROTOCOL_KINDS,
    RUNTIME_KEYS,
)
from protocol_schemas import validate
from sites import config_yaml, unotest_env, write_project

SITE = Path(__file__).resolve().parent / "site_lifecycle"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
MASK = "********"
TOKEN = "s3cr3t-T0ken-value"
PASSWORD = "hunter2-pass"
GREETING = "hello-lifecycle-greeting"
RUN_TIMEOUT_S = 120

ERROR_KEYS = {
    "error",
    "errorName",
    "file",
    "line",
    "col",
    "step",
    "callStack",
    "vars",
    "url",
    "title",
}
BUNDLE_NAME_RE = r"__\d{4}-\d{2}-\d{2}T\d{2}-?\d{2}-?\d{2}(\.\d+)?Z__"

HELPERS = """\
// Helpers of the lifecycle tests: steps inside them run at depth 1.

function open_home(query) {
  goto("/index.html" + query)
  expect_visible(role("heading", "Lifecycle home"))
}

function check_heading(expected) {
  expect_text(css("h1"), expected)
}
"""
HELPER_FILE = "unotest/e2e/_helpers/site.js"
CHECK_HEADING_LINE = 9  # the expect_text line in HELPERS

PASSING = """\
// id-flows-passing
// A passing flow
// #16a34a
function test_passing() {
  open_home("")
  let total = 1 + 2
  log("total is", total)
  screenshot("home")
  expect_equal(total, 3)
}
"""
PASSING_STEPS = [  # (line, col, depth, file)
    (5, 2, 0, "unotest/e2e/flows/passing.test.js"),
    (4, 2, 1, HELPER_FILE),
    (5, 2, 1, HELPER_FILE),
    (6, 2, 0, "unotest/e2e/flows/passing.test.js"),
    (7, 2, 0, "unotest/e2e/flows/passing.test.js"),
    (8, 2, 0, "unotest/e2e/flows/passing.test.js"),
    (9, 2, 0, "unotest/e2e/flows/passing.test.js"),
]

FAILING = """\
// id-flows-failing
// A failing flow
// #dc2626
function test_failing() {
  open_home("")
  let expected = "Goodbye"
  check_heading(expected)
}
"""
FAILING_STEP_INDEX = 5  # open_home, goto, expect_visible, let, check_heading, expect_text

SECRETS = """\
// id-secrets
// Secrets never leak
// #7c3aed
function test_secrets() {
  const token = env("API_TOKEN")
  const password = env("MY_PASSWORD")
  const greeting = env("GREETING")
  open_home("?token=" + token)
  fill(css("#pw"), password)
  fill(css("#note"), token + " / " + password)
  log("token", token, "password", password, "greeting", greeting)
  let creds = { token: token, password: password, header: "Bearer " + token }
  expect_equal(token, "x")
}
"""

HANG = """\
// id-hang
// Waits for something that never appears
// #f59e0b
function test_hang() {
  open_home("")
  wait_for(css("#never"))
}
"""

LOOP = """\
// id-busy-loop
// Never ends without a browser call
// #0ea5e9
function test_loop() {
  let n = 0
  while (true) {
    n += 1
  }
}
"""

DYING_SERVER = "echo 'lifecycle: port 9 is taken, giving up' >&2; exit 3"

BROKEN = """\
// id-broken
// Does not parse
// #000000
function test_broken() {
  goto("/index.html"
}
"""


# --- projects and processes -----------------------------------------------------------


def _config(
    base_url: str,
    *,
    action: int = 5000,
    expect: int = 1500,
    scenario: int = 60000,
    extra: str = "",
) -> str:
    """``expect`` is short: ``flows/failing`` waits all of it for a heading it never gets."""
    timeout = {"action": action, "expect": expect, "navigation": 15000, "scenario": scenario}
    return config_yaml(base_url, timeout=timeout, trace="on-failure", extra=extra)


def make_project(
    root: Path,
    config: str | None,
    scenarios: dict[str, str],
    *,
    helpers: bool = True,
    dotenv: str | None = None,
) -> Path:
    return write_project(
        root,
        config,
        scenarios,
        helpers={"site": HELPERS} if helpers else {},
        files={} if dotenv is None else {"unotest/.env": dotenv},
    )


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    return unotest_env(drop=("MY_PASSWORD", "API_TOKEN", "GREETING"), **(extra or {}))


@dataclass
class Done:
    code: int
    stdout: str
    stderr: str
    pid: int
    seconds: float


def start(project: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "unotest", *args],
        cwd=project,
        env=_env(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )


def finish(proc: subprocess.Popen[str], started: float | None = None) -> Done:
    began = time.monotonic() if started is None else started
    try:
        out, err = proc.communicate(timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"unotest did not end within {RUN_TIMEOUT_S} s\n{out}\n{err}")
    done = Done(proc.returncode, out, err, proc.pid, time.monotonic() - began)
    assert "Traceback" not in err, err
    assert "Traceback" not in out, out
    return done


def run_all(*jobs: tuple[Path, tuple[str, ...], dict[str, str] | None]) -> list[Done]:
    """Start every job, then wait for all of them (they run concurrently)."""
    began = time.monotonic()
    procs = [start(project, *args, env=env) for project, args, env in jobs]
    return [finish(proc, began) for proc in procs]


def e2e(project: Path, *args: str, env: dict[str, str] | None = None) -> Done:
    return run_all((project, ("e2e", *args), env))[0]


# --- reading artifacts -----------------------------------------------------------------


def run_dir_of(project: Path, pid: int) -> Path:
    """The run directory whose manifest names the runner's pid (the run is over)."""
    found = _run_dir_of(project, pid)
    assert found is not None, f"no run directory of pid {pid} in {project}"
    return found


def read_ascii_events(run_dir: Path) -> list[dict[str, Any]]:
    """A finished run's steps.jsonl: whole lines, each ASCII (ensure_ascii=True)."""
    for line in read_lines(run_dir, finished=True):
        line.decode("ascii")
    return read_events(run_dir, finished=True)


def check_event_order(
    events: list[dict[str, Any]], outcome: str, bundle: bool
) -> list[dict[str, Any]]:
    """runner.md §1 order; returns the step:started events in order."""
    kinds = [e["kind"] for e in events]
    assert kinds[0] == "run:started" and kinds.count("run:started") == 1, kinds
    assert kinds[-1] == "run:finished" and kinds.count("run:finished") == 1, kinds
    assert events[-1]["outcome"] == outcome
    times = [e["t"] for e in events]
    assert all(isinstance(t, int) for t in times) and times == sorted(times)
    stack: list[dict[str, Any]] = []
    started: list[dict[str, Any]] = []
    bundle_seen = False
    for event in events[1:-1]:
        kind = event["kind"]
        if kind == "step:started":
            assert not bundle_seen, "a step after the failure bundle"
            assert event["depth"] == len(stack), (event, stack)  # nested only by calls
            stack.append(event)
            started.append(event)
        elif kind in ("step:ok", "step:fail"):
            assert stack, f"{kind} without an open step"
            stack.pop()
        elif kind == "failure-bundle:written":
            assert not stack and not bundle_seen, "bundle before every step closed"
            bundle_seen = True
        else:
            assert kind == "screenshot", kind
            assert not bundle_seen
    assert not stack, f"steps never closed: {stack}"
    assert bundle_seen == bundle
    return started


def check_run_dir(
    run_dir: Path,
    project: Path,
    *,
    ref: str,
    pid: int,
    outcome: str,
    validate: Callable[[str, object], None],
    bundle: bool | None = None,
) -> list[dict[str, Any]]:
    """Everything runner.md §1-2 says about a finished run directory; returns the events."""
    assert run_dir.parent == project / "unotest" / ".runs"
    for name in ("manifest.json", "steps.jsonl", "heartbeat", "commands.jsonl", "runtime.json"):
        assert (run_dir / name).is_file(), name
    assert (run_dir / "commands.jsonl").read_bytes() == b""
    assert not list(run_dir.glob(".*.tmp")), "a temp file was left behind"

    manifest = json.loads((run_dir / "manifest.json").read_text())
    every_key = MANIFEST_KEYS | MANIFEST_OPTIONAL_KEYS | MANIFEST_ADDITIVE_KEYS
    assert MANIFEST_KEYS | {"pid", "pidStartTime"} <= set(manifest) <= every_key
    assert manifest["schemaVersion"] == 1 and manifest["kind"] == "scenario"
    assert manifest["ref"] == ref and manifest["adapter"] == "@unotest/web"
    assert manifest["pid"] == pid and isinstance(manifest["pidStartTime"], int)
    assert manifest["hostname"] == socket.gethostname()
    validate("RunManifest", manifest)

    segment = re.sub(r"[^a-zA-Z0-9_-]+", "-", ref).strip("-")
    match = re.fullmatch(rf"{re.escape(segment)}-([0-9a-z]+)-[0-9a-f]{{6}}", run_dir.name)
    assert match, run_dir.name
    assert int(match.group(1), 36) == manifest["startedAt"]
    beat = (run_dir / "heartbeat").stat().st_mtime
    assert beat >= manifest["startedAt"] / 1000 - 1

    events = read_ascii_events(run_dir)
    for event in events:
        if event["kind"] in PROTOCOL_KINDS:
            validate("RunArtifact", event)
    assert events[0]["runId"] == run_dir.name and events[0]["scenario"] == ref
    for event in events:
        if event["kind"] == "step:started":
            assert {"line", "col", "text", "file", "depth", "t"} == set(event) - {"kind"}
            assert not Path(event["file"]).is_absolute()
            assert (project / event["file"]).is_file(), event["file"]
            assert 0 < len(event["text"]) <= 200
    check_event_order(events, outcome, outcome == "failed" if bundle is None else bundle)

    runtime = json.loads((run_dir / "runtime.json").read_text())
    assert set(runtime) >= RUNTIME_KEYS, runtime
    state = {"completed": "completed", "failed": "failed", "aborted": "aborted"}[outcome]
    assert runtime["state"] == state and runtime["current"] is None
    assert runtime["runId"] == run_dir.name and runtime["scenario"] == ref
    assert "page" not in runtime  # the browser is closed at the end
    validate("RuntimeStateFile", runtime)
    return events


def steps_of(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["kind"] == "step:started"]


def bundle_of(project: Path, events: list[dict[str, Any]]) -> Path:
    [written] = [e for e in events if e["kind"] == "failure-bundle:written"]
    bundle = project / written["bundlePath"]
    assert bundle.is_dir() and bundle.parent == project / ".unotest" / "failures"
    assert written["screenshotPath"] == f"{written['bundlePath']}/screenshot.png"
    return bundle


def runs_json(project: Path) -> dict[str, dict[str, Any]]:
    [done] = run_all((project, ("runs", "--json"), None))
    assert done.code == 0, done.stderr
    return {meta["runId"]: meta for meta in json.loads(done.stdout)}


@pytest.fixture
def site(static_site: str, tmp_path: Path) -> str:
    """``site_lifecycle/`` served at the root of ``static_site`` (which serves tmp_path)."""
    for page in SITE.iterdir():
        shutil.copy(page, tmp_path / page.name)
    return static_site


@pytest.fixture
def browser_ready(chromium_path: str) -> None:
    """Fail early, with conftest's clear message, when there is no Chromium at all."""


# --- 1. exit codes and output ------------------------------------------------------------


def test_usage_and_setup_errors_exit_2_in_one_sentence(tmp_path: Path) -> None:
    url = "http://127.0.0.1:9"  # never reached: every run stops before a page opens
    main = make_project(
        tmp_path / "main", _config(url), {"flows/passing": PASSING, "broken": BROKEN}
    )
    bad_config = make_project(
        tmp_path / "bad-config",
        f"baseURL: {url}\ntimeout: {{action: fast}}\n",
        {"flows/passing": PASSING},
    )
    missing_exe = make_project(
        tmp_path / "missing-exe",
        _config(url, extra=f"executablePath: {tmp_path / 'no-such-chrome'}\n"),
        {"flows/passing": PASSING},
    )
    no_browser = make_project(tmp_path / "no-browser", _config(url), {"flows/passing": PASSING})
    server_dies = make_project(
        tmp_path / "server-dies",
        _config(
            url,
            extra=(
                "webServer:\n"
                f"  command: {json.dumps(DYING_SERVER)}\n"
                f"  url: {url}/index.html\n"
                "  timeout: 20000\n"
            ),
        ),
        {"flows/passing": PASSING},
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    unknown, broken, config, exe, browser, server = run_all(
        (main, ("e2e", "flows/pasing"), None),
        (main, ("e2e", "broken"), None),
        (bad_config, ("e2e", "flows/passing"), None),
        (missing_exe, ("e2e", "flows/passing"), None),
        (
            no_browser,
            ("e2e", "flows/passing"),
            {"PATH": str(empty), "PLAYWRIGHT_BROWSERS_PATH": str(empty)},
        ),
        (server_dies, ("e2e", "flows/passing"), None),
    )

    assert unknown.code == 2, unknown
    assert "no scenario named 'flows/pasing'" in unknown.stderr
    assert "did you mean 'flows/passing'" in unknown.stderr

    assert broken.code == 2, broken
    assert re.search(r"unotest/e2e/broken\.test\.js:\d+:\d+: SyntaxError", broken.stderr)
    assert "scenario 'broken' cannot run" in broken.stderr
    # Both stopped before a run existed.
    assert not list((main / "unotest" / ".runs").glob("*/manifest.json"))

    assert config.code == 2, config
    assert config.stderr.strip().count("\n") == 0, config.stderr
    assert "timeout.action" in config.stderr and "fast" in config.stderr
    assert config.stdout == ""

    assert exe.code == 2, exe
    assert exe.stderr.strip().count("\n") == 0, exe.stderr
    assert "executablePath" in exe.stderr and "no-such-chrome" in exe.stderr

    assert browser.code == 2, browser
    assert "no Chromium found" in browser.stderr
    assert "playwright install chromium" in browser.stderr

    assert server.code == 2, server
    assert "exited with code 3" in server.stderr
    assert "lifecycle: port 9 is taken, giving up" in server.stderr

    for done in (unknown, broken, config, exe, browser, server):
        assert done.stderr.startswith("unotest: ") or done is broken, done.stderr
        assert done.stderr.strip().splitlines()[-1].startswith("unotest: ")
    for done in (config, exe, browser, server):
        assert done.stderr.strip().count("\n") == 0, done.stderr
    for project in (bad_config, missing_exe):
        assert not (project / "unotest" / ".runs").exists()
    # A run that could not start (no browser, webServer down) is recorded as failed,
    # with a consistent run directory.
    for project, done in ((no_browser, browser), (server_dies, server)):
        check_run_dir(
            run_dir_of(project, done.pid),
            project,
            ref="flows/passing",
            pid=done.pid,
            outcome="failed",
            validate=validate,
            bundle=False,
        )


def test_the_project_is_read_through_the_index_cache_and_an_edit_is_seen(
    tmp_path: Path, site: str, browser_ready: None
) -> None:
    """``e2e`` checks the project through ``unotest/.cache/index.json`` (then parses only
    the helpers and its scenario): written, then hit; a broken scenario is refused with
    its position from it; an edit to the scenario is seen."""
    project = make_project(
        tmp_path / "proj", _config(site), {"flows/passing": PASSING, "broken": BROKEN}
    )
    cache = project / "unotest/.cache/index.json"
    first = e2e(project, "flows/passing")
    assert first.code == 0, first.stderr
    assert cache.is_file()  # written by e2e's own read
    written = cache.stat().st_mtime_ns
    again = e2e(project, "flows/passing")
    assert again.code == 0, again.stderr
    assert cache.stat().st_mtime_ns == written  # a hit

    refused = e2e(project, "broken")  # its problem, from the cache, with its position
    assert refused.code == 2, refused
    assert "unotest/e2e/broken.test.js:6:0: SyntaxError" in refused.stderr

    (project / "unotest/e2e/flows/passing.test.js").write_text(
        PASSING.replace("expect_equal(total, 3)", "expect_equal(total,"), encoding="utf-8"
    )
    edited = e2e(project, "flows/passing")
    assert edited.code == 2, edited
    assert "unotest/e2e/flows/passing.test.js:" in edited.stderr
    assert "cannot run: fix the 1 problem(s) above" in edited.stderr


def test_passing_failing_and_json_runs(tmp_path: Path, site: str, browser_ready: None) -> None:
    project = make_project(
        tmp_path / "proj", _config(site), {"flows/passing": PASSING, "flows/failing": FAILING}
    )
    passing, failing, as_json = run_all(
        (project, ("e2e", "flows/passing"), None),
        (project, ("e2e", "flows/failing"), None),
        (project, ("e2e", "unotest/e2e/flows/failing.test.js", "--json"), None),
    )

    # --- the passing run: console and run directory
    assert passing.code == 0, passing
    lines = passing.stdout.splitlines()
    for text in (
        'open_home("")',
        'goto("/index.html" + query)',
        'expect_visible(role("heading", "Lifecycle home"))',
        "let total = 1 + 2",
        'log("total is", total)',
        'screenshot("home")',
        "expect_equal(total, 3)",
    ):
        pattern = rf"\s+✓ (_helpers/site\.js:)?\d+:\d+  {re.escape(text)}  \(\d+(\.\d+)? m?s\)"
        assert any(re.fullmatch(pattern, line) for line in lines), (text, passing.stdout)
    assert "total is 3" in lines
    assert re.search(r"^passed  flows/passing: 7 steps in \d+\.\d\d s$", passing.stdout, re.M)

    run = run_dir_of(project, passing.pid)
    events = check_run_dir(
        run,
        project,
        ref="flows/passing",
        pid=passing.pid,
        outcome="completed",
        validate=validate,
    )
    assert f"({run.relative_to(project).as_posix()})" in lines[0]
    started = steps_of(events)
    assert [(e["line"], e["col"], e["depth"], e["file"]) for e in started] == PASSING_STEPS
    assert sum(e["kind"] == "step:ok" for e in events) == 7
    [shot] = [e for e in events if e["kind"] == "screenshot"]
    assert shot["path"] == f"{run.relative_to(project).as_posix()}/screenshot/home.png"
    assert (project / shot["path"]).read_bytes().startswith(PNG_MAGIC)
    assert not (project / ".unotest" / "failures").exists() or all(
        not p.name.startswith("flows-passing") for p in (project / ".unotest/failures").iterdir()
    )

    # --- the failing run: console, run directory, failure bundle
    assert failing.code == 1, failing
    where = f"{HELPER_FILE}:{CHECK_HEADING_LINE}:2"
    message = 'expected <Locator css="h1"> to have text "Goodbye", received "Lifecycle home"'
    # the scenario's own line first, then the helper where it failed
    chain = f"unotest/e2e/flows/failing.test.js:7:2 → {where} check_heading"
    failing_fn = "test_failing"
    assert f"  {chain}: AssertionError: {message}" in failing.stdout
    assert '  step: expect_text(css("h1"), expected)' in failing.stdout
    assert re.search(r"^failed  flows/failing$", failing.stdout, re.M)
    assert re.search(
        r"✗ _helpers/site\.js:9:2  expect_text\(css\(\"h1\"\), expected\)", failing.stdout
    )

    run = run_dir_of(project, failing.pid)
    events = check_run_dir(
        run,
        project,
        ref="flows/failing",
        pid=failing.pid,
        outcome="failed",
        validate=validate,
    )
    started = steps_of(events)
    assert len(started) == FAILING_STEP_INDEX + 1
    failed_step = started[FAILING_STEP_INDEX]
    assert (failed_step["file"], failed_step["line"], failed_step["depth"]) == (
        HELPER_FILE,
        CHECK_HEADING_LINE,
        1,
    )
    fails = [e for e in events if e["kind"] == "step:fail"]
    assert [f["errorName"] for f in fails] == ["AssertionError", "AssertionError"]
    assert fails[0]["error"] == message
    kinds = [e["kind"] for e in events]
    assert kinds[-2:] == ["failure-bundle:written", "run:finished"]
    runtime = json.loads((run / "runtime.json").read_text())
    assert runtime["lastFailure"] == {
        "line": CHECK_HEADING_LINE,
        "col": 2,
        "error": {"message": message, "name": "AssertionError"},
        "file": HELPER_FILE,
        "stack": [
            {"file": "unotest/e2e/flows/failing.test.js", "line": 7, "col": 2, "fn": failing_fn},
            {"file": HELPER_FILE, "line": CHECK_HEADING_LINE, "col": 2, "fn": "check_heading"},
        ],
    }

    bundle = bundle_of(project, events)
    assert f"  failure bundle: {bundle.relative_to(project).as_posix()}" in failing.stdout
    assert re.fullmatch(rf"flows-failing{BUNDLE_NAME_RE}{FAILING_STEP_INDEX}", bundle.name), (
        bundle.name
    )
    assert ":" not in bundle.name
    error = json.loads((bundle / "error.json").read_text())
    assert set(error) >= ERROR_KEYS, error
    assert error["error"] == message and error["errorName"] == "AssertionError"
    assert (error["file"], error["line"], error["col"]) == (HELPER_FILE, CHECK_HEADING_LINE, 2)
    assert error["step"] == 'expect_text(css("h1"), expected)'
    assert error["callStack"] == [
        {"fn": "check_heading", "file": HELPER_FILE, "line": CHECK_HEADING_LINE}
    ]
    assert error["vars"] == {"expected": '"Goodbye"'}
    assert error["url"] == f"{site}/index.html" and error["title"] == "Lifecycle home"
    assert "captureErrors" not in error, error.get("captureErrors")
    assert (bundle / "screenshot.png").read_bytes().startswith(PNG_MAGIC)
    aria = (bundle / "page.aria.yaml").read_text()
    assert 'heading "Lifecycle home" [level=1]' in aria
    network = json.loads((bundle / "network.json").read_text())
    assert {"method", "url", "status", "durationMs", "failure"} <= set(network[0])
    assert any(r["url"] == f"{site}/index.html" and r["status"] == 200 for r in network)
    assert any(r["url"].endswith("/unreachable") and r["failure"] for r in network), network
    console = json.loads((bundle / "console.json").read_text())
    assert any(
        m["type"] == "error" and m["text"] == "lifecycle: widget failed to load" for m in console
    ), console
    assert any("lifecycle: uncaught page bug" in m["text"] for m in console), console
    assert any(m["type"] == "error" and "Failed to load resource" in m["text"] for m in console), (
        console
    )
    with zipfile.ZipFile(bundle / "trace.zip") as trace:
        assert trace.testzip() is None
        names = trace.namelist()
    assert any(name.endswith(".trace") for name in names), names
    assert "trace.network" in names

    # --- the failing run again, named by its file, with --json: stdout is JSON only
    assert as_json.code == 1, as_json
    result = json.loads(as_json.stdout)
    assert set(result) == {
        "runId",
        "runDir",
        "scenario",
        "outcome",
        "durationMs",
        "steps",
        "error",
        "bundlePath",
    }
    run = run_dir_of(project, as_json.pid)
    assert result["runId"] == run.name and result["runDir"] == run.relative_to(project).as_posix()
    assert result["scenario"] == "flows/failing" and result["outcome"] == "failed"
    assert result["steps"] == FAILING_STEP_INDEX + 1 and result["durationMs"] > 0
    assert result["error"]["errorName"] == "AssertionError"
    assert result["error"]["stepIndex"] == FAILING_STEP_INDEX
    assert (project / result["bundlePath"]).is_dir()
    assert result["bundlePath"] != bundle.relative_to(project).as_posix()
    assert "expect_text" in as_json.stderr  # the progress goes to stderr

    # --- unotest runs --json
    metas = runs_json(project)
    statuses = {
        run_dir_of(project, done.pid).name: status
        for done, status in ((passing, "passed"), (failing, "failed"), (as_json, "failed"))
    }
    assert {run_id: metas[run_id]["status"] for run_id in statuses} == statuses
    for meta in metas.values():
        validate("RunMeta", meta)
        assert meta["finishedAt"] is not None and meta["durationMs"] >= 0


# --- 4. secrets ------------------------------------------------------------------------------


def _leak_forms(value: str) -> set[str]:
    raw = value.encode()
    forms = {value, quote(value, safe=""), quote_plus(value)}
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        text = encode(raw).decode()
        forms |= {text, text.rstrip("=")}
    return forms


def test_secrets_never_reach_artifacts_or_output(
    tmp_path: Path, site: str, browser_ready: None
) -> None:
    project = make_project(
        tmp_path / "proj",
        _config(site),
        {"secrets": SECRETS},
        dotenv=f"API_TOKEN={TOKEN}\n",
    )
    done = e2e(project, "secrets", env={"MY_PASSWORD": PASSWORD, "GREETING": GREETING})
    assert done.code == 1, done
    run = run_dir_of(project, done.pid)
    events = check_run_dir(
        run, project, ref="secrets", pid=done.pid, outcome="failed", validate=validate
    )
    bundle = bundle_of(project, events)

    leaks = {form: [] for value in (TOKEN, PASSWORD) for form in _leak_forms(value)}
    checked = []
    for path in sorted([*run.rglob("*"), *bundle.rglob("*")]):
        if not path.is_file() or path.name == "trace.zip":  # traces: documented exception
            continue
        data = path.read_bytes()
        checked.append(path.name)
        for form in leaks:
            if form.encode() in data:
                leaks[form].append(str(path.relative_to(project)))
    for stream, text in (("stdout", done.stdout), ("stderr", done.stderr)):
        for form in leaks:
            if form in text:
                leaks[form].append(stream)
    assert {form: where for form, where in leaks.items() if where} == {}
    assert {"steps.jsonl", "runtime.json", "error.json", "console.json", "network.json"} <= set(
        checked
    )
    assert "page.aria.yaml" in checked and "screenshot.png" in checked

    # Masked, not dropped; and a variable whose name is not secret stays visible.
    assert f"token {MASK} password {MASK} greeting {GREETING}" in done.stdout
    assert f'AssertionError: expected "x", received "{MASK}"' in done.stdout
    fail = next(e for e in events if e["kind"] == "step:fail")
    assert fail["error"] == f'expected "x", received "{MASK}"'
    error = json.loads((bundle / "error.json").read_text())
    assert error["vars"]["token"] == f'"{MASK}"' and error["vars"]["password"] == f'"{MASK}"'
    assert error["vars"]["greeting"] == f'"{GREETING}"'
    assert MASK in error["vars"]["creds"] and "Bearer" in error["vars"]["creds"]
    assert error["url"] == f"{site}/index.html?token={MASK}"
    aria = (bundle / "page.aria.yaml").read_text()
    assert f'textbox "Password": {MASK}' in aria
    assert f'textbox "Note": {MASK} / {MASK}' in aria
    assert f"token={MASK}" in aria
    console = (bundle / "console.json").read_text()
    assert console.count(f"typed b64={MASK}") >= 2, console


# --- 5. signals --------------------------------------------------------------------------------


def _processes_mentioning(needle: str) -> list[int]:
    return [
        int(p.name)
        for p in Path("/proc").iterdir()
        if p.name.isdigit() and needle in _cmdline(int(p.name)) and _stat(int(p.name))
    ]


def _wait_for_step(project: Path, pid: int, text: str, timeout: float = 60) -> Path:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for manifest in (project / "unotest" / ".runs").glob("*/manifest.json"):
            try:
                if json.loads(manifest.read_text())["pid"] != pid:
                    continue
            except (OSError, ValueError):
                continue  # manifest.json is atomic; a half-written glob is not
            steps = (manifest.parent / "steps.jsonl").read_bytes()
            if any(
                b'"step:started"' in line and text.encode() in line for line in steps.split(b"\n")
            ):
                return manifest.parent
        time.sleep(0.05)
    raise AssertionError(f"step {text!r} never started")


def test_sigint_and_sigterm_abort_the_run_and_leave_no_browser(
    tmp_path: Path, site: str, browser_ready: None
) -> None:
    project = make_project(
        tmp_path / "proj",
        _config(site, action=60000, expect=60000, scenario=120000),
        {"hang": HANG},
    )
    procs = {sig: start(project, "e2e", "hang") for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        tree: dict[signal.Signals, dict[int, int]] = {}
        profiles: dict[signal.Signals, set[str]] = {}
        for sig, proc in procs.items():
            _wait_for_step(project, proc.pid, "wait_for(")
            time.sleep(0.3)  # well inside the auto-waiting action
            tree[sig] = _descendants(proc.pid)
            profiles[sig] = {
                m.group(1)
                for pid in tree[sig]
                if (m := re.search(r"--user-data-dir=(\S+)", _cmdline(pid)))
            }
            assert profiles[sig], "no Chromium among the runner's processes"
        sent = {}
        for sig, proc in procs.items():
            proc.send_signal(sig)
            sent[sig] = time.monotonic()
        results = {sig: finish(proc, sent[sig]) for sig, proc in procs.items()}
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()

    for sig, expected_code, name in (
        (signal.SIGINT, 130, "SIGINT"),
        (signal.SIGTERM, 143, "SIGTERM"),
    ):
        done = results[sig]
        assert done.code == expected_code, (name, done)
        assert done.seconds < 10, (name, done.seconds)
        assert f"{name}: aborting the run" in done.stdout
        assert re.search(r"^aborted  hang after 4 steps", done.stdout, re.M), done.stdout
        run = run_dir_of(project, done.pid)
        events = check_run_dir(
            run, project, ref="hang", pid=done.pid, outcome="aborted", validate=validate
        )
        fails = [e for e in events if e["kind"] == "step:fail"]
        assert [f["errorName"] for f in fails] == ["AbortError"]
        assert not any(e["kind"] == "failure-bundle:written" for e in events)

    # Nothing the runs started is left: no process of their trees, no process using
    # their Chromium profiles, not even the (temporary) profile directories.
    deadline = time.monotonic() + 10
    while True:
        left = [
            (pid, _cmdline(pid)[:120])
            for sig in procs
            for pid, start_time in tree[sig].items()
            if _alive(pid, start_time)
        ]
        left += [
            (pid, _cmdline(pid)[:120])
            for sig in procs
            for profile in profiles[sig]
            for pid in _processes_mentioning(profile)
        ]
        left += [
            (0, f"profile directory {profile} still exists")
            for sig in procs
            for profile in profiles[sig]
            if Path(profile).exists()
        ]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert left == []

    metas = runs_json(project)
    for done in results.values():
        meta = metas[run_dir_of(project, done.pid).name]
        assert (meta["status"], meta["outcome"]) == ("aborted", "aborted")


# --- 6. scenario timeout, 7. webServer ----------------------------------------------------


def _port_answers(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture
def web_server_project(tmp_path: Path) -> Iterator[tuple[Path, int]]:
    port = free_port()
    command = (
        f"{shlex.quote(sys.executable)} -m http.server {port} --bind 127.0.0.1 --directory site"
    )
    project = make_project(
        tmp_path / "served",
        _config(
            f"http://127.0.0.1:{port}",
            extra=(
                "webServer:\n"
                f"  command: {json.dumps(command)}\n"
                f"  url: http://127.0.0.1:{port}/index.html\n"
                "  timeout: 30000\n"
                "  reuseExistingServer: false\n"
            ),
        ),
        {"flows/passing": PASSING},
    )
    shutil.copytree(SITE, project / "site")
    yield project, port
    for pid in _processes_mentioning(f"http.server {port} "):
        os.kill(pid, signal.SIGKILL)  # only if the runner failed to stop it


def test_two_runs_at_once_share_the_web_server_its_starter_stops_last(
    browser_ready: None, web_server_project: tuple[Path, int]
) -> None:
    """Two ``unotest e2e`` of one project at once (two terminals, or the viewer's Run
    clicked twice), ``reuseExistingServer: false``: one starts the webServer, the other
    waits for it and uses it (it used to fail with "already used", or to lose the site
    when the first run ended and stopped it); the starter stops it after both."""
    served, port = web_server_project
    runs = run_all(
        (served, ("e2e", "flows/passing"), None), (served, ("e2e", "flows/passing"), None)
    )
    for done in runs:
        assert done.code == 0, done
        assert "passed  flows/passing: 7 steps" in done.stdout
    assert not _port_answers(port), "the webServer still answers after both runs"
    assert _processes_mentioning(f"http.server {port} ") == []


def test_scenario_timeout_and_web_server(
    tmp_path: Path,
    site: str,
    browser_ready: None,
    web_server_project: tuple[Path, int],
) -> None:
    looping = make_project(
        tmp_path / "looping", _config(site, scenario=2000), {"busy-loop": LOOP}, helpers=False
    )
    served, port = web_server_project
    no_bundle = make_project(tmp_path / "no-bundle", _config(site), {"flows/failing": FAILING})
    (no_bundle / ".unotest").write_text("not a directory\n")
    timed_out, with_server, unbundled = run_all(
        (looping, ("e2e", "busy-loop"), None),
        (served, ("e2e", "flows/passing"), None),
        (no_bundle, ("e2e", "flows/failing"), None),
    )

    # §7 / language.md §7: `while (true)` is stopped by timeout.scenario as a TimeoutError
    assert timed_out.code == 1, timed_out
    message = "the scenario took longer than its timeout of 2000 ms"
    assert f"TimeoutError: {message}" in timed_out.stdout
    run = run_dir_of(looping, timed_out.pid)
    events = check_run_dir(
        run,
        looping,
        ref="busy-loop",
        pid=timed_out.pid,
        outcome="failed",
        validate=validate,
    )
    started = steps_of(events)
    fails = [e for e in events if e["kind"] == "step:fail"]
    assert fails == [
        {
            "kind": "step:fail",
            "error": message,
            "errorName": "TimeoutError",
            "t": fails[0]["t"],
            "durationMs": fails[0]["durationMs"],
        }
    ]
    assert isinstance(fails[0]["durationMs"], float)
    step_kinds = [e["kind"] for e in events if e["kind"].startswith("step:")]
    assert step_kinds[-2:] == ["step:started", "step:fail"]
    last = started[-1]
    assert (last["line"], last["col"]) in ((6, 2), (7, 4))  # `while (true)` or `n += 1`
    bundle = bundle_of(looping, events)
    assert re.fullmatch(rf"busy-loop{BUNDLE_NAME_RE}{len(started) - 1}", bundle.name)
    error = json.loads((bundle / "error.json").read_text())
    assert error["errorName"] == "TimeoutError" and error["error"] == message
    assert (error["file"], error["line"]) == ("unotest/e2e/busy-loop.test.js", last["line"])
    assert re.fullmatch(r"\d+", error["vars"]["n"])
    runtime = json.loads((run / "runtime.json").read_text())
    assert runtime["lastFailure"]["error"] == {"message": message, "name": "TimeoutError"}
    assert timed_out.seconds < 60

    # §7 webServer: started before the run, stopped after it
    assert with_server.code == 0, with_server
    assert "passed  flows/passing: 7 steps" in with_server.stdout
    check_run_dir(
        run_dir_of(served, with_server.pid),
        served,
        ref="flows/passing",
        pid=with_server.pid,
        outcome="completed",
        validate=validate,
    )
    assert not _port_answers(port), "the webServer still answers after the run"
    assert _processes_mentioning(f"http.server {port} ") == []

    # §4: a bundle that cannot be written never hides the scenario's own failure
    assert unbundled.code == 1, unbundled
    assert 'AssertionError: expected <Locator css="h1">' in unbundled.stdout
    assert "warning: no failure bundle" in unbundled.stderr
    assert "internal error" not in unbundled.stderr
    events = check_run_dir(
        run_dir_of(no_bundle, unbundled.pid),
        no_bundle,
        ref="flows/failing",
        pid=unbundled.pid,
        outcome="failed",
        validate=validate,
        bundle=False,
    )
    assert [e["kind"] for e in events][-2:] == ["step:fail", "run:finished"]
