"""Shared helpers of the viewer page's tests (real Chromium on a real ``unotest view``).

Imported as ``from viewer_page import ...`` (pytest puts this folder on sys.path):

- ``page_project(root, scenarios=..., helpers=..., collections=..., env=...)`` writes a
  small test project whose ``baseURL`` is a site served by the test (``served_site``);
- ``running_viewer(root)`` starts ``python -m unotest view --no-open --port 0`` on it and
  yields a ``Viewer`` (``.url`` with the token, ``.base``, ``.token``,
  ``.api(method, path, body=None)``, ``.finished(run_id, wait_ms)``), stopping it afterwards;
- ``served_project(directory, site=..., **page_project's options)`` and
  ``site_viewer(directory, ...)``: the three steps most tests take (serve the site, write
  the project, start the viewer) as one ``with``;
- ``viewer_fixture(scope=..., **site_viewer's options)`` and ``guard_fixture(wait_ms)``
  make a test module's ``viewer`` and ``guard`` fixtures (``viewer = viewer_fixture(...)``
  at module level; ``scope="module"`` shares one viewer between a module's tests);
- ``guard_page(page)`` records every ``pageerror`` and console error of a page;
  ``guard.check()`` fails the test if any occurred (call it at the end);
- ``scenarios_tree(page)`` and ``tree_item(page, name)``: the sidebar's tree and a row of it;
  ``expect_tree_shows(page, names, shown)``: which of ``names`` the tree shows;
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
from collections.abc import Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import httpx
import pytest
from net import serve_directory
from playwright.sync_api import Locator, Page, expect
from sites import collection_yaml, config_yaml, scenario_source, unotest_env, write_project

__all__ = [
    "PageGuard",
    "Viewer",
    "browser_type_launch_args",
    "expect_tree_shows",
    "guard_fixture",
    "guard_page",
    "page_project",
    "running_viewer",
    "scenario_source",
    "scenarios_tree",
    "served_project",
    "served_site",
    "site_viewer",
    "tree_item",
    "viewer_fixture",
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
def served_site(directory: Path, files: Mapping[str, str] | None = None) -> Iterator[str]:
    """The site under test: ``directory`` with ``files`` (name → text) written into it
    (``index.html`` too if missing) on 127.0.0.1."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in (files or {}).items():
        (directory / name).write_text(text, encoding="utf-8")
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
    trace: str = "off",
    files: Mapping[str, str] | None = None,
) -> Path:
    """A project under ``root``: config with ``baseURL`` and ``trace``, scenarios (name →
    source; a plain body without a header line gets one), helpers (name → source),
    collections (name → scenario names, or the YAML text), ``unotest/.env`` when ``env``
    is given, then ``files`` (path under ``root`` → text: a folder's ``_hooks.js``, a
    ``.debugger.json``). Default: one scenario ``smoke`` that opens the site and checks
    its heading."""
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
    extra = {"unotest/.env": env} if env is not None else {}
    extra.update(files or {})
    config = config_yaml(base_url, chromium=chromium, timeout=timeout, trace=trace)
    return write_project(
        root, config, sources, helpers=dict(helpers or {}), collections=yamls, files=extra
    )


@contextlib.contextmanager
def served_project(
    directory: Path,
    *,
    site: Mapping[str, str] | bool = True,
    base_url: str | None = None,
    **project: Any,
) -> Iterator[Path]:
    """``page_project(directory / "proj", url, **project)`` whose ``url`` is the site
    ``served_site(directory / "site")`` while the ``with`` lasts. ``site``: True for the
    default page, a mapping for these files (name → text; ``index.html`` defaults as
    ever), False for no site at all (then ``base_url`` is the project's, None for none)."""
    if site is False:
        yield page_project(directory / "proj", base_url, **project)
        return
    files = None if isinstance(site, bool) else site
    with served_site(directory / "site", files) as url:
        yield page_project(directory / "proj", url, **project)


