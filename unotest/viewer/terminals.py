"""Terminals on ``/ws/terminal``: PTY sessions driven by the protocol's ``Terminal*`` messages.

One ``TerminalHub`` per socket holds that socket's terminals (several, each under the id the
client chose) and one bounded ``Outbox`` of frames to send. Every frame, both ways, is
``{"event": "terminal", "data": <message>}`` (``TERMINAL_WS_EVENT``).

A terminal is a PTY whose slave is the child's stdin, stdout, stderr and controlling
terminal, the child leading a new session (so its process group is its pid). Its output is
read with ``loop.add_reader`` on the non-blocking master, decoded as UTF-8 (an incremental
decoder, replacement characters for bad bytes) and sent in chunks. Jupyter's terminado is
the reference for behaviour: the window size through ``TIOCSWINSZ``, ``close`` hangs up the
process group (SIGHUP, then SIGKILL after a grace).

Back-pressure: when a socket's outbox holds ``HIGH_WATER`` frames, its terminals stop
reading their PTYs until the sender has drained it to ``LOW_WATER``; the child then blocks
on a full PTY, as it would behind a slow real terminal. The receive side waits for room
too, so a client that never reads holds a bounded amount of memory and never delays the
event loop or any other client.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import fcntl
import json
import os
import pty
import shutil
import signal
import struct
import sys
import termios
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Literal, TypeAlias, TypedDict

from runner.protocol import TERMINAL_WS_EVENT

TerminalKind: TypeAlias = Literal["local", "claude", "codex"]
TERMINAL_KINDS: tuple[TerminalKind, ...] = ("local", "claude", "codex")

READ_CHUNK = 16 * 1024
"""Bytes read from a PTY per readable event: one ``output`` frame at most."""
HIGH_WATER = 64
"""Frames queued for one socket before its terminals stop reading their PTYs."""
LOW_WATER = 16
"""Frames queued for one socket below which its terminals read again."""
MAX_TERMINALS = 16
"""Terminals open at once on one socket."""
MAX_PENDING_INPUT = 1024 * 1024
"""Bytes typed but not yet taken by a child; more is dropped with an error frame."""
MAX_ID_LENGTH = 128
MAX_WINDOW = 10_000
"""Largest ``cols`` or ``rows`` accepted."""
TERMINATE_GRACE_S = 2.0
"""How long a process group has to end after SIGHUP before SIGKILL."""
EXIT_DRAIN_BYTES = 256 * 1024
"""Output still read from the PTY once its child has ended (what it printed last)."""


# --- the protocol's messages (mirrors of unotest-protocol-0.5.0.d.ts) ---------------------


class TerminalSpawnMessage(TypedDict):
    type: Literal["spawn"]
    id: str
    kind: TerminalKind
    cols: int
    rows: int


class TerminalDataMessage(TypedDict):
    type: Literal["data"]
    id: str
    data: str
    """Raw bytes the user typed, forwarded to the PTY stdin."""


class TerminalResizeMessage(TypedDict):
    type: Literal["resize"]
    id: str
    cols: int
    rows: int


class TerminalCloseMessage(TypedDict):
    type: Literal["close"]
    id: str


TerminalClientMessage: TypeAlias = (
    TerminalSpawnMessage | TerminalDataMessage | TerminalResizeMessage | TerminalCloseMessage
)


class TerminalOutputMessage(TypedDict):
    type: Literal["output"]
    id: str
    data: str
    """Raw PTY stdout/stderr bytes to write to the xterm instance."""


class TerminalExitMessage(TypedDict):
    type: Literal["exit"]
    id: str
    exitCode: int | None


class TerminalErrorMessage(TypedDict):
    """Spawn failure (e.g. ``claude`` not on PATH) or a refused frame, for the tab to show."""

    type: Literal["error"]
    id: str
    message: str


TerminalServerMessage: TypeAlias = (
    TerminalOutputMessage | TerminalExitMessage | TerminalErrorMessage
)


class TerminalFrame(TypedDict):
    """One WebSocket text frame on ``/ws/terminal``, either way."""

    event: Literal["terminal"]
    data: TerminalClientMessage | TerminalServerMessage


def terminal_output(terminal_id: str, data: str) -> TerminalOutputMessage:
    return {"type": "output", "id": terminal_id, "data": data}


def terminal_exit(terminal_id: str, exit_code: int | None) -> TerminalExitMessage:
    return {"type": "exit", "id": terminal_id, "exitCode": exit_code}


def terminal_error(terminal_id: str, message: str) -> TerminalErrorMessage:
    return {"type": "error", "id": terminal_id, "message": message}


def terminal_frame(message: TerminalClientMessage | TerminalServerMessage) -> TerminalFrame:
    return {"event": "terminal", "data": message}


# --- reading client frames -------------------------------------------------------------------


class FrameError(Exception):
    """A client frame refused; ``terminal_id`` is the frame's id when it had one ("" if not)."""

    def __init__(self, terminal_id: str, message: str) -> None:
        super().__init__(message)
        self.terminal_id = terminal_id
        self.message = message


