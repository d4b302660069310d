"""The viewer page's shell in real Chromium on a real ``unotest view`` (issue 15):
the page and its static files, the sidebar live from ``/ws``, tabs in the address bar,
the Runs list, the Env editor, terminals, and recovery from a dropped ``/ws``.

Every test finds elements by role and accessible name and fails on any page error or
console error (``guard``).
"""

from __future__ import annotations

import re
import shutil
import signal
import time
from pathlib import Path

import pytest
from playwright.sync_api import Dialog, Page, WebSocketRoute, expect
from viewer_page import (
    PageGuard,
    Viewer,
    browser_type_launch_args,
    guard_fixture,
    guard_page,
    running_viewer,
    scenario_source,
    tree_item,
    viewer_fixture,
)

from unotest.viewer.routes_static import resolve_static

__all__ = ["browser_type_launch_args"]  # the fixture, imported for pytest to find here

WAIT_MS = 20_000
ENV = "# the site's account\nAPI_TOKEN=s3cret-value\nHEADLESS=1\n# OLD_URL=http://old\nGREETING=hello\n"

viewer = viewer_fixture(
    scenarios={
        "smoke": '  goto("/")\n  expect_text(css("h1"), "Welcome")\n',
        "auth/signin": '  goto("/")\n',
        "auth/signout": '  goto("/")\n',
        "shop/cart": scenario_source("shop-cart", '  goto("/")\n', color="#ff0000"),
    },
    helpers={"login": 'function login() {\n  goto("/")\n}\n'},
    collections={"nightly": ["smoke", "gone/missing"]},
    env=ENV,
    # A local terminal runs $SHELL: /bin/sh reads no rc file, so what a terminal test waits
    # for never depends on this machine's ~/.bashrc (one stuck in `pyenv rehash` made the
    # shell answer nothing for a minute).
    environ={"SHELL": "/bin/sh"},
)
guard = guard_fixture(WAIT_MS)


def open_page(page: Page, viewer: Viewer) -> None:
    page.goto(viewer.url)
    expect(tree_item(page, "smoke")).to_be_visible()


# --- the page and its files -------------------------------------------------------------


def test_the_page_loads_and_later_requests_carry_the_cookie_not_the_token(
    page: Page, viewer: Viewer, guard: PageGuard
) -> None:
    urls: list[str] = []
    page.on("request", lambda r: urls.append(r.url))
    page.on("websocket", lambda ws: urls.append(ws.url))
    open_page(page, viewer)
    assert "token" not in page.url  # dropped from the address bar once the cookie is set
    expect(page.get_by_role("heading", name="unotest")).to_be_visible()
    later = [u for u in urls[1:] if "/api/" in u or u.endswith("/ws")]
    assert any(u.endswith("/api/scenarios") for u in later), urls
    assert any(u.endswith("/ws") for u in later), urls
    assert not [u for u in urls[1:] if viewer.token in u], urls


def test_static_files_have_their_content_types_and_nothing_else_is_served(
    viewer: Viewer,
) -> None:
    auth = {"headers": {"Authorization": f"Bearer {viewer.token}"}}
    index = viewer.client.get(viewer.base + "/", **auth)  # type: ignore[arg-type]
    assert index.status_code == 200 and index.headers["content-type"].startswith("text/html")
    assert '<script type="importmap">' in index.text
    for path, kind in [
        ("/static/app.js", "text/javascript"),
        ("/static/vendor/preact.mjs", "text/javascript"),
        ("/static/shell.css", "text/css"),
        ("/static/vendor/VENDOR.json", "application/json"),
    ]:
        answer = viewer.client.get(viewer.base + path, **auth)  # type: ignore[arg-type]
        assert answer.status_code == 200, path
        assert answer.headers["content-type"].split(";")[0] == kind, path
    for path in [
        "/static/%2e%2e/routes_static.py",
        "/static/vendor/%2e%2e/%2e%2e/app.py",
        "/static/..%2fapp.py",
        "/static/vendor",
        "/static/",
        "/static/.hidden.js",
        "/static/missing.js",
    ]:
        answer = viewer.client.get(viewer.base + path, **auth)  # type: ignore[arg-type]
        assert answer.status_code == 404, path
        assert answer.json() == {"error": "nothing is served at this path"}, path


