"""``storageState``: a project file (Playwright's storage state, as
``save_storage_state`` writes it) seeding every new browser context of a run.

End to end (real Chromium, ``unotest e2e``): the config's ``storageState`` signs a
scenario in (the server sees the HttpOnly session cookie a scenario saved earlier), and
a file that is not there is one sentence naming it and the config's place, exit 2,
before a browser starts. Without a browser: the path checked to stay inside the project
(absolute, ``..`` out, a symbolic link out), the file read when a context is made (its
sentences), a collection's keys over the config's key by key (a device's viewport and
user agent among them), a setup scenario without a storage state, a collection's
settings through a run order's JSON, and a context opened ahead matched on the file's
content.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from login_site import LoginSite, login_site
from sites import E2E, config_yaml, scenario_source, unotest_env, write_files, write_project

from runner.browser.lifecycle import context_options, options_key
from runner.errors import ConfigError
from runner.project.config import (
    CONFIG_FILE,
    CollectionUse,
    Config,
    Emulation,
    StorageState,
    load_config,
    with_collection,
)
from runner.project.emulation import (
    outside_project,
    read_storage_state,
    storage_secrets,
)
from runner.project.index import Project, ProjectIndex
from runner.workers.messages import run_order
from runner.workers.worker import run_config

UNOTEST = str(Path(sys.executable).with_name("unotest"))
STATE = "unotest/.auth/alice.json"
SIGN_IN = (
    '  goto("/login")\n'
    '  fill(label("User"), "alice")\n'
    '  click(role("button", "Sign in"))\n'
    '  expect_visible(role("heading", "Welcome alice"))\n'
    f'  save_storage_state("{STATE}")\n'
)
ACCOUNT = '  goto("/account?s=account")\n  expect_visible(role("heading", "Welcome alice"))\n'


@pytest.fixture
def site() -> Iterator[LoginSite]:
    with login_site() as served:
        yield served


def e2e(root: Path, name: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [UNOTEST, "e2e", name],
        cwd=root,
        env=unotest_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert "Traceback" not in done.stderr + done.stdout, done.stderr
    return done


def test_the_config_s_storage_state_signs_a_single_scenario_in(
    tmp_path: Path, site: LoginSite, chromium_path: str
) -> None:
    """``login`` saves the state (with a config that does not use it yet), then the
    config names the file and ``account`` starts signed in."""
    root = tmp_path / "proj"
    config = config_yaml(site.url, chromium=chromium_path)
    scenarios = {
        "login": scenario_source("login", SIGN_IN),
        "account": scenario_source("a", ACCOUNT),
    }
    write_project(root, config, scenarios)
    done = e2e(root, "login")
    assert done.returncode == 0, done.stdout + done.stderr
    write_files(root, {CONFIG_FILE: config + f"storageState: {STATE}\n"})
    done = e2e(root, "account")
    assert done.returncode == 0, done.stdout + done.stderr
    assert [v.signed_in for v in site.of("/account") if v.scenario == "account"] == [True]
    assert len(site.of("POST /login")) == 1
    # pytest --unotest seeds pytest-playwright's contexts from it too.
    plugin = subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "--unotest", "-p", "no:cacheprovider", "-q"),
            *("-p", "no:hypothesispytest", f"{E2E}/account.test.js"),
        ],
        cwd=root,
        env=unotest_env(),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert plugin.returncode == 0, plugin.stdout + plugin.stderr
    assert [v.signed_in for v in site.of("/account") if v.scenario == "account"] == [True, True]
    # A collection's setup scenario run alone starts without the state it writes, as in
    # its collection: a missing file does not stop it.
    (root / STATE).unlink()
    write_files(
        root, {f"{E2E}/_collections/all.yaml": "setup:\n  - login\nscenarios:\n  - account\n"}
    )
    done = e2e(root, "login")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (root / STATE).is_file() and len(site.of("POST /login")) == 2


def test_a_missing_storage_state_is_one_sentence_before_a_browser(
    tmp_path: Path, site: LoginSite, chromium_path: str
) -> None:
    root = tmp_path / "proj"
    config = config_yaml(site.url, chromium=chromium_path) + "storageState: unotest/.auth/no.json\n"
    write_project(root, config, {"account": scenario_source("a", ACCOUNT)})
    done = e2e(root, "account")
    assert done.returncode == 2, done.stdout + done.stderr
    line = 5  # baseURL, headless, executablePath, trace, storageState
    said = [text for text in done.stderr.splitlines() if "storage state" in text]
    assert said == [
        f"unotest: {CONFIG_FILE}:{line}:14: the storage state unotest/.auth/no.json does "
        'not exist: a scenario writes it with save_storage_state("unotest/.auth/no.json") '
        "before the scenarios that use it run (in a collection, list that scenario under "
        "'setup:')"
    ], done.stderr
    assert not site.visits


# --- the path ------------------------------------------------------------------------


def test_a_path_out_of_the_project_is_refused_at_its_place(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "proj"
    root.mkdir()
    (root / "out").symlink_to(outside)
    for value, why in [
        ("/etc/passwd", "/etc/passwd is an absolute path"),
        ("../x.json", "../x.json is outside"),
        ("out/state.json", "out/state.json is outside (a symbolic link leads out)"),
    ]:
        (root / CONFIG_FILE).write_text(f"baseURL: http://a.test\nstorageState: {value}\n")
        with pytest.raises(ConfigError) as info:
            load_config(root, {})
        assert str(info.value) == (
            f"{CONFIG_FILE}:2:14: 'storageState' must be a path inside the project, relative "
            f"to its root (such as unotest/.auth/user.json): {why}"
        )
    assert outside_project(root, "a/../b.json") is None
    assert outside_project(root, "unotest/.auth/user.json") is None


def test_the_file_is_read_when_a_context_is_made_in_one_sentence_each(tmp_path: Path) -> None:
    state = StorageState("s.json", at="c.yaml:3:14", written_by=("auth/login",))
    with pytest.raises(ConfigError) as info:
        read_storage_state(tmp_path, state)
    assert str(info.value) == (
        "c.yaml:3:14: the storage state s.json does not exist: the setup scenario "
        "'auth/login' should have written it with save_storage_state(\"s.json\")"
    )
    (tmp_path / "s.json").mkdir()
    with pytest.raises(ConfigError, match=r"names s\.json, a folder"):
        read_storage_state(tmp_path, state)
    (tmp_path / "s.json").rmdir()
    (tmp_path / "s.json").write_text("[1, 2]")
    with pytest.raises(ConfigError, match=r"s\.json is not a storage state"):
        read_storage_state(tmp_path, state)
    data = {
        "cookies": [{"name": "session", "value": "tok-123456"}],
        "origins": [{"origin": "x", "localStorage": [{"name": "a", "value": "true"}]}],
    }
    (tmp_path / "s.json").write_text(json.dumps(data))
    assert read_storage_state(tmp_path, state) == data
    assert storage_secrets(data) == ["tok-123456"]  # "true" is too short to mask


# --- a collection's keys over the config's -------------------------------------------


def use_of(root: Path, text: str) -> CollectionUse:
    """A collection file's settings, as the index reads them."""
    write_files(root, {f"{E2E}/_collections/c.yaml": text, f"{E2E}/a.test.js": ""})
    index = ProjectIndex.load(Project(root), check=False)
    problems = [d.message for d in index.errors if d.file.endswith("c.yaml")]
    assert not problems, problems
    use = index.collections["c"].use
    assert use is not None
    return use


