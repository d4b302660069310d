"""The writer of one run directory, ``unotest/.runs/<runId>/``.

Everything here is about what a reader may see at any instant, crash included:

* ``manifest.json`` is written first, atomically (temp file in the same folder,
  fsync, ``os.replace``), so a directory either has a whole manifest or none;
* ``steps.jsonl`` gets one ``os.write`` per event on an ``O_APPEND`` descriptor,
  short writes completed, so every ``\\n``-terminated line is a whole JSON object;
  a write that fails half-way is cut back off the file (or at least ended);
* ``runtime.json`` is replaced atomically, never rewritten in place;
* ``heartbeat`` is touched by a daemon thread, so it keeps beating while the
  interpreter thread waits at a pause or inside a long browser action;
* a run's ``run:started`` and ``run:finished`` lines are followed by its lines in the
  run index (:mod:`runner.store.run_index`), which listings read instead of the
  directory when they can.

The manifest also records ``pid``, ``pidStartTime`` and ``hostname`` (additive
fields) so that a reader can tell a dead runner at once instead of waiting for the
heartbeat to go stale (:mod:`runner.processes`). Whole files and lines are
written by :mod:`runner.files`.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

from runner import events, protocol
from runner.errors import RunWriteError
from runner.events import StepsLine
from runner.files import FILE_MODE, append_line, atomic_write, dumps_line, write_error
from runner.processes import own_start_time
from runner.store.run_index import as_outcome, note_finished, note_started

__all__ = ["RunDirectory", "RunWriteError", "capture_output_into", "end_abandoned_run"]

_MAX_CREATE_ATTEMPTS = 100


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


# ---------------------------------------------------------------------------
# The run directory
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class IndexedAs:
    """What a run's start line in the run index says of it, besides its times."""

    kind: Literal["scenario", "collection"]
    ref: str
    parent: str | None
    restart_of: str | None