def test_a_static_path_resolves_only_to_a_regular_file_under_the_folder(tmp_path: Path) -> None:
    root = tmp_path / "static"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "a.js").write_text("export {};\n", encoding="utf-8")
    (root / "b.exe").write_text("x", encoding="utf-8")
    (tmp_path / "secret.js").write_text("export {};\n", encoding="utf-8")
    (root / "out.js").symlink_to(tmp_path / "secret.js")
    (root / "in.js").symlink_to(root / "sub" / "a.js")
    (root / "sub" / "dir.js").mkdir()
    assert resolve_static("sub/a.js", root) == (root / "sub" / "a.js").resolve()
    assert resolve_static("in.js", root) == (root / "sub" / "a.js").resolve()
    for refused in [
        "out.js",
        "../secret.js",
        "sub/../../secret.js",
        "sub/./a.js",
        "sub//a.js",
        "/sub/a.js",
        "sub",
        "sub/dir.js",
        "b.exe",
        ".hidden.js",
        "sub\\a.js",
        "a.js\x00",
        "",
        "missing.js",
    ]:
        assert resolve_static(refused, root) is None, refused


def test_a_request_without_the_token_is_refused_and_the_cookie_alone_is_enough(
    viewer: Viewer,
) -> None:
    for path in ["/", "/static/app.js", "/api/scenarios"]:
        assert viewer.status("GET", path) == 401, path
    first = viewer.client.get(viewer.url)
    assert first.status_code == 200
    assert "HttpOnly" in first.headers["set-cookie"]
    # httpx keeps the cookie it was given: no token in the URL or a header any more.
    assert viewer.client.get(viewer.base + "/static/lib.js").status_code == 200
    assert viewer.client.get(viewer.base + "/api/scenarios").status_code == 200


def test_a_page_without_the_token_is_refused(page: Page, viewer: Viewer) -> None:
    answer = page.goto(viewer.base + "/")
    assert answer is not None and answer.status == 401
    assert "token" in page.locator("body").inner_text()


# --- the sidebar -------------------------------------------------------------------------


def test_the_tree_lists_scenarios_in_folders_helpers_collections_and_filters(
    page: Page, viewer: Viewer, guard: PageGuard
) -> None:
    open_page(page, viewer)
    for name in ["smoke", "auth/signin", "auth/signout", "shop/cart"]:
        expect(tree_item(page, name)).to_be_visible()
    auth = tree_item(page, "auth")
    expect(auth).to_have_attribute("aria-expanded", "true")
    auth.locator(".folder-name").click()
    expect(auth).to_have_attribute("aria-expanded", "false")
    expect(tree_item(page, "auth/signin")).to_be_hidden()
    auth.locator(".folder-name").click()
    expect(page.get_by_role("button", name="login")).to_be_visible()
    orphan = page.locator(".orphan", has_text="gone/missing")
    expect(orphan).to_contain_text("file not found")
    expect(orphan).to_have_css("color", "rgb(198, 40, 40)")

    tree_item(page, "auth").focus()  # the keyboard
    page.keyboard.press("ArrowDown")
    expect(tree_item(page, "auth/signin")).to_be_focused()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    expect(page.get_by_role("tab", name="auth/signout")).to_have_attribute("aria-selected", "true")

    page.get_by_role("searchbox", name="Filter").fill("sign")
    expect(tree_item(page, "auth/signin")).to_be_visible()
    expect(tree_item(page, "auth/signout")).to_be_visible()
    expect(tree_item(page, "smoke")).to_have_count(0)
    expect(tree_item(page, "shop")).to_have_count(0)
    page.get_by_role("searchbox", name="Filter").fill("nothing-like-this")
    expect(page.get_by_text("No scenario matches.")).to_be_visible()


