"""``unotest.config.yaml`` (runner.md §7): defaults, every key, every bad value.

A bad value is one sentence naming the file, the key path and what was expected; an
unknown key is a warning with a did-you-mean; the file is plain YAML, so anchors,
aliases and tags are refused before anything is built.
"""

import re
import textwrap
from pathlib import Path

import pytest

from runner.errors import ConfigError
from runner.project.config import Config, Timeouts, WebServerConfig, load_config
from unotest.exit_codes import exit_code_for

CONFIG = "unotest.config.yaml"


def write(root: Path, text: str) -> Path:
    path = root / CONFIG
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def load(root: Path, text: str | None = None, **environ: str) -> Config:
    if text is not None:
        write(root, text)
    return load_config(root, environ)


def error_of(root: Path, text: str) -> str:
    with pytest.raises(ConfigError) as info:
        load(root, text)
    message = str(info.value)
    assert message.startswith(CONFIG), message
    assert "\n" not in message
    return message


def unplaced(message: str) -> str:
    """The message without its ``:line:col`` (the tests of positions are separate)."""
    return re.sub(rf"^{re.escape(CONFIG)}:\d+:\d+: ", f"{CONFIG}: ", message)


# --- defaults and valid values ------------------------------------------------------


def test_no_file_gives_the_defaults(tmp_path: Path) -> None:
    config = load_config(tmp_path, {})
    assert config == Config(root=tmp_path)
    assert config.runner is None
    assert config.base_url is None
    assert config.browser == "chromium"
    assert config.headless is True
    assert config.viewport == (1280, 720)
    assert config.timeouts == Timeouts(action=5000, expect=5000, navigation=30000, scenario=300000)
    assert config.trace == "on-failure"
    assert config.executable_path is None
    assert config.ws_endpoint is None
    assert config.web_server is None
    assert config.warnings == ()


@pytest.mark.parametrize("text", ["", "# only a comment\n", "---\n", "~\n"])
def test_an_empty_file_gives_the_defaults(tmp_path: Path, text: str) -> None:
    assert load(tmp_path, text) == Config(root=tmp_path)


def test_the_root_is_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    config = load_config(Path("."), {})
    assert config.root == tmp_path
    assert config.root.is_absolute()


def test_every_key_valid(tmp_path: Path) -> None:
    browser = tmp_path / "bin" / "chrome"
    browser.parent.mkdir()
    browser.write_text("#!/bin/sh\n", encoding="utf-8")
    (tmp_path / "site").mkdir()
    config = load(
        tmp_path,
        f"""\
        runner: local
        baseURL: http://localhost:3000
        browser: firefox
        headless: false
        viewport: {{width: 800, height: 600}}
        timeout:
          action: 1000
          expect: 2000
          navigation: 3000
          scenario: 4000
        trace: "on"
        executablePath: {browser}
        wsEndpoint: ws://127.0.0.1:9222/abc
        webServer:
          command: npm run serve
          url: http://localhost:3000/health
          timeout: 90000
          reuseExistingServer: false
          cwd: site
        """,
    )
    assert config == Config(
        root=tmp_path,
        runner="local",
        base_url="http://localhost:3000",
        browser="firefox",
        headless=False,
        headed_by="config",
        viewport=(800, 600),
        timeouts=Timeouts(action=1000, expect=2000, navigation=3000, scenario=4000),
        trace="on",
        executable_path=str(browser),
        ws_endpoint="ws://127.0.0.1:9222/abc",
        web_server=WebServerConfig(
            command="npm run serve",
            url="http://localhost:3000/health",
            timeout=90000,
            reuse_existing_server=False,
            cwd=tmp_path / "site",
        ),
    )


@pytest.mark.parametrize("browser", ["chromium", "firefox", "webkit"])
def test_every_browser(tmp_path: Path, browser: str) -> None:
    assert load(tmp_path, f"browser: {browser}\n").browser == browser


