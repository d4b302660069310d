"""``unotest.config.yaml``, validated once into a frozen :class:`Config`.

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

``storageState`` (a project file seeding every new context's cookies and local
storage, Playwright's ``use: {storageState}``) is checked to stay inside the project
here, and read when each context is made (``runner.project.emulation``). A
collection may set the context's keys again for its scenarios (:func:`with_collection`).

``wsEndpoint`` is one Playwright server's URL, or a list of them (each a URL or
``{url, capacity, headers}``: :class:`BrowserEndpoint`), the browser pool a
collection's workers are spread over (``runner.workers.pool``).

Two YAML 1.1 surprises are handled on purpose: unquoted ``on``/``off`` are booleans,
so ``trace: off`` means ``"off"``; and an empty value
(``baseURL:``) means "not set" for the keys whose default is "not set", and is an error
elsewhere.
"""

from __future__ import annotations

import math
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal, NoReturn
from urllib.parse import urlsplit

from runner.errors import ConfigError
from runner.project.collection_file import CollectionUse
from runner.project.config_file import Places, read_yaml, show
from runner.project.emulation import (
    DEFAULT_VIEWPORT,
    EMULATION_KEYS,
    HEADER_NAME,
    MAX_VIEWPORT_PX,
    Emulation,
    Geolocation,
    SettingChecks,
    StorageState,
)
from runner.project.root import CONFIG_FILE, misnamed_config_warnings

__all__ = [
    "CONFIG_FILE",
    "MAX_ENDPOINTS",
    "MAX_VIEWPORT_PX",
    "BrowserEndpoint",
    "CollectionUse",
    "Config",
    "DebugConfig",
    "Emulation",
    "Geolocation",
    "HeadedBy",
    "HistoryConfig",
    "PageImagesConfig",
    "StorageState",
    "Timeouts",
    "WebServerConfig",
    "headed_without_display",
    "load_config",
    "with_collection",
]

Browser = Literal["chromium", "firefox", "webkit"]
Trace = Literal["on-failure", "on", "off"]
HeadedBy = Literal["config", "UNOTEST_HEADED", "--headed"]
"""What made a run headed: ``headless: false`` in the file, the environment variable,
or the command line (a collection's workers learn it through ``UNOTEST_HEADED_BY``)."""

BROWSERS: tuple[Browser, ...] = ("chromium", "firefox", "webkit")
TRACES: tuple[Trace, ...] = ("on-failure", "on", "off")
StepImages = Literal["on-debug", "on", "off"]
STEP_IMAGES: tuple[StepImages, ...] = ("on-debug", "on", "off")

# Node's timers (and so Playwright's) treat a delay above 2^31 - 1 ms as 1 ms.
MAX_TIMEOUT_MS = 2**31 - 1

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
    "storageState",
    "pageImages",
    *EMULATION_KEYS,
)
_TIMEOUT_KEYS = ("action", "expect", "navigation", "scenario")
_WEB_SERVER_KEYS = ("command", "url", "timeout", "reuseExistingServer", "cwd", "env")
_DEBUG_KEYS = ("idleTimeout",)
_HISTORY_KEYS = ("maxAgeDays", "maxBytes")
_PAGE_IMAGES_KEYS = ("steps", "width")
_ENDPOINT_KEYS = ("url", "capacity", "headers")
MAX_ENDPOINTS = 64
"""The most endpoints ``wsEndpoint`` lists, and the most browsers one of them holds."""
_LAUNCH_OPTIONS_HEADER = "x-playwright-launch-options"
# Retrying more than this many times hides a broken scenario rather than a flaky one.
MAX_RETRIES = 10
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

_HEADED_ON = ("1", "true", "yes", "on")
_HEADED_OFF = ("", "0", "false", "no", "off")
BASE_URL_ENV = "UNOTEST_BASE_URL"
TRACE_ENV = "UNOTEST_TRACE"
"""``on``, ``off`` or ``on-failure``: replaces the config's ``trace`` (``--trace`` of
``unotest e2e`` and ``unotest collection``; a collection's workers learn it so)."""
HEADED_BY_ENV = "UNOTEST_HEADED_BY"
"""Set with ``UNOTEST_HEADED=1`` by a collection run with ``--headed`` for its workers,
so that a message about the headed run names the option the user gave."""


def _has_display() -> bool:
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