class RunDirectory:
    """One ``unotest/.runs/<runId>/``; create it with :meth:`create`."""

    run_id: str
    path: Path

    def __init__(
        self,
        run_id: str,
        path: Path,
        display: str,
        mask: Callable[[object], object],
        now_ms: Callable[[], int],
        steps_fd: int,
    ) -> None:
        self.run_id = run_id
        self.path = path
        self._display = display
        self._mask = mask
        self._now_ms = now_ms
        self._steps_fd: int | None = steps_fd
        self._append_lock = threading.Lock()
        self._runtime_lock = threading.Lock()
        self._heartbeat_lock = threading.Lock()
        self._heartbeat_stop: threading.Event | None = None
        self._heartbeat_thread: threading.Thread | None = None
        self._unterminated = False  # a failed write left a line without its "\n"
        self._indexed: IndexedAs | None = None  # what the run index says of it

    # --- creation -------------------------------------------------------------

    @classmethod
    def create(
        cls,
        runs_dir: Path,
        kind: Literal["scenario", "collection"],
        ref: str,
        *,
        parent_run_id: str | None = None,
        restart_of: str | None = None,
        mask: Callable[[object], object] = lambda d: d,
        now_ms: Callable[[], int] = _now_ms,
        browser_endpoint: str | None = None,
    ) -> RunDirectory:
        """Make a fresh run directory: manifest first, then the empty files.

        ``os.mkdir`` without ``exist_ok`` claims the directory, and a clash (same
        ref, same millisecond, same random suffix) retries with a new id, so two
        runs never share a directory. ``restart_of`` names the run this one restarts
        (the manifest's additive ``restartOf``), ``browser_endpoint`` the Playwright
        server its browser comes from (``browserEndpoint``, shown without credentials).
        """
        runs_dir = Path(runs_dir)
        base = _display_base(runs_dir)
        started_at = now_ms()
        run_id, path = _claim_directory(runs_dir, base, ref, started_at)
        display = f"{base}/{run_id}"
        try:
            manifest = _manifest(kind, ref, parent_run_id, started_at)
            if restart_of is not None:
                manifest["restartOf"] = restart_of
            if browser_endpoint is not None:
                manifest["browserEndpoint"] = browser_endpoint
            atomic_write(
                path / protocol.RUN_MANIFEST_FILE,
                json.dumps(manifest, ensure_ascii=True, allow_nan=False, indent=2).encode("ascii")
                + b"\n",
                display=f"{display}/{protocol.RUN_MANIFEST_FILE}",
                fsync=True,
            )
            steps_fd = _open_append(path / protocol.STEPS_FILE, display)
            try:
                for name in (protocol.HEARTBEAT_FILE, protocol.COMMANDS_FILE):
                    os.close(_open_create(path / name, display))
            except BaseException:
                os.close(steps_fd)
                raise
        except BaseException:
            # No half-made directory: readers skip one without a manifest anyway.
            shutil.rmtree(path, ignore_errors=True)
            raise
        made = cls(run_id, path, display, mask, now_ms, steps_fd)
        made._indexed = IndexedAs(kind, ref, parent_run_id, restart_of)
        return made

    # --- steps.jsonl ----------------------------------------------------------

    def append(self, event: StepsLine) -> None:
        """Append one event as one line of ``steps.jsonl``.

        Typed so that mypy checks every line against the protocol (build events with
        :mod:`runner.events`); ``t`` is still added to a mapping that lacks it.
        """
        with self._append_lock:
            fd = self._steps_fd
            where = f"{self._display}/{protocol.STEPS_FILE}"
            if fd is None:
                raise RunWriteError(f"cannot write {where}: the run directory is closed")
            record = dict(event)
            if "t" not in record:
                record["t"] = self._now_ms()
            data = dumps_line(self._mask(record))
            if self._unterminated:
                data = b"\n" + data  # end the broken line so this one parses
            self._write_line(fd, data, where)
            self._note(record)

    def _note(self, record: dict[str, object]) -> None:
        """A run's start and end as lines of the run index (:mod:`runner.store.run_index`),
        each after its line in ``steps.jsonl``: the directory is the truth."""
        indexed, kind, t = self._indexed, record.get("kind"), record.get("t")
        if indexed is None or not isinstance(t, int) or isinstance(t, bool):
            return
        if kind in ("run:started", "collection-run:started"):
            note_started(
                self.path.parent,
                self.run_id,
                kind=indexed.kind,
                ref=indexed.ref,
                started_at=t,
                parent=indexed.parent,
                restart_of=indexed.restart_of,
            )
        elif kind in ("run:finished", "collection-run:finished"):
            outcome = as_outcome(record.get("outcome"))
            if outcome is not None:
                note_finished(self.path.parent, self.run_id, t, outcome)

    def _write_line(self, fd: int, data: bytes, where: str) -> None:
        view = memoryview(data)
        written = 0
        while written < len(data):
            try:
                n = os.write(fd, view[written:])
            except OSError as err:
                self._repair(fd, written)
                raise write_error(f"cannot write {where}", err) from err
            if n <= 0:  # pragma: no cover - a regular file never answers 0
                self._repair(fd, written)
                raise RunWriteError(f"cannot write {where}: nothing was written")
            written += n
        self._unterminated = False

    def _repair(self, fd: int, written: int) -> None:
        """Best effort after a failed write: drop the partial line, else end it."""
        if written == 0:
            return
        try:
            end = os.lseek(fd, 0, os.SEEK_END)
            os.ftruncate(fd, end - written)
            return
        except OSError:
            pass
        try:
            if os.write(fd, b"\n") == 1:
                return
        except OSError:
            pass
        self._unterminated = True

    # --- runtime.json and other whole files -----------------------------------

    def write_runtime(self, state: protocol.RuntimeStateFile) -> None:
        """Replace ``runtime.json`` atomically (masked, ``updatedAt`` added when missing)."""
        record = dict(state)
        if "updatedAt" not in record:
            record["updatedAt"] = self._now_ms()
        data = dumps_line(self._mask(record))
        with self._runtime_lock:
            atomic_write(
                self.path / protocol.RUNTIME_FILE,
                data,
                display=f"{self._display}/{protocol.RUNTIME_FILE}",
                fsync=False,
            )

    def write_bytes_file(self, relative: str, data: bytes) -> Path:
        """Write ``relative`` (inside the run directory) atomically; parents are created."""
        target = self._inside(relative)
        shown = f"{self._display}/{PurePosixPath(relative).as_posix()}"
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise write_error(f"cannot write {shown}", err) from err
        atomic_write(target, bytes(data), display=shown, fsync=False)
        return target

    def write_text_file(self, relative: str, text: str) -> Path:
        """:meth:`write_bytes_file` for UTF-8 text."""
        return self.write_bytes_file(relative, text.encode("utf-8"))

    write_bytes = write_bytes_file

    def _inside(self, relative: str) -> Path:
        rel = PurePosixPath(relative.replace("\\", "/"))
        if not relative or rel.is_absolute() or ".." in rel.parts or rel == PurePosixPath("."):
            raise ValueError(f"not a path inside the run directory: {relative!r}")
        return self.path.joinpath(*rel.parts)

    # --- heartbeat ------------------------------------------------------------

    def start_heartbeat(self, interval: float = 1.0) -> None:
        """Touch ``heartbeat`` now and every ``interval`` seconds from a daemon thread."""
        if interval <= 0:
            raise ValueError("heartbeat interval must be positive")
        with self._heartbeat_lock:
            if self._heartbeat_thread is not None:
                return
            stop = threading.Event()
            heartbeat = self.path / protocol.HEARTBEAT_FILE
            self._touch(heartbeat)
            thread = threading.Thread(
                target=self._beat,
                args=(heartbeat, interval, stop),
                name=f"unotest-heartbeat-{self.run_id}",
                daemon=True,
            )
            self._heartbeat_stop = stop
            self._heartbeat_thread = thread
            thread.start()

    def stop_heartbeat(self) -> None:
        with self._heartbeat_lock:
            stop, thread = self._heartbeat_stop, self._heartbeat_thread
            self._heartbeat_stop = self._heartbeat_thread = None
        if stop is not None:
            stop.set()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)

    @staticmethod
    def _touch(path: Path) -> None:
        try:
            os.utime(path, None)
        except FileNotFoundError:
            with contextlib.suppress(OSError):
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT, FILE_MODE))
        except OSError:
            pass  # a missed beat is better than a dead runner

    @classmethod
    def _beat(cls, path: Path, interval: float, stop: threading.Event) -> None:
        while not stop.wait(interval):
            cls._touch(path)

    # --- closing --------------------------------------------------------------

    def close(self) -> None:
        """Stop the heartbeat and close ``steps.jsonl``; calling it again does nothing."""
        self.stop_heartbeat()
        with self._append_lock:
            fd, self._steps_fd = self._steps_fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)

    @property
    def closed(self) -> bool:
        return self._steps_fd is None

    def __enter__(self) -> RunDirectory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RunDirectory({self.run_id!r}, {str(self.path)!r})"


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def _claim_directory(runs_dir: Path, base: str, ref: str, started_at: int) -> tuple[str, Path]:
    """A new, empty run directory of its own: ``os.mkdir`` without ``exist_ok`` claims
    it, and a clash (same ref, same millisecond, same random suffix) tries a new id."""
    try:
        runs_dir.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise write_error(f"cannot create {base}", err) from err
    for _ in range(_MAX_CREATE_ATTEMPTS):
        run_id = protocol.make_run_id(ref, now_ms=started_at)
        path = runs_dir / run_id
        try:
            os.mkdir(path)
        except FileExistsError:
            continue
        except OSError as err:
            raise write_error(f"cannot create {base}/{run_id}", err) from err
        return run_id, path
    raise RunWriteError(
        f"cannot create a run directory in {base}: {_MAX_CREATE_ATTEMPTS} run ids were all taken"
    )


