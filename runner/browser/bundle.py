"""Failure bundles: what a person or an agent needs to fix a failure.

Written best effort, in tiers, each with its own short timeout, cheapest first, so a
page that hangs costs a screenshot but never the error itself: tier 1 ``error.json``
(pure data, written before anything touches the browser), tier 2 ``screenshot.png``,
tier 3 ``page.aria.yaml``, ``network.json``, ``console.json`` and ``trace.zip``.
A tier that fails is noted in ``error.json`` under ``captureErrors`` and never
replaces the original error. Text files go through the secret masker.

The recorder is bounded in count (the last 200 messages and requests) *and* in size: a
page that logs megabytes, or loads ``data:`` URLs, keeps at most
:data:`RECORD_CHARS` characters per string in memory, and the bundle writes each one
masked, then cut to :data:`MAX_VALUE_CHARS` (in that order, so a cut never leaves the
start of a secret).

A request a scenario's route answered (``route()`` in :mod:`runner.builtins.network`)
has ``routed`` in ``network.json``: ``fulfilled`` (mocked), ``aborted`` or
``recorded`` (let through and kept for ``wait_for_response``), so a failure after a
mock says the page saw the mock, not the server. The route marks the request
(:meth:`PageRecorder.mark_routed`) before it answers, and the recorder, which sees the request
finish later, reads the mark: neither needs the other, and a mark goes with its
request (weakly held).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, NotRequired, TypedDict
from weakref import WeakKeyDictionary

from playwright.async_api import BrowserContext, ConsoleMessage, Page, Request, Response
from playwright.async_api import Error as PlaywrightError

from runner.events import RunError
from runner.project.secrets import MASK_MARGIN, cut_masked
from runner.protocol import JSONObject

__all__ = [
    "BundleResult",
    "PageRecorder",
    "Routed",
    "bundle_dir_name",
    "write_failure_bundle",
]

RECENT = 200
MAX_UNFINISHED = 1000
"""Responses kept for their status until their request finishes (a stream may never)."""
MAX_VALUE_CHARS = 4096
MAX_ERROR_CHARS = 65_536
"""error.json keeps the whole message up to this: a failed ``expect_equal`` on a 1 MB
value must not make a 1 MB bundle file (nor a 1 MB ``get_failure`` answer); the
variables are there, cut to 4 KB each."""
RECORD_CHARS = MAX_VALUE_CHARS + MASK_MARGIN
TIER_TIMEOUT_S = {"screenshot": 5.0, "aria": 5.0, "trace": 15.0}


def bundle_dir_name(scenario: str, step_index: int, now: datetime | None = None) -> str:
    """``<scenario>__<isoDate>__<stepIdx>`` with ``/`` → ``-`` and no ``:``."""
    moment = (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H-%M-%S.%fZ")
    return f"{scenario.replace('/', '-')}__{moment}__{step_index}"


class ConsoleEntry(TypedDict):
    """One line of ``console.json``: a console message, or a page error (no url/line)."""

    type: str
    text: str | None
    url: NotRequired[str | None]
    line: NotRequired[int | None]
    t: int


Routed = Literal["fulfilled", "aborted", "recorded"]
"""How a scenario's route answered a request (``network.json``'s ``routed``)."""


class NetworkEntry(TypedDict):
    """One line of ``network.json``: a finished or failed request; ``routed`` only when
    a scenario's route answered it."""

    method: str
    url: str | None
    durationMs: float | None
    status: int | None
    failure: str | None
    routed: NotRequired[Routed]


