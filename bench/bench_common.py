"""What the scripts in ``bench/`` share: the site they serve, the projects they write,
the processes they start and stop, and how they read what a run writes.

Each bench measures one thing; the scaffolding around it (a quiet static server on
127.0.0.1, a throw-away project, ``unotest`` started as a user starts it and always
stopped, ``steps.jsonl`` read by byte offset, a command appended as ``unotest dbg``
appends it) is the same everywhere and lives here once, so that a fix to it reaches
every bench. Nothing here measures or prints.

A script in ``bench/`` imports it by name (``from bench_common import serve``): run as
``.venv/bin/python bench/<name>.py``, its own folder is first on ``sys.path``.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

UNOTEST = str(Path(sys.executable).with_name("unotest"))
"""The console script next to this Python, as users run it (``python -m unotest`` from a
project's root would import the project's own ``unotest/`` folder first)."""


# ---------------------------------------------------------------------------
# the site and the project
# ---------------------------------------------------------------------------


class _Quiet(http.server.SimpleHTTPRequestHandler):
    """A static file handler that logs nothing: the bench's output is its figures."""

    def log_message(self, format: str, *args: Any) -> None:
        pass


def serve(directory: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    """``directory`` served on a free loopback port from a daemon thread: the server
    (``shutdown()`` it when done) and its base URL."""
    handler = functools.partial(_Quiet, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="bench-site", daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def serve_page(base: Path, page: str) -> tuple[http.server.ThreadingHTTPServer, str]:
    """One page, ``base/site/index.html``, served as ``serve`` does."""
    site = base / "site"
    site.mkdir()
    (site / "index.html").write_text(page, encoding="utf-8")
    return serve(site)


def write_project(root: Path, config: str, scenarios: Mapping[str, str]) -> Path:
    """A project at ``root``: ``unotest.config.yaml`` holding ``config`` and each
    scenario (name -> source) as ``unotest/e2e/<name>.test.js``; ``root``."""
    e2e = root / "unotest" / "e2e"
    e2e.mkdir(parents=True)
    (root / "unotest.config.yaml").write_text(config, encoding="utf-8")
    for name, source in scenarios.items():
        (e2e / f"{name}.test.js").write_text(source, encoding="utf-8")
    return root


@contextmanager
def kept_or_temporary(
    folder: str | None, holds: Callable[[Path], bool], generate: Callable[[Path], None]
) -> Iterator[Path]:
    """A generated project's root: in a temporary folder removed afterwards, or in
    ``folder`` (a bench's ``--dir``), kept, and used as it is when ``holds`` says it
    already holds what is asked (a big project takes minutes to generate), generated
    afresh otherwise."""
    if folder is not None:
        root = Path(folder).resolve()
        if not holds(root):
            shutil.rmtree(root, ignore_errors=True)
            generate(root)
        yield root
        return
    with tempfile.TemporaryDirectory(prefix="unotest-scale-") as tmp:
        root = Path(tmp) / "project"
        generate(root)
        yield root


# ---------------------------------------------------------------------------
# processes
# ---------------------------------------------------------------------------


def clean_env() -> dict[str, str]:
    """This environment without ``UNOTEST_*``: what the bench's shell set for itself
    must not steer the ``unotest`` it measures."""
    return {k: v for k, v in os.environ.items() if not k.startswith("UNOTEST_")}


def spread(times: list[float]) -> str:
    """The range of the runs behind a median: how much this machine moved meanwhile."""
    return f"  ({min(times):.2f} to {max(times):.2f} s)" if len(times) > 1 else ""


def run_timed(command: list[str], cwd: Path) -> tuple[float, str]:
    """Run ``command`` to its end: its wall time and stdout; the bench exits, with its
    output, when it fails (a figure of a failed run is no figure)."""
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        shown = " ".join(command)
        sys.exit(f"benchmark failed ({done.returncode}): {shown}\n{done.stdout}\n{done.stderr}")
    return elapsed, done.stdout


def stop(process: subprocess.Popen[Any], sig: int = signal.SIGTERM, grace: float = 10.0) -> None:
    """End a process the bench started: ``sig``, up to ``grace`` seconds to exit, then
    SIGKILL; nothing is left running, even when the bench failed halfway."""
    if process.poll() is not None:
        return
    process.send_signal(sig)
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def rss_kib(pid: int) -> int:
    """The resident memory of one process (``VmRSS`` of ``/proc/<pid>/status``, Linux),
    in KiB; 0 for a process that has none (it has exited)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


class WatchDaemon:
    """A running ``unotest watch --json``: how long it took to say ``daemon.started``
    (its first load, cold) and its events socket, read line by line."""

    def __init__(self, started_s: float, port: int) -> None:
        self.started_s = started_s
        self.events: IO[bytes] = socket.create_connection(("127.0.0.1", port)).makefile("rb")
        first = json.loads(self.events.readline())
        assert first["type"] == "snapshot", first

    def until(self, kind: str) -> tuple[dict[str, Any], float]:
        """The next event of ``kind`` (earlier ones passed over; an ``error`` printed)
        and when it was read (``perf_counter``)."""
        while True:
            line = self.events.readline()
            if not line:
                raise SystemExit(f"the daemon closed its socket before {kind}")
            event = json.loads(line)
            if event["type"] == kind:
                return event, time.perf_counter()
            if event["type"] == "error":
                print(f"  (error: {json.dumps(event)[:300]})")


@contextmanager
def watch_daemon(root: Path, *options: str) -> Iterator[WatchDaemon]:
    """``python -m unotest watch --json *options`` on ``root`` until the block ends
    (then Ctrl+C, as a person stops it)."""
    began = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "unotest", "watch", "--json", *options],
        cwd=root,
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONSAFEPATH": "1"},  # the project's unotest/ is no package
    )
    try:
        assert process.stdout is not None
        started = json.loads(process.stdout.readline())
        assert started["type"] == "daemon.started", started
        started_s = time.perf_counter() - began
        # --json prints every event too: a pipe left unread would stop the daemon
        threading.Thread(target=process.stdout.read, daemon=True).start()
        yield WatchDaemon(started_s, started["server"]["port"])
    finally:
        stop(process, signal.SIGINT, grace=60)


# ---------------------------------------------------------------------------
# a run directory
# ---------------------------------------------------------------------------


def read_events(path: Path) -> list[dict[str, Any]]:
    """The events of a ``steps.jsonl`` so far: whole lines only (a run may be writing
    the last one); none when the file is not there yet."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    return [json.loads(line) for line in data.split(b"\n")[:-1] if line.strip()]


def run_dir_of(runs: Path, pid: int) -> Path | None:
    """The run directory under ``runs`` whose manifest names runner ``pid``, if made."""
    for manifest in runs.glob("*/manifest.json"):
        try:
            if json.loads(manifest.read_text()).get("pid") == pid:
                return manifest.parent
        except (OSError, ValueError):
            continue  # being written
    return None


class LineTail:
    """A file another process appends to (``steps.jsonl``), read from where the last
    read ended: whole lines only, a partial last one kept for the next read."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.pending = b""
        self.read_at = 0.0
        """When the last read returned (``perf_counter``): when its lines were seen."""

    def read(self) -> list[bytes]:
        """The whole lines appended since the last read (none when the file is not
        there yet)."""
        try:
            with open(self.path, "rb") as handle:
                handle.seek(self.offset)
                data = handle.read()
        except FileNotFoundError:
            return []
        self.read_at = time.perf_counter()
        self.offset += len(data)
        *lines, self.pending = (self.pending + data).split(b"\n")
        return lines


def append_command(path: Path, command: Mapping[str, Any]) -> tuple[float, float]:
    """``command`` appended to a run's ``commands.jsonl`` as ``unotest dbg`` does (one
    ``os.write`` on an ``O_APPEND`` descriptor); ``perf_counter`` and epoch ms taken
    just before the write, where a command's latency starts."""
    data = (json.dumps(command) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        wall = time.time() * 1000
        started = time.perf_counter()
        os.write(fd, data)
    finally:
        os.close(fd)
    return started, wall
