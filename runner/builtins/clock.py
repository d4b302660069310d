"""The page's clock: fixed time, timers run forward (Playwright's ``page.clock``).

A scenario that checks "session expires in 5 minutes", a countdown or a date shown on
the page cannot wait for real time, nor depend on the day it runs. Playwright's clock
replaces the page's ``Date``, timers and animation frames with ones a test drives; these
built-ins are its calls, one each: ``clock_install``, ``clock_set_fixed_time``,
``clock_set_system_time``, ``clock_run_for``, ``clock_fast_forward``, ``clock_pause_at``,
``clock_resume``.

A time is epoch milliseconds or ISO 8601 text, read here so a bad one is one sentence at
the call instead of Playwright's ``Invalid date``. Text with an offset (``Z``,
``+02:00``) and a bare date (UTC midnight, as JavaScript reads it) are exact; a date and
time without an offset is the page's local time (its ``timezoneId``), as the page's own
``new Date(y, m, d, h, mi)`` reads it, not the runner machine's: what the page then shows
is what the scenario wrote.
"""

from __future__ import annotations

import math
import re
from collections.abc import Awaitable, Callable
from datetime import UTC, date, datetime

from playwright.async_api import Page

from dsl.errors import BuiltinError
from dsl.values import Value, render, type_name
from runner.builtins.page_calls import PageCalls

__all__ = ["MAX_TIME_MS", "Clock"]

MAX_TIME_MS = 8.64e15
"""JavaScript's dates end 10^8 days either side of 1970."""
_TICKS = re.compile(r"(?:\d\d:){0,2}\d\d?")
"""Playwright's tick text: ``ss``, ``mm:ss`` or ``hh:mm:ss`` (each part two digits)."""
_LOCAL_TIME_JS = "([y, mo, d, h, mi, s, ms]) => new Date(y, mo - 1, d, h, mi, s, ms).getTime()"
_TIME_WANTED = (
    'epoch milliseconds or ISO 8601 text such as "2024-02-02T08:00:00Z" '
    '(without an offset, the page\'s local time; a bare "2024-02-02", UTC midnight)'
)


class Clock:
    """The clock built-ins of one run's page (the context's clock: every page of it)."""

    def __init__(self, calls: PageCalls) -> None:
        self.calls = calls

    def builtins(self) -> dict[str, Callable[..., Value]]:
        return {
            "clock_install": self.install,
            "clock_set_fixed_time": self._at("clock_set_fixed_time", "set_fixed_time"),
            "clock_set_system_time": self._at("clock_set_system_time", "set_system_time"),
            "clock_pause_at": self._at("clock_pause_at", "pause_at"),
            "clock_run_for": self._ticks("clock_run_for", "run_for"),
            "clock_fast_forward": self._ticks("clock_fast_forward", "fast_forward"),
            "clock_resume": lambda: self._call("clock_resume", lambda page: page.clock.resume()),
        }

    def install(self, options: Value = None) -> Value:
        """``clock.install({time}?)``: fake timers from now on, starting at ``time`` (the
        real now when not given); call it before the page's scripts start timers."""
        if options is not None and not isinstance(options, dict):
            raise BuiltinError(
                "TypeError",
                f"clock_install() takes an options object {{time}}, got {type_name(options)}",
            )
        for key in options or {}:
            if key != "time":
                raise BuiltinError(
                    "TypeError",
                    f"clock_install() has no option '{key}' (its only option: time, the "
                    "time the clock starts at)",
                )
        given = (options or {}).get("time")
        start = None if given is None else _seconds(self.time("clock_install", given))
        return self._call("clock_install", lambda page: page.clock.install(time=start))

    def time(self, fn: str, value: Value) -> float:
        """``value`` as epoch milliseconds (see the module docstring for text)."""
        if isinstance(value, float):
            if not math.isfinite(value) or abs(value) > MAX_TIME_MS:
                raise BuiltinError(
                    "TypeError",
                    f"{fn}() needs {_TIME_WANTED}, got {render(value)} (out of a date's range)",
                )
            return value
        if not isinstance(value, str):
            raise BuiltinError("TypeError", f"{fn}() needs {_TIME_WANTED}, got {type_name(value)}")
        text = value.strip()
        try:
            day = date.fromisoformat(text)
        except ValueError:
            pass
        else:
            return datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp() * 1000
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            raise BuiltinError(
                "TypeError", f"{fn}() needs {_TIME_WANTED}, got {render(value)}"
            ) from None
        if moment.tzinfo is not None:
            return moment.timestamp() * 1000
        parts = [moment.year, moment.month, moment.day, moment.hour, moment.minute]
        parts += [moment.second, moment.microsecond // 1000]
        local = self.calls.run(fn, self.calls.page.evaluate(_LOCAL_TIME_JS, parts))
        return float(local)

    def _at(self, fn: str, method: str) -> Callable[[Value], Value]:
        """A clock call that takes a time."""

        def call(value: Value) -> Value:
            at = _seconds(self.time(fn, value))
            return self._call(fn, lambda page: getattr(page.clock, method)(at))

        return call

    def _ticks(self, fn: str, method: str) -> Callable[[Value], Value]:
        """A clock call that takes a duration."""

        def call(value: Value) -> Value:
            ms = _milliseconds(fn, value)
            return self._call(fn, lambda page: getattr(page.clock, method)(ms))

        return call

    def _call(self, fn: str, call: Callable[[Page], Awaitable[None]]) -> Value:
        self.calls.run(fn, call(self.calls.page))
        return None


def _seconds(ms: float) -> float:
    """Epoch milliseconds as Playwright for Python takes a time: seconds, which it sends
    as ``int(seconds * 1000)``; so the seconds whose product is exactly the whole
    milliseconds (a JavaScript date holds whole ones), which ``ms / 1000`` is not always
    (1700000000123 / 1000 * 1000 is 1700000000122.9998)."""
    whole = math.floor(ms)
    seconds = whole / 1000
    while int(seconds * 1000) < whole:
        seconds = math.nextafter(seconds, math.inf)
    while int(seconds * 1000) > whole:
        seconds = math.nextafter(seconds, -math.inf)
    return seconds


def _milliseconds(fn: str, value: Value) -> int:
    """A duration: milliseconds (rounded up to whole ones) or Playwright's tick text
    (``"30"`` seconds, ``"01:30"``, ``"02:00:00"``)."""
    if isinstance(value, float) and math.isfinite(value) and value >= 0:
        return math.ceil(value)
    if isinstance(value, str) and _TICKS.fullmatch(value):
        parts = [int(part) for part in value.split(":")]
        if all(part < 60 for part in parts):
            seconds = 0
            for part in parts:
                seconds = seconds * 60 + part
            return seconds * 1000
    shown = render(value) if isinstance(value, str | float) else type_name(value)
    raise BuiltinError(
        "TypeError",
        f'{fn}() needs milliseconds, 0 or more, or a duration such as "01:30" (mm:ss) or '
        f'"02:00:00" (hh:mm:ss), got {shown}',
    )
