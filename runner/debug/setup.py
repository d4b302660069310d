"""The debugger's wiring for one run, in two steps because a bad ``--break`` must fail
before the run directory exists (nothing half-made is left behind), while the
controller, the command feed and the terminal prompt need that directory.

Who shows a pause: the terminal prompt when stdin is a TTY (``--debug``), otherwise a
one-line announcement on stderr; and only without the prompt does a pause that no
command reaches end the run after ``debug.idleTimeout`` (a person at the prompt is
there). A run whose owner (``unotest mcp``) names itself in the environment ends when
that owner does.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from dsl import ast
from dsl.interpreter import FunctionRef, Step
from dsl.scenario import ScenarioFile
from dsl.values import Value
from runner import protocol
from runner.browser.bridge import LoopBridge
from runner.debug.breakpoints import Breakpoints
from runner.debug.command_feed import IDLE_POLL_SECONDS, CommandFeed
from runner.debug.controller import DebugController
from runner.debug.prompt import PauseAnnouncer, TerminalPrompt
from runner.debug.reload import Reloader
from runner.errors import UsageError
from runner.processes import OwnerWatch
from runner.project.breakpoints_file import load_breakpoints_file
from runner.project.positions import parse_position, statement_starts
from runner.project.root import hooks_key
from runner.project.secrets import SecretMasker
from runner.store.rundir import RunDirectory

__all__ = ["DebugOptions", "prepare_breakpoints", "start_debugger"]

_HELPERS_PREFIX = f"{protocol.UNOTEST_DIR}/{protocol.E2E_SUBDIR}/"
OWNER_GONE_ID = "unotest-owner-gone"
OWNER_GONE = (
    "the MCP session that started this run has closed: aborting it "
    "(a run started with detach: true outlives its session)"
)


@dataclass(frozen=True)
class DebugOptions:
    """``--debug``: breakpoints (``--break`` as (file or None, line, col or None)),
    ``--step``, and whether the terminal prompt runs (stdin is a TTY)."""

    breaks: tuple[tuple[str | None, int, int | None], ...] = ()
    step_first: bool = False
    prompt: bool = False

    @classmethod
    def given(cls, breaks: Sequence[str], step: bool, *, prompt: bool) -> DebugOptions:
        """From the command line: ``--break 10:4``, ``--break 10``, ``--break
        _helpers/auth:3:2``; one that is none of these is one sentence."""
        parsed = []
        for text in breaks:
            position = parse_position(text.strip())
            if position is None or position.line < 1:
                raise UsageError(
                    f"--break {text}: expected LINE[:COL] or FILE:LINE[:COL], e.g. --break 10:4"
                )
            parsed.append((position.file, position.line, position.col))
        return cls(tuple(parsed), step, prompt)


def prepare_breakpoints(
    debug: DebugOptions | None,
    scenario: ScenarioFile,
    helpers: Mapping[str, FunctionRef],
    root: Path,
    warn: Callable[[str], None],
) -> tuple[Breakpoints, dict[str, str]]:
    """Breakpoints of ``.debugger.json`` and ``--break`` (only with ``--debug``), and the
    names a breakpoint may give its file by (scenario name, a case's file's name,
    ``_helpers/<name>``, ``<folder>/_hooks``, path)."""
    programs = {scenario.file: scenario.program}
    for ref in helpers.values():
        programs[ref.program.file] = ref.program
    for folder in scenario.folders:
        programs[folder.file] = folder.program
    file_keys = _file_keys(scenario, programs)
    starts = {file: statement_starts(program) for file, program in programs.items()}
    breakpoints = Breakpoints(starts, programs)
    if debug is not None:
        stored = load_breakpoints_file(root / protocol.DEBUGGER_FILE)
        for key, positions in stored.items():
            stored_file = file_keys.get(key)
            if stored_file is None:
                continue
            # Its own file's, a helper's, or a _hooks.js's over it (only those are keys
            # of file_keys besides paths).
            own = (scenario.name, scenario.base_name)
            hooks = key in {hooks_key(folder.folder) for folder in scenario.folders}
            if key not in own and not key.startswith("_helpers/") and not hooks:
                continue
            for stored_line, stored_col in positions:
                _add(breakpoints, stored_file, stored_line, stored_col, warn)
        for given_file, line, col in debug.breaks:
            target = file_keys.get(given_file or "")
            if target is None:
                where = f"{given_file}:{line}" + (f":{col}" if col is not None else "")
                raise UsageError(
                    f"--break {where}: no such scenario or helper file here (name one as "
                    f"{scenario.name}, _helpers/<name> or its path under the project)"
                )
            _add(breakpoints, target, line, col, warn)
    return breakpoints, file_keys


def _file_keys(scenario: ScenarioFile, programs: Mapping[str, ast.Program]) -> dict[str, str]:
    file_keys: dict[str, str] = {"": scenario.file, scenario.name: scenario.file}
    file_keys[scenario.base_name] = scenario.file  # a case's breakpoints are its file's
    for folder in scenario.folders:
        file_keys[hooks_key(folder.folder)] = folder.file
    for file in programs:
        file_keys[file] = file
        if file.startswith(_HELPERS_PREFIX):
            # The name as the file's own: _helpers/greeting.js, smoke.test.js.
            file_keys[file[len(_HELPERS_PREFIX) :]] = file
        if file != scenario.file and file.startswith(_HELPERS_PREFIX):
            key = file[len(_HELPERS_PREFIX) :].removesuffix(".js")
            file_keys[key] = file
    return file_keys


def _add(
    breakpoints: Breakpoints, file: str, line: int, col: int | None, warn: Callable[[str], None]
) -> None:
    position, note = breakpoints.resolve(file, line, col)
    breakpoints.add(file, position)
    if note:
        warn(note)


def _reloader(
    rundir: RunDirectory,
    scenario: str,
    breakpoints: Breakpoints,
    file_keys: dict[str, str],
) -> Reloader:
    """``reload`` reads the files of the project the run directory belongs to
    (``<root>/unotest/.runs/<runId>``, the protocol's layout)."""
    root = rundir.path.parents[2]
    return Reloader(root, scenario, file_keys[""], breakpoints, file_keys)


def start_debugger(
    debug: DebugOptions | None,
    breakpoints: Breakpoints,
    file_keys: dict[str, str],
    *,
    scenario: str,
    rundir: RunDirectory,
    write_state: Callable[[protocol.RuntimeState, Step | None], None],
    render: Callable[[Value], str],
    bridge: LoopBridge,
    masker: SecretMasker,
    warn: Callable[[str], None],
    idle_timeout_ms: int,
) -> tuple[DebugController, CommandFeed]:
    """The run's debugger, with its command feed running (stop it at the end).

    Commands are always read (a viewer may pause or abort any run); breakpoints and
    pauses on failure only with ``--debug``. ``write_state`` puts a state in
    runtime.json; ``render`` shows a value in a snapshot or an eval's answer.
    ``idle_timeout_ms`` (``debug.idleTimeout``, 0: never) ends a pause without a
    prompt that no command reaches."""
    prompt = debug is not None and debug.prompt
    idle_s = idle_timeout_ms / 1000 if idle_timeout_ms > 0 and not prompt else None
    controller = DebugController(
        emit=rundir.append,
        write_state=write_state,
        interrupt=bridge.interrupt,
        render=render,
        breakpoints=breakpoints,
        file_keys=file_keys,
        warn=warn,
        step_first=debug is not None and debug.step_first,
        pause_on_failure=debug is not None,
        idle_timeout_s=idle_s,
        reloader=_reloader(rundir, scenario, breakpoints, file_keys),
    )
    feed = CommandFeed(
        rundir.path / protocol.COMMANDS_FILE,
        controller.submit_line,
        owner=OwnerWatch.from_environ(os.environ),
        on_owner_gone=lambda: controller.end(OWNER_GONE_ID, OWNER_GONE),
        idle_poll=None if debug is not None else IDLE_POLL_SECONDS,
    )
    feed.start()
    if prompt:
        TerminalPrompt(controller, render, mask=masker.mask).start()
    else:
        controller.listeners.append(PauseAnnouncer(rundir.run_id, warn, idle_s))
    return controller, feed
