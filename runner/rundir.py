"""The writer of one run directory, ``unotest/.runs/<runId>/`` (runner.md §1, §2).

Everything here is about what a reader may see at any instant, crash included:

* ``manifest.json`` is written first, atomically (temp file in the same folder,
  fsync, ``os.replace``), so a directory either has a whole manifest or none;
* ``steps.jsonl`` gets one ``os.write`` per event on an ``O_APPEND`` descriptor,
  short writes completed, so every ``\\n``-terminated line is a whole JSON object;
  a write that fails half-way is cut back off the file (or at least ended);
* ``runtime.json`` is replaced atomically, never rewritten in place;
* ``heartbeat`` is touched by a daemon thread, so it keeps beating while the
  interpreter thread waits at a pause or inside a long browser action.

The manifest also records ``pid``, ``pidStartTime`` and ``hostname`` (additive
fields) so that a reader can tell a dead runner at once instead of waiting for the
heartbeat to go stale; :func:`read_proc_stat` is shared with that reader.
"""

from __future__ import annotations

import contextlib
import errno as errno_mod
import json
import math
import os
import shutil
import socket
import stat
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path, PurePosixPath
from typing import Literal

from runner import protocol
from runner.errors import RunWriteError
from runner.events import StepsLine

__all__ = [
    "RunDirectory",
    "RunWriteError",
    "append_line",
    "json_safe",
    "process_start_time",
    "read_proc_stat",
]

_MAX_CREATE_ATTEMPTS = 100
_MAX_DEPTH = 100
_FILE_MODE = 0o644




def _now_ms() -> int:
    return time.time_ns() // 1_000_000


# ---------------------------------------------------------------------------
# /proc/<pid>/stat
# ---------------------------------------------------------------------------


def read_proc_stat(pid: int) -> tuple[str, int] | None:
    """``(state, starttime)`` of ``pid`` from ``/proc/<pid>/stat`` (fields 3 and 22).

    ``None`` when there is no such process or no ``/proc`` (not Linux). The second
    field, ``(comm)``, may itself hold spaces and parentheses, so the fields are
    counted from the *last* ``)``.
    """
    if pid <= 0:
        return None
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    close = data.rfind(b")")
    if close < 0:
        return None
    fields = data[close + 1 :].split()
    # fields[0] is field 3 (state), so field 22 (starttime) is fields[19]
    if len(fields) < 20:
        return None
    try:
        return fields[0].decode("ascii", "replace"), int(fields[19])
    except ValueError:
        return None


