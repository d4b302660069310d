"""Where one scenario runs, and what it leaves of the page when it fails.

A run drives a page it was given (pytest-playwright's: launched, traced and closed by
its owner), a fresh context of a browser shared across scenarios (a worker's), or a
browser it launches itself. Whoever opens a browser or a context closes it, whatever
happens, so nothing (cookies, storage, pages, processes) leaks to the next run; the
trace and the failure bundle are taken while the context is still open.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from playwright.async_api import Browser, BrowserContext, Page, Playwright, async_playwright

from runner import events
from runner.browser import node_cache
from runner.browser.bundle import PageRecorder, write_failure_bundle
from runner.browser.contexts_ahead import ContextsAhead, close_later
from runner.browser.dialogs import DialogPolicy
from runner.browser.launch import launch_browser, started_driver
from runner.browser.page_log import PageLog
from runner.errors import PlaywrightInternalsChanged
from runner.events import RunError
from runner.project.config import Config
from runner.project.emulation import Devices, read_storage_state, storage_secrets
from runner.project.secrets import SecretMasker
from runner.protocol import FinishedOutcome
from runner.store.rundir import RunDirectory

__all__ = [
    "BrowserLifecycle",
    "Driven",
    "Execution",
    "FailedAt",
    "Standby",
    "WarmBrowser",
    "close_browser",
    "context_options",
    "devices_of",
    "options_key",
]

CLOSE_TIMEOUT_S = 10
TITLE_TIMEOUT_S = 2


class FailedAt(Protocol):
    """Where a scenario failed, as far as its failure bundle needs to know."""

    @property
    def step_index(self) -> int: ...


Execution = tuple[FinishedOutcome, RunError | None, FailedAt | None]
"""What the scenario's own code answers (``runner.run.scenario_thread``): how it ended,
its error, and where it failed."""

Driven = tuple[FinishedOutcome, RunError | None, str | None]
"""How the scenario ended, its error, and its failure bundle's project-relative path."""


def context_options(config: Config, devices: Callable[[], Devices]) -> dict[str, Any]:
    """The keyword options of ``Browser.new_context`` for a scenario's context: ``baseURL``,
    ``viewport``, then the file's emulation keys (a ``device``'s viewport replaces the
    default one, not one the file sets), then ``storage_state``: the file
    ``storageState`` names, read now (a collection's setup scenario may have written it
    a moment ago; a missing one is a :class:`ConfigError` naming it). ``devices``:
    Playwright's registry, asked only when the file names a device."""
    width, height = config.viewport
    options: dict[str, Any] = {
        "base_url": config.base_url,
        "viewport": {"width": width, "height": height},
        **config.emulation.context_options(devices),
    }
    if config.storage_state is not None:
        options["storage_state"] = read_storage_state(config.root, config.storage_state)
    return options


def options_key(options: dict[str, Any]) -> str:
    """Every option a context was made with, as one hashable text: a context opened
    ahead is taken only by a run whose options give the same (the storage state's
    content included, so one opened before a setup scenario wrote the file is not)."""
    return json.dumps(options, sort_keys=True, default=repr)


def devices_of(browser: Browser) -> Devices:
    """Playwright's device registry, from the driver ``browser`` belongs to: Playwright
    keeps it on its ``Playwright`` object only, which a worker's shared browser does not
    bring along, so it is read through the browser's implementation object."""
    impl = getattr(browser, "_impl_obj", None)
    playwright = getattr(getattr(impl, "_browser_type", None), "_playwright", None)
    devices = getattr(playwright, "devices", None)
    if not isinstance(devices, dict):
        raise PlaywrightInternalsChanged(
            "this Playwright release keeps its device registry elsewhere: the config's "
            "'device' cannot be applied (set userAgent, viewport and the other keys instead)"
        )
    return devices


async def close_browser(browser: Browser) -> None:
    """Best effort: the browser process dies with the driver anyway."""
    with contextlib.suppress(Exception):
        await asyncio.wait_for(browser.close(), CLOSE_TIMEOUT_S)


@dataclass
class WarmBrowser:
    """A browser kept up for the next run (``restart``), with the Playwright driver that
    launched it; whoever holds it last closes both."""

    browser: Browser
    playwright: Playwright

    async def close(self) -> None:
        try:
            await close_browser(self.browser)
        finally:
            with contextlib.suppress(Exception):
                await self.playwright.stop()


