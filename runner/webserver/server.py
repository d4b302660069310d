"""``webServer``: start the site under test before a run and stop it after.

Follows Playwright Test's webServer: the URL counts as up when it answers with a
status from 200 to 403 (a 404 at ``/`` is retried at ``/index.html``); a connection
that is refused or times out does not count; a wait that ends without an answer names
the last one it got (``HTTP 404``, ``connection refused``). An answering URL is reused with
``reuseExistingServer`` and is an error without it. The command runs through
``/bin/sh -c`` in its own session (process group), so that stopping it also stops
whatever it started (``npm run dev`` → node …).

A server one unotest run started is shared with the others that want the same one
(:mod:`runner.webserver.lease`): they use it instead of starting a second, whether or
not ``reuseExistingServer`` is set (it is this project's own server, not a stranger on
the port), and the run that started it stops it only once no other run uses it.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import re
import shutil
import signal
import ssl
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import IO, TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

from runner.browser.node_cache import without_ours
from runner.errors import WebServerCancelled, WebServerError
from runner.processes import process_start_time
from runner.webserver.lease import Lease, LeaseRecord, me

if TYPE_CHECKING:
    from runner.project.config import WebServerConfig

__all__ = [
    "WebServer",
    "WebServerError",
    "command_not_found",
    "probe",
    "stop_lingering",
    "url_answers",
]

DEFAULT_TIMEOUT_MS = 60_000
POLL_INTERVAL_S = 0.1
PROBE_TIMEOUT_S = 1.0
STOP_GRACE_S = 5.0
LINGER_POLL_S = 0.25
OUTPUT_LINES = 50
_ERROR_OUTPUT_LINES = 10
# Stops the server's process group when the runner dies, however it dies (kill -9,
# os._exit of a forced stop): it reads a pipe whose only writer is the runner; a line
# means stop() did the job, EOF without one means the runner is gone. $1 is the group id (dash's
# kill wants "-PGID" as one word).
_WATCHDOG = (
    "if read -r _; then exit 0; fi; "  # "stopped" from stop(): nothing to do
    'kill -TERM "-$1" 2>/dev/null && sleep 5 && kill -KILL "-$1" 2>/dev/null; exit 0'
)


def _probe(url: str, timeout: float) -> int | str:
    """The HTTP status of a GET of ``url``, or why nothing answered ("connection refused").

    http.client rather than urllib: no proxies from the environment, no redirects
    followed (a 3xx counts as an answer, as in Playwright), any certificate accepted.
    """
    parts = urlsplit(url)
    host = parts.hostname
    if not host:
        return "no host in the URL"
    conn: http.client.HTTPConnection
    if parts.scheme == "https":
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        conn = http.client.HTTPSConnection(host, parts.port, timeout=timeout, context=context)
    else:
        conn = http.client.HTTPConnection(host, parts.port, timeout=timeout)
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    try:
        conn.request("GET", path, headers={"Accept": "*/*"})
        return conn.getresponse().status
    except TimeoutError:
        return "no answer (timed out)"
    except OSError as err:
        return (err.strerror or str(err) or type(err).__name__).lower()
    except http.client.HTTPException as err:
        return f"not an HTTP answer ({str(err) or type(err).__name__})"
    finally:
        conn.close()


def probe(url: str, timeout: float = PROBE_TIMEOUT_S) -> tuple[bool, str]:
    """Whether ``url`` is up in Playwright Test's sense (status 200-403; a 404 at ``/``
    is tried again at ``/index.html``), and what it answered: ``HTTP 404``,
    ``connection refused``, …"""
    status = _probe(url, timeout)
    parts = urlsplit(url)
    if status == 404 and parts.path in ("", "/"):
        fallback = _probe(urlunsplit(parts._replace(path="/index.html")), timeout)
        if isinstance(fallback, int) and 200 <= fallback < 404:
            return True, f"HTTP {fallback} at /index.html"
        said = f"HTTP {fallback}" if isinstance(fallback, int) else fallback
        return False, f"HTTP 404, and {said} at /index.html"
    if isinstance(status, int):
        return 200 <= status < 404, f"HTTP {status}"
    return False, status


def url_answers(url: str, timeout: float = PROBE_TIMEOUT_S) -> bool:
    """True when ``url`` is up in Playwright Test's sense (status 200-403)."""
    return probe(url, timeout)[0]


# A first word the shell runs as it reads it: no quoting, expansion, redirection,
# assignment (`PORT=1 npm start`) or grouping, whose program can be looked for.
_PLAIN_WORD = re.compile(r"[A-Za-z0-9_./+@%:,-]+")
# Built into the shell (or its grammar): not on PATH, nothing to look for.
_SHELL_WORDS_TEXT = """
. : [ [[ ! { alias bg break builtin case cd command continue declare do done elif else
esac eval exec exit export false fc fg for function getopts hash if jobs let local read
readonly return select set shift source test then time times trap true type typeset
ulimit umask unalias unset until wait while
"""
_SHELL_WORDS = frozenset(_SHELL_WORDS_TEXT.split())


