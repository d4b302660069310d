"""A site with a sign-in form, for the tests of setup scenarios and ``storageState``.

``POST /login`` with ``user=alice`` sets an HttpOnly ``session`` cookie (a fresh token
each time) and sends the browser to ``/account``; ``/account?s=<scenario>`` greets the
signed-in user ("Welcome alice") or asks to sign in, and every visit is recorded with
whether the request carried a live session and its ``Accept-Language``, so a test sees
what the server saw. ``/prefs?s=<scenario>`` is a plain page for emulation checks.

Imported as ``from login_site import LoginSite`` (pytest puts ``tests/runner/`` on
``sys.path``, as for ``recording_site``).
"""

from __future__ import annotations

import contextlib
import http.cookies
import http.server
import secrets
import threading
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from net import serve_handler

LOGIN_PAGE = (
    "<!doctype html><title>Sign in</title><h1>Sign in</h1>"
    '<form method="post" action="/login"><label>User <input name="user"></label>'
    "<button>Sign in</button></form>"
)
WELCOME_PAGE = "<!doctype html><title>Account</title><h1>Welcome alice</h1>"
SIGN_IN_PAGE = "<!doctype html><title>Account</title><h1>Please sign in</h1>"
PREFS_PAGE = "<!doctype html><title>Prefs</title><h1>Prefs</h1>"


@dataclass(frozen=True)
class Visit:
    """One request the site answered: its path, the scenario named by ``s=``, whether
    it carried a live session, and its ``Accept-Language``."""

    path: str
    scenario: str
    signed_in: bool
    language: str


@dataclass
class LoginSite:
    url: str = ""
    tokens: set[str] = field(default_factory=set)
    visits: list[Visit] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def note(self, path: str, scenario: str, cookie: str, language: str) -> bool:
        jar = http.cookies.SimpleCookie()
        with contextlib.suppress(http.cookies.CookieError):
            jar.load(cookie)
        session = jar.get("session")
        with self.lock:
            signed_in = session is not None and session.value in self.tokens
            self.visits.append(Visit(path, scenario, signed_in, language))
        return signed_in

    def new_token(self) -> str:
        token = "tok-" + secrets.token_hex(12)
        with self.lock:
            self.tokens.add(token)
        return token

    def of(self, path: str) -> list[Visit]:
        with self.lock:
            return [visit for visit in self.visits if visit.path == path]


def _handler(site: LoginSite) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            url = urllib.parse.urlsplit(self.path)
            scenario = urllib.parse.parse_qs(url.query).get("s", [""])[0]
            cookie = self.headers.get("Cookie", "")
            language = self.headers.get("Accept-Language", "")
            signed_in = site.note(url.path, scenario, cookie, language)
            pages = {"/login": LOGIN_PAGE, "/prefs": PREFS_PAGE}
            page = WELCOME_PAGE if signed_in else SIGN_IN_PAGE
            self._answer(200, pages.get(url.path, page if url.path == "/account" else ""))

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0") or 0)
            form = urllib.parse.parse_qs(self.rfile.read(length).decode("utf-8", "replace"))
            site.note("POST /login", "", "", "")
            if self.path != "/login" or form.get("user") != ["alice"]:
                self._answer(403, SIGN_IN_PAGE)
                return
            token = site.new_token()
            self.send_response(303)
            self.send_header("Set-Cookie", f"session={token}; HttpOnly; Path=/; SameSite=Lax")
            self.send_header("Location", "/account?s=login")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def _answer(self, status: int, page: str) -> None:
            data = page.encode("utf-8")
            self.send_response(status if page else 404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@contextlib.contextmanager
def login_site() -> Iterator[LoginSite]:
    """The site served on 127.0.0.1 (a free port) until the block ends."""
    site = LoginSite()
    with serve_handler(_handler(site), "login-site") as url:
        site.url = url
        yield site
