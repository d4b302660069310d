"""The viewer page's debugging views in real Chromium on a real ``unotest view``: a
breakpoint set by clicking the gutter (written to ``.debugger.json``), Debug, the paused
banner, Step, Variables changing, Evaluate, Continue to ``completed``; breakpoints that
converge between two pages; an edit saved to disk with a problem shown inline; edit and
continue (a save at a failure pause, Reload refused then applied, the pause following the
new code, Retry), from the run tab and from a helper's tab; Restart opening the new run."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from playwright.sync_api import (
    APIResponse,
    Browser,
    Locator,
    Page,
    Route,
    WebSocketRoute,
    expect,
)
from viewer_page import (
    Viewer,
    browser_type_launch_args,
    guard_page,
    site_viewer,
    tree_item,
    viewer_fixture,
)

__all__ = ["browser_type_launch_args"]  # the fixture, imported for pytest to find here

# Long enough for a run to start its browser on a loaded machine; never a wall-clock
# assertion, only how long to wait for what must come.
WAIT_MS = 60_000

HEADING = '  expect_visible(role("heading", "Welcome"))\n'
BODY = '  goto("/")\n  let n = 1\n  n = n + 1\n  n = n * 10\n' + HEADING
# Line 5 goto, 6 let n, 7 n + 1, 8 n * 10, 9 the heading (the header is lines 1-3).

viewer = viewer_fixture(scenarios={"smoke": BODY})


def _open_scenario(page: Page, viewer: Viewer, name: str) -> None:
    page.goto(viewer.url)
    tree_item(page, name).click()
    expect(page.get_by_role("button", name="Debug")).to_be_visible()


def _breakpoints_on_disk(viewer: Viewer) -> object:
    path = viewer.root / "unotest" / ".debugger.json"
    return json.loads(path.read_text()) if path.exists() else None


def _run_id(page: Page) -> str:
    """The run id of the active run tab, from the address bar."""
    match = re.search(r"active=scenario-run(?::|%3A)([A-Za-z0-9_-]+)", page.url)
    assert match, page.url
    return match.group(1)


def test_debug_a_scenario_from_the_page(page: Page, viewer: Viewer) -> None:
    guard = guard_page(page)
    _open_scenario(page, viewer, "smoke")
    marker = page.get_by_role("button", name="Breakpoint at line 6")
    expect(marker).to_have_attribute("aria-pressed", "false")
    marker.click()
    expect(marker).to_have_attribute("aria-pressed", "true")
    assert _breakpoints_on_disk(viewer) == {
        "version": 1,
        "scenarios": {"smoke": [{"line": 6, "col": 2}]},
    }
    # No marker where no statement starts (the function's own line).
    expect(page.get_by_role("button", name="Breakpoint at line 4")).to_have_count(0)

    page.get_by_role("button", name="Debug").focus()
    page.keyboard.press("Enter")  # as a keyboard user starts it
    status = page.get_by_role("status", name="Run status")
    expect(status).to_contain_text("Paused at line 6:2", timeout=WAIT_MS)
    expect(status).to_contain_text("breakpoint")
    # The Debug button went with its view: the focus is in the run's, not on the body.
    run_view = page.get_by_role("region", name=re.compile(r"^Run "))
    expect(run_view).to_be_focused()
    expect(page.get_by_role("button", name="Continue")).to_be_enabled()
    expect(page.get_by_role("button", name="Pause")).to_be_disabled()
    expect(page.get_by_role("button", name="Retry")).to_be_disabled()

    variables = page.get_by_role("region", name="Variables")
    page.get_by_role("button", name="Step", exact=True).click()
    expect(status).to_contain_text("Paused at line 7:2", timeout=WAIT_MS)
    expect(variables).to_contain_text(re.compile(r"n\s*1"))
    page.keyboard.press("F10")  # step over
    expect(status).to_contain_text("Paused at line 8:2", timeout=WAIT_MS)
    expect(variables).to_contain_text(re.compile(r"n\s*2"))

    evaluate = page.get_by_role("textbox", name="Evaluate")
    evaluate.fill("n * 21")
    evaluate.press("Enter")
    console = page.get_by_role("region", name="Console", exact=True)
    expect(console).to_contain_text("42", timeout=WAIT_MS)
    evaluate.fill("nope_nothing")
    evaluate.press("Enter")
    expect(console).to_contain_text("nope_nothing", timeout=WAIT_MS)
    expect(console.locator(".eval-answer.error")).to_have_count(1, timeout=WAIT_MS)
    evaluate.press("ArrowUp")
    expect(evaluate).to_have_value("nope_nothing")
    evaluate.press("ArrowUp")
    expect(evaluate).to_have_value("n * 21")

    # The current statement is highlighted in the source, and Steps lists what ran.
    expect(page.locator(".code-row.current")).to_have_attribute("data-line", "8")
    steps = page.get_by_role("region", name="Steps")
    expect(steps).to_contain_text("let n = 1")

    # A breakpoint set in the run's source reaches the live run (set-bp) and the file.
    page.get_by_role("button", name="Breakpoint at line 9").click()
    expect(page.get_by_role("button", name="Breakpoint at line 9")).to_have_attribute(
        "aria-pressed", "true"
    )
    page.get_by_role("button", name="Continue").click()
    expect(status).to_contain_text("Paused at line 9:2", timeout=WAIT_MS)
    expect(status).to_contain_text("breakpoint")
    assert _breakpoints_on_disk(viewer) == {
        "version": 1,
        "scenarios": {"smoke": [{"line": 6, "col": 2}, {"line": 9, "col": 2}]},
    }
    expect(variables.get_by_role("note")).to_have_count(0)  # live: the values are now's
    page.get_by_role("button", name="Continue").click()
    expect(status).to_contain_text("completed", timeout=WAIT_MS)
    for name in ("Continue", "Step", "Pause", "Abort"):
        expect(page.get_by_role("button", name=name, exact=True)).to_be_disabled()
    # Ended: the last pause's values stay, said to be from then (issue 32, defect 5).
    expect(variables.get_by_role("note")).to_have_text(
        "The run has ended: values as at its last pause, line 9:2."
    )
    expect(variables).to_contain_text(re.compile(r"n\s*2"))
    # Nothing left to evaluate in: an eval sent now was refused (409, a console error).
    expect(evaluate).to_be_disabled()
    expect(evaluate).to_have_attribute("placeholder", "The run has ended")
    expect(steps).to_contain_text('expect_visible(role("heading", "Welcome"))')
    guard.check()


def _debug_at_6(page: Page, viewer: Viewer) -> Locator:
    """`smoke` debugged from its tab with a breakpoint at 6:2, paused there: the status."""
    viewer.api(
        "PUT", "/api/breakpoints", {"version": 1, "scenarios": {"smoke": [{"line": 6, "col": 2}]}}
    )
    _open_scenario(page, viewer, "smoke")
    page.get_by_role("button", name="Debug").click()
    status = page.get_by_role("status", name="Run status")
    expect(status).to_contain_text("Paused at line 6:2", timeout=WAIT_MS)
    return status


def test_the_console_scrolls_to_the_newest_answer(page: Page, viewer: Viewer) -> None:
    guard = guard_page(page)
    _debug_at_6(page, viewer)
    evaluate = page.get_by_role("textbox", name="Evaluate")
    answers = page.get_by_role("region", name="Console", exact=True).locator(".eval-answer")
    for n in range(1, 16):  # far more than the list's height holds
        evaluate.fill(f"{n} * 1000")
        evaluate.press("Enter")
        expect(answers.nth(n - 1)).to_have_text(str(n * 1000), timeout=WAIT_MS)
        expect(answers.nth(n - 1)).to_be_in_viewport()
    expect(answers.first).not_to_be_in_viewport()
    guard.check()


def test_the_output_keeps_stderr_apart_after_a_reload(page: Page, viewer: Viewer) -> None:
    """The pause line goes to stderr while the summary goes to stdout afterwards: read
    back from the two files, stderr is its own labelled section, not appended last."""
    guard = guard_page(page)
    status = _debug_at_6(page, viewer)
    page.get_by_role("button", name="Continue").click()
    expect(status).to_have_text("Run completed", timeout=WAIT_MS)
    page.reload()
    output = page.get_by_role("log", name="Output")
    expect(output).to_contain_text("unotest e2e smoke", timeout=WAIT_MS)
    expect(output).to_contain_text("passed")
    expect(output).not_to_contain_text("paused (breakpoint)")
    stderr = page.get_by_role("log", name="stderr")
    expect(stderr).to_contain_text("unotest: paused (breakpoint) at unotest/e2e/smoke.test.js:6:2")
    expect(
        page.get_by_text("their order relative to the output above is not recorded")
    ).to_be_visible()
    guard.check()


def test_the_output_follows_its_end_while_live_unless_scrolled_up(
    tmp_path: Path, page: Page
) -> None:
    guard = guard_page(page)
    with site_viewer(tmp_path, scenarios={"loop": LOOP}) as viewer:
        _open_scenario(page, viewer, "loop")
        page.get_by_role("button", name="Run", exact=True).click()
        output = page.get_by_role("log", name="Output")
        lines = output.locator("div")
        expect(lines.nth(40)).to_be_attached(timeout=WAIT_MS)  # far more than it shows
        expect(lines.last).to_be_in_viewport()
        expect(lines.first).not_to_be_in_viewport()
        at_end = "el => el.scrollTop + el.clientHeight >= el.scrollHeight - 30"
        assert output.evaluate(at_end)
        # Scrolled up by the person: new lines no longer pull the view down.
        output.hover()
        page.mouse.wheel(0, -100_000)
        expect(lines.first).to_be_in_viewport()
        seen = lines.count()
        expect(lines.nth(seen + 20)).to_be_attached(timeout=WAIT_MS)
        expect(lines.first).to_be_in_viewport()
        assert not output.evaluate(at_end)
        page.get_by_role("button", name="Abort").click()
        expect(page.get_by_role("status", name="Run status")).to_have_text(
            "Run aborted", timeout=WAIT_MS
        )
        guard.check()


def test_a_paused_run_shown_after_a_reload_offers_reload_when_its_file_changed(
    page: Page, viewer: Viewer
) -> None:
    """The offer does not live in page memory only: a page reloaded (or another tab)
    showing a run paused on a source older than the file on disk offers Reload."""
    guard = guard_page(page)
    status = _debug_at_6(page, viewer)
    offer = page.get_by_role("group", name="Reload")
    expect(offer).to_have_count(0)
    page.reload()
    expect(status).to_contain_text("Paused at line 6:2", timeout=WAIT_MS)
    expect(offer).to_have_count(0)  # nothing changed on disk: nothing to offer
    path = viewer.root / "unotest" / "e2e" / "smoke.test.js"
    path.write_text(path.read_text().replace("let n = 1", "let n = 5"))
    page.reload()
    expect(status).to_contain_text("Paused at line 6:2", timeout=WAIT_MS)
    expect(offer).to_contain_text(
        "Changed on disk since this run read it: unotest/e2e/smoke.test.js"
    )
    offer.get_by_role("button", name="Reload").click()
    expect(offer).to_contain_text("reloaded: ", timeout=WAIT_MS)
    # Once reloaded, the run executes what is on disk: a later look offers nothing.
    page.reload()
    expect(status).to_contain_text("Paused at line 6:2", timeout=WAIT_MS)
    expect(page.get_by_role("region", name="Steps")).to_contain_text('goto("/")')
    expect(offer).to_have_count(0)
    page.get_by_role("button", name="Continue").click()
    expect(status).to_have_text("Run completed", timeout=WAIT_MS)
    guard.check()


def test_tab_indents_in_the_editor_and_escape_then_tab_leaves_it(
    page: Page, viewer: Viewer
) -> None:
    """WCAG 2.1.2: Tab indents (the selected lines with a selection; Shift+Tab outdents
    them), so Escape then Tab moves the focus out, as in CodeMirror."""
    guard = guard_page(page)
    _open_scenario(page, viewer, "smoke")
    source = page.get_by_role("textbox", name="Source")
    original = source.input_value()
    lines = original.split("\n")
    # Lines 6 and 7 (`let n = 1`, `n = n + 1`) selected, from inside the first.
    start = len("\n".join(lines[:5])) + 1 + 3
    end = len("\n".join(lines[:7]))
    source.evaluate("(el, [a, b]) => { el.focus(); el.setSelectionRange(a, b); }", [start, end])
    page.keyboard.press("Tab")
    indented = [*lines[:5], "  " + lines[5], "  " + lines[6], *lines[7:]]
    expect(source).to_have_value("\n".join(indented))
    expect(source).to_be_focused()
    # The selection comes back with the render after the value: Shift+Tab waits for it
    # (on a loaded machine it came in before and outdented nothing).
    source.evaluate(
        """el => new Promise(done => {
          const ready = () => el.selectionStart !== el.selectionEnd
            ? done() : requestAnimationFrame(ready);
          ready();
        })"""
    )
    page.keyboard.press("Shift+Tab")
    expect(source).to_have_value(original)
    expect(source).to_be_focused()
    selection = source.evaluate("el => [el.selectionStart, el.selectionEnd]")
    assert selection == [start, end]
    # With no selection Tab types two spaces and keeps the focus.
    source.evaluate("el => el.setSelectionRange(0, 0)")
    page.keyboard.press("Tab")
    expect(source).to_have_value("  " + original)
    expect(source).to_be_focused()
    # Escape, then Tab: out of the editor, the text as it was.
    page.keyboard.press("Escape")
    page.keyboard.press("Tab")
    expect(source).not_to_be_focused()
    expect(source).to_have_value("  " + original)
    source.focus()
    page.keyboard.press("Escape")
    page.keyboard.press("Shift+Tab")
    expect(source).not_to_be_focused()
    guard.check()


class HeldSocket:
    """A page's ``/ws`` whose messages from the server are held while ``holding`` is
    set, then delivered in order by ``release()``: the page does not know yet what the
    run did meanwhile."""

    def __init__(self, page: Page) -> None:
        self.holding = False
        self.held: list[str | bytes] = []
        self.route: WebSocketRoute | None = None
        page.route_web_socket(re.compile(r"/ws$"), self._route)

    def _route(self, ws: WebSocketRoute) -> None:
        server = ws.connect_to_server()
        self.route = ws
        server.on_message(self._from_server)

    def _from_server(self, message: str | bytes) -> None:
        if self.holding:
            self.held.append(message)
        elif self.route is not None:
            self.route.send(message)

    def release(self) -> None:
        self.holding = False
        assert self.route is not None
        for message in self.held:
            self.route.send(message)
        self.held.clear()


def _events_of(viewer: Viewer, run_id: str, kind: str) -> list[dict[str, object]]:
    events = viewer.api("GET", f"/api/runs/{run_id}")["events"]
    return [e for e in events if e["kind"] == kind]


def test_a_rejected_command_shows_only_in_the_page_that_sent_it(
    tmp_path: Path, browser: Browser
) -> None:
    """Two pages on one paused run: A continues; B, not told yet, sends Step, which the
    runner rejects. Only B says so, with the runner's reason while the run goes on, and
    "the run has ended" once it has (A aborted it)."""
    with site_viewer(tmp_path, scenarios={"loop": LOOP}) as viewer:
        viewer.api(
            "PUT",
            "/api/breakpoints",
            {"version": 1, "scenarios": {"loop": [{"line": 6, "col": 2}]}},
        )
        a, b = browser.new_page(), browser.new_page()
        guards = [guard_page(a), guard_page(b)]
        held = HeldSocket(b)
        _open_scenario(a, viewer, "loop")
        a.get_by_role("button", name="Debug").click()
        a_status = a.get_by_role("status", name="Run status")
        expect(a_status).to_contain_text("Paused at line 6:2", timeout=WAIT_MS)
        run_id = _run_id(a)
        b.goto(f"{viewer.url}#open=scenario-run:{run_id}&active=scenario-run:{run_id}")
        b_status = b.get_by_role("status", name="Run status")
        expect(b_status).to_contain_text("Paused at line 6:2", timeout=WAIT_MS)
        connected = "async () => (await import('/static/live.js')).isConnected()"
        deadline = time.monotonic() + WAIT_MS / 1000
        while not b.evaluate(connected):
            assert time.monotonic() < deadline, "page B's socket never opened"
            b.wait_for_timeout(50)

        held.holding = True
        a.get_by_role("button", name="Continue").click()
        expect(a_status).to_have_text("Running", timeout=WAIT_MS)
        b.get_by_role("button", name="Step", exact=True).click()  # B still shows the pause
        deadline = time.monotonic() + WAIT_MS / 1000
        while not _events_of(viewer, run_id, "command:rejected"):
            assert time.monotonic() < deadline, "the runner never rejected the step"
            time.sleep(0.1)
        held.release()
        rejected = b.get_by_text("Rejected step: 'step' needs a paused run; send 'pause' first")
        expect(rejected).to_be_visible(timeout=WAIT_MS)
        a.get_by_role("button", name="Abort").click()
        expect(a_status).to_have_text("Run aborted", timeout=WAIT_MS)
        # A has had every event before the end, the rejection too: it shows none.
        expect(a.get_by_text("Rejected")).to_have_count(0)
        expect(b_status).to_have_text("Run aborted", timeout=WAIT_MS)
        expect(b.get_by_text("Rejected step: the run has ended")).to_be_visible()
        expect(rejected).to_have_count(0)
        for guard in guards:
            guard.check()


def test_breakpoints_converge_between_two_pages(browser: Browser, viewer: Viewer) -> None:
    first, second = browser.new_page(), browser.new_page()
    guards = [guard_page(first), guard_page(second)]
    try:
        for page in (first, second):
            _open_scenario(page, viewer, "smoke")
        first.get_by_role("button", name="Breakpoint at line 7").click()
        mirrored = second.get_by_role("button", name="Breakpoint at line 7")
        expect(mirrored).to_have_attribute("aria-pressed", "true")
        second.get_by_role("button", name="Breakpoint at line 9").click()
        expect(first.get_by_role("button", name="Breakpoint at line 9")).to_have_attribute(
            "aria-pressed", "true"
        )
        # Another writer (the CLI, MCP, an editor) changes the file: both pages follow.
        viewer.api("PUT", "/api/breakpoints", {"version": 1, "scenarios": {"smoke": []}})
        for page in (first, second):
            for line in (7, 9):
                expect(
                    page.get_by_role("button", name=f"Breakpoint at line {line}")
                ).to_have_attribute("aria-pressed", "false")
        for guard in guards:
            guard.check()
    finally:
        first.close()
        second.close()


def test_edit_save_and_a_problem_inline(page: Page, viewer: Viewer) -> None:
    guard = guard_page(page)
    _open_scenario(page, viewer, "smoke")
    source = page.get_by_role("textbox", name="Source")
    # Code is not prose: no red squiggles (spellcheck="false" as a string was true).
    assert source.evaluate("(el) => el.spellcheck") is False
    text = source.input_value()
    source.fill(text.replace("n = n * 10", "n = n * 100"))
    page.get_by_role("button", name="Save").click()
    path = viewer.root / "unotest" / "e2e" / "smoke.test.js"
    expect(page.locator(".source-note")).to_have_text("Saved")
    assert "n = n * 100" in path.read_text()

    source.fill(source.input_value().replace("n = n * 100", "n = n * * 100"))
    source.press("Control+s")
    expect(page.locator(".problem-inline")).to_have_count(1)
    problem = page.locator(".code-row.has-problem")
    expect(problem).to_have_attribute("data-line", "8")
    # The character at the problem's column is marked: where `* * 100` breaks.
    marked = problem.locator(".problem-at")
    expect(marked).to_have_count(1)
    col = int(re.sub(r"^\D*\d+:(\d+).*$", r"\1", page.locator(".problem-inline").inner_text()))
    assert source.input_value().split("\n")[7][col] == marked.inner_text()
    expect(page.get_by_role("list", name="Problems")).to_contain_text(re.compile(r"\d+:\d+"))
    assert "n = n * * 100" in path.read_text()
    guard.check()


WRONG = '  expect_text(css("#out"), "pressed")\n'
RIGHT = '  expect_text(css("#out"), "clicked")\n'
FIXABLE = '  goto("/")\n  click("Press")\n' + WRONG
# Line 5 goto, 6 click, 7 the expectation (wrong: the button says "clicked").


def _closed_steps(viewer: Viewer, run_id: str) -> list[tuple[str, int, str]]:
    """(``step:ok``/``step:fail``, line, text) of each step of the run as it closed."""
    lines = (viewer.root / "unotest" / ".runs" / run_id / "steps.jsonl").read_text()
    open_steps: list[dict[str, object]] = []
    closed: list[tuple[str, int, str]] = []
    for event in (json.loads(line) for line in lines.splitlines()):
        if event["kind"] == "step:started":
            open_steps.append(event)
        elif event["kind"] in ("step:ok", "step:fail"):
            started = open_steps.pop()
            closed.append((event["kind"], int(str(started["line"])), str(started["text"])))
    return closed


def test_edit_and_continue_from_the_run_tab(tmp_path: Path, page: Page) -> None:
    """Paused on a failed expectation: a syntax error saved is refused by Reload with its
    place (still paused); the fix saved (a line added above), Reload, the pause follows
    to the new line, Retry completes the same run with one step:fail."""
    guard = guard_page(page)
    with site_viewer(tmp_path, scenarios={"fix": FIXABLE}, timeout={"expect": 1000}) as viewer:
        _open_scenario(page, viewer, "fix")
        page.get_by_role("button", name="Debug").click()
        status = page.get_by_role("status", name="Run status")
        expect(status).to_contain_text("Paused at line 7:2 (failure)", timeout=WAIT_MS)
        run_id = _run_id(page)
        offer = page.get_by_role("group", name="Reload")
        expect(offer).to_have_count(0)
        source = page.get_by_role("textbox", name="Source")
        original = source.input_value()

        source.fill(original.replace(WRONG, WRONG.replace(")\n", "))\n")))
        page.get_by_role("button", name="Save").click()
        reload = offer.get_by_role("button", name="Reload")
        expect(reload).to_be_enabled()
        reload.click()
        expect(offer).to_contain_text(
            re.compile(r"Reload rejected: unotest/e2e/fix\.test\.js:7:\d+: "), timeout=WAIT_MS
        )
        expect(status).to_contain_text("Paused at line 7:2 (failure)")

        source.fill(original.replace(WRONG, "  let note = 1\n" + RIGHT))
        page.get_by_role("button", name="Save").click()
        expect(offer).not_to_contain_text("rejected")
        reload.click()
        expect(offer).to_contain_text(
            "reloaded: test_it (on the call stack) going on in the new code, "
            "1 statement above the pause skipped",
            timeout=WAIT_MS,
        )
        # No `paused` event follows a reload: the page took the place from runtime.json.
        expect(status).to_contain_text("Paused at line 8:2 (failure)", timeout=WAIT_MS)
        expect(page.locator(".code-row.current")).to_have_attribute("data-line", "8")
        page.get_by_role("button", name="Retry").click()
        expect(status).to_have_text("Run completed", timeout=WAIT_MS)
        expect(offer).to_have_count(0)
        assert [(kind, line) for kind, line, _ in _closed_steps(viewer, run_id)] == [
            ("step:ok", 5),
            ("step:ok", 6),
            ("step:fail", 7),
            ("step:ok", 8),  # the edited expectation, retried in the same run
        ]
        assert [p.name for p in (viewer.root / "unotest" / ".runs").iterdir()] == [run_id]
        guard.check()


CHECKS = "function check_out() {\n" + WRONG + "}\n"
USES_CHECKS = '  goto("/")\n  click("Press")\n  check_out()\n'
# The helper's line 2 fails (the button says "clicked"); the scenario calls it on line 7.


def test_a_helper_saved_in_its_tab_reloads_the_paused_run(tmp_path: Path, page: Page) -> None:
    """A run paused in a helper: a write from outside the page offers Reload in the run
    tab; the fix saved in the helper's own tab offers to reload that run from there."""
    guard = guard_page(page)
    with site_viewer(
        tmp_path,
        scenarios={"uses": USES_CHECKS},
        helpers={"checks": CHECKS},
        timeout={"expect": 1000},
    ) as viewer:
        _open_scenario(page, viewer, "uses")
        page.get_by_role("button", name="Debug").click()
        status = page.get_by_role("status", name="Run status")
        expect(status).to_contain_text(
            "Paused at line 2:2 in unotest/e2e/_helpers/checks.js (failure)", timeout=WAIT_MS
        )
        run_id = _run_id(page)
        offer = page.get_by_role("group", name="Reload")
        expect(offer).to_have_count(0)
        # An editor elsewhere saves the helper: the run tab hears fs:helpers-changed.
        helper = viewer.root / "unotest" / "e2e" / "_helpers" / "checks.js"
        helper.write_text("// checked\n" + CHECKS)
        expect(offer.get_by_role("button", name="Reload")).to_be_enabled(timeout=WAIT_MS)

        page.get_by_role("button", name="checks", exact=True).click()
        source = page.get_by_role("textbox", name="Source")
        expect(source).to_have_value(re.compile("// checked"), timeout=WAIT_MS)
        others = page.get_by_role("group", name="Paused runs")
        expect(others).to_have_count(0)
        source.fill(source.input_value().replace(WRONG, RIGHT))
        page.get_by_role("button", name="Save").click()
        others.get_by_role("button", name="Reload uses").click()
        expect(page).to_have_url(re.compile(f"active=scenario-run(:|%3A){run_id}"))
        expect(offer).to_contain_text("reloaded: ", timeout=WAIT_MS)
        expect(offer).not_to_contain_text("rejected")
        expect(status).to_contain_text("Paused at line 3:2 in unotest/e2e/_helpers/checks.js")
        page.get_by_role("button", name="Retry").click()
        expect(status).to_have_text("Run completed", timeout=WAIT_MS)
        steps = _closed_steps(viewer, run_id)
        assert [kind for kind, _, _ in steps].count("step:fail") == 1, steps
        assert steps[-1][0] == "step:ok" and "clicked" in steps[-2][2], steps
        guard.check()


