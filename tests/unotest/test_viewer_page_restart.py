"""A viewer restarted while a page is open, in real Chromium on a real ``unotest view``
(issue 32, defects 2 and 11): the page reconnects to the new process and goes on
following a run (its Output too), and a page whose viewer is gone for good says so.

Every test finds elements by role and accessible name and fails on any page error or
console error (``guard``).
"""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from viewer_page import (
    PageGuard,
    Viewer,
    browser_type_launch_args,
    guard_fixture,
    running_viewer,
    served_project,
)

__all__ = ["browser_type_launch_args"]  # the fixture, imported for pytest to find here

# Long enough for a run to start its browser on a loaded machine; never a wall-clock
# assertion, only how long to wait for what must come.
WAIT_MS = 60_000

# Lines 5 to 8 of the scenario (its header is lines 1-3, its function line 4).
BODY = "".join(f'  log("out {word}")\n' for word in ("one", "two", "three", "four"))


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    with served_project(tmp_path, scenarios={"logs": BODY}) as root:
        yield root


# While no viewer listens, the page's retries fail: what these tests provoke.
guard = guard_fixture(allow=("ERR_CONNECTION_REFUSED", "WebSocket connection to"))


def _stop(viewer: Viewer) -> None:
    """SIGTERM to the viewer, as ``unotest view --stop`` sends."""
    viewer.proc.send_signal(signal.SIGTERM)
    viewer.proc.wait(15)


def _command(project: Path, run_id: str, cmd: str, ident: str) -> None:
    """A debugger command straight into the run's commands.jsonl, as ``unotest dbg`` does:
    the run is driven while no viewer serves the project."""
    path = project / "unotest" / ".runs" / run_id / "commands.jsonl"
    with open(path, "a", encoding="utf-8") as commands:
        commands.write(json.dumps({"id": ident, "cmd": cmd}) + "\n")


def _until_alert_count(page: Page, text: str, count: int) -> None:
    """Move the page's clock on, 5 s at a time, until ``count`` alerts say ``text``: the
    page's retries wait up to 5 s each (the clock is the page's own, installed by the
    test, so no test waits that long)."""
    alerts = page.get_by_role("alert").filter(has_text=text)
    deadline = time.monotonic() + WAIT_MS / 1000
    while alerts.count() != count:
        assert time.monotonic() < deadline, f"{count} alerts saying {text!r} never showed"
        page.clock.run_for(5_000)
        page.wait_for_timeout(100)  # a real moment for the tries' requests to fail or pass


def test_a_restarted_viewer_takes_its_port_and_token_again_and_the_page_follows_the_run(
    page: Page, project: Path, guard: PageGuard
) -> None:
    """Defects 11 and 2: the viewer stops while a run is paused; the page says it is
    reconnecting, then, once no viewer has answered for a while, that the viewer stopped
    or moved; ``unotest view`` started again takes the same port and token, the page
    reconnects by itself and its Output catches up and follows the run again."""
    page.clock.install()
    with running_viewer(project) as first:
        started = first.api(
            "POST",
            "/api/runs",
            {"kind": "scenario", "scenario": "logs", "debug": True, "breakpoints": ["6:2"]},
        )
        run_id = started["runId"]
        page.goto(f"{first.url}#open=scenario-run:{run_id}&active=scenario-run:{run_id}")
        status = page.get_by_role("status", name="Run status")
        expect(status).to_contain_text("Paused at line 6:2", timeout=WAIT_MS)
        output = page.get_by_role("log", name="Output")
        expect(output).to_contain_text("out one", timeout=WAIT_MS)
        _stop(first)
    reconnecting = page.get_by_role("alert").filter(has_text="Reconnecting")
    expect(reconnecting).to_be_visible()
    # Written while no viewer serves the project: the page catches it up on reconnecting.
    _command(project, run_id, "step", "test-step-1")
    log = project / "unotest" / ".runs" / run_id / "stdout.log"
    deadline = time.monotonic() + WAIT_MS / 1000
    while "out two" not in log.read_text(encoding="utf-8"):
        assert time.monotonic() < deadline, "the run did not take the step"
        page.wait_for_timeout(50)
    _until_alert_count(page, "The viewer stopped or moved", 1)
    gone = page.get_by_role("alert").filter(has_text="The viewer stopped or moved")
    expect(gone).to_have_text(
        "The viewer stopped or moved: run unotest view and open the URL it prints."
    )
    expect(reconnecting).to_have_count(0)
    with running_viewer(project) as again:
        assert (again.base, again.token) == (first.base, first.token)
        _until_alert_count(page, "", 0)  # the next try finds it: every banner goes
        expect(status).to_contain_text("Paused at line 7:2", timeout=WAIT_MS)
        expect(output).to_contain_text("out two", timeout=WAIT_MS)
        # Stepped from the page after the restart: the new line comes live.
        page.get_by_role("button", name="Step", exact=True).click()
        expect(status).to_contain_text("Paused at line 8:2", timeout=WAIT_MS)
        expect(output).to_contain_text("out three", timeout=WAIT_MS)
        page.get_by_role("button", name="Continue").click()
        expect(status).to_contain_text("completed", timeout=WAIT_MS)
        expect(output).to_contain_text("out four", timeout=WAIT_MS)
        # Each line once: what the page read on reconnecting is not sent to it again.
        lines = output.locator("div").all_inner_texts()
        logged = [line.strip() for line in lines if line.startswith("out ")]
        assert logged == ["out one", "out two", "out three", "out four"], lines