def parse_client_frame(text: str) -> TerminalClientMessage:
    """One text frame → the client message it carries, or ``FrameError`` in one sentence."""
    try:
        frame = json.loads(text)
    except ValueError:
        raise FrameError("", "the frame is not JSON") from None
    if not isinstance(frame, dict) or frame.get("event") != TERMINAL_WS_EVENT:
        raise FrameError("", f'a frame must be {{"event": "{TERMINAL_WS_EVENT}", "data": {{...}}}}')
    data = frame.get("data")
    if not isinstance(data, dict):
        raise FrameError("", "the frame's data must be an object")
    terminal_id = data.get("id")
    if not isinstance(terminal_id, str) or not 0 < len(terminal_id) <= MAX_ID_LENGTH:
        raise FrameError("", f"a terminal id must be a string of 1 to {MAX_ID_LENGTH} characters")
    kind = data.get("type")
    if kind == "spawn":
        return _spawn_message(terminal_id, data)
    if kind == "data":
        if not isinstance(data.get("data"), str):
            raise FrameError(terminal_id, "a data message needs data (a string)")
        return {"type": "data", "id": terminal_id, "data": data["data"]}
    if kind == "resize":
        cols, rows = _window(terminal_id, data)
        return {"type": "resize", "id": terminal_id, "cols": cols, "rows": rows}
    if kind == "close":
        return {"type": "close", "id": terminal_id}
    raise FrameError(
        terminal_id, f"unknown message type {kind!r} (expected spawn, data, resize or close)"
    )


def _spawn_message(terminal_id: str, data: Mapping[str, object]) -> TerminalSpawnMessage:
    kind = data.get("kind")
    for known in TERMINAL_KINDS:
        if kind == known:
            cols, rows = _window(terminal_id, data)
            return {"type": "spawn", "id": terminal_id, "kind": known, "cols": cols, "rows": rows}
    raise FrameError(
        terminal_id, f"unknown terminal kind {kind!r} (expected {', '.join(TERMINAL_KINDS)})"
    )


def _window(terminal_id: str, data: Mapping[str, object]) -> tuple[int, int]:
    cols, rows = data.get("cols"), data.get("rows")
    for value in (cols, rows):
        if not isinstance(value, int) or isinstance(value, bool) or not 0 < value <= MAX_WINDOW:
            raise FrameError(
                terminal_id, f"cols and rows must be whole numbers from 1 to {MAX_WINDOW}"
            )
    assert isinstance(cols, int) and isinstance(rows, int)
    return cols, rows


# --- the outbox of one socket ------------------------------------------------------------------


class Outbox:
    """The frames waiting for one socket, with the high and low water marks of back-pressure."""

    def __init__(self) -> None:
        self._frames: deque[TerminalFrame] = deque()
        self._ready = asyncio.Event()
        self._room = asyncio.Event()
        self._room.set()
        self.drained: list[Callable[[], None]] = []
        """Called when the outbox falls to ``LOW_WATER`` (paused terminals read again)."""

    @property
    def full(self) -> bool:
        return len(self._frames) >= HIGH_WATER

    def put(self, message: TerminalServerMessage) -> None:
        """Queue a frame. Never blocks: the callers bound themselves by ``full``."""
        self._frames.append(terminal_frame(message))
        self._ready.set()
        if self.full:
            self._room.clear()

    async def get(self) -> TerminalFrame:
        while not self._frames:
            self._ready.clear()
            await self._ready.wait()
        frame = self._frames.popleft()
        if len(self._frames) <= LOW_WATER:
            self._room.set()
            for resume in list(self.drained):
                resume()
        return frame

    async def room(self) -> None:
        """Wait until the outbox is below its high water mark."""
        await self._room.wait()


# --- one terminal -----------------------------------------------------------------------------


_SET_CONTROLLING_TTY = (
    "import fcntl, os, sys, termios\n"
    "try:\n"
    "    fcntl.ioctl(0, termios.TIOCSCTTY, 0)\n"
    "except OSError:\n"
    "    pass\n"
    "os.execv(sys.argv[1], sys.argv[1:])\n"
)
"""Run in the child, the new session's leader: make the PTY (its stdin) its controlling
terminal, then become the program. A trampoline instead of ``preexec_fn``, which is not safe
in a process with threads."""


