"""The browser's state in a scenario: cookies, a saved storage state, the viewport.

A ported Playwright suite logs in once and reuses the session (``context.cookies()``,
``context.addCookies()``, ``context.storageState({path})``), and checks what the server
set (an HttpOnly session cookie no page script can read). These are those calls, on the
context of the run's page, as one built-in each: ``cookies``, ``add_cookies``,
``clear_cookies``, ``save_storage_state``, and ``set_viewport`` (the page's
``setViewportSize``, for a width media query mid-scenario). Local and session storage
are read and written through ``evaluate`` (``evaluate("localStorage.getItem('k')")``).

A saved storage state is a session: its file is written 0600 inside the project only
(:func:`runner.builtins.files.project_path`), and each cookie and storage value in it is
registered as a secret (``add_secret``), so nothing the run shows from then on (steps,
runtime.json, console) holds one unmasked: every cookie value (of 4 characters or more,
as any secret), and every local storage value of :data:`MIN_STORAGE_SECRET` characters or
more (a flag such as ``true`` or ``dark`` would otherwise be masked in every line the
run writes).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

from playwright.async_api import BrowserContext, ViewportSize

from dsl.errors import BuiltinError
from dsl.values import RegexValue, Value, render, type_name
from runner.builtins.files import project_path
from runner.builtins.locators import to_pattern
from runner.builtins.page_calls import PageCalls
from runner.files import atomic_write
from runner.project.config import MAX_VIEWPORT_PX
from runner.text import did_you_mean

__all__ = ["STATE_FILE_MODE", "BrowserState"]

STATE_FILE_MODE = 0o600
"""A saved storage state holds a session: readable by its owner only."""
_COOKIE_KEYS = (
    "name",
    "value",
    "url",
    "domain",
    "path",
    "expires",
    "httpOnly",
    "secure",
    "sameSite",
)
_COOKIE_SHOWN = ("name", "value", "domain", "path", "expires", "httpOnly", "secure", "sameSite")
_SAME_SITE = ("Strict", "Lax", "None")
_CLEAR_KEYS = ("name", "domain", "path")
_SCHEME = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*:")


MIN_STORAGE_SECRET = 8
"""A local storage value this long or longer is masked once a state holding it is saved."""


class BrowserState:
    """The cookie, storage-state and viewport built-ins of one run: the context of its
    page, the project root (where a state is saved) and the run's secrets."""

    def __init__(self, calls: PageCalls, root: Path, add_secret: Callable[[str], None]) -> None:
        self.calls = calls
        self.root = root.resolve()
        self.add_secret = add_secret

    def builtins(self) -> dict[str, Callable[..., Value]]:
        return {
            "cookies": self.cookies,
            "add_cookies": self.add_cookies,
            "clear_cookies": self.clear_cookies,
            "save_storage_state": self.save_storage_state,
            "set_viewport": self.set_viewport,
        }

    @property
    def context(self) -> BrowserContext:
        return self.calls.page.context

    def cookies(self, urls: Value = None) -> Value:
        """``context.cookies(urls?)``: every cookie of the context, or those a request to
        one of ``urls`` (a URL or an array; relative ones joined to baseURL) would send."""
        wanted: list[str] | None = None
        if urls is not None:
            listed = urls if isinstance(urls, list) else [urls]
            wanted = [self._url("cookies", url, "a URL or an array of URLs") for url in listed]
        found = self.calls.run("cookies", self.context.cookies(wanted))
        shown: list[Value] = []
        for cookie in found:
            raw: dict[str, Any] = dict(cookie)
            item: dict[str, Value] = {key: raw.get(key) for key in _COOKIE_SHOWN}
            item["expires"] = float(raw.get("expires", -1))
            shown.append(item)
        return shown

    def add_cookies(self, cookies: Value) -> Value:
        """``context.addCookies(list)``; a cookie with neither ``url`` nor ``domain`` is
        for the page's URL, and one with a ``domain`` but no ``path`` for ``/``."""
        if not isinstance(cookies, list):
            raise BuiltinError(
                "TypeError",
                "add_cookies() needs an array of cookies ({name, value, url} or {name, "
                f"value, domain, path}}), got {type_name(cookies)}",
            )
        wanted = [self._cookie(cookie) for cookie in cookies]
        self.calls.run("add_cookies", self.context.add_cookies(wanted))
        return None

    def clear_cookies(self, which: Value = None) -> Value:
        """``context.clearCookies({name, domain, path}?)``: all of them, or those matching
        every key given (a string is the exact value, a regex a pattern)."""
        if which is not None and not isinstance(which, dict):
            raise BuiltinError(
                "TypeError",
                "clear_cookies() takes an options object {name, domain, path} to choose the "
                f"cookies, got {type_name(which)}",
            )
        given: dict[str, Any] = {}
        for key, value in (which or {}).items():
            if key not in _CLEAR_KEYS:
                raise BuiltinError(
                    "TypeError",
                    f"clear_cookies() has no option '{key}'{did_you_mean(key, _CLEAR_KEYS)} "
                    "(its options: name, domain, path)",
                )
            if isinstance(value, RegexValue):
                given[key] = to_pattern(value)
            elif isinstance(value, str):
                given[key] = value
            else:
                raise BuiltinError(
                    "TypeError",
                    f"clear_cookies() option {key}: {render(value)} is not valid: a string or "
                    "a regex",
                )
        self.calls.run("clear_cookies", self.context.clear_cookies(**given))
        return None

    def save_storage_state(self, name: Value) -> Value:
        """``context.storageState({path})``: the cookies and local storage of the
        context, as JSON, into a project file (0600), every value of it a secret of the
        run from now on."""
        fn = "save_storage_state"
        path = project_path(fn, self.root, name, "paths")
        if path.is_dir():
            raise BuiltinError("TypeError", f"{fn}(): {name} is a folder; give a file's path")
        state: dict[str, Any] = dict(self.calls.run(fn, self.context.storage_state()))
        for cookie in state.get("cookies", []):
            self.add_secret(str(cookie.get("value", "")))
        for origin in state.get("origins", []):
            for item in origin.get("localStorage", []):
                value = str(item.get("value", ""))
                if len(value) >= MIN_STORAGE_SECRET:
                    self.add_secret(value)
        data = (json.dumps(state, indent=2, ensure_ascii=False) + "\n").encode()
        try:
            _write_private(path, data, str(name))
        except OSError as err:
            raise BuiltinError("Error", f"{fn}(): {err.strerror or err}") from None
        return None

    def set_viewport(self, width: Value, height: Value) -> Value:
        """``page.setViewportSize({width, height})``: CSS pixels, whole, 1 to 16384."""
        size: ViewportSize = {"width": _pixels("width", width), "height": _pixels("height", height)}
        self.calls.run("set_viewport", self.calls.page.set_viewport_size(size))
        return None

    def _url(self, fn: str, value: Value, what: str) -> str:
        """A URL, a relative one joined to baseURL."""
        if not isinstance(value, str) or not value:
            raise BuiltinError("TypeError", f"{fn}() needs {what}, got {type_name(value)}")
        if _SCHEME.match(value):
            return value
        if not self.calls.base_url:
            raise BuiltinError(
                "TypeError",
                f"{fn}(): {value!r} is a relative URL and no baseURL is set: give the whole "
                "URL (http://...)",
            )
        return urljoin(self.calls.base_url, value)

    def _cookie(self, cookie: Value) -> Any:
        """One cookie of ``add_cookies``, checked, as Playwright takes it."""
        if not isinstance(cookie, dict):
            raise BuiltinError(
                "TypeError",
                f"add_cookies() needs an array of cookie objects, got {type_name(cookie)} in it",
            )
        for key in cookie:
            if key not in _COOKIE_KEYS:
                raise BuiltinError(
                    "TypeError",
                    f"add_cookies(): a cookie has no key '{key}'{did_you_mean(key, _COOKIE_KEYS)}"
                    f" (its keys: {', '.join(_COOKIE_KEYS)})",
                )
        name, value = cookie.get("name"), cookie.get("value")
        if not isinstance(name, str) or not name or not isinstance(value, str):
            raise BuiltinError(
                "TypeError",
                "add_cookies(): each cookie needs a name and a value, both strings, got "
                f"{render(cookie)}",
            )
        param: dict[str, Any] = {"name": name, "value": value}
        param.update(self._cookie_place(name, cookie))
        for key, check in _COOKIE_OPTIONS.items():
            if cookie.get(key) is not None:
                param[key] = check(name, cookie[key])
        return param  # Playwright's SetCookieParam (not exported), checked above

    def _cookie_place(self, name: str, cookie: dict[str, Value]) -> dict[str, str]:
        """Where a cookie goes: its ``url``; else its ``domain`` and ``path`` (``/``);
        else the page's URL."""
        url, domain, path = cookie.get("url"), cookie.get("domain"), cookie.get("path")
        for key, given in (("domain", domain), ("path", path)):
            if given is not None and not isinstance(given, str):
                raise BuiltinError(
                    "TypeError",
                    f"add_cookies(): the {key} of cookie '{name}' must be a string, got "
                    f"{type_name(given)}",
                )
        if url is not None:
            if domain is not None or path is not None:
                raise BuiltinError(
                    "TypeError",
                    f"add_cookies(): cookie '{name}' has a url and a domain or path: give "
                    "one or the other (the url sets both)",
                )
            return {"url": self._url("add_cookies", url, "a cookie's url as a URL")}
        if isinstance(domain, str):
            return {"domain": domain, "path": path if isinstance(path, str) else "/"}
        page_url = self.calls.page.url
        if urlsplit(page_url).scheme not in ("http", "https"):
            raise BuiltinError(
                "TypeError",
                f"add_cookies(): cookie '{name}' has neither url nor domain and the page is "
                f"at {page_url}: give it a url, or goto() a page of the site first",
            )
        return {"url": page_url}


