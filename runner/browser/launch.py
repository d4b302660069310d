"""Which browser a run uses, and launching or connecting to it.

Resolution order for a local launch: the configured ``executablePath`` → Playwright's
own installed browser (``playwright install chromium``) → for Chromium only, a system
Chromium on ``PATH`` (``chromium``, ``chromium-browser``, ``google-chrome``,
``google-chrome-stable``). When none is found, :class:`BrowserNotFound` says how to
install one.

Playwright's own browsers are found by reading the ``browsers.json`` that ships
with the Playwright package and looking for the executable under the registry
directory (``PLAYWRIGHT_BROWSERS_PATH`` or ``~/.cache/ms-playwright``), exactly where
the Playwright driver would look, without starting the driver.

With ``wsEndpoint`` the browser runs in a Playwright server
(``playwright run-server``); the launch options travel in the
``x-playwright-launch-options`` header. The server honours ``executablePath`` and
``args`` only when it was started with ``--unsafe``; without it, it launches its own
installed browser. So a server on this machine that should use the system Chromium
is started as ``playwright run-server --unsafe --host 127.0.0.1 --port N`` and the
client sends the executable path (the configured ``executablePath``, or, for a
loopback endpoint whose server has no browser of its own, the locally resolved one).
"""

from __future__ import annotations

import importlib.util
import json
import os
import platform
import re
import shutil
import socket
import sys
from collections.abc import Awaitable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from runner.errors import (
    BrowserConnectError,
    BrowserError,
    BrowserLaunchError,
    BrowserNotFound,
    DriverStartError,
    UnotestError,
)
from runner.project.config import BrowserEndpoint, headed_without_display
from runner.protocol import JSONObject

if TYPE_CHECKING:
    from playwright.async_api import Browser, Playwright

__all__ = [
    "BROWSERS",
    "CHROMIUM_ARGS",
    "SYSTEM_CHROMIUM_NAMES",
    "SYSTEM_HEADLESS_SHELL_NAMES",
    "BrowserConnectError",
    "BrowserError",
    "BrowserLaunchError",
    "BrowserNotFound",
    "DriverStartError",
    "describe_browser",
    "headed_without_display",
    "install_hint",
    "launch_browser",
    "playwright_browser_path",
    "resolve_executable",
    "started_driver",
    "ws_endpoint_unreachable",
]

BROWSERS: tuple[str, ...] = ("chromium", "firefox", "webkit")

# The network is closed on CI machines and Chromium must not phone home.
CHROMIUM_ARGS: tuple[str, ...] = (
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)

SYSTEM_CHROMIUM_NAMES: tuple[str, ...] = (
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
)

SYSTEM_HEADLESS_SHELL_NAMES: tuple[str, ...] = (
    "chromium-headless-shell",
    "chrome-headless-shell",
)
"""Tried first for headless runs, as Playwright's own install launches its headless shell:
a full Chromium in headless mode spends about 0.4 s of CPU on each new context's first
renderer, the shell a hundredth of that (Debian packages both)."""

DEFAULT_CONNECT_TIMEOUT_MS = 30_000
DEFAULT_LAUNCH_TIMEOUT_MS = 180_000

_LAUNCH_OPTIONS_HEADER = "x-playwright-launch-options"


def install_hint(browser: str = "chromium") -> str:
    """How to install a browser, as the end of a sentence."""
    own = f"'playwright install {browser}'"
    if browser == "chromium":
        return (
            f"install one with {own} (or '.venv/bin/python -m playwright install chromium'), "
            "or a system Chromium with 'apt-get install chromium chromium-headless-shell', "
            "or set executablePath in unotest.config.yaml"
        )
    return f"install it with {own}, or set executablePath in unotest.config.yaml"


def _check_browser(browser: str) -> None:
    if browser not in BROWSERS:
        raise BrowserError(f"unknown browser {browser!r}: expected one of {', '.join(BROWSERS)}")


# --- Playwright's own installed browsers --------------------------------------------

