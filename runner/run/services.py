"""What the scenario's built-ins get from its run: ``env()``, ``log()``, a clock that
stands still while the debugger holds the run, screenshots into the run directory, the
page the browser built-ins drive, and the page as ``runtime.json`` shows it.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Callable

from playwright.async_api import Page

from dsl.builtins import PureServices, make_pure_builtins
from dsl.errors import Interrupt
from dsl.interpreter import Builtin
from runner import events
from runner.browser.bridge import LoopBridge
from runner.browser.lifecycle import BrowserLifecycle
from runner.builtins.table import BrowserBuiltins, Timeouts
from runner.run.console import ConsoleOutput
from runner.run.options import RunOptions, ScenarioInputs
from runner.store.rundir import RunDirectory

__all__ = ["RunServices"]

TITLE_TIMEOUT_S = 1.0


class RunServices:
    """The built-ins of one run, and what they need of it. ``step_count`` numbers an
    unnamed screenshot; ``paused_for`` is the debugger's paused time so far; ``titled``
    names the step now running (``step(title, fn)``)."""

    def __init__(
        self,
        inputs: ScenarioInputs,
        options: RunOptions,
        console: ConsoleOutput,
        browser: BrowserLifecycle,
        *,
        step_count: Callable[[], int],
        paused_for: Callable[[], float],
        titled: Callable[[str], None] = lambda _title: None,
    ) -> None:
        self.inputs = inputs
        self.options = options
        self.console = console
        self.browser = browser
        self.step_count = step_count
        self.paused_for = paused_for
        self.titled = titled
        self.browser_builtins: BrowserBuiltins | None = None
        self.bridge: LoopBridge | None = None
        self.loop_thread: threading.Thread | None = None
        self.rundir: RunDirectory | None = None

    def bind(self, bridge: LoopBridge, rundir: RunDirectory) -> None:
        """The run's loop (its thread is this one) and its directory, once they exist."""
        self.bridge = bridge
        self.loop_thread = threading.current_thread()
        self.rundir = rundir

    def builtins(self) -> dict[str, Builtin]:
        assert self.bridge is not None and self.rundir is not None
        run_tag = self.rundir.run_id.rsplit("-", 1)[-1]
        config = self.inputs.config
        timeouts = config.timeouts
        pure = make_pure_builtins(
            PureServices(
                env=self.env,
                log=self.log,
                run_tag=run_tag,
                sleep=self.bridge.sleep,
                elapsed=self.active_seconds,
                expect_timeout_ms=float(timeouts.expect),
                titled=self.titled,
            )
        )
        browser_builtins = BrowserBuiltins(
            self.bridge,
            self.page,
            Timeouts(float(timeouts.action), float(timeouts.expect), float(timeouts.navigation)),
            config.base_url,
            self.inputs.project.root,
            self.screenshot,
            self.browser.dialogs,
            self.browser.use_page,
            self.rundir.path,
            log=self.log,
            add_secret=self.inputs.masker.add,
            mark_routed=self.browser.recorder.mark_routed,
        )
        self.browser_builtins = browser_builtins
        return {**pure, **browser_builtins.builtins()}

    def active_seconds(self) -> float:
        """A monotonic clock that stands still while the debugger holds the run."""
        return time.monotonic() - self.paused_for()

    def env(self, name: str) -> str | None:
        if name in self.options.extra_env:
            return self.options.extra_env[name]
        return self.inputs.environment.get(name)

    def log(self, line: str) -> None:
        self.console.end_pending()
        # One write, line and newline together: after an abort the loop's thread prints
        # too (the after_each hooks still log), and print() writes the two apart.
        stream = self.options.log_stream
        stream.write(self.inputs.masker.mask(line) + "\n")
        stream.flush()

    def warn(self, text: str) -> None:
        self.console.end_pending()
        print(self.inputs.masker.mask(f"unotest: {text}"), file=sys.stderr, flush=True)

    def page(self) -> Page:
        assert self.browser.page is not None
        return self.browser.page

    async def screenshot(self, name: str | None) -> None:
        assert self.rundir is not None
        rundir = self.rundir
        page = self.page()
        index = self.step_count()
        safe = "".join(
            ch if ch.isalnum() or ch in "-_" else "-" for ch in (name or f"step-{index}")
        )
        base = safe or "screenshot"
        relative_name = f"screenshot/{base}.png"
        suffix = 2
        while (rundir.path / relative_name).exists():
            # Two screenshots with the same name keep both images and both events.
            relative_name = f"screenshot/{base}-{suffix}.png"
            suffix += 1
        data = await page.screenshot()
        path = rundir.write_bytes_file(relative_name, data)
        rundir.append(events.screenshot(self.inputs.project.relative(path)))

    def page_info(self) -> dict[str, str] | None:
        """``runtime.json``'s ``page``; the title is refreshed only from the scenario thread.

        The bridge blocks its caller until the loop has run the coroutine, so a call
        from the loop's own thread would wait for itself forever.
        """
        page = self.browser.page
        if page is None or page.is_closed():
            return None
        builtins = self.browser_builtins
        if (
            builtins is not None
            and builtins.touched_page
            and threading.current_thread() is not self.loop_thread
        ):
            builtins.touched_page = False
            assert self.bridge is not None
            try:
                self.browser.page_title = self.bridge.call(_title_of(page))
            except Interrupt:
                raise
            except Exception:
                pass
        return {"url": page.url, "title": self.browser.page_title}


async def _title_of(page: Page) -> str:
    """``page.title()`` made only once the loop runs this: an interrupted bridge closes
    the coroutine unstarted, and an inner one made eagerly (``wait_for(page.title())``)
    would be left behind, "never awaited", a RuntimeWarning on stderr."""
    return await asyncio.wait_for(page.title(), TITLE_TIMEOUT_S)
