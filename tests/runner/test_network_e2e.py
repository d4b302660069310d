"""The network built-ins as a ported suite uses them (Playwright's ``page.route``,
``page.waitForResponse``, ``page.request``): real Chromium, real ``unotest e2e`` runs
against an application this test serves on 127.0.0.1.

``route(m, response?)`` mocks, aborts or records the page's requests and
``wait_for_response(h)`` hands back each exchange it matched; ``request(method, url,
options?)`` calls the API with the page's cookies. What a route answered shows in the
run's output and in the failure bundle's ``network.json`` (``routed``). Four scenarios,
two at a time, keep the file quick; each says what it saw on ``@@`` lines."""

from __future__ import annotations

import http.server
import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from events import read_events
from net import free_port, serve_handler
from protocol_keys import PROTOCOL_KINDS
from sites import config_yaml, e2e_json, scenario_source, unotest_env, write_project

Validate = Callable[[str, object], None]

PAGE = """<!doctype html>
<title>Shop</title>
<button onclick="load()">Load items</button>
<button onclick="save()">Save</button>
<button onclick="whoami()">Who am I</button>
<p id=out-items></p><p id=out-saved></p><p id=out-who></p>
<script>
const out = (id, text) => { document.getElementById(id).textContent = text; };
async function load() {
  try {
    const answer = await fetch("/api/items");
    out("out-items", (await answer.json()).items.join(", "));
  } catch (e) { out("out-items", "failed: " + e); }
}
async function save() {
  const answer = await fetch("/api/items", {method: "POST",
    headers: {"content-type": "application/json"}, body: JSON.stringify({name: "pen", qty: 2})});
  out("out-saved", answer.status + " #" + (await answer.json()).id);
}
async function whoami() {
  out("out-who", (await (await fetch("/api/whoami")).json()).cookie);
}
</script>
"""

MOCKS = r"""  const items = route("/api/items", {json: {items: ["mocked A", "mocked B"]}})
  log("@@ " + str(items) + " " + items.matcher)
  goto("/")
  click("Load items")
  expect_text(css("#out-items"), "mocked A, mocked B")
  log("@@ " + json(wait_for_response(items)))
  unroute(items)
  click("Load items")
  expect_text(css("#out-items"), "real")
  const blocked = route(/\/api\/items$/, "abort")
  click("Load items")
  expect_text(css("#out-items"), "failed: TypeError: Failed to fetch")
  log("@@ " + json(wait_for_response(blocked, {timeout: 2000})))
  unroute(blocked)
  unroute(blocked)
  const named = route(/\/api\/(?<what>items)$/, {json: {items: ["named group"]}})
  click("Load items")
  expect_text(css("#out-items"), "named group")
  unroute(named)
  const saves = route("**/api/items")
  click("Save")
  expect_text(css("#out-saved"), "201 #7")
  log("@@ " + json(wait_for_response(saves)))
  try { wait_for_response(saves, {timeout: 300}) } catch (e) { said(e) }
  unroute(saves)
  try { wait_for_response(saves) } catch (e) { said(e) }
"""

REQUESTS = r"""  const got = request("GET", "/api/items")
  log("@@ " + json([got.status, got.ok, got.json, got.headers["content-type"]]))
  const query = {page: 2, all: true}
  const made = request("post", "/api/echo?x=1", {json: {name: "pen", qty: 2}, params: query,
    headers: {"x-token": "t1"}})
  log("@@ " + json(made.json))
  log("@@ " + json(request("PUT", "/api/echo", {form: {a: "1", b: 2}}).json))
  log("@@ " + json(request("DELETE", "/api/echo", {data: "plain words"}).json))
  const missing = request("GET", "/api/nothing", {timeout: 5000})
  log("@@ " + json([missing.status, missing.ok, missing.text, missing.json]))
  request("POST", "/api/login")
  goto("/")
  click("Who am I")
  expect_text(css("#out-who"), "session=abc")
  evaluate("() => { document.cookie = 'theme=dark; path=/' }")
  log("@@ " + request("GET", "/api/whoami").json.cookie)
  try { request("GET", "REFUSED/x") } catch (e) { said(e) }
  try { request("GET", "/api/slow", {timeout: 300}) } catch (e) { said(e) }
"""