_HEADED_BY = {
    "config": ("'headless: false' in unotest.config.yaml", "set 'headless: true' there"),
    "UNOTEST_HEADED": ("UNOTEST_HEADED", "unset it"),
    "--headed": ("--headed", "leave it out"),
    "request": ("the run's 'headed' option", "start it without 'headed'"),
}


def headed_without_display(headed_by: str | None) -> str | None:
    """Why a headed run cannot start here (Linux needs ``DISPLAY`` or
    ``WAYLAND_DISPLAY``), naming what made it headed (:data:`HeadedBy`, or ``request``:
    a front end's run) and how to run headless; None if it can. Asked before a browser
    launches, by ``doctor``, and by ``runner.launch.start`` before a front end's run
    exists, so a run that could never show its browser is not recorded as failed."""
    if not sys.platform.startswith("linux") or _has_display():
        return None
    cause, undo = _HEADED_BY.get(headed_by or "", ("", ""))
    because = f" (headed because of {cause})" if cause else ""
    fix = f"{undo} to run headless" if undo else "run it headless"
    return (
        "a headed run needs a display and neither DISPLAY nor WAYLAND_DISPLAY is set"
        f"{because}: {fix}, or run under a virtual display (xvfb-run unotest ...)"
    )


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
class PageImagesConfig:
    """The ``pageImages:`` section: the page as a JPEG after each step, for the viewer's
    Steps (``steps``: ``on-debug`` only in a run under the debugger, ``on`` in every
    run, ``off``), ``width`` pixels wide. A pause always keeps its image: a person
    looks at it."""

    steps: StepImages = "on-debug"
    width: int = 800


@dataclass(frozen=True)
class HistoryConfig:
    """The ``history:`` section: how long and how much ``unotest/.history/`` keeps.

    Both bounds apply after every write, oldest file first, so the folder never grows
    without limit however often the suite runs (``0`` for either turns it off).
    """

    max_age_days: int = 30
    max_bytes: int = 20 * 1024 * 1024


@dataclass(frozen=True)
class BrowserEndpoint:
    """One Playwright server (``playwright run-server``, a browser grid's endpoint) of
    ``wsEndpoint``: its ``url``, how many workers' browsers it holds at once
    (``capacity``; None: as many as the collection has workers), and ``headers`` sent
    when connecting (a token, say; never shown anywhere)."""

    url: str
    capacity: int | None = None
    headers: tuple[tuple[str, str], ...] = ()

    @property
    def shown(self) -> str:
        """The URL as manifests, reports and the console show it: without a user and
        password, a query or a fragment, where credentials usually travel."""
        parts = urlsplit(self.url)
        host = parts.hostname or ""
        host = f"[{host}]" if ":" in host else host
        port = f":{parts.port}" if parts.port is not None else ""
        return f"{parts.scheme}://{host}{port}{parts.path or '/'}"


@dataclass(frozen=True)
class Config:
    """The validated configuration; ``warnings`` holds what was ignored (unknown keys, a
    misnamed file). ``headed_by``: why ``headless`` is false, when it is."""

    root: Path
    runner: str | None = None
    base_url: str | None = None
    browser: Browser = "chromium"
    headless: bool = True
    viewport: tuple[int, int] = DEFAULT_VIEWPORT
    timeouts: Timeouts = Timeouts()
    trace: Trace = "on-failure"
    executable_path: str | None = None
    ws_endpoint: str | None = None
    """``wsEndpoint``'s URL; with a list, its first endpoint's (what a single run uses)."""
    ws_pool: tuple[BrowserEndpoint, ...] = ()
    """``wsEndpoint`` written as a list (or one ``{url, ...}`` mapping): every endpoint
    of the pool; empty for a plain URL (:attr:`endpoints` has it then)."""
    web_server: WebServerConfig | None = None
    debug: DebugConfig = DebugConfig()
    retries: int = 0
    history: HistoryConfig = HistoryConfig()
    page_images: PageImagesConfig = PageImagesConfig()
    emulation: Emulation = field(default_factory=Emulation)
    storage_state: StorageState | None = None
    """``storageState``: the file seeding every new context's cookies and local storage."""
    warnings: tuple[str, ...] = ()
    headed_by: HeadedBy | None = None

    @property
    def endpoints(self) -> tuple[BrowserEndpoint, ...]:
        """The browser pool: every endpoint of ``wsEndpoint`` (one for a plain URL), or
        none when browsers are launched here."""
        if self.ws_pool:
            return self.ws_pool
        return (BrowserEndpoint(self.ws_endpoint),) if self.ws_endpoint else ()


