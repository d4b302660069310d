"""A V8 compile cache for Playwright's driver, so its Node start costs less each run.

Playwright's driver is a Node process that loads several megabytes of JavaScript on
every start: about 270 ms of CPU here, 60 ms of it compiling what it compiled the time
before. Node keeps compiled code on disk when ``NODE_COMPILE_CACHE`` names a folder
(Node 22.1 and later; older ones ignore it), checked against each file's contents, so
a changed Playwright simply compiles again. Every run starts a driver, and on two
cores the driver's start is what the browser's launch waits for, so this is felt on
every ``unotest e2e`` and each collection worker.

The folder is in the user's own cache folder (:func:`cache_folder`), not a shared
temporary one where another user could plant compiled code. A
``NODE_COMPILE_CACHE`` already set, or ``NODE_DISABLE_COMPILE_CACHE``, is the user's
choice and left alone. The setting goes into this process's environment, which the
driver copies when it starts; a webServer command does not get it from us
(:func:`without_ours`), so a user's own Node server runs as it would without unotest.

Standard library only: imported before anything heavy, by :mod:`runner.browser.early_driver`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

__all__ = ["CACHE_VAR", "enable", "without_ours"]

CACHE_VAR = "NODE_COMPILE_CACHE"
DISABLE_VAR = "NODE_DISABLE_COMPILE_CACHE"

_ours: str | None = None
"""The folder this process put in ``NODE_COMPILE_CACHE``, if it did."""


def cache_folder(environ: Mapping[str, str], platform: str = sys.platform) -> Path | None:
    """The user's cache folder, as Playwright's own browsers use it, plus
    ``unotest/node-compile-cache``: ``$XDG_CACHE_HOME`` or ``~/.cache`` (Linux),
    ``~/Library/Caches`` (macOS), ``%LOCALAPPDATA%`` (Windows); None when no home is known."""

    def absolute(name: str) -> Path | None:
        value = environ.get(name, "").strip()
        return Path(value) if value and os.path.isabs(value) else None

    if platform == "win32":
        profile = absolute("USERPROFILE")
        base = absolute("LOCALAPPDATA") or (profile / "AppData" / "Local" if profile else None)
    elif platform == "darwin":
        home = absolute("HOME")
        base = home / "Library" / "Caches" if home else None
    else:
        home = absolute("HOME")
        base = absolute("XDG_CACHE_HOME") or (home / ".cache" if home else None)
    return base / "unotest" / "node-compile-cache" if base is not None else None


def enable() -> None:
    """Name our cache folder for the Node processes started from now on, unless the
    user chose otherwise or no home folder is known."""
    global _ours
    if CACHE_VAR in os.environ or os.environ.get(DISABLE_VAR):
        return
    folder = cache_folder(os.environ)
    if folder is None:
        return
    os.environ[CACHE_VAR] = _ours = str(folder)


def without_ours(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` without the cache folder :func:`enable` set (a user's own value stays)."""
    copied = dict(environ)
    if _ours is not None and copied.get(CACHE_VAR) == _ours:
        del copied[CACHE_VAR]
    return copied