# Path of the executable inside a browser's directory, per short platform, as in
# playwright-core's registry (EXECUTABLE_PATHS); the older layouts (before Chrome
# for Testing) come second so that an older Playwright is understood too.
_EXECUTABLES: dict[str, dict[str, list[tuple[str, ...]]]] = {
    "chromium": {
        "linux-x64": [("chrome-linux64", "chrome"), ("chrome-linux", "chrome")],
        "linux-arm64": [("chrome-linux-arm64", "chrome"), ("chrome-linux", "chrome")],
        "mac-x64": [
            (
                "chrome-mac-x64",
                "Google Chrome for Testing.app",
                "Contents",
                "MacOS",
                "Google Chrome for Testing",
            ),
            ("chrome-mac", "Chromium.app", "Contents", "MacOS", "Chromium"),
        ],
        "mac-arm64": [
            (
                "chrome-mac-arm64",
                "Google Chrome for Testing.app",
                "Contents",
                "MacOS",
                "Google Chrome for Testing",
            ),
            ("chrome-mac", "Chromium.app", "Contents", "MacOS", "Chromium"),
        ],
        "win-x64": [("chrome-win64", "chrome.exe"), ("chrome-win", "chrome.exe")],
    },
    "chromium-headless-shell": {
        "linux-x64": [
            ("chrome-headless-shell-linux64", "chrome-headless-shell"),
            ("chrome-linux", "headless_shell"),
        ],
        "linux-arm64": [
            ("chrome-headless-shell-linux-arm64", "chrome-headless-shell"),
            ("chrome-linux", "headless_shell"),
        ],
        "mac-x64": [
            ("chrome-headless-shell-mac-x64", "chrome-headless-shell"),
            ("chrome-mac", "headless_shell"),
        ],
        "mac-arm64": [
            ("chrome-headless-shell-mac-arm64", "chrome-headless-shell"),
            ("chrome-mac", "headless_shell"),
        ],
        "win-x64": [
            ("chrome-headless-shell-win64", "chrome-headless-shell.exe"),
            ("chrome-win", "headless_shell.exe"),
        ],
    },
    "firefox": {
        "linux-x64": [("firefox", "firefox")],
        "linux-arm64": [("firefox", "firefox")],
        "mac-x64": [("firefox", "Nightly.app", "Contents", "MacOS", "firefox")],
        "mac-arm64": [("firefox", "Nightly.app", "Contents", "MacOS", "firefox")],
        "win-x64": [("firefox", "firefox.exe")],
    },
    "webkit": {
        "linux-x64": [("pw_run.sh",)],
        "linux-arm64": [("pw_run.sh",)],
        "mac-x64": [("pw_run.sh",)],
        "mac-arm64": [("pw_run.sh",)],
        "win-x64": [("Playwright.exe",)],
    },
}


def _short_platform() -> str | None:
    machine = platform.machine().lower()
    arm = machine in ("arm64", "aarch64")
    if sys.platform.startswith("linux"):
        return "linux-arm64" if arm else "linux-x64"
    if sys.platform == "darwin":
        return "mac-arm64" if arm else "mac-x64"
    if sys.platform == "win32":
        return "win-x64"
    return None


def _playwright_package_dir() -> Path | None:
    try:
        spec = importlib.util.find_spec("playwright")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    return Path(spec.origin).parent


def _registry_directory() -> Path:
    """Where ``playwright install`` puts browsers (playwright-core's registryDirectory)."""
    env = os.environ.get("PLAYWRIGHT_BROWSERS_PATH")
    if env == "0":
        package = _playwright_package_dir()
        base = package / "driver" / "package" if package else Path.cwd()
        return base / ".local-browsers"
    if env:
        path = Path(env).expanduser()
        if not path.is_absolute():
            path = Path(os.environ.get("INIT_CWD") or os.getcwd()) / path
        return path
    if sys.platform == "darwin":
        cache = Path.home() / "Library" / "Caches"
    elif sys.platform == "win32":
        cache = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    else:
        cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "ms-playwright"


def _browser_revisions() -> dict[str, list[str]] | None:
    """Browser name → directory revisions this Playwright expects, from browsers.json."""
    package = _playwright_package_dir()
    if package is None:
        return None
    try:
        data = json.loads(
            (package / "driver" / "package" / "browsers.json").read_text(encoding="utf-8")
        )
        result: dict[str, list[str]] = {}
        for entry in data["browsers"]:
            revisions = [str(entry["revision"])]
            revisions += [str(r) for r in (entry.get("revisionOverrides") or {}).values()]
            result[str(entry["name"])] = revisions
        return result
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _browser_dirs(registry: Path, name: str, revisions: list[str] | None) -> Iterator[Path]:
    prefix = name.replace("-", "_")
    if revisions is None:
        # browsers.json unreadable: any installed revision, newest first.
        found = [p for p in registry.glob(f"{prefix}-*") if p.is_dir()]
        found.sort(key=lambda p: p.name.rsplit("-", 1)[-1].zfill(12), reverse=True)
        yield from found
        return
    for revision in revisions:
        yield registry / f"{prefix}-{revision}"
        # revisionOverrides install into e.g. webkit_mac14_special-2251
        yield from registry.glob(f"{prefix}_*_special-{revision}")