class PageRecorder:
    """Keeps the recent console messages, page errors and requests of a page.

    A request's status comes from the ``response`` event and its duration from the
    browser's own timing (``responseEnd``, in milliseconds after the request started),
    so recording costs no call to the driver: asking each finished request for its
    response (``request.response()``) was a round trip per request, tens of them on
    each page load of a real application, on the connection the scenario's own steps
    wait on.
    """

    def __init__(self) -> None:
        self.console: deque[ConsoleEntry] = deque(maxlen=RECENT)
        self.network: deque[NetworkEntry] = deque(maxlen=RECENT)
        self._status: dict[Request, int] = {}
        """Statuses of the responses whose requests have not finished yet."""
        self._routed: WeakKeyDictionary[Request, Routed] = WeakKeyDictionary()
        """How a scenario's route answered a request (held as long as the request)."""

    def mark_routed(self, request: Request, how: Routed) -> None:
        """``request`` was answered by a scenario's route (the last route to answer it
        says how): its ``network.json`` entry has ``routed``."""
        self._routed[request] = how

    def attach(self, page: Page) -> None:
        page.on("console", self._on_console)
        page.on("pageerror", self._on_page_error)
        page.on("response", self._on_response)
        page.on("requestfinished", self._on_finished)
        page.on("requestfailed", self._on_failed)

    def _on_console(self, message: ConsoleMessage) -> None:
        location = message.location
        self.console.append(
            {
                "type": message.type,
                "text": _keep(message.text),
                "url": _keep(location.get("url")) if location else None,
                "line": location.get("lineNumber") if location else None,
                "t": int(time.time() * 1000),
            }
        )

    def note_dialog(self, text: str) -> None:
        """A dialog the run answered (:mod:`runner.browser.dialogs`), among the messages."""
        self.console.append({"type": "dialog", "text": _keep(text), "t": int(time.time() * 1000)})

    def _on_page_error(self, error: PlaywrightError) -> None:
        self.console.append(
            {"type": "pageerror", "text": _keep(str(error)), "t": int(time.time() * 1000)}
        )

    def _on_response(self, response: Response) -> None:
        if len(self._status) >= MAX_UNFINISHED:  # responses whose bodies never end
            del self._status[next(iter(self._status))]
        self._status[response.request] = response.status

    def _entry(self, request: Request, failure: str | None) -> NetworkEntry:
        end = request.timing.get("responseEnd", -1)
        entry: NetworkEntry = {
            "method": request.method,
            "url": _keep(request.url),
            # A whole number of ms comes as an int in the driver's JSON: a float always.
            "durationMs": round(float(end), 1) if end >= 0 else None,
            "status": self._status.pop(request, None),
            "failure": _keep(failure),
        }
        routed = self._routed.get(request)
        if routed is not None:
            entry["routed"] = routed
        return entry

    def _on_finished(self, request: Request) -> None:
        self.network.append(self._entry(request, None))

    def _on_failed(self, request: Request) -> None:
        self.network.append(self._entry(request, request.failure))


def _keep(text: str | None) -> str | None:
    """What the recorder keeps of a string: enough to mask it and cut it later."""
    return text[:RECORD_CHARS] if isinstance(text, str) else text


def _bounded(
    entries: Sequence[Mapping[str, object]], mask: Callable[[str], str]
) -> list[JSONObject]:
    """Recorded entries with every string masked, then cut to :data:`MAX_VALUE_CHARS`."""
    return [
        {
            key: cut_masked(value, MAX_VALUE_CHARS, mask, truncated=len(value) >= RECORD_CHARS)
            if isinstance(value, str)
            else value
            for key, value in entry.items()
        }
        for entry in entries
    ]


class BundleResult:
    def __init__(self, path: Path, relative: str, screenshot: str | None) -> None:
        self.path = path
        self.relative = relative
        self.screenshot = screenshot


async def _tier(name: str, errors: dict[str, str], make: Callable[[], Awaitable[object]]) -> bool:
    try:
        await asyncio.wait_for(make(), TIER_TIMEOUT_S.get(name, 5.0))
        return True
    except TimeoutError:
        errors[name] = f"timed out after {TIER_TIMEOUT_S.get(name, 5.0):g} s"
    except Exception as err:
        errors[name] = f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"
    return False


def _write_json(path: Path, data: object) -> None:
    path.write_text(
        json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n", encoding="utf-8"
    )


async def write_failure_bundle(
    *,
    root: Path,
    scenario: str,
    step_index: int,
    error: RunError,
    page: Page | None,
    context: BrowserContext | None,
    recorder: PageRecorder,
    mask: Callable[[str], str],
    mask_data: Callable[[object], object],
    trace: bool,
) -> BundleResult:
    """Write the bundle directory and return where it is (project-relative too)."""
    relative = f".unotest/failures/{bundle_dir_name(scenario, step_index)}"
    path = root / relative
    path.mkdir(parents=True, exist_ok=True)
    errors: dict[str, str] = {}
    error = RunError(**error)
    error["error"] = cut_masked(error["error"], MAX_ERROR_CHARS, mask)
    _write_json(path / "error.json", mask_data(error))

    screenshot: str | None = None
    if page is not None and not page.is_closed():
        shot = path / "screenshot.png"
        if await _tier("screenshot", errors, lambda: page.screenshot(path=shot, timeout=4000)):
            screenshot = f"{relative}/screenshot.png"

        async def aria() -> None:
            text = await page.locator("body").aria_snapshot(timeout=4000)
            (path / "page.aria.yaml").write_text(mask(text) + "\n", encoding="utf-8")

        if errors.get("screenshot", "").startswith("timed out"):
            # A page too busy to be drawn (a script spinning) will not answer the
            # snapshot either: another 5 s for nothing, past the scenario's timeout.
            errors["aria"] = "skipped: the page did not answer the screenshot in time"
        else:
            await _tier("aria", errors, aria)
    _write_json(path / "network.json", mask_data(_bounded(list(recorder.network), mask)))
    _write_json(path / "console.json", mask_data(_bounded(list(recorder.console), mask)))
    if trace and context is not None:
        await _tier("trace", errors, lambda: context.tracing.stop(path=path / "trace.zip"))
    if errors:
        _write_json(path / "error.json", mask_data({**error, "captureErrors": errors}))
    return BundleResult(path, relative, screenshot)