@contextlib.contextmanager
def site_viewer(
    directory: Path, *, environ: Mapping[str, str] | None = None, **options: Any
) -> Iterator[Viewer]:
    """``running_viewer`` (with ``environ`` added to its environment) on
    ``served_project(directory, **options)``: what a test that starts its own viewer
    writes as one ``with``."""
    with (
        served_project(directory, **options) as root,
        running_viewer(root, environ=environ) as viewer,
    ):
        yield viewer


def viewer_fixture(*, scope: Literal["function", "module"] = "function", **options: Any) -> Any:
    """A fixture yielding ``site_viewer(<a new temporary folder>, **options)``, one per test
    or, with ``scope="module"``, one shared by the test module's tests. Bind it to the
    fixture's name at module level (pytest names it so): ``viewer = viewer_fixture(...)``;
    the options are read once, when the module is imported."""

    @pytest.fixture(scope=scope)
    def fixture(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Viewer]:
        with site_viewer(tmp_path_factory.mktemp("viewer"), **options) as viewer:
            yield viewer

    return fixture


def guard_fixture(wait_ms: int | None = None, *, allow: Sequence[str] = ()) -> Any:
    """A fixture yielding ``guard_page(page)`` (with ``allow``'s console errors allowed),
    checked when the test ends; ``wait_ms`` becomes ``expect``'s timeout first (as the
    module's tests wait on a loaded machine). Bind it: ``guard = guard_fixture(WAIT_MS)``."""

    @pytest.fixture
    def fixture(page: Page) -> Iterator[PageGuard]:
        if wait_ms is not None:
            expect.set_options(timeout=wait_ms)
        checked = guard_page(page)
        for text in allow:
            checked.allow(text)
        yield checked
        checked.check()

    return fixture


def scenarios_tree(page: Page) -> Locator:
    """The sidebar's tree of scenarios, by its role and name."""
    return page.get_by_role("tree", name="Scenarios")


def tree_item(page: Page, name: str) -> Locator:
    """The tree's row of scenario or folder ``name`` (its accessible name, exactly)."""
    return scenarios_tree(page).get_by_role("treeitem", name=name, exact=True)


def expect_tree_shows(page: Page, names: Iterable[str], shown: Container[str]) -> None:
    """Of the scenarios ``names``, exactly those in ``shown`` are rows of the tree (a
    filter's result: the others are not in it at all)."""
    for name in names:
        if name in shown:
            expect(tree_item(page, name)).to_be_visible()
        else:
            expect(tree_item(page, name)).to_have_count(0)


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

    def finished(self, run_id: str, wait_ms: int) -> dict[str, Any]:
        """The run's detail (``GET /api/runs/<run_id>``) once it is no longer running;
        fails if it still is after ``wait_ms`` (a bound on waiting, never an assertion
        about time)."""
        deadline = time.monotonic() + wait_ms / 1000
        while True:
            detail: dict[str, Any] = self.api("GET", f"/api/runs/{run_id}")
            if detail["meta"]["status"] != "running":
                return detail
            assert time.monotonic() < deadline, f"run {run_id} did not finish"
            time.sleep(0.2)

    def status(self, method: str, path: str, **kwargs: Any) -> int:
        """The bare status of a request made with ``kwargs`` as given (no token added)."""
        return self.client.request(method, self.base + path, **kwargs).status_code


@contextlib.contextmanager
def running_viewer(
    root: Path, *args: str, environ: Mapping[str, str] | None = None
) -> Iterator[Viewer]:
    """``python -m unotest view --no-open --port 0`` in ``root`` (``environ`` added to its
    environment), stopped (SIGTERM, then SIGKILL) on exit; its stderr is attached to a
    failure to start. Every run still going is aborted first: a run outlives the viewer
    that started it, and a test that failed at a pause must not leave one behind."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "unotest", "view", "--no-open", "--port", "0", *args],
        cwd=root,
        env=unotest_env(**(environ or {})),
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
