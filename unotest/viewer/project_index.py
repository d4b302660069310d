"""The project index one viewer answers ``/api/scenarios``, ``/api/helpers``,
``/api/collections`` and ``/api/problems`` from, loaded once per generation of the
project's files rather than once per request.

At 10,000 scenarios a load costs seconds even with a :class:`LoadMemo` (a walk, a
``stat`` per file, the changed files parsed) and each answer's JSON about a tenth of a
second; the page asks for all four on every ``fs:*`` message. So the viewer keeps the
last index and each answer's bytes, and throws them away when the project changes:

- the viewer's file watcher (:class:`unotest.viewer.file_events.FileEvents`) calls
  :meth:`ViewerIndex.changed` for a burst touching scenarios, helpers, hooks or
  collections, *before* it publishes the ``fs:*`` message, so a page refetching on that
  message reads the new files;
- the viewer's own writes (``PUT /api/files/...``, the collection routes) call it at
  once: their client reads back what it wrote;
- a request in the same generation reuses what was kept (the very bytes).

Never stale: what was kept is trusted only while the watcher says its watch is in place
(:meth:`ViewerIndex.watching`); without it (an app built without ``routes_ws``, as some
tests and benches build it, or a watch that failed and is being restarted) every request
loads again, with the memo, so slower but correct. One load at a time: the handlers run
in the thread pool and the memo is not thread-safe, so one lock guards the memo and what
was kept. Memory stays flat: one index and its answers are kept, and the memo keeps only
what the latest load used.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from starlette.responses import JSONResponse

from dsl.checker import Diagnostic
from runner.project.index import LoadMemo, Project, ProjectIndex
from runner.project.root import problem_order

__all__ = ["ViewerIndex"]


@dataclass
class _Kept:
    """One loaded index, the generation it was loaded in, and the answers made from it."""

    generation: int
    index: ProjectIndex
    answers: dict[str, bytes] = field(default_factory=dict)
    problems: list[Diagnostic] | None = None
    """The static checker's problems with the rest, once asked (:meth:`ViewerIndex.problems`)."""


class ViewerIndex:
    """The index of one viewer's project (see the module's docstring)."""

    def __init__(self, root: Path) -> None:
        self.project = Project(root)
        self._memo = LoadMemo()
        self._loading = threading.Lock()
        """Held for a load and while an answer is made: guards the memo and ``_kept``."""
        self._state = threading.Lock()
        """Guards the generation and the watching flag (changed from the event loop)."""
        self._generation = 0
        self._watching = False
        self._kept: _Kept | None = None
        self.loads = 0
        """How many times the project was loaded (read by tests and ``bench/scale.py``)."""

    @property
    def generation(self) -> int:
        with self._state:
            return self._generation

    def changed(self) -> None:
        """A project file changed (or may have): the next answer loads again."""
        with self._state:
            self._generation += 1

    def watching(self, on: bool) -> None:
        """The watcher's watch is in place (``True``) or is not (``False``: stopped,
        failed, restarting). Either way what was kept may have missed a change. Once in
        place, the index is loaded ahead in a daemon thread, so the page's first
        requests find it warm."""
        with self._state:
            self._generation += 1
            self._watching = on
        if on:
            threading.Thread(target=self._load_ahead, name="viewer-index", daemon=True).start()

    def answer(self, route: str, make: Callable[[ProjectIndex], object]) -> bytes:
        """The JSON bytes of ``make(index)`` for ``route``: those kept in this generation,
        else made (and kept) from the index of this generation, loaded if need be. Bytes
        already kept are answered without waiting for a load or a check in progress."""
        kept = self._kept
        if kept is not None and self._trusted(kept):
            found = kept.answers.get(route)
            if found is not None:
                return found
        with self._loading:
            kept = self._current()
            known = kept.answers.get(route)
            if known is not None:
                return known
            made = bytes(JSONResponse(make(kept.index)).body)
            if self._trusted(kept):
                kept.answers[route] = made
            return made

    def problems(self, index: ProjectIndex) -> list[Diagnostic]:
        """Every problem of ``index``, the static checker's included, in the order
        ``ProjectIndex.load(check=True)`` gives them. Called from ``make`` of
        :meth:`answer` only (under its lock: the check uses the memo); kept with the
        index, so the check runs once per generation."""
        kept = self._kept
        mine = kept is not None and kept.index is index
        if mine and kept is not None and kept.problems is not None:
            return kept.problems
        found = sorted([*index.errors, *index.check_programs()], key=problem_order)
        if mine and kept is not None:
            kept.problems = found
        return found

    def _current(self) -> _Kept:
        kept = self._kept
        if kept is not None and self._trusted(kept):
            return kept
        generation = self.generation  # read before loading: a change during it counts
        index = ProjectIndex.load(self.project, check=False, memo=self._memo)
        self.loads += 1
        self._kept = _Kept(generation, index)
        return self._kept

    def _trusted(self, kept: _Kept) -> bool:
        with self._state:
            return self._watching and kept.generation == self._generation

    def _load_ahead(self) -> None:
        try:
            with self._loading:
                self.problems(self._current().index)
        except Exception:  # a request loading later says what fails
            return
