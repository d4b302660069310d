"""The options every browser context of a run is made with: Playwright's ``use:
{locale, timezoneId, ...}`` as :class:`Emulation` (``device``, ``locale``,
``timezoneId``, ``geolocation``, ``permissions``, ``colorScheme``, ``userAgent``,
``extraHTTPHeaders``), ``storageState`` as :class:`StorageState`, and
:class:`SettingChecks`, which checks them and ``viewport`` wherever they are written.

``unotest.config.yaml`` sets them for every run; a collection file
(``unotest/e2e/_collections/<name>.yaml``) may set them again for its own scenarios, as
a Playwright project's ``use`` overrides the config's, key by key
(``runner.project.collection_file.CollectionUse``). One class checks them in both
files, so a key takes and refuses the same values in either, and each problem is one
sentence at its place in the file it is written in (``file:line:col``), not a
Playwright error when the first context opens.

``storageState`` names a project file (Playwright's storage state JSON, as
``save_storage_state`` writes it) whose cookies and local storage seed every new
context. It is read when each context is made (:func:`read_storage_state`), never
before: in a collection, a setup scenario writes it while the other workers wait, and
a worker started earlier must not have read an old one. A path that leads out of the
project (absolute, ``..`` out, a symbolic link out) is refused when the file is checked
and again when it is read (a link may be made in between): :func:`outside_project`.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import zoneinfo
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, NoReturn, TypeVar

from runner.errors import ConfigError
from runner.project.config_file import Places, show
from runner.project.root import CONFIG_FILE
from runner.text import did_you_mean

__all__ = [
    "COLOR_SCHEMES",
    "DEFAULT_VIEWPORT",
    "EMULATION_KEYS",
    "GEOLOCATION_KEYS",
    "HEADER_NAME",
    "LOCALE",
    "MAX_VIEWPORT_PX",
    "PERMISSIONS",
    "USE_KEYS",
    "ColorScheme",
    "Devices",
    "Emulation",
    "Geolocation",
    "SettingChecks",
    "StorageState",
    "outside_project",
    "read_storage_state",
    "storage_secrets",
]

ColorScheme = Literal["light", "dark", "no-preference"]

EMULATION_KEYS = (
    "device",
    "locale",
    "timezoneId",
    "geolocation",
    "permissions",
    "colorScheme",
    "userAgent",
    "extraHTTPHeaders",
)
"""The keys of the file that are options of every browser context a run makes
(Playwright's ``use: {locale, ...}``), held in :class:`Emulation`."""
GEOLOCATION_KEYS = ("latitude", "longitude", "accuracy")
COLOR_SCHEMES: tuple[ColorScheme, ...] = ("light", "dark", "no-preference")
PERMISSIONS = (
    "accelerometer",
    "ambient-light-sensor",
    "background-sync",
    "camera",
    "clipboard-read",
    "clipboard-write",
    "geolocation",
    "gyroscope",
    "local-fonts",
    "local-network-access",
    "magnetometer",
    "microphone",
    "midi",
    "midi-sysex",
    "notifications",
    "payment-handler",
    "screen-wake-lock",
    "storage-access",
)
"""The permission names Playwright's ``grantPermissions`` takes (those it maps for
Chromium, in this release); WebKit and Firefox know fewer and refuse the others when the
context opens, in Playwright's words. A name not here is refused before any browser."""
LOCALE = re.compile(r"[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8})*")
"""A BCP 47 language tag as browsers take it: a language, then subtags (en, en-US,
zh-Hant-TW, de-DE-u-co-phonebk)."""
HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
"""An HTTP header name: a token (RFC 9110 §5.1)."""


@dataclass(frozen=True)
class Geolocation:
    """Degrees, and the accuracy in metres (Playwright's default, 0, when not given)."""

    latitude: float
    longitude: float
    accuracy: float | None = None


Devices = Mapping[str, Mapping[str, object]]
"""Playwright's device registry (``playwright.devices``): name → ``new_context`` keyword
options (``user_agent``, ``viewport``, ``is_mobile``, ...)."""


@dataclass(frozen=True)
class Emulation:
    """The options every browser context of a run is made with besides ``baseURL`` and
    ``viewport`` (the file's ``device``, ``locale``, ``timezoneId``, ``geolocation``,
    ``permissions``, ``colorScheme``, ``userAgent``, ``extraHTTPHeaders``).

    ``device`` is checked against Playwright's registry only where a driver is at hand
    (:meth:`context_options`), so it keeps ``device_at``, the place the file writes it,
    for that message. ``viewport_given`` (with a device only): the file sets
    ``viewport``, which then wins over the device's, as an explicit ``use`` key wins
    over a spread device in Playwright Test; ``userAgent`` wins over the device's the
    same way."""

    device: str | None = None
    locale: str | None = None
    timezone_id: str | None = None
    geolocation: Geolocation | None = None
    permissions: tuple[str, ...] = ()
    color_scheme: ColorScheme | None = None
    user_agent: str | None = None
    extra_http_headers: tuple[tuple[str, str], ...] = ()
    viewport_given: bool = False
    device_at: str = field(default=CONFIG_FILE, compare=False)

    def context_options(self, devices: Callable[[], Devices]) -> dict[str, object]:
        """Keyword options of Playwright's ``Browser.new_context`` (the device's, then
        each key set); ``devices`` is asked only when a ``device`` is set. Raises
        :class:`ConfigError` at the device's place when the registry lacks it."""
        options: dict[str, object] = {}
        if self.device is not None:
            options.update(self.device_options(devices()))
        named = {
            "locale": self.locale,
            "timezone_id": self.timezone_id,
            "color_scheme": self.color_scheme,
            "user_agent": self.user_agent,
        }
        options.update({key: value for key, value in named.items() if value is not None})
        if self.geolocation is not None:
            place = self.geolocation
            where = {"latitude": place.latitude, "longitude": place.longitude}
            if place.accuracy is not None:
                where["accuracy"] = place.accuracy
            options["geolocation"] = where
        if self.permissions:
            options["permissions"] = list(self.permissions)
        if self.extra_http_headers:
            options["extra_http_headers"] = dict(self.extra_http_headers)
        return options

    def device_options(self, devices: Devices) -> dict[str, object]:
        """The registry's options for ``device`` (without ``default_browser_type``: the
        browser is the file's ``browser``, and without its viewport when the file sets
        one)."""
        assert self.device is not None
        descriptor = devices.get(self.device)
        if descriptor is None:
            raise ConfigError(
                f"{self.device_at}: 'device' must be a name of Playwright's device registry "
                f'such as "iPhone 13", "Pixel 7" or "Desktop Chrome", got '
                f"{show(self.device)}{did_you_mean(self.device, devices)}"
            )
        dropped = {"default_browser_type", "viewport"} if self.viewport_given else set()
        dropped.add("default_browser_type")
        return {key: value for key, value in descriptor.items() if key not in dropped}


# Chromium's largest texture: beyond it screenshots fail, and a huge window (10^7 px)
# hangs the browser or kills Playwright's driver instead of failing with a message.
MAX_VIEWPORT_PX = 16384
DEFAULT_VIEWPORT = (1280, 720)
VIEWPORT_KEYS = ("width", "height")
USE_KEYS = ("viewport", "storageState", *EMULATION_KEYS)
"""The keys of a browser context's settings, in the config and in a collection."""
MAX_STORAGE_STATE_BYTES = 16 * 1024 * 1024
"""A larger storage state is no login's cookies: refused before it is parsed."""
MIN_STORAGE_SECRET = 8
"""A local-storage value this long or longer is masked (``save_storage_state``'s rule:
shorter ones are flags such as ``"true"``); every cookie value is."""

_C = TypeVar("_C", bound=str)


@dataclass(frozen=True)
class StorageState:
    """``storageState``: the project-relative ``path`` of the file seeding each new
    context, ``at`` (``file:line:col``, where a setting names it, for every message
    about it) and the setup scenarios of the collection that should write it
    (``written_by``: what the message of a missing file names)."""

    path: str
    at: str = field(default="", compare=False)
    written_by: tuple[str, ...] = field(default=(), compare=False)


def outside_project(root: Path, name: str) -> str | None:
    """Why the project-relative ``name`` is not a path inside the project at ``root``
    (symbolic links followed), in words for a message; None when it stays inside. The
    same rule as ``save_storage_state``'s (``runner.builtins.files.project_path``), here
    where the project's settings, which may not import the built-ins, can use it."""
    if os.path.isabs(name):
        return f"{name} is an absolute path"
    base = Path(os.path.realpath(root))
    if Path(os.path.realpath(base / name)).is_relative_to(base):
        return None
    return f"{name} is outside" + (
        "" if ".." in Path(name).parts else " (a symbolic link leads out)"
    )


def read_storage_state(root: Path, state: StorageState) -> dict[str, object]:
    """The storage state file's JSON, read now, when a context is made (a setup
    scenario may have written it a moment ago); one sentence (:class:`ConfigError`)
    when the path leads out, or the file is missing, a folder, too large or no storage
    state."""
    why = outside_project(root, state.path)
    if why is not None:
        raise ConfigError(f"{state.at}: 'storageState' must be a path inside the project: {why}")
    try:
        with open(root / state.path, "rb") as file:
            data = file.read(MAX_STORAGE_STATE_BYTES + 1)
    except FileNotFoundError:
        raise ConfigError(_missing(state)) from None
    except IsADirectoryError:
        raise ConfigError(
            f"{state.at}: 'storageState' names {state.path}, a folder; give the file "
            "save_storage_state() wrote"
        ) from None
    except OSError as err:
        raise ConfigError(
            f"{state.at}: the storage state {state.path} cannot be read: {err.strerror or err}"
        ) from None
    if len(data) > MAX_STORAGE_STATE_BYTES:
        raise ConfigError(
            f"{state.at}: the storage state {state.path} is larger than "
            f"{MAX_STORAGE_STATE_BYTES:,} bytes: it is no storage state"
        )
    try:
        loaded = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        loaded = None
    if (
        not isinstance(loaded, dict)
        or not isinstance(loaded.get("cookies", []), list)
        or not isinstance(loaded.get("origins", []), list)
    ):
        raise ConfigError(
            f"{state.at}: {state.path} is not a storage state (Playwright's JSON of "
            "cookies and origins, as save_storage_state() writes it)"
        )
    return loaded


def _missing(state: StorageState) -> str:
    """The sentence of a storage state file that is not there (yet)."""
    head = f"{state.at}: the storage state {state.path} does not exist"
    save = f"save_storage_state({json.dumps(state.path)})"
    if not state.written_by:
        return (
            f"{head}: a scenario writes it with {save} before the scenarios that use it "
            "run (in a collection, list that scenario under 'setup:')"
        )
    names = ", ".join(f"'{name}'" for name in state.written_by)
    which = "the setup scenario" if len(state.written_by) == 1 else "one of the setup scenarios"
    return f"{head}: {which} {names} should have written it with {save}"


def storage_secrets(state: Mapping[str, object]) -> list[str]:
    """The values of a storage state a run must mask, as if it had saved them itself:
    every cookie's value, and each local-storage value of 8 characters or more."""
    found: list[str] = []
    cookies = state.get("cookies")
    for cookie in cookies if isinstance(cookies, list) else []:
        if isinstance(cookie, dict) and isinstance(cookie.get("value"), str):
            found.append(cookie["value"])
    origins = state.get("origins")
    for origin in origins if isinstance(origins, list) else []:
        items = origin.get("localStorage") if isinstance(origin, dict) else None
        for item in items if isinstance(items, list) else []:
            value = item.get("value") if isinstance(item, dict) else None
            if isinstance(value, str) and len(value) >= MIN_STORAGE_SECRET:
                found.append(value)
    return found


class SettingChecks:
    """The checks of a settings file's values, each problem one sentence at its place.

    ``file`` is the file as messages name it, ``places`` where each setting is written
    (``runner.project.config_file.Places``), ``warnings`` collects what is ignored
    (unknown keys), ``root`` is the project's (``storageState`` stays inside it). The
    config's validator extends it with its own sections; a collection's reader
    overrides :meth:`refused` to make a problem of its file."""

    def __init__(self, file: str, places: Places, warnings: list[str], root: Path) -> None:
        self.file = file
        self.places = places
        self.warnings = warnings
        self.root = root

    def refused(self, place: tuple[int, int] | None, message: str) -> Exception:
        """The error a refused setting raises: a :class:`ConfigError` naming the file."""
        if place is None:
            return ConfigError(f"{self.file}: {message}")
        return ConfigError(f"{self.file}:{place[0]}:{place[1]}: {message}")

    def place(self, key: str) -> str:
        """``file:line:col`` of the value of ``key`` (the file alone when unknown)."""
        place = self.places.get(key)
        return f"{self.file}:{place[0]}:{place[1]}" if place else self.file

    def fail(self, key: str, message: str) -> NoReturn:
        """Refuse the setting ``key`` where the file writes it (its value, or for a
        missing one, the section that lacks it)."""
        place = self.places.get(key) or self.places.get(f"key:{key.rpartition('.')[0]}")
        raise self.refused(place, message)

    def error(self, key: str, expected: str, value: object) -> NoReturn:
        self.fail(key, f"'{key}' must be {expected}, got {show(value)}")

    def mapping(
        self, data: object, prefix: str, known: tuple[str, ...], what: str
    ) -> dict[str, object]:
        """``data`` as a mapping of known keys; unknown keys become warnings."""
        if not isinstance(data, dict):
            self.error(prefix, what, data)
        out: dict[str, object] = {}
        for key, value in data.items():
            if isinstance(key, str) and key in known:
                out[key] = value
                continue
            name = key if isinstance(key, str) else show(key)
            shown = f"{prefix}.{name}" if prefix else name
            hint = did_you_mean(name, known) if isinstance(key, str) else ""
            if not hint:
                where = f" in '{prefix}'" if prefix else ""
                hint = f" (known keys{where}: {', '.join(known)})"
            if shown == "headed" and isinstance(value, bool):
                hint = f" (did you mean 'headless: {'false' if value else 'true'}'?)"
            place = self.places.get(f"key:{shown}")
            where = f"{self.file}:{place[0]}" if place else self.file
            self.warnings.append(f"{where}: unknown key '{shown}' is ignored{hint}")
        return out

    def string(self, key: str, value: object) -> str:
        if not isinstance(value, str) or not value.strip():
            self.error(key, "a non-empty string", value)
        if "\0" in value:
            # No command line, path or URL can hold a NUL: refused here, not by exec().
            self.fail(key, f"'{key}' must not contain a NUL character (\\0), got {show(value)}")
        return value

    def choice(self, key: str, value: object, choices: tuple[_C, ...]) -> _C:
        for choice in choices:
            if value == choice:
                return choice
        hint = did_you_mean(value, choices) if isinstance(value, str) else ""
        self.fail(key, f"'{key}' must be one of {', '.join(choices)}, got {show(value)}{hint}")

    # the settings of every browser context

    def viewport(self, value: object) -> tuple[int, int]:
        section = self.mapping(
            value, "viewport", VIEWPORT_KEYS, "a mapping with 'width' and 'height' in pixels"
        )
        size = dict(zip(VIEWPORT_KEYS, DEFAULT_VIEWPORT, strict=True))
        for key in VIEWPORT_KEYS:
            if key in section:
                pixels = section[key]
                if isinstance(pixels, bool) or not isinstance(pixels, int) or pixels <= 0:
                    self.error(f"viewport.{key}", "a positive whole number of pixels", pixels)
                if pixels > MAX_VIEWPORT_PX:
                    self.error(
                        f"viewport.{key}",
                        f"a whole number of pixels up to {MAX_VIEWPORT_PX}",
                        pixels,
                    )
                size[key] = pixels
        return size["width"], size["height"]

    def storage_state(self, value: object, written_by: Sequence[str] = ()) -> StorageState:
        """A project-relative path (the file need not exist yet: a setup scenario may
        write it); one that leads out of the project is refused here."""
        name = self.string("storageState", value)
        why = outside_project(self.root, name)
        if why is not None:
            self.fail(
                "storageState",
                "'storageState' must be a path inside the project, relative to its root "
                f"(such as unotest/.auth/user.json): {why}",
            )
        return StorageState(name, self.place("storageState"), tuple(written_by))

    def emulation(self, top: Mapping[str, object]) -> Emulation:
        """The context options the file sets; an empty value (``locale:``) is not set."""

        def given(key: str) -> bool:
            return top.get(key) is not None

        device = self.string("device", top["device"]) if given("device") else None
        return Emulation(
            device=device,
            device_at=self.place("device"),
            viewport_given=device is not None and "viewport" in top,
            locale=self.locale(top["locale"]) if given("locale") else None,
            timezone_id=self.timezone(top["timezoneId"]) if given("timezoneId") else None,
            geolocation=self.geolocation(top["geolocation"]) if given("geolocation") else None,
            permissions=self.permissions(top["permissions"]) if given("permissions") else (),
            color_scheme=(
                self.choice("colorScheme", top["colorScheme"], COLOR_SCHEMES)
                if given("colorScheme")
                else None
            ),
            user_agent=self.header_text("userAgent", top["userAgent"])
            if given("userAgent")
            else None,
            extra_http_headers=(
                self.headers(top["extraHTTPHeaders"]) if given("extraHTTPHeaders") else ()
            ),
        )

    def locale(self, value: object) -> str:
        if not isinstance(value, str) or not LOCALE.fullmatch(value):
            self.error("locale", "a BCP 47 language tag such as en-US, de-DE or fr", value)
        return value

    def timezone(self, value: object) -> str:
        expected = "an IANA time zone such as Europe/Paris, America/New_York or UTC"
        if not isinstance(value, str) or not value.strip():
            self.error("timezoneId", expected, value)
        known = _time_zones()
        if known and value not in known:
            # Without a time zone database here (no tzdata), the browser's word stands.
            self.fail(
                "timezoneId",
                f"'timezoneId' must be {expected}, got {show(value)}{did_you_mean(value, known)}",
            )
        return value

    def geolocation(self, value: object) -> Geolocation:
        section = self.mapping(
            value,
            "geolocation",
            GEOLOCATION_KEYS,
            "a mapping with 'latitude' and 'longitude' in degrees (and optional 'accuracy' "
            "in metres)",
        )
        for key in ("latitude", "longitude"):
            if key not in section:
                self.fail(
                    f"geolocation.{key}",
                    f"'geolocation.{key}' is missing: geolocation needs both 'latitude' and "
                    "'longitude'",
                )
        accuracy = section.get("accuracy")
        return Geolocation(
            latitude=self.degrees("geolocation.latitude", section["latitude"], 90),
            longitude=self.degrees("geolocation.longitude", section["longitude"], 180),
            accuracy=None if accuracy is None else self.degrees("geolocation.accuracy", accuracy),
        )

    def degrees(self, key: str, value: object, most: float | None = None) -> float:
        """A number from -``most`` to ``most`` (without ``most``: 0 or more, metres)."""
        expected = (
            f"a number of degrees from -{most} to {most}"
            if most is not None
            else "a number of metres, 0 or more"
        )
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or (most is not None and not -most <= value <= most)
            or (most is None and value < 0)
        ):
            self.error(key, expected, value)
        return float(value)

    def permissions(self, value: object) -> tuple[str, ...]:
        expected = f"a list of permissions ({', '.join(PERMISSIONS)})"
        if not isinstance(value, list):
            self.error("permissions", expected, value)
        for item in value:
            if item not in PERMISSIONS:
                hint = did_you_mean(item, PERMISSIONS) if isinstance(item, str) else ""
                self.fail(
                    "permissions",
                    f"'permissions' must be {expected}, got {show(item)} in the list{hint}",
                )
        return tuple(dict.fromkeys(value))

    def header_text(self, key: str, value: object) -> str:
        """Text an HTTP header can carry: no line break or other control character."""
        if not isinstance(value, str) or not value.strip():
            self.error(key, "a non-empty string", value)
        if any((ord(ch) < 0x20 and ch != "\t") or ord(ch) == 0x7F for ch in value):
            self.fail(
                key,
                f"'{key}' must be one line of text without control characters, got {show(value)}",
            )
        return value

    def headers(self, value: object) -> tuple[tuple[str, str], ...]:
        """A mapping of header name to value, sent with every request of the context."""
        if not isinstance(value, dict):
            self.error(
                "extraHTTPHeaders", "a mapping of header names to values (Name: value)", value
            )
        pairs: list[tuple[str, str]] = []
        for name, item in value.items():
            if not isinstance(name, str) or not HEADER_NAME.fullmatch(name):
                self.fail(
                    f"extraHTTPHeaders.{name}" if isinstance(name, str) else "extraHTTPHeaders",
                    "'extraHTTPHeaders' names must be HTTP header names (letters, digits and "
                    f"!#$%&'*+.^_`|~-), got {show(name)}",
                )
            if isinstance(item, bool):
                item = "true" if item else "false"
            elif isinstance(item, int | float) and math.isfinite(item) and abs(item) < 2**63:
                item = str(item)  # YAML's 42 is the header's "42"
            pairs.append((name, self.header_text(f"extraHTTPHeaders.{name}", item)))
        return tuple(pairs)


@functools.cache
def _time_zones() -> frozenset[str]:
    """The IANA time zones this machine knows (none without a time zone database)."""
    return frozenset(zoneinfo.available_timezones())