def load_config(root: Path, environ: Mapping[str, str], *, on_this_machine: bool = True) -> Config:
    """The configuration of the project at ``root``; defaults when there is no file.

    Raises :class:`ConfigError` (one sentence) for anything that cannot be used.
    ``UNOTEST_HEADED=1`` in ``environ`` runs headed whatever the file says, and
    ``UNOTEST_BASE_URL`` replaces its ``baseURL`` (validated the same way), and
    ``UNOTEST_TRACE`` its ``trace`` (``on``, ``off``, ``on-failure``). Without
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
    trace = environ.get(TRACE_ENV)
    if trace is not None and trace.strip():
        chosen = _EnvironmentValidator(root, warnings).choice(TRACE_ENV, trace.strip(), TRACES)
        config = replace(config, trace=chosen)
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


def with_collection(config: Config, use: CollectionUse, *, setup: bool = False) -> Config:
    """``config`` for a scenario of a collection that sets context keys of its own
    (``use``): each key the collection sets replaces the config's, the others stay
    (:meth:`CollectionUse.emulation_over` for a device's viewport and user agent).

    ``setup``: the scenario is one of the collection's ``setup:`` scenarios, which write
    the storage state the others start from, so no ``storageState`` applies to it (the
    config's nor the collection's): it would ask for the file it is about to write. A
    ``storageState`` of the config used by a collection with setup scenarios names
    them in the message of a missing file, as the collection's own does."""
    storage = use.storage_state if "storageState" in use.given else config.storage_state
    if storage is not None and use.setup and not storage.written_by:
        storage = replace(storage, written_by=use.setup)
    return replace(
        config,
        viewport=use.viewport if use.viewport is not None else config.viewport,
        emulation=use.emulation_over(config.emulation),
        storage_state=None if setup else storage,
    )


# --- reading -------------------------------------------------------------------------


# --- validating ----------------------------------------------------------------------


class _Validator(SettingChecks):
    """The config file's sections, over the checks it shares with collection files
    (:class:`SettingChecks`: the browser context's settings, and the helpers)."""

    def __init__(
        self,
        root: Path,
        warnings: list[str],
        on_this_machine: bool = True,
        places: Places | None = None,
    ) -> None:
        super().__init__(CONFIG_FILE, places or {}, warnings, root)
        self.on_this_machine = on_this_machine

    # helpers

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
        ws_endpoint, ws_pool = (
            self.ws_endpoints(top["wsEndpoint"]) if given("wsEndpoint") else (None, ())
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
            ws_endpoint=ws_endpoint,
            ws_pool=ws_pool,
            web_server=self.web_server(top["webServer"]) if given("webServer") else None,
            debug=self.debug(top["debug"]) if "debug" in top else default.debug,
            retries=self.count("retries", top["retries"], MAX_RETRIES) if given("retries") else 0,
            history=self.history(top["history"]) if "history" in top else default.history,
            page_images=(
                self.page_images(top["pageImages"])
                if "pageImages" in top
                else default.page_images
            ),
            emulation=self.emulation(top),
            storage_state=(
                self.storage_state(top["storageState"]) if given("storageState") else None
            ),
        )

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

    def page_images(self, value: object) -> PageImagesConfig:
        section = self.mapping(
            value,
            "pageImages",
            _PAGE_IMAGES_KEYS,
            "a mapping with 'steps' (on-debug, on or off) and/or 'width' in pixels",
        )
        default = PageImagesConfig()
        steps = section.get("steps", default.steps)
        if isinstance(steps, bool):  # YAML 1.1's unquoted on/off
            steps = "on" if steps else "off"
        width = section.get("width", default.width)
        if isinstance(width, bool) or not isinstance(width, int) or not 200 <= width <= 4000:
            self.error("pageImages.width", "a whole number of pixels from 200 to 4000", width)
        return PageImagesConfig(self.choice("pageImages.steps", steps, STEP_IMAGES), width)

    def ws_endpoints(self, value: object) -> tuple[str, tuple[BrowserEndpoint, ...]]:
        """``wsEndpoint``: a URL (no pool of its own), or a list of endpoints (or one
        ``{url, capacity, headers}``): the first endpoint's URL and the pool."""
        if isinstance(value, str):
            return self.url("wsEndpoint", value, ("ws", "wss")), ()
        if isinstance(value, dict):
            endpoint = self.endpoint("wsEndpoint", value)
            return endpoint.url, (endpoint,)
        if value == []:
            self.fail(
                "wsEndpoint",
                "'wsEndpoint' is an empty list: list at least one endpoint, or leave it out "
                "to launch browsers on this machine",
            )
        if not isinstance(value, list):
            self.error(
                "wsEndpoint",
                "a ws:// or wss:// URL, or a list of endpoints (each a URL or "
                "{url, capacity, headers})",
                value,
            )
        if len(value) > MAX_ENDPOINTS:
            self.fail("wsEndpoint", f"'wsEndpoint' lists at most {MAX_ENDPOINTS} endpoints")
        pool: list[BrowserEndpoint] = []
        for position, item in enumerate(value):
            key = f"wsEndpoint[{position}]"
            endpoint = self.endpoint(key, item)
            first = next((i for i, e in enumerate(pool) if e.url == endpoint.url), None)
            if first is not None:
                self.fail(
                    key,
                    f"'{key}' repeats wsEndpoint[{first}] ({endpoint.shown}): list each "
                    "server once and give it a capacity instead",
                )
            pool.append(endpoint)
        return pool[0].url, tuple(pool)

    def endpoint(self, key: str, value: object) -> BrowserEndpoint:
        """One endpoint of the pool: a URL, or ``{url, capacity, headers}``."""
        if isinstance(value, str):
            return BrowserEndpoint(self.url(key, value, ("ws", "wss")))
        section = self.mapping(
            value,
            key,
            _ENDPOINT_KEYS,
            "a ws:// URL or a mapping with 'url' (and optional 'capacity', 'headers')",
        )
        if section.get("url") is None:
            self.fail(key, f"'{key}.url' is missing: each endpoint needs its ws:// URL")
        url = self.url(f"{key}.url", section["url"], ("ws", "wss"))
        capacity = section.get("capacity")
        if capacity is not None and (
            isinstance(capacity, bool)
            or not isinstance(capacity, int)
            or not 1 <= capacity <= MAX_ENDPOINTS
        ):
            self.error(
                f"{key}.capacity", f"a whole number of browsers from 1 to {MAX_ENDPOINTS}", capacity
            )
        headers = section.get("headers")
        return BrowserEndpoint(
            url, capacity, self.connect_headers(f"{key}.headers", headers) if headers else ()
        )

    def connect_headers(self, key: str, value: object) -> tuple[tuple[str, str], ...]:
        """Headers sent when connecting to an endpoint; their values are never shown (a
        token is the usual one), nor may they replace the launch options unotest sends."""
        if not isinstance(value, dict):
            self.error(key, "a mapping of header names to values (Name: value)", value)
        pairs: list[tuple[str, str]] = []
        for name, item in value.items():
            if not isinstance(name, str) or not HEADER_NAME.fullmatch(name):
                self.fail(
                    f"{key}.{name}" if isinstance(name, str) else key,
                    f"'{key}' names must be HTTP header names (letters, digits and "
                    f"!#$%&'*+.^_`|~-), got {show(name)}",
                )
            setting = f"{key}.{name}"
            if name.lower() == _LAUNCH_OPTIONS_HEADER:
                self.fail(
                    setting,
                    f"'{setting}' cannot be set: unotest sends the browser's launch options "
                    "in that header itself",
                )
            if isinstance(item, bool) or not isinstance(item, str | int):
                self.fail(setting, f"'{setting}' must be a string")
            text = str(item)
            if not text.strip() or any(
                (ord(ch) < 0x20 and ch != "\t") or ord(ch) == 0x7F for ch in text
            ):
                # Its value is not shown: it is likely a secret.
                self.fail(
                    setting,
                    f"'{setting}' must be one line of text without control characters",
                )
            pairs.append((name, text))
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


class _EnvironmentValidator(_Validator):
    """Validates a setting given by an environment variable (``UNOTEST_BASE_URL``): its
    messages name the variable, not a place in the file."""

    def fail(self, key: str, message: str) -> NoReturn:
        raise ConfigError(message)

    def error(self, key: str, expected: str, value: object) -> NoReturn:
        self.fail(key, f"{key} must be {expected}, got {show(value)}")