def command_for(kind: TerminalKind, env: Mapping[str, str]) -> list[str]:
    """The program a terminal of ``kind`` runs, or ``FrameError``'s sentence when it is missing."""
    if kind == "local":
        shell = env.get("SHELL") or ""
        found = shutil.which(shell) if shell else None
        return [found or "/bin/sh"]
    found = shutil.which(kind, path=env.get("PATH", os.defpath))
    if found is None:
        raise FrameError(
            "", f"{kind} is not installed (not on PATH): install it, or open a local terminal"
        )
    return [found]


def set_window(fd: int, cols: int, rows: int) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


def _exit_code(returncode: int | None) -> int | None:
    """A signal's death as a shell reports it (128 + the signal), null if unknown."""
    if returncode is None:
        return None
    return returncode if returncode >= 0 else 128 - returncode


PROC: Path | None = Path("/proc") if Path("/proc/self/stat").exists() else None


def session_groups(session: int) -> set[int]:
    """The process groups of the session's live (not zombie) processes, from ``/proc``.

    A shell with job control puts each job in a group of its own; ending the terminal
    ends them all. Empty where there is no ``/proc``.
    """
    groups: set[int] = set()
    if PROC is None:
        return groups
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 3 and fields[0] != "Z" and fields[3] == str(session):
            groups.add(int(fields[2]))
    return groups


class Terminal:
    """One PTY and the process group running in it."""

    def __init__(
        self, terminal_id: str, process: asyncio.subprocess.Process, master: int, outbox: Outbox
    ) -> None:
        self.id = terminal_id
        self.process = process
        self.master = master
        self.outbox = outbox
        self._loop = asyncio.get_running_loop()
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._reading = False
        self._eof = False
        self._pending_input = bytearray()
        self._writing = False
        self.ended = asyncio.Event()
        outbox.drained.append(self.resume)
        self.resume()

    @classmethod
    async def spawn(
        cls, message: TerminalSpawnMessage, root: Path, outbox: Outbox, env: Mapping[str, str]
    ) -> Terminal:
        """Open a PTY of the asked size in ``root`` running ``kind``'s program."""
        argv = command_for(message["kind"], env)
        master, slave = pty.openpty()
        try:
            set_window(slave, message["cols"], message["rows"])
            os.set_blocking(master, False)
            child_env = {**env, "TERM": "xterm-256color", "COLORTERM": "truecolor"}
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-I",
                "-S",
                "-c",
                _SET_CONTROLLING_TTY,
                *argv,
                stdin=slave,
                stdout=slave,
                stderr=slave,
                cwd=root,
                env=child_env,
                start_new_session=True,
            )
        except BaseException:
            os.close(master)
            raise
        finally:
            os.close(slave)
        return cls(message["id"], process, master, outbox)

    # reading the PTY

    def resume(self) -> None:
        if not self._reading and not self._eof and self.master >= 0 and not self.outbox.full:
            self._loop.add_reader(self.master, self._on_readable)
            self._reading = True

    def _pause(self) -> None:
        if self._reading:
            self._loop.remove_reader(self.master)
            self._reading = False

    def _on_readable(self) -> None:
        if self.outbox.full:
            self._pause()
            return
        try:
            chunk = os.read(self.master, READ_CHUNK)
        except BlockingIOError:
            return
        except OSError:  # EIO: every slave end is closed
            chunk = b""
        if not chunk:
            self._eof = True
            self._pause()
            return
        self._emit(chunk, final=False)

    def _emit(self, chunk: bytes, *, final: bool) -> None:
        text = self._decoder.decode(chunk, final=final)
        if text:
            self.outbox.put(terminal_output(self.id, text))

    def _drain(self) -> None:
        """What the child printed before it ended, up to ``EXIT_DRAIN_BYTES``."""
        left = EXIT_DRAIN_BYTES
        while left > 0 and not self._eof:
            try:
                chunk = os.read(self.master, min(READ_CHUNK, left))
            except OSError:
                break
            if not chunk:
                break
            left -= len(chunk)
            self._emit(chunk, final=False)
        self._emit(b"", final=True)

    # writing to the PTY

    def write(self, data: str) -> None:
        """Forward typed text to the child; refused with ``FrameError`` past the input bound."""
        encoded = data.encode("utf-8", errors="replace")
        if len(self._pending_input) + len(encoded) > MAX_PENDING_INPUT:
            raise FrameError(self.id, "input dropped: the terminal is not reading what was typed")
        self._pending_input += encoded
        self._flush_input()

    def _flush_input(self) -> None:
        if self.master < 0:
            self._pending_input.clear()
            return
        try:
            written = os.write(self.master, self._pending_input) if self._pending_input else 0
        except BlockingIOError:
            written = 0
        except OSError:
            self._pending_input.clear()
            written = 0
        del self._pending_input[:written]
        if self._pending_input and not self._writing:
            self._loop.add_writer(self.master, self._flush_input)
            self._writing = True
        elif not self._pending_input and self._writing:
            self._loop.remove_writer(self.master)
            self._writing = False

    def resize(self, cols: int, rows: int) -> None:
        if self.master >= 0:
            set_window(self.master, cols, rows)

    # ending

    async def watch(self) -> None:
        """Wait for the child, send what it printed last, then its ``exit``."""
        try:
            returncode = await self.process.wait()
        finally:
            self._pause()
            if self._writing:
                self._loop.remove_writer(self.master)
                self._writing = False
            self._drain()
            with contextlib.suppress(ValueError):
                self.outbox.drained.remove(self.resume)
            os.close(self.master)
            self.master = -1
            self.ended.set()
        self.outbox.put(terminal_exit(self.id, _exit_code(returncode)))

    def _signal_groups(self, signum: int) -> None:
        groups = {self.process.pid, *session_groups(self.process.pid)}
        if self.master >= 0:
            with contextlib.suppress(OSError):
                groups.add(os.tcgetpgrp(self.master))  # a foreground job of its own
        groups.discard(0)  # tcgetpgrp of a PTY that is no one's controlling terminal
        groups.discard(os.getpgrp())  # never the server's own group
        for group in groups:
            with contextlib.suppress(OSError):
                os.killpg(group, signum)

    def _group_alive(self) -> bool:
        if session_groups(self.process.pid):
            return True
        try:
            os.killpg(self.process.pid, 0)
        except OSError:
            return False
        return PROC is None  # without /proc a zombie member cannot be told apart

    async def terminate(self, grace: float = TERMINATE_GRACE_S) -> None:
        """End the process group: SIGHUP (and SIGCONT for stopped jobs), SIGKILL after ``grace``."""
        self._signal_groups(signal.SIGHUP)
        self._signal_groups(signal.SIGCONT)
        deadline = self._loop.time() + grace
        while self._loop.time() < deadline and (not self.ended.is_set() or self._group_alive()):
            await asyncio.sleep(0.05)
        self._signal_groups(signal.SIGKILL)
        await self.ended.wait()


