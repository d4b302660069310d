"""``unotest.config.yaml``, validated once into a frozen :class:`Config` (runner.md §7).

Everything the runner needs from the configuration file is checked here, before a
browser starts, so a typo fails fast with one sentence that names the file, the key
path (``timeout.action``) and what was expected, instead of surfacing minutes later as
a Playwright error far from its cause. Unknown keys are only warnings (with a
did-you-mean), so a config written for a newer unotest still runs.

The file is plain data: it is read with ``yaml.safe_load`` only, and anchors, aliases
and explicit tags (``!!python/...``) are refused before anything is constructed, so a
"billion laughs" file cannot blow up memory and no tag can run code.

The browser context's options (``locale``, ``timezoneId``, ``colorScheme``, ...: the
:class:`Emulation`) are checked here as well, all but one thing: whether Playwright's
device registry has the ``device`` named, which only its driver knows. That one is
checked as soon as a driver is up, before a browser launches (``Emulation.context_options``),
in a sentence that still points at the file's line and column.

Two YAML 1.1 surprises are handled on purpose: unquoted ``on``/``off`` are booleans,
so ``trace: off`` (as runner.md §5 writes it) means ``"off"``; and an empty value
(``baseURL:``) means "not set" for the keys whose default is "not set", and is an error
elsewhere.
"""

from __future__ import annotations

import functools
import math
import os
import re
import zoneinfo
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal, NoReturn, TypeVar
from urllib.parse import urlsplit

from runner.errors import ConfigError
from runner.project.config_file import Places, fail, read_yaml, show
from runner.project.emulation import (
    COLOR_SCHEMES,
    EMULATION_KEYS,
    GEOLOCATION_KEYS,
    HEADER_NAME,
    LOCALE,
    PERMISSIONS,
    Emulation,
    Geolocation,
)
from runner.project.root import CONFIG_FILE, misnamed_config_warnings
from runner.text import did_you_mean

__all__ = [
    "CONFIG_FILE",
    "Config",
    "DebugConfig",
    "Emulation",
    "Geolocation",
    "HeadedBy",
    "HistoryConfig",
    "Timeouts",
    "WebServerConfig",
    "load_config",
]

Browser = Literal["chromium", "firefox", "webkit"]
Trace = Literal["on-failure", "on", "off"]
HeadedBy = Literal["config", "UNOTEST_HEADED", "--headed"]
"""What made a run headed: ``headless: false`` in the file, the environment variable,
or the command line (a collection's workers learn it through ``UNOTEST_HEADED_BY``)."""

BROWSERS: tuple[Browser, ...] = ("chromium", "firefox", "webkit")
TRACES: tuple[Trace, ...] = ("on-failure", "on", "off")
_C = TypeVar("_C", bound=str)

# Node's timers (and so Playwright's) treat a delay above 2^31 - 1 ms as 1 ms.
MAX_TIMEOUT_MS = 2**31 - 1
# Chromium's largest texture: beyond it screenshots fail, and a huge window (10^7 px)
# hangs the browser or kills Playwright's driver instead of failing with a message.
MAX_VIEWPORT_PX = 16384

_TOP_KEYS = (
    "runner",
    "baseURL",
    "browser",
    "headless",
    "viewport",
    "timeout",
    "trace",
    "executablePath",
    "wsEndpoint",
    "webServer",
    "debug",
    "retries",
    "history",
    *EMULATION_KEYS,
)
_VIEWPORT_KEYS = ("width", "height")
_TIMEOUT_KEYS = ("action", "expect", "navigation", "scenario")
_WEB_SERVER_KEYS = ("command", "url", "timeout", "reuseExistingServer", "cwd", "env")
_DEBUG_KEYS = ("idleTimeout",)
_HISTORY_KEYS = ("maxAgeDays", "maxBytes")
# Retrying more than this many times hides a broken scenario rather than a flaky one.
MAX_RETRIES = 10
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

