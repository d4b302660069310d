"""``step(title, fn)`` and soft assertions as a user meets them: real Chromium, the CLI.

One small page (served from a folder of the test's on 127.0.0.1) and three runs:

1. ``unotest e2e shop/soft --reporter json=...``: one scenario with titled steps (a
   literal title, a template one in a loop, nested ones, one inside a plain helper
   call, ``args`` and the value returned) and soft failures (``expect_equal`` inside a
   ``try``, a browser expectation inside a titled step, one more at the end), a soft
   assertion inside ``expect_to_pass`` (retried until it passes) and ``{soft: <not a
   boolean>}`` (a TypeError a ``try`` catches). Checked: the console, ``steps.jsonl``,
   one failure bundle per soft failure and the run's own, the exit code and the list
   of every soft failure at the end, and the JSON report's ``test_end.steps`` tree.
2. ``unotest collection`` of a passing scenario with nested titled steps and one that
   fails hard inside titled steps after a soft failure: JUnit's steps outline in
   ``<system-out>``, ``in step: A › B`` and the soft failures listed in ``<failure>``.
3. ``unotest e2e --debug`` driven through ``commands.jsonl``: the run pauses at each
   soft failure; ``retry`` (after the page is fixed through ``eval``) forgets the first,
   ``continue`` keeps the second, and the run fails at its end with that one only.

The units of both features are in tests/dsl/test_step_soft_unit.py.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from events import answer_to, append_command, is_kind, read_events, wait_for_event
from net import serve_directory
from procs import stop_tree, wait_for_run_dir
from sites import collection_yaml, config_yaml, unotest_env, write_project

RUN_TIMEOUT_S = 150
_BIN = Path(sys.executable).with_name("unotest")
UNOTEST = [str(_BIN)] if _BIN.is_file() else [sys.executable, "-m", "unotest"]
DURATION = r"[\d.]+ m?s"
"""How the console writes a step's time: ``0 ms``, ``712 ms``, ``1.01 s``."""
TOOK = rf"\({DURATION}\)"
TIMEOUT = {"action": 5000, "expect": 1000, "navigation": 15000, "scenario": 60000}

PAGE = """<!doctype html>
<title>Shop</title>
<input id=email aria-label=Email>
<p id=status>Saving</p>
<p id=count>0</p>
<script>
  const shown = (id) => document.getElementById(id);
</script>
<button id=bump onclick="shown('count').textContent = Number(shown('count').textContent) + 1">
  Bump</button>
<button id=fix onclick="shown('status').textContent = 'Saved'">Fix</button>
"""

SOFT_FILE = "unotest/e2e/shop/soft.test.js"
SOFT = """\
// id-shop-soft
// Soft checks and named steps
// #16a34a
function log_in(user) {
  fill(css("#email"), user)
  return "hi " + user
}
function add_item(item) {
  log("@@ adding " + item)
}
function type_name() {
  fill(css("#email"), "bob")
}
function fill_form() {
  step("Type the name", type_name)
  expect_text(css("#status"), "Done", {soft: true})
}
function prepare() {
  step("Prepare", add_item, {args: ["box"]})
}
function bump_to_three() {
  click(css("#bump"))
  expect_text(css("#count"), "3", {soft: true, timeout: 100})
}
function test_soft() {
  goto("index.html")
  const who = step("Log in", log_in, {args: ["ada"]})
  log("@@ " + who)
  for (const item of ["pen", "ink"]) {
    step(`Add ${item}`, add_item, {args: [item]})
  }
  prepare()
  try {
    expect_equal(len(who), 99, {soft: true})
  } catch (e) {
    log("@@ caught " + e.message)
  }
  step("Fill the form", fill_form)
  expect_to_pass(bump_to_three, {timeout: 15000, intervals: [0]})
  try {
    expect_equal(1, 1, {soft: 1})
  } catch (e) {
    log("@@ " + e.name + ": " + e.message)
  }
  try {
    expect_visible(css("#status"), {soft: "yes"})
  } catch (e) {
    log("@@ " + e.name + ": " + e.message)
  }
  expect_visible(css("#missing"), {soft: true, timeout: 300})
  log("@@ still running")
}
"""

TITLED = """\
// id-flows-titled
// Named steps that pass
// #2563eb
function look() {
  expect_visible(css("#status"))
}
function open_shop() {
  goto("index.html")
  step("Look", look)
}
function test_titled() {
  step("Open the shop", open_shop)
  step("Sign in", sign_in, {args: ["ada"]})
}
function sign_in(user) {
  fill(css("#email"), user)
}
"""