@pytest.mark.parametrize(
    ("written", "trace"),
    [
        ('"on-failure"', "on-failure"),
        ("on-failure", "on-failure"),
        ('"on"', "on"),
        ('"off"', "off"),
        # YAML 1.1 reads unquoted on/off as booleans; runner.md §5 writes `trace: off`.
        ("on", "on"),
        ("off", "off"),
    ],
)
def test_trace_values(tmp_path: Path, written: str, trace: str) -> None:
    assert load(tmp_path, f"trace: {written}\n").trace == trace


def test_page_images(tmp_path: Path) -> None:
    default = load(tmp_path, "trace: on\n").page_images
    assert (default.steps, default.width) == ("on-debug", 800)
    given = load(tmp_path, "pageImages:\n  steps: on\n  width: 640\n").page_images
    assert (given.steps, given.width) == ("on", 640)
    assert load(tmp_path, "pageImages: {steps: off}\n").page_images.steps == "off"
    warned = load(tmp_path, "pageImages: {size: 3}\n").warnings
    assert any("unknown key 'pageImages.size'" in w for w in warned), warned


def test_https_and_wss_urls(tmp_path: Path) -> None:
    config = load(tmp_path, "baseURL: https://shop.example\nwsEndpoint: wss://grid.example/pw\n")
    assert config.base_url == "https://shop.example"
    assert config.ws_endpoint == "wss://grid.example/pw"


def test_partial_sections_keep_the_other_defaults(tmp_path: Path) -> None:
    config = load(tmp_path, "timeout: {expect: 700}\nviewport: {width: 1000}\n")
    assert config.timeouts == Timeouts(expect=700)
    assert config.viewport == (1000, 720)


def test_web_server_defaults(tmp_path: Path) -> None:
    config = load(tmp_path, "webServer: {command: make serve, url: 'http://localhost:8000'}\n")
    assert config.web_server == WebServerConfig(
        command="make serve", url="http://localhost:8000", cwd=tmp_path
    )
    assert config.web_server.timeout == 60000
    assert config.web_server.reuse_existing_server is True
    assert config.web_server.cwd.is_absolute()


def test_relative_web_server_cwd_is_resolved_against_the_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "apps" / "shop").mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    config = load(
        tmp_path,
        "webServer:\n  command: serve\n  url: http://localhost:1\n  cwd: apps/./shop\n",
    )
    assert config.web_server is not None
    assert config.web_server.cwd == tmp_path / "apps" / "shop"


