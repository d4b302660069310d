"""Fixtures the unotest pytest plugin puts over pytest-playwright's when it is on.

A module of its own because it is registered as a plugin only then (see
:func:`unotest.pytest_plugin.pytest_configure`); being registered after
pytest-playwright, each fixture receives pytest-playwright's fixture of the same name.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from runner.errors import ConfigError
from runner.project.emulation import read_storage_state, storage_secrets
from unotest.pytest_state import plugin_state


@pytest.fixture(scope="session")
def base_url(base_url: str | None, pytestconfig: pytest.Config) -> str | None:
    """``--base-url`` first (pytest-playwright's), then the project's ``baseURL``: one
    address for scenarios and ordinary tests alike."""
    return base_url or plugin_state(pytestconfig).config.base_url


@pytest.fixture(scope="session")
def browser_type_launch_args(
    browser_type_launch_args: dict[str, Any], browser_name: str, pytestconfig: pytest.Config
) -> dict[str, Any]:
    """The Chromium ``unotest e2e`` would launch (``executablePath``, else Playwright's
    own, else a system Chromium with unotest's launch flags); pytest-playwright's options
    are kept, and an ``executable_path`` or ``channel`` someone chose wins."""
    # The dict is pytest-playwright's (untyped there): keyword arguments for BrowserType.launch.
    args = dict(browser_type_launch_args)
    if browser_name != "chromium" or "executable_path" in args or "channel" in args:
        return args
    from runner.browser.launch import CHROMIUM_ARGS, resolve_executable
    from runner.errors import BrowserNotFound

    try:
        path = resolve_executable(
            "chromium",
            plugin_state(pytestconfig).config.executable_path,
            headless=bool(args.get("headless", True)),
        )
    except BrowserNotFound:
        return args  # pytest-playwright says what is missing, in its own words
    if path is None:
        return args  # Playwright's own Chromium: nothing to change
    args["executable_path"] = path
    args["args"] = [*args.get("args", []), *CHROMIUM_ARGS]
    return args


@pytest.fixture(scope="session")
def browser_context_args(
    browser_context_args: dict[str, Any], playwright: Any, pytestconfig: pytest.Config
) -> dict[str, Any]:
    """The project's context options (``device``, ``locale``, ``timezoneId``,
    ``geolocation``, ``permissions``, ``colorScheme``, ``userAgent``, ``extraHTTPHeaders``)
    under pytest-playwright's: what a page computes from them (dates, media queries, the
    headers a server sees) is what a scenario asserts, so it must hold under pytest as
    under ``unotest e2e``. ``--device`` replaces the project's ``device``, and a key
    pytest-playwright or a ``conftest.py`` sets wins (``viewport`` stays theirs). The
    config's ``storageState`` seeds every context too, read when the session starts
    (written before it, as Playwright's global setup writes it)."""
    state = plugin_state(pytestconfig)
    emulation = state.config.emulation
    if pytestconfig.getoption("--device", None):
        emulation = replace(emulation, device=None)
    # ``playwright`` is pytest-playwright's sync Playwright (untyped there).
    ours: dict[str, Any] = emulation.context_options(lambda: playwright.devices)
    storage = state.config.storage_state
    if storage is not None:
        try:
            seeded = read_storage_state(state.project.root, storage)
            ours["storage_state"] = seeded
            state.seeded_secrets = storage_secrets(seeded)
        except ConfigError as err:
            pytest.fail(f"unotest: {err}", pytrace=False)
    return {**ours, **browser_context_args}
