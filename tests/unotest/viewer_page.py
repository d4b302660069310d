"""Shared helpers of the viewer page's tests (real Chromium on a real ``unotest view``).

Imported as ``from viewer_page import ...`` (pytest puts this folder on sys.path):

- ``page_project(root, scenarios=..., helpers=..., collections=..., env=...)`` writes a
  small test project whose ``baseURL`` is a site served by the test (``served_site``);
- ``running_viewer(root)`` starts ``python -m unotest view --no-open --port 0`` on it and
  yields a ``Viewer`` (``.url`` with the token, ``.base``, ``.token``,
  ``.api(method, path, body=None)``), stopping it afterwards;
- ``guard_page(page)`` records every ``pageerror`` and console error of a page;
  ``guard.check()`` fails the test if any occurred (call it at the end);
- ``browser_type_launch_args``: import it into a test module
  (``from viewer_page import browser_type_launch_args``) so pytest-playwright's ``page``
  runs this machine's Chromium (the unotest pytest plugin, which does that for projects,
  is off in our own test run).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from net import serve_directory
from sites import collection_yaml, config_yaml, scenario_source, unotest_env, write_project

__all__ = [
    "PageGuard",
    "Viewer",
    "browser_type_launch_args",
    "guard_page",
    "page_project",
    "running_viewer",
    "scenario_source",
    "served_site",
]

SITE_HTML = """<!doctype html><html><head><title>Test site</title></head>
<body><h1>Welcome</h1><button onclick="document.querySelector('#out').textContent='clicked'">
Press</button><p id="out"></p></body></html>
"""


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    """pytest-playwright's launch arguments with the Chromium ``unotest e2e`` would use
    (Playwright's own, else the system's with unotest's flags)."""
    from runner.browser.launch import CHROMIUM_ARGS, resolve_executable

    args = dict(browser_type_launch_args)
    path = resolve_executable("chromium", None, headless=bool(args.get("headless", True)))
    if path is not None:
        args["executable_path"] = path
        args["args"] = [*args.get("args", []), *CHROMIUM_ARGS]
    return args


@contextlib.contextmanager
def served_site(directory: Path) -> Iterator[str]:
    """The site under test: ``directory`` (``index.html`` written if missing) on 127.0.0.1."""
    directory.mkdir(parents=True, exist_ok=True)
    index = directory / "index.html"
    if not index.exists():
        index.write_text(SITE_HTML, encoding="utf-8")
    with serve_directory(directory, "viewer-page-site") as url:
        yield url


def page_project(
    root: Path,
    base_url: str | None,
    *,
    scenarios: Mapping[str, str] | None = None,
    helpers: Mapping[str, str] | None = None,
    collections: Mapping[str, list[str] | str] | None = None,
    env: str | None = None,
    chromium: str | None = None,
    timeout: Mapping[str, int] | None = None,
) -> Path:
    """A project under ``root``: config with ``baseURL``, scenarios (name → source; a
    plain body without a header line gets one), helpers (name → source), collections
    (name → scenario names, or the YAML text), and ``unotest/.env`` when ``env`` is given.
    Default: one scenario ``smoke`` that opens the site and checks its heading."""
    if scenarios is None:
        body = '  goto("/")\n  expect_text(css("h1"), "Welcome")\n'
        scenarios = {"smoke": scenario_source("smoke", body)}
    sources = {
        name: text if text.startswith("// id-") else scenario_source(name.replace("/", "-"), text)
        for name, text in scenarios.items()
    }
    yamls = {
        name: value if isinstance(value, str) else collection_yaml(value)
        for name, value in (collections or {}).items()
    }
    files = {"unotest/.env": env} if env is not None else {}
    config = config_yaml(base_url, chromium=chromium, timeout=timeout)
    return write_project(
        root, config, sources, helpers=dict(helpers or {}), collections=yamls, files=files
    )


@dataclass
class Viewer:
    """A running ``unotest view``: its URL (with token), base and token."""

    proc: subprocess.Popen[str]
    url: str
    base: str
    token: str
    root: Path
    client: httpx.Client = field(repr=False)

    def api(self, method: str, path: str, body: object = None) -> Any:
        """``method path`` with the token as a bearer; the JSON answer (an error's too).
        Raises AssertionError on a 5xx (a server bug, never an expected answer)."""
        response = self.client.request(
            method,
            self.base + path,
            headers={"Authorization": f"Bearer {self.token}"},
            content=None if body is None else json.dumps(body),
        )
        assert response.status_code < 500, response.text
        return response.json() if response.content else None

    def status(self, method: str, path: str, **kwargs: Any) -> int:
        """The bare status of a request made with ``kwargs`` as given (no token added)."""
        return self.client.request(method, self.base + path, **kwargs).status_code


@contextlib.contextmanager
def running_viewer(root: Path, *args: str) -> Iterator[Viewer]:
    """``python -m unotest view --no-open --port 0`` in ``root``, stopped (SIGTERM, then
    SIGKILL) on exit; its stderr is attached to a failure to start. Every run still going
    is aborted first: a run outlives the viewer that started it, and a test that failed at
    a pause must not leave one behind."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "unotest", "view", "--no-open", "--port", "0", *args],
        cwd=root,
        env=unotest_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stderr is not None
        url = proc.stdout.readline().strip()
        if not url.startswith("http://127.0.0.1:"):
            proc.kill()
            raise AssertionError(f"unotest view did not start: {url!r} {proc.stderr.read()}")
        base, _, token = url.partition("/?token=")
        with httpx.Client(timeout=30) as client:
            viewer = Viewer(proc, url, base, token, root, client)
            try:
                yield viewer
            finally:
                _abort_live_runs(viewer)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(15)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def _abort_live_runs(viewer: Viewer) -> None:
    """Abort every run still going and wait (15 s at most) for them to end; a viewer that
    cannot answer any more is left alone (the test's own failure is what matters)."""
    with contextlib.suppress(Exception):
        live = [
            m["runId"]
            for m in viewer.api("GET", "/api/runs")
            if m["status"] == "running" and not _played_by_this_test(viewer, m["runId"])
        ]
        for run_id in live:
            viewer.api("POST", f"/api/runs/{run_id}/commands", {"cmd": "abort"})
        deadline = time.monotonic() + 15
        while live and time.monotonic() < deadline:
            time.sleep(0.2)
            runs = viewer.api("GET", "/api/runs")
            live = [m["runId"] for m in runs if m["status"] == "running" and m["runId"] in live]


def _played_by_this_test(viewer: Viewer, run_id: str) -> bool:
    """A run directory whose runner is this test process (a test writing steps.jsonl by
    hand): nobody answers its abort, and waiting for it to end would only wait 15 s."""
    manifest = viewer.root / "unotest" / ".runs" / run_id / "manifest.json"
    try:
        return bool(json.loads(manifest.read_text(encoding="utf-8")).get("pid") == os.getpid())
    except (OSError, ValueError):
        return False


@dataclass
class PageGuard:
    """What went wrong in a page: uncaught errors and console errors."""

    errors: list[str] = field(default_factory=list)
    allowed: list[str] = field(default_factory=list)
    """Substrings of console errors a test provoked on purpose (a refused request)."""

    def allow(self, text: str) -> None:
        self.allowed.append(text)

    def problems(self) -> list[str]:
        return [e for e in self.errors if not any(a in e for a in self.allowed)]

    def check(self) -> None:
        found = self.problems()
        assert not found, "the page reported errors:\n" + "\n".join(found)


def guard_page(page: Any) -> PageGuard:
    """Record ``pageerror``s and ``console.error``s of ``page`` (a Playwright sync Page)."""
    guard = PageGuard()
    page.on("pageerror", lambda exc: guard.errors.append(f"pageerror: {exc}"))

    def on_console(message: Any) -> None:
        if message.type == "error":
            where = message.location.get("url", "") if message.location else ""
            guard.errors.append(f"console.error: {message.text} ({where})")

    page.on("console", on_console)
    return guard
