"""The config's context options (``device``, ``locale``, ``timezoneId``, ``geolocation``,
``permissions``, ``colorScheme``, ``userAgent``, ``extraHTTPHeaders``): each valid form,
each bad value refused in one sentence at its ``file:line:col``, and the keyword options
a browser context is made with (runner.browser.lifecycle.context_options), a device's
among them, without a browser: the registry is a stand-in here."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from runner.browser.lifecycle import context_options
from runner.errors import ConfigError
from runner.project.config import CONFIG_FILE, Config, Emulation, Geolocation, load_config

PHONE: dict[str, object] = {
    "user_agent": "Mozilla/5.0 (Phone)",
    "viewport": {"width": 390, "height": 664},
    "screen": {"width": 390, "height": 844},
    "device_scale_factor": 3,
    "is_mobile": True,
    "has_touch": True,
    "default_browser_type": "webkit",
}
DEVICES: dict[str, dict[str, object]] = {
    "iPhone 13": PHONE,
    "Desktop Chrome": {"user_agent": "Desktop"},
}


def load(root: Path, text: str) -> Config:
    (root / CONFIG_FILE).write_text(textwrap.dedent(text), encoding="utf-8")
    return load_config(root, {})


def no_devices() -> dict[str, dict[str, object]]:
    raise AssertionError("the registry is asked only when a device is set")


def test_no_key_emulates_nothing(tmp_path: Path) -> None:
    config = load(tmp_path, "baseURL: http://localhost:3000\n")
    assert config.emulation == Emulation()
    assert context_options(config, no_devices) == {
        "base_url": "http://localhost:3000",
        "viewport": {"width": 1280, "height": 720},
    }


def test_every_key_reaches_the_context_options(tmp_path: Path) -> None:
    config = load(
        tmp_path,
        """\
        locale: de-DE
        timezoneId: Europe/Berlin
        geolocation: {latitude: 52.52, longitude: 13.405, accuracy: 10}
        permissions: [geolocation, notifications, geolocation]
        colorScheme: dark
        userAgent: unotest-agent/1.0 (tests)
        extraHTTPHeaders:
          X-Run: emulation
          X-Count: 42
        """,
    )
    assert config.emulation == Emulation(
        locale="de-DE",
        timezone_id="Europe/Berlin",
        geolocation=Geolocation(52.52, 13.405, 10.0),
        permissions=("geolocation", "notifications"),
        color_scheme="dark",
        user_agent="unotest-agent/1.0 (tests)",
        extra_http_headers=(("X-Run", "emulation"), ("X-Count", "42")),
    )
    assert context_options(config, no_devices) == {
        "base_url": None,
        "viewport": {"width": 1280, "height": 720},
        "locale": "de-DE",
        "timezone_id": "Europe/Berlin",
        "geolocation": {"latitude": 52.52, "longitude": 13.405, "accuracy": 10.0},
        "permissions": ["geolocation", "notifications"],
        "color_scheme": "dark",
        "user_agent": "unotest-agent/1.0 (tests)",
        "extra_http_headers": {"X-Run": "emulation", "X-Count": "42"},
    }


def test_an_empty_value_is_not_set(tmp_path: Path) -> None:
    config = load(tmp_path, "device:\nlocale:\ntimezoneId:\npermissions:\ncolorScheme:\n")
    assert config.emulation == Emulation()


def test_a_device_gives_its_options_and_the_file_s_keys_win(tmp_path: Path) -> None:
    config = load(tmp_path, 'device: "iPhone 13"\n')
    options = context_options(config, lambda: DEVICES)
    # the device's viewport replaces the default one; the browser stays the file's
    assert options["viewport"] == {"width": 390, "height": 664}
    assert options["user_agent"] == "Mozilla/5.0 (Phone)" and options["is_mobile"] is True
    assert "default_browser_type" not in options

    config = load(
        tmp_path,
        'device: "iPhone 13"\nviewport: {width: 500, height: 400}\nuserAgent: mine\n',
    )
    options = context_options(config, lambda: DEVICES)
    assert options["viewport"] == {"width": 500, "height": 400}
    assert options["user_agent"] == "mine" and options["screen"] == PHONE["screen"]


def test_a_device_the_registry_lacks_is_one_sentence_at_its_place(tmp_path: Path) -> None:
    config = load(tmp_path, 'locale: en-GB\ndevice: "iPhone 31"\n')
    assert config.emulation.device_at == f"{CONFIG_FILE}:2:8"
    with pytest.raises(ConfigError) as info:
        context_options(config, lambda: DEVICES)
    assert str(info.value) == (
        f"{CONFIG_FILE}:2:8: 'device' must be a name of Playwright's device registry such as "
        '"iPhone 13", "Pixel 7" or "Desktop Chrome", got "iPhone 31" (did you mean '
        "'iPhone 13'?)"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("device: 13\n", "1:8: 'device' must be a non-empty string, got 13"),
        ("locale: 42\n", "1:8: 'locale' must be a BCP 47 language tag such as en-US, de-DE or fr"),
        ("locale: english please\n", "1:8: 'locale' must be a BCP 47 language tag"),
        (
            "timezoneId: Europe/Pari\n",
            "1:12: 'timezoneId' must be an IANA time zone such as Europe/Paris, "
            "America/New_York or UTC, got \"Europe/Pari\" (did you mean 'Europe/Paris'?)",
        ),
        ("timezoneId: [UTC]\n", "1:12: 'timezoneId' must be an IANA time zone"),
        (
            "geolocation: here\n",
            "1:13: 'geolocation' must be a mapping with 'latitude' and 'longitude' in degrees",
        ),
        (
            "geolocation:\n  latitude: 1\n",
            "1:0: 'geolocation.longitude' is missing: geolocation needs both 'latitude' and "
            "'longitude'",
        ),
        (
            "geolocation: {latitude: 91, longitude: 0}\n",
            "1:24: 'geolocation.latitude' must be a number of degrees from -90 to 90, got 91",
        ),
        (
            "geolocation: {latitude: 0, longitude: east}\n",
            "1:38: 'geolocation.longitude' must be a number of degrees from -180 to 180, "
            'got "east"',
        ),
        (
            "geolocation: {latitude: 0, longitude: 0, accuracy: -1}\n",
            "1:51: 'geolocation.accuracy' must be a number of metres, 0 or more, got -1",
        ),
        ("permissions: geolocation\n", "1:13: 'permissions' must be a list of permissions"),
        (
            "permissions: [geolocaton]\n",
            "1:13: 'permissions' must be a list of permissions (accelerometer, ",
        ),
        (
            "colorScheme: darker\n",
            "1:13: 'colorScheme' must be one of light, dark, no-preference, got \"darker\" "
            "(did you mean 'dark'?)",
        ),
        ("userAgent: ''\n", "1:11: 'userAgent' must be a non-empty string, got \"\""),
        (
            'userAgent: "a\\nb"\n',
            "1:11: 'userAgent' must be one line of text without control characters",
        ),
        (
            "extraHTTPHeaders: [X-A]\n",
            "1:18: 'extraHTTPHeaders' must be a mapping of header names to values (Name: value)",
        ),
        (
            "extraHTTPHeaders:\n  Bad Name: x\n",
            "2:12: 'extraHTTPHeaders' names must be HTTP header names",
        ),
        (
            'extraHTTPHeaders:\n  X-A: "one\\r\\nX-B: two"\n',
            "2:7: 'extraHTTPHeaders.X-A' must be one line of text without control characters",
        ),
        (
            "extraHTTPHeaders:\n  X-A: [1]\n",
            "2:7: 'extraHTTPHeaders.X-A' must be a non-empty string, got a list",
        ),
    ],
)
def test_each_bad_value_is_one_sentence_at_its_place(
    tmp_path: Path, text: str, message: str
) -> None:
    with pytest.raises(ConfigError) as info:
        load(tmp_path, text)
    said = str(info.value)
    assert "\n" not in said
    assert said.startswith(f"{CONFIG_FILE}:{message}"), said


def test_a_misspelt_key_is_a_warning_naming_the_right_one(tmp_path: Path) -> None:
    config = load(tmp_path, "timezone: UTC\ncolourScheme: dark\n")
    assert config.emulation == Emulation()
    assert [w.split(": ", 1)[1] for w in config.warnings] == [
        "unknown key 'timezone' is ignored (did you mean 'timezoneId'?)",
        "unknown key 'colourScheme' is ignored (did you mean 'colorScheme'?)",
    ]


def test_emulation_is_part_of_what_a_context_opened_ahead_must_match(tmp_path: Path) -> None:
    """A worker's context opened ahead is taken only with the same options: the emulation
    is hashable, and a change of any key is another option set."""
    light = load(tmp_path, "colorScheme: light\n").emulation
    dark = load(tmp_path, "colorScheme: dark\n").emulation
    assert hash(light) != hash(dark) or light != dark
    assert {light, dark, load(tmp_path, "colorScheme: light\n").emulation} == {light, dark}
