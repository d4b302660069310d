"""Cookies, a saved storage state and the page's clock as a ported suite uses them
(``context.cookies()``, ``addCookies``, ``clearCookies``, ``storageState({path})``,
``page.clock``): real Chromium, real ``unotest e2e`` runs against a site this test
serves, which sets its cookies with ``Set-Cookie`` and says which ones it received.

The storage-state run ends on a failed assertion on purpose: its variables are then
written into ``steps.jsonl`` and ``runtime.json``, and its console holds what the
scenario logged after the save, so those files show whether the saved values are masked.
"""

from __future__ import annotations

import http.server
import json
import stat
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from net import serve_handler
from sites import (
    E2E,
    check_errors,
    config_yaml,
    e2e_json,
    scenario_source,
    write_project,
)

from runner.project.secrets import MASK

SESSION = "sess-4f9a71-SECRET"
"""Set HttpOnly by the server: no page script can read it, cookies() can."""
THEME = "dark-mode-SECRET"
TOKEN = "ls-token-77aa-SECRET"
"""Put into localStorage by the page."""

LOGIN_PAGE = """<!doctype html>
<title>Logged in</title>
<p id=who>welcome</p>
<script>localStorage.setItem("token", "TOKEN")</script>
""".replace("TOKEN", TOKEN)

CLOCK_PAGE = """<!doctype html>
<title>Clock</title>
<p id=now></p><p id=ticks>0</p><p id=later>waiting</p>
<script>
const show = () => { document.getElementById("now").textContent = new Date().toISOString() };
show();
let ticks = 0;
const tick = () => { ticks += 1; document.getElementById("ticks").textContent = ticks; show() };
setInterval(tick, 1000);
setTimeout(() => { document.getElementById("later").textContent = "fired" }, 5 * 60 * 1000);
</script>
"""


class _Site(http.server.BaseHTTPRequestHandler):
    """``/login`` sets two cookies; ``/echo`` and ``/echo/deep`` answer with the Cookie
    header they received; ``/clock`` is the timers page."""

    def do_GET(self) -> None:
        if self.path == "/login":
            self._send(
                LOGIN_PAGE,
                (
                    ("Set-Cookie", f"session={SESSION}; Path=/; HttpOnly"),
                    ("Set-Cookie", f"theme={THEME}; Path=/"),
                ),
            )
        elif self.path.startswith("/echo"):
            self._send(f"<title>echo</title><pre id=got>{self.headers.get('Cookie', '')}</pre>")
        elif self.path == "/clock":
            self._send(CLOCK_PAGE)
        else:
            self._send("<title>home</title>")

    def _send(self, body: str, headers: tuple[tuple[str, str], ...] = ()) -> None:
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def site() -> Iterator[str]:
    with serve_handler(_Site, "state-site") as url:
        yield url


STATE = r"""  goto("/login")
  const found = cookies()
  let flags = ""
  for (const c of found) {
    flags = flags + c.name + ":" + c.httpOnly + ":" + c.path + ":" + c.sameSite + " "
  }
  log("@@ " + flags)
  log("@@ page sees " + evaluate("document.cookie").split("=")[0])
  log("@@ " + len(cookies("/")) + " " + len(cookies(["http://elsewhere.test/"])))
  const deep = {name: "deep", value: "only-deep", domain: "127.0.0.1", path: "/echo/deep"}
  add_cookies([{name: "added", value: "from-scenario"}, deep])
  goto("/echo/deep")
  log("@@ server got " + text_of(css("#got")).replace(/=[^;]*SECRET/g, "=..."))
  clear_cookies({name: "added"})
  clear_cookies({path: /deep/})
  let left = ""
  for (const c of cookies()) { left = left + c.name + " " }
  log("@@ left " + left)
  const both = {name: "x", value: "y", url: "/", path: "/"}
  try { add_cookies([both]) } catch (e) { log("@@ " + e.message) }
  try { add_cookies([{name: "x", valeu: "y"}]) } catch (e) { log("@@ " + e.message) }
  try { add_cookies({name: "x", value: "y"}) } catch (e) { log("@@ " + e.message) }
  const typo = {nmae: "x"}
  try { clear_cookies(typo) } catch (e) { log("@@ " + e.message) }
  try { save_storage_state("../outside.json") } catch (e) { log("@@ " + e.name + ": " + e.message) }
  try { save_storage_state("/tmp/state.json") } catch (e) { log("@@ " + e.name + ": " + e.message) }
  try { save_storage_state("out/state.json") } catch (e) { log("@@ " + e.name + ": " + e.message) }
  save_storage_state("state/session.json")
  save_storage_state("state/again.json")
  let after = ""
  for (const c of cookies()) { after = after + c.name + "=" + c.value + ";" }
  log("@@ after " + after)
  const stored = evaluate("localStorage.getItem('token')")
  log("@@ stored " + stored)
  expect_equal(stored + " " + after, "nothing")
"""

