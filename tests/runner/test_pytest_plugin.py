"""The pytest plugin as a pytest-playwright user meets it: ``pytester`` sessions in a
subprocess, real Chromium, pages served on 127.0.0.1 by this test.

Each test writes a project (``unotest.config.yaml`` + scenarios, sometimes ordinary
pytest tests and a ``conftest.py``) into ``pytester.path`` and runs ``pytest`` there.
Collection-only runs cover what costs no browser (on/off, ``-k``, collections,
``--browser`` parametrization, broken scenarios); the rest run scenarios for real.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import sites
from events import read_events
from net import free_port
from procs import descendants
from sites import collection_yaml, scenario_source

RUN_TIMEOUT_S = 180
# Hypothesis's pytest plugin imports all of Hypothesis at the end of every session (seconds
# on a busy machine); no test here uses it, and these tests start a pytest a dozen times.
NO_HYPOTHESIS = ("-p", "no:hypothesispytest")

SITE_INDEX = """\
<!doctype html>
<title>Plugin site</title>
<h1 id="title">Hello plugin</h1>
<p id="mode"></p>
<p id="width"></p>
<label>Name <input id="name"></label>
<script>
  document.getElementById("mode").textContent =
    /HeadlessChrome/.test(navigator.userAgent) ? "headless" : "headed";
  document.getElementById("width").textContent = String(window.innerWidth);