def _installed_executable(name: str) -> str | None:
    """The executable of Playwright's own ``name`` (registry name), if installed."""
    short = _short_platform()
    layouts = _EXECUTABLES.get(name, {}).get(short or "", [])
    if not layouts:
        return None
    revisions = _browser_revisions()
    if revisions is not None and name not in revisions:
        return None
    registry = _registry_directory()
    for directory in _browser_dirs(registry, name, None if revisions is None else revisions[name]):
        for layout in layouts:
            candidate = directory.joinpath(*layout)
            if candidate.is_file():
                return str(candidate)
    return None


def _playwright_registry_names(browser: str, headless: bool) -> list[str]:
    """The registry executables Playwright launches for ``browser``, preferred first."""
    if browser != "chromium":
        return [browser]
    revisions = _browser_revisions()
    has_shell = revisions is None or "chromium-headless-shell" in revisions
    if headless and has_shell:
        return ["chromium-headless-shell", "chromium"]
    return ["chromium"]


def playwright_browser_path(browser: str, *, headless: bool = True) -> str | None:
    """The executable Playwright's own installation provides for this launch, or None.

    Headless Chromium is the headless shell (Playwright ≥ 1.49); a full Chromium
    from ``playwright install --no-shell`` serves too.
    """
    _check_browser(browser)
    for name in _playwright_registry_names(browser, headless):
        found = _installed_executable(name)
        if found:
            return found
    return None


def _playwright_default_installed(browser: str, headless: bool) -> bool:
    """Would ``launch()`` without executable_path find its browser?"""
    first = _playwright_registry_names(browser, headless)[0]
    return _installed_executable(first) is not None


def _system_chromium(headless: bool) -> str | None:
    """The first Chromium on PATH: its headless shell first for a headless run."""
    if headless:
        for name in SYSTEM_HEADLESS_SHELL_NAMES:
            found = shutil.which(name)
            if found:
                return _unwrapped(found)
    for name in SYSTEM_CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


_FORWARDING_LINE = re.compile(r'(?:exec\s+)?(/\S+)\s+"\$@"')


def _unwrapped(path: str) -> str:
    """The program a one-line launcher script runs, or ``path`` itself.

    Debian's ``/usr/bin/chromium-headless-shell`` is ``/bin/sh -e`` running the real
    binary without ``exec``: launched as it is, the browser's main process would be the
    shell's child, out of reach of the signals Playwright sends the process it started.
    """
    try:
        with open(path, "rb") as file:
            head = file.read(4096)
    except OSError:
        return path
    if not head.startswith(b"#!"):
        return path
    text = head.decode("utf-8", "replace")
    commands = [
        line.strip()
        for line in text.splitlines()[1:]
        if line.strip() and not line.lstrip().startswith("#")
    ]
    match = _FORWARDING_LINE.fullmatch(commands[0]) if len(commands) == 1 else None
    if match is None:
        return path
    target = match.group(1)
    return target if os.path.isfile(target) and os.access(target, os.X_OK) else path


def _checked_executable_path(executable_path: str) -> str:
    path = os.path.expanduser(executable_path)
    if not os.path.exists(path):
        raise BrowserNotFound(f"executablePath {executable_path} does not exist")
    if os.path.isdir(path) or not os.access(path, os.X_OK):
        raise BrowserNotFound(f"executablePath {executable_path} is not an executable file")
    return path


