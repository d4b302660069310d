"""The page as an image at every pause, after an ``eval`` there, and after each step.

A person debugging what the page did wants to *see* it where the run stands, as
Playwright's UI mode shows a snapshot per action: the viewer shows the newest image at a
pause and, for a finished step, the image taken after it. Images are JPEGs under the run
directory's ``pages/`` (pruned with the run), each announced by a ``page:image`` line of
``steps.jsonl`` (ours, additive).

Cost decides the shape. A pause's image is always taken: a person is looking, and its
aria snapshot is kept beside it for agents. A step's image (``pageImages.steps``, by
default only under the debugger) is taken only after a step that called something that
may change the page (a ``let`` leaves the last image valid), in Chromium through one
CDP ``Page.captureScreenshot`` scaled to ``pageImages.width`` (Playwright's
``screenshot`` waits for fonts and cannot scale), elsewhere through Playwright.
Nothing here may fail a run: an image that cannot be taken is left out.
"""

from __future__ import annotations

import asyncio
import base64
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from playwright.async_api import CDPSession, Page

from dsl.errors import ScriptError
from dsl.interpreter import Step
from runner import events, protocol
from runner.browser.bridge import LoopBridge
from runner.debug.commands import Command
from runner.debug.controller import DebugListener, PauseReason
from runner.run.steps import Ended, StepListener
from runner.store.rundir import RunDirectory

__all__ = ["PAGES_DIR", "PageImages", "capture_page"]

PAGES_DIR = "pages"
CAPTURE_TIMEOUT_S = 5.0
ARIA_TIMEOUT_MS = 3000
STEP_QUALITY = 60
PAUSE_QUALITY = 80


@dataclass(frozen=True)
class Capture:
    """One image of the page: the JPEG and the page's viewport in CSS pixels."""

    jpeg: bytes
    viewport: tuple[int, int]


async def capture_page(
    page: Page, width: int | None, quality: int, sessions: dict[Page, CDPSession]
) -> Capture:
    """The page's viewport as a JPEG ``width`` pixels wide (None: its CSS size).

    In Chromium one CDP call with a scaled clip of the visible area (``sessions`` keeps
    each page's CDP session); elsewhere, or if CDP is refused (a browser over
    ``connect`` may refuse it), Playwright's own screenshot at CSS scale."""
    try:
        session = sessions.get(page)
        if session is None:
            session = await page.context.new_cdp_session(page)
            sessions[page] = session
        metrics: dict[str, Any] = await session.send("Page.getLayoutMetrics")
        view = metrics["cssVisualViewport"]
        css_w, css_h = view["clientWidth"], view["clientHeight"]
        scale = min(1.0, width / css_w) if width else 1.0
        shot = await session.send(
            "Page.captureScreenshot",
            {
                "format": "jpeg",
                "quality": quality,
                "optimizeForSpeed": True,  # Chromium's faster encoder (Chrome 116+)
                "clip": {
                    "x": view["pageX"],
                    "y": view["pageY"],
                    "width": css_w,
                    "height": css_h,
                    "scale": scale,
                },
            },
        )
        return Capture(base64.b64decode(shot["data"]), (round(css_w), round(css_h)))
    except Exception:
        sessions.pop(page, None)
    jpeg = await page.screenshot(type="jpeg", quality=quality, scale="css", timeout=5000)
    size = page.viewport_size or await page.evaluate(
        "() => ({width: innerWidth, height: innerHeight})"
    )
    return Capture(jpeg, (int(size["width"]), int(size["height"])))


class PageImages(StepListener, DebugListener):
    """Images of one run's page, told by its steps and its debugger.

    ``page`` is the page the scenario drives now (None before the first, after the
    last); ``touches`` counts the calls that may have changed it; ``project_path``
    makes a run-directory path project-relative, as every event's paths are;
    ``loop_thread``: an interrupt closes steps on the loop's own thread, where the
    bridge would wait for itself."""

    def __init__(
        self,
        rundir: RunDirectory,
        bridge: LoopBridge,
        page: Callable[[], Page | None],
        touches: Callable[[], int],
        mask: Callable[[str], str],
        project_path: Callable[[Path], str],
        *,
        step_images: bool,
        width: int,
        loop_thread: threading.Thread | None,
    ) -> None:
        self.rundir = rundir
        self.bridge = bridge
        self.page = page
        self.touches = touches
        self.mask = mask
        self.project_path = project_path
        self.step_images = step_images
        self.width = width
        self.loop_thread = loop_thread
        self._sessions: dict[Page, CDPSession] = {}
        self._seen_touches = -1
        self._pauses = 0
        self._paused_step: Step | None = None

    # --- told by the steps ---------------------------------------------------------

    def passed(self, ended: Ended) -> None:
        self._after_step(ended)

    def failed(self, ended: Ended) -> None:
        self._after_step(ended)

    def _after_step(self, ended: Ended) -> None:
        if not self.step_images or ended.step is None or self._on_loop():
            return
        touches = self.touches()
        if touches == self._seen_touches:
            return  # nothing since the last image could have changed the page
        opened = ended.opened
        taken = self._take(f"step-{opened.index}", self.width, STEP_QUALITY)
        if taken is None:
            return
        self._seen_touches = touches
        path, viewport = taken
        where = (opened.file, opened.line, opened.col)
        self.rundir.append(events.page_image(path, "step", where, viewport, step=opened.index))

    # --- told by the debugger --------------------------------------------------------

    def paused(self, step: Step, reason: PauseReason, error: ScriptError | None = None) -> None:
        self._at_pause(step, "pause")

    def evaluated(self, command: Command, event: protocol.CommandResultEvent) -> None:
        if command.cmd == "eval":
            step = self._paused_step
            if step is not None:
                self._at_pause(step, "eval")

    def _at_pause(self, step: Step, after: protocol.PageImageAfter) -> None:
        """The page as it is now, full size, with its aria snapshot (an agent reads
        that where a person reads the image)."""
        self._paused_step = step
        if self._on_loop():
            return
        self._pauses += 1
        name = f"pause-{self._pauses}"
        taken = self._take(name, None, PAUSE_QUALITY)
        if taken is None:
            return
        path, viewport = taken
        aria = self._aria(name)
        where = (step.file, step.line, step.col)
        self.rundir.append(events.page_image(path, after, where, viewport, aria=aria))

    # --- taking ------------------------------------------------------------------------

    def _on_loop(self) -> bool:
        return threading.current_thread() is self.loop_thread

    def _take(
        self, name: str, width: int | None, quality: int
    ) -> tuple[str, tuple[int, int]] | None:
        page = self.page()
        if page is None or page.is_closed():
            return None
        try:
            capture = self.bridge.call(
                asyncio.wait_for(
                    capture_page(page, width, quality, self._sessions), CAPTURE_TIMEOUT_S
                )
            )
            written = self.rundir.write_bytes_file(f"{PAGES_DIR}/{name}.jpeg", capture.jpeg)
        except Exception:
            return None  # a closed page, a crashed renderer, a full disk: no image
        return self.project_path(written), capture.viewport

    def _aria(self, name: str) -> str | None:
        page = self.page()
        if page is None or page.is_closed():
            return None
        try:
            text = self.bridge.call(page.locator("body").aria_snapshot(timeout=ARIA_TIMEOUT_MS))
            written = self.rundir.write_text_file(
                f"{PAGES_DIR}/{name}.aria.yaml", self.mask(text) + "\n"
            )
        except Exception:
            return None
        return self.project_path(written)