</script>
"""


def scenario(name: str, body: str) -> str:
    """A scenario file named ``name``: header (a unique id, description, colour) and one
    test function whose body is ``body``."""
    ident = re.sub(r"[^a-z0-9]+", "-", name.lower())
    fn = re.sub(r"[^a-z0-9]+", "_", name.lower())
    return scenario_source(ident, body, title=name, color="#2563eb", fn=f"test_{fn}")


PASSING = '  goto("/index.html")\n  expect_text(css("#title"), "Hello plugin")\n'
FAILING = (
    '  goto("/index.html")\n  let who = "plugin"\n  expect_text(css("#title"), "Goodbye " + who)\n'
)
FAILING_LINE = 7  # the expect_text line of FAILING (header is 4 lines)
SECRET = "tok-hunter2-SECRET-value"
LEAKY = '  let token = env("API_TOKEN")\n  expect_equal(token, "nope")\n'


def write_project(
    root: Path,
    scenarios: dict[str, str],
    *,
    base_url: str | None,
    extra_config: str = "",
    collections: dict[str, list[str]] | None = None,
) -> None:
    # expect: FAILING (and the headless run of the headed test) wait all of it, kept short.
    config = "browser: chromium\ntimeout:\n  action: 3000\n  expect: 700\n"
    if base_url is not None:
        config = f"baseURL: {base_url}\n" + config
    sites.write_project(
        root,
        config + extra_config,
        {name: scenario(name, body) for name, body in scenarios.items()},
        collections={name: collection_yaml(names) for name, names in (collections or {}).items()},
    )


@pytest.fixture
def site(tmp_path: Path, static_site: str) -> str:
    (tmp_path / "index.html").write_text(SITE_INDEX)
    return static_site


RunPytest = Callable[..., pytest.RunResult]


@pytest.fixture
def run_pytest(pytester: pytest.Pytester) -> RunPytest:
    """``pytest ARGS`` in a subprocess (the plugin patches Playwright's mappings and
    owns a sync Playwright: nothing of that may leak into this test session)."""

    def run(*args: str) -> pytest.RunResult:
        return pytester.runpytest_subprocess(
            "-p", "no:cacheprovider", *NO_HYPOTHESIS, *args, timeout=RUN_TIMEOUT_S
        )

    return run


def collected(result: pytest.RunResult) -> list[str]:
    """Node ids printed by ``--collect-only -q``."""
    return [line for line in result.outlines if "::" in line and not line.startswith(" ")]


def run_dirs(root: Path) -> list[Path]:
    runs = root / "unotest" / ".runs"
    return sorted(p for p in runs.iterdir() if p.is_dir()) if runs.is_dir() else []


def finished_outcome(run_dir: Path) -> str | None:
    for event in read_events(run_dir, finished=True):
        if event["kind"] == "run:finished":
            return str(event["outcome"])
    return None


# --- collection (no browser) ---------------------------------------------------------


def test_scenarios_are_collected_only_when_asked(
    pytester: pytest.Pytester, run_pytest: RunPytest
) -> None:
    write_project(
        pytester.path,
        {"passing": PASSING, "shop/cart": PASSING, "shop/known-bug": FAILING},
        base_url="http://127.0.0.1:9",
        collections={"smoke": ["passing", "shop/cart", "gone"]},
    )
    pytester.makepyfile(test_plain="def test_plain():\n    pass\n")

    off = run_pytest("--collect-only", "-q")
    assert collected(off) == ["test_plain.py::test_plain"]

    on = run_pytest("--unotest", "--collect-only", "-q")
    assert sorted(collected(on)) == [
        "test_plain.py::test_plain",
        "unotest/e2e/passing.test.js::passing[chromium]",
        "unotest/e2e/shop/cart.test.js::shop/cart[chromium]",
        "unotest/e2e/shop/known-bug.test.js::shop/known-bug[chromium]",
    ]

    # -k matches the scenario name, as it matches a test function's.
    picked = run_pytest("--unotest", "--collect-only", "-q", "-k", "shop and not bug")
    assert collected(picked) == ["unotest/e2e/shop/cart.test.js::shop/cart[chromium]"]

    # A collection: exactly its scenarios; a missing one is named, not fatal.
    smoke = run_pytest("--unotest-collection", "smoke", "--collect-only", "-q")
    assert sorted(collected(smoke)) == [
        "test_plain.py::test_plain",
        "unotest/e2e/passing.test.js::passing[chromium]",
        "unotest/e2e/shop/cart.test.js::shop/cart[chromium]",
    ]
    assert "scenario 'gone' does not exist; skipped" in smoke.stderr.str()

    # Two browsers: two items per scenario, like any pytest-playwright test.
    both = run_pytest(
        "--unotest",
        "--collect-only",
        "-q",
        "-k",
        "passing",
        "--browser",
        "chromium",
        "--browser",
        "firefox",
    )
    assert collected(both) == [
        "unotest/e2e/passing.test.js::passing[chromium]",
        "unotest/e2e/passing.test.js::passing[firefox]",
    ]

    # The project asks for another browser than pytest runs: said once, not ignored.
    (pytester.path / "unotest.config.yaml").write_text(
        "baseURL: http://127.0.0.1:9\nbrowser: firefox\n"
    )
    other = run_pytest("--unotest", "--collect-only", "-q", "-k", "passing")
    assert "asks for browser 'firefox', but pytest runs chromium" in other.stderr.str()
    assert collected(other) == ["unotest/e2e/passing.test.js::passing[chromium]"]

    # The ini switch does what --unotest does.
    pytester.makeini("[pytest]\nunotest = true\n")
    ini = run_pytest("--collect-only", "-q")
    assert len(collected(ini)) == 4


def test_broken_input_is_one_clear_error(
    pytester: pytest.Pytester, run_pytest: RunPytest, tmp_path_factory: pytest.TempPathFactory
) -> None:
    write_project(
        pytester.path,
        {"passing": PASSING, "broken": "  let x = (1 +\n"},
        base_url="http://127.0.0.1:9",
    )
    result = run_pytest("--unotest", "-q")
    # Like a test module with a SyntaxError: an error while collecting, nothing run.
    assert result.ret == pytest.ExitCode.INTERRUPTED
    out = result.stdout.str()
    assert re.search(r"unotest/e2e/broken\.test\.js:\d+:\d+: ", out), out
    assert "scenario 'broken' cannot run" in out
    assert "Traceback" not in out

    # A helper that does not parse stops every scenario, as unotest e2e refuses to
    # start: it was ignored (or its callers failed with "'x' is not a function").
    (pytester.path / "unotest/e2e/broken.test.js").unlink()
    helper = pytester.path / "unotest/e2e/_helpers/oops.js"
    helper.parent.mkdir(parents=True, exist_ok=True)
    helper.write_text("function oops( {\n")
    result = run_pytest("--unotest", "-q")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    out = result.stdout.str()
    assert re.search(r"unotest/e2e/_helpers/oops\.js:1:\d+: SyntaxError", out), out
    assert "scenario 'passing' cannot run" in out
    helper.unlink()

    # Without pytest-playwright's fixtures: one sentence, not a fixture recursion.
    alone = run_pytest("--unotest", "-q", "-p", "no:playwright")
    assert alone.ret == pytest.ExitCode.USAGE_ERROR
    assert "unotest: scenarios run on pytest-playwright's page, and it is not loaded" in (
        alone.stderr.str()
    )

    unknown = run_pytest("--unotest-collection", "nope", "-q")
    assert unknown.ret == pytest.ExitCode.USAGE_ERROR
    assert "--unotest-collection nope: no such collection" in unknown.stderr.str()
    assert "Traceback" not in unknown.stderr.str()

    # A monorepo: pytest runs at its root, the project is a folder below; the path
    # given leads to it (it said "no unotest project found").
    # A webServer that cannot start concerns only the tests that need the site.
    (pytester.path / "unotest.config.yaml").write_text(
        "baseURL: http://127.0.0.1:9\nwebServer: {command: 'exit 3', url: 'http://127.0.0.1:9/'}\n"
    )
    pytester.makepyfile(test_unit="def test_u():\n    assert 1\n")
    unit = run_pytest("--unotest", "-q", "test_unit.py")
    assert unit.ret == pytest.ExitCode.OK, unit.stdout.str() + unit.stderr.str()
    needs_site = run_pytest("--unotest", "-q", "-k", "passing")
    assert needs_site.ret == pytest.ExitCode.USAGE_ERROR
    assert "unotest: webServer: " in needs_site.stderr.str()

    monorepo = tmp_path_factory.mktemp("monorepo")
    (monorepo / "pytest.ini").write_text("[pytest]\n")
    write_project(monorepo / "app", {"inner": PASSING}, base_url="http://127.0.0.1:9")
    mono = subprocess.run(
        [sys.executable, "-m", "pytest", "--unotest", "--collect-only", "-q",
         "-p", "no:cacheprovider", *NO_HYPOTHESIS, "app/unotest/e2e/inner.test.js"],
        cwd=monorepo, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=False,
    )  # fmt: skip
    assert mono.returncode == pytest.ExitCode.OK, mono.stderr
    assert "app/unotest/e2e/inner.test.js::inner[chromium]" in mono.stdout

    elsewhere = tmp_path_factory.mktemp("not-a-project")
    outside = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--unotest",
            "-q",
            "-p",
            "no:cacheprovider",
            *NO_HYPOTHESIS,
            "--rootdir",
            str(elsewhere),
        ],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )
    assert outside.returncode == pytest.ExitCode.USAGE_ERROR
    assert "no unotest project found" in outside.stderr
    # pytest has no --root (the CLI's advice): its own --rootdir is what works.
    assert "--rootdir DIR" in outside.stderr and "--root DIR" not in outside.stderr
    assert "Traceback" not in outside.stderr


# --- running scenarios ---------------------------------------------------------------


def test_passing_and_failing_scenarios_beside_an_ordinary_test(
    pytester: pytest.Pytester,
    run_pytest: RunPytest,
    site: str,
    protocol_validate: Callable[[str, object], None],
) -> None:
    write_project(
        pytester.path,
        {"passing": PASSING, "failing": FAILING, "leaky": LEAKY},
        base_url=site,
    )
    (pytester.path / "unotest" / ".env").write_text(f"API_TOKEN={SECRET}\n")
    # An ordinary pytest-playwright test gets the project's baseURL too.
    pytester.makepyfile(
        test_page=(
            "from playwright.sync_api import expect\n\n"
            "def test_title(page):\n"
            '    page.goto("/index.html")\n'
            '    expect(page.locator("#title")).to_have_text("Hello plugin")\n'
        )
    )
    result = run_pytest(
        "--unotest",
        "-v",
        "--junitxml=junit.xml",
        "-o",
        "junit_family=xunit1",  # with file and line attributes
        "--tracing",
        "retain-on-failure",
        "--screenshot",
        "only-on-failure",
    )
    result.assert_outcomes(passed=2, failed=2)
    out = result.stdout.str()

    # A secret in a failure is masked in what pytest prints and in the JUnit file.
    assert SECRET not in out + result.stderr.str()
    assert SECRET not in (pytester.path / "junit.xml").read_text()
    assert re.search(r'^E   AssertionError: expected .*"\*{8}"', out, re.M), out

    # The failure reads like a Python test's: source, > marker, E line, file:line:col.
    assert f'> {FAILING_LINE} |   expect_text(css("#title"), "Goodbye " + who)' in out, out
    assert re.search(
        r'^E   AssertionError: expected .*"Goodbye plugin".*received "Hello plugin"', out, re.M
    ), out
    assert f"unotest/e2e/failing.test.js:{FAILING_LINE}:2: AssertionError" in out
    assert "Traceback" not in out and "dsl/interpreter.py" not in out
    bundle = re.search(r"failure bundle: (\S+)", out)
    assert bundle is not None and (pytester.path / bundle.group(1)).is_dir()
    assert re.search(
        r"FAILED unotest/e2e/failing\.test\.js::failing\[chromium\] - AssertionError", out
    )

    # JUnit names each scenario; the failure message is the error line.
    cases = {
        case.get("name"): case for case in ET.parse(pytester.path / "junit.xml").iter("testcase")
    }
    assert set(cases) == {
        "passing[chromium]",
        "failing[chromium]",
        "leaky[chromium]",
        "test_title[chromium]",
    }
    failure = cases["failing[chromium]"].find("failure")
    assert failure is not None
    assert failure.get("message", "").startswith("AssertionError: expected")
    assert cases["passing[chromium]"].find("failure") is None
    # Its line is the test function's (0-based, as for a Python test's def), not 0.
    assert cases["failing[chromium]"].get("line") == "3"
    assert cases["failing[chromium]"].get("file") == "unotest/e2e/failing.test.js"

    # The run directories are written as for `unotest e2e`, for the viewer.
    runs = run_dirs(pytester.path)
    assert sorted(finished_outcome(r) for r in runs) == ["completed", "failed", "failed"]
    for run in runs:
        protocol_validate("RunManifest", json.loads((run / "manifest.json").read_text()))
        for event in read_events(run, finished=True):
            protocol_validate("RunArtifact", event)
        protocol_validate("RuntimeStateFile", json.loads((run / "runtime.json").read_text()))

    # pytest-playwright's --tracing applies to the scenario's context like any test's.
    results = pytester.path / "test-results"
    assert len(list(results.glob("*failing*/trace.zip"))) == 1
    assert len(list(results.glob("*failing*/test-failed-*.png"))) == 1
    assert not list(results.glob("*passing*"))


HELPER = (
    "function check_title(word) {\n"
    '  let who = "plugin"\n'
    '  expect_text(css("#title"), word + " " + who)\n'
    "}\n"
)
HELPER_LINE = 3  # its expect_text line
CALLS_HELPER = '  goto("/index.html")\n  check_title("Goodbye")\n'
CALLS_HELPER_LINE = 6  # the check_title line (header is 4 lines)


def failures_block(result: pytest.RunResult) -> list[str]:
    """What pytest prints between ``= FAILURES =`` and the short test summary."""
    lines = result.outlines
    first = next(i for i, line in enumerate(lines) if " FAILURES " in line)
    last = next(i for i, line in enumerate(lines) if " short test summary info " in line)
    return lines[first + 1 : last]


def test_tb_option_shapes_a_failing_scenario_like_a_python_test(
    pytester: pytest.Pytester, run_pytest: RunPytest, site: str
) -> None:
    write_project(pytester.path, {"failing": CALLS_HELPER}, base_url=site)
    helper = pytester.path / "unotest/e2e/_helpers/titles.js"
    helper.parent.mkdir(parents=True, exist_ok=True)
    helper.write_text(HELPER)
    error = (
        'AssertionError: expected <Locator css="#title"> to have text "Goodbye plugin", '
        'received "Hello plugin"'
    )
    # The captured step lines are pytest's to show (or not), whatever --tb says.
    blocks = {
        style: failures_block(run_pytest("--unotest", "--show-capture=no", *args))
        for style, args in {"long": (), "line": ("--tb=line",), "short": ("--tb=short",)}.items()
    }

    # The default: the whole block, source window with > and caret, the chain, bundle.
    long = "\n".join(blocks["long"])
    assert f'> {HELPER_LINE} |   expect_text(css("#title"), word + " " + who)' in long, long
    assert "E   at unotest/e2e/failing.test.js:6:2 → " in long
    assert "failure bundle: " in long
    assert f"unotest/e2e/_helpers/titles.js:{HELPER_LINE}:2: AssertionError" in long

    # --tb=line: one line, where the error is (rootdir-relative, 1-based) and what.
    assert blocks["line"] == [f"unotest/e2e/_helpers/titles.js:{HELPER_LINE}: {error}"]

    # --tb=short: each place of the chain and its one source line, then the error.
    assert "scenario failing[chromium]" in blocks["short"][0]
    assert blocks["short"][1:] == [
        f"unotest/e2e/failing.test.js:{CALLS_HELPER_LINE}:2: in test_failing",
        '    check_title("Goodbye")',
        f"unotest/e2e/_helpers/titles.js:{HELPER_LINE}:2: AssertionError",
        '    expect_text(css("#title"), word + " " + who)',
        f"E   {error}",
    ], "\n".join(blocks["short"])


def test_base_url_option_wins_over_the_config(
    pytester: pytest.Pytester, run_pytest: RunPytest, site: str
) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    write_project(pytester.path, {"passing": PASSING}, base_url=dead)
    run_pytest("--unotest").assert_outcomes(failed=1)  # the config's baseURL: nothing there
    run_pytest("--unotest", "--base-url", site).assert_outcomes(passed=1)


def test_two_xdist_workers_share_one_web_server(
    pytester: pytest.Pytester, run_pytest: RunPytest, tmp_path: Path
) -> None:
    (tmp_path / "index.html").write_text(SITE_INDEX)
    port = free_port()
    starts = pytester.path / "starts.log"
    web_server = (
        "webServer:\n"
        f"  command: echo started >> {starts} && exec python3 -m http.server {port}"
        f" --bind 127.0.0.1 --directory {tmp_path}\n"
        f"  url: http://127.0.0.1:{port}/index.html\n"
        "  timeout: 20000\n"
        "  reuseExistingServer: false\n"
    )
    names = {f"s{i}": PASSING for i in range(4)}
    write_project(
        pytester.path, names, base_url=f"http://127.0.0.1:{port}", extra_config=web_server
    )
    result = run_pytest("--unotest", "-n", "2", "-v")
    result.assert_outcomes(passed=4)
    # pytest-playwright's `base_url` deprecation is not the user's to act on.
    assert "PytestRemovedIn10Warning" not in result.stdout.str()
    assert len(set(re.findall(r"\[gw(\d)\]", result.stdout.str()))) == 2  # both workers ran
    # Started once by the controller (reuseExistingServer: false would fail a second).
    assert starts.read_text().splitlines() == ["started"]
    assert _port_is_free(port)  # and stopped at the end
    assert len(run_dirs(pytester.path)) == 4


def test_headed_slowmo_and_context_args_reach_the_scenario_page(
    pytester: pytest.Pytester,
    run_pytest: RunPytest,
    site: str,
    monkeypatch: pytest.MonkeyPatch,
    xvfb_display: str,
) -> None:
    monkeypatch.setenv("DISPLAY", xvfb_display)
    write_project(
        pytester.path,
        {
            "modes": '  goto("/index.html")\n  expect_text(css("#mode"), "headed")\n'
            '  expect_text(css("#width"), "400")\n'
        },
        base_url=site,
    )
    # A user's conftest overrides, built on what the plugins provide.
    pytester.makeconftest(
        "import pytest\n\n"
        "@pytest.fixture(scope='session')\n"
        "def browser_context_args(browser_context_args):\n"
        "    return {**browser_context_args, 'viewport': {'width': 400, 'height': 300}}\n\n"
        "@pytest.fixture(autouse=True)\n"
        "def show_launch_args(browser_type_launch_args):\n"
        "    print('LAUNCH', sorted(browser_type_launch_args.items()))\n"
    )
    result = run_pytest("--unotest", "--headed", "--browser", "chromium", "--slowmo", "5", "-s")
    result.assert_outcomes(passed=1)
    launch = next(line for line in result.outlines if "LAUNCH" in line)
    assert "('headless', False)" in launch and "('slow_mo', 5" in launch, launch
    headless = run_pytest("--unotest")  # without --headed the page sees a headless browser
    headless.assert_outcomes(failed=1)
    assert 'received "headless"' in headless.stdout.str()


def test_ctrl_c_stops_the_scenario_and_finishes_its_run_directory(
    pytester: pytest.Pytester, site: str
) -> None:
    write_project(
        pytester.path,
        {"slow": '  goto("/index.html")\n  log("READY")\n  wait(60000)\n'},
        base_url=site,
    )
    # pytest as a terminal runs it, whatever this suite was started from: a shell that
    # runs a command in the background (``&``, no job control) starts it with SIGINT
    # ignored, every process below inherits that, and Python then installs no
    # KeyboardInterrupt for it (the Ctrl-C below would never arrive).
    main = (
        "import signal, sys, pytest; "
        "signal.signal(signal.SIGINT, signal.default_int_handler); "
        "sys.exit(pytest.main(sys.argv[1:]))"
    )
    process = subprocess.Popen(
        [
            *(sys.executable, "-c", main, "--unotest", "-s"),
            *(*NO_HYPOTHESIS, "-p", "no:cacheprovider"),
        ],
        cwd=pytester.path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert process.stdout is not None
        seen: list[str] = []
        for line in process.stdout:
            seen.append(line)
            if "READY" in line:
                break
        else:
            pytest.fail("the scenario never logged READY:\n" + "".join(seen))
        children = descendants(process.pid)
        process.send_signal(signal.SIGINT)
        rest, _ = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    output = "".join(seen) + rest
    assert process.returncode == pytest.ExitCode.INTERRUPTED, output
    assert "KeyboardInterrupt" in output
    [run] = run_dirs(pytester.path)
    assert finished_outcome(run) == "aborted"
    json.loads((run / "runtime.json").read_text())
    _wait_gone(children)


# --- helpers -------------------------------------------------------------------------


def _port_is_free(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


def _wait_gone(processes: dict[int, int], limit_s: float = 35.0) -> None:
    from procs import alive

    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        left = {pid for pid, start in processes.items() if alive(pid, start)}
        if not left:
            return
        time.sleep(0.2)
    pytest.fail(f"processes left behind: {sorted(left)}")


@pytest.fixture(scope="module")
def _xvfb_server() -> Iterator[str | None]:
    binary = shutil.which("Xvfb")
    if binary is None:
        yield None
        return
    read, write = os.pipe()
    server = subprocess.Popen(
        [binary, "-displayfd", str(write), "-screen", "0", "1280x720x24", "-nolisten", "tcp"],
        pass_fds=(write,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write)
    with os.fdopen(read) as pipe:
        number = pipe.readline().strip()
    try:
        yield f":{number}" if number else None
    finally:
        server.terminate()
        server.wait(timeout=10)


@pytest.fixture
def xvfb_display(_xvfb_server: str | None) -> str:
    """A virtual screen for headed Chromium (.ci/setup installs Xvfb where it can)."""
    if _xvfb_server is None:
        pytest.skip("no Xvfb on this machine: headed browsing needs a screen")
    return _xvfb_server


PAY_CASES = """\
// id-pay
// Pays with a card
// #2563eb
const CASES = [{name: "visa", heading: "Hello plugin"}, {name: "amex", heading: "Nope"}]
function test_pay(card) {
  goto("/index.html")
  expect_text(css("#title"), card.heading)
}
"""


def test_each_case_of_a_parameterised_scenario_is_an_item(
    pytester: pytest.Pytester, run_pytest: RunPytest, site: str
) -> None:
    write_project(pytester.path, {}, base_url=site, collections={"visa": ["pay[visa]"]})
    (pytester.path / "unotest" / "e2e" / "pay.test.js").write_text(PAY_CASES)
    only = run_pytest("--unotest-collection", "visa", "--collect-only", "-q")
    assert [line.split("::")[-1] for line in collected(only)] == ["pay[visa][chromium]"]
    result = run_pytest("--unotest", "-rA")
    result.assert_outcomes(passed=1, failed=1)
    ends = [
        line.split(" ")[:2] for line in result.outlines if line.startswith(("PASSED", "FAILED"))
    ]
    assert [(verdict, node.split("::")[-1]) for verdict, node in ends] == [
        ("PASSED", "pay[visa][chromium]"),
        ("FAILED", "pay[amex][chromium]"),
    ], result.outlines