CLOCK = r"""  clock_install({time: "2024-02-02T07:59:00Z"})
  goto("/clock")
  clock_pause_at("2024-02-02T08:00:00Z")
  log("@@ paused " + evaluate("new Date().toISOString()"))
  const before = num(text_of(css("#ticks")))
  clock_run_for(3000)
  expect_text(css("#ticks"), str(before + 3))
  expect_text(css("#now"), "2024-02-02T08:00:03.000Z")
  expect_text(css("#later"), "waiting")
  clock_fast_forward("05:00")
  expect_text(css("#later"), "fired")
  log("@@ forwarded " + evaluate("new Date().toISOString()"))
  clock_set_fixed_time(1700000000123)
  log("@@ fixed " + evaluate("Date.now()"))
  clock_set_fixed_time("2024-02-02T08:00:00")
  log("@@ local " + evaluate("new Date().toISOString()") + " " + evaluate("new Date().getHours()"))
  clock_set_system_time("2030-01-01T00:00:00+01:00")
  log("@@ system " + evaluate("new Date().toISOString()"))
  clock_resume()
  try { clock_run_for(-1) } catch (e) { log("@@ " + e.message) }
  try { clock_set_fixed_time("yesterday") } catch (e) { log("@@ " + e.message) }
  const at = {at: 1}
  try { clock_install(at) } catch (e) { log("@@ " + e.message) }
  try { clock_fast_forward("1:99") } catch (e) { log("@@ " + e.message) }
"""


def said(output: str) -> list[str]:
    return [line[3:] for line in output.splitlines() if line.startswith("@@ ")]


def test_cookies_storage_state_and_clock(tmp_path: Path, site: str, chromium_path: str) -> None:
    timeout = {"action": 5000, "expect": 2000, "navigation": 10000, "scenario": 60000}
    project = write_project(
        tmp_path / "p",
        config_yaml(
            site, timeout=timeout, chromium=chromium_path, extra="timezoneId: Asia/Tokyo\n"
        ),
        {
            "state": scenario_source("state", STATE, fn="test_state"),
            "clock": scenario_source("clock", CLOCK, fn="test_clock"),
        },
        files={"state/again.json": "{}"},
    )
    (project / "state" / "again.json").chmod(0o644)  # a save narrows it to 0600
    (tmp_path / "outside").mkdir()
    (project / "out").symlink_to(tmp_path / "outside")
    with ThreadPoolExecutor(max_workers=2) as pool:
        state, clock = pool.map(lambda name: e2e_json(project, name), ["state", "clock"])

    code, result, output = state
    assert code == 1 and result["outcome"] == "failed", output
    lines = said(output)
    assert sorted(lines[0].split()) == ["session:true:/:Lax", "theme:false:/:Lax"], output
    assert lines[1:3] == [
        "page sees theme",  # the HttpOnly one is hidden from the page, not from cookies()
        "2 0",
    ], output
    # the cookie with no url or domain went to the page's URL, the other to its path
    got = sorted(lines[3].removeprefix("server got ").split("; "))
    assert got == ["added=from-scenario", "deep=only-deep", "session=...", "theme=..."], output
    assert sorted(lines[4].split()) == ["left", "session", "theme"], output
    assert lines[5:9] == [
        "add_cookies(): cookie 'x' has a url and a domain or path: give one or the other "
        "(the url sets both)",
        "add_cookies(): a cookie has no key 'valeu' (did you mean 'value'?) (its keys: name, "
        "value, url, domain, path, expires, httpOnly, secure, sameSite)",
        "add_cookies() needs an array of cookies ({name, value, url} or {name, value, domain, "
        "path}), got object",
        "clear_cookies() has no option 'nmae' (did you mean 'name'?) (its options: name, "
        "domain, path)",
    ], output
    assert lines[9:12] == [
        "TypeError: save_storage_state() only takes paths inside the project: "
        "../outside.json is outside",
        "TypeError: save_storage_state() only takes paths inside the project, by a path "
        "relative to its root: /tmp/state.json is outside",
        "TypeError: save_storage_state() only takes paths inside the project: "
        "out/state.json is outside (a symbolic link leads out)",
    ], output
    assert not list((tmp_path / "outside").iterdir())
    _check_saved_state(project)
    _check_masked(project, result, output)

    _check_clock(*clock)