def resolve_executable(
    browser: str, executable_path: str | None, *, headless: bool = True
) -> str | None:
    """The ``executable_path`` to launch ``browser`` with.

    None means Playwright's own installed browser is there and Playwright should
    use its default; a string is the executable to pass to ``launch()``. Raises
    :class:`BrowserNotFound` when nothing usable is found.
    """
    _check_browser(browser)
    if executable_path:
        return _checked_executable_path(executable_path)
    if _playwright_default_installed(browser, headless):
        return None
    own = playwright_browser_path(browser, headless=headless)
    if own:  # e.g. only the full Chromium, without the headless shell
        return own
    if browser == "chromium":
        system = _system_chromium(headless)
        if system:
            return system
        shell = None if headless else _system_chromium(True)
        if shell:
            raise BrowserNotFound(
                f"no Chromium for a headed run: the headless shell at {shell} cannot show "
                f"a window: {install_hint('chromium')}"
            )
        raise BrowserNotFound(
            "no Chromium found (neither Playwright's own nor chromium, chromium-browser "
            f"or google-chrome on PATH): {install_hint('chromium')}"
        )
    raise BrowserNotFound(f"Playwright's {browser} is not installed: {install_hint(browser)}")


def describe_browser(
    browser: str,
    executable_path: str | None = None,
    ws_endpoint: str | None = None,
    *,
    headless: bool = True,
) -> str:
    """One line for ``unotest doctor``: which browser a run would use, and why."""
    if browser not in BROWSERS:
        return f"browser: unknown browser {browser!r} (expected {', '.join(BROWSERS)})"
    if ws_endpoint:
        where = f" with executablePath {executable_path}" if executable_path else ""
        shown = BrowserEndpoint(ws_endpoint).shown  # no credentials on the screen
        return f"browser: {browser} from the Playwright server at {shown} (wsEndpoint){where}"
    try:
        resolved = resolve_executable(browser, executable_path, headless=headless)
    except BrowserNotFound as exc:
        return f"browser: {exc}"
    if executable_path:
        return f"browser: {browser} at {resolved} (executablePath)"
    if resolved is None:
        own = playwright_browser_path(browser, headless=headless)
        return f"browser: Playwright's own {browser} at {own}"
    if resolved == playwright_browser_path(browser, headless=headless):
        return f"browser: Playwright's own {browser} at {resolved}"
    kind = "Chromium headless shell" if _is_headless_shell(resolved) else "Chromium"
    return (
        f"browser: system {kind} at {resolved} (found on PATH; Playwright's own is not installed)"
    )


def _is_headless_shell(path: str) -> bool:
    return os.path.basename(path) in SYSTEM_HEADLESS_SHELL_NAMES


# --- launching and connecting ---------------------------------------------------------


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    line = text.splitlines()[0].strip() if text else type(exc).__name__
    for prefix in ("BrowserType.launch: ", "BrowserType.connect: "):
        if line.startswith(prefix):
            line = line[len(prefix) :]
    return line.rstrip(".")


def _is_missing_executable(exc: BaseException) -> bool:
    return "Executable doesn't exist" in str(exc)


def ws_endpoint_unreachable(ws_endpoint: str, timeout_s: float = 2.0) -> str | None:
    """Why nothing accepts a TCP connection at ``ws_endpoint``'s host and port (for
    ``unotest doctor``: cheap, no Playwright), or None when something does."""
    try:
        parts = urlsplit(ws_endpoint)
        host = parts.hostname or ""
        port = parts.port or (443 if parts.scheme == "wss" else 80)
    except ValueError:
        return f"{ws_endpoint} is not a ws:// URL"
    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return None
    except socket.gaierror:
        return f"the host {host} is unknown"
    except TimeoutError:
        return f"nothing answered at {where} within {timeout_s:g} s"
    except OSError as err:
        return f"nothing answers at {where} ({err.strerror or err})"


def _is_loopback(ws_endpoint: str) -> bool:
    try:
        host = urlsplit(ws_endpoint).hostname or ""
    except ValueError:
        return False
    return host in ("localhost", "::1") or host.startswith("127.") or host.endswith(".localhost")


async def started_driver(start: Awaitable[Playwright]) -> Playwright:
    """Playwright's driver, once ``start`` (``async_playwright().start()``, begun here or
    early) is done. A driver that ends before it is ready leaves the client with only
    "Connection closed while reading from the driver", which would reach the user as an
    internal error; it is one sentence instead (:class:`DriverStartError`). The driver
    prints its own reason on stderr, and the usual one is a ``NODE_OPTIONS`` it refuses,
    so that is named when it is set."""
    try:
        return await start
    except UnotestError:
        raise
    except Exception as exc:
        options = os.environ.get("NODE_OPTIONS", "").strip()
        hint = f" (NODE_OPTIONS is {options!r}: Node refuses some options there)" if options else ""
        raise DriverStartError(
            f"Playwright's driver (its Node process) did not start: {_first_line(exc)}{hint}"
        ) from None