def test_files_created_and_broken_on_disk_appear_live(
    page: Page, viewer: Viewer, guard: PageGuard
) -> None:
    open_page(page, viewer)
    e2e = viewer.root / "unotest" / "e2e"
    (e2e / "reports").mkdir()
    (e2e / "reports" / "daily.test.js").write_text(
        scenario_source("daily", '  goto("/")\n'), encoding="utf-8"
    )
    expect(tree_item(page, "reports/daily")).to_be_visible()
    (e2e / "smoke.test.js").write_text(scenario_source("smoke", "  goto(\n"), encoding="utf-8")
    smoke = tree_item(page, "smoke")
    expect(smoke.get_by_label(re.compile(r"^1 problem"))).to_be_visible()
    (e2e / "_collections" / "nightly.yaml").write_text("scenarios:\n  - smoke\n", encoding="utf-8")
    expect(page.locator(".orphan")).to_have_count(0)
    (e2e / "_helpers" / "login.js").unlink()
    expect(page.get_by_role("button", name="login")).to_have_count(0)


def test_a_scenario_whose_header_is_wrong_is_listed_with_its_problem_and_can_be_fixed(
    page: Page, viewer: Viewer, guard: PageGuard
) -> None:
    # Line 3 is not `// #RRGGBB`: /api/scenarios leaves the file out, /api/problems names it.
    path = viewer.root / "unotest" / "e2e" / "auth" / "noheader.test.js"
    path.write_text('// id-noheader\n// No header\n// red\nfunction test_it() {\n  goto("/")\n}\n')
    open_page(page, viewer)
    item = tree_item(page, "auth/noheader")
    expect(item).to_be_visible()
    expect(item.get_by_label("1 problem")).to_be_visible()
    page.get_by_role("searchbox", name="Filter").fill("nohead")
    expect(item).to_be_visible()
    expect(page.get_by_text("No scenario matches.")).to_have_count(0)
    item.click()
    expect(page.get_by_role("tab", name="auth/noheader")).to_have_attribute("aria-selected", "true")
    source = page.get_by_role("textbox", name="Source")
    expect(source).to_have_value(re.compile(r"^// id-noheader\n// No header\n// red\n"))
    expect(page.get_by_role("list", name="Problems")).to_contain_text("#RRGGBB")
    # Fixed and saved from the page: a normal scenario, its colour and title from the header.
    source.fill(scenario_source("noheader", '  goto("/")\n', title="No header"))
    source.press("Control+s")
    expect(item.get_by_label("1 problem")).to_have_count(0)
    expect(item.locator(".leaf-name")).to_have_attribute("title", "No header")
    expect(page.get_by_role("list", name="Problems")).to_have_count(0)


def test_closing_or_reloading_the_page_asks_first_only_while_an_editor_has_unsaved_edits(
    page: Page, viewer: Viewer, guard: PageGuard
) -> None:
    """Drafts live as long as the page: a reload with one asks (the browser's
    ``beforeunload`` prompt); without one, saved or never made, it does not."""
    asked: list[str] = []

    def answer(dialog: Dialog) -> None:
        asked.append(dialog.type)
        dialog.accept()

    page.on("dialog", answer)
    page.goto(viewer.url + "#open=scenario:unotest/e2e/smoke.test.js")
    source = page.get_by_role("textbox", name="Source")
    source.click()  # a gesture: without one Chromium never asks
    page.reload()
    expect(source).to_be_visible()
    source.press("End")
    page.keyboard.type("// more")
    expect(page.get_by_text("unotest/e2e/smoke.test.js •")).to_be_visible()
    assert asked == []
    page.reload()
    assert asked == ["beforeunload"]
    expect(source).not_to_have_value(re.compile("// more"))  # accepted: the edit is gone
    source.press("End")
    page.keyboard.type("// saved")
    source.press("Control+s")
    expect(page.get_by_role("status").filter(has_text="Saved")).to_be_visible()
    page.reload()  # saved: nothing to lose, no prompt
    expect(source).to_have_value(re.compile("// saved"))
    assert asked == ["beforeunload"]