def command_not_found(config: WebServerConfig) -> str | None:
    """Why the shell will not find the program of the webServer ``command`` (its first
    word, when that is a plain name or path, not a shell construct), or None.

    For ``unotest doctor``: the run would otherwise start the shell, which exits 127,
    and report that the server ended before its URL answered. A name is looked for on
    the PATH the command gets (``webServer.env`` over this environment), a path in
    ``webServer.cwd``, as the shell started there does."""
    words = config.command.split(None, 1)
    first = words[0] if words else ""
    if not _PLAIN_WORD.fullmatch(first) or first in _SHELL_WORDS:
        return None
    cwd = Path(config.cwd)
    if "/" in first:
        path = cwd / first
        if not path.is_file():
            return f"{first} (the start of its command) is not there in {cwd}"
        if not os.access(path, os.X_OK):
            return (
                f"{first} (the start of its command) in {cwd} is not executable: "
                f"'chmod +x {first}', or start it with 'sh {first}'"
            )
        return None
    search = {**os.environ, **dict(config.env)}.get("PATH", os.defpath)
    # An empty or relative PATH entry is the shell's own folder: webServer.cwd.
    folders = [str(cwd / folder) for folder in search.split(os.pathsep)]
    if shutil.which(first, path=os.pathsep.join(folders)) is not None:
        return None
    return f"'{first}' (the start of its command) is not found on PATH"


def _no_log(_message: str) -> None:
    return None