def test_absolute_web_server_cwd_is_kept(tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    config = load(
        tmp_path / "other",
        f"webServer:\n  command: serve\n  url: http://localhost:1\n  cwd: {tmp_path}\n",
    )
    assert config.web_server is not None
    assert config.web_server.cwd == tmp_path


def test_relative_executable_path_is_resolved_against_the_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "browsers").mkdir()
    (tmp_path / "browsers" / "chrome").write_text("", encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    config = load(tmp_path, "executablePath: browsers/chrome\n")
    assert config.executable_path == str(tmp_path / "browsers" / "chrome")


def test_empty_values_of_optional_keys_mean_not_set(tmp_path: Path) -> None:
    config = load(tmp_path, "runner:\nbaseURL:\nexecutablePath:\nwsEndpoint:\nwebServer:\n")
    assert config == Config(root=tmp_path)


def test_whole_float_milliseconds_are_accepted(tmp_path: Path) -> None:
    assert load(tmp_path, "timeout: {action: 1500.0}\n").timeouts.action == 1500


# --- UNOTEST_HEADED -----------------------------------------------------------------


def test_unotest_headed_1_forces_headed(tmp_path: Path) -> None:
    assert load(tmp_path, UNOTEST_HEADED="1").headless is False
    assert load(tmp_path, "headless: true\n", UNOTEST_HEADED="1").headless is False


@pytest.mark.parametrize("value", ["0", ""])
def test_unotest_headed_0_follows_the_config(tmp_path: Path, value: str) -> None:
    assert load(tmp_path, UNOTEST_HEADED=value).headless is True
    assert load(tmp_path, "headless: false\n", UNOTEST_HEADED=value).headless is False


def test_unset_unotest_headed_follows_the_config(tmp_path: Path) -> None:
    assert load(tmp_path, "headless: false\n").headless is False
    assert load(tmp_path, "headless: true\n").headless is True


def test_a_strange_unotest_headed_warns(tmp_path: Path) -> None:
    config = load(tmp_path, UNOTEST_HEADED="maybe")
    assert config.headless is True
    assert any("UNOTEST_HEADED" in w for w in config.warnings)


def test_the_process_environment_is_not_read_implicitly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UNOTEST_HEADED", "1")
    assert load_config(tmp_path, {}).headless is True


# --- bad values: one sentence naming the key ----------------------------------------


BAD_VALUES = [
    ("runner: 5", "'runner' must be a non-empty string, got 5"),
    ("runner: ''", "'runner' must be a non-empty string"),
    ("baseURL: localhost:3000", "'baseURL' must be an http:// or https:// URL"),
    ("baseURL: ftp://host", "'baseURL' must be an http:// or https:// URL"),
    ("baseURL: http://", "'baseURL' must be an http:// or https:// URL"),
    ("baseURL: 'http://host:99999'", "'baseURL' must be an http:// or https:// URL"),
    ("baseURL: [http://a]", "'baseURL' must be an http:// or https:// URL, got a list"),
    ("browser: chrome", "'browser' must be one of chromium, firefox, webkit, got \"chrome\""),
    ("browser:", "'browser' must be one of chromium, firefox, webkit"),
    ("headless: 'false'", "'headless' must be true or false, got \"false\""),
    ("headless: 1", "'headless' must be true or false, got 1"),
    ("viewport: 1280x720", "'viewport' must be a mapping with 'width' and 'height'"),
    ("viewport: {width: 0, height: 600}", "'viewport.width' must be a positive whole number"),
    ("viewport: {width: 800, height: -1}", "'viewport.height' must be a positive whole number"),
    ("viewport: {width: 800.5}", "'viewport.width' must be a positive whole number"),
    ("viewport: {width: true}", "'viewport.width' must be a positive whole number"),
    ("timeout: 5000", "'timeout' must be a mapping with 'action'"),
    (
        "timeout: {action: fast}",
        "'timeout.action' must be a positive number of milliseconds, got \"fast\"",
    ),
    ("timeout: {expect: 0}", "'timeout.expect' must be a positive number of milliseconds, got 0"),
    ("timeout: {navigation: -5}", "'timeout.navigation' must be a positive number"),
    ("timeout: {scenario: .inf}", "'timeout.scenario' must be a positive number"),
    ("timeout: {scenario: .nan}", "'timeout.scenario' must be a positive number"),
    ("timeout: {action: true}", "'timeout.action' must be a positive number"),
    ("timeout: {action: 99999999999}", "'timeout.action' must be a positive number"),
    ("timeout: {action: }", "'timeout.action' must be a positive number"),
    ("trace: always", "'trace' must be one of on-failure, on, off, got \"always\""),
    ("trace: 1", "'trace' must be one of on-failure, on, off, got 1"),
    ("executablePath: 7", "'executablePath' must be a non-empty string, got 7"),
    ("executablePath: no/such/chrome", "'executablePath' must name an existing"),
    ("executablePath: .", "'executablePath' must name a browser executable"),
    ("wsEndpoint: http://127.0.0.1:9222", "'wsEndpoint' must be a ws:// or wss:// URL"),
    ("webServer: npm start", "'webServer' must be a mapping with 'command' and 'url'"),
    ("webServer: {url: 'http://localhost:1'}", "'webServer.command' is missing"),
    ("webServer: {command: serve}", "'webServer.url' is missing"),
    (
        "webServer: {command: '  ', url: 'http://localhost:1'}",
        "'webServer.command' must be a non-empty string",
    ),
    (
        "webServer: {command: [npm, start], url: 'http://localhost:1'}",
        "'webServer.command' must be a non-empty string, got a list",
    ),
    ("webServer: {command: serve, url: localhost}", "'webServer.url' must be an http://"),
    (
        "webServer: {command: serve, url: 'http://a', timeout: soon}",
        "'webServer.timeout' must be a positive number of milliseconds, got \"soon\"",
    ),
    (
        "webServer: {command: serve, url: 'http://a', reuseExistingServer: 'yes'}",
        "'webServer.reuseExistingServer' must be true or false, got \"yes\"",
    ),
    (
        "webServer: {command: serve, url: 'http://a', cwd: 3}",
        "'webServer.cwd' must be a non-empty string, got 3",
    ),
    (
        "webServer: {command: serve, url: 'http://a', cwd: missing}",
        "'webServer.cwd' must name an existing directory",
    ),
    ("pageImages: {steps: always}", "'pageImages.steps' must be one of on-debug, on, off"),
    ("pageImages: {width: 100}", "'pageImages.width' must be a whole number of pixels"),
]


@pytest.mark.parametrize(("text", "expected"), BAD_VALUES, ids=[t for t, _ in BAD_VALUES])
def test_bad_values_name_the_key(tmp_path: Path, text: str, expected: str) -> None:
    message = unplaced(error_of(tmp_path, text + "\n"))
    assert message.startswith(f"{CONFIG}: {expected}"), message


def test_the_example_message_exactly(tmp_path: Path) -> None:
    assert error_of(tmp_path, "timeout:\n  action: fast\n") == (
        f"{CONFIG}:2:10: 'timeout.action' must be a positive number of milliseconds, got \"fast\""
    )


def test_a_misspelt_choice_suggests_the_right_one(tmp_path: Path) -> None:
    assert "did you mean 'firefox'" in error_of(tmp_path, "browser: firefx\n")
    assert "did you mean 'chromium'" in error_of(tmp_path, "browser: Chromium\n")


def test_a_config_error_is_a_usage_exit(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load(tmp_path, "browser: edge\n")
    assert exit_code_for(info.value) == 2


# --- unknown keys -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "key", "suggestion"),
    [
        ("baseUrl: http://a\n", "baseURL", "baseURL"),
        ("headles: false\n", "headles", "headless"),
        ("timeout: {acton: 5}\n", "timeout.acton", "action"),
        ("viewport: {widht: 5}\n", "viewport.widht", "width"),
        (
            "webServer: {command: a, url: 'http://a', reuseExistingServers: true}\n",
            "webServer.reuseExistingServers",
            "reuseExistingServer",
        ),
        ("executable_path: /x\n", "executable_path", "executablePath"),
    ],
)
def test_unknown_keys_warn_with_did_you_mean(
    tmp_path: Path, text: str, key: str, suggestion: str
) -> None:
    config = load(tmp_path, text)
    [warning] = config.warnings
    assert warning.startswith(CONFIG)
    if key != "baseURL":
        assert f"'{key}'" in warning
    assert f"did you mean '{suggestion}'?" in warning


def test_an_unknown_key_without_a_near_name_still_warns(tmp_path: Path) -> None:
    config = load(tmp_path, "colour: blue\nbrowser: webkit\n")
    assert config.browser == "webkit"
    [warning] = config.warnings
    assert "'colour'" in warning
    assert "did you mean" not in warning


def test_unknown_keys_do_not_change_the_rest(tmp_path: Path) -> None:
    config = load(tmp_path, "baseUrl: http://a\n")
    assert config.base_url is None
    assert len(config.warnings) == 1


def test_a_non_string_key_warns(tmp_path: Path) -> None:
    config = load(tmp_path, "1: x\n")
    assert len(config.warnings) == 1


def test_a_repeated_key_warns(tmp_path: Path) -> None:
    config = load(tmp_path, "browser: firefox\nbrowser: webkit\n")
    assert config.browser == "webkit"
    assert any("repeated" in w and "'browser'" in w for w in config.warnings)


# --- the file itself ----------------------------------------------------------------


def test_invalid_yaml_gives_line_and_column(tmp_path: Path) -> None:
    message = error_of(tmp_path, "browser: chromium\nviewport: {width: 1\n")
    assert re.match(rf"{re.escape(CONFIG)}:\d+:\d+: invalid YAML: ", message), message


def test_a_tab_indentation_error_is_reported(tmp_path: Path) -> None:
    message = error_of(tmp_path, "timeout:\n\taction: 5\n")
    assert re.match(rf"{re.escape(CONFIG)}:2:\d+: invalid YAML", message), message


@pytest.mark.parametrize("text", ["- a\n- b\n", "just a string\n", "42\n"])
def test_the_top_level_must_be_a_mapping(tmp_path: Path, text: str) -> None:
    assert "must be a mapping" in error_of(tmp_path, text)


def test_a_yaml_bomb_is_refused_before_it_expands(tmp_path: Path) -> None:
    bomb = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i, name in enumerate("bcdefghi"):
        prev = "abcdefghi"[i]
        bomb.append(f"{name}: &{name} [{', '.join(['*' + prev] * 9)}]")
    message = error_of(tmp_path, "\n".join(bomb) + "\n")
    assert "anchors" in message
    assert message.startswith(f"{CONFIG}:1:")


def test_an_alias_is_refused(tmp_path: Path) -> None:
    message = error_of(tmp_path, "browser: *x\n")
    assert message.startswith(f"{CONFIG}:1:9: YAML aliases ('*x') are not allowed"), message


@pytest.mark.parametrize(
    "tag",
    [
        "!!python/object/apply:os.system",
        "!!python/object/new:os.system",
        "!!python/name:os.system",
    ],
)
def test_python_tags_are_never_executed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tag: str
) -> None:
    monkeypatch.chdir(tmp_path)
    marker = tmp_path / "X"
    message = error_of(tmp_path, f"runner: {tag} ['touch {marker}']\n")
    assert "tag" in message
    assert not marker.exists()
    assert not (tmp_path / "X").exists()