MISUSED = r"""  const typo = {stauts: 200}
  const options = {jsn: {}}
  try { route(3) } catch (e) { said(e) }
  try { route("**/x", typo) } catch (e) { said(e) }
  try { route("**/x", {status: 99}) } catch (e) { said(e) }
  try { route("**/x", {status: 200.5}) } catch (e) { said(e) }
  try { route("**/x", "abrot") } catch (e) { said(e) }
  try { route("**/x", {body: "a", json: {}}) } catch (e) { said(e) }
  try { route("**/x", {headers: {"x-n": 3}}) } catch (e) { said(e) }
  try { route("/a{b") } catch (e) { said(e) }
  try { unroute("nope") } catch (e) { said(e) }
  try { wait_for_response({route: 1}) } catch (e) { said(e) }
  try { wait_for_response(route("**/y"), {timeout: -1}) } catch (e) { said(e) }
  try { request("FETCH", "/x") } catch (e) { said(e) }
  try { request("GET", 3) } catch (e) { said(e) }
  try { request("GET", "/x", {json: {}, form: {}}) } catch (e) { said(e) }
  try { request("GET", "/x", options) } catch (e) { said(e) }
  try { request("GET", "/x", {params: {a: [1]}}) } catch (e) { said(e) }
"""

BUNDLE = r"""  const down = {error: "down"}
  route("**/api/items", {status: 503, json: down, headers: {"x-mock": "yes"}})
  route("**/api/whoami", "abort")
  goto("/")
  click("Who am I")
  click("Load items")
  expect_text(css("#out-items"), "mocked", {timeout: 1500})
"""

SAID = """function said(e) {
  log("@@ " + e.name + ": " + e.message)
}
"""
"""Each scenario's way to show an error it caught."""

MISUSED_SAID = [
    'TypeError: route() needs a URL glob (a string such as "**/api/items") or a regex first, got 3',
    "TypeError: route() response has no key 'stauts' (did you mean 'status'?) "
    "(its keys: status, headers, contentType, body, json)",
    "TypeError: route() response status takes a whole number from 100 to 599, got 99",
    "TypeError: route() response status takes a whole number from 100 to 599, got 200.5",
    "TypeError: route() takes a response object {status, headers, contentType, body, json} or "
    '"abort" second, got "abrot"',
    "TypeError: route() response takes body or json, not both",
    'TypeError: route() response headers takes an object of strings ({"x-token": "abc"}), '
    "got object",
    "TypeError: route(): \"/a{b\" is not a valid URL glob: unmatched '{'",
    'TypeError: unroute() needs a route handle (what route() returns), got "nope"',
    "TypeError: wait_for_response() needs a route handle (what route() returns), got object",
    "TypeError: wait_for_response() option timeout: -1 is not valid: milliseconds, more than 0 "
    "and at most 2147483647 (this call's own; the config's timeout.action otherwise)",
    'TypeError: request() takes a method first ("GET", "POST", "PUT", "PATCH", "DELETE", '
    '"HEAD" or "OPTIONS"), got "FETCH"',
    "TypeError: request() needs a URL second, got number",
    "TypeError: request() takes one body, data, json or form: not json and form",
    "TypeError: request() has no option 'jsn' (did you mean 'json'?) "
    "(its options: headers, params, data, json, form, timeout)",
    "TypeError: request() option params takes an object of strings, numbers or booleans "
    '({page: 2, q: "shoes"}), got object',
]