class WebServer:
    """A running (or reused) web server; :meth:`stop` it, or use it as a context manager."""

    def __init__(
        self,
        command: str,
        url: str,
        *,
        process: subprocess.Popen[bytes] | None,
        log: Callable[[str], None] = _no_log,
        lease: Lease | None = None,
    ) -> None:
        self.command = command
        self.url = url
        self._process = process
        self._lease = lease
        """Held while this run uses a server of the lease (one it started or shares)."""
        self._log = log
        self._output: deque[str] = deque(maxlen=OUTPUT_LINES)
        self._reader: threading.Thread | None = None
        self._stopped = process is None
        self._watchdog_fd: int | None = None
        self._watchdog: subprocess.Popen[bytes] | None = None

    # --- starting ---------------------------------------------------------------------

    @classmethod
    def from_config(
        cls,
        config: WebServerConfig,
        *,
        mask: Callable[[str], str],
        log: Callable[[str], None] = _no_log,
        cancel: threading.Event | None = None,
    ) -> WebServer:
        """:meth:`start` as ``unotest.config.yaml``'s ``webServer`` describes it: the one
        place the scenario runner, the collection orchestrator and the pytest plugin
        turn that entry into a server, with its ``env`` over the run's environment.
        ``mask`` hides the project's secrets in the error: it quotes the server's last
        output, and a server that fails to start often prints its settings (a database
        URL, a token)."""
        try:
            return cls.start(
                config.command,
                config.url,
                cwd=config.cwd,
                timeout_ms=config.timeout,
                reuse_existing_server=config.reuse_existing_server,
                env=dict(config.env),
                log=log,
                cancel=cancel,
            )
        except WebServerError as err:
            masked = mask(str(err))
            if masked == str(err):
                raise
            raise type(err)(masked) from None

    @classmethod
    def start(
        cls,
        command: str,
        url: str,
        *,
        cwd: Path,
        timeout_ms: int,
        reuse_existing_server: bool,
        env: Mapping[str, str] | None = None,
        log: Callable[[str], None] = _no_log,
        cancel: threading.Event | None = None,
    ) -> WebServer:
        """Start ``command`` and wait until ``url`` answers, or reuse what answers there.

        ``cancel`` (set from a signal handler) stops the wait and the server at once,
        so Ctrl-C during a slow start never leaves the command running.
        """
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise WebServerError(f"webServer url {url!r} is not an http(s) URL")
        lease = Lease.open(url)
        if lease is None:
            return cls._start_alone(
                command, url, cwd, timeout_ms, reuse_existing_server, env, log, cancel
            )
        # Held until the URL answers: a run wanting the same server meanwhile waits.
        with lease.locked(cancel):
            record = lease.read()
            if (
                record is not None
                and record.same_server(command, Path(cwd))
                and record.server_alive()
                and url_answers(url)
            ):
                lease.write(record.with_holders((*record.live_holders(besides=me()), me())))
                log(f"webServer: using the server another unotest run started at {url}")
                return cls(command, url, process=None, log=log, lease=lease)
            server = cls._start_alone(
                command, url, cwd, timeout_ms, reuse_existing_server, env, log, cancel
            )
            if server._process is not None:
                pid = server._process.pid
                lease.write(
                    LeaseRecord(
                        url, command, str(Path(cwd)), me(), pid, process_start_time(pid), (me(),)
                    )
                )
                server._lease = lease
            return server

    @classmethod
    def _start_alone(
        cls,
        command: str,
        url: str,
        cwd: Path,
        timeout_ms: int,
        reuse_existing_server: bool,
        env: Mapping[str, str] | None,
        log: Callable[[str], None],
        cancel: threading.Event | None,
    ) -> WebServer:
        """Start it, or reuse what answers there, as if no other run existed."""
        if url_answers(url):
            if reuse_existing_server:
                log(f"webServer: reusing the server already answering at {url}")
                return cls(command, url, process=None, log=log)
            raise WebServerError(
                f"{url} is already used: stop what is running there, or set "
                "reuseExistingServer: true under webServer in unotest.config.yaml"
            )
        if not Path(cwd).is_dir():
            raise WebServerError(f"webServer cwd {cwd} is not a directory")

        full_env = {"BROWSER": "none", **without_ours(os.environ), **(env or {})}
        log(f"webServer: starting {command!r} in {cwd}")
        try:
            process = subprocess.Popen(
                ["/bin/sh", "-c", command],
                cwd=cwd,
                env=full_env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as exc:
            raise WebServerError(f"webServer {command!r} could not be started: {exc}") from None
        server = cls(command, url, process=process, log=log)
        server._start_watchdog()
        server._start_reader()
        try:
            server._wait_until_ready(timeout_ms, cancel)
        except BaseException:
            server.stop()
            raise
        return server

    def _start_watchdog(self) -> None:
        """A tiny ``sh`` in its own session that stops the server's group once the pipe
        it reads closes; the write end stays here only (``os.pipe`` fds are not
        inherited), so Chromium or a worker holding it open cannot delay it."""
        assert self._process is not None
        read_end, write_end = os.pipe()
        try:
            self._watchdog = subprocess.Popen(
                ["/bin/sh", "-c", _WATCHDOG, "unotest-webserver-watchdog", str(self._process.pid)],
                stdin=read_end,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError:
            os.close(write_end)
            return  # no watchdog: stop() still stops the server on every orderly exit
        finally:
            os.close(read_end)
        self._watchdog_fd = write_end

    def _start_reader(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        stream = self._process.stdout
        self._reader = threading.Thread(
            target=self._read_output, args=(stream,), name="webserver-output", daemon=True
        )
        self._reader.start()

    def _read_output(self, stream: IO[bytes]) -> None:
        with contextlib.suppress(OSError, ValueError):
            for raw in iter(stream.readline, b""):
                line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                self._output.append(line)

    def _wait_until_ready(self, timeout_ms: int, cancel: threading.Event | None = None) -> None:
        assert self._process is not None
        limit_ms = timeout_ms if timeout_ms and timeout_ms > 0 else DEFAULT_TIMEOUT_MS
        started = time.monotonic()
        deadline = started + limit_ms / 1000
        while True:
            remaining = deadline - time.monotonic()
            up, last = probe(self.url, timeout=max(0.05, min(PROBE_TIMEOUT_S, remaining)))
            if up:
                elapsed = int((time.monotonic() - started) * 1000)
                self._log(f"webServer: {self.url} answered after {elapsed} ms")
                return
            if cancel is not None and cancel.is_set():
                raise WebServerCancelled(f"webServer {self.command!r}: start cancelled")
            code = self._process.poll()
            if code is not None:
                self._join_reader()
                raise WebServerError(
                    f"webServer {self.command!r} exited with code {code} before {self.url} "
                    f"answered (last: {last}){self._last_output_suffix()}"
                )
            if time.monotonic() >= deadline:
                self.stop()
                raise WebServerError(
                    f"webServer {self.command!r} did not answer at {self.url} within "
                    f"{limit_ms} ms with a success status (200-403; last: {last})"
                    f"{self._last_output_suffix()}"
                )
            pause = min(POLL_INTERVAL_S, max(0.0, deadline - time.monotonic()))
            if cancel is not None:
                cancel.wait(pause)
            else:
                time.sleep(pause)

    # --- output -------------------------------------------------------------------------

    @property
    def reused(self) -> bool:
        """True when an already running server is used and nothing was started."""
        return self._process is None

    @property
    def pid(self) -> int | None:
        """The shell's pid, also the process group id; None when reused."""
        return self._process.pid if self._process is not None else None

    def output_tail(self) -> list[str]:
        """The last lines (up to 50) the command wrote to stdout and stderr."""
        return list(self._output)

    def _join_reader(self) -> None:
        if self._reader is not None:
            self._reader.join(timeout=1.0)

    def _last_output_suffix(self) -> str:
        lines = [line for line in self._output if line.strip()][-_ERROR_OUTPUT_LINES:]
        if not lines:
            return " (it printed nothing)"
        return "; last output: " + " | ".join(line.strip() for line in lines)

    # --- stopping -----------------------------------------------------------------------

    def _group_alive(self, pgid: int) -> bool:
        """Does any process of the group still run? Zombies do not count: an orphan
        waits for init to reap it, and not every init reaps at once."""
        proc = Path("/proc")
        if proc.is_dir():
            for entry in proc.iterdir():
                if not entry.name.isdigit():
                    continue
                try:
                    stat = (entry / "stat").read_text()
                except OSError:
                    continue
                # pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses
                fields = stat[stat.rfind(")") + 2 :].split()
                if len(fields) >= 3 and fields[2] == str(pgid) and fields[0] != "Z":
                    return True
            return False
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    def _signal_group(self, pgid: int, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, sig)

    def exit_code(self) -> int | None:
        """The exit code of the server this run started, once it ended by itself (None:
        still running, shared, or stopped by us): a long-lived user (``unotest watch``)
        notices a server that died, as Playwright Test says "exited early"."""
        process = self._process
        if process is None or self._stopped:
            return None
        return process.poll()

    def stop(self) -> None:
        """Stop the server this run started, unless other runs use it (then it is
        stopped by :func:`stop_lingering`, once they are done); leave one it shares.
        Idempotent."""
        lease, self._lease = self._lease, None
        if lease is None:
            self._stop_process()
            return
        with lease.locked():
            record = lease.read()
            ours = record is not None and record.owner == me()
            others = record.live_holders(besides=me()) if record is not None else ()
            if record is not None and (others or not ours):
                lease.write(record.with_holders(others))
            if self._process is None or not ours:
                self._stop_process()  # nothing of ours to stop, or not in the lease any more
                return
            if others:
                _LINGERING.append((self, lease))
                return
            lease.remove()
            self._stop_process()  # under the lock: nobody finds it answering meanwhile

    def _stop_process(self) -> None:
        """SIGTERM the process group, wait up to 5 s, then SIGKILL it. Idempotent."""
        if self._stopped or self._process is None:
            self._stopped = True
            return
        self._stopped = True
        process = self._process
        pgid = process.pid  # start_new_session: the shell leads its own group
        self._signal_group(pgid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_S
        while time.monotonic() < deadline:
            process.poll()  # reap the shell so that it does not keep the group alive
            if process.returncode is not None and not self._group_alive(pgid):
                break
            time.sleep(0.05)
        else:
            self._signal_group(pgid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):  # SIGKILL cannot be ignored
            process.wait(timeout=STOP_GRACE_S)
        # members that outlived the shell and ignored SIGTERM
        if self._group_alive(pgid):
            self._signal_group(pgid, signal.SIGKILL)
        self._join_reader()
        if process.stdout is not None and not (self._reader and self._reader.is_alive()):
            with contextlib.suppress(OSError):
                process.stdout.close()
        if self._watchdog_fd is not None:
            with contextlib.suppress(OSError):
                os.write(self._watchdog_fd, b"stopped\n")
            with contextlib.suppress(OSError):
                os.close(self._watchdog_fd)
            self._watchdog_fd = None
        if self._watchdog is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._watchdog.wait(timeout=1)  # it exits at once on "stopped": reap it
            self._watchdog = None
        self._log(f"webServer: stopped {self.command!r}")

    def __enter__(self) -> WebServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


_LINGERING: list[tuple[WebServer, Lease]] = []
"""Servers this process started that other runs still used when its run ended."""


def stop_lingering(say: Callable[[str], None] | None = None) -> None:
    """Stop the servers this process started and left up for other runs, once those
    runs are done: called as the process ends (the CLI's last step). It says once what
    it waits for; a Ctrl-C stops them at once. A process that never calls it stops
    them as it exits anyway (their watchdog), as before leases."""
    try:
        while _LINGERING:
            server, lease = _LINGERING[0]
            said = False
            while True:
                with lease.locked():
                    record = lease.read()
                    ours = record is not None and record.owner == me()
                    others = record.live_holders(besides=me()) if ours and record else ()
                    if not others:
                        if ours:
                            lease.remove()
                        server._stop_process()
                        break
                if not said and say is not None:
                    say(
                        f"webServer {server.url} is still used by {len(others)} other unotest "
                        "run(s): it stops when they end (Ctrl-C stops it now)"
                    )
                    said = True
                time.sleep(LINGER_POLL_S)
            _LINGERING.pop(0)
    except KeyboardInterrupt:
        for server, lease in _LINGERING:
            with contextlib.suppress(OSError):
                lease.remove()
            server._stop_process()
        _LINGERING.clear()