def test_other_tags_are_refused(tmp_path: Path) -> None:
    assert "tag '!!str'" in error_of(tmp_path, "runner: !!str local\n")
    assert "tag '!custom'" in error_of(tmp_path, "viewport: !custom {width: 1}\n")


def test_deep_nesting_is_refused(tmp_path: Path) -> None:
    message = error_of(tmp_path, "runner: " + "[" * 5000 + "]" * 5000 + "\n")
    assert "nested too deeply" in message


def test_a_file_that_is_not_utf8_is_an_error(tmp_path: Path) -> None:
    (tmp_path / CONFIG).write_bytes(b"runner: caf\xe9\n")
    with pytest.raises(ConfigError, match=r"not UTF-8"):
        load_config(tmp_path, {})


def test_a_utf8_bom_is_accepted(tmp_path: Path) -> None:
    (tmp_path / CONFIG).write_bytes(b"\xef\xbb\xbfbrowser: webkit\n")
    assert load_config(tmp_path, {}).browser == "webkit"


def test_a_directory_named_like_the_config_is_an_error(tmp_path: Path) -> None:
    (tmp_path / CONFIG).mkdir()
    with pytest.raises(ConfigError, match=r"not a regular file"):
        load_config(tmp_path, {})


def test_an_unreadable_file_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "browser: webkit\n")

    def denied(self: Path) -> bytes:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_bytes", denied)
    with pytest.raises(ConfigError, match=r"cannot read the file: Permission denied"):
        load_config(tmp_path, {})


