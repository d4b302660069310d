"""The network in a scenario: routes that mock, abort or record the page's requests,
waiting for the exchanges they matched, and API requests sharing the page's cookies.

``route(matcher, response?)`` is Playwright's ``context.route``: on the page's
*context*, so the requests of every page of the run are caught (a popup's too), for
the rest of the scenario or until ``unroute(handle)``. Its handle is a host value
(:class:`RouteHandle`, rendered ``<Route "**/api/items">``), as a Locator is: it
cannot be forged from data, and a wrong argument says what it takes.

Each route keeps a queue of its finished exchanges from the moment it is registered,
and ``wait_for_response(handle)`` takes the oldest one not yet taken. A Playwright Test
suite must start ``page.waitForResponse`` before the click that sends the request, or
miss it; here the click may come first (a scenario is one statement at a time) and the
wait still sees its exchange: nothing races.

The route's handler runs on the browser's loop, not on the scenario's thread, so the
page never waits on the scenario (paused in the debugger, say). It answers at once,
writes one line to the run's output (``route: GET http://…/api/items → 200
(mocked)``), and marks the request for the failure bundle's ``network.json``
(``PageRecorder.mark_routed`` of :mod:`runner.browser.bundle`).

``request(method, url, options?)`` is Playwright's ``page.request.fetch``: an
``APIRequestContext`` sharing the cookies of the page's context, so a login through
the API logs the page in and the page's session reaches the API (a ported suite sets
its data up that way). A status of 4xx or 5xx is an answer, not an error (``ok`` says
it); a request that reaches no server is a ``NetworkError`` naming the URL, as a page
that cannot load is a ``NavigationError``.

What the scenario gets back is plain values with one shape for both (``status``,
``ok``, ``headers``, ``text``, ``json``), bounded as ``download`` bounds its text: a
body over 1 MB has ``text: null``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urljoin

from playwright.async_api import APIResponse, BrowserContext, Request, Response, Route
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from dsl.errors import BuiltinError
from dsl.values import (
    CircularStructure,
    HostValue,
    RegexValue,
    Value,
    format_number,
    from_json_data,
    render,
    to_json_data,
    type_name,
)
from runner.browser.bundle import Routed
from runner.builtins.locators import to_pattern
from runner.builtins.page_calls import PageCalls, first_line, string_arg, timeout_option
from runner.text import did_you_mean

__all__ = [
    "MAX_BODY_BYTES",
    "MAX_QUEUED",
    "METHODS",
    "REQUEST_OPTIONS",
    "RESPONSE_KEYS",
    "Mock",
    "Network",
    "RouteHandle",
    "parse_answer",
]

MAX_BODY_BYTES = 1024 * 1024
"""A body larger than this (1 MB) has ``text: null`` and ``json: null``."""
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")
REQUEST_OPTIONS = ("headers", "params", "data", "json", "form", "timeout")
_MAX_SHOWN_URL = 200
_API_NAME = re.compile(r"^[A-Z][A-Za-z]*\.[a-z][A-Za-z]*: ")
"""Playwright's ``APIRequestContext.fetch: `` before its message: an API the scenario
never named."""
RESPONSE_KEYS = ("status", "headers", "contentType", "body", "json")
MAX_QUEUED = 100
"""Exchanges a route keeps for ``wait_for_response`` (the oldest go first): a route on
``**/*`` that nobody waits on must not hold every body of the run."""
ABORTED = "aborted by route()"
"""An aborted exchange's ``error``."""
_SCHEME = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*:")
_RESPONSE_TAKES = '{status, headers, contentType, body, json} or "abort"'

UrlMatch = str | re.Pattern[str] | Callable[[str], bool]
"""What Playwright's ``context.route`` matches URLs with."""


# --- values and bodies -------------------------------------------------------------------


def _said(value: Value) -> str:
    """A wrong argument as a message shows it: a short value itself, else its type."""
    if (isinstance(value, str) and len(value) <= 60) or isinstance(value, float | int | bool):
        return render(value)
    return "null" if value is None else type_name(value)


def _shown_url(url: str) -> str:
    """A URL for one line of output: cut when long (a ``data:`` URL)."""
    return url if len(url) <= _MAX_SHOWN_URL else url[: _MAX_SHOWN_URL - 1] + "…"


def _body_text(body: bytes | None) -> str | None:
    """The body as text when it is UTF-8 of at most :data:`MAX_BODY_BYTES`."""
    if body is None or len(body) > MAX_BODY_BYTES:
        return None
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _json_of(text: str | None) -> Value:
    """The JSON value of ``text`` as scenario values (every number a float), or None
    when it is none or not JSON (``NaN`` included, as ``JSON.parse`` refuses it)."""
    if text is None:
        return None
    try:
        return from_json_data(json.loads(text, parse_int=float, parse_constant=_no_constant))
    except (ValueError, RecursionError):  # JSONDecodeError is a ValueError
        return None


def _no_constant(name: str) -> object:
    raise ValueError(name)


def _json_text(where: str, value: Value) -> str:
    """``value`` as JSON text, as ``json(value)`` writes it (``3``, not ``3.0``)."""
    try:
        return json.dumps(to_json_data(value), ensure_ascii=False, separators=(",", ":"))
    except CircularStructure:
        raise BuiltinError(
            "TypeError", f"{where}: an array or object that contains itself is not JSON"
        ) from None


def _string_map(where: str, value: Value) -> dict[str, str]:
    """An object whose values are strings (headers), as a dict; none for None."""
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise BuiltinError(
            "TypeError",
            f'{where} takes an object of strings ({{"x-token": "abc"}}), got {_said(value)}',
        )
    return {key: item for key, item in value.items() if isinstance(item, str)}


async def _bounded_body(response: Response | APIResponse) -> bytes | None:
    """The body of ``response``, unless it says it is over :data:`MAX_BODY_BYTES`;
    None when the browser has none to give (a redirect, a body it dropped)."""
    length = response.headers.get("content-length", "")
    if length.isdigit() and int(length) > MAX_BODY_BYTES:
        return None
    try:
        return await response.body()
    except PlaywrightError:
        return None


# --- routes -------------------------------------------------------------------------------


class RouteHandle(HostValue):
    """What ``route()`` returns: ``h.matcher`` (as written) and ``h.id`` (1, 2, ... in
    the order the run registered its routes)."""

    type_name = "Route"

    def __init__(self, number: int, matcher: str | RegexValue) -> None:
        self.number = number
        self.matcher = matcher

    def render(self) -> str:
        return f"<Route {render(self.matcher)}>"

    def get_property(self, name: str) -> Value:
        if name == "matcher":
            return self.matcher
        if name == "id":
            return float(self.number)
        raise KeyError(name)


@dataclass(frozen=True)
class Mock:
    """A response ``route()`` fulfils with (Playwright's ``route.fulfill``)."""

    status: int
    headers: dict[str, str]
    content_type: str | None
    body: str

    def fulfil(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "headers": self.headers,
            "content_type": self.content_type,
            "body": self.body,
        }

    def sent_headers(self) -> dict[str, str]:
        """The headers the page gets, as Playwright sends them: names in lower case."""
        sent = {name.lower(): value for name, value in self.headers.items()}
        if self.content_type is not None:
            sent["content-type"] = self.content_type
        return sent


Answer = Mock | Literal["abort"] | None
"""How a route answers: a mock, an abort, or None (let through and recorded)."""


def parse_answer(response: Value) -> Answer:
    """``route()``'s second argument: ``{status, headers, contentType, body, json}``,
    ``"abort"``, or nothing. ``json`` is sent as ``json(x)`` writes it, with
    ``contentType`` ``application/json`` unless given (as ``route.fulfill({json})``);
    a ``null`` key is one not given."""
    if response is None:
        return None
    if response == "abort":
        return "abort"
    if not isinstance(response, dict):
        raise BuiltinError(
            "TypeError",
            f"route() takes a response object {_RESPONSE_TAKES} second, got {_said(response)}",
        )
    for key in response:
        if key not in RESPONSE_KEYS:
            raise BuiltinError(
                "TypeError",
                f"route() response has no key '{key}'{did_you_mean(key, RESPONSE_KEYS)} "
                f"(its keys: {', '.join(RESPONSE_KEYS)})",
            )
    given = {key: value for key, value in response.items() if value is not None}
    if "body" in given and "json" in given:
        raise BuiltinError("TypeError", "route() response takes body or json, not both")
    headers = _string_map("route() response headers", given.get("headers"))
    content_type = given.get("contentType")
    if content_type is not None and not isinstance(content_type, str):
        raise BuiltinError(
            "TypeError", f"route() response contentType takes a string, got {_said(content_type)}"
        )
    body = given.get("body", "")
    if not isinstance(body, str):
        raise BuiltinError(
            "TypeError",
            f"route() response body takes a string (json takes data), got {_said(body)}",
        )
    if "json" in given:
        body = _json_text("route() response json", given["json"])
        content_type = content_type or "application/json"
    return Mock(_status(given.get("status", 200.0)), headers, content_type, body)


def _status(value: Value) -> int:
    if (
        isinstance(value, float | int)
        and not isinstance(value, bool)
        and float(value).is_integer()  # not NaN nor Infinity either
        and 100 <= value <= 599
    ):
        return int(value)
    raise BuiltinError(
        "TypeError",
        f"route() response status takes a whole number from 100 to 599, got {_said(value)}",
    )


@dataclass(eq=False)
class _Route:
    """One registered route: how it answers and the exchanges not yet waited for (read
    and written on the browser's loop only)."""

    handle: RouteHandle
    url: UrlMatch
    shown: str
    answer: Answer
    handler: Callable[[Route], Awaitable[None]] | None = None
    context: BrowserContext | None = None
    queue: deque[dict[str, Value]] = field(default_factory=deque)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)
    matched: int = 0
    removed: bool = False


class Network:
    """``route``, ``unroute``, ``wait_for_response`` and ``request`` for one run;
    ``log`` writes a line to the run's output."""

    def __init__(
        self,
        calls: PageCalls,
        log: Callable[[str], None],
        mark_routed: Callable[[Request, Routed], None] = lambda request, how: None,
    ) -> None:
        """``mark_routed``: tells the run's recorder how a route answered a request (its
        failure bundle's ``network.json`` says so)."""
        self.calls = calls
        self.log = log
        self.mark_routed = mark_routed
        self._routes: dict[RouteHandle, _Route] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        """Recordings waiting for their response (kept: the loop holds tasks weakly)."""

    def builtins(self) -> dict[str, Callable[..., Value]]:
        return {
            "route": self.route,
            "unroute": self.unroute,
            "wait_for_response": self.wait_for_response,
            "request": self.request,
        }

    def route(self, matcher: Value, response: Value = None) -> Value:
        """Playwright's ``context.route(url, handler)``: ``response`` fulfils, ``"abort"``
        aborts, nothing lets the request through (``route.fallback()``) and records it."""
        url = self._url_match(matcher)
        assert isinstance(matcher, str | RegexValue)
        answer = parse_answer(response)
        handle = RouteHandle(len(self._routes) + 1, matcher)
        shown = render(matcher)
        if isinstance(url, str) and url != matcher:
            shown += f" ({url})"
        state = _Route(handle, url, shown, answer)

        async def handler(route: Route) -> None:
            await self._answer(state, route)

        async def register() -> None:
            state.handler = handler
            context = self.calls.page.context
            try:
                await context.route(url, handler)
            except PlaywrightError as err:
                message = first_line(err)
                if "Invalid glob pattern" not in message:
                    raise
                why = message.rsplit(": ", 1)[-1]
                raise BuiltinError(
                    "TypeError", f"route(): {render(matcher)} is not a valid URL glob: {why}"
                ) from None
            state.context = context

        self.calls.run("route", register())
        self._routes[handle] = state
        return handle

    def _url_match(self, matcher: Value) -> UrlMatch:
        """A glob (a relative one joined to ``baseURL``, as ``page.route`` does) or a
        regex, searched in the URL as JavaScript would."""
        if isinstance(matcher, RegexValue):
            pattern = to_pattern(matcher)
            if pattern.pattern != matcher.source:
                # JavaScript Python cannot compile: matched here with the translation,
                # every request passing through the route (Playwright cannot send it).
                return lambda url: matcher.pattern.search(url) is not None
            return pattern
        if not isinstance(matcher, str) or not matcher:
            raise BuiltinError(
                "TypeError",
                'route() needs a URL glob (a string such as "**/api/items") or a regex '
                f"first, got {_said(matcher)}",
            )
        if matcher.startswith("*") or _SCHEME.match(matcher):
            return matcher
        if not self.calls.base_url:
            raise BuiltinError(
                "TypeError",
                f"route(): {render(matcher)} is a relative URL and no baseURL is set: set "
                'baseURL in unotest.config.yaml, give the whole URL, or start it with "**/"',
            )
        return urljoin(self.calls.base_url, matcher)

    def unroute(self, handle: Value) -> Value:
        """Playwright's ``context.unroute(url, handler)``: this route only. Its exchanges
        not yet waited for stay; a route removed already is left as it is."""
        state = self._state_of("unroute", handle)
        if state.removed:
            return None

        async def remove() -> None:
            state.removed = True
            state.arrived.set()  # nothing waits now, but a wait must see it at once
            if state.context is not None and state.handler is not None:
                with contextlib.suppress(PlaywrightError):  # the context is gone: so is it
                    await state.context.unroute(state.url, state.handler)

        self.calls.run("unroute", remove())
        return None

    def wait_for_response(self, handle: Value, options: Value = None) -> Value:
        """The route's oldest exchange not yet waited for, waiting up to the action
        timeout (or the ``{timeout}`` given): ``{url, method, status, ok, headers,
        text, json, error, request: {headers, text, json}}``."""
        state = self._state_of("wait_for_response", handle)
        own = timeout_option("wait_for_response", options, "timeout.action")
        timeout = own if own is not None else self.calls.timeouts.action
        return self.calls.run("wait_for_response", self._next(state, timeout))

    async def _next(self, state: _Route, timeout: float) -> Value:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout / 1000
        while not state.queue:
            if state.removed:
                raise BuiltinError(
                    "Error",
                    f"wait_for_response: the route {state.shown} was removed by unroute() "
                    "and has no exchange left to wait for",
                )
            state.arrived.clear()
            try:
                await asyncio.wait_for(state.arrived.wait(), deadline - loop.time())
            except TimeoutError:
                before = (
                    f" (it matched {state.matched} before, each waited for already)"
                    if state.matched
                    else ""
                )
                raise BuiltinError(
                    "TimeoutError",
                    f"wait_for_response: no request matched the route {state.shown} "
                    f"within {int(timeout)} ms{before}",
                ) from None
        return state.queue.popleft()

    def _state_of(self, fn: str, handle: Value) -> _Route:
        state = self._routes.get(handle) if isinstance(handle, RouteHandle) else None
        if state is None:
            raise BuiltinError(
                "TypeError",
                f"{fn}() needs a route handle (what route() returns), got {_said(handle)}",
            )
        return state

    # --- request ---------------------------------------------------------------------------

    def request(self, method: Value, url: Value, options: Value = None) -> Value:
        """Playwright's ``page.request.fetch(url, {method, headers, params, data, form,
        timeout})``, within ``timeout.navigation`` unless the call gives its own."""
        verb = _method(method)
        target = self._url(url)
        fetch, own = _fetch_options(options)
        timeout = own if own is not None else self.calls.timeouts.navigation
        return self.calls.run("request", self._send(verb, target, fetch, timeout))

    def _url(self, value: Value) -> str:
        url = self.calls.url(string_arg("request", value, "a URL second"))
        if not _SCHEME.match(url):
            raise BuiltinError(
                "TypeError",
                f"request(): {render(url)} is a relative URL and no baseURL is set: set "
                "baseURL in unotest.config.yaml, or give the whole URL (http://...)",
            )
        return url

    async def _send(self, verb: str, url: str, fetch: dict[str, Any], timeout: float) -> Value:
        shown = f"{verb} {_shown_url(url)}"
        try:
            response = await self.calls.page.request.fetch(
                url, method=verb, timeout=timeout, fail_on_status_code=False, **fetch
            )
        except PlaywrightTimeoutError:
            raise BuiltinError(
                "TimeoutError", f"request: {shown} got no answer within {int(timeout)} ms"
            ) from None
        except PlaywrightError as err:
            why = _API_NAME.sub("", first_line(err))
            raise BuiltinError("NetworkError", f"request: {shown} failed: {why}") from None
        try:
            body = await _bounded_body(response)
        finally:
            with contextlib.suppress(PlaywrightError):
                await response.dispose()
        text = _body_text(body)
        return {
            "status": float(response.status),
            "ok": response.ok,
            "headers": dict(response.headers),
            "text": text,
            "json": _json_of(text),
        }

    # --- on the browser's loop ---------------------------------------------------------

    async def _answer(self, state: _Route, route: Route) -> None:
        """The request ``route`` caught, answered as the route says."""
        request = route.request
        answer = state.answer
        try:
            if state.removed:  # unroute() came while this request was on its way
                await route.fallback()
            elif answer is None:
                self.mark_routed(request, "recorded")
                await route.fallback()
                self._later(self._record(state, request))
            elif answer == "abort":
                self.mark_routed(request, "aborted")
                await route.abort()
                self._note(state, request, "aborted", _exchange(request, 0, {}, None, ABORTED))
            else:
                self.mark_routed(request, "fulfilled")
                await route.fulfill(**answer.fulfil())
                exchange = _exchange(
                    request, answer.status, answer.sent_headers(), answer.body.encode(), None
                )
                self._note(state, request, f"{answer.status} (mocked)", exchange)
        except PlaywrightError:
            return  # the page or its context closed meanwhile: nobody gets an answer

    async def _record(self, state: _Route, request: Request) -> None:
        """A request let through, once its answer has come (body included)."""
        try:
            response = await request.response()
            if response is None:
                failure = request.failure or "failed"
                exchange = _exchange(request, 0, {}, None, failure)
                self._note(state, request, f"failed: {failure} (recorded)", exchange)
                return
            body = await _bounded_body(response)
        except PlaywrightError:
            return  # the context closed before the answer came
        exchange = _exchange(request, response.status, response.headers, body, None)
        self._note(state, request, f"{response.status} (recorded)", exchange)

    def _note(
        self, state: _Route, request: Request, outcome: str, exchange: dict[str, Value]
    ) -> None:
        """An exchange done: its line in the run's output, then the route's queue."""
        self.log(f"route: {request.method} {_shown_url(request.url)} → {outcome}")
        state.matched += 1
        state.queue.append(exchange)
        if len(state.queue) > MAX_QUEUED:
            state.queue.popleft()
        state.arrived.set()

    def _later(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


def _exchange(
    request: Request,
    status: int,
    headers: Mapping[str, str],
    body: bytes | None,
    error: str | None,
) -> dict[str, Value]:
    """One exchange as the scenario gets it. ``error``: why no response came (status 0,
    ``ok`` false): ``aborted by route()``, or the browser's ``net::ERR_…``."""
    text = _body_text(body)
    sent = _body_text(request.post_data_buffer)
    return {
        "url": request.url,
        "method": request.method,
        "status": float(status),
        "ok": error is None and 200 <= status <= 299,
        "headers": dict(headers),
        "text": text,
        "json": _json_of(text),
        "error": error,
        "request": {"headers": dict(request.headers), "text": sent, "json": _json_of(sent)},
    }


# --- request's arguments ---------------------------------------------------------------------


def _method(value: Value) -> str:
    verb = value.upper() if isinstance(value, str) else None
    if verb not in METHODS:
        listed = ", ".join(f'"{m}"' for m in METHODS[:-1]) + f' or "{METHODS[-1]}"'
        raise BuiltinError(
            "TypeError", f"request() takes a method first ({listed}), got {_said(value)}"
        )
    return verb


def _fetch_options(options: Value) -> tuple[dict[str, Any], float | None]:
    """``{headers, params, data, json, form, timeout}`` as ``fetch``'s keywords, and the
    call's own timeout (None: the config's). A ``null`` option is one not given."""
    if options is None:
        return {}, None
    if not isinstance(options, dict):
        raise BuiltinError(
            "TypeError",
            "request() takes an options object {headers, params, data, json, form, timeout} "
            f"last, got {_said(options)}",
        )
    for key in options:
        if key not in REQUEST_OPTIONS:
            raise BuiltinError(
                "TypeError",
                f"request() has no option '{key}'{did_you_mean(key, REQUEST_OPTIONS)} "
                f"(its options: {', '.join(REQUEST_OPTIONS)})",
            )
    given = {key: value for key, value in options.items() if value is not None}
    bodies = [key for key in ("data", "json", "form") if key in given]
    if len(bodies) > 1:
        raise BuiltinError(
            "TypeError", f"request() takes one body, data, json or form: not {' and '.join(bodies)}"
        )
    fetch: dict[str, Any] = {}
    headers = _string_map("request() option headers", given.get("headers"))
    for key in ("params", "form"):
        if key in given:
            fetch[key] = _fields(key, given[key])
    data = given.get("data", given.get("json"))
    if data is not None:
        if isinstance(data, str) and "data" in given:
            fetch["data"] = data  # sent as it is
        else:  # as Playwright sends an object given as data: JSON
            fetch["data"] = _json_text(f"request() option {bodies[0]}", data)
            if not any(name.lower() == "content-type" for name in headers):
                headers["content-type"] = "application/json"
    if headers:
        fetch["headers"] = headers
    own = None
    if "timeout" in given:
        own = timeout_option("request", {"timeout": given["timeout"]}, "timeout.navigation")
    return fetch, own


def _fields(key: str, value: Value) -> dict[str, str]:
    """``params`` or ``form``: an object of strings, numbers or booleans, as text."""
    if not isinstance(value, dict) or not all(
        isinstance(item, str | float | int | bool) for item in value.values()
    ):
        raise BuiltinError(
            "TypeError",
            f"request() option {key} takes an object of strings, numbers or booleans "
            f'({{page: 2, q: "shoes"}}), got {_said(value)}',
        )
    return {name: _field_text(item) for name, item in value.items()}


def _field_text(item: Value) -> str:
    """A field's value as a query string or a form writes it (``2``, ``true``)."""
    if isinstance(item, str):
        return item
    if isinstance(item, bool):
        return "true" if item else "false"
    assert isinstance(item, float | int)
    return format_number(float(item))