def test_restart_from_the_page_opens_the_new_run(page: Page, viewer: Viewer) -> None:
    guard = guard_page(page)
    at_6 = {"version": 1, "scenarios": {"smoke": [{"line": 6, "col": 2}]}}
    viewer.api("PUT", "/api/breakpoints", at_6)
    _open_scenario(page, viewer, "smoke")
    page.get_by_role("button", name="Debug").click()
    status = page.get_by_role("status", name="Run status")
    expect(status).to_contain_text("Paused at line 6:2", timeout=WAIT_MS)
    old = _run_id(page)
    page.get_by_role("button", name="Restart").click()
    expect(page).not_to_have_url(re.compile(f"active=scenario-run(:|%3A){old}"), timeout=WAIT_MS)
    new = _run_id(page)
    header = page.get_by_role("region", name=f"Run {new}")
    expect(header.get_by_role("button", name=old)).to_be_visible(timeout=WAIT_MS)
    expect(header).to_contain_text(f"restart of {old}")
    # The same breakpoints: the new run pauses where the old one did.
    expect(status).to_contain_text("Paused at line 6:2 (breakpoint)", timeout=WAIT_MS)
    assert viewer.api("GET", f"/api/runs/{new}")["manifest"]["restartOf"] == old
    page.get_by_role("button", name="Continue").click()
    expect(status).to_have_text("Run completed", timeout=WAIT_MS)
    # The old run's tab says what became of it.
    header.get_by_role("button", name=old).click()
    expect(status).to_have_text("Run aborted", timeout=WAIT_MS)
    expect(page.get_by_role("region", name=f"Run {old}")).to_contain_text(f"restarted as {new}")
    guard.check()


