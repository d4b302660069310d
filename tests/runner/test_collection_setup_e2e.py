"""A collection's ``setup:`` scenarios, its ``storageState`` and its own emulation keys,
end to end: real Chromium through ``unotest collection``, as CI runs it.

The site (``login_site``) sets an HttpOnly session cookie after a form post and records
whether each later request carried it, so a test sees what the server saw: the setup
scenario signs in once and saves the storage state, and every other scenario, on two
workers (and on one with contexts opened ahead), starts signed in. A setup scenario
that fails (every attempt: retries apply to it) skips the rest, and the console, the
JSON report and JUnit say so; a setup that does not write the file the collection's
``storageState`` names fails the others with a sentence naming the setup. Per-collection
``locale``/``colorScheme``/``viewport`` reach the page over the config's, and bad
collection keys are one sentence each at the collection file's line and column.
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from login_site import LoginSite, login_site
from sites import E2E, config_yaml, scenario_source, unotest_env, write_files, write_project

UNOTEST = str(Path(sys.executable).with_name("unotest"))
RUN_TIMEOUT_S = 240
STATE = "unotest/.auth/alice.json"
COLLECTION = f"{E2E}/_collections"

SIGN_IN = (
    '  goto("/login")\n'
    '  fill(label("User"), "alice")\n'
    '  click(role("button", "Sign in"))\n'
    '  expect_visible(role("heading", "Welcome alice"))\n'
)
SAVE = f'  save_storage_state("{STATE}")\n'


def account(name: str) -> str:
    """A scenario body that must find the user signed in (after a short wait, so that
    two workers run side by side)."""
    return (
        f'  goto("/account?s={name}")\n'
        "  wait(300)\n"
        '  expect_visible(role("heading", "Welcome alice"))\n'
    )


@dataclass
class Done:
    code: int
    out: str
    err: str


class Project:
    def __init__(self, root: Path, site: LoginSite, chromium: str, extra: str = "") -> None:
        self.root = root
        timeout = {"action": 3000, "expect": 1500, "navigation": 40000, "scenario": 90000}
        config = config_yaml(site.url, timeout=timeout, chromium=chromium, extra=extra)
        write_project(root, config)

    def scenario(self, name: str, body: str) -> None:
        slug = name.replace("/", "-")
        source = scenario_source(slug, body, title=name, fn="test_" + re.sub(r"\W", "_", slug))
        write_files(self.root, {f"{E2E}/{name}.test.js": source})

    def collection(self, name: str, text: str) -> None:
        write_files(self.root, {f"{COLLECTION}/{name}.yaml": text})

    def run(self, *args: str, env: dict[str, str] | None = None) -> Done:
        done = subprocess.run(
            [UNOTEST, *args],
            cwd=self.root,
            env=unotest_env(**(env or {})),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
        )
        assert "Traceback" not in done.stderr + done.stdout, done.stderr + done.stdout
        return Done(done.returncode, done.stdout, done.stderr)


@pytest.fixture
def site() -> Iterator[LoginSite]:
    with login_site() as served:
        yield served


@pytest.fixture
def project(tmp_path: Path, site: LoginSite, chromium_path: str) -> Project:
    return Project(tmp_path / "proj", site, chromium_path)


def report(path: Path) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return data


def ends(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e["data"] for e in events if e["type"] == "test_end"]


SIGNED_IN = """\
setup:
  - auth/login
storageState: unotest/.auth/alice.json
scenarios:
  - account/a
  - account/b
  - account/c
