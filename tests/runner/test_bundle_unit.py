"""runner.browser.bundle in-process: the page recorder and the failure bundle's tiers, on a real
headless Chromium page (Playwright's async API; ``on_page`` in conftest.py), its network
requests served on 127.0.0.1 by ``static_site``."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Page, Request

from runner.browser.bundle import (
    MAX_ERROR_CHARS,
    MAX_VALUE_CHARS,
    RECENT,
    RECORD_CHARS,
    BundleResult,
    PageRecorder,
    bundle_dir_name,
    write_failure_bundle,
)
from runner.project.secrets import MASK, SecretMasker

OnPage = Callable[[str | None, Callable[[Page], Awaitable[Any]]], Any]

SECRET = "s3cr3t-T0ken-value"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
ERROR = {"error": f"expected visible, token {SECRET}", "errorName": "AssertionError", "line": 7}


def masker() -> SecretMasker:
    found = SecretMasker()
    found.add(SECRET)
    return found


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


async def until(what: str, predicate: Callable[[], bool], timeout: float = 10) -> None:
    """Poll ``predicate`` while the page's events come in (they are handled on this loop)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"{what}: not within {timeout} s"
        await asyncio.sleep(0.02)


def test_bundle_directory_names_hold_no_slash_and_no_colon() -> None:
    moment = datetime(2026, 5, 29, 13, 4, 5, 123456, tzinfo=UTC)
    assert bundle_dir_name("shop/checkout", 12, moment) == (
        "shop-checkout__2026-05-29T13-04-05.123456Z__12"
    )
    assert ":" not in bundle_dir_name("a/b/c", 0)


def test_the_recorder_keeps_console_page_errors_and_requests(
    on_page: OnPage, static_site: str, tmp_path: Path
) -> None:
    (tmp_path / "index.html").write_text(
        "<!doctype html><title>Rec</title><link rel=icon href='data:,'>"
        "<script>console.warn('hello ' + 'there')</script>"
        "<script>fetch('/data.json').then(() => fetch('/missing.json'))</script>"
        "<script>setTimeout(() => { throw new Error('boom') }, 0)</script>",
        encoding="utf-8",
    )
    (tmp_path / "data.json").write_text("{}", encoding="utf-8")
    recorder = PageRecorder()

    def missing_answered() -> bool:
        entries = [e for e in recorder.network if e["url"].endswith("/missing.json")]
        return bool(entries) and entries[0]["status"] is not None

    async def check(page: Page) -> None:
        recorder.attach(page)
        await page.goto(f"{static_site}/index.html")
        await until("the second fetch and its status", missing_answered)
        await until(
            "the page error", lambda: any(m["type"] == "pageerror" for m in recorder.console)
        )

    on_page(None, check)
    warn = next(m for m in recorder.console if m["type"] == "warning")
    assert warn["text"] == "hello there" and warn["url"].endswith("/index.html")
    assert isinstance(warn["line"], int) and isinstance(warn["t"], int)
    [error] = [m for m in recorder.console if m["type"] == "pageerror"]
    assert "boom" in error["text"]
    by_url = {e["url"].rsplit("/", 1)[1]: e for e in recorder.network}
    assert by_url["index.html"]["method"] == "GET" and by_url["index.html"]["status"] == 200
    assert by_url["data.json"]["status"] == 200 and by_url["data.json"]["failure"] is None
    assert by_url["missing.json"]["status"] == 404  # answered, so finished, not failed
    assert all(e["durationMs"] >= 0 for e in recorder.network)


