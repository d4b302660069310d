"""The config's context options and ``set_viewport`` as a page sees them: real Chromium,
real ``unotest e2e`` runs (and one pytest session with the plugin) against a site this
test serves. ``locale`` and ``timezoneId`` show in ``Intl``, ``colorScheme`` and the
viewport in media queries, ``userAgent`` and ``extraHTTPHeaders`` at the server,
``geolocation`` (with ``permissions``) in ``navigator.geolocation``, a ``device`` in
the user agent and the width. A bad value is one sentence at its ``file:line:col`` and
exit 2 before any browser starts; a device Playwright's registry lacks is said before
the browser is launched."""

from __future__ import annotations

import http.server
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from browser_thread import BrowserThread
from net import serve_handler
from sites import config_yaml, e2e_json, scenario_source, unotest_env, write_project

from runner.browser.lifecycle import devices_of

PAGE = """<!doctype html>
<meta name=viewport content="width=device-width, initial-scale=1">
<title>Emulation</title>
<style>#narrow { display: none } @media (max-width: 600px) { #narrow { display: block } }</style>
<p id=narrow>narrow</p>
<p id=lang></p><p id=number></p><p id=zone></p><p id=when></p><p id=scheme></p>
<p id=agent></p><p id=width></p><p id=where>unknown</p>
<script>
const set = (id, text) => { document.getElementById(id).textContent = text };
set("lang", navigator.language);
set("number", new Intl.NumberFormat().format(1234.5));
set("zone", Intl.DateTimeFormat().resolvedOptions().timeZone);
set("when", new Date(Date.UTC(2024, 0, 15, 12, 0)).toLocaleString());
set("scheme", matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light");
set("agent", navigator.userAgent);
const width = () => set("width", String(innerWidth));
width();
addEventListener("resize", width);
navigator.geolocation.getCurrentPosition(
  (p) => set("where", p.coords.latitude + "," + p.coords.longitude),
  (e) => set("where", "denied " + e.code));
</script>
"""

EMULATION_CONFIG = """\
locale: de-DE
timezoneId: America/New_York
colorScheme: dark
userAgent: unotest-agent/1.0
extraHTTPHeaders:
  X-Test-Run: emulation-42
geolocation: {latitude: 48.8584, longitude: 2.2945}
permissions: [geolocation]
"""

EMULATION = r"""  goto("/emulation")
  expect_text(css("#lang"), "de-DE")
  expect_text(css("#number"), "1.234,5")
  expect_text(css("#zone"), "America/New_York")
  expect_text(css("#when"), "15.1.2024, 07:00:00")
  expect_text(css("#scheme"), "dark")
  expect_text(css("#agent"), "unotest-agent/1.0")
  expect_text(css("#where"), "48.8584,2.2945")
  expect_text(css("#width"), "1280")
  expect_hidden(css("#narrow"))
  set_viewport(500, 700)
  expect_visible(css("#narrow"))
  expect_text(css("#width"), "500")
  set_viewport(1000, 700)
  expect_hidden(css("#narrow"))
  goto("/headers")
  expect_text(css("#ua"), "unotest-agent/1.0")
  expect_text(css("#run"), "emulation-42")
  try { set_viewport(0, 10) } catch (e) { log("@@ " + e.message) }
  try { set_viewport(100.5, 10) } catch (e) { log("@@ " + e.message) }
  try { set_viewport(100, 20000) } catch (e) { log("@@ " + e.message) }
  try { set_viewport("100", 10) } catch (e) { log("@@ " + e.message) }
"""

DEVICE = r"""  goto("/emulation")
  expect_text(css("#width"), "412")
  expect_text(css("#agent"), /Pixel 7/)
  expect_text(css("#scheme"), "light")
"""

PLUGIN = r"""  goto("/emulation")
  expect_text(css("#lang"), "de-DE")
  expect_text(css("#zone"), "America/New_York")
  expect_text(css("#scheme"), "dark")
"""


class _Site(http.server.BaseHTTPRequestHandler):
    """``/emulation`` is the page; ``/headers`` shows two headers the request had."""

    def do_GET(self) -> None:
        if self.path == "/headers":
            ua, run = self.headers.get("User-Agent", ""), self.headers.get("X-Test-Run", "")
            body = f"<title>headers</title><p id=ua>{ua}</p><p id=run>{run}</p>"
        else:
            body = PAGE
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def site() -> Iterator[str]:
    with serve_handler(_Site, "emulation-site") as url:
        yield url


TIMEOUT = {"action": 5000, "expect": 3000, "navigation": 10000, "scenario": 60000}