async def launch_browser(
    playwright: Playwright,
    *,
    browser: str,
    headless: bool,
    executable_path: str | None,
    ws_endpoint: str | None,
    slow_mo: float = 0,
    timeout_ms: float | None = None,
    headed_by: str | None = None,
    ws_headers: Sequence[tuple[str, str]] = (),
) -> Browser:
    """Launch ``browser`` locally, or connect to the Playwright server at ``ws_endpoint``
    (with ``ws_headers``, an endpoint's own: a token, say).

    Signals are left to the runner (``handle_sig*=False``). Failures are one-sentence
    :class:`BrowserError` messages, never Playwright's call log, naming the endpoint
    without its credentials. ``headed_by`` (``Config.headed_by``) names what made a
    headed run headed when it cannot start.
    """
    _check_browser(browser)
    if ws_endpoint:
        return await _connect(
            playwright,
            browser=browser,
            headless=headless,
            executable_path=executable_path,
            ws_endpoint=ws_endpoint,
            ws_headers=ws_headers,
            slow_mo=slow_mo,
            timeout_ms=DEFAULT_CONNECT_TIMEOUT_MS if timeout_ms is None else timeout_ms,
        )
    from playwright.async_api import Error as PlaywrightError

    no_display = None if headless else headed_without_display(headed_by)
    if no_display is not None:
        # Chromium only says "Target page, context or browser has been closed".
        raise BrowserLaunchError(no_display)
    resolved = resolve_executable(browser, executable_path, headless=headless)
    args = list(CHROMIUM_ARGS) if browser == "chromium" else []
    where = resolved if resolved else f"Playwright's own {browser}"
    try:
        return await getattr(playwright, browser).launch(  # type: ignore[no-any-return]
            executable_path=resolved,
            args=args,
            headless=headless,
            slow_mo=slow_mo,
            timeout=DEFAULT_LAUNCH_TIMEOUT_MS if timeout_ms is None else timeout_ms,
            handle_sigint=False,
            handle_sigterm=False,
            handle_sighup=False,
        )
    except PlaywrightError as exc:
        if resolved is None and _is_missing_executable(exc):
            raise BrowserNotFound(
                f"Playwright's {browser} is not installed: {install_hint(browser)}"
            ) from None
        raise BrowserLaunchError(
            f"could not launch {browser} ({where}): {_first_line(exc)}"
        ) from None


async def _connect(
    playwright: Playwright,
    *,
    browser: str,
    headless: bool,
    executable_path: str | None,
    ws_endpoint: str,
    ws_headers: Sequence[tuple[str, str]],
    slow_mo: float,
    timeout_ms: float,
) -> Browser:
    from playwright.async_api import Error as PlaywrightError

    shown = BrowserEndpoint(ws_endpoint).shown

    async def attempt(executable: str | None) -> Browser:
        options: JSONObject = {"headless": headless}
        if browser == "chromium":
            options["args"] = list(CHROMIUM_ARGS)
        if executable:
            options["executablePath"] = executable
        return await getattr(playwright, browser).connect(  # type: ignore[no-any-return]
            ws_endpoint,
            headers={**dict(ws_headers), _LAUNCH_OPTIONS_HEADER: json.dumps(options)},
            slow_mo=slow_mo,
            timeout=timeout_ms,
        )

    try:
        return await attempt(executable_path)
    except PlaywrightError as exc:
        first = exc
    if _is_missing_executable(first) and not executable_path and _is_loopback(ws_endpoint):
        # The server is on this machine and has no browser of its own: offer ours
        # (honoured when the server runs with --unsafe).
        try:
            local = resolve_executable(browser, None, headless=headless) or (
                playwright_browser_path(browser, headless=headless)
            )
        except BrowserNotFound:
            local = None
        if local:
            try:
                return await attempt(local)
            except PlaywrightError as exc:
                first = exc
    if _is_missing_executable(first):
        raise BrowserConnectError(
            f"the Playwright server at {shown} has no {browser} to launch: install "
            f"one there with 'playwright install {browser}', or start the server with "
            "'playwright run-server --unsafe' so that it accepts executablePath"
        ) from None
    raise BrowserConnectError(
        f"could not connect to the Playwright server at {shown} (wsEndpoint): "
        f"{_first_line(first).replace(ws_endpoint, shown)}"
    ) from None