HELPER = 'function greet(who) {\n  let text = "hi " + who\n  log(text)\n}\n'
CALLER = '  let who = "you"\n  goto("/")\n  greet(who)\n  let after = 1\n'
# Scenario: line 5 let who, 6 goto, 7 greet(...), 8 let after. Helper: line 2 let text, 3 log.


def test_a_breakpoint_in_a_helper_and_its_call_stack(tmp_path: Path, page: Page) -> None:
    guard = guard_page(page)
    with site_viewer(
        tmp_path, scenarios={"caller": CALLER}, helpers={"greeting": HELPER}
    ) as viewer:
        page.goto(f"{viewer.url}#open=helper:unotest/e2e/_helpers/greeting.js")
        marker = page.get_by_role("button", name="Breakpoint at line 3")
        marker.click()
        expect(marker).to_have_attribute("aria-pressed", "true")
        assert _breakpoints_on_disk(viewer) == {
            "version": 1,
            "scenarios": {"_helpers/greeting": [{"line": 3, "col": 2}]},
        }
        tree_item(page, "caller").click()
        page.get_by_role("button", name="Debug").click()
        status = page.get_by_role("status", name="Run status")
        expect(status).to_contain_text(
            "Paused at line 3:2 in unotest/e2e/_helpers/greeting.js", timeout=WAIT_MS
        )
        # The source follows the run into the helper; its step is indented.
        expect(page.locator(".source-path")).to_have_text("unotest/e2e/_helpers/greeting.js")
        expect(page.locator(".code-row.current")).to_have_attribute("data-line", "3")
        inner = page.get_by_role("region", name="Steps").locator(".step", has_text="let text")
        expect(inner).to_have_css("padding-left", "24px")
        variables = page.get_by_role("region", name="Variables")
        expect(variables).to_contain_text("hi you")
        stack = page.get_by_role("region", name="Call stack")
        expect(stack).to_contain_text("greet")
        caller = stack.get_by_role("button", name=re.compile("test_it"))
        caller.click()
        expect(page.locator(".source-path")).to_have_text("unotest/e2e/caller.test.js")
        expect(page.locator(".code-row.revealed")).to_have_attribute("data-line", "7")
        # The caller's frame: its own variables, and Evaluate in its scope.
        expect(caller).to_have_attribute("aria-current", "true")
        expect(variables.get_by_role("rowheader", name="who")).to_be_visible()
        expect(variables.get_by_role("rowheader", name="text")).to_have_count(0)
        evaluate = page.get_by_role("textbox", name="Evaluate")
        evaluate.fill('who + "!"')
        evaluate.press("Enter")
        expect(page.locator(".eval-answer.ok")).to_have_text('"you!"', timeout=WAIT_MS)
        evaluate.fill("text")
        evaluate.press("Enter")
        expect(page.locator(".eval-answer.error")).to_contain_text("text", timeout=WAIT_MS)
        stack.get_by_role("button", name=re.compile("greet")).click()
        expect(variables.get_by_role("rowheader", name="text")).to_be_visible()
        page.keyboard.press("Shift+F11")  # step out
        expect(status).to_contain_text("Paused at line 8:2", timeout=WAIT_MS)
        expect(page.locator(".source-path")).to_have_text("unotest/e2e/caller.test.js")
        page.keyboard.press("F8")
        expect(status).to_contain_text("completed", timeout=WAIT_MS)
        guard.check()


