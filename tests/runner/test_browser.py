"""runner.browser.launch: resolution order, real launches, and wsEndpoint through a real
``playwright run-server`` on loopback. Every test that starts a browser or a server
also checks that none of its processes is left behind."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from net import free_port
from playwright.async_api import async_playwright
from run_servers import RunServer as _RunServer
from run_servers import descendants, process_stat

from runner.browser import launch as rb
from runner.browser.launch import (
    CHROMIUM_ARGS,
    describe_browser,
    launch_browser,
    playwright_browser_path,
    resolve_executable,
)
from runner.errors import BrowserConnectError, BrowserError, BrowserLaunchError, BrowserNotFound
from unotest.exit_codes import exit_code_for

REPO = Path(__file__).resolve().parents[2]

# --- process helpers (Linux /proc) -----------------------------------------------------


_stat = process_stat
_descendants = descendants


def _cmdline(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


def _assert_all_gone(pids: set[int], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    alive = {p for p in pids if _stat(p)}
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        alive = {p for p in alive if _stat(p)}
    assert not alive, f"left behind: {[(p, _cmdline(p)[:2]) for p in sorted(alive)]}"


def _browser_processes(pids: set[int]) -> list[str]:
    """Command lines of the browsers' main processes (not their renderers, GPU, ...).

    Chromium rewrites the command line of its processes into one string, so this
    joins the parts and looks for the switches in it.
    """
    lines = [" ".join(_cmdline(pid)) for pid in pids]
    return [line for line in lines if "--remote-debugging-pipe" in line and "--type=" not in line]


needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


def _write_page(root: Path, title: str) -> None:
    (root / "index.html").write_text(
        f"<!doctype html><title>{title}</title><h1>{title}</h1>", encoding="utf-8"
    )


# --- resolution ---------------------------------------------------------------------


def _executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    path.chmod(0o755)
    return path


@pytest.fixture
def no_browsers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No Playwright browsers (an empty registry) and nothing on PATH; returns the registry."""
    registry = tmp_path / "registry"
    registry.mkdir()
    monkeypatch.setenv("PLAYWRIGHT_BROWSERS_PATH", str(registry))
    empty_bin = tmp_path / "empty-bin"
    empty_bin.mkdir()
    monkeypatch.setenv("PATH", str(empty_bin))
    return registry


def _revision(name: str) -> str:
    package = rb._playwright_package_dir()
    assert package is not None
    data = json.loads((package / "driver" / "package" / "browsers.json").read_text())
    return next(str(b["revision"]) for b in data["browsers"] if b["name"] == name)


def _install_fake(registry: Path, name: str) -> Path:
    """A fake executable where Playwright's registry keeps ``name``."""
    layouts = rb._EXECUTABLES[name].get(rb._short_platform() or "")
    if not layouts:
        pytest.skip("no Playwright browser layout for this platform")
    directory = registry / f"{name.replace('-', '_')}-{_revision(name)}"
    return _executable(directory.joinpath(*layouts[0]))


def test_executable_path_that_exists_is_returned_as_is(tmp_path: Path) -> None:
    fake = _executable(tmp_path / "my browser" / "chrome")
    assert resolve_executable("chromium", str(fake)) == str(fake)
    assert resolve_executable("firefox", str(fake)) == str(fake)


def test_executable_path_wins_over_everything(tmp_path: Path, no_browsers: Path) -> None:
    _install_fake(no_browsers, "chromium-headless-shell")
    _executable(tmp_path / "empty-bin" / "chromium")
    fake = _executable(tmp_path / "chosen")
    assert resolve_executable("chromium", str(fake)) == str(fake)