def test_a_huge_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / CONFIG).write_text("# " + "x" * (2 * 1024 * 1024) + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bytes"):
        load_config(tmp_path, {})


def test_a_config_is_frozen(tmp_path: Path) -> None:
    config = load_config(tmp_path, {})
    with pytest.raises(AttributeError):
        config.browser = "webkit"  # type: ignore[misc]


# --- where a message points ------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "place"),
    [
        # The value that is wrong, wherever it is written.
        ('baseURL: http://x\n\ntimeout:\n  action: 5000\n  expect: "5s"\n', "5:10"),
        ("viewport: {width: 800, height: -1}\n", "1:31"),
        ("webServer:\n  command: serve\n  url: http://x\n  cwd: 5\n", "4:7"),
        # A setting that is missing: the section that lacks it.
        ("baseURL: http://x\nwebServer:\n  command: serve\n", "2:0"),
        # The YAML's own errors, 0-based columns as everywhere else.
        ("timeout:\n  action: [5000\n", "3:0"),
    ],
)
def test_a_bad_value_is_refused_at_its_line_and_column(
    tmp_path: Path, text: str, place: str
) -> None:
    assert error_of(tmp_path, text).startswith(f"{CONFIG}:{place}: "), text


def test_an_unknown_key_is_warned_of_at_its_line(tmp_path: Path) -> None:
    config = load(
        tmp_path, "baseURL: http://x\n\nwebServer:\n  command: a\n  url: http://x\n  stdot: 1\n"
    )
    assert config.warnings[0].startswith(f"{CONFIG}:6: unknown key 'webServer.stdot'")