def test_the_config_s_emulation_and_set_viewport_reach_the_page(
    tmp_path: Path, site: str, chromium_path: str
) -> None:
    emulated = write_project(
        tmp_path / "emulated",
        config_yaml(site, timeout=TIMEOUT, chromium=chromium_path, extra=EMULATION_CONFIG),
        {"emulation": scenario_source("emulation", EMULATION, fn="test_emulation")},
    )
    phone = write_project(
        tmp_path / "phone",
        config_yaml(site, timeout=TIMEOUT, chromium=chromium_path, extra='device: "Pixel 7"\n'),
        {"device": scenario_source("device", DEVICE, fn="test_device")},
    )
    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = pool.map(lambda job: e2e_json(*job), [(emulated, "emulation"), (phone, "device")])
        (code, result, output), (device_code, device_result, device_output) = runs
    assert code == 0 and result["outcome"] == "completed", output
    said = [line[3:] for line in output.splitlines() if line.startswith("@@ ")]
    wanted = "a whole number of CSS pixels from 1 to 16384"
    assert said == [
        f"set_viewport() width: 0 is not valid: {wanted}",
        f"set_viewport() width: 100.5 is not valid: {wanted}",
        f"set_viewport() height: 20000 is not valid: {wanted}",
        f'set_viewport() width: "100" is not valid: {wanted}',
    ], output
    assert device_code == 0 and device_result["outcome"] == "completed", device_output


def test_a_device_the_registry_lacks_is_said_before_the_browser_launches(
    tmp_path: Path, chromium_path: str
) -> None:
    project = write_project(
        tmp_path,
        config_yaml(None, chromium=chromium_path, extra='locale: en-GB\ndevice: "Pixel 77"\n'),
        {"phone": scenario_source("phone", '  log("never")\n')},
    )
    done = subprocess.run(
        [sys.executable, "-m", "unotest", "e2e", "phone"],
        cwd=project,
        env=unotest_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert (
        "unotest.config.yaml:5:8: 'device' must be a name of Playwright's device registry "
        'such as "iPhone 13", "Pixel 7" or "Desktop Chrome", got "Pixel 77" (did you mean '
        "'Pixel 7'?)"
    ) in done.stderr, done.stderr
    assert "never" not in done.stdout and "Traceback" not in done.stderr


BAD_CONFIGS = {
    "locale: [de]\n": "1:8: 'locale' must be a BCP 47 language tag",
    "timezoneId: Mars/Olympus\n": "1:12: 'timezoneId' must be an IANA time zone",
    "colorScheme: dim\n": "1:13: 'colorScheme' must be one of light, dark, no-preference",
    "geolocation: {latitude: 1}\n": "1:0: 'geolocation.longitude' is missing",
    "permissions: [camra]\n": "1:13: 'permissions' must be a list of permissions",
    "userAgent: 7\n": "1:11: 'userAgent' must be a non-empty string, got 7",
    "extraHTTPHeaders: {'X A': b}\n": "1:26: 'extraHTTPHeaders' names must be HTTP header",
    "device: [Pixel 7]\n": "1:8: 'device' must be a non-empty string, got a list",
}


def test_each_bad_key_is_one_sentence_and_exit_2_before_a_browser(tmp_path: Path) -> None:
    def run(job: tuple[int, str]) -> tuple[str, subprocess.CompletedProcess[str]]:
        number, text = job
        project = write_project(
            tmp_path / f"p{number}",
            "headless: true\n" + text,
            {"s": scenario_source("s", '  log("ran")\n')},
        )
        done = subprocess.run(
            [sys.executable, "-m", "unotest", "e2e", "s"],
            cwd=project,
            env=unotest_env(),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert not (project / "unotest" / ".runs").exists(), "a run began"
        return text, done

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(run, enumerate(BAD_CONFIGS)))
    for text, done in results:
        expected = BAD_CONFIGS[text]
        line = int(expected.split(":")[0]) + 1  # after the `headless` line
        place = f"unotest.config.yaml:{line}:{expected.split(':', 1)[1]}"
        assert done.returncode == 2, (text, done.stdout, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and place in lines[0], (text, done.stderr)
        assert "ran" not in done.stdout


def test_the_pytest_plugin_gives_the_scenario_s_page_the_config_s_emulation(
    tmp_path: Path, site: str
) -> None:
    """Under pytest the context is pytest-playwright's, made with the project's keys
    under its own ``browser_context_args``."""
    project = write_project(
        tmp_path / "p",
        f"baseURL: {site}\ntimeout: {{expect: 3000}}\n" + EMULATION_CONFIG,
        {"plugin": scenario_source("plugin", PLUGIN, fn="test_plugin")},
    )
    done = subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "--unotest", "-q", "-p", "no:cacheprovider"),
            *("-p", "no:hypothesispytest", "-p", "no:xdist"),
        ],
        cwd=project,
        env=unotest_env(),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout + done.stderr


def test_the_device_registry_is_read_from_a_browser(shared_browser: BrowserThread) -> None:
    """A worker's shared browser brings no ``Playwright`` object: the registry is reached
    through the browser, and it is Playwright's own."""
    devices = devices_of(shared_browser.browser)
    assert devices["iPhone 13"]["viewport"] == {"width": 390, "height": 664}
    assert "Pixel 7" in devices and "Desktop Chrome" in devices