@dataclass
class Standby:
    """A context and its page opened ahead of a restart (while the run before is paused)
    and never used: the next run's fresh context, without waiting then for Chromium to
    start the page's renderer (most of what a new context costs)."""

    context: BrowserContext
    page: Page

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.context.close(), CLOSE_TIMEOUT_S)


AHEAD: ContextsAhead[Standby] = ContextsAhead()
"""A worker's next context, opened while its current scenario runs (one browser at a
time per worker process)."""


class BrowserLifecycle:
    """The browser, context and page of one run; :meth:`drive` runs the scenario there."""

    def __init__(self, config: Config, root: Path, scenario: str, masker: SecretMasker) -> None:
        self.config = config
        self.root = root
        self.scenario = scenario
        self.masker = masker
        self.page: Page | None = None
        self.context: BrowserContext | None = None
        self.recorder = PageRecorder()
        self._adopted: list[Page] = []
        """The pages recorded and answered for (the first and every one switched to)."""
        self.dialogs = DialogPolicy(self.recorder.note_dialog)
        """How this run answers the page's dialogs (``on_dialog``), and the last one."""
        self.page_title = ""
        """The page's last known title (for runtime.json and the bundle)."""
        self.bundle_attempted = False
        self.launched: Browser | None = None
        """The browser this run launched, until it is closed."""
        self.driven: Driven | None = None
        """How the scenario ended, once it has, while the launched browser closes."""
        self.tracing = False
        self.early_bundle: str | None = None
        """The bundle :meth:`bundle_now` wrote (before ``after_each`` hooks ran)."""
        self.kept: WarmBrowser | None = None
        """The launched browser left open for a restart (``drive``'s ``keep_launched``)."""
        self._prelaunch: asyncio.Task[WarmBrowser] | None = None
        self.early_driver: asyncio.Task[Playwright] | BaseException | None = None
        """A driver's start on this loop, done or not (:mod:`runner.browser.early_driver`), or
        why it could not begin: the next launch uses it instead of starting one."""
        """The driver and browser started ahead (:meth:`prelaunch`), until ``drive``
        takes them or :meth:`discard_prelaunch` closes them."""

    def prelaunch(self) -> None:
        """Start Playwright's driver and launch the browser now, in the background, for
        the next :meth:`drive` to take: what runs meanwhile (the webServer's start)
        overlaps them instead of preceding them. A launch error is raised by ``drive``,
        where it would have been raised anyway."""
        if self._prelaunch is None:
            self._prelaunch = asyncio.get_running_loop().create_task(self._start_and_launch())

    async def _start_and_launch(self) -> WarmBrowser:
        config = self.config
        playwright = await self._driver()
        try:
            # A device the registry lacks, or a storage state file that is not there,
            # is said before a browser starts (both are read again for each context).
            context_options(config, lambda: playwright.devices)
            # A run of its own uses the pool's first endpoint (a collection spreads its
            # workers over all of them: runner.workers.pool).
            first = config.endpoints[0] if config.endpoints else None
            browser = await launch_browser(
                playwright,
                browser=config.browser,
                headless=config.headless,
                executable_path=config.executable_path,
                ws_endpoint=first.url if first is not None else None,
                headed_by=config.headed_by,
                ws_headers=first.headers if first is not None else (),
            )
        except BaseException:
            with contextlib.suppress(Exception):
                await playwright.stop()
            raise
        return WarmBrowser(browser, playwright)

    async def _driver(self) -> Playwright:
        """The driver started early, once, else a new one."""
        early, self.early_driver = self.early_driver, None
        if isinstance(early, BaseException):
            raise early
        if early is not None:
            return await started_driver(early)
        node_cache.enable()
        return await started_driver(async_playwright().start())

    async def discard_prelaunch(self) -> None:
        """Close what :meth:`prelaunch` started when no ``drive`` took it, and a driver
        started early that no launch used."""
        early, self.early_driver = self.early_driver, None
        if early is not None and not isinstance(early, BaseException):
            with contextlib.suppress(BaseException):
                await (await early).stop()
        task, self._prelaunch = self._prelaunch, None
        if task is None:
            return
        if not task.done():
            task.cancel()
        try:
            started = await task
        except BaseException:  # cancelled, or the launch failed: nothing is left open
            return
        await started.close()

    async def drive(
        self,
        rundir: RunDirectory,
        execute: Callable[[], Awaitable[Execution]],
        *,
        provided_page: Page | None,
        shared_browser: Browser | None,
        keep_launched: Callable[[], bool] = lambda: False,
        standby: Standby | None = None,
        ahead: bool = False,
        close_behind: bool = False,
    ) -> Driven:
        """``execute`` the scenario on the page the run is given, else in a new context.

        A browser launched here is closed at the end unless ``keep_launched()`` says
        otherwise (a ``restart``): then it stays up, with its driver, in :attr:`kept`,
        for the next run to use as its shared browser. ``standby``: a context of
        ``shared_browser`` opened ahead for this run (:meth:`open_standby`). ``ahead``: the
        shared browser runs scenario after scenario (a collection worker): this run takes
        the context opened ahead while the run before it ran, opens the next run's, and
        closes its own in the background (:mod:`runner.browser.contexts_ahead`). ``close_behind``:
        the shared browser outlives this run (a worker's), so the run's context is closed
        in the background too: the run ends without waiting for the browser's answer
        (about 11 ms a scenario), and the next one's context opens meanwhile."""
        if provided_page is not None:
            return await self._on_page(rundir, execute, provided_page, tracing=False)
        if shared_browser is not None:
            options: dict[str, Any] | None = None
            if ahead and standby is None:
                # every option the context is made with: one opened with others is not
                # taken, and the next one opens with this run's (read now)
                options = self._options(shared_browser)
                key = options_key(options)
                standby = await AHEAD.take(shared_browser, key)
                AHEAD.open(shared_browser, key, self._opener(options))
            return await self._in_new_context(
                rundir,
                execute,
                shared_browser,
                standby,
                close_later_too=ahead or close_behind,
                options=options,
            )
        if self._prelaunch is None:
            self.prelaunch()
        assert self._prelaunch is not None
        # still ours until it is taken: an abort meanwhile leaves it to close_launched
        started = await self._prelaunch
        self._prelaunch = None
        playwright = started.playwright
        self.launched = started.browser
        try:
            driven = await self._in_new_context(rundir, execute, self.launched)
            self.driven = driven
            return driven
        finally:
            await self._release(playwright, keep_launched)

    async def _release(self, playwright: Playwright, keep_launched: Callable[[], bool]) -> None:
        """Keep the launched browser for the next run, or close it and stop the driver."""
        launched = self.launched
        if launched is not None and launched.is_connected() and keep_launched():
            self.kept = WarmBrowser(launched, playwright)
            self.launched = None
            return
        try:
            if launched is not None:
                await close_browser(launched)
                self.launched = None
        finally:
            with contextlib.suppress(Exception):
                await playwright.stop()

    async def close_launched(self) -> None:
        """The launched browser, when a failure or an abort left it open (or one
        started ahead that no ``drive`` took)."""
        await self.discard_prelaunch()
        if self.launched is not None:
            await close_browser(self.launched)

    async def open_standby(self, browser: Browser) -> Standby:
        """A fresh context of ``browser`` and its page, for a run to come."""
        return await self._opener(None)(browser)

    def _opener(self, options: dict[str, Any] | None) -> Callable[[Browser], Awaitable[Standby]]:
        """Opens a standby with ``options`` (this run's, read when it opens without)."""

        async def open_standby(browser: Browser) -> Standby:
            context = await self._new_context(browser, options)
            try:
                return Standby(context, await context.new_page())
            except BaseException:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(context.close(), CLOSE_TIMEOUT_S)
                raise

        return open_standby

    def _options(self, browser: Browser) -> dict[str, Any]:
        """This run's context options, read now; the values of a storage state seeding
        the context become secrets of the run, as if it had saved them itself."""
        options = context_options(self.config, lambda: devices_of(browser))
        state = options.get("storage_state")
        if isinstance(state, dict):
            for value in storage_secrets(state):
                self.masker.add(value)
        return options

    async def _new_context(
        self, browser: Browser, options: dict[str, Any] | None = None
    ) -> BrowserContext:
        return await browser.new_context(**(options or self._options(browser)))

    async def _in_new_context(
        self,
        rundir: RunDirectory,
        execute: Callable[[], Awaitable[Execution]],
        browser: Browser,
        standby: Standby | None = None,
        close_later_too: bool = False,
        options: dict[str, Any] | None = None,
    ) -> Driven:
        """A fresh context of ``browser`` (``standby``'s, if opened ahead; else made with
        ``options`` when they were read already), closed whatever happens (in the
        background with ``close_later_too``: the browser stays, and the next run need not
        wait for the answer)."""
        context = (
            standby.context if standby is not None else await self._new_context(browser, options)
        )
        self.context = context
        try:
            tracing = self.config.trace != "off"
            if tracing:
                await context.tracing.start(screenshots=True, snapshots=True, sources=False)
            page = standby.page if standby is not None else await context.new_page()
            driven = await self._on_page(rundir, execute, page, tracing)
            # A failure bundle stops the trace itself (into the bundle).
            if not self.bundle_attempted and tracing:
                if self.config.trace == "on":
                    await context.tracing.stop(path=rundir.path / "trace.zip")
                else:
                    await context.tracing.stop()
            return driven
        finally:
            if close_later_too:
                close_later(context)
            else:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(context.close(), CLOSE_TIMEOUT_S)

    def use_page(self, page: Page) -> None:
        """Make ``page`` the one the scenario drives (its first, or a tab it opened,
        by ``switch_page``): recorded and its dialogs answered, once per page."""
        self.page = page
        if page not in self._adopted:
            self._adopted.append(page)
            self.recorder.attach(page)
            page.on("dialog", self.dialogs.on_dialog)

    async def _on_page(
        self,
        rundir: RunDirectory,
        execute: Callable[[], Awaitable[Execution]],
        page: Page,
        tracing: bool,
    ) -> Driven:
        """The scenario on ``page``, then its failure bundle when it failed; its page log
        (``network.jsonl``, ``console.jsonl``) written meanwhile, and closed at the end."""
        self.context = page.context
        self.recorder.start_live(PageLog(rundir.path, self.masker.mask))
        try:
            return await self._recorded(rundir, execute, page, tracing)
        finally:
            self.recorder.end_live()

    async def _recorded(
        self,
        rundir: RunDirectory,
        execute: Callable[[], Awaitable[Execution]],
        page: Page,
        tracing: bool,
    ) -> Driven:
        self.use_page(page)
        self.tracing = tracing
        outcome, error_info, failure = await execute()
        if self.bundle_attempted:  # bundle_now took it, before the after_each hooks
            return outcome, error_info, self.early_bundle
        self.bundle_attempted = outcome == "failed" and failure is not None
        if failure is None or not self.bundle_attempted:
            return outcome, error_info, None
        bundle = await self._bundle(
            rundir, failure.step_index, error_info or events.run_error("", "Error"), tracing
        )
        return outcome, error_info, bundle

    async def bundle_now(self, rundir: RunDirectory, step_index: int, error_info: RunError) -> None:
        """The failure bundle while the scenario still runs: a test failed and its
        ``after_each`` hooks, about to run, may change the page. Taken once."""
        if not self.bundle_attempted:
            self.bundle_attempted = True
            self.early_bundle = await self._bundle(rundir, step_index, error_info, self.tracing)

    async def bundle_soft(
        self, rundir: RunDirectory, step_index: int, error_info: RunError
    ) -> str | None:
        """A soft assertion's bundle, while the scenario goes on: the page as it is now;
        no trace (it is the run's, saved with the run's failure)."""
        return await self._bundle(rundir, step_index, error_info, tracing=False)

    async def _bundle(
        self, rundir: RunDirectory, step_index: int, error_info: RunError, tracing: bool
    ) -> str | None:
        """Best effort: a bundle that cannot be written (.unotest not a
        directory, disk full) must not hide the scenario's own error behind an
        "internal error" and exit 2; the run still ends as failed, exit 1."""
        info = await self._with_page(error_info)
        try:
            bundle = await write_failure_bundle(
                root=self.root,
                scenario=self.scenario,
                step_index=step_index,
                error=info,
                page=self.page,
                context=self.context,
                recorder=self.recorder,
                mask=self.masker.mask,
                mask_data=self.masker.mask_data,
                trace=tracing,
            )
        except Exception as err:
            print(
                self.masker.mask(
                    f"unotest: warning: no failure bundle: {type(err).__name__}: {err}"
                ),
                file=sys.stderr,
                flush=True,
            )
            return None
        rundir.append(events.failure_bundle_written(bundle.relative, bundle.screenshot))
        return bundle.relative

    async def _with_page(self, error_info: RunError) -> RunError:
        """The error with the page's url and title, when the page is still open."""
        page = self.page
        info = RunError(**error_info)
        if page is not None and not page.is_closed():
            info["url"] = page.url
            try:
                info["title"] = await asyncio.wait_for(page.title(), TITLE_TIMEOUT_S)
            except Exception:
                info["title"] = self.page_title
        return info
