"""``unotest doctor``: what a run would use, and what is missing, in one screen."""

from __future__ import annotations

import argparse
import os
import platform
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from runner.browser.launch import (
    describe_browser,
    headed_without_display,
    resolve_executable,
    ws_endpoint_unreachable,
)
from runner.errors import UnotestError
from runner.project.config import Config, load_config
from runner.project.index import Project, ProjectIndex, find_project_root
from runner.project.secrets import env_file_warnings
from runner.webserver.server import command_not_found, url_answers
from unotest.console import plural

__all__ = ["doctor_command"]


def _version(package: str) -> str | None:
    try:
        return version(package)
    except PackageNotFoundError:
        return None


@dataclass
class _Browser:
    """The browser a run here would use, as the project's config (or the defaults) say."""

    name: str = "chromium"
    executable: str | None = None
    ws_endpoint: str | None = None
    headless: bool = True
    headed_by: str | None = None


class _Doctor:
    """Each check one line (``ok``, ``ERR``, ``!`` for a warning); problems counted."""

    def __init__(self) -> None:
        self.problems = 0
        self.warnings = 0

    def report(self, ok: bool, text: str) -> None:
        self.problems += 0 if ok else 1
        print(f"  {'ok ' if ok else 'ERR'}  {text}")

    def warn(self, text: str) -> None:
        self.warnings += 1
        print(f"  !    {text}")

    def versions(self) -> None:
        self.report(
            sys.version_info >= (3, 11), f"python {platform.python_version()} ({sys.executable})"
        )
        unotest_version = _version("unotest")
        self.report(unotest_version is not None, f"unotest {unotest_version or 'not installed'}")
        playwright_version = _version("playwright")
        self.report(
            playwright_version is not None, f"playwright {playwright_version or 'not installed'}"
        )

    def project(self, given_root: Path | None) -> _Browser:
        """The project here (or ``--root``), its config, ``.env`` and scenarios; the
        browser its config asks for."""
        try:
            root = find_project_root(Path.cwd(), given_root)
        except UnotestError as err:
            if given_root is not None:
                self.report(False, f"project: {err}")  # asked for one that is not there
            else:
                print(f"  --   project: none here ({err})")
            return _Browser()
        print(f"  ok   project: {root}")
        browser = self.config(root)
        for warning in env_file_warnings(root):
            self.warn(warning)  # what every run will warn about
        index = ProjectIndex.load(Project(root))
        self.report(
            not index.errors,
            f"scenarios: {len(index.scenarios)}, helper files: {len(index.helpers)}, "
            f"collections: {len(index.collections)}, problems: {len(index.errors)}"
            + (" (see 'unotest check')" if index.errors else ""),
        )
        return browser

    def config(self, root: Path) -> _Browser:
        try:
            config = load_config(root, os.environ)
        except UnotestError as err:
            self.report(False, f"config: {err}")
            return _Browser()
        has_file = (root / "unotest.config.yaml").exists()
        said = "unotest.config.yaml is valid" if has_file else "defaults"
        self.report(True, f"config: {said}")
        for warning in config.warnings:
            self.warn(warning)
        _web_server(config, self.report, self.warn)
        return _Browser(
            config.browser,
            config.executable_path,
            config.ws_endpoint,
            config.headless,
            config.headed_by,
        )

    def browser(self, browser: _Browser) -> None:
        """A display for a headed run, a wsEndpoint that answers, or a browser to launch."""
        ws_endpoint, headless = browser.ws_endpoint, browser.headless
        line = describe_browser(browser.name, browser.executable, ws_endpoint, headless=headless)
        no_display = None if headless or ws_endpoint else headed_without_display(browser.headed_by)
        if no_display is not None:
            self.report(False, f"browser: {no_display}")
        found = ws_endpoint is not None
        if ws_endpoint is not None:
            unreachable = ws_endpoint_unreachable(str(ws_endpoint))
            if unreachable is not None:
                found = False
                line += (
                    f": {unreachable}; start the Playwright server there (npx playwright "
                    "run-server --port PORT) or fix wsEndpoint in unotest.config.yaml"
                )
        else:
            try:
                resolve_executable(browser.name, browser.executable, headless=headless)
                found = True
            except UnotestError:
                found = False
        self.report(found, line)

    def summary(self) -> int:
        if self.problems:
            print(f"\n{self.problems} problem(s)")
        elif self.warnings:
            print(f"\nno problems, {plural(self.warnings, 'warning')} (see above)")
        else:
            print("\nall good")
        return 0 if self.problems == 0 else 1


def doctor_command(args: argparse.Namespace) -> int:
    doctor = _Doctor()
    print("unotest doctor")
    doctor.versions()
    doctor.browser(doctor.project(args.root))
    return doctor.summary()


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