_HEADED_ON = ("1", "true", "yes", "on")
_HEADED_OFF = ("", "0", "false", "no", "off")
BASE_URL_ENV = "UNOTEST_BASE_URL"
HEADED_BY_ENV = "UNOTEST_HEADED_BY"
"""Set with ``UNOTEST_HEADED=1`` by a collection run with ``--headed`` for its workers,
so that a message about the headed run names the option the user gave."""


@dataclass(frozen=True)
class Timeouts:
    """Milliseconds; ``scenario`` does not run while the debugger is paused."""

    action: int = 5000
    expect: int = 5000
    navigation: int = 30000
    scenario: int = 300000


@dataclass(frozen=True)
class WebServerConfig:
    """A server started before the run and stopped after it, as Playwright Test does.

    ``cwd`` is absolute: the project root unless the config says otherwise (a relative
    ``cwd`` is resolved against the root). ``env``: variables set for the command, over
    the run's own environment, as ``(name, value)`` pairs in the file's order.
    """

    command: str
    url: str
    timeout: int = 60000
    reuse_existing_server: bool = True
    cwd: Path = field(kw_only=True)
    env: tuple[tuple[str, str], ...] = field(default=(), kw_only=True)


@dataclass(frozen=True)
class DebugConfig:
    """The ``debug:`` section. ``idle_timeout``: milliseconds a paused run without a
    terminal prompt waits for a command before it ends ``aborted`` (0: it waits forever)."""

    idle_timeout: int = 30 * 60 * 1000


@dataclass(frozen=True)
class HistoryConfig:
    """The ``history:`` section: how long and how much ``unotest/.history/`` keeps.

    Both bounds apply after every write, oldest file first, so the folder never grows
    without limit however often the suite runs (``0`` for either turns it off).
    """

    max_age_days: int = 30
    max_bytes: int = 20 * 1024 * 1024


@dataclass(frozen=True)
class Config:
    """The validated configuration; ``warnings`` holds what was ignored (unknown keys, a
    misnamed file). ``headed_by``: why ``headless`` is false, when it is."""

    root: Path
    runner: str | None = None
    base_url: str | None = None
    browser: Browser = "chromium"
    headless: bool = True
    viewport: tuple[int, int] = (1280, 720)
    timeouts: Timeouts = Timeouts()
    trace: Trace = "on-failure"
    executable_path: str | None = None
    ws_endpoint: str | None = None
    web_server: WebServerConfig | None = None
    debug: DebugConfig = DebugConfig()
    retries: int = 0
    history: HistoryConfig = HistoryConfig()
    emulation: Emulation = field(default_factory=Emulation)
    warnings: tuple[str, ...] = ()
    headed_by: HeadedBy | None = None


def load_config(root: Path, environ: Mapping[str, str], *, on_this_machine: bool = True) -> Config:
    """The configuration of the project at ``root``; defaults when there is no file.

    Raises :class:`ConfigError` (one sentence) for anything that cannot be used.
    ``UNOTEST_HEADED=1`` in ``environ`` runs headed whatever the file says, and
    ``UNOTEST_BASE_URL`` replaces its ``baseURL`` (validated the same way). Without
    ``on_this_machine`` (``unotest check``, a lint job without the browser or the built
    site) the paths it names are not asked to exist here.
    """
    root = Path(os.path.abspath(root))
    path = root / CONFIG_FILE
    warnings: list[str] = misnamed_config_warnings(root)
    places: Places = {}
    data = read_yaml(path, warnings, places) if os.path.lexists(path) else {}
    config = _Validator(root, warnings, on_this_machine, places).config(data)

    base_url = environ.get(BASE_URL_ENV)
    if base_url is not None and base_url.strip():
        url = _EnvironmentValidator(root, warnings).url(BASE_URL_ENV, base_url, ("http", "https"))
        config = replace(config, base_url=url)
    headed = environ.get("UNOTEST_HEADED")
    if headed is not None:
        flag = headed.strip().lower()
        if flag in _HEADED_ON:
            by: HeadedBy = (
                "--headed" if environ.get(HEADED_BY_ENV) == "--headed" else "UNOTEST_HEADED"
            )
            config = replace(config, headless=False, headed_by=by)
        elif flag not in _HEADED_OFF:
            warnings.append(
                f"UNOTEST_HEADED={show(headed)} is ignored: use 1 to run headed, 0 or unset "
                "to follow the config"
            )
    return replace(config, warnings=tuple(warnings))


