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

While a run goes, the recorder also hands every entry, as it comes, to the run's page
log (:attr:`PageRecorder.live`, a :class:`runner.browser.page_log.PageLog`:
``network.jsonl`` and ``console.jsonl`` in the run directory, passing runs too), in the
same shapes (:class:`runner.protocol.NetworkLine`, :class:`runner.protocol.ConsoleLine`).

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
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from weakref import WeakKeyDictionary

from playwright.async_api import BrowserContext, ConsoleMessage, Page, Request, Response
from playwright.async_api import Error as PlaywrightError

from runner import events
from runner.browser.page_log import (
    MAX_VALUE_CHARS,
    RECORD_CHARS,
    PageLog,
    keep,
    masked_entry,
)
from runner.events import RunError
from runner.project.secrets import cut_masked
from runner.protocol import ConsoleLine, JSONObject, NetworkLine, PageRouted

__all__ = [
    "MAX_VALUE_CHARS",
    "RECORD_CHARS",
    "BundleResult",
    "ConsoleEntry",
    "NetworkEntry",
    "PageRecorder",
    "Routed",
    "bundle_dir_name",
    "write_failure_bundle",
]

RECENT = 200
MAX_UNFINISHED = 1000
"""Responses kept for their status until their request finishes (a stream may never)."""
MAX_ERROR_CHARS = 65_536
"""error.json keeps the whole message up to this: a failed ``expect_equal`` on a 1 MB
value must not make a 1 MB bundle file (nor a 1 MB ``get_failure`` answer); the
variables are there, cut to 4 KB each."""
TIER_TIMEOUT_S = {"screenshot": 5.0, "aria": 5.0, "trace": 15.0}


def bundle_dir_name(scenario: str, step_index: int, now: datetime | None = None) -> str:
    """``<scenario>__<isoDate>__<stepIdx>`` with ``/`` → ``-`` and no ``:``."""
    moment = (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H-%M-%S.%fZ")
    return f"{scenario.replace('/', '-')}__{moment}__{step_index}"


ConsoleEntry = ConsoleLine
"""One entry of ``console.json`` (a line of ``console.jsonl``): a console message, or a
page error or dialog (no url/line)."""

Routed = PageRouted
"""How a scenario's route answered a request (``network.json``'s ``routed``)."""

NetworkEntry = NetworkLine
"""One entry of ``network.json`` (a line of ``network.jsonl``): a finished or failed
request; ``routed`` only when a scenario's route answered it."""


class PageRecorder:
    """Keeps the recent console messages, page errors and requests of a page.

    A request's status comes from the ``response`` event and its duration from the
    browser's own timing (``responseEnd``, in milliseconds after the request started),
    so recording costs no call to the driver: asking each finished request for its
    response (``request.response()``) was a round trip per request, tens of them on
    each page load of a real application, on the connection the scenario's own steps
    wait on. Its size is the response's ``Content-Length`` header, which the
    ``response`` event brings along (``request.sizes()`` would be a round trip too).
    """

    def __init__(self) -> None:
        self.console: deque[ConsoleEntry] = deque(maxlen=RECENT)
        self.network: deque[NetworkEntry] = deque(maxlen=RECENT)
        self.live: PageLog | None = None
        """The run's page log while it runs: each entry is written there as it comes."""
        self._status: dict[Request, tuple[int, int | None]] = {}
        """Status and size of the responses whose requests have not finished yet."""
        self._routed: WeakKeyDictionary[Request, Routed] = WeakKeyDictionary()
        """How a scenario's route answered a request (held as long as the request)."""

    def mark_routed(self, request: Request, how: Routed) -> None:
        """``request`` was answered by a scenario's route (the last route to answer it
        says how): its ``network.json`` entry has ``routed``."""
        self._routed[request] = how

    def start_live(self, log: PageLog) -> None:
        """Hand every entry from now on to ``log`` as well (the run's page log)."""
        self.live = log

    def end_live(self) -> None:
        """The run has ended: the requests answered but not finished yet (a body still
        coming, or a request the page never read to the end) go to the page log with
        their status and no duration, and the log is closed (the page may talk on)."""
        log, self.live = self.live, None
        if log is None:
            return
        for request in list(self._status):
            log.network(self._entry(request, None))
        log.close()

    def attach(self, page: Page) -> None:
        page.on("console", self._on_console)
        page.on("pageerror", self._on_page_error)
        page.on("response", self._on_response)
        page.on("requestfinished", self._on_finished)
        page.on("requestfailed", self._on_failed)

    def _on_console(self, message: ConsoleMessage) -> None:
        location = message.location
        place = (
            (keep(location.get("url")), location.get("lineNumber")) if location else (None, None)
        )
        self._console(events.console_line(message.type, keep(message.text), place))

    def note_dialog(self, text: str) -> None:
        """A dialog the run answered (:mod:`runner.browser.dialogs`), among the messages."""
        self._console(events.console_line("dialog", keep(text)))

    def _on_page_error(self, error: PlaywrightError) -> None:
        self._console(events.console_line("pageerror", keep(str(error))))

    def _console(self, entry: ConsoleEntry) -> None:
        self.console.append(entry)
        if self.live is not None:
            self.live.console(entry)

    def _on_response(self, response: Response) -> None:
        if len(self._status) >= MAX_UNFINISHED:  # responses whose bodies never end
            del self._status[next(iter(self._status))]
        length = response.headers.get("content-length")
        size = int(length) if length is not None and length.isdigit() else None
        self._status[response.request] = (response.status, size)

    def _entry(self, request: Request, failure: str | None) -> NetworkEntry:
        end = request.timing.get("responseEnd", -1)
        status, size = self._status.pop(request, (None, None))
        return events.network_line(
            request.method,
            keep(request.url),
            status=status,
            # A whole number of ms comes as an int in the driver's JSON: a float always.
            duration_ms=round(float(end), 1) if end >= 0 else None,
            size=size,
            failure=keep(failure),
            routed=self._routed.get(request),
        )

    def _network(self, entry: NetworkEntry) -> None:
        self.network.append(entry)
        if self.live is not None:
            self.live.network(entry)

    def _on_finished(self, request: Request) -> None:
        self._network(self._entry(request, None))

    def _on_failed(self, request: Request) -> None:
        self._network(self._entry(request, request.failure))


def _bounded(
    entries: Sequence[Mapping[str, object]], mask: Callable[[str], str]
) -> list[JSONObject]:
    """Recorded entries with every string masked, then cut to :data:`MAX_VALUE_CHARS`."""
    return [masked_entry(entry, mask) for entry in entries]


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