LOOP = '  goto("/")\n  let i = 0\n  while (i < 600) {\n    wait(100)\n    i = i + 1\n  }\n'


def test_pause_a_running_debug_run_then_abort(tmp_path: Path, page: Page) -> None:
    guard = guard_page(page)
    with site_viewer(tmp_path, scenarios={"loop": LOOP}) as viewer:
        _open_scenario(page, viewer, "loop")
        page.get_by_role("button", name="Debug").click()
        status = page.get_by_role("status", name="Run status")
        steps = page.get_by_role("region", name="Steps")
        expect(steps).to_contain_text("wait(100)", timeout=WAIT_MS)
        expect(status).to_have_text("Running")
        pause = page.get_by_role("button", name="Pause")
        expect(pause).to_be_enabled()
        expect(page.get_by_role("button", name="Continue")).to_be_disabled()
        pause.click()
        expect(status).to_contain_text(re.compile(r"Paused at line \d+:\d+"), timeout=WAIT_MS)
        expect(status).to_contain_text("(step)")
        expect(pause).to_be_disabled()
        expect(page.get_by_role("region", name="Variables")).to_contain_text("i")
        page.get_by_role("button", name="Abort").click()
        expect(status).to_have_text("Run aborted", timeout=WAIT_MS)
        guard.check()


