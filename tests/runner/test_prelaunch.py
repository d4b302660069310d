"""The driver and browser started ahead of ``drive`` (while the webServer starts), in a
real Chromium: ``drive`` runs the scenario in the browser started ahead, an unused one
is closed, and a launch that fails ahead fails ``drive`` with the launch's own error."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest
from playwright.async_api import Browser

from runner.browser.lifecycle import BrowserLifecycle
from runner.project.config import Config
from runner.project.secrets import SecretMasker
from runner.run.scenario_thread import Execution
from runner.store.rundir import RunDirectory


def lifecycle(tmp_path: Path, chromium_path: str | None) -> BrowserLifecycle:
    config = replace(Config(root=tmp_path), executable_path=chromium_path, headless=True)
    return BrowserLifecycle(config, tmp_path, "ahead", SecretMasker())


def test_drive_takes_the_browser_started_ahead(tmp_path: Path, chromium_path: str) -> None:
    seen: list[Browser] = []

    async def run() -> None:
        browser = lifecycle(tmp_path, chromium_path)
        browser.prelaunch()
        rundir = RunDirectory.create(tmp_path / "unotest" / ".runs", "scenario", "ahead")

        async def execute() -> Execution:
            assert browser.page is not None and browser.launched is not None
            seen.append(browser.launched)
            assert await browser.page.evaluate("1 + 1") == 2
            return "completed", None, None

        try:
            driven = await browser.drive(rundir, execute, provided_page=None, shared_browser=None)
        finally:
            rundir.close()
        assert driven == ("completed", None, None)
        assert not seen[0].is_connected()  # closed at the end, as a launched one is
        await browser.discard_prelaunch()  # taken: nothing left to close

    asyncio.run(run())
    assert len(seen) == 1


def test_a_browser_started_ahead_and_never_driven_is_closed(
    tmp_path: Path, chromium_path: str
) -> None:
    async def run() -> None:
        browser = lifecycle(tmp_path, chromium_path)
        browser.prelaunch()
        task = browser._prelaunch
        assert task is not None
        started = await asyncio.shield(task)  # let it finish launching first
        assert started.browser.is_connected()
        await browser.close_launched()  # what a run that ended before drive does
        assert not started.browser.is_connected()
        await browser.discard_prelaunch()  # once only

    asyncio.run(run())


def test_a_launch_that_fails_ahead_fails_drive_with_its_own_error(tmp_path: Path) -> None:
    async def run() -> None:
        browser = lifecycle(tmp_path, str(tmp_path / "no-such-chromium"))
        browser.prelaunch()
        rundir = RunDirectory.create(tmp_path / "unotest" / ".runs", "scenario", "ahead")

        async def execute() -> Execution:
            raise AssertionError("never runs")

        try:
            with pytest.raises(Exception) as raised:
                await browser.drive(rundir, execute, provided_page=None, shared_browser=None)
        finally:
            rundir.close()
        direct = lifecycle(tmp_path, str(tmp_path / "no-such-chromium"))
        with pytest.raises(Exception) as unaided:
            await direct._start_and_launch()
        assert type(raised.value) is type(unaided.value)
        assert str(raised.value) == str(unaided.value)

    asyncio.run(run())
