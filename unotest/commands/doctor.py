"""``unotest doctor``: what a run would use, and what is missing, in one screen."""

from __future__ import annotations

import argparse
import os
import platform
import sys
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from runner.browser import (
    describe_browser,
    headed_without_display,
    resolve_executable,
    ws_endpoint_unreachable,
)
from runner.config import Config, load_config
from runner.errors import UnotestError
from runner.project import Project, ProjectIndex, find_project_root
from runner.secrets import env_file_warnings
from runner.webserver import command_not_found, url_answers
from unotest.console import plural

__all__ = ["doctor_command"]


def _version(package: str) -> str | None:
    try:
        return version(package)
    except PackageNotFoundError:
        return None


def doctor_command(args: argparse.Namespace) -> int:
    problems = 0
    warnings = 0

    def report(ok: bool, text: str) -> None:
        nonlocal problems
        problems += 0 if ok else 1
        print(f"  {'ok ' if ok else 'ERR'}  {text}")

    def warn(text: str) -> None:
        nonlocal warnings
        warnings += 1
        print(f"  !    {text}")

    print("unotest doctor")
    report(sys.version_info >= (3, 11), f"python {platform.python_version()} ({sys.executable})")
    unotest_version = _version("unotest")
    report(unotest_version is not None, f"unotest {unotest_version or 'not installed'}")
    playwright_version = _version("playwright")
    report(playwright_version is not None, f"playwright {playwright_version or 'not installed'}")

    browser, executable, ws_endpoint, headless = "chromium", None, None, True
    headed_by: str | None = None
    try:
        root = find_project_root(Path.cwd(), args.root)
    except UnotestError as err:
        if args.root is not None:
            report(False, f"project: {err}")  # asked for one that is not there
        else:
            print(f"  --   project: none here ({err})")
        root = None
    if root is not None:
        print(f"  ok   project: {root}")
        try:
            config = load_config(root, os.environ)
        except UnotestError as err:
            report(False, f"config: {err}")
        else:
            has_file = (root / "unotest.config.yaml").exists()
            report(True, "config: unotest.config.yaml is valid" if has_file else "config: defaults")
            for warning in config.warnings:
                warn(warning)
            browser, executable = config.browser, config.executable_path
            ws_endpoint, headless = config.ws_endpoint, config.headless
            headed_by = config.headed_by
            _web_server(config, report, warn)
        for warning in env_file_warnings(root):
            warn(warning)  # what every run will warn about
        index = ProjectIndex.load(Project(root))
        report(
            not index.errors,
            f"scenarios: {len(index.scenarios)}, helper files: {len(index.helpers)}, "
            f"collections: {len(index.collections)}, problems: {len(index.errors)}"
            + (" (see 'unotest check')" if index.errors else ""),
        )
    line = describe_browser(browser, executable, ws_endpoint, headless=headless)
    no_display = None if headless or ws_endpoint else headed_without_display(headed_by)
    if no_display is not None:
        report(False, f"browser: {no_display}")
    found = ws_endpoint is not None
    if found:
        unreachable = ws_endpoint_unreachable(str(ws_endpoint))
        if unreachable is not None:
            found = False
            line += (
                f": {unreachable}; start the Playwright server there (npx playwright "
                "run-server --port PORT) or fix wsEndpoint in unotest.config.yaml"
            )
    else:
        try:
            resolve_executable(browser, executable, headless=headless)
            found = True
        except UnotestError:
            found = False
    report(found, line)
    if problems:
        print(f"\n{problems} problem(s)")
    elif warnings:
        print(f"\nno problems, {plural(warnings, 'warning')} (see above)")
    else:
        print("\nall good")
    return 0 if problems == 0 else 1


def _web_server(
    config: Config, report: Callable[[bool, str], None], warn: Callable[[str], None]
) -> None:
    """The webServer line, and whether its command's program can be found at all."""
    server = config.web_server
    if server is None:
        return
    print(f"  --   webServer: {server.command} (waits for {server.url})")
    missing = command_not_found(server)
    if missing is None:
        return
    fix = "install what it runs, or fix webServer.command (or cwd) in unotest.config.yaml"
    if server.reuse_existing_server and url_answers(server.url):
        warn(
            f"webServer: {missing}; a server already answers at {server.url} and is "
            f"reused, but a run without it will fail ({fix})"
        )
    else:
        report(False, f"webServer: {missing}: {fix}")
