"""Driving a page of Playwright's *sync* API (pytest-playwright's ``page``) with our
async built-ins.

The built-ins are coroutines on Playwright's async API, run on the loop that owns the
connection (runner/browser/bridge.py). A sync API page has such a loop too: the sync API keeps
an asyncio loop running in a "dispatcher" greenlet of the thread that started it, and
every sync call is a task on that loop. So a whole scenario can run as *one* such task
(:func:`run_on_page_loop`): while it waits, the loop runs, and the interpreter thread
reaches it through the same :class:`~runner.browser.bridge.LoopBridge` as in ``unotest e2e``.
The page is the same object; :func:`async_page` only gives it an async face.

This leans on three Playwright internals, all stable since 1.x and checked here so a
change shows up as one clear error, not a strange failure mid-scenario:

- ``_impl_obj``: the implementation object every API wrapper holds;
- ``_sync(awaitable)``: how the sync API runs a coroutine on its loop;
- the impl→API mappings: each flavour (sync, async) caches the API wrapper it made
  on the impl object under one shared attribute, so the first flavour to wrap an
  object would hand *its* wrapper to the other (an async ``page.context`` returning
  pytest-playwright's sync context, whose methods cannot run inside the loop).
  :func:`install_flavoured_mappings` makes each flavour return wrappers of its own.
"""

from __future__ import annotations

import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from playwright._impl import _async_base, _sync_base
from playwright._impl._impl_to_api_mapping import ImplToApiMapping
from playwright.async_api import Page as AsyncPage

from runner.errors import PlaywrightInternalsChanged

__all__ = [
    "PlaywrightInternalsChanged",
    "async_page",
    "install_flavoured_mappings",
    "run_on_page_loop",
]

T = TypeVar("T")

_install_lock = threading.Lock()


class _FlavouredMapping(ImplToApiMapping):
    """An impl→API mapping that never returns a wrapper of the other flavour."""

    _own_base: type = object
    _own_attr: str = ""

    def from_maybe_impl(self, obj: Any, visited: Any = None) -> Any:  # Playwright's signature
        result = super().from_maybe_impl(obj, visited)
        if result is obj or not isinstance(result, (_sync_base.SyncBase, _async_base.AsyncBase)):
            return result
        if isinstance(result, self._own_base):
            return result
        # The other flavour wrapped this object first: keep a wrapper of our own beside it.
        own = obj.__dict__.get(self._own_attr)
        if own is None:
            api_class = self._mapping[getattr(obj, "_api_impl_class", type(obj))]
            own = api_class(obj)
            setattr(obj, self._own_attr, own)
        return own


class _SyncMapping(_FlavouredMapping):
    _own_base = _sync_base.SyncBase
    _own_attr = "_unotest_sync_api_instance_"


class _AsyncMapping(_FlavouredMapping):
    _own_base = _async_base.AsyncBase
    _own_attr = "_unotest_async_api_instance_"


def install_flavoured_mappings() -> None:
    """Make both mappings flavour-aware (idempotent; a no-op for plain sync or async use,
    where every cached wrapper is already of the right flavour)."""
    with _install_lock:
        for module, flavoured in ((_sync_base, _SyncMapping), (_async_base, _AsyncMapping)):
            mapping = getattr(module, "mapping", None)
            if not isinstance(mapping, ImplToApiMapping):
                raise PlaywrightInternalsChanged(
                    f"playwright {module.__name__}.mapping is gone: this Playwright release "
                    "cannot run unotest scenarios on pytest-playwright's page"
                )
            if type(mapping) is ImplToApiMapping:
                mapping.__class__ = flavoured


def async_page(page: object) -> AsyncPage:
    """The async API face of a sync API page (the same page, the same browser)."""
    impl = getattr(page, "_impl_obj", None)
    if impl is None or not hasattr(page, "_sync"):
        raise PlaywrightInternalsChanged(
            f"{type(page).__name__} is not a Playwright sync API page (no _impl_obj/_sync): "
            "the unotest pytest plugin needs pytest-playwright's 'page'"
        )
    install_flavoured_mappings()
    wrapped = _async_base.mapping.from_impl(impl)
    assert isinstance(wrapped, AsyncPage)
    return wrapped


def run_on_page_loop(page: object, coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` as one task on the loop of ``page``'s sync Playwright, from the thread
    that owns it (the test's), returning its result."""
    run = getattr(page, "_sync", None)
    if run is None:
        coro.close()
        raise PlaywrightInternalsChanged("the sync API page has no _sync: Playwright changed")
    result: T = run(coro)
    return result
