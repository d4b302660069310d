"""``download(t, {timeout}?)``: click ``t`` and keep the file that click downloads.

What a ported Playwright Test suite writes as::

    const d = page.waitForEvent('download'); await page.click('Export');
    (await d).suggestedFilename(); await (await d).saveAs(path)

is one call here, ``const d = download("Export")``, whose answer is an object
``{name, path, size, text}`` the pure built-ins can check (``expect_equal(d.name,
"report.csv")``, ``d.text.includes("total")``).

The file is kept with the run's other artifacts, ``<run dir>/downloads/<name>``
(readers ignore what they do not know,
as they do ``events.ndjson``), so a failed run's download can be opened next to its
screenshots. The browser's suggested name is a stranger's text: it is cut down to one
plain file name inside that folder, and a name already there gets `` (2)``.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from playwright.async_api import Download, Locator
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from dsl.errors import BuiltinError
from dsl.values import Value
from runner.builtins.page_calls import PageCalls, first_line, target_of, timeout_option

__all__ = ["MAX_TEXT_BYTES", "Downloads", "safe_filename", "unused_path"]

MAX_TEXT_BYTES = 1024 * 1024
"""A download larger than this (1 MB) has ``text: null``: its bytes stay in the file."""
FOLDER = "downloads"
FALLBACK_FOLDER = (".unotest", "downloads")
"""Where downloads go when the run has no run directory (a page driven outside a run)."""
_MAX_NAME_BYTES = 200
"""File systems take 255 bytes a name (UTF-8: a Cyrillic letter is two); the `` (n)``
suffix needs room too."""
_UNSAFE = re.compile(r"[/\\\x00-\x1f\x7f]")


def safe_filename(suggested: str) -> str:
    """``suggested`` as one plain file name: path separators and control characters
    become ``_``, leading dots and spaces go (no ``..``, no hidden file), and nothing
    left is ``download``. Chromium already cleans its names much this way; this holds
    whatever the browser (or a future one) hands over."""
    name = _UNSAFE.sub("_", suggested).strip().lstrip(". ")
    if len(name.encode()) > _MAX_NAME_BYTES:
        stem, dot, extension = name.rpartition(".")
        if not (dot and 0 < len(extension.encode()) <= 16):
            stem, extension = name, ""
        room = _MAX_NAME_BYTES - (len(extension.encode()) + 1 if extension else 0)
        stem = stem.encode()[:room].decode(errors="ignore")  # whole characters only
        name = f"{stem}.{extension}" if extension else stem
    return name or "download"


def unused_path(folder: Path, name: str) -> Path:
    """``folder/name``, or ``name (2).ext``, ``name (3).ext``... when taken; the name is
    claimed by creating the file (``O_EXCL``), so two runs saving into one folder
    never write the same file."""
    stem, extension = _split_extension(name)
    number = 1
    while True:
        candidate = folder / (name if number == 1 else f"{stem} ({number}){extension}")
        try:
            os.close(os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
        except FileExistsError:
            number += 1
            continue
        return candidate


def _split_extension(name: str) -> tuple[str, str]:
    """``report.csv`` -> (``report``, ``.csv``); a name without one keeps it all."""
    stem, dot, extension = name.rpartition(".")
    if not dot or not stem:
        return name, ""
    return stem, "." + extension


@dataclass(frozen=True)
class _Saved:
    name: str
    path: Path


class Downloads:
    """``download`` for one run: its page calls, the project root (paths are shown
    relative to it) and the run directory, where the run keeps its artifacts (None:
    built-ins bound to a page outside a run, which keep them under ``.unotest/``)."""

    def __init__(self, calls: PageCalls, root: Path, run_dir: Path | None) -> None:
        self.calls = calls
        self.root = root.resolve()
        self.run_dir = run_dir

    def builtins(self) -> dict[str, Callable[..., Value]]:
        return {"download": self.download}

    def folder(self) -> Path:
        if self.run_dir is not None:
            return self.run_dir.resolve() / FOLDER
        return self.root.joinpath(*FALLBACK_FOLDER)

    def download(self, value: Value, options: Value = None) -> Value:
        """Click ``value`` as ``click`` does and wait, within the action timeout (or the
        ``{timeout}`` given), for the download the click starts: Playwright's
        ``page.expect_download()`` around ``locator.click()``."""
        own = timeout_option("download", options, "timeout.action")
        timeout = own if own is not None else self.calls.timeouts.action
        shown = target_of("download", value).render()

        async def click_and_keep(locator: Locator) -> Value:
            clicked = False
            try:
                async with self.calls.page.expect_download(timeout=timeout) as event:
                    await locator.click(timeout=timeout)
                    clicked = True
            except PlaywrightTimeoutError:
                if not clicked:
                    raise  # the click's own timeout: said as click says it
                raise BuiltinError(
                    "TimeoutError",
                    f"download: clicking {shown} started no download within {int(timeout)} ms",
                ) from None
            saved = await self._keep(await event.value, shown)
            # the scenario thread reads the file, not the loop the page's events run on
            return {"name": saved.name, "path": str(saved.path)}

        kept = self.calls.query(
            "download",
            value,
            click_and_keep,
            timeout_ms=own,
        )
        assert isinstance(kept, dict)
        name, path = kept["name"], kept["path"]
        assert isinstance(name, str) and isinstance(path, str)
        return self._describe(name, Path(path))

    async def _keep(self, download: Download, shown: str) -> _Saved:
        name = download.suggested_filename
        path: Path | None = None
        try:
            failure = await download.failure()
            if failure is not None:
                raise BuiltinError(
                    "Error",
                    f"download: the download of {name!r} that clicking {shown} started "
                    f"failed: {failure}",
                )
            folder = self.folder()
            folder.mkdir(parents=True, exist_ok=True)
            path = unused_path(folder, safe_filename(name))
            await download.save_as(path)
        except (PlaywrightError, OSError) as err:
            if path is not None:
                with contextlib.suppress(OSError):
                    path.unlink(missing_ok=True)  # the name it claimed, still empty
            why = err.strerror or err if isinstance(err, OSError) else first_line(err)
            raise BuiltinError("Error", f"download: {name!r} could not be saved: {why}") from None
        return _Saved(name, path)

    def _describe(self, name: str, path: Path) -> Value:
        """``{name, path, size, text}`` of the kept file; ``name`` is the browser's
        suggestion as it gave it (the file's own name may differ: cleaned, numbered),
        ``path`` relative to the project root, ``text`` the content when it is UTF-8
        and at most :data:`MAX_TEXT_BYTES` (``null`` otherwise)."""
        try:
            size = path.stat().st_size
            data = path.read_bytes() if size <= MAX_TEXT_BYTES else None
        except OSError as err:
            raise BuiltinError(
                "Error", f"download: {name!r} was saved but cannot be read: {err.strerror or err}"
            ) from None
        text: str | None = None
        if data is not None:
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                text = None
        shown = (
            path.relative_to(self.root).as_posix()
            if path.is_relative_to(self.root)
            else (path.as_posix())
        )
        return {"name": name, "path": shown, "size": float(size), "text": text}