FAILING = (
    '  goto("/")\n  click("Later")\n  let after = 1\n'
    + '  expect_visible(role("heading", "Gone"))\n  after = 2\n'
)
# Line 6 click("Later") fails until the page has the button; line 8 fails for good.


def test_retry_and_skip_at_a_failure_pause(tmp_path: Path, page: Page) -> None:
    guard = guard_page(page)
    with site_viewer(
        tmp_path, scenarios={"flaky": FAILING}, timeout={"action": 1000, "expect": 1000}
    ) as viewer:
        _open_scenario(page, viewer, "flaky")
        page.get_by_role("button", name="Debug").click()
        status = page.get_by_role("status", name="Run status")
        expect(status).to_contain_text("Paused at line 6:2 (failure)", timeout=WAIT_MS)
        # The failed statement shows failed (with its error) while paused, not running.
        steps = page.get_by_role("region", name="Steps")
        failed = steps.locator(".step", has_text='click("Later")')
        expect(failed).to_have_count(1)
        expect(failed).to_have_class(re.compile(r"\bstep-fail\b"))
        expect(failed.get_by_label("fail", exact=True)).to_have_text("✗")
        expect(failed).to_have_attribute("title", re.compile(r"^LocatorError: .*Later"))
        expect(steps.locator(".step-running")).to_have_count(0)
        retry = page.get_by_role("button", name="Retry")
        skip = page.get_by_role("button", name="Skip")
        expect(retry).to_be_enabled()
        expect(skip).to_be_enabled()
        # Fix the page at the pause, then run the failed statement again.
        evaluate = page.get_by_role("textbox", name="Evaluate")
        add_button = "document.body.insertAdjacentHTML('beforeend', '<button>Later</button>')"
        evaluate.fill(f'evaluate("{add_button}")')
        evaluate.press("Enter")
        expect(page.locator(".eval-answer.ok")).to_have_count(1, timeout=WAIT_MS)
        retry.click()
        expect(status).to_contain_text("Paused at line 8:2 (failure)", timeout=WAIT_MS)
        # Retried (the failed attempt closes as failed), it passed: a new row, ok; the
        # new failure shows failed as well, and nothing shows running.
        expect(failed).to_have_count(2)
        expect(failed.last).to_have_class(re.compile(r"\bstep-ok\b"))
        expect(steps.locator(".step-fail").last).to_contain_text("Gone")
        expect(steps.locator(".step-running")).to_have_count(0)
        expect(retry).to_be_enabled()
        skip.click()
        expect(status).to_contain_text("Paused at line 9:2 (step)", timeout=WAIT_MS)
        expect(retry).to_be_disabled()  # nothing failed here
        # Skip works at any pause (runner.md), not only a failure's: `after = 2` too.
        expect(skip).to_be_enabled()
        skip.click()
        expect(status).to_contain_text("Run completed", timeout=WAIT_MS)
        skipped = steps.locator(".step-skipped")
        expect(skipped).to_have_count(2)
        expect(skipped.first).to_contain_text("Gone")
        expect(skipped.last).to_contain_text("after = 2")
        guard.check()


