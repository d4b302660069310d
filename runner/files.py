"""Low-level writes every part of unotest shares: whole files, whole lines, valid JSON.

A reader in another process (the viewer, an agent, ``unotest runs``) may look at any
file at any instant, a crash included; so a whole file is replaced atomically (temp
file in the same folder, ``os.replace``) and never rewritten in place, and a line is
appended with one ``os.write`` on an ``O_APPEND`` descriptor, so that no other
writer's line lands inside it. JSON written as a line is made safe first: NaN, cycles
and absurd nesting never make a line that a reader cannot parse.
"""

from __future__ import annotations

import contextlib
import errno as errno_mod
import json
import math
import os
import stat
import threading
from collections.abc import Mapping
from pathlib import Path

from runner.errors import RunWriteError

__all__ = ["FILE_MODE", "append_line", "atomic_write", "dumps_line", "json_safe", "write_error"]

FILE_MODE = 0o644
_MAX_DEPTH = 100


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


def dumps_line(value: object) -> bytes:
    text = json.dumps(json_safe(value), ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    return text.encode("ascii") + b"\n"


def write_error(prefix: str, err: OSError) -> RunWriteError:
    reason = os.strerror(err.errno) if err.errno is not None else str(err)
    error = RunWriteError(f"{prefix}: {reason}")
    error.errno = err.errno if err.errno is not None else errno_mod.EIO
    return error


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
        kept = None  # a new file: FILE_MODE less the umask, as open() makes it
    try:
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        fd = os.open(tmp, flags, FILE_MODE if kept is None else kept)
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
        raise write_error(f"cannot write {display or target}", err) from err


def append_line(path: Path, data: bytes, *, create: bool = False) -> None:
    """Append ``data`` (whole ``\\n``-terminated lines) to a file others append to as well:
    one ``os.write`` on an ``O_APPEND`` descriptor, short writes completed, so no other
    writer's line lands inside ours. ``create`` makes the file when it is missing."""
    flags = os.O_WRONLY | os.O_APPEND | (os.O_CREAT if create else 0)
    fd = os.open(path, flags, FILE_MODE)
    try:
        view = memoryview(data)
        written = 0
        while written < len(data):
            written += os.write(fd, view[written:])
    finally:
        os.close(fd)
