"""``unotest.config.yaml``, validated once into a frozen :class:`Config` (runner.md §7).

Everything the runner needs from the configuration file is checked here, before a
browser starts, so a typo fails fast with one sentence that names the file, the key
path (``timeout.action``) and what was expected, instead of surfacing minutes later as
a Playwright error far from its cause. Unknown keys are only warnings (with a
did-you-mean), so a config written for a newer unotest still runs.

The file is plain data: it is read with ``yaml.safe_load`` only, and anchors, aliases
and explicit tags (``!!python/...``) are refused before anything is constructed, so a
"billion laughs" file cannot blow up memory and no tag can run code.

Two YAML 1.1 surprises are handled on purpose: unquoted ``on``/``off`` are booleans,
so ``trace: off`` (as runner.md §5 writes it) means ``"off"``; and an empty value
(``baseURL:``) means "not set" for the keys whose default is "not set", and is an error
elsewhere.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal, NoReturn, TypeVar
from urllib.parse import urlsplit

import yaml

from runner.errors import ConfigError
from runner.project.root import CONFIG_FILE, misnamed_config_warnings
from runner.project.yaml_depth import yaml_flow_too_deep
from runner.text import did_you_mean

__all__ = [
    "CONFIG_FILE",
    "Config",
    "DebugConfig",
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

MAX_CONFIG_BYTES = 1024 * 1024
MAX_YAML_DEPTH = 32
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
    places: _Places = {}
    data = _read_yaml(path, warnings, places) if os.path.lexists(path) else {}
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
                f"UNOTEST_HEADED={_show(headed)} is ignored: use 1 to run headed, 0 or unset "
                "to follow the config"
            )
    return replace(config, warnings=tuple(warnings))


# --- reading -------------------------------------------------------------------------


def _fail(message: str) -> NoReturn:
    raise ConfigError(f"{CONFIG_FILE}: {message}")


_Places = dict[str, tuple[int, int]]
"""Where each setting is written, by its dotted name (``timeout.expect``), and under
``key:`` plus that name where its key is: line 1-based, column 0-based."""


def _read_yaml(path: Path, warnings: list[str], places: _Places) -> dict[object, object]:
    try:
        if not path.is_file():
            _fail("not a regular file; the configuration is a YAML file")
        size = path.stat().st_size
        if size > MAX_CONFIG_BYTES:
            _fail(f"the file is {size:,} bytes; a configuration may be {MAX_CONFIG_BYTES:,}")
        raw = path.read_bytes()
    except OSError as err:
        _fail(f"cannot read the file: {err.strerror or err}")
    try:
        source = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        _fail(
            f"the file is not UTF-8 text (byte 0x{raw[err.start]:02x} on line {line}): "
            "save it as UTF-8"
        )
    if "\0" in source:
        _fail("this is a binary file; the configuration is UTF-8 YAML text")

    too_deep = yaml_flow_too_deep(source, MAX_YAML_DEPTH)
    if too_deep is not None:
        line, col = too_deep
        raise ConfigError(f"{CONFIG_FILE}:{line}:{col}: the configuration is nested too deeply")
    try:
        _refuse_unsafe_yaml(source)
        node = yaml.compose(source, Loader=yaml.SafeLoader)
        data = yaml.safe_load(source)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
        where = f":{mark.line + 1}:{mark.column}" if mark is not None else ""
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise ConfigError(f"{CONFIG_FILE}{where}: invalid YAML: {problem}") from None
    except RecursionError:
        _fail("invalid YAML: nested too deeply")
    except ValueError as err:
        # int() of a number with more than 4,300 digits (sys.get_int_max_str_digits).
        _fail(f"invalid YAML: a value cannot be read ({err.args[0].split(':')[0]})")

    if node is not None:
        _warn_repeated_keys(node, "", warnings)
        places.update(_places(node, ""))
    if data is None:
        return {}
    if not isinstance(data, dict):
        _fail(f"the configuration must be a mapping of settings (key: value), got {_show(data)}")
    return data


def _refuse_unsafe_yaml(source: str) -> None:
    """Refuse anchors, aliases, explicit tags and deep nesting before constructing.

    Walks the parser's event stream, so nothing is built: a billion-laughs file stops
    at its first anchor and a ``!!python/object/apply`` tag is never resolved.
    """
    depth = 0
    for event in yaml.parse(source, Loader=yaml.SafeLoader):
        mark = event.start_mark
        at = f"{CONFIG_FILE}:{mark.line + 1}:{mark.column}" if mark else CONFIG_FILE
        if isinstance(event, yaml.AliasEvent):
            raise ConfigError(
                f"{at}: YAML aliases ('*{event.anchor}') are not allowed in the "
                "configuration: write the value out"
            )
        if isinstance(event, yaml.NodeEvent) and event.anchor is not None:
            raise ConfigError(
                f"{at}: YAML anchors ('&{event.anchor}') are not allowed in the "
                "configuration: write the value out"
            )
        # The parser reports a tag only where the file writes one (`!!str`, `!foo`).
        tag = getattr(event, "tag", None)
        if isinstance(event, yaml.ScalarEvent | yaml.CollectionStartEvent) and tag:
            shown = tag.replace("tag:yaml.org,2002:", "!!")
            raise ConfigError(
                f"{at}: the YAML tag '{shown}' is not allowed in the configuration "
                "(it is plain YAML)"
            )
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_YAML_DEPTH:
                raise ConfigError(f"{at}: the configuration is nested too deeply")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _warn_repeated_keys(node: yaml.Node, prefix: str, warnings: list[str]) -> None:
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                continue
            key = str(key_node.value)
            line = key_node.start_mark.line + 1
            if key in seen:
                warnings.append(
                    f"{CONFIG_FILE}:{line}: key '{prefix}{key}' is repeated (first at line "
                    f"{seen[key]}); the last one is used"
                )
            seen[key] = line
            _warn_repeated_keys(value_node, f"{prefix}{key}.", warnings)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _warn_repeated_keys(item, prefix, warnings)


def _places(node: yaml.Node, prefix: str) -> _Places:
    """Every setting's place in the file, so that a message can point at it (the last
    of a repeated key, as the loaded value is)."""
    found: _Places = {}
    if not isinstance(node, yaml.MappingNode):
        return found
    for key_node, value_node in node.value:
        if not isinstance(key_node, yaml.ScalarNode):
            continue
        name = f"{prefix}{key_node.value}"
        found[f"key:{name}"] = (key_node.start_mark.line + 1, key_node.start_mark.column)
        found[name] = (value_node.start_mark.line + 1, value_node.start_mark.column)
        found.update(_places(value_node, f"{name}."))
    return found


# --- validating ----------------------------------------------------------------------


def _show(value: object) -> str:
    """A value as the message shows it: strings quoted, YAML words for the rest."""
    if value is None:
        return "nothing (an empty value)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        text = value if len(value) <= 60 else value[:57] + "..."
        return json.dumps(text, ensure_ascii=False)
    if isinstance(value, int) and abs(value).bit_length() > 64:
        # repr() of an int with more than 4300 digits raises ValueError.
        return f"a number of about {int(abs(value).bit_length() * 0.30103) + 1} digits"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return f"a {type(value).__name__} ({str(value)[:40]})"


class _Validator:
    def __init__(
        self,
        root: Path,
        warnings: list[str],
        on_this_machine: bool = True,
        places: _Places | None = None,
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
            _fail(message)
        raise ConfigError(f"{CONFIG_FILE}:{place[0]}:{place[1]}: {message}")

    def error(self, key: str, expected: str, value: object) -> NoReturn:
        self.fail(key, f"'{key}' must be {expected}, got {_show(value)}")

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
            name = key if isinstance(key, str) else _show(key)
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
            self.fail(key, f"'{key}' must not contain a NUL character (\\0), got {_show(value)}")
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
                key, f"'{key}' must be {expected} without control characters, got {_show(value)}"
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
        self.fail(key, f"'{key}' must be one of {', '.join(choices)}, got {_show(value)}{hint}")

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
                    f"starting with a digit), got {_show(name)}",
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
        self.fail(key, f"{key} must be {expected}, got {_show(value)}")