@pytest.mark.parametrize(("written", "meant"), [("true", "false"), ("false", "true")])
def test_headed_is_answered_with_the_headless_that_means_it(
    tmp_path: Path, written: str, meant: str
) -> None:
    config = load(tmp_path, f"headed: {written}\n")
    assert config.warnings == (
        f"{CONFIG}:1: unknown key 'headed' is ignored (did you mean 'headless: {meant}'?)",
    )


# --- a configuration file that is never read ------------------------------------------


@pytest.mark.parametrize(
    ("name", "warning"),
    [
        (
            "unotest.config.yml",
            "unotest.config.yml is ignored: the configuration file is unotest.config.yaml "
            "(rename it)",
        ),
        (
            "unotest/unotest.config.yaml",
            "unotest/unotest.config.yaml is ignored: the configuration file is "
            "unotest.config.yaml in the project folder (next to unotest/) (move it to the "
            "project folder)",
        ),
        (
            "unotest/unotest.config.yml",
            "unotest/unotest.config.yml is ignored: the configuration file is "
            "unotest.config.yaml in the project folder (next to unotest/) (move it to the "
            "project folder, renamed)",
        ),
    ],
)
def test_a_misnamed_config_file_is_warned_of(tmp_path: Path, name: str, warning: str) -> None:
    """It was silently ignored: the defaults ran, and the run failed on "no baseURL"."""
    (tmp_path / "unotest").mkdir()
    (tmp_path / name).write_text("baseURL: http://localhost:3000\n")
    config = load_config(tmp_path, {})
    assert config.base_url is None
    assert config.warnings == (warning,)


def test_a_yml_next_to_the_real_config_is_to_be_merged(tmp_path: Path) -> None:
    (tmp_path / "unotest.config.yml").write_text("trace: on\n")
    config = load(tmp_path, "baseURL: http://localhost:3000\n")
    assert config.base_url == "http://localhost:3000"
    assert config.warnings == (
        "unotest.config.yml is ignored: the configuration file is unotest.config.yaml "
        "(merge it into unotest.config.yaml and delete it)",
    )


# --- UNOTEST_BASE_URL -----------------------------------------------------------------