def test_the_recorder_asks_the_driver_nothing_per_request(
    on_page: OnPage, static_site: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Statuses come from ``response`` events, durations from the browser's timing: no
    ``request.response()`` round trip per request on the connection the steps use."""
    (tmp_path / "index.html").write_text(
        "<!doctype html><title>Many</title><link rel=icon href='data:,'><script>"
        "Promise.all([1, 2, 3, 4, 5].map(n => fetch('/data.json?n=' + n)))"
        ".then(() => document.title = 'done')</script>",
        encoding="utf-8",
    )
    (tmp_path / "data.json").write_text("{}", encoding="utf-8")
    asked: list[str] = []
    real = Request.response

    async def counted(self: Request) -> Any:
        asked.append(self.url)
        return await real(self)

    monkeypatch.setattr(Request, "response", counted)
    recorder = PageRecorder()

    async def check(page: Page) -> None:
        recorder.attach(page)
        await page.goto(f"{static_site}/index.html")
        await until("the five fetches", lambda: len(recorder.network) >= 6)

    on_page(None, check)
    assert asked == []
    assert sorted(e["status"] for e in recorder.network) == [200] * 6
    assert all(isinstance(e["durationMs"], float) for e in recorder.network), recorder.network


def test_the_recorder_keeps_the_last_200_and_a_head_of_each_huge_message(
    on_page: OnPage,
) -> None:
    recorder = PageRecorder()

    async def check(page: Page) -> None:
        recorder.attach(page)
        await page.evaluate(
            "() => { for (let i = 0; i < 250; i++) console.log('m' + i);"
            " console.log('x'.repeat(1024 * 1024)); }"
        )
        await until(
            "the huge message",
            lambda: bool(recorder.console) and recorder.console[-1]["text"].startswith("xxx"),
        )

    on_page(None, check)
    texts = [m["text"] for m in recorder.console]
    assert len(texts) == RECENT
    assert texts[0] == "m51" and texts[-2] == "m249"
    assert len(texts[-1]) == RECORD_CHARS  # enough to mask and cut later, not a megabyte


def test_a_bundle_with_a_page_has_every_tier_masked_and_bounded(
    on_page: OnPage, tmp_path: Path
) -> None:
    secrets = masker()
    recorder = PageRecorder()
    html = f"<h1>Checkout</h1><p>token {SECRET}</p><button>Pay</button>"
    huge = {**ERROR, "error": f"{SECRET} " + "e" * (2 * MAX_ERROR_CHARS)}

    async def check(page: Page) -> tuple[BundleResult, BundleResult]:
        recorder.attach(page)
        await page.evaluate(f"console.log('log {SECRET} ' + 'y'.repeat(10000))")
        await until("the console message", lambda: bool(recorder.console))
        first = await write_failure_bundle(
            root=tmp_path,
            scenario="shop/checkout",
            step_index=4,
            error=huge,
            page=page,
            context=page.context,
            recorder=recorder,
            mask=secrets.mask,
            mask_data=secrets.mask_data,
            trace=False,
        )
        second = await write_failure_bundle(
            root=tmp_path,
            scenario="shop/checkout",
            step_index=5,
            error=ERROR,
            page=page,
            context=page.context,
            recorder=recorder,
            mask=secrets.mask,
            mask_data=secrets.mask_data,
            trace=False,
        )
        return first, second

    first, second = on_page(html, check)
    assert first.relative.startswith(".unotest/failures/shop-checkout__")
    assert first.relative.endswith("__4") and second.relative.endswith("__5")
    assert first.path == tmp_path / first.relative
    assert first.screenshot == f"{first.relative}/screenshot.png"
    assert sorted(p.name for p in first.path.iterdir()) == [
        "console.json",
        "error.json",
        "network.json",
        "page.aria.yaml",
        "screenshot.png",
    ]
    assert (first.path / "screenshot.png").read_bytes().startswith(PNG_MAGIC)
    aria = (first.path / "page.aria.yaml").read_text(encoding="utf-8")
    assert 'heading "Checkout"' in aria and f"token {MASK}" in aria

    error = read_json(first.path / "error.json")
    assert "captureErrors" not in error
    assert error["errorName"] == "AssertionError" and error["line"] == 7
    assert error["error"].startswith(f"{MASK} eee") and error["error"].endswith("…")
    assert len(error["error"]) == MAX_ERROR_CHARS
    assert read_json(second.path / "error.json")["error"] == f"expected visible, token {MASK}"

    [logged] = read_json(first.path / "console.json")
    assert logged["text"].startswith(f"log {MASK} yyy") and logged["text"].endswith("…")
    assert len(logged["text"]) == MAX_VALUE_CHARS
    assert read_json(first.path / "network.json") == []
    every_file = b"".join(p.read_bytes() for p in first.path.iterdir())
    assert SECRET.encode() not in every_file


def test_without_a_page_only_the_data_is_written(tmp_path: Path) -> None:
    secrets = masker()
    recorder = PageRecorder()
    recorder.network.append(
        {"method": "GET", "url": f"http://x/?t={SECRET}", "durationMs": 1.0, "status": 200}
    )
    result = asyncio.run(
        write_failure_bundle(
            root=tmp_path,
            scenario="smoke",
            step_index=0,
            error=ERROR,
            page=None,
            context=None,
            recorder=recorder,
            mask=secrets.mask,
            mask_data=secrets.mask_data,
            trace=True,  # no context: nothing to stop, and no complaint either
        )
    )
    assert result.screenshot is None
    assert sorted(p.name for p in result.path.iterdir()) == [
        "console.json",
        "error.json",
        "network.json",
    ]
    assert read_json(result.path / "network.json")[0]["url"] == f"http://x/?t={MASK}"
    assert "captureErrors" not in read_json(result.path / "error.json")


def test_a_tier_that_fails_is_noted_and_never_replaces_the_error(
    on_page: OnPage, tmp_path: Path
) -> None:
    secrets = masker()

    async def check(page: Page) -> tuple[BundleResult, BundleResult]:
        # Tracing was never started: stopping it fails, and says so.
        traced = await write_failure_bundle(
            root=tmp_path,
            scenario="traced",
            step_index=1,
            error=ERROR,
            page=page,
            context=page.context,
            recorder=PageRecorder(),
            mask=secrets.mask,
            mask_data=secrets.mask_data,
            trace=True,
        )
        await page.close()
        closed = await write_failure_bundle(
            root=tmp_path,
            scenario="closed",
            step_index=2,
            error=ERROR,
            page=page,
            context=page.context,
            recorder=PageRecorder(),
            mask=secrets.mask,
            mask_data=secrets.mask_data,
            trace=False,
        )
        return traced, closed

    traced, closed = on_page("<p>hi</p>", check)
    error = read_json(traced.path / "error.json")
    assert error["error"] == f"expected visible, token {MASK}"  # the original, masked
    assert set(error["captureErrors"]) == {"trace"}
    assert error["captureErrors"]["trace"].startswith("Error: ")
    assert traced.screenshot is not None and not (traced.path / "trace.zip").exists()
    # A closed page: no screenshot and no snapshot are attempted, nothing fails.
    assert closed.screenshot is None
    assert sorted(p.name for p in closed.path.iterdir()) == [
        "console.json",
        "error.json",
        "network.json",
    ]
    assert "captureErrors" not in read_json(closed.path / "error.json")


def test_a_page_too_busy_for_a_screenshot_is_not_asked_for_a_snapshot(
    on_page: OnPage, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A script spinning in the page: the screenshot times out, and the aria snapshot
    would too (another 5 s, well past a short scenario timeout): not attempted, said."""
    from runner.browser import bundle

    monkeypatch.setitem(bundle.TIER_TIMEOUT_S, "screenshot", 1.0)
    secrets = masker()

    async def check(page: Page) -> BundleResult:
        await page.evaluate("setTimeout(() => { for (;;) {} }, 0)")
        return await write_failure_bundle(
            root=tmp_path,
            scenario="busy",
            step_index=0,
            error=ERROR,
            page=page,
            context=page.context,
            recorder=PageRecorder(),
            mask=secrets.mask,
            mask_data=secrets.mask_data,
            trace=False,
        )

    result = on_page("<p>busy</p>", check)
    error = read_json(result.path / "error.json")
    assert error["captureErrors"] == {
        "screenshot": "timed out after 1 s",
        "aria": "skipped: the page did not answer the screenshot in time",
    }
    assert result.screenshot is None