def test_a_run_tab_catches_up_after_the_socket_drops(page: Page, viewer: Viewer) -> None:
    guard = guard_page(page)
    blocked = {"on": False}
    live: list[WebSocketRoute] = []

    def route(ws: WebSocketRoute) -> None:
        if blocked["on"]:
            ws.close()
            return
        ws.connect_to_server()
        live.append(ws)

    page.route_web_socket(re.compile(r"/ws$"), route)
    at_6 = {"version": 1, "scenarios": {"smoke": [{"line": 6, "col": 2}]}}
    viewer.api("PUT", "/api/breakpoints", at_6)
    _open_scenario(page, viewer, "smoke")
    page.get_by_role("button", name="Debug").click()
    status = page.get_by_role("status", name="Run status")
    expect(status).to_contain_text("Paused at line 6:2", timeout=WAIT_MS)
    run_id = _run_id(page)
    blocked["on"] = True
    live[-1].close()
    # Driven by someone else while this page hears nothing: two steps.
    for line in (7, 8):
        viewer.api("POST", f"/api/runs/{run_id}/commands", {"cmd": "step"})
        deadline = time.monotonic() + WAIT_MS / 1000
        while True:
            runtime = viewer.api("GET", f"/api/runs/{run_id}")["runtime"]
            if runtime["state"] == "paused-step" and runtime["current"]["line"] == line:
                break
            assert time.monotonic() < deadline, runtime
            time.sleep(0.1)
    expect(status).to_contain_text("Paused at line 6:2")  # still what it last heard
    blocked["on"] = False
    expect(status).to_contain_text("Paused at line 8:2", timeout=WAIT_MS)
    expect(page.get_by_role("region", name="Variables")).to_contain_text(re.compile(r"n\s*2"))
    page.get_by_role("button", name="Continue").click()
    expect(status).to_contain_text("completed", timeout=WAIT_MS)
    guard.check()