class _Api(http.server.BaseHTTPRequestHandler):
    """The page and its API: items (GET, POST), an echo, a login cookie, whoami."""

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        if path == "/api/items":
            self._json(200, {"items": ["real"]})
        elif path == "/api/whoami":
            self._json(200, {"cookie": self.headers.get("Cookie", "")})
        elif path == "/api/slow":
            time.sleep(2)  # longer than the request's own timeout
            self._json(200, {})
        elif path == "/api/nothing":
            self._send(404, b"no such thing", "text/plain")
        elif path == "/":
            self._send(200, PAGE.encode(), "text/html; charset=utf-8")
        else:
            self._send(404, b"", "text/plain")

    def do_POST(self) -> None:
        path = urlsplit(self.path).path
        if path == "/api/items":
            self._json(201, {"id": 7, **json.loads(self._body())})
        elif path == "/api/login":
            self._json(200, {"ok": True}, cookie="session=abc; Path=/")
        else:
            self._echo()

    def do_PUT(self) -> None:
        self._echo()

    def do_DELETE(self) -> None:
        self._echo()

    def _echo(self) -> None:
        """What the request was: method, query, content type, a header, the body."""
        self._json(
            200,
            {
                "method": self.command,
                "query": parse_qs(urlsplit(self.path).query),
                "type": self.headers.get("Content-Type"),
                "token": self.headers.get("X-Token"),
                "body": self._body(),
            },
        )

    def _body(self) -> str:
        return self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()

    def _json(self, status: int, data: object, cookie: str | None = None) -> None:
        self._send(status, json.dumps(data).encode(), "application/json", cookie)

    def _send(self, status: int, body: bytes, kind: str, cookie: str | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        if cookie is not None:
            self.send_header("Set-Cookie", cookie)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def api_site() -> Iterator[str]:
    with serve_handler(_Api, "network-site") as url:
        yield url


def _said(output: str) -> list[str]:
    return [line[3:] for line in output.splitlines() if line.startswith("@@ ")]


def _project(tmp_path: Path, site: str, chromium: str, refused: str) -> Path:
    timeout = {"action": 5000, "expect": 3000, "navigation": 10000, "scenario": 60000}
    scenarios = {"mocks": MOCKS, "requests": REQUESTS, "misused": MISUSED, "bundle": BUNDLE}
    return write_project(
        tmp_path,
        config_yaml(site, timeout=timeout, chromium=chromium),
        {
            name: scenario_source(name, body.replace("REFUSED", refused), fn=f"test_{name}") + SAID
            for name, body in scenarios.items()
        },
    )


def _check(project: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "unotest", "check"],
        cwd=project,
        env=unotest_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )


def _validate_run(project: Path, result: dict[str, Any], validate: Validate) -> None:
    run_dir = project / result["runDir"]
    for event in read_events(run_dir, finished=True):
        if event["kind"] in PROTOCOL_KINDS:
            validate("RunArtifact", event)
    validate("RuntimeStateFile", json.loads((run_dir / "runtime.json").read_text()))


def test_routes_mock_abort_and_record_and_request_calls_the_api(
    tmp_path: Path, api_site: str, chromium_path: str, protocol_validate: Validate
) -> None:
    refused = f"http://127.0.0.1:{free_port()}"
    project = _project(tmp_path, api_site, chromium_path, refused)
    check = _check(project)
    assert check.returncode == 0, check.stdout + check.stderr  # check knows the built-ins
    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = dict(
            zip(
                ["mocks", "requests", "misused", "bundle"],
                pool.map(
                    lambda name: e2e_json(project, name), ["mocks", "requests", "misused", "bundle"]
                ),
                strict=True,
            )
        )
    _check_mocks(project, api_site, runs["mocks"], protocol_validate)
    _check_requests(api_site, refused, runs["requests"])
    code, result, output = runs["misused"]
    assert code == 0 and result["outcome"] == "completed", output
    assert _said(output) == MISUSED_SAID
    _check_bundle(project, api_site, runs["bundle"], protocol_validate)