def test_a_collection_s_keys_override_the_config_s_key_by_key(tmp_path: Path) -> None:
    (tmp_path / CONFIG_FILE).write_text(
        "locale: en-US\ncolorScheme: light\ntimezoneId: UTC\nstorageState: a.json\n"
    )
    config = load_config(tmp_path, {})
    use = use_of(
        tmp_path,
        "setup: [auth/login]\nlocale: de-DE\nviewport: {width: 600}\nscenarios: [a]\n",
    )
    merged = with_collection(config, use)
    assert merged.emulation == Emulation(locale="de-DE", color_scheme="light", timezone_id="UTC")
    assert merged.viewport == (600, 720)
    assert merged.storage_state == StorageState("a.json")
    # The config's file, in a collection with setup scenarios, names them when missing.
    assert merged.storage_state is not None
    assert merged.storage_state.written_by == ("auth/login",)
    assert with_collection(config, use, setup=True).storage_state is None


def test_a_collection_s_device_brings_its_viewport_and_user_agent(tmp_path: Path) -> None:
    (tmp_path / CONFIG_FILE).write_text(
        "viewport: {width: 1000, height: 700}\nuserAgent: config-agent\n"
    )
    config = load_config(tmp_path, {})
    devices = {"Phone": {"viewport": {"width": 390, "height": 664}, "user_agent": "phone"}}
    phone = with_collection(config, use_of(tmp_path, "device: Phone\nscenarios: [a]\n"))
    options = context_options(phone, lambda: devices)
    assert options["viewport"] == {"width": 390, "height": 664}
    assert options["user_agent"] == "phone"
    wide = with_collection(
        config, use_of(tmp_path, "device: Phone\nviewport: {width: 800}\nscenarios: [a]\n")
    )
    assert context_options(wide, lambda: devices)["viewport"] == {"width": 800, "height": 720}
    assert phone.emulation.device_at == f"{E2E}/_collections/c.yaml:1:8"


def test_a_run_order_carries_the_collection_s_settings(tmp_path: Path) -> None:
    """The JSON a worker receives gives back the same settings, checked again; a setup
    scenario's order runs without the storage state."""
    use = use_of(tmp_path, "storageState: s.json\ncolorScheme: dark\nscenarios: [a]\n")
    assert CollectionUse.from_json(json.loads(json.dumps(use.to_json())), tmp_path) == use
    config = Config(root=tmp_path)
    order = json.loads(json.dumps(run_order("a", "r1", use=use.to_json())))
    ran = run_config(config, order, tmp_path)
    assert ran.storage_state == StorageState("s.json")
    assert ran.emulation.color_scheme == "dark"
    setup = json.loads(json.dumps(run_order("a", "r1", use=use.to_json(), setup=True)))
    assert run_config(config, setup, tmp_path).storage_state is None
    bad = {**use.to_json(), "values": {"colorScheme": "purple"}}
    with pytest.raises(ConfigError, match=r"c\.yaml:2:13: 'colorScheme' must be one of"):
        run_config(config, json.loads(json.dumps(run_order("a", "r1", use=bad))), tmp_path)


def test_a_context_opened_ahead_matches_only_the_same_file_content(tmp_path: Path) -> None:
    config = Config(root=tmp_path, storage_state=StorageState("s.json"))
    (tmp_path / "s.json").write_text('{"cookies": [], "origins": []}')
    before = options_key(context_options(config, dict))
    (tmp_path / "s.json").write_text('{"cookies": [{"name": "s", "value": "v"}], "origins": []}')
    after = options_key(context_options(config, dict))
    assert before != after
    assert after == options_key(context_options(config, dict))
    assert os.path.exists(tmp_path / "s.json")
