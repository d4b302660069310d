"""Starting a run as a child process that outlives its starter.

One launcher for every front end that starts runs without a terminal (the MCP server,
the viewer): the child is ``unotest e2e …`` / ``unotest collection …`` in a session of
its own (a Ctrl-C to the starter's process group does not reach it), with
``UNOTEST_OUTPUT_TO_RUN_DIR=1``, so the child itself sends its stdout and stderr into the
run's ``stdout.log``/``stderr.log`` (:func:`runner.store.rundir.capture_output_into`) as soon
as its run directory exists: the files stay whole whether or not anyone follows them,
and the run goes on if its starter dies. What the child prints before that (a
``check`` problem, an unknown name) goes to temporary files and becomes the error when
the child exits without starting.

:func:`launch_run` returns once the run has written its first event (``run:started``,
``collection-run:started``). Its output is the run directory's: whoever forwards it
(the viewer's ``log:line``, :mod:`unotest.viewer.run_logs`) reads the two logs from
any process, so a restarted viewer follows a run it did not start the same way.

A run started with ``owner_pid`` watches that process and ends with it
(``UNOTEST_OWNER_PID``, :class:`runner.processes.OwnerWatch`); one started without
has no owner, whatever the starter's environment said.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from runner import protocol
from runner.errors import UsageError
from runner.files import append_line
from runner.processes import OWNER_ENV
from runner.store.runs import Stream, events_of, output_path, read_manifest

__all__ = [
    "START_TIMEOUT_S",
    "LaunchedRun",
    "Stream",
    "launch_run",
    "stop_group",
]

START_TIMEOUT_S = 60.0
POLL_S = 0.05
MAX_LINE_BYTES = 1024 * 1024
"""A longer line is handed over cut, the rest of it up to its newline dropped."""
_RECENT_RUNS = 50

_STREAMS: tuple[Stream, ...] = ("stdout", "stderr")


@dataclass
class LaunchedRun:
    run_id: str
    run_dir: Path
    kind: protocol.RunKind
    process: subprocess.Popen[bytes]
    early_output: list[tuple[Stream, str]] = field(default_factory=list)
    """What the child printed before its run directory took its output (a runner
    warning, e.g. a breakpoint that matches no statement), ``mask``-ed, line by line."""


def _child_env(env: Mapping[str, str | None], owner_pid: int | None) -> dict[str, str]:
    merged = dict(os.environ)
    for key, value in env.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    merged["UNOTEST_OUTPUT_TO_RUN_DIR"] = "1"  # the run's logs, whoever follows them
    merged.pop(OWNER_ENV, None)
    if owner_pid is not None:
        merged[OWNER_ENV] = str(owner_pid)
    return merged


async def launch_run(
    root: Path,
    argv: list[str],
    kind: protocol.RunKind,
    *,
    env: Mapping[str, str | None] | None = None,
    owner_pid: int | None = None,
    mask: Callable[[str], str] = lambda text: text,
    timeout: float = START_TIMEOUT_S,
) -> LaunchedRun:
    """Spawn ``argv --root ROOT`` in ``root`` and return once its run has started.

    ``env`` overrides the environment (``None`` unsets). A child that exits before its
    run starts raises :class:`UsageError` with what it printed (``mask``-ed), one that
    does not start within ``timeout`` is stopped and raises the same.

    What the child printed before its run directory took its output is kept: appended
    to the run's ``stdout.log``/``stderr.log``, where a reader of the run directory
    (``get_run``, the viewer) finds it, and in :attr:`LaunchedRun.early_output`."""
    with tempfile.TemporaryFile() as early_out, tempfile.TemporaryFile() as early_err:
        process = subprocess.Popen(
            [*argv, "--root", str(root)],
            cwd=root,
            stdin=subprocess.DEVNULL,
            stdout=early_out,
            stderr=early_err,
            env=_child_env(env or {}, owner_pid),
            start_new_session=True,
        )
        run_dir = await _until_started(root / protocol.UNOTEST_DIR, process, kind, timeout)
        if run_dir is None:
            raise UsageError(mask(_early_text(process, early_err, early_out)))
        early: tuple[tuple[Stream, IO[bytes]], ...] = (
            ("stdout", early_out),
            ("stderr", early_err),
        )
        run = LaunchedRun(run_dir.name, run_dir, kind, process)
        for stream, handle in early:
            handle.seek(0)
            for line in handle.read().decode("utf-8", "replace").splitlines():
                run.early_output.append((stream, mask(line)))
        _keep_early_output(run_dir, run.early_output)
    return run


def _keep_early_output(run_dir: Path, lines: list[tuple[Stream, str]]) -> None:
    """Append the early lines to the run's logs. The child appends to them too (its
    descriptors are ``O_APPEND``): each write lands whole, after what it wrote so far."""
    for stream in _STREAMS:
        text = "".join(f"{line}\n" for kind, line in lines if kind == stream)
        if not text:
            continue
        with contextlib.suppress(OSError):
            append_line(output_path(run_dir, stream), text.encode("utf-8"), create=True)


async def _until_started(
    unotest_dir: Path, process: subprocess.Popen[bytes], kind: protocol.RunKind, timeout: float
) -> Path | None:
    """The run directory once its first event is there; ``None`` if the child exited
    first. One that does not get there in time is stopped."""
    first_event = "run:started" if kind == "scenario" else "collection-run:started"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run_dir = _run_dir_of(unotest_dir / protocol.RUNS_SUBDIR, process.pid)
        if run_dir is not None and any(e.get("kind") == first_event for e in events_of(run_dir)):
            return run_dir
        if process.poll() is not None:
            return None
        await asyncio.sleep(POLL_S)
    await stop_group(process)
    raise UsageError(f"the run did not start within {timeout:g} s")


def _early_text(process: subprocess.Popen[bytes], err: IO[bytes], out: IO[bytes]) -> str:
    texts = []
    for handle in (err, out):
        handle.seek(0)
        texts.append(handle.read().decode("utf-8", "replace").strip())
    text = "\n".join(t for t in texts if t)
    return text or f"the run exited with {process.returncode} before it started"


def _run_dir_of(runs_dir: Path, pid: int) -> Path | None:
    """The newest run directory whose manifest names ``pid`` as its runner."""
    try:
        entries = sorted(runs_dir.iterdir(), key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return None
    for path in entries[:_RECENT_RUNS]:
        manifest = read_manifest(path)
        if manifest is not None and manifest.get("pid") == pid:
            return path
    return None


async def stop_group(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the run's process group (the runner closes its browser), then SIGKILL."""
    for sig, grace in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 1.0)):
        try:
            os.killpg(process.pid, sig)
        except OSError:
            return
        deadline = time.monotonic() + grace
        while process.poll() is None and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        if process.poll() is not None:
            return
    with contextlib.suppress(OSError):
        process.wait(timeout=0)