def _manifest(
    kind: Literal["scenario", "collection"], ref: str, parent_run_id: str | None, started_at: int
) -> protocol.RunManifest:
    manifest: protocol.RunManifest = {
        "schemaVersion": 1,
        "kind": kind,
        "ref": ref,
        "adapter": protocol.ADAPTER_NAME,
        "startedAt": started_at,
    }
    if parent_run_id is not None:
        manifest["parentRunId"] = parent_run_id
    pid = os.getpid()
    manifest["pid"] = pid
    start = own_start_time() if sys.platform.startswith("linux") else None
    if start is not None:
        manifest["pidStartTime"] = start
    with contextlib.suppress(OSError):
        manifest["hostname"] = socket.gethostname()
    return manifest


def _display_base(runs_dir: Path) -> str:
    """``unotest/.runs`` as the user knows it, else the full path."""
    if runs_dir.name == protocol.RUNS_SUBDIR and runs_dir.parent.name == protocol.UNOTEST_DIR:
        return f"{protocol.UNOTEST_DIR}/{protocol.RUNS_SUBDIR}"
    return str(runs_dir)


def _open_append(path: Path, display: str) -> int:
    try:
        return os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, FILE_MODE)
    except OSError as err:
        raise write_error(f"cannot create {display}/{path.name}", err) from err


