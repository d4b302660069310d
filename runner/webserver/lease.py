"""Which unotest runs use a webServer one of them started, so that none stops it under
the others.

Runs are separate processes: the viewer and the MCP server launch one per request, and
a person may run two in two terminals. Each would start the project's webServer or,
with ``reuseExistingServer``, use the one already answering; and the run that started
it stopped it when it ended, so a run that had found it up lost its site in the middle
(``ERR_CONNECTION_REFUSED``). Playwright Test has the same race between two of its
processes.

A lease file per URL says who started the server there (its process group, its
command and folder) and which runs use it now; it lives in a folder of this user's
under the system's temporary folder (ports are the machine's, not a project's) and is
read and written under an ``flock`` of a lock file of its own, which the run starting
a server holds until the URL answers: a second run wanting the same server waits, then
uses it instead of starting another on the same port. A run that uses a server
another one started only adds and removes itself; the run that started it stops it
once no other live run uses it (:func:`runner.webserver.server.stop_lingering`, at the CLI's
exit), or at once when the user insists (Ctrl-C then). A run is live while its process
is (its pid and start time), so a run killed with ``kill -9`` does not keep a server
up forever; the server of a starter killed that way is stopped by its watchdog, as
before.

Without a usable folder (read-only, not Linux's ``flock``), there is no lease and each
run behaves as it did: it starts, reuses or stops on its own.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from runner.errors import WebServerCancelled
from runner.processes import own_start_time, pid_exists, process_start_time

try:
    import fcntl
except ImportError:  # not POSIX: no leases
    fcntl = None  # type: ignore[assignment]

__all__ = ["Holder", "Lease", "LeaseRecord", "lease_folder", "me"]

LOCK_POLL_S = 0.05

Holder = tuple[int, int | None]
"""A run's process: its pid and its start time (``/proc``), so a reused pid is not it."""


def me() -> Holder:
    return os.getpid(), own_start_time()


def alive(holder: Holder) -> bool:
    pid, start = holder
    now = process_start_time(pid)
    if now is not None:
        return start is None or now == start
    return start is None and pid_exists(pid)  # no /proc: the pid alone


def lease_folder() -> Path:
    """This user's folder for leases (``$TMPDIR/unotest-<uid>/webserver``)."""
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return Path(tempfile.gettempdir()) / f"unotest-{uid}" / "webserver"


@dataclass(frozen=True)
class LeaseRecord:
    """What a lease file holds: the server and who uses it."""

    url: str
    command: str
    cwd: str
    owner: Holder
    """The run that started the server: the only one that stops it."""
    group: int
    """The server's process group (its shell's pid)."""
    group_start: int | None
    holders: tuple[Holder, ...] = field(default=())

    def same_server(self, command: str, cwd: Path) -> bool:
        """Started from the same ``webServer`` entry: the one this run would start."""
        return self.command == command and self.cwd == str(cwd)

    def server_alive(self) -> bool:
        return alive((self.group, self.group_start))

    def live_holders(self, *, besides: Holder | None = None) -> tuple[Holder, ...]:
        return tuple(h for h in self.holders if h != besides and alive(h))

    def with_holders(self, holders: tuple[Holder, ...]) -> LeaseRecord:
        return replace(self, holders=holders)

    def to_json(self) -> dict[str, object]:
        return {
            "url": self.url,
            "command": self.command,
            "cwd": self.cwd,
            "owner": list(self.owner),
            "group": self.group,
            "groupStart": self.group_start,
            "holders": [list(h) for h in self.holders],
        }

    @classmethod
    def from_json(cls, data: object) -> LeaseRecord | None:
        """None for anything but a lease this version wrote (a corrupt one is ignored)."""
        try:
            assert isinstance(data, dict)
            return cls(
                url=str(data["url"]),
                command=str(data["command"]),
                cwd=str(data["cwd"]),
                owner=_holder(data["owner"]),
                group=int(data["group"]),
                group_start=_optional_int(data["groupStart"]),
                holders=tuple(_holder(h) for h in data["holders"]),
            )
        except (AssertionError, KeyError, TypeError, ValueError):
            return None


def _optional_int(value: object) -> int | None:
    return None if value is None else int(value)  # type: ignore[call-overload]


def _holder(value: object) -> Holder:
    if not isinstance(value, list) or len(value) != 2:
        raise ValueError("not a holder")
    return int(value[0]), _optional_int(value[1])


class Lease:
    """The lease of one URL: :meth:`locked`, then :meth:`read` / :meth:`write`."""

    def __init__(self, folder: Path, url: str) -> None:
        key = hashlib.sha256(url.encode("utf-8")).hexdigest()[:20]
        self.url = url
        self.path = folder / f"{key}.json"
        self._lock_path = folder / f"{key}.lock"

    @classmethod
    def open(cls, url: str, folder: Path | None = None) -> Lease | None:
        """The lease of ``url``; None where leases cannot be kept."""
        if fcntl is None:
            return None
        where = folder if folder is not None else lease_folder()
        try:
            where.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError:
            return None
        return cls(where, url)

    @contextlib.contextmanager
    def locked(self, cancel: threading.Event | None = None) -> Iterator[None]:
        """Hold the lease's lock (waiting for another run that holds it, e.g. while it
        starts the server); ``cancel`` ends the wait with :class:`WebServerCancelled`."""
        fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if cancel is not None and cancel.is_set():
                        raise WebServerCancelled("webServer: start cancelled") from None
                    time.sleep(LOCK_POLL_S)
            yield
        finally:
            os.close(fd)  # and with it the lock

    def read(self) -> LeaseRecord | None:
        try:
            return LeaseRecord.from_json(json.loads(self.path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            return None

    def write(self, record: LeaseRecord) -> None:
        """Replace the lease whole (under the lock): never seen half written."""
        temporary = self.path.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text(json.dumps(record.to_json()), encoding="utf-8")
        os.replace(temporary, self.path)

    def remove(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