def test_a_run_shows_in_the_tree_and_the_runs_list_and_opens_its_tab(
    page: Page, viewer: Viewer, guard: PageGuard
) -> None:
    open_page(page, viewer)
    started = viewer.api("POST", "/api/runs", {"kind": "scenario", "scenario": "smoke"})
    run_id = started["runId"]
    smoke = tree_item(page, "smoke")
    # The Runs list's words (issue 32, defect 10: "completed" here, "passed" there).
    expect(smoke.locator(".run-badge")).to_have_text("passed", timeout=60_000)
    other = viewer.api("POST", "/api/runs", {"kind": "scenario", "scenario": "auth/signin"})
    signin = tree_item(page, "auth/signin")
    expect(signin.locator(".run-badge")).to_have_text("passed", timeout=60_000)

    page.get_by_role("button", name="Runs", exact=True).click()
    runs = page.get_by_role("region", name="Runs")
    row = runs.get_by_role("row").filter(has_text=run_id)
    expect(row).to_contain_text("passed")
    expect(row).to_contain_text("completed")
    expect(row.get_by_role("cell").nth(4)).to_have_text(re.compile(r"\d+(\.\d)? (ms|s)|\d+ min"))
    runs.get_by_role("combobox", name="Status").select_option("failed")
    expect(runs.get_by_role("row").filter(has_text=run_id)).to_have_count(0)
    runs.get_by_role("combobox", name="Status").select_option("passed")
    expect(runs.get_by_role("row").filter(has_text=other["runId"])).to_have_count(1)
    runs.get_by_role("combobox", name="Scenario").select_option("smoke")
    expect(runs.get_by_role("row").filter(has_text=other["runId"])).to_have_count(0)
    runs.get_by_role("button", name=f"Open run {run_id}").click()
    expect(page.get_by_role("tab", name="run smoke")).to_have_attribute("aria-selected", "true")
    assert f"open=scenario-run:{run_id}" in page.url


# --- tabs ----------------------------------------------------------------------------------


def test_tabs_show_the_colour_close_and_are_restored_from_the_address(
    page: Page, viewer: Viewer, guard: PageGuard
) -> None:
    open_page(page, viewer)
    tree_item(page, "shop/cart").click()
    tree_item(page, "smoke").click()
    page.get_by_role("button", name="Env", exact=True).click()
    page.get_by_role("button", name="Runs", exact=True).click()
    tabs = page.get_by_role("tablist", name="Open tabs")
    expect(tabs.get_by_role("tab")).to_have_count(4)
    cart = page.locator(".tab", has=page.get_by_role("tab", name="shop/cart"))
    expect(cart.locator(".tab-strip")).to_have_css("background-color", "rgb(255, 0, 0)")
    tabs.get_by_role("tab", name="Runs").focus()  # the keyboard: Left shows the tab before
    page.keyboard.press("ArrowLeft")
    expect(tabs.get_by_role("tab", name="Env")).to_be_focused()
    expect(tabs.get_by_role("tab", name="Env")).to_have_attribute("aria-selected", "true")
    page.get_by_role("button", name="Close Env").click()
    expect(tabs.get_by_role("tab")).to_have_count(3)
    tabs.get_by_role("tab", name="smoke").click()
    expect(tabs.get_by_role("tab", name="smoke")).to_have_attribute("aria-selected", "true")
    shared = page.url
    assert "#open=" in shared and "token" not in shared

    page.reload()
    expect(tabs.get_by_role("tab")).to_have_text(["shop/cart", "smoke", "Runs"])
    expect(tabs.get_by_role("tab", name="smoke")).to_have_attribute("aria-selected", "true")

    other = page.context.new_page()
    other_guard = guard_page(other)
    other.goto(shared)  # a shared link: the same tabs, the same one active
    other_tabs = other.get_by_role("tablist", name="Open tabs")
    expect(other_tabs.get_by_role("tab")).to_have_text(["shop/cart", "smoke", "Runs"])
    expect(other_tabs.get_by_role("tab", name="smoke")).to_have_attribute("aria-selected", "true")
    other_guard.check()
    other.close()