HIGHLIGHTED = (
    "  /* block */ let total = 1_000 / 2 / 5\n"
    "  let s = `sum ${total + 1} of \"${'x'}\"`\n"
    "  if (matches(s, /^sum\\/[0-9]+/i)) { log('yes') }\n"
    "  const hex = 0x1F // trailing\n"
)


def test_the_source_is_highlighted_as_the_language(tmp_path: Path, page: Page) -> None:
    guard = guard_page(page)
    with site_viewer(tmp_path, site=False, scenarios={"colors": HIGHLIGHTED}) as viewer:
        _open_scenario(page, viewer, "colors")

        def texts(kind: str) -> list[str]:
            return page.locator(f".code-hl .tok-{kind}").all_inner_texts()

        expect(page.locator(".code-hl .tok-regex")).to_have_count(1)
        assert texts("regex") == ["/^sum\\/[0-9]+/i"]  # and 1_000 / 2 / 5 is division
        assert texts("number")[:3] == ["1_000", "2", "5"]
        assert "0x1F" in texts("number")
        assert texts("comment") == [
            "// id-colors",
            "// Scenario colors",
            "// #4f46e5",
            "/* block */",
            "// trailing",
        ]
        assert {"let", "if", "const", "function"} <= set(texts("keyword"))
        assert texts("template")[0] == "`sum ${"
        assert "'x'" in texts("string")
        assert "'yes'" in texts("string")
        # The highlighted text is the file's text, character for character.
        shown = page.locator(".code-hl").evaluate(
            "el => [...el.querySelectorAll('.code-row')].map(r => "
            "[...r.querySelectorAll('span[class^=tok-]')].map(s => s.textContent).join(''))"
            ".join('\\n')"
        )
        source = (viewer.root / "unotest" / "e2e" / "colors.test.js").read_text()
        assert shown == source
        guard.check()


def test_a_run_without_debug_can_be_paused_from_the_page(tmp_path: Path, page: Page) -> None:
    """Every run reads commands: Run (no --debug, no breakpoints) pauses on Pause too."""
    guard = guard_page(page)
    with site_viewer(tmp_path, scenarios={"loop": LOOP}) as viewer:
        _open_scenario(page, viewer, "loop")
        page.get_by_role("button", name="Run", exact=True).click()
        status = page.get_by_role("status", name="Run status")
        expect(page.get_by_role("region", name="Steps")).to_contain_text(
            "wait(100)", timeout=WAIT_MS
        )
        page.get_by_role("button", name="Pause").click()
        expect(status).to_contain_text("(step)", timeout=WAIT_MS)
        page.get_by_role("button", name="Abort").click()
        expect(status).to_have_text("Run aborted", timeout=WAIT_MS)
        guard.check()