CHECKOUT_FILE = "unotest/e2e/flows/checkout.test.js"
CHECKOUT = """\
// id-flows-checkout
// Pays after a soft check
// #dc2626
function card() {
  expect_text(css("#status"), "Paid", {timeout: 300})
}
function pay() {
  step("Card details", card)
}
function test_checkout() {
  goto("index.html")
  expect_equal("a", "b", {soft: true})
  step("Pay", pay)
  log("@@ never")
}
"""

DEBUG_FILE = "unotest/e2e/debug.test.js"
DEBUG = """\
// id-debug
// Paused at soft failures
// #7c3aed
function test_debug() {
  goto("index.html")
  expect_text(css("#status"), "Saved", {soft: true, timeout: 300})
  expect_equal(1, 2, {soft: true})
  log("@@ went on")
}
"""


def place(source: str, needle: str, nth: int = 0) -> tuple[int, int]:
    """(line, col) of the statement holding ``needle`` (its ``nth`` one): line 1-based,
    col 0-based at the statement's first character."""
    found = [
        (number, len(text) - len(text.lstrip()))
        for number, text in enumerate(source.splitlines(), 1)
        if needle in text
    ]
    return found[nth]


# --- the site and the runs ------------------------------------------------------------------


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("steps-soft-site")
    (folder / "index.html").write_text(PAGE, encoding="utf-8")
    with serve_directory(folder, "steps-soft-site") as url:
        yield url


def project_at(
    root: Path, site: str, chromium: str, scenarios: dict[str, str], collection: bool = False
) -> Path:
    """A project with ``scenarios``; ``collection``: and the collection ``shop`` of them."""
    collections = {"shop": collection_yaml(scenarios)} if collection else {}
    return write_project(
        root,
        config_yaml(f"{site}/", timeout=TIMEOUT, chromium=chromium),
        scenarios,
        collections=collections,
    )


@dataclass
class Done:
    code: int
    out: str
    err: str
    project: Path

    def __str__(self) -> str:
        return f"exit {self.code}\n{self.out}\n{self.err}"

    def logged(self) -> list[str]:
        """The scenario's own log lines: those that start with ``@@ ``."""
        return [line[3:] for line in self.out.splitlines() if line.startswith("@@ ")]

    @property
    def run_dir(self) -> Path:
        """The run directory ``unotest e2e`` names on its first line."""
        match = re.search(r"\((unotest/\.runs/[^)\s]+)\)", self.out)
        assert match, self
        return self.project / match[1]


def unotest(project: Path, *args: str) -> Done:
    done = subprocess.run(
        [*UNOTEST, *args],
        cwd=project,
        env=unotest_env(NO_COLOR="1"),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
    )
    assert "Traceback" not in done.stdout + done.stderr, done.stderr
    return Done(done.returncode, done.stdout, done.stderr, project)