def test_unotest_base_url_replaces_the_base_url_for_one_run(tmp_path: Path) -> None:
    write(tmp_path, "baseURL: http://localhost:3000\n")
    assert load(tmp_path, UNOTEST_BASE_URL=" http://127.0.0.1:8080/app ").base_url == (
        "http://127.0.0.1:8080/app"
    )
    assert load(tmp_path, UNOTEST_BASE_URL="").base_url == "http://localhost:3000"
    assert load(tmp_path).base_url == "http://localhost:3000"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (
            "localhost:8080",
            "UNOTEST_BASE_URL must be an http:// or https:// URL such as "
            'http://localhost:3000, got "localhost:8080"',
        ),
        ("ws://x", "UNOTEST_BASE_URL must be an http:// or https:// URL such as"),
        ("http://x:99999", "UNOTEST_BASE_URL must be an http:// or https:// URL, got"),
    ],
)
def test_a_bad_unotest_base_url_is_a_usage_error_naming_the_variable(
    tmp_path: Path, value: str, expected: str
) -> None:
    with pytest.raises(ConfigError) as info:
        load(tmp_path, "baseURL: http://localhost:3000\n", UNOTEST_BASE_URL=value)
    assert str(info.value).startswith(expected), str(info.value)
    assert CONFIG not in str(info.value)
    assert exit_code_for(info.value) == 2


# --- where headed comes from ----------------------------------------------------------


def test_headed_by_names_what_made_the_run_headed(tmp_path: Path) -> None:
    assert load(tmp_path).headed_by is None
    assert load(tmp_path, "headless: false\n").headed_by == "config"
    assert load(tmp_path, "headless: true\n", UNOTEST_HEADED="1").headed_by == "UNOTEST_HEADED"
    # A collection's workers are told so when the user gave --headed.
    by_flag = load(tmp_path, UNOTEST_HEADED="1", UNOTEST_HEADED_BY="--headed")
    assert (by_flag.headless, by_flag.headed_by) == (False, "--headed")
    assert load(tmp_path, "headless: true\n", UNOTEST_HEADED="0").headed_by is None


# --- webServer.env --------------------------------------------------------------------


def test_web_server_env_is_text_in_the_file_order(tmp_path: Path) -> None:
    config = load(
        tmp_path,
        """\
        webServer:
          command: npm start
          url: http://localhost:3000
          env:
            PORT: 3000
            NODE_ENV: test
            DEBUG: false
            RATIO: 1.5
            EMPTY: ''
        """,
    )
    assert config.web_server is not None
    assert config.web_server.env == (
        ("PORT", "3000"),
        ("NODE_ENV", "test"),
        ("DEBUG", "false"),
        ("RATIO", "1.5"),
        ("EMPTY", ""),
    )
    no_env = load(tmp_path, "webServer: {command: a, url: 'http://a'}\n")
    assert no_env.web_server is not None and no_env.web_server.env == ()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "  env:\n    PORT: [1, 2]\n",
            f"{CONFIG}:5:10: 'webServer.env.PORT' must be a string (or a number or "
            "true/false), got a list",
        ),
        (
            "  env:\n    TOKEN:\n",
            f"{CONFIG}:5:10: 'webServer.env.TOKEN' must be a string (or a number or "
            "true/false), got nothing (an empty value)",
        ),
        (
            "  env:\n    SUB: {a: 1}\n",
            f"{CONFIG}:5:9: 'webServer.env.SUB' must be a string (or a number or "
            "true/false), got a mapping",
        ),
        (
            "  env: PORT=3000\n",
            f"{CONFIG}:4:7: 'webServer.env' must be a mapping of variable names to values "
            '(NAME: value), got "PORT=3000"',
        ),
        (
            "  env:\n    1PORT: 3000\n",
            f"{CONFIG}:5:11: 'webServer.env' names must be variable names (letters, digits "
            'and _, not starting with a digit), got "1PORT"',
        ),
    ],
)
def test_a_bad_web_server_env_names_the_key_at_its_place(
    tmp_path: Path, text: str, expected: str
) -> None:
    head = "webServer:\n  command: serve\n  url: http://localhost:1\n"
    assert error_of(tmp_path, head + text) == expected
