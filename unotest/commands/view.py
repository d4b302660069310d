"""``unotest view``: serve the project to a browser (``unotest.viewer``).

One viewer per project: a live ``unotest/.viewer.lock`` means one already serves it,
so its URL is printed (and opened) instead of starting a second. ``--detach`` serves
from a background process writing ``unotest/.viewer.log``; ``--stop`` ends the viewer
the lock names. A viewer started again takes the last one's port when it is free (unless
``--port`` says another) and, on that port, its token, so the pages left open simply
reconnect; ``--new-token`` makes a new one (the old URL stops working).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from runner import protocol
from runner.errors import UsageError
from runner.processes import read_proc_stat
from runner.project.root import find_project_root
from unotest.console import print_warnings
from unotest.exit_codes import EXIT_ABORTED, EXIT_OK
from unotest.viewer.context import ViewerContext
from unotest.viewer.lockfile import (
    LastViewer,
    ViewerLock,
    is_live,
    last_viewer,
    live_lock,
    lock_path,
    read_lock,
    remember_viewer,
    remove_lock,
    write_lock,
)

__all__ = ["view_command"]

_DETACH_WAIT_S = 30.0
_STOP_WAIT_S = 10.0
_OPEN_WAIT_S = 5.0


def view_command(args: argparse.Namespace) -> int:
    root = find_project_root(Path.cwd(), args.root, new_project_ok=True)
    if args.stop:
        return _stop(root)
    running = live_lock(root)
    if running is not None:
        print(running["url"], flush=True)
        print(f"a viewer already serves this project (pid {running['pid']})", file=sys.stderr)
        _open(running["url"], args.no_open, wait=True)
        return EXIT_OK
    if args.detach:
        return _detach(root, args)
    return _serve(root, args)


def _serve(root: Path, args: argparse.Namespace) -> int:
    from unotest.viewer.security import new_token
    from unotest.viewer.server import bind_preferring, serve, viewer_url

    if args.host in ("0.0.0.0", "::"):
        print_warnings(
            [
                f"--host {args.host} serves the viewer to every network this machine is on; "
                "the token is all that protects code execution (eval, terminals)"
            ]
        )
    last = last_viewer(root, args.host)
    sock = bind_preferring(args.host, args.port, last.port if last else None)
    port = sock.getsockname()[1]
    kept = last is not None and last.port == port and not args.new_token
    token = last.token if last is not None and kept else new_token()
    ctx = ViewerContext(root=root, token=token, host=args.host, port=port)
    url = viewer_url(ctx)

    def ready() -> None:
        write_lock(root, url)
        remember_viewer(root, LastViewer(args.host, port, token))
        print(url, flush=True)
        print(f"serving {root} (Ctrl-C stops it)", file=sys.stderr, flush=True)
        _open(url, args.no_open)

    try:
        received = serve(ctx, sock, ready)
    finally:
        remove_lock(root)
        sock.close()
    if received == signal.SIGINT:
        print("viewer stopped (interrupted)", file=sys.stderr)
        return EXIT_ABORTED
    print("viewer stopped", file=sys.stderr)
    return EXIT_OK


def _open(url: str, no_open: bool, *, wait: bool = False) -> None:
    """The default browser, unless told not to or there is no display to show it on.

    In a thread, so a slow browser start never delays the server; ``wait`` (a few
    seconds at most) when this process is about to exit and would end the thread."""
    if no_open:
        return
    if sys.platform.startswith("linux") and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    ):
        return

    def opening() -> None:
        import webbrowser

        try:
            webbrowser.open(url)
        except Exception:  # a broken browser setting must not stop the server
            return

    thread = threading.Thread(target=opening, name="unotest-open-browser", daemon=True)
    thread.start()
    if wait:
        thread.join(_OPEN_WAIT_S)


def _detach(root: Path, args: argparse.Namespace) -> int:
    """Serve from a new session with output in ``unotest/.viewer.log``; print its URL once
    its lock appears."""
    log_path = root / protocol.UNOTEST_DIR / protocol.LOG_FILE
    log_path.parent.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "unotest", "view", "--root", str(root)]
    command += ["--host", args.host, "--port", str(args.port), "--no-open"]
    command += ["--new-token"] if args.new_token else []
    env = dict(os.environ, PYTHONSAFEPATH="1")  # a project's unotest/ is not our package
    package_parent = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_parent, env.get("PYTHONPATH")) if p)
    # The log holds the URL, and so the token: for this user only.
    fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    os.fchmod(fd, 0o600)
    with os.fdopen(fd, "ab") as log:
        child = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=root,
            env=env,
            start_new_session=True,
        )
    deadline = time.monotonic() + _DETACH_WAIT_S
    while time.monotonic() < deadline:
        lock = read_lock(root)
        if lock is not None and lock["pid"] == child.pid:
            # stdout is the URL alone (URL=$(unotest view --detach)); the rest is said
            # on stderr, for a person.
            print(lock["url"], flush=True)
            print(
                f"viewer running in the background (pid {child.pid}); log: {log_path}",
                file=sys.stderr,
            )
            _open(lock["url"], args.no_open, wait=True)
            return EXIT_OK
        if child.poll() is not None:
            raise UsageError(f"the viewer did not start (see {log_path})")
        time.sleep(0.05)
    child.terminate()
    raise UsageError(f"the viewer did not start within {_DETACH_WAIT_S:.0f} s (see {log_path})")


def _gone(lock: ViewerLock) -> bool:
    stat = read_proc_stat(lock["pid"])
    return not is_live(lock) or (stat is not None and stat[0] in ("Z", "X"))


def _stop(root: Path) -> int:
    lock = read_lock(root)
    if lock is None:
        print("no viewer serves this project")
        return EXIT_OK
    pid = lock["pid"]
    if _gone(lock):
        lock_path(root).unlink(missing_ok=True)
        print(f"the viewer (pid {pid}) was already gone; removed its stale lock")
        return EXIT_OK
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    except PermissionError:
        raise UsageError(f"the viewer (pid {pid}) belongs to another user") from None
    deadline = time.monotonic() + _STOP_WAIT_S
    while not _gone(lock):
        if time.monotonic() >= deadline:
            raise UsageError(f"the viewer (pid {pid}) did not stop within {_STOP_WAIT_S:.0f} s")
        time.sleep(0.05)
    if read_lock(root) == lock:
        lock_path(root).unlink(missing_ok=True)
    print(f"stopped the viewer (pid {pid})")
    return EXIT_OK