def closed_steps(events: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Each step's ``step:started`` with the ``step:ok``/``step:fail`` that closed it, in
    the order they closed (a retried step is two)."""
    opened: list[dict[str, Any]] = []
    pairs = []
    for event in events:
        if event["kind"] == "step:started":
            opened.append(event)
        elif event["kind"] in ("step:ok", "step:fail"):
            pairs.append((opened.pop(), event))
    assert opened == [], opened
    return pairs


def bundles(run_dir: Path) -> list[str]:
    """The failure bundles the run wrote, in order (project-relative)."""
    return [e["bundlePath"] for e in read_events(run_dir) if e["kind"] == "failure-bundle:written"]


def error_json(project: Path, bundle: str) -> dict[str, Any]:
    """A bundle's ``error.json``."""
    data: dict[str, Any] = json.loads((project / bundle / "error.json").read_text())
    return data


def json_report(path: Path) -> list[dict[str, Any]]:
    """The envelopes a ``json=PATH`` reporter wrote."""
    data: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return data


def shape(steps: list[dict[str, Any]]) -> list[tuple[str, list[Any]]]:
    """The titles of a ``test_end.steps`` tree, nested as it is."""
    return [(step["title"], shape(step["steps"])) for step in steps]


# --- 1. one scenario: titles, nesting, args, soft failures, the end of the run ---------------


def test_titled_steps_and_soft_failures_through_a_run(
    tmp_path: Path, site: str, chromium_path: str
) -> None:
    project = project_at(tmp_path / "proj", site, chromium_path, {"shop/soft": SOFT})
    report = tmp_path / "report.json"
    done = unotest(project, "e2e", "shop/soft", "--reporter", f"json={report}")
    out = done.out

    assert done.code == 1, done
    # args given, value returned; the scenario went on past every soft failure, and
    # no catch saw one; a soft option that is no boolean is a TypeError a catch sees.
    assert done.logged() == [
        "hi ada",
        "adding pen",
        "adding ink",
        "adding box",
        "TypeError: expect_equal()'s soft is true or false, got 1",
        'TypeError: expect_visible() option soft: "yes" is not valid: true or false (a failure '
        "the run records while the scenario goes on)",
        "still running",
    ], done

    # The console shows a step(...) statement by its title, where it is in the source.
    log_in = place(SOFT, 'step("Log in"')
    add = place(SOFT, "step(`Add ${item}`")
    assert re.search(rf"… {log_in[0]}:{log_in[1]}  Log in\n", out), out
    assert re.search(rf"✓ {log_in[0]}:{log_in[1]}  Log in  {TOOK}", out), out
    for item in ("pen", "ink"):
        assert re.search(rf"✓ {add[0]}:{add[1]}  Add {item}  {TOOK}", out), out
    assert 'step("' not in out and "step(`" not in out

    # Each soft failure: printed where it happened with its error, then the next step.
    soft_equal = place(SOFT, "expect_equal(len(who), 99")
    soft_text = place(SOFT, 'expect_text(css("#status"), "Done"')
    soft_visible = place(SOFT, 'expect_visible(css("#missing")')
    messages = {
        soft_equal: "expected 99, received 6",
        soft_text: 'expected <Locator css="#status"> to have text "Done", received "Saving"',
        soft_visible: 'expected <Locator css="#missing"> to be visible, received no matching '
        "element",
    }
    for (line, col), message in messages.items():
        shown = rf"✗ {line}:{col}  expect_\w+\(.*\)  \(soft AssertionError, {DURATION}\)\n\s+"
        assert re.search(shown + re.escape(f"AssertionError: {message}\n"), out), out

    # At its end the run fails with every soft failure listed, in order.
    listed = [
        f"{SOFT_FILE}:{line}:{col}: AssertionError: {message}"
        for (line, col), message in messages.items()
    ]
    verdict = "3 soft assertions failed:\n" + "\n".join(f"  {line}" for line in listed)
    first = f"{SOFT_FILE}:{soft_equal[0]}:{soft_equal[1]}"  # placed at the first of them
    assert f"\nfailed  shop/soft\n  {first}: AssertionError: {verdict}\n" in out, out

    # steps.jsonl: the titles, the soft failures, the caught attempts and TypeErrors.
    run_dir = done.run_dir
    events = read_events(run_dir, finished=True)
    pairs = closed_steps(events)
    by_title = {end.get("title"): (start, end) for start, end in pairs if end.get("title")}
    assert list(by_title) == [
        "Log in",
        "Add pen",
        "Add ink",
        "Prepare",
        "Type the name",
        "Fill the form",
    ]
    start, end = by_title["Log in"]
    assert (start["line"], start["col"], start["title"]) == (*log_in, "Log in")
    assert start["text"] == 'const who = step("Log in", log_in, {args: ["ada"]})'
    assert end["kind"] == "step:ok"
    start, _ = by_title["Add pen"]
    assert (start["line"], start["col"]) == add and "title" not in start  # known when it ran
    assert by_title["Type the name"][0]["depth"] == by_title["Fill the form"][0]["depth"] + 1
    soft_fails = [
        ((start["line"], start["col"]), end["errorName"], end["error"])
        for start, end in pairs
        if end.get("soft")
    ]
    assert soft_fails == [(at, "AssertionError", message) for at, message in messages.items()]
    assert all(
        isinstance(end["durationMs"], float) and "caught" not in end
        for _, end in pairs
        if end.get("soft")
    )
    # The soft assertion inside expect_to_pass failed two attempts, caught, not soft;
    # the third passed, and the expect_to_pass statement with it.
    attempt = place(SOFT, 'expect_text(css("#count")')
    tries = [end for start, end in pairs if (start["line"], start["col"]) == attempt]
    assert [(e["kind"], e.get("caught"), e.get("soft")) for e in tries] == [
        ("step:fail", True, None),
        ("step:fail", True, None),
        ("step:ok", None, None),
    ]
    retried = place(SOFT, "expect_to_pass(bump_to_three")
    assert [end["kind"] for start, end in pairs if start["line"] == retried[0]] == ["step:ok"]
    type_errors = [
        (start["line"], end.get("caught"), end.get("soft"))
        for start, end in pairs
        if end.get("errorName") == "TypeError"
    ]
    assert type_errors == [
        (place(SOFT, "{soft: 1}")[0], True, None),
        (place(SOFT, '{soft: "yes"}')[0], True, None),
    ]
    assert events[-1]["kind"] == "run:finished" and events[-1]["outcome"] == "failed"

    # A failure bundle per soft failure, where it happened, then the run's own.
    written = bundles(run_dir)
    assert len(written) == 4, written
    on_disk = sorted(path.name for path in (project / ".unotest" / "failures").iterdir())
    assert on_disk == sorted(Path(bundle).name for bundle in written)
    places = [
        (error_json(project, bundle)["line"], error_json(project, bundle)["col"])
        for bundle in written
    ]
    assert places == [*messages, soft_equal]
    assert error_json(project, written[-1])["error"] == verdict
    assert f"failure bundle: {written[-1]}" in out

    # The JSON report: the test failed with the list, and its titled steps as a tree (a
    # titled step inside a plain helper call hangs from the top).
    (test_end,) = [e["data"] for e in json_report(report) if e["type"] == "test_end"]
    assert test_end["status"] == "failed"
    assert test_end["error_message"] == verdict
    steps = test_end["steps"]
    assert shape(steps) == [
        ("Log in", []),
        ("Add pen", []),
        ("Add ink", []),
        ("Prepare", []),
        ("Fill the form", [("Type the name", [])]),
    ]
    assert [step["status"] for step in steps[:4]] == ["passed"] * 4
    assert steps[4]["steps"][0]["status"] == "passed"
    # (The status of "Fill the form", a soft failure inside it, is left out: see
    # test_a_titled_step_with_a_soft_failure_inside_is_failed in the unit tests.)
    assert all(isinstance(step["duration_ms"], float) for step in steps)


# --- 2. a collection: JUnit's outline, a hard failure after a soft one ------------------------


def test_junit_outlines_titled_steps_and_a_hard_failure_lists_the_soft_ones(
    tmp_path: Path, site: str, chromium_path: str
) -> None:
    project = project_at(
        tmp_path / "proj",
        site,
        chromium_path,
        {"flows/titled": TITLED, "flows/checkout": CHECKOUT},
        collection=True,
    )
    junit, report = tmp_path / "junit.xml", tmp_path / "report.json"
    done = unotest(project, "collection", "shop", "--reporter", f"list,junit={junit},json={report}")
    assert done.code == 1, done

    cases = {c.get("classname"): c for c in ET.parse(junit).getroot().iter("testcase")}
    assert list(cases) == ["flows/titled", "flows/checkout"]
    titled, checkout = cases["flows/titled"], cases["flows/checkout"]
    assert titled.find("failure") is None
    outline = titled.findtext("system-out") or ""
    assert re.search(
        r"\nsteps:\n  ✓ Open the shop \(\d+ ms\)\n    ✓ Look \(\d+ ms\)\n  ✓ Sign in \(\d+ ms\)$",
        outline,
    ), outline

    soft = place(CHECKOUT, 'expect_equal("a", "b"')
    hard = place(CHECKOUT, 'expect_text(css("#status"), "Paid"')
    hard_message = 'expected <Locator css="#status"> to have text "Paid", received "Saving"'
    failure = checkout.find("failure")
    assert failure is not None and failure.get("type") == "AssertionError"
    text = failure.text or ""
    # The hard failure is the run's, where it happened, inside the steps it names; the
    # soft failure before it is listed with it.
    assert text.startswith(
        f"{hard_message}\n(1 soft assertion failed before it:\n"
        f'  {CHECKOUT_FILE}:{soft[0]}:{soft[1]}: AssertionError: expected "b", received "a")\n'
    ), text
    assert f"{CHECKOUT_FILE}:{hard[0]}:{hard[1]} card\n" in text
    assert "\nin step: Pay › Card details\n" in text
    outline = checkout.findtext("system-out") or ""
    assert re.search(
        rf"\nsteps:\n  ✗ Pay \(\d+ ms\): AssertionError: {re.escape(hard_message)}\n"
        rf"    ✗ Card details \(\d+ ms\): AssertionError: {re.escape(hard_message)}$",
        outline,
    ), outline

    ends = {e["data"]["name"]: e["data"] for e in json_report(report) if e["type"] == "test_end"}
    assert ends["flows/titled"]["status"] == "passed"
    assert shape(ends["flows/titled"]["steps"]) == [
        ("Open the shop", [("Look", [])]),
        ("Sign in", []),
    ]
    assert ends["flows/checkout"]["error_message"].startswith(
        f"{hard_message}\n(1 soft assertion failed before it:"
    )

    # The checkout's run: its soft failure had a bundle, then the run's own.
    run_dir = project / ends["flows/checkout"]["run_dir"]
    events = read_events(run_dir, finished=True)
    fails = [
        ((start["line"], start["col"]), end.get("soft"))
        for start, end in closed_steps(events)
        if end["kind"] == "step:fail"
    ]
    assert fails == [
        (soft, True),
        (hard, None),
        (place(CHECKOUT, 'step("Card details"'), None),
        (place(CHECKOUT, 'step("Pay"'), None),
    ]
    written = bundles(run_dir)
    assert [error_json(project, b)["line"] for b in written] == [soft[0], hard[0]]


# --- 3. the debugger pauses at a soft failure ------------------------------------------------


@pytest.fixture
def started(tmp_path: Path) -> Iterator[list[subprocess.Popen[bytes]]]:
    procs: list[subprocess.Popen[bytes]] = []
    yield procs
    for proc in procs:
        if proc.poll() is None:
            stop_tree(proc)


def test_the_debugger_pauses_at_soft_failures_retry_forgets_and_continue_keeps(
    tmp_path: Path, site: str, chromium_path: str, started: list[subprocess.Popen[bytes]]
) -> None:
    project = project_at(tmp_path / "proj", site, chromium_path, {"debug": DEBUG})
    out_path, err_path = tmp_path / "debug.out", tmp_path / "debug.err"
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        proc = subprocess.Popen(
            [*UNOTEST, "e2e", "debug", "--debug"],
            cwd=project,
            env=unotest_env(NO_COLOR="1"),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
        )
    started.append(proc)

    def said() -> str:
        return out_path.read_text(errors="replace") + err_path.read_text(errors="replace")

    run_dir = wait_for_run_dir(project, proc, 45, said)
    first = place(DEBUG, 'expect_text(css("#status")')
    second = place(DEBUG, "expect_equal(1, 2")

    index, paused = wait_for_event(run_dir, is_kind("paused", reason="failure"))
    assert (paused["line"], paused["col"]) == first
    # (the page's image after the failed step may come between: ours, additive)
    before = [e for e in read_events(run_dir)[:index] if e["kind"] != "page:image"][-1]
    assert before["kind"] == "step:fail" and before["soft"] is True
    # Fix the page where the run waits, then run the failed statement again.
    ident = append_command(run_dir, "eval", expr='click(css("#fix"))')
    wait_for_event(run_dir, answer_to(ident, "eval"), after=index)
    ident = append_command(run_dir, "retry")
    applied, answer = wait_for_event(run_dir, answer_to(ident, "retry"), after=index)
    assert answer["kind"] == "command:applied", answer

    index, paused = wait_for_event(run_dir, is_kind("paused", reason="failure"), after=applied)
    assert (paused["line"], paused["col"]) == second
    ident = append_command(run_dir, "continue")
    _, answer = wait_for_event(run_dir, answer_to(ident, "continue"), after=index)
    assert answer["kind"] == "command:applied", answer

    try:
        code = proc.wait(timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"the run did not end\n{said()}") from None
    output = said()
    assert code == 1, output
    assert "Traceback" not in output
    assert "\n@@ went on\n" in output
    # Only the soft failure kept is the run's; the retried one passed and is forgotten.
    assert (
        f"  {DEBUG_FILE}:{second[0]}:{second[1]}: AssertionError: 1 soft assertion failed:\n"
        f"  {DEBUG_FILE}:{second[0]}:{second[1]}: AssertionError: expected 2, received 1\n"
    ) in output, output
    assert f"{DEBUG_FILE}:{first[0]}:{first[1]}: AssertionError" not in output

    events = read_events(run_dir, finished=True)
    assert [(e["by"], e["cmd"]) for e in events if e["kind"] == "resumed"] == [
        ("continue", "retry"),
        ("continue", "continue"),
    ]
    runs_of_first = [
        (end["kind"], end.get("soft"))
        for start, end in closed_steps(events)
        if (start["line"], start["col"]) == first
    ]
    assert runs_of_first == [("step:fail", True), ("step:ok", None)]
    written = bundles(run_dir)
    assert [error_json(project, b)["line"] for b in written] == [second[0], second[0]]
    assert events[-1]["kind"] == "run:finished" and events[-1]["outcome"] == "failed"