def _check_clock(code: int, result: dict[str, Any], output: str) -> None:
    assert code == 0 and result["outcome"] == "completed", output
    assert said(output) == [
        "paused 2024-02-02T08:00:00.000Z",
        "forwarded 2024-02-02T08:05:03.000Z",
        "fixed 1700000000123",
        # no offset: the page's local time (timezoneId Asia/Tokyo, UTC+9)
        "local 2024-02-01T23:00:00.000Z 8",
        "system 2029-12-31T23:00:00.000Z",
        'clock_run_for() needs milliseconds, 0 or more, or a duration such as "01:30" '
        '(mm:ss) or "02:00:00" (hh:mm:ss), got -1',
        "clock_set_fixed_time() needs epoch milliseconds or ISO 8601 text such as "
        '"2024-02-02T08:00:00Z" (without an offset, the page\'s local time; a bare '
        '"2024-02-02", UTC midnight), got "yesterday"',
        "clock_install() has no option 'at' (its only option: time, the time the clock starts at)",
        'clock_fast_forward() needs milliseconds, 0 or more, or a duration such as "01:30" '
        '(mm:ss) or "02:00:00" (hh:mm:ss), got "1:99"',
    ], output


def _check_saved_state(project: Path) -> None:
    for name in ("session.json", "again.json"):
        path = project / "state" / name
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, name
        saved = json.loads(path.read_text())
        cookies = {c["name"]: c for c in saved["cookies"]}
        assert cookies["session"]["value"] == SESSION and cookies["session"]["httpOnly"]
        assert cookies["theme"]["value"] == THEME
        storage = [item for origin in saved["origins"] for item in origin["localStorage"]]
        assert {"name": "token", "value": TOKEN} in storage, saved
    assert not [p for p in (project / "state").iterdir() if p.name.endswith(".tmp")]


def _check_masked(project: Path, result: dict[str, Any], output: str) -> None:
    """Each saved value, shown after the save (logged, and in the failure's message), is
    masked in the console and in every file of the run and of its failure bundle."""
    run_dir = project / result["runDir"]
    files = [*run_dir.iterdir(), *(project / result["bundlePath"]).iterdir()]
    shown = {"console": output}
    shown.update({path.name: path.read_bytes().decode(errors="replace") for path in files})
    assert {"steps.jsonl", "runtime.json", "events.ndjson", "error.json"} <= set(shown), shown
    for where, text in shown.items():
        for secret in (SESSION, THEME, TOKEN):
            assert secret not in text, (where, secret)
    assert f"@@ stored {MASK}" in output, output
    assert f"session={MASK};" in output and f"theme={MASK};" in output, output
    failed = json.dumps(f'received "{MASK} session={MASK};theme={MASK};"')[1:-1]
    assert failed in shown["steps.jsonl"] and failed in shown["runtime.json"], failed


def test_check_knows_the_state_clock_viewport_and_file_built_ins(tmp_path: Path) -> None:
    fine = (
        '  cookies()\n  cookies("/")\n  add_cookies([])\n  clear_cookies()\n'
        '  clear_cookies({name: "a", domain: "b", path: "/"})\n  save_storage_state("s.json")\n'
        "  clock_install()\n  clock_install({time: 0})\n  clock_set_fixed_time(0)\n"
        "  clock_set_system_time(0)\n  clock_run_for(1)\n  clock_fast_forward(1)\n"
        '  clock_pause_at(0)\n  clock_resume()\n  set_viewport(400, 300)\n  read_file("a.txt")\n'
    )
    wrong = (
        "  cookies(1, 2)\n  add_cookies()\n  clear_cookies({nmae: 1})\n"
        "  save_storage_state()\n  clock_install({tiem: 0})\n  clock_resume(1)\n"
        "  clock_run_for()\n  set_viewport(400)\n  read_file()\n"
    )
    project = write_project(
        tmp_path,
        config_yaml(None),
        {"fine": scenario_source("fine", fine), "wrong": scenario_source("wrong", wrong)},
    )
    errors = check_errors(project)
    found = [(p["path"], p["line"], p["message"]) for p in errors]
    wrong_file = f"{E2E}/wrong.test.js"
    assert found == [
        (wrong_file, 5, "TypeError: cookies() takes 0 to 1 arguments but got 2"),
        (wrong_file, 6, "TypeError: add_cookies() takes 1 argument but got 0"),
        (
            wrong_file,
            7,
            "TypeError: clear_cookies() has no option 'nmae' (did you mean 'name'?) "
            "(its options: domain, name, path)",
        ),
        (wrong_file, 8, "TypeError: save_storage_state() takes 1 argument but got 0"),
        (
            wrong_file,
            9,
            "TypeError: clock_install() has no option 'tiem' (did you mean 'time'?) "
            "(its options: time)",
        ),
        (wrong_file, 10, "TypeError: clock_resume() takes 0 arguments but got 1"),
        (wrong_file, 11, "TypeError: clock_run_for() takes 1 argument but got 0"),
        (wrong_file, 12, "TypeError: set_viewport() takes 2 arguments but got 1"),
        (wrong_file, 13, "TypeError: read_file() takes 1 argument but got 0"),
    ], found