def _expires(name: str, value: Value) -> float:
    if isinstance(value, float) and (value == -1 or 0 <= value < 2**53):
        return value
    raise BuiltinError(
        "TypeError",
        f"add_cookies(): the expires of cookie '{name}' must be seconds since 1970 (or -1 "
        f"for a session cookie), got {render(value)}",
    )


def _flag(key: str) -> Callable[[str, Value], bool]:
    def check(name: str, value: Value) -> bool:
        if not isinstance(value, bool):
            raise BuiltinError(
                "TypeError",
                f"add_cookies(): the {key} of cookie '{name}' must be true or false, got "
                f"{render(value)}",
            )
        return value

    return check


def _same_site(name: str, value: Value) -> str:
    if value not in _SAME_SITE:
        hint = did_you_mean(value, _SAME_SITE) if isinstance(value, str) else ""
        raise BuiltinError(
            "TypeError",
            f'add_cookies(): the sameSite of cookie \'{name}\' must be "Strict", "Lax" or '
            f'"None", got {render(value)}{hint}',
        )
    assert isinstance(value, str)
    return value


_COOKIE_OPTIONS: dict[str, Callable[[str, Value], object]] = {
    "expires": _expires,
    "httpOnly": _flag("httpOnly"),
    "secure": _flag("secure"),
    "sameSite": _same_site,
}


def _pixels(key: str, value: Value) -> int:
    if not isinstance(value, float) or not value.is_integer() or not 0 < value <= MAX_VIEWPORT_PX:
        raise BuiltinError(
            "TypeError",
            f"set_viewport() {key}: {render(value)} is not valid: a whole number of CSS "
            f"pixels from 1 to {MAX_VIEWPORT_PX}",
        )
    return int(value)


def _write_private(path: Path, data: bytes, shown: str) -> None:
    """``data`` into ``path``, atomically, the file 0600 (:func:`atomic_write` keeps the
    mode of the file it replaces, so the file is made, or narrowed, to 0600 first)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, STATE_FILE_MODE))
    os.chmod(path, STATE_FILE_MODE)
    atomic_write(path, data, display=shown)
