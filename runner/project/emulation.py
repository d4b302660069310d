"""The options every browser context of a run is made with besides ``baseURL`` and
``viewport``: Playwright's ``use: {locale, timezoneId, ...}``, as the config file sets
them (``device``, ``locale``, ``timezoneId``, ``geolocation``, ``permissions``,
``colorScheme``, ``userAgent``, ``extraHTTPHeaders``), checked by
:mod:`runner.project.config`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from runner.errors import ConfigError
from runner.project.config_file import show
from runner.project.root import CONFIG_FILE
from runner.text import did_you_mean

__all__ = [
    "COLOR_SCHEMES",
    "EMULATION_KEYS",
    "GEOLOCATION_KEYS",
    "HEADER_NAME",
    "LOCALE",
    "PERMISSIONS",
    "ColorScheme",
    "Devices",
    "Emulation",
    "Geolocation",
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