def _open_create(path: Path, display: str) -> int:
    try:
        return os.open(path, os.O_WRONLY | os.O_CREAT, FILE_MODE)
    except OSError as err:
        raise write_error(f"cannot create {display}/{path.name}", err) from err


def capture_output_into(run_dir: Path) -> None:
    """Send this process's stdout and stderr into the run's stdout.log / stderr.log.

    Asked for with ``UNOTEST_OUTPUT_TO_RUN_DIR=1`` by whoever spawned the run without
    a terminal (the MCP server, a viewer), so the output sits next to the events,
    under the protocol's STDOUT_FILE / STDERR_FILE names.
    """
    import sys

    for stream, name in ((sys.stdout, protocol.STDOUT_FILE), (sys.stderr, protocol.STDERR_FILE)):
        stream.flush()
        fd = os.open(run_dir / name, os.O_WRONLY | os.O_CREAT | os.O_APPEND, FILE_MODE)
        os.dup2(fd, stream.fileno())
        os.close(fd)


def end_abandoned_run(run_dir: Path) -> None:
    """End the run directory of a scenario whose worker was killed while the collection
    was being aborted, as its worker would have: the steps it left open end as failed
    (``AbortError``, innermost first), then ``run:finished`` with outcome ``aborted``
    (unless it is already there), and runtime.json in its final state.

    The worker is dead, so nothing else writes here any more; the lines are appended
    as :func:`runner.files.append_line` appends and runtime.json is replaced
    atomically, as :class:`RunDirectory` does.
    """
    steps = run_dir / protocol.STEPS_FILE
    lines = steps.read_bytes().split(b"\n")
    unterminated = lines.pop() != b""
    open_steps, last_kind = _open_steps(lines)
    if last_kind == "run:finished":
        return
    records: list[events.StepsLine] = [
        events.step_fail("the run was aborted", "AbortError") for _ in range(open_steps)
    ]
    records.append(events.run_finished("aborted"))
    now = records[-1]["t"]
    data = b"".join(
        json.dumps(record, ensure_ascii=True, allow_nan=False).encode("ascii") + b"\n"
        for record in records
    )
    if unterminated:
        data = b"\n" + data  # end the line the killed worker left half-written
    append_line(steps, data)
    note_finished(run_dir.parent, run_dir.name, now, "aborted")
    _end_runtime(run_dir, now)


def _open_steps(lines: list[bytes]) -> tuple[int, object]:
    """How many steps the lines leave open, and the kind of the last readable line."""
    open_steps = 0
    last_kind = None
    for line in lines:
        try:
            last_kind = json.loads(line).get("kind")
        except (ValueError, AttributeError):
            continue
        if last_kind == "step:started":
            open_steps += 1
        elif last_kind in ("step:ok", "step:fail") and open_steps:
            open_steps -= 1
    return open_steps, last_kind


def _end_runtime(run_dir: Path, now: int) -> None:
    """runtime.json as the runner's own final one: no current step, so no vars or stack."""
    runtime_path = run_dir / protocol.RUNTIME_FILE
    try:
        state = json.loads(runtime_path.read_bytes())
    except (OSError, ValueError):
        return  # never written: the run had not got that far
    if not isinstance(state, dict):
        return
    state.update(state="aborted", current=None, vars={}, callStack=[], updatedAt=now)
    state.pop("page", None)  # the browser is gone
    state.pop("file", None)
    atomic_write(runtime_path, json.dumps(state, ensure_ascii=True, allow_nan=False).encode())