"""


def signed_in_project(project: Project) -> None:
    project.scenario("auth/login", SIGN_IN + SAVE)
    project.scenario("account/a", account("account/a"))
    project.scenario("account/b", account("account/b"))
    # What the page's cookie holds is a secret in every run seeded from the file.
    project.scenario("account/c", account("account/c") + '  log("token " + cookies()[0].value)\n')
    project.collection("signed", SIGNED_IN)


@pytest.mark.parametrize(("workers", "ahead"), [("2", "0"), ("1", "1")])
def test_the_setup_signs_in_once_and_every_other_scenario_starts_signed_in(
    project: Project, site: LoginSite, tmp_path: Path, workers: str, ahead: str
) -> None:
    """Two workers, or one that opens its next context ahead (while the setup runs,
    before the file exists: that context must not be the next scenario's)."""
    signed_in_project(project)
    json_path = tmp_path / "report.json"
    done = project.run(
        "collection",
        "signed",
        "--workers",
        workers,
        "--reporter",
        f"list,json={json_path}",
        env={"UNOTEST_CONTEXTS_AHEAD": ahead},
    )
    assert done.code == 0, done.out + done.err
    assert "4 passed" in done.out
    assert "1 setup first" in done.out.splitlines()[0]
    # The setup ran first, alone: it ended before any other scenario started.
    lines = done.out.splitlines()
    setup_end = next(i for i, line in enumerate(lines) if "✓" in line and "auth/login" in line)
    first_other = next(i for i, line in enumerate(lines) if "account/" in line)
    assert setup_end < first_other, done.out
    # The server signed in once, and saw the session on every other scenario's visit.
    assert len(site.of("POST /login")) == 1
    visits = [v for v in site.of("/account") if v.scenario.startswith("account/")]
    assert sorted(v.scenario for v in visits) == ["account/a", "account/b", "account/c"]
    assert all(v.signed_in for v in visits), visits
    state = project.root / STATE
    assert stat.S_IMODE(state.stat().st_mode) == 0o600
    token = json.loads(state.read_text())["cookies"][0]["value"]
    events = report(json_path)
    finished = ends(events)
    listed = ["auth/login", "account/a", "account/b", "account/c"]
    assert next(e["data"] for e in events if e["type"] == "run_start")["scenarios"] == listed
    assert finished[0]["name"] == "auth/login"  # the events come as scenarios end
    assert sorted(e["name"] for e in finished) == sorted(listed)
    assert {e["status"] for e in finished} == {"passed"}
    if workers == "2":
        assert {e["worker"] for e in finished if e["name"] != "auth/login"} == {0, 1}
    outputs = [e["data"] for e in events if e["type"] == "output"]
    assert any("token ********" in json.dumps(o) for o in outputs), outputs
    assert token not in json_path.read_text() + done.out + done.err


FAILING_SETUP = """\
setup: [auth/login]
storageState: unotest/.auth/alice.json
scenarios: [account/a, account/b]
"""


def test_a_failed_setup_skips_the_rest_and_every_report_says_so(
    project: Project, site: LoginSite, tmp_path: Path
) -> None:
    """Retried as any scenario (``--retries 1``: it signs in twice), then the others
    never run: skipped, naming the setup, in the console, the JSON report and JUnit;
    the collection fails (exit 1)."""
    wrong = SIGN_IN.replace("Welcome alice", "Welcome bob")
    project.scenario("auth/login", wrong + SAVE)
    project.scenario("account/a", account("account/a"))
    project.scenario("account/b", account("account/b"))
    project.collection("failing", FAILING_SETUP)
    json_path, junit_path = tmp_path / "report.json", tmp_path / "junit.xml"
    done = project.run(
        "collection",
        "failing",
        "--workers",
        "2",
        "--retries",
        "1",
        "--reporter",
        f"list,json={json_path},junit={junit_path}",
    )
    assert done.code == 1, done.out + done.err
    assert len(site.of("POST /login")) == 2  # the setup's two attempts
    assert not [v for v in site.of("/account") if v.scenario.startswith("account/")]
    note = "skipped: setup auth/login failed"
    for name in ("account/a", "account/b"):
        assert re.search(rf"○ .*{re.escape(name)}  {note}", done.out), done.out
    assert "1 failed, 2 skipped" in done.out
    finished = {e["name"]: e for e in ends(report(json_path))}
    assert finished["auth/login"]["status"] == "failed"
    assert finished["auth/login"]["attempts"] == 2
    for name in ("account/a", "account/b"):
        assert finished[name]["status"] == "skipped"
        assert finished[name]["error_message"] == note
    cases = {case.get("name"): case for case in ET.parse(junit_path).iter("testcase")}
    skipped = [case.find("skipped") for title, case in cases.items() if "account/" in str(title)]
    assert len(skipped) == 2
    assert all(s is not None and s.get("message") == note for s in skipped)


def test_a_setup_that_does_not_save_the_state_fails_the_others_naming_it(
    project: Project, site: LoginSite, tmp_path: Path
) -> None:
    project.scenario("auth/login", SIGN_IN)  # signs in, saves nothing
    project.scenario("account/a", account("account/a"))
    project.collection("unsaved", FAILING_SETUP)
    json_path = tmp_path / "report.json"
    done = project.run("collection", "unsaved", "--reporter", f"list,json={json_path}")
    assert done.code == 1, done.out + done.err
    finished = {e["name"]: e for e in ends(report(json_path))}
    assert finished["auth/login"]["status"] == "passed"
    message = finished["account/a"]["error_message"]
    assert message == (
        f"{COLLECTION}/unsaved.yaml:2:14: the storage state {STATE} does not exist: the "
        f"setup scenario 'auth/login' should have written it with "
        f'save_storage_state("{STATE}")'
    )
    assert not [v for v in site.of("/account") if v.scenario == "account/a"]


PREFS = (
    '  goto("/prefs?s={name}")\n'
    '  expect_equal(evaluate("navigator.language"), "{locale}")\n'
    "  expect_equal(evaluate(\"matchMedia('(prefers-color-scheme: dark)').matches\"), {dark})\n"
    '  expect_equal(evaluate("innerWidth"), {width})\n'
)


def test_a_collection_s_emulation_keys_reach_its_pages_over_the_config_s(
    tmp_path: Path, site: LoginSite, chromium_path: str
) -> None:
    """The config says en-US and light; the collection says de-DE, dark and 600 px
    wide for its scenarios (and its contexts opened ahead); ``unotest e2e`` keeps the
    config's."""
    project = Project(
        tmp_path / "proj", site, chromium_path, extra="locale: en-US\ncolorScheme: light\n"
    )
    for name in ("prefs/one", "prefs/two"):
        body = PREFS.format(name=name, locale="de-DE", dark="true", width=600)
        project.scenario(name, body)
    plain = PREFS.format(name="prefs/plain", locale="en-US", dark="false", width=1280)
    project.scenario("prefs/plain", plain)
    project.collection(
        "german",
        "locale: de-DE\ncolorScheme: dark\nviewport: {width: 600, height: 500}\n"
        "scenarios: [prefs/one, prefs/two]\n",
    )
    done = project.run(
        "collection", "german", "--workers", "1", env={"UNOTEST_CONTEXTS_AHEAD": "1"}
    )
    assert done.code == 0, done.out + done.err
    alone = project.run("e2e", "prefs/plain")
    assert alone.code == 0, alone.out + alone.err
    languages = {v.scenario: v.language for v in site.of("/prefs")}
    assert languages["prefs/one"].startswith("de-DE")
    assert languages["prefs/two"].startswith("de-DE")
    assert languages["prefs/plain"].startswith("en-US")


BAD_COLLECTIONS = [
    (
        "locale: english\nscenarios: [a]\n",
        "1:8: 'locale' must be a BCP 47 language tag such as en-US, de-DE or fr, got \"english\"",
    ),
    (
        "scenarios: [a]\nviewport: {width: 0}\n",
        "2:18: 'viewport.width' must be a positive whole number of pixels, got 0",
    ),
    (
        "scenarios: [a]\ncolorScheme: purple\n",
        "2:13: 'colorScheme' must be one of light, dark, no-preference, got \"purple\"",
    ),
    (
        "storageState: /etc/passwd\nscenarios: [a]\n",
        "1:14: 'storageState' must be a path inside the project, relative to its root "
        "(such as unotest/.auth/user.json): /etc/passwd is an absolute path",
    ),
    (
        "scenarios: [a]\nstorageState: ../../state.json\n",
        "2:14: 'storageState' must be a path inside the project, relative to its root "
        "(such as unotest/.auth/user.json): ../../state.json is outside",
    ),
    (
        "scenarios: [a]\nsetup: auth/login\n",
        "2:0: 'setup' must be a list of scenario names, not a string",
    ),
    (
        "scenarios: [a]\nsetup: [auth/login, 3]\n",
        "2:20: 'setup' item 2 must be a scenario name (a string), not a number",
    ),
    (
        "scenarios: [a]\ngeolocation: {latitude: 91, longitude: 0}\n",
        "2:24: 'geolocation.latitude' must be a number of degrees from -90 to 90, got 91",
    ),
]
"""A bad collection file, and the one sentence it gets (``line:col: message``)."""


def test_each_bad_collection_key_is_one_sentence_at_its_place(tmp_path: Path) -> None:
    """Said before any browser: ``unotest check`` lists each at its place, and
    ``unotest collection`` exits 2 with the one sentence (two of them run: each run
    reads its file through the same checks)."""
    root = tmp_path / "proj"
    write_project(
        root,
        config_yaml("http://127.0.0.1:9"),
        {"a": scenario_source("a", '  goto("/")\n')},
        collections={f"bad{i}": text for i, (text, _) in enumerate(BAD_COLLECTIONS)},
    )
    checked = subprocess.run(
        [UNOTEST, "check", "--json"], cwd=root, env=unotest_env(), capture_output=True, text=True
    )
    problems = json.loads(checked.stdout)["errors"]
    wanted = []
    for i, (_, message) in enumerate(BAD_COLLECTIONS):
        line, col = (int(n) for n in message.split(":")[:2])
        wanted.append((f"{COLLECTION}/bad{i}.yaml", line, col))
    assert sorted((p["path"], p["line"], p["col"]) for p in problems) == sorted(wanted)
    for i in (0, len(BAD_COLLECTIONS) - 1):
        done = subprocess.run(
            [UNOTEST, "collection", f"bad{i}"],
            cwd=root,
            env=unotest_env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 2, done.stdout + done.stderr
        said = [line for line in done.stderr.splitlines() if line.strip()]
        message = BAD_COLLECTIONS[i][1]
        assert said == [f"unotest: {COLLECTION}/bad{i}.yaml:{message}"], done.stderr


def test_a_setup_scenario_that_does_not_exist_fails_and_skips_the_rest(
    project: Project, site: LoginSite, tmp_path: Path
) -> None:
    """Nothing starts: the missing setup fails, the others are skipped naming it."""
    project.scenario("account/a", account("account/a"))
    project.collection("nosetup", "setup: [auth/logn]\nscenarios: [account/a]\n")
    json_path = tmp_path / "report.json"
    done = project.run("collection", "nosetup", "--reporter", f"list,json={json_path}")
    assert done.code == 1, done.out + done.err
    assert "setup scenario 'auth/logn' does not exist" in done.err
    finished = {e["name"]: e for e in ends(report(json_path))}
    assert finished["auth/logn"]["status"] == "failed"
    assert finished["account/a"]["status"] == "skipped"
    assert finished["account/a"]["error_message"] == "skipped: setup auth/logn failed"
    assert not site.visits


def test_grep_keeps_the_setup_scenarios(project: Project, site: LoginSite) -> None:
    """``--grep`` chooses among the other scenarios; the setup runs all the same."""
    signed_in_project(project)
    done = project.run("collection", "signed", "--grep", "account/b")
    assert done.code == 0, done.out + done.err
    assert "2 passed" in done.out
    assert len(site.of("POST /login")) == 1
    assert [v.scenario for v in site.of("/account") if v.scenario.startswith("account/")] == [
        "account/b"
    ]
    assert os.path.exists(project.root / STATE)