# --- reading -------------------------------------------------------------------------


# --- validating ----------------------------------------------------------------------


class _Validator:
    def __init__(
        self,
        root: Path,
        warnings: list[str],
        on_this_machine: bool = True,
        places: Places | None = None,
    ) -> None:
        self.root = root
        self.warnings = warnings
        self.on_this_machine = on_this_machine
        self.places = places or {}

    # helpers

    def fail(self, key: str, message: str) -> NoReturn:
        """Refuse the setting ``key`` where the file writes it (its value, or for a
        missing one, the section that lacks it)."""
        place = self.places.get(key) or self.places.get(f"key:{key.rpartition('.')[0]}")
        if place is None:
            fail(message)
        raise ConfigError(f"{CONFIG_FILE}:{place[0]}:{place[1]}: {message}")

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
            where = f"{CONFIG_FILE}:{place[0]}" if place else CONFIG_FILE
            self.warnings.append(f"{where}: unknown key '{shown}' is ignored{hint}")
        return out

    def string(self, key: str, value: object) -> str:
        if not isinstance(value, str) or not value.strip():
            self.error(key, "a non-empty string", value)
        if "\0" in value:
            # No command line, path or URL can hold a NUL: refused here, not by exec().
            self.fail(key, f"'{key}' must not contain a NUL character (\\0), got {show(value)}")
        return value

    def boolean(self, key: str, value: object) -> bool:
        if not isinstance(value, bool):
            self.error(key, "true or false", value)
        return value

    def milliseconds(self, key: str, value: object) -> int:
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or value <= 0
        ):
            self.error(key, "a positive number of milliseconds", value)
        if value > MAX_TIMEOUT_MS:
            self.error(key, f"a positive number of milliseconds up to {MAX_TIMEOUT_MS}", value)
        return max(1, math.ceil(value))

    def url(self, key: str, value: object, schemes: tuple[str, ...]) -> str:
        expected = " or ".join(f"{s}://" for s in schemes) + " URL"
        expected = ("an " if expected[0] in "aeiouh" else "a ") + expected
        if not isinstance(value, str):
            self.error(key, expected, value)
        if any(ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0 for ch in value.strip()):
            self.fail(
                key, f"'{key}' must be {expected} without control characters, got {show(value)}"
            )
        try:
            parts = urlsplit(value.strip())
            parts.port  # noqa: B018  (raises ValueError for a bad port)
        except ValueError:
            self.error(key, expected, value)
        if parts.scheme.lower() not in schemes or not parts.hostname:
            example = "http://localhost:3000" if schemes[0] == "http" else "ws://localhost:9222/"
            self.error(key, f"{expected} such as {example}", value)
        return value.strip()

    def choice(self, key: str, value: object, choices: tuple[_C, ...]) -> _C:
        for choice in choices:
            if value == choice:
                return choice
        hint = did_you_mean(value, choices) if isinstance(value, str) else ""
        self.fail(key, f"'{key}' must be one of {', '.join(choices)}, got {show(value)}{hint}")

    def path(self, value: str) -> Path:
        return Path(os.path.abspath(self.root / os.path.expanduser(value)))

    def environment(self, key: str, value: object) -> tuple[tuple[str, str], ...]:
        """A mapping of variable name to text; YAML numbers and booleans are written as
        the text a shell would pass (``8080``, ``true``)."""
        if not isinstance(value, dict):
            self.error(key, "a mapping of variable names to values (NAME: value)", value)
        pairs: list[tuple[str, str]] = []
        for name, item in value.items():
            if not isinstance(name, str) or not _ENV_NAME.fullmatch(name):
                self.fail(
                    f"{key}.{name}" if isinstance(name, str) else key,
                    f"'{key}' names must be variable names (letters, digits and _, not "
                    f"starting with a digit), got {show(name)}",
                )
            setting = f"{key}.{name}"
            if isinstance(item, bool):
                text = "true" if item else "false"
            elif (
                isinstance(item, int | float)
                and math.isfinite(item)
                and abs(item) < 2**63  # str() of a 4,300-digit number raises
            ):
                text = str(item)
            elif isinstance(item, str):
                text = item
            else:
                self.error(setting, "a string (or a number or true/false)", item)
            if "\0" in text:
                self.fail(setting, f"'{setting}' must not contain a NUL character (\\0)")
            pairs.append((name, text))
        return tuple(pairs)

    # sections

    def config(self, data: dict[object, object]) -> Config:
        top = self.mapping(data, "", _TOP_KEYS, "a mapping")
        default = Config(root=self.root)

        def given(key: str) -> bool:
            return top.get(key) is not None

        trace = top.get("trace", default.trace)
        # YAML 1.1 reads unquoted on/off as booleans: `trace: off` means "off".
        if isinstance(trace, bool):
            trace = "on" if trace else "off"
        headless = (
            self.boolean("headless", top["headless"]) if "headless" in top else default.headless
        )
        return Config(
            root=self.root,
            runner=self.string("runner", top["runner"]) if given("runner") else None,
            base_url=(
                self.url("baseURL", top["baseURL"], ("http", "https")) if given("baseURL") else None
            ),
            browser=(
                self.choice("browser", top["browser"], BROWSERS)
                if "browser" in top
                else default.browser
            ),
            headless=headless,
            headed_by=None if headless else "config",
            viewport=self.viewport(top["viewport"]) if "viewport" in top else default.viewport,
            timeouts=self.timeouts(top["timeout"]) if "timeout" in top else default.timeouts,
            trace=self.choice("trace", trace, TRACES),
            executable_path=(
                self.executable(top["executablePath"]) if given("executablePath") else None
            ),
            ws_endpoint=(
                self.url("wsEndpoint", top["wsEndpoint"], ("ws", "wss"))
                if given("wsEndpoint")
                else None
            ),
            web_server=self.web_server(top["webServer"]) if given("webServer") else None,
            debug=self.debug(top["debug"]) if "debug" in top else default.debug,
            retries=self.count("retries", top["retries"], MAX_RETRIES) if given("retries") else 0,
            history=self.history(top["history"]) if "history" in top else default.history,
            emulation=self.emulation(top),
        )

    def viewport(self, value: object) -> tuple[int, int]:
        section = self.mapping(
            value, "viewport", _VIEWPORT_KEYS, "a mapping with 'width' and 'height' in pixels"
        )
        size = {"width": Config.viewport[0], "height": Config.viewport[1]}
        for key in _VIEWPORT_KEYS:
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

    def timeouts(self, value: object) -> Timeouts:
        section = self.mapping(
            value,
            "timeout",
            _TIMEOUT_KEYS,
            "a mapping with 'action', 'expect', 'navigation' and/or 'scenario' in milliseconds",
        )
        values = {
            key: self.milliseconds(f"timeout.{key}", section[key])
            for key in _TIMEOUT_KEYS
            if key in section
        }
        return Timeouts(**values)

    def debug(self, value: object) -> DebugConfig:
        section = self.mapping(
            value, "debug", _DEBUG_KEYS, "a mapping with 'idleTimeout' in milliseconds"
        )
        if "idleTimeout" not in section:
            return DebugConfig()
        idle = section["idleTimeout"]
        expected = "a number of milliseconds, 0 or more (0: a paused run waits forever)"
        if (
            isinstance(idle, bool)
            or not isinstance(idle, int | float)
            or not math.isfinite(idle)
            or idle < 0
        ):
            self.error("debug.idleTimeout", expected, idle)
        if idle > MAX_TIMEOUT_MS:
            self.error("debug.idleTimeout", f"{expected} up to {MAX_TIMEOUT_MS}", idle)
        return DebugConfig(idle_timeout=math.ceil(idle))

    def count(self, key: str, value: object, most: int) -> int:
        """A whole number from 0 to ``most``."""
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= most:
            self.error(key, f"a whole number from 0 to {most}", value)
        return value

    def history(self, value: object) -> HistoryConfig:
        section = self.mapping(
            value,
            "history",
            _HISTORY_KEYS,
            "a mapping with 'maxAgeDays' and/or 'maxBytes' (0 turns a bound off)",
        )
        default = HistoryConfig()
        return HistoryConfig(
            max_age_days=(
                self.count("history.maxAgeDays", section["maxAgeDays"], 36500)
                if "maxAgeDays" in section
                else default.max_age_days
            ),
            max_bytes=(
                self.count("history.maxBytes", section["maxBytes"], 2**40)
                if "maxBytes" in section
                else default.max_bytes
            ),
        )

    # the options of every browser context (Emulation)

    def emulation(self, top: Mapping[str, object]) -> Emulation:
        """The context options the file sets; an empty value (``locale:``) is not set."""

        def given(key: str) -> bool:
            return top.get(key) is not None

        device = self.string("device", top["device"]) if given("device") else None
        place = self.places.get("device") if device is not None else None
        return Emulation(
            device=device,
            device_at=f"{CONFIG_FILE}:{place[0]}:{place[1]}" if place else CONFIG_FILE,
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

    def executable(self, value: object) -> str:
        path = self.path(self.string("executablePath", value))
        if not self.on_this_machine:
            return str(path)
        if not path.exists():
            self.fail(
                "executablePath",
                f"'executablePath' must name an existing browser executable, no file at {path}",
            )
        if path.is_dir():
            self.fail(
                "executablePath",
                f"'executablePath' must name a browser executable, {path} is a directory",
            )
        return str(path)

    def web_server(self, value: object) -> WebServerConfig:
        section = self.mapping(
            value,
            "webServer",
            _WEB_SERVER_KEYS,
            "a mapping with 'command' and 'url' (and optional 'timeout', "
            "'reuseExistingServer', 'cwd', 'env')",
        )
        for key in ("command", "url"):
            if key not in section:
                self.fail(
                    f"webServer.{key}",
                    f"'webServer.{key}' is missing: webServer needs both 'command' and 'url'",
                )
        command = self.string("webServer.command", section["command"])
        url = self.url("webServer.url", section["url"], ("http", "https"))
        timeout = (
            self.milliseconds("webServer.timeout", section["timeout"])
            if "timeout" in section
            else WebServerConfig.timeout
        )
        reuse = (
            self.boolean("webServer.reuseExistingServer", section["reuseExistingServer"])
            if "reuseExistingServer" in section
            else WebServerConfig.reuse_existing_server
        )
        cwd = self.root
        if "cwd" in section and section["cwd"] is not None:
            cwd = self.path(self.string("webServer.cwd", section["cwd"]))
            if self.on_this_machine and not cwd.is_dir():
                self.fail(
                    "webServer.cwd", f"'webServer.cwd' must name an existing directory, got {cwd}"
                )
        env = (
            self.environment("webServer.env", section["env"])
            if section.get("env") is not None
            else ()
        )
        return WebServerConfig(
            command=command,
            url=url,
            timeout=timeout,
            reuse_existing_server=reuse,
            cwd=cwd,
            env=env,
        )


@functools.cache
def _time_zones() -> frozenset[str]:
    """The IANA time zones this machine knows (none without a time zone database)."""
    return frozenset(zoneinfo.available_timezones())


class _EnvironmentValidator(_Validator):
    """Validates a setting given by an environment variable (``UNOTEST_BASE_URL``): its
    messages name the variable, not a place in the file."""

    def fail(self, key: str, message: str) -> NoReturn:
        raise ConfigError(message)

    def error(self, key: str, expected: str, value: object) -> NoReturn:
        self.fail(key, f"{key} must be {expected}, got {show(value)}")