def pid_exists(pid: int) -> bool:
    """Whether a process ``pid`` exists (maybe another user's); it may be a reused pid:
    :func:`read_proc_stat`'s start time tells them apart where there is a ``/proc``."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def process_start_time(pid: int) -> int | None:
    """Field 22 of ``/proc/<pid>/stat`` (clock ticks after boot), ``None`` if unknown."""
    stat = read_proc_stat(pid)
    return None if stat is None else stat[1]


# ---------------------------------------------------------------------------
# JSON safety
# ---------------------------------------------------------------------------


def _safe_float(value: float) -> float | str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return float(value)


def json_safe(value: object, _depth: int = 0, _seen: frozenset[int] = frozenset()) -> object:
    """A copy of ``value`` that ``json.dumps(..., allow_nan=False)`` always accepts.

    NaN/Infinity become the strings JavaScript prints, keys become strings, tuples
    and lists become lists, anything else becomes its ``str()``; cycles and absurd
    nesting are cut instead of raising.
    """
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return _safe_float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, Mapping | list | tuple):
        if id(value) in _seen:
            return "[Circular]"
        if _depth >= _MAX_DEPTH:
            return "[Too deep]"
        seen = _seen | {id(value)}
        if isinstance(value, Mapping):
            return {
                (k if isinstance(k, str) else str(k)): json_safe(v, _depth + 1, seen)
                for k, v in value.items()
            }
        return [json_safe(v, _depth + 1, seen) for v in value]
    try:
        return str(value)
    except Exception:  # a broken __str__ must not lose the event
        return f"<{type(value).__name__}>"


def _dumps_line(value: object) -> bytes:
    text = json.dumps(json_safe(value), ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    return text.encode("ascii") + b"\n"


# ---------------------------------------------------------------------------
# The run directory
# ---------------------------------------------------------------------------


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
    ) -> RunDirectory:
        """Make a fresh run directory: manifest first, then the empty files.

        ``os.mkdir`` without ``exist_ok`` claims the directory, and a clash (same
        ref, same millisecond, same random suffix) retries with a new id, so two
        runs never share a directory. ``restart_of`` names the run this one restarts
        (the manifest's additive ``restartOf``).
        """
        runs_dir = Path(runs_dir)
        base = _display_base(runs_dir)
        try:
            runs_dir.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise _write_error(f"cannot create {base}", err) from err
        started_at = now_ms()
        for _ in range(_MAX_CREATE_ATTEMPTS):
            run_id = protocol.make_run_id(ref, now_ms=started_at)
            path = runs_dir / run_id
            try:
                os.mkdir(path)
            except FileExistsError:
                continue
            except OSError as err:
                raise _write_error(f"cannot create {base}/{run_id}", err) from err
            break
        else:
            raise RunWriteError(
                f"cannot create a run directory in {base}: "
                f"{_MAX_CREATE_ATTEMPTS} run ids were all taken"
            )
        display = f"{base}/{run_id}"
        try:
            manifest = _manifest(kind, ref, parent_run_id, started_at)
            if restart_of is not None:
                manifest["restartOf"] = restart_of
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
        return cls(run_id, path, display, mask, now_ms, steps_fd)

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
            data = _dumps_line(self._mask(record))
            if self._unterminated:
                data = b"\n" + data  # end the broken line so this one parses
            self._write_line(fd, data, where)

    def _write_line(self, fd: int, data: bytes, where: str) -> None:
        view = memoryview(data)
        written = 0
        while written < len(data):
            try:
                n = os.write(fd, view[written:])
            except OSError as err:
                self._repair(fd, written)
                raise _write_error(f"cannot write {where}", err) from err
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
        data = _dumps_line(self._mask(record))
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
            raise _write_error(f"cannot write {shown}", err) from err
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
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT, _FILE_MODE))
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
    start = process_start_time(pid) if sys.platform.startswith("linux") else None
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


def _write_error(prefix: str, err: OSError) -> RunWriteError:
    reason = os.strerror(err.errno) if err.errno is not None else str(err)
    error = RunWriteError(f"{prefix}: {reason}")
    error.errno = err.errno if err.errno is not None else errno_mod.EIO
    return error


def _open_append(path: Path, display: str) -> int:
    try:
        return os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, _FILE_MODE)
    except OSError as err:
        raise _write_error(f"cannot create {display}/{path.name}", err) from err


def _open_create(path: Path, display: str) -> int:
    try:
        return os.open(path, os.O_WRONLY | os.O_CREAT, _FILE_MODE)
    except OSError as err:
        raise _write_error(f"cannot create {display}/{path.name}", err) from err


def atomic_write(
    target: Path, data: bytes, *, display: str | None = None, fsync: bool = False
) -> None:
    """Temp file in the same folder, (fsync,) ``os.replace``: a reader never sees a partial
    ``target``. The one writer of every whole file the runner and front ends replace
    (manifest, runtime.json, bundle files, .debugger.json, a saved scenario, .env);
    ``display`` names it in the error (default: its path).

    A file that exists keeps its permission bits, and the temp file has them from its
    creation on: a 0600 ``unotest/.env`` is never readable by others, not even for the
    moment between the write and the rename.
    """
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        kept: int | None = stat.S_IMODE(target.stat().st_mode)
    except OSError:
        kept = None  # a new file: _FILE_MODE less the umask, as open() makes it
    try:
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        fd = os.open(tmp, flags, _FILE_MODE if kept is None else kept)
        try:
            if kept is not None:
                os.fchmod(fd, kept)  # exactly what the file had, whatever the umask
            view = memoryview(data)
            written = 0
            while written < len(data):
                written += os.write(fd, view[written:])
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except OSError as err:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise _write_error(f"cannot write {display or target}", err) from err


def append_line(path: Path, data: bytes, *, create: bool = False) -> None:
    """Append ``data`` (whole ``\\n``-terminated lines) to a file others append to as well:
    one ``os.write`` on an ``O_APPEND`` descriptor, short writes completed, so no other
    writer's line lands inside ours. ``create`` makes the file when it is missing."""
    flags = os.O_WRONLY | os.O_APPEND | (os.O_CREAT if create else 0)
    fd = os.open(path, flags, _FILE_MODE)
    try:
        view = memoryview(data)
        written = 0
        while written < len(data):
            written += os.write(fd, view[written:])
    finally:
        os.close(fd)


def capture_output_into(run_dir: Path) -> None:
    """Send this process's stdout and stderr into the run's stdout.log / stderr.log.

    Asked for with ``UNOTEST_OUTPUT_TO_RUN_DIR=1`` by whoever spawned the run without
    a terminal (the MCP server, a viewer), so the output sits next to the events,
    under the protocol's STDOUT_FILE / STDERR_FILE names.
    """
    import sys

    for stream, name in ((sys.stdout, protocol.STDOUT_FILE), (sys.stderr, protocol.STDERR_FILE)):
        stream.flush()
        fd = os.open(run_dir / name, os.O_WRONLY | os.O_CREAT | os.O_APPEND, _FILE_MODE)
        os.dup2(fd, stream.fileno())
        os.close(fd)
