"""Fixtures the unotest pytest plugin puts over pytest-playwright's when it is on.

A module of its own because it is registered as a plugin only then (see
:func:`unotest.pytest_plugin.pytest_configure`); being registered after
pytest-playwright, each fixture receives pytest-playwright's fixture of the same name.
"""

from __future__ import annotations

from typing import Any

import pytest

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
