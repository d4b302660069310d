"""``unotest watch``: re-run what a save affects, say why, in warm browsers.

The daemon itself is :class:`runner.watch.daemon.WatchDaemon`; this module is its
front end: the options, ``--status`` (the discovery file's four states), the refusal
to start a second daemon on a project (it says where the first listens, exit 0),
the channels a person or a tool reads on stdout (NDJSON with ``--json``, readable
lines otherwise), the keys on a terminal (Enter, ``a``, ``f``, ``q``), and a clean
stop on SIGINT/SIGTERM (the batch cancelled, browsers closed, the file removed).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import sys
import termios
import tty
from importlib.metadata import version
from pathlib import Path
from typing import Any

# Imported only when `unotest watch` runs (its options are built in cli.py).

__all__ = ["watch_command"]


def watch_command(args: argparse.Namespace) -> int:
    from runner.project.index import find_project_root
    from runner.watch.discovery import read_discovery
    from unotest.exit_codes import EXIT_FAILED, EXIT_OK

    root = find_project_root(Path.cwd(), args.root)
    if args.status:
        return _status(root, args.json)
    _check_numbers(args)
    found = read_discovery(root)
    if found.status == "running" and found.info is not None:
        info = found.info
        asked = _options_asked(args, info["port"])
        print(
            f"a watch daemon already runs for this project (pid {info['pid']}, events on "
            f"{info['host']}:{info['port']})"
            + (
                f"; it keeps the options it started with: to watch with {asked}, stop it "
                f"first (Ctrl-C where it runs, or kill {info['pid']})"
                if asked
                else ""
            ),
            file=sys.stderr,
        )
        # Asked for nothing in particular, a daemon watching is what was wanted; asked
        # for a scope or a size it does not have, a script must not think it got them.
        return EXIT_FAILED if asked else EXIT_OK
    return asyncio.run(_serve(root, args))


def _options_asked(args: argparse.Namespace, running_port: int | None) -> str:
    """The options given that shape a daemon (``--collection``, ``--workers``,
    ``--port``), as typed; empty when none differs from its default. A ``--port`` the
    running daemon listens on is what was asked (the discovery file says its port, not
    its collection or workers)."""
    asked = []
    if args.collection is not None:
        asked.append(f"--collection {args.collection}")
    if args.workers != 1:
        asked.append(f"--workers {args.workers}")
    if args.port != 0 and args.port != running_port:
        asked.append(f"--port {args.port}")
    return " ".join(asked)


def _check_numbers(args: argparse.Namespace) -> None:
    from runner.errors import UsageError

    if args.workers < 1:
        raise UsageError(f"--workers must be 1 or more, not {args.workers}")
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port must be between 0 and 65535, not {args.port}")
    if args.idle_ms < 0 or args.max_ms < 0:
        raise UsageError("--idle-ms and --max-ms must not be negative")


def _status(root: Path, as_json: bool) -> int:
    from runner.watch.discovery import read_discovery
    from unotest.exit_codes import EXIT_FAILED, EXIT_OK

    found = read_discovery(root)
    if as_json:
        data: dict[str, Any] = {"status": found.status, "info": found.info}
        if found.reason is not None:
            data["reason"] = found.reason
        print(json.dumps(data))
    else:
        line: str = found.status
        if found.info is not None:
            info = found.info
            line += f": pid {info['pid']}, events on {info['host']}:{info['port']}"
        if found.reason is not None:
            line += f" ({found.reason})"
        print(line)
    return EXIT_OK if found.status == "running" else EXIT_FAILED


async def _serve(root: Path, args: argparse.Namespace) -> int:
    from runner.watch.daemon import DaemonOptions, WatchDaemon
    from runner.watch.discovery import ProjectClaimed
    from runner.watch.lines import LinePrinter
    from runner.watch.socket_channel import encode
    from unotest.exit_codes import EXIT_FAILED, EXIT_OK

    options = DaemonOptions(
        root=root,
        collection=args.collection,
        workers=args.workers,
        host=args.host,
        port=args.port,
        idle_ms=args.idle_ms,
        max_ms=args.max_ms,
        version=version("unotest"),
    )
    daemon = WatchDaemon(options)
    keys = sys.stdin.isatty()
    if args.json:
        daemon.bus.listen(lambda event: _write(encode(event)))
    else:
        printer = LinePrinter(daemon.root)
        printer.keys = keys
        daemon.bus.listen(printer)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    reason = ["stopped"]

    def request_stop(why: str) -> None:
        reason[0] = why
        stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(sig, request_stop, sig.name)
    try:
        await daemon.start()
    except ProjectClaimed as claimed:
        # Another daemon is starting (its discovery file comes once its socket listens).
        await daemon.stop("could not start")
        asked = _options_asked(args, None)
        print(
            "a watch daemon is starting for this project"
            + (f" (pid {claimed.pid})" if claimed.pid else "")
            + ": unotest watch --status says where it listens"
            + (
                f"; it keeps the options it started with: to watch with {asked}, stop it first"
                if asked
                else ""
            ),
            file=sys.stderr,
        )
        return EXIT_FAILED if asked else EXIT_OK
    except BaseException:
        await daemon.stop("could not start")
        raise
    with _keys(loop, daemon, request_stop) if keys else contextlib.nullcontext():
        await stop.wait()
    await daemon.stop(reason[0])
    return EXIT_OK


def _write(data: bytes) -> None:
    with contextlib.suppress(BrokenPipeError, ValueError):
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()


@contextlib.contextmanager
def _keys(loop: asyncio.AbstractEventLoop, daemon: Any, request_stop: Any) -> Any:
    """The terminal in cbreak mode (one key at a time, no echo) while the daemon runs."""
    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    tty.setcbreak(fd)

    def read_key() -> None:
        try:
            key = sys.stdin.read(1)
        except (OSError, ValueError):
            key = ""
        if key in ("", "q"):
            request_stop("q")
        elif key in ("\n", "\r"):
            daemon.trigger("last")
        elif key == "a":
            daemon.trigger("all")
        elif key == "f":
            daemon.trigger("failed")

    loop.add_reader(fd, read_key)
    try:
        yield
    finally:
        loop.remove_reader(fd)
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
