"""``unotest doctor``: what a run would use, and what is missing, in one screen."""

from __future__ import annotations

import argparse
import os
import platform
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from runner.browser import describe_browser, resolve_executable
from runner.config import load_config
from runner.errors import UnotestError
from runner.project import Project, ProjectIndex, find_project_root

__all__ = ["doctor_command"]


def _version(package: str) -> str | None:
    try:
        return version(package)
    except PackageNotFoundError:
        return None


def doctor_command(args: argparse.Namespace) -> int:
    problems = 0

    def report(ok: bool, text: str) -> None:
        nonlocal problems
        problems += 0 if ok else 1
        print(f"  {'ok ' if ok else 'ERR'}  {text}")

    print("unotest doctor")
    report(sys.version_info >= (3, 11), f"python {platform.python_version()} ({sys.executable})")
    unotest_version = _version("unotest")
    report(unotest_version is not None, f"unotest {unotest_version or 'not installed'}")
    playwright_version = _version("playwright")
    report(playwright_version is not None, f"playwright {playwright_version or 'not installed'}")

    browser, executable, ws_endpoint, headless = "chromium", None, None, True
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
                print(f"  !    {warning}")
            browser, executable = config.browser, config.executable_path
            ws_endpoint, headless = config.ws_endpoint, config.headless
            if config.web_server is not None:
                server = config.web_server
                print(f"  --   webServer: {server.command} (waits for {server.url})")
        index = ProjectIndex.load(Project(root))
        report(
            not index.errors,
            f"scenarios: {len(index.scenarios)}, helper files: {len(index.helpers)}, "
            f"collections: {len(index.collections)}, problems: {len(index.errors)}"
            + (" (see 'unotest check')" if index.errors else ""),
        )
    line = describe_browser(browser, executable, ws_endpoint, headless=headless)
    found = ws_endpoint is not None
    if not found:
        try:
            resolve_executable(browser, executable, headless=headless)
            found = True
        except UnotestError:
            found = False
    report(found, line)
    print("\nall good" if problems == 0 else f"\n{problems} problem(s)")
    return 0 if problems == 0 else 1