def _check_mocks(
    project: Path, site: str, run: tuple[int, dict[str, Any], str], validate: Validate
) -> None:
    code, result, output = run
    assert code == 0 and result["outcome"] == "completed", output
    _validate_run(project, result, validate)
    said = _said(output)
    assert said[0] == '<Route "/api/items"> /api/items', said
    mocked = json.loads(said[1])
    assert mocked["request"]["headers"]["accept"] == "*/*"
    assert mocked == {
        "url": f"{site}/api/items",
        "method": "GET",
        "status": 200,
        "ok": True,
        "headers": {"content-type": "application/json"},
        "text": '{"items":["mocked A","mocked B"]}',
        "json": {"items": ["mocked A", "mocked B"]},
        "error": None,
        "request": {"headers": mocked["request"]["headers"], "text": None, "json": None},
    }
    aborted = json.loads(said[2])
    assert (aborted["status"], aborted["ok"], aborted["error"]) == (0, False, "aborted by route()")
    assert aborted["text"] is None and aborted["headers"] == {}
    # let through and recorded: the server's answer, and what the page sent
    recorded = json.loads(said[3])
    assert (recorded["method"], recorded["status"], recorded["ok"]) == ("POST", 201, True)
    assert recorded["json"] == {"id": 7, "name": "pen", "qty": 2}
    assert recorded["request"]["json"] == {"name": "pen", "qty": 2}
    assert recorded["headers"]["content-type"] == "application/json"
    assert said[4] == (
        'TimeoutError: wait_for_response: no request matched the route "**/api/items" within '
        "300 ms (it matched 1 before, each waited for already)"
    )
    assert said[5] == (
        'Error: wait_for_response: the route "**/api/items" was removed by unroute() and has '
        "no exchange left to wait for"
    )
    lines = output.splitlines()
    assert f"route: GET {site}/api/items → 200 (mocked)" in lines, output
    assert f"route: GET {site}/api/items → aborted" in lines, output
    assert f"route: POST {site}/api/items → 201 (recorded)" in lines, output


def _check_requests(site: str, refused: str, run: tuple[int, dict[str, Any], str]) -> None:
    code, result, output = run
    assert code == 0 and result["outcome"] == "completed", output
    said = _said(output)
    assert json.loads(said[0]) == [200, True, {"items": ["real"]}, "application/json"]
    assert json.loads(said[1]) == {
        "method": "POST",
        "query": {"x": ["1"], "page": ["2"], "all": ["true"]},
        "type": "application/json",
        "token": "t1",
        "body": '{"name":"pen","qty":2}',
    }
    form = json.loads(said[2])
    assert (form["method"], form["body"]) == ("PUT", "a=1&b=2")
    assert form["type"] == "application/x-www-form-urlencoded"
    plain = json.loads(said[3])
    assert (plain["method"], plain["body"]) == ("DELETE", "plain words")
    assert json.loads(said[4]) == [404, False, "no such thing", None]
    # the cookie the API set reached the page, and the page's reached the API
    assert said[5] == "session=abc; theme=dark", said
    host = refused.split("//")[1]
    assert said[6] == f"NetworkError: request: GET {refused}/x failed: connect ECONNREFUSED {host}"
    assert said[7] == f"TimeoutError: request: GET {site}/api/slow got no answer within 300 ms"


def _check_bundle(
    project: Path, site: str, run: tuple[int, dict[str, Any], str], validate: Validate
) -> None:
    code, result, output = run
    assert code == 1 and result["outcome"] == "failed", output
    _validate_run(project, result, validate)
    lines = output.splitlines()
    assert f"route: GET {site}/api/items → 503 (mocked)" in lines, output
    assert f"route: GET {site}/api/whoami → aborted" in lines, output
    network = json.loads((project / result["bundlePath"] / "network.json").read_text())
    by_url = {entry["url"]: entry for entry in network}
    items, whoami, page = (
        by_url[f"{site}/api/items"],
        by_url[f"{site}/api/whoami"],
        by_url[f"{site}/"],
    )
    assert (items["routed"], items["status"], items["failure"]) == ("fulfilled", 503, None)
    assert whoami["routed"] == "aborted" and whoami["failure"] == "net::ERR_FAILED", whoami
    assert "routed" not in page and page["status"] == 200, page


def test_check_knows_the_network_options(tmp_path: Path) -> None:
    """A literal options object with a key the built-in does not take is a problem
    before any browser starts, as for click()."""
    project = write_project(
        tmp_path,
        config_yaml("http://127.0.0.1:9"),
        {
            "typo": scenario_source(
                "typo",
                '  route("**/x", {stauts: 200})\n'
                '  request("GET", "/x", {jsn: {}})\n'
                '  wait_for_response(route("**/y"), {timout: 1})\n'
                "  unroute()\n",
            )
        },
    )
    check = _check(project)
    assert check.returncode != 0
    said = check.stdout + check.stderr
    assert "route() has no option 'stauts' (did you mean 'status'?)" in said, said
    assert "request() has no option 'jsn' (did you mean 'json'?)" in said, said
    assert "wait_for_response() has no option 'timout' (did you mean 'timeout'?)" in said, said
    assert "unroute() takes 1 argument but got 0" in said, said