# --- one socket's terminals ----------------------------------------------------------------


Send: TypeAlias = Callable[[str], Awaitable[None]]


class TerminalHub:
    """The terminals of one socket: client frames in, server frames out through one outbox."""

    def __init__(self, root: Path, env: Mapping[str, str] | None = None) -> None:
        self.root = root
        self.env = env
        self.outbox = Outbox()
        self.terminals: dict[str, Terminal] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    async def send_loop(self, send: Send) -> None:
        """Send queued frames, one at a time, until cancelled or the socket fails."""
        while True:
            frame = await self.outbox.get()
            await send(json.dumps(frame, ensure_ascii=False))

    async def receive(self, text: str) -> None:
        """Handle one client text frame; a refused one answers an ``error`` frame."""
        await self.outbox.room()
        try:
            message = parse_client_frame(text)
            await self._dispatch(message)
        except FrameError as error:
            self.outbox.put(terminal_error(error.terminal_id, error.message))

    async def _dispatch(self, message: TerminalClientMessage) -> None:
        terminal_id = message["id"]
        if message["type"] == "spawn":
            await self._spawn(message)
            return
        terminal = self.terminals.get(terminal_id)
        if terminal is None:
            raise FrameError(terminal_id, f"no open terminal with id {terminal_id!r}")
        if message["type"] == "data":
            terminal.write(message["data"])
        elif message["type"] == "resize":
            terminal.resize(message["cols"], message["rows"])
        else:
            self._start(terminal.terminate())

    async def _spawn(self, message: TerminalSpawnMessage) -> None:
        terminal_id = message["id"]
        if terminal_id in self.terminals:
            raise FrameError(terminal_id, f"a terminal with id {terminal_id!r} is already open")
        if len(self.terminals) >= MAX_TERMINALS:
            raise FrameError(terminal_id, f"at most {MAX_TERMINALS} terminals can be open at once")
        env = dict(os.environ if self.env is None else self.env)
        try:
            terminal = await Terminal.spawn(message, self.root, self.outbox, env)
        except FrameError as error:
            raise FrameError(terminal_id, error.message) from None
        except OSError as error:
            raise FrameError(
                terminal_id, f"the {message['kind']} terminal could not start: {error.strerror}"
            ) from None
        self.terminals[terminal_id] = terminal
        self._start(self._watch(terminal))

    async def _watch(self, terminal: Terminal) -> None:
        try:
            await terminal.watch()
        finally:
            if self.terminals.get(terminal.id) is terminal:
                del self.terminals[terminal.id]

    def _start(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        """The socket is gone: end every terminal and wait for their process groups."""
        await asyncio.gather(
            *(terminal.terminate() for terminal in list(self.terminals.values())),
            return_exceptions=True,
        )
        await asyncio.gather(*list(self._tasks), return_exceptions=True)