# --- the env editor ------------------------------------------------------------------------


def test_the_env_editor_masks_reveals_switches_and_saves(
    page: Page, viewer: Viewer, guard: PageGuard
) -> None:
    open_page(page, viewer)
    page.get_by_role("button", name="Env", exact=True).click()
    editor = page.get_by_role("region", name="Env")
    secret = editor.get_by_label("API_TOKEN", exact=True)
    expect(secret).to_have_attribute("type", "password")
    reveal = editor.get_by_role("button", name="Reveal API_TOKEN")
    reveal.click()
    expect(secret).to_have_attribute("type", "text")
    # A toggle: its words stay, its state says it (it read "Hide" under "Reveal ...").
    expect(reveal).to_have_attribute("aria-pressed", "true")
    expect(reveal).to_have_text("Reveal")
    expect(secret).to_have_value("s3cret-value")
    assert secret.evaluate("(el) => el.spellcheck") is False  # a secret is not prose
    switch = editor.get_by_role("switch", name="HEADLESS")
    expect(switch).to_have_attribute("aria-checked", "true")
    switch.click()
    expect(switch).to_have_attribute("aria-checked", "false")
    commented = editor.get_by_role("row").filter(has_text="OLD_URL")
    expect(commented).to_have_attribute("aria-disabled", "true")
    expect(commented.get_by_role("textbox")).to_have_count(0)
    expect(commented).to_have_css("opacity", "0.5")
    editor.get_by_label("GREETING", exact=True).fill("hi there")
    editor.get_by_role("button", name="Save").click()
    expect(editor.get_by_role("status")).to_have_text("Saved.")
    text = (viewer.root / "unotest" / ".env").read_text(encoding="utf-8")
    assert text == ENV.replace("HEADLESS=1", "HEADLESS=0").replace(
        "GREETING=hello", "GREETING=hi there"
    ) or text == ENV.replace("HEADLESS=1", "HEADLESS=0").replace(
        "GREETING=hello", 'GREETING="hi there"'
    ), text
    expect(editor.get_by_role("button", name="Save")).to_be_disabled()


# --- terminals -----------------------------------------------------------------------------


def terminal_size(page: Page, tag: str) -> tuple[int, int]:
    """``stty size`` in the terminal: (rows, cols) of its PTY."""
    page.keyboard.type(f"echo {tag}=$(stty size)\n")
    pattern = re.compile(rf"{tag}=(\d+) (\d+)")
    expect(page.locator(".xterm-rows")).to_contain_text(pattern)
    found = pattern.search(page.locator(".xterm-rows").inner_text())
    assert found is not None
    return int(found.group(1)), int(found.group(2))


def test_a_terminal_echoes_and_follows_the_panels_size(
    page: Page, viewer: Viewer, guard: PageGuard
) -> None:
    page.set_viewport_size({"width": 1200, "height": 800})
    open_page(page, viewer)
    page.get_by_role("button", name="New local terminal").click()
    expect(page.get_by_role("tab", name="Terminal 1 (local)")).to_have_attribute(
        "aria-selected", "true"
    )
    screen = page.locator(".xterm-rows")
    expect(screen).to_be_visible()
    page.locator(".xterm-helper-textarea").focus()
    page.keyboard.type("echo hello-$((6*7))\n")
    expect(screen).to_contain_text("hello-42")
    before = terminal_size(page, "first")
    page.set_viewport_size({"width": 800, "height": 500})
    after = terminal_size(page, "second")
    assert after[0] < before[0] and after[1] < before[1], (before, after)
    page.get_by_role("button", name="Close Terminal 1 (local)").click()
    expect(page.locator(".xterm-rows")).to_have_count(0)


