"""A site whose pages fail on purpose, and a project pointing at it, for the tests of
retries, flaky scenarios, the event envelopes and history.

``/page?k=KEY&fail=N`` answers ``<h1>Broken</h1>`` to the first N requests for KEY and
``<h1>Ready</h1>`` after (``fail=always``: always broken), so a scenario that expects
"Ready" fails on its first attempt and passes on the next: flaky, made by the test's
own server. Every request is counted per KEY, so a test sees how many attempts ran.
"""

from __future__ import annotations

import http.server
import json
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import jsonschema
from sites import (
    E2E,
    collection_yaml,
    config_yaml,
    scenario_source,
    unotest_env,
    write_files,
    write_project,
)

SCHEMA_PATH = Path(__file__).resolve().parent / "envelope_v1.schema.json"
RUN_TIMEOUT_S = 180


class FlakySite:
    """The server: started on a free port of 127.0.0.1, stopped by :meth:`close`."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.counts: dict[str, int] = {}
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                query = {k: v[-1] for k, v in parse_qs(urlsplit(self.path).query).items()}
                key, fail = query.get("k", ""), query.get("fail", "0")
                with site.lock:
                    seen = site.counts[key] = site.counts.get(key, 0) + 1
                broken = fail == "always" or (fail.isdigit() and seen <= int(fail))
                heading = "Broken" if broken else "Ready"
                body = f"<!doctype html><title>{key}</title><h1>{heading}</h1>".encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def requests(self, key: str) -> int:
        with self.lock:
            return self.counts.get(key, 0)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


def body(key: str, fail: str) -> str:
    """A scenario: log a line, open the page, expect "Ready"."""
    return (
        f'  log("@ visiting {key}")\n'
        f'  goto("/page?k={key}&fail={fail}")\n'
        '  expect_text(css("h1"), "Ready")\n'
    )


@dataclass
class Done:
    code: int
    out: str
    err: str


class FlakyProject:
    """A project in ``root`` against a :class:`FlakySite`, run through the real CLI."""

    def __init__(self, root: Path, site: FlakySite, chromium: str, extra: str = "") -> None:
        self.root = root
        self.site = site
        # expect: what a failing attempt waits for "Ready" (it never comes): kept short.
        timeout = {"action": 3000, "expect": 500, "navigation": 30000, "scenario": 60000}
        write_project(root, config_yaml(site.url, timeout=timeout, chromium=chromium, extra=extra))

    def scenario(self, name: str, key: str, fail: str) -> None:
        slug = name.replace("/", "-")
        function = "test_" + re.sub(r"\W", "_", slug)
        source = scenario_source(slug, body(key, fail), title=name, fn=function)
        write_files(self.root, {f"{E2E}/{name}.test.js": source})

    def collection(self, name: str, scenarios: list[str]) -> None:
        write_files(self.root, {f"{E2E}/_collections/{name}.yaml": collection_yaml(scenarios)})

    def cli(self, *args: str, timeout: float = RUN_TIMEOUT_S) -> Done:
        proc = subprocess.run(
            [sys.executable, "-m", "unotest", *args],
            cwd=self.root,
            env=unotest_env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
        return Done(proc.returncode, proc.stdout, proc.stderr)

    def manifest(self, run_id: str) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(
            (self.root / "unotest/.runs" / run_id / "manifest.json").read_text()
        )
        return data

    def history_files(self) -> list[Path]:
        return sorted((self.root / "unotest/.history").glob("*.json"))


def validate_envelopes(events: list[Any]) -> None:
    """Every envelope against the version-1 schema written from the seed's table."""
    validator = jsonschema.Draft7Validator(json.loads(SCHEMA_PATH.read_text()))
    for event in events:
        validator.validate(event)


def served() -> Iterator[FlakySite]:
    site = FlakySite()
    try:
        yield site
    finally:
        site.close()


def find_chromium() -> str:
    """The Chromium executable a run would use (as tests/runner/conftest.py finds it)."""
    from runner.browser.launch import playwright_browser_path, resolve_executable

    path = resolve_executable("chromium", None, headless=True) or playwright_browser_path(
        "chromium", headless=True
    )
    assert path, "no Chromium: run 'bash .ci/setup'"
    return path