def test_missing_executable_path_names_it(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "chrome"
    with pytest.raises(BrowserNotFound) as caught:
        resolve_executable("chromium", str(missing))
    assert str(missing) in str(caught.value)
    assert "executablePath" in str(caught.value)
    assert exit_code_for(caught.value) == 2


def test_executable_path_that_is_not_executable(tmp_path: Path) -> None:
    plain = tmp_path / "chrome"
    plain.write_text("not a program", encoding="utf-8")
    with pytest.raises(BrowserNotFound, match="not an executable"):
        resolve_executable("chromium", str(plain))
    with pytest.raises(BrowserNotFound, match="not an executable"):
        resolve_executable("chromium", str(tmp_path))


def test_nothing_found_says_how_to_install(no_browsers: Path) -> None:
    with pytest.raises(BrowserNotFound) as caught:
        resolve_executable("chromium", None)
    message = str(caught.value)
    assert "playwright install chromium" in message
    assert "apt-get install chromium" in message
    assert "\n" not in message
    assert exit_code_for(caught.value) == 2
    assert "install" in describe_browser("chromium")


def test_firefox_has_no_system_fallback(tmp_path: Path, no_browsers: Path) -> None:
    _executable(tmp_path / "empty-bin" / "firefox")
    _executable(tmp_path / "empty-bin" / "chromium")
    with pytest.raises(BrowserNotFound, match="playwright install firefox"):
        resolve_executable("firefox", None)


def test_playwright_own_browser_means_playwright_default(no_browsers: Path) -> None:
    _install_fake(no_browsers, "chromium-headless-shell")
    _install_fake(no_browsers, "chromium")
    assert resolve_executable("chromium", None, headless=True) is None
    assert resolve_executable("chromium", None, headless=False) is None
    line = describe_browser("chromium")
    assert line.startswith("browser: Playwright's own chromium at ")
    assert str(no_browsers) in line


def test_playwright_own_browser_beats_system_chromium(tmp_path: Path, no_browsers: Path) -> None:
    _install_fake(no_browsers, "chromium-headless-shell")
    _executable(tmp_path / "empty-bin" / "chromium")
    assert resolve_executable("chromium", None, headless=True) is None


def test_full_chromium_without_headless_shell_is_passed_explicitly(no_browsers: Path) -> None:
    full = _install_fake(no_browsers, "chromium")
    assert resolve_executable("chromium", None, headless=True) == str(full)
    assert resolve_executable("chromium", None, headless=False) is None


def test_headless_shell_alone_does_not_serve_headed(tmp_path: Path, no_browsers: Path) -> None:
    _install_fake(no_browsers, "chromium-headless-shell")
    system = _executable(tmp_path / "empty-bin" / "chromium-browser")
    assert resolve_executable("chromium", None, headless=True) is None
    assert resolve_executable("chromium", None, headless=False) == str(system)


def test_system_chromium_order(tmp_path: Path, no_browsers: Path) -> None:
    bin_dir = tmp_path / "empty-bin"
    chrome = _executable(bin_dir / "google-chrome")
    assert resolve_executable("chromium", None) == str(chrome)
    chromium = _executable(bin_dir / "chromium")
    assert resolve_executable("chromium", None) == str(chromium)
    assert describe_browser("chromium") == (
        f"browser: system Chromium at {chromium} (found on PATH; Playwright's own is not installed)"
    )


def test_system_headless_shell_serves_headless_runs_only(tmp_path: Path, no_browsers: Path) -> None:
    """Debian's chromium-headless-shell is what Playwright's own install would launch
    headless; a headed run still needs the full Chromium."""
    bin_dir = tmp_path / "empty-bin"
    full = _executable(bin_dir / "chromium")
    shell = _executable(bin_dir / "chromium-headless-shell")
    assert resolve_executable("chromium", None, headless=True) == str(shell)
    assert resolve_executable("chromium", None, headless=False) == str(full)
    assert describe_browser("chromium") == (
        f"browser: system Chromium headless shell at {shell} "
        "(found on PATH; Playwright's own is not installed)"
    )
    assert describe_browser("chromium", headless=False) == (
        f"browser: system Chromium at {full} (found on PATH; Playwright's own is not installed)"
    )


def test_a_one_line_launcher_script_is_resolved_to_its_program(
    tmp_path: Path, no_browsers: Path
) -> None:
    """Debian's launcher runs the shell without exec: Playwright must start the binary
    itself, or its signals reach only the script."""
    real = _executable(tmp_path / "lib" / "chromium-headless-shell")
    launcher = tmp_path / "empty-bin" / "chromium-headless-shell"
    launcher.write_text(f'#!/bin/sh -e\n\n# comment\n{real} "$@"\n', encoding="utf-8")
    launcher.chmod(0o755)
    assert resolve_executable("chromium", None, headless=True) == str(real)
    launcher.write_text(f'#!/bin/sh\nexport X=1\n{real} "$@"\n', encoding="utf-8")
    assert resolve_executable("chromium", None, headless=True) == str(launcher)
    launcher.write_text(f'#!/bin/sh\nexec {tmp_path}/missing "$@"\n', encoding="utf-8")
    assert resolve_executable("chromium", None, headless=True) == str(launcher)


def test_system_headless_shell_alone_does_not_serve_headed(
    tmp_path: Path, no_browsers: Path
) -> None:
    shell = _executable(tmp_path / "empty-bin" / "chrome-headless-shell")
    assert resolve_executable("chromium", None, headless=True) == str(shell)
    with pytest.raises(BrowserNotFound, match="no Chromium for a headed run: the headless shell"):
        resolve_executable("chromium", None, headless=False)


def test_browsers_path_zero_and_relative(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLAYWRIGHT_BROWSERS_PATH", "0")
    package = rb._playwright_package_dir()
    assert package is not None
    assert rb._registry_directory() == package / "driver" / "package" / ".local-browsers"
    monkeypatch.setenv("PLAYWRIGHT_BROWSERS_PATH", "browsers")
    monkeypatch.delenv("INIT_CWD", raising=False)
    monkeypatch.chdir(tmp_path)
    assert rb._registry_directory() == tmp_path / "browsers"


def test_unknown_browser() -> None:
    with pytest.raises(BrowserError, match="unknown browser"):
        resolve_executable("netscape", None)
    assert "unknown browser" in describe_browser("netscape")


def test_describe_executable_path_and_ws_endpoint(tmp_path: Path) -> None:
    fake = _executable(tmp_path / "chrome")
    assert (
        describe_browser("chromium", str(fake)) == f"browser: chromium at {fake} (executablePath)"
    )
    missing = str(tmp_path / "missing")
    assert describe_browser("chromium", missing) == (
        f"browser: executablePath {missing} does not exist"
    )
    line = describe_browser("chromium", None, "ws://127.0.0.1:3000/")
    assert "ws://127.0.0.1:3000/" in line and "wsEndpoint" in line


def test_describe_this_machine(chromium_path: str) -> None:
    line = describe_browser("chromium")
    assert chromium_path in line, line


# --- real launches ------------------------------------------------------------------


@needs_proc
def test_launch_opens_a_page_and_leaves_nothing(
    chromium_path: str, static_site: str, tmp_path: Path
) -> None:
    _write_page(tmp_path, "Hello unotest")

    async def run() -> tuple[str, set[int], list[str]]:
        async with async_playwright() as pw:
            browser = await launch_browser(
                pw, browser="chromium", headless=True, executable_path=None, ws_endpoint=None
            )
            page = await browser.new_page()
            await page.goto(f"{static_site}/index.html")
            title = await page.title()
            pids = _descendants(os.getpid())
            mains = _browser_processes(pids)
            await browser.close()
        return title, pids, mains

    title, pids, mains = asyncio.run(run())
    assert title == "Hello unotest"
    assert len(mains) == 1, mains
    for arg in CHROMIUM_ARGS:
        assert arg in mains[0]
    assert "--headless" in mains[0]
    _assert_all_gone(pids)


@needs_proc
def test_launch_with_explicit_executable_path(
    chromium_path: str, static_site: str, tmp_path: Path
) -> None:
    _write_page(tmp_path, "Explicit")

    async def run() -> tuple[str, set[int]]:
        async with async_playwright() as pw:
            browser = await launch_browser(
                pw,
                browser="chromium",
                headless=True,
                executable_path=chromium_path,
                ws_endpoint=None,
            )
            page = await browser.new_page()
            await page.goto(static_site + "/")
            pids = _descendants(os.getpid())
            title = await page.title()
            await browser.close()
        return title, pids

    title, pids = asyncio.run(run())
    assert title == "Explicit"
    _assert_all_gone(pids)


def test_launch_failure_is_one_sentence(tmp_path: Path) -> None:
    broken = tmp_path / "broken-chrome"
    broken.write_text("#!/bin/sh\necho 'cannot open display: nowhere' >&2\nexit 1\n")
    broken.chmod(0o755)

    async def run() -> None:
        async with async_playwright() as pw:
            await launch_browser(
                pw,
                browser="chromium",
                headless=True,
                executable_path=str(broken),
                ws_endpoint=None,
                timeout_ms=20_000,
            )

    with pytest.raises(BrowserLaunchError) as caught:
        asyncio.run(run())
    message = str(caught.value)
    assert message.startswith(f"could not launch chromium ({broken}): ")
    assert "\n" not in message
    assert "Call log" not in message
    assert exit_code_for(caught.value) == 2


# --- wsEndpoint through `playwright run-server` -------------------------------------------


@pytest.fixture
def run_server() -> Iterator[type[_RunServer]]:
    started: list[_RunServer] = []

    class Tracked(_RunServer):
        def __init__(self, *extra: str) -> None:
            super().__init__(*extra)
            started.append(self)

    yield Tracked
    for server in started:
        pids = _descendants(server.process.pid) | {server.process.pid}
        server.stop()
        _assert_all_gone(pids)


@needs_proc
@pytest.mark.parametrize("explicit", [True, False], ids=["executablePath", "resolved-locally"])
def test_ws_endpoint_launches_through_run_server(
    chromium_path: str,
    static_site: str,
    tmp_path: Path,
    run_server: type[_RunServer],
    explicit: bool,
) -> None:
    """``run-server --unsafe`` accepts executablePath and args in the launch-options header.

    With executablePath the client sends it; without, a loopback server that has no
    browser of its own is offered the locally resolved one.
    """
    _write_page(tmp_path, "Through the server")
    server = run_server("--unsafe")
    seen: dict[str, object] = {}

    async def run() -> str:
        async with async_playwright() as pw:
            browser = await launch_browser(
                pw,
                browser="chromium",
                headless=True,
                executable_path=chromium_path if explicit else None,
                ws_endpoint=server.endpoint,
            )
            page = await browser.new_page()
            await page.goto(f"{static_site}/index.html")
            pids = _descendants(server.process.pid)
            seen["mains"] = _browser_processes(pids)
            seen["pids"] = pids
            title = await page.title()
            await browser.close()
        return title

    assert asyncio.run(run()) == "Through the server"
    mains = seen["mains"]
    assert isinstance(mains, list) and len(mains) == 1, mains
    for arg in CHROMIUM_ARGS:
        assert arg in mains[0]
    pids = seen["pids"]
    assert isinstance(pids, set)
    browser_pids = {p for p in pids if "--remote-debugging-pipe" in " ".join(_cmdline(p))}
    _assert_all_gone(browser_pids)  # closing the browser stops it, the server stays


@pytest.mark.skipif(
    playwright_browser_path("chromium") is not None,
    reason="Playwright's own Chromium is installed: a safe server can launch it",
)
def test_ws_endpoint_without_unsafe_cannot_use_executable_path(
    chromium_path: str, run_server: type[_RunServer]
) -> None:
    server = run_server()

    async def run() -> None:
        async with async_playwright() as pw:
            await launch_browser(
                pw,
                browser="chromium",
                headless=True,
                executable_path=chromium_path,
                ws_endpoint=server.endpoint,
            )

    with pytest.raises(BrowserConnectError) as caught:
        asyncio.run(run())
    message = str(caught.value)
    assert server.endpoint in message
    assert "--unsafe" in message
    assert "playwright install chromium" in message
    assert "\n" not in message


def test_unreachable_ws_endpoint_is_a_clear_error() -> None:
    endpoint = f"ws://127.0.0.1:{free_port()}/"

    async def run() -> None:
        async with async_playwright() as pw:
            await launch_browser(
                pw, browser="chromium", headless=True, executable_path=None, ws_endpoint=endpoint
            )

    started = time.monotonic()
    with pytest.raises(BrowserConnectError) as caught:
        asyncio.run(run())
    assert time.monotonic() - started < 20
    message = str(caught.value)
    assert message.startswith(f"could not connect to the Playwright server at {endpoint}")
    assert "ECONNREFUSED" in message
    assert "\n" not in message
    assert "Call log" not in message
    assert exit_code_for(caught.value) == 2


# --- what doctor checks before a run: a display for headed, a reachable wsEndpoint -------


@pytest.mark.parametrize(
    ("headed_by", "says"),
    [
        (
            "config",
            "(headed because of 'headless: false' in unotest.config.yaml): set "
            "'headless: true' there to run headless",
        ),
        ("UNOTEST_HEADED", "(headed because of UNOTEST_HEADED): unset it to run headless"),
        ("--headed", "(headed because of --headed): leave it out to run headless"),
    ],
)
def test_a_headed_run_without_a_display_names_what_made_it_headed(
    monkeypatch: pytest.MonkeyPatch, headed_by: str, says: str
) -> None:
    """It said "run it headless" whatever made it headed, so a user with `headless:
    false` in the config looked for an option they never gave."""
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setattr(sys, "platform", "linux")
    expected = (
        f"a headed run needs a display and neither DISPLAY nor WAYLAND_DISPLAY is set {says}, "
        "or run under a virtual display (xvfb-run unotest ...)"
    )
    assert rb.headed_without_display(headed_by) == expected

    async def launch() -> None:
        # Refused before Playwright is used at all.
        await launch_browser(
            None,  # type: ignore[arg-type]
            browser="chromium",
            headless=False,
            executable_path=None,
            ws_endpoint=None,
            headed_by=headed_by,
        )

    with pytest.raises(BrowserLaunchError) as info:
        asyncio.run(launch())
    assert str(info.value) == expected

    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    assert rb.headed_without_display(headed_by) is None


def test_an_unreachable_ws_endpoint_is_found_without_playwright() -> None:
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        port = listening.getsockname()[1]
        assert rb.ws_endpoint_unreachable(f"ws://127.0.0.1:{port}/pw") is None
    said = rb.ws_endpoint_unreachable(f"ws://127.0.0.1:{port}/pw")
    assert said is not None and said.startswith(f"nothing answers at 127.0.0.1:{port} ("), said