def test_a_save_over_a_change_on_disk_offers_reload_or_overwrite(
    page: Page, viewer: Viewer
) -> None:
    """The page saves with the version it read: a file changed on disk meanwhile (an
    editor, an agent) is not overwritten silently but shown in a banner."""
    guard = guard_page(page)
    guard.allow("status of 409 (Conflict)")  # the refused saves, provoked on purpose
    _open_scenario(page, viewer, "smoke")
    path = viewer.root / "unotest" / "e2e" / "smoke.test.js"
    source = page.get_by_role("textbox", name="Source")
    banner = page.get_by_role("alert").filter(has_text="changed on disk")
    mine = source.input_value().replace("n = n * 10", "n = n * 100")
    source.fill(mine)
    theirs = path.read_text().replace("let n = 1", "let n = 2")
    path.write_text(theirs)
    page.get_by_role("button", name="Save").click()
    expect(banner).to_be_visible()
    assert path.read_text() == theirs  # refused: their edit is still there
    page.get_by_role("button", name="Overwrite", exact=True).click()
    expect(page.locator(".source-note")).to_have_text("Saved")
    expect(banner).to_have_count(0)
    assert path.read_text() == mine

    # Unedited, the view follows the disk silently.
    path.write_text(mine.replace("n = n * 100", "n = n * 7"))
    expect(source).to_have_value(mine.replace("n = n * 100", "n = n * 7"))

    # Edited again, and the disk changes: Reload from disk drops the local edit.
    source.fill(source.input_value().replace("n = n * 7", "n = n * 8"))
    on_disk = mine.replace("n = n * 100", "n = n * 9")
    path.write_text(on_disk)
    page.get_by_role("button", name="Save").click()
    expect(banner).to_be_visible()
    page.get_by_role("button", name="Reload from disk", exact=True).click()
    expect(source).to_have_value(on_disk)
    expect(banner).to_have_count(0)
    assert path.read_text() == on_disk
    guard.check()


def test_an_edit_made_while_a_read_is_on_its_way_still_meets_the_conflict(
    page: Page, viewer: Viewer
) -> None:
    """A change on disk starts a read; the person types before it answers, then the
    disk changes again and the read answers with that. The page took the read's version
    as its own, so Save overwrote the other edit without a word (seen once in CI)."""
    guard = guard_page(page)
    guard.allow("status of 409 (Conflict)")
    _open_scenario(page, viewer, "smoke")
    path = viewer.root / "unotest" / "e2e" / "smoke.test.js"
    source = page.get_by_role("textbox", name="Source")
    original = source.input_value()
    held: list[Route] = []
    holding = [True]

    def hold_reads(route: Route) -> None:
        if holding[0] and route.request.method == "GET":
            held.append(route)
        else:
            route.continue_()

    page.route("**/api/files/**", hold_reads)
    path.write_text(original.replace("n = n * 10", "n = n * 7"))  # the page reads it again
    deadline = time.monotonic() + WAIT_MS / 1000
    while not held:
        assert time.monotonic() < deadline, "the page never read the file again"
        page.wait_for_timeout(50)
    source.fill(original.replace("n = n * 10", "n = n * 8"))  # typed before the answer
    theirs = original.replace("n = n * 10", "n = n * 9")
    path.write_text(theirs)
    holding[0] = False
    for route in held:
        route.continue_()  # answers with what is on disk now: theirs
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("alert").filter(has_text="changed on disk")).to_be_visible()
    assert path.read_text() == theirs  # not overwritten
    guard.check()


def test_the_view_keeps_the_latest_read_when_answers_cross(page: Page, viewer: Viewer) -> None:
    """An editor truncates, then writes: two changes, two reads. When the read of the
    half-written file answers last, the view must still show the finished file."""
    guard = guard_page(page)
    _open_scenario(page, viewer, "smoke")
    path = viewer.root / "unotest" / "e2e" / "smoke.test.js"
    source = page.get_by_role("textbox", name="Source")
    finished = path.read_text().replace("n = n * 10", "n = n * 3")
    held: list[tuple[Route, APIResponse]] = []

    def hold_the_first_read(route: Route) -> None:
        if held:
            route.continue_()
        else:
            held.append((route, route.fetch()))

    page.route(re.compile(r"/api/files/"), hold_the_first_read)
    path.write_text("")  # the truncation: its read is answered (with "") only later
    deadline = time.monotonic() + 30
    while not held and time.monotonic() < deadline:
        page.wait_for_timeout(20)
    assert held, "the page did not read the file after it changed"
    path.write_text(finished)
    expect(source).to_have_value(finished)

    route, stale = held[0]
    with page.expect_event("requestfinished"):
        route.fulfill(response=stale)
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 50)))")
    assert source.input_value() == finished
    guard.check()


def test_unsaved_edits_survive_leaving_the_tab_and_a_change_on_disk_meets_them(
    page: Page, viewer: Viewer
) -> None:
    """Leaving a scenario's tab (the Runs page, and back) threw its unsaved edits away
    without a word: the source view kept them only while it was on screen."""
    guard = guard_page(page)
    guard.allow("status of 409 (Conflict)")  # the save of the stale edit, refused
    _open_scenario(page, viewer, "smoke")
    source = page.get_by_role("textbox", name="Source")
    mine = source.input_value().replace("n = n * 10", "n = n * 7")
    source.fill(mine)
    page.get_by_role("button", name="Runs", exact=True).click()
    expect(source).to_have_count(0)
    # Meanwhile the file changes on disk (an editor, an agent's write_file).
    path = viewer.root / "unotest" / "e2e" / "smoke.test.js"
    theirs = path.read_text().replace("n = n * 10", "n = n * 3")
    path.write_text(theirs)
    page.get_by_role("tab", name="smoke").click()
    expect(source).to_have_value(mine)
    expect(page.locator(".source-path")).to_contain_text("•")
    # Saved, the edit made on the older version is a conflict, not a silent overwrite.
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("alert")).to_contain_text("Overwrite")
    assert path.read_text() == theirs
    page.get_by_role("button", name="Overwrite").click()
    expect(page.locator(".source-note")).to_have_text("Saved")
    assert path.read_text() == mine
    guard.check()