@pytest.mark.skipif(shutil.which("codex") is not None, reason="codex is installed here")
def test_a_terminal_whose_program_is_missing_says_so(
    page: Page, viewer: Viewer, guard: PageGuard
) -> None:
    open_page(page, viewer)
    page.get_by_role("button", name="New codex terminal").click()
    expect(page.locator(".xterm-rows")).to_contain_text("codex is not installed")
    page.get_by_role("button", name="New local terminal").click()
    expect(page.get_by_role("tab", name="Terminal 2 (local)")).to_have_attribute(
        "aria-selected", "true"
    )
    page.get_by_role("tab", name="Terminal 1 (codex)").click()
    expect(page.locator(".xterm-rows").first).to_contain_text("codex is not installed")


# --- resilience ----------------------------------------------------------------------------


def test_a_dropped_socket_shows_the_banner_then_a_resync_shows_what_changed(
    page: Page, viewer: Viewer, guard: PageGuard
) -> None:
    blocked = {"on": False}
    live: list[WebSocketRoute] = []

    def route(ws: WebSocketRoute) -> None:
        if blocked["on"]:
            ws.close()
            return
        ws.connect_to_server()
        live.append(ws)

    page.route_web_socket(re.compile(r"/ws$"), route)
    open_page(page, viewer)
    banner = page.get_by_role("alert").filter(has_text="Reconnecting")
    expect(banner).to_have_count(0)
    # The tree comes over REST, maybe before the socket opens; a socket closed before
    # it ever opened shows no banner (nothing was live yet). Wait for it to be open.
    connected = "async () => (await import('/static/live.js')).isConnected()"
    deadline = time.monotonic() + WAIT_MS / 1000
    while not page.evaluate(connected):
        assert time.monotonic() < deadline, "the page's socket never opened"
        page.wait_for_timeout(50)
    blocked["on"] = True
    live[-1].close()
    expect(banner).to_be_visible()
    (viewer.root / "unotest" / "e2e" / "added-meanwhile.test.js").write_text(
        scenario_source("added-meanwhile", '  goto("/")\n'), encoding="utf-8"
    )
    time.sleep(0.5)  # the watcher's message is sent to no one: this page is not connected
    blocked["on"] = False
    expect(banner).to_have_count(0)
    expect(tree_item(page, "added-meanwhile")).to_be_visible()


def test_after_the_viewer_restarts_the_page_stops_retrying_and_says_to_open_the_new_url(
    page: Page, viewer: Viewer, guard: PageGuard
) -> None:
    # The refused handshakes and requests are what this test provokes.
    guard.allow("WebSocket connection to")
    guard.allow("status of 401")
    guard.allow("status of 403")
    guard.allow("ERR_CONNECTION_REFUSED")  # while no viewer listens
    sockets: list[object] = []
    page.on("websocket", lambda ws: sockets.append(ws))
    open_page(page, viewer)
    connected = "async () => (await import('/static/live.js')).isConnected()"
    deadline = time.monotonic() + WAIT_MS / 1000
    while not page.evaluate(connected):
        assert time.monotonic() < deadline, "the page's socket never opened"
        page.wait_for_timeout(50)
    port = viewer.base.rsplit(":", 1)[1]
    viewer.proc.send_signal(signal.SIGTERM)
    viewer.proc.wait(15)
    expect(page.get_by_role("alert").filter(has_text="Reconnecting")).to_be_visible()
    # The same port, a new token: the page's cookie is refused (the socket's 403, REST's 401).
    with running_viewer(viewer.root, "--port", port, "--new-token") as again:
        assert again.base == viewer.base and again.token != viewer.token
        refused = page.get_by_role("alert").filter(has_text="The viewer was restarted")
        expect(refused).to_be_visible()
        expect(refused).to_contain_text("open the URL unotest view printed")
        expect(page.get_by_role("alert").filter(has_text="Reconnecting")).to_have_count(0)
        attempts = len(sockets)
        page.wait_for_timeout(6_000)  # longer than the longest backoff (5 s)
        assert len(sockets) == attempts, "the page went on retrying a refused socket"
