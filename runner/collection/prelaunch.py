"""A collection's workers started before the orchestrator's own imports and project load.

``unotest collection`` spends about 180 ms (its imports, the whole project's parse and
check, the config, the history) before it can spawn its workers, and each worker then
needs about half a second (Playwright's driver, its own imports, the browser's launch)
before its first scenario. ``cli.main`` calls :func:`start` as soon as it sees the
command, before it even builds its parser, so the workers come up meanwhile; the
orchestrator (:class:`runner.collection.orchestrator.CollectionRun`) then adopts them
(:func:`take`) instead of spawning its own. This mirrors :mod:`runner.browser.early_driver`
for ``unotest e2e``.

How many workers to start is read from the command line and the collection's file
alone (its ``scenarios:`` list, de-duplicated, sharded as ``--shard`` says, at most
``--workers``; with more than one worker a shard's size depends on the durations it is
balanced by (:mod:`runner.collection.shards`), read from ``--durations`` or history),
``--lanes`` of them to a process (:mod:`runner.workers.lanes`).
With ``--grep``/``--grep-invert``, the listed scenarios are first matched as the
command matches them (``runner.project.index_cache.ScenarioGrep`` on
``"<name> <title>"``), each title read from its file's header here; a file whose
header this reading cannot take, a bad pattern, or a grep that keeps none starts
nothing. Anything unusual (an option this reading does not know, no project, a
collection file that is missing, large, uses YAML anchors or does not load, output
asked into the run directory with ``UNOTEST_OUTPUT_TO_RUN_DIR``) starts nothing: the
orchestrator spawns its workers as before and reports the problem itself. When the
orchestrator wants another number of workers (a listed scenario is missing or
broken), or stops before it runs anything (a usage error, an unknown collection, a
scenario with problems, Ctrl-C), :func:`discard` stops every worker not adopted: its
stdin closes, which ends a worker (it launches no browser after that), and a SIGTERM,
then a SIGKILL after a grace, for one that does not go.

Only the standard library, PyYAML, :mod:`runner.project.root`,
:mod:`runner.collection.shards`, :mod:`runner.workers.host` and
:mod:`runner.workers.lanes` are imported here,
:mod:`runner.project.index_cache` (for its ``ScenarioGrep``, a few milliseconds) only
when a grep is given, and :mod:`runner.store.history` only for a shard of several
workers without ``--durations`` (the command imports it anyway).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

from runner.collection.shards import plan_shard, read_durations
from runner.project import root as project_root
from runner.workers.host import worker_argv
from runner.workers.lanes import lanes_per_process

__all__ = [
    "Prelaunched",
    "discard",
    "parse_shard",
    "plan",
    "planned_slice",
    "start",
    "take",
    "worker_env",
]

MAX_COLLECTION_BYTES = 64 * 1024
"""A larger collection file is left to the orchestrator's own, guarded reading."""
MAX_HEADER_LINE = 4096
"""A longer header line is left to the orchestrator's reading."""
STOP_GRACE_S = 3.0
"""How long a discarded worker has to end after its stdin closes and a SIGTERM."""


def worker_env(index: int, count: int, headed: bool) -> dict[str, str]:
    """A worker process's environment: the orchestrator's, with its place among the
    workers (``index``: its first lane's; ``count``: every lane of the collection)."""
    env = {
        **os.environ,
        "UNOTEST_WORKER_INDEX": str(index),
        "UNOTEST_WORKER_COUNT": str(count),
        "PYTHONSAFEPATH": "1",
    }
    # UNOTEST_HEADED_BY (runner.project.config.HEADED_BY_ENV): a message about the headed run
    # names the --headed the user gave, not a variable they never set.
    env.pop("UNOTEST_HEADED_BY", None)
    if headed:
        env["UNOTEST_HEADED"] = "1"
        env["UNOTEST_HEADED_BY"] = "--headed"
    return env


@dataclass
class Prelaunched:
    """Workers started for a collection, until the orchestrator adopts or drops them."""

    root: Path
    count: int
    """Lanes in all (scenarios at once)."""
    headed: bool
    lanes: int = 1
    """Lanes to a process."""
    processes: dict[int, subprocess.Popen[bytes]] = field(default_factory=dict)

    def wanted(self, count: int, lanes: int, headed: bool) -> bool:
        """Whether these are the processes a run of ``count`` lanes, ``lanes`` to a
        process, wants."""
        return (count, lanes, headed) == (self.count, self.lanes, self.headed)

    def take(self, number: int) -> subprocess.Popen[bytes] | None:
        """Worker process ``number``, if it lives."""
        process = self.processes.pop(number, None)
        if process is not None and process.poll() is not None:
            return None  # it died already: the orchestrator spawns a new one
        return process

    def stop(self) -> None:
        """Every worker not taken: stdin closed and SIGTERM, then SIGKILL after a grace."""
        processes = list(self.processes.values())
        self.processes.clear()
        for process in processes:
            with contextlib.suppress(OSError):
                if process.stdin is not None:
                    process.stdin.close()
            with contextlib.suppress(OSError):
                process.terminate()
        deadline = time.monotonic() + STOP_GRACE_S
        for process in processes:
            try:
                process.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                with contextlib.suppress(OSError):
                    process.kill()
                process.wait()
            if process.stdout is not None:
                with contextlib.suppress(OSError):
                    process.stdout.close()


_state: list[Prelaunched] = []


def start(argv: Sequence[str], cwd: Path | None = None) -> None:
    """Start the workers ``unotest collection <argv>`` will want, when that is clear.

    Never raises: whatever this cannot read, the command reads again and reports."""
    discard()
    try:
        wanted = plan(list(argv), Path.cwd() if cwd is None else cwd)
    except Exception:
        return
    if wanted is None:
        return
    root, count, headed, lanes = wanted
    started = Prelaunched(root, count, headed, lanes)
    _state.append(started)
    try:
        for number in range(-(-count // lanes)):
            started.processes[number] = subprocess.Popen(
                worker_argv(root),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=worker_env(number * lanes, count, headed),
                cwd=str(root),
            )
    except OSError:
        discard()


def take() -> Prelaunched | None:
    """The workers started for this command, now the orchestrator's to adopt or stop."""
    return _state.pop() if _state else None


def discard() -> None:
    """Stop the workers nobody adopted (the command ended before its run began)."""
    while _state:
        _state.pop().stop()


def plan(argv: list[str], cwd: Path) -> tuple[Path, int, bool, int] | None:
    """(project root, workers, headed, lanes to a process) for ``unotest collection
    <argv>`` run in ``cwd``, or None when the command line or the collection's file is
    anything but plain. The lanes assume local browsers: with ``wsEndpoint`` the
    orchestrator wants one lane a process and starts its workers again."""
    if os.environ.get("UNOTEST_OUTPUT_TO_RUN_DIR") == "1":
        # The orchestrator sends its output (and its workers', which inherit it) into
        # the collection's run directory, which does not exist yet.
        return None
    parser = _Parser(add_help=False, allow_abbrev=False, exit_on_error=False)
    parser.add_argument("name")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--lanes", type=int)
    parser.add_argument("--bail", action="store_true")
    parser.add_argument("--shard")
    parser.add_argument("--durations", type=Path)
    parser.add_argument("--reporter", action="append")
    parser.add_argument("--retries", type=int)
    parser.add_argument("--headed", action="store_true")
    parser.add_argument("--root", type=Path)
    parser.add_argument("--grep")
    parser.add_argument("--grep-invert")
    try:
        args, extra = parser.parse_known_args(argv)
    except (argparse.ArgumentError, ValueError):
        return None
    if extra or args.workers < 1 or (args.lanes is not None and args.lanes < 1):
        return None
    try:
        root = project_root.find_project_root(cwd, args.root)
    except Exception:
        return None
    scenarios = _listed(root, args.name)
    if scenarios is not None and (args.grep is not None or args.grep_invert is not None):
        scenarios = _grepped(root, scenarios, args.grep, args.grep_invert)
    if scenarios is None:
        return None
    durations: Mapping[str, float] = {}
    if args.shard is not None and args.workers > 1:
        # How many scenarios the shard holds depends on the durations it is balanced by.
        durations = _durations(root, cwd / args.durations if args.durations else None)
    try:
        count = min(args.workers, len(planned_slice(scenarios, args.shard, durations)))
    except ValueError:
        return None  # a bad --shard: the command says so
    lanes = lanes_per_process(args.lanes, remote=False)
    return (root, count, bool(args.headed), lanes) if count >= 1 else None


def _durations(root: Path, path: Path | None) -> Mapping[str, float]:
    """The durations the command will balance its shards by: the file, else history
    (raises on anything unusual: :func:`start` then starts nothing)."""
    if path is not None:
        return read_durations(path)
    from runner.store.history import medians_ms

    return medians_ms(project_root.Project(root))


def parse_shard(text: str) -> tuple[int, int]:
    """``--shard i/n`` as (i, n); ValueError unless 1 <= i <= n."""
    match = re.fullmatch(r"(\d+)/(\d+)", text.strip())
    if match is None or not 1 <= int(match[1]) <= int(match[2]):
        raise ValueError(text)
    return int(match[1]), int(match[2])


def planned_slice(
    names: list[str], text: str | None, durations: Mapping[str, float] | None = None
) -> list[str]:
    """``names`` as ``--shard i/n`` slices them (all of them without one); ValueError
    for what the command refuses."""
    if text is None:
        return names
    return plan_shard(names, durations or {}, *parse_shard(text)).names


class _Parser(argparse.ArgumentParser):
    """Says nothing: a command line this reading does not take is the command's to
    report, once."""

    def error(self, message: str) -> NoReturn:
        raise ValueError(message)


def _grepped(
    root: Path, names: list[str], grep: str | None, invert: str | None
) -> list[str] | None:
    """The names the command's grep keeps, or None when this reading cannot tell (a
    pattern that does not compile, a header it cannot read) or it keeps none."""
    from runner.errors import UsageError
    from runner.project.index_cache import ScenarioGrep

    try:
        chosen = ScenarioGrep.parse(grep, invert)
    except UsageError:
        return None  # the command says why, once
    kept: list[str] = []
    for name in names:
        title = _title(root, name)
        if title is None:
            return None
        if chosen is None or chosen.selects(name, title):
            kept.append(name)
    return kept or None


def _title(root: Path, name: str) -> str | None:
    """The title (second header line) of scenario ``name`` as ``dsl.scenario`` reads it,
    without the parser; None for a name or a header that is anything but plain (the
    orchestrator's reading then decides, and the workers started would not be wanted)."""
    if name.startswith("/") or any(part in ("", ".", "..") for part in name.split("/")):
        return None
    path = project_root.Project(root).e2e_dir / f"{name}.test.js"
    try:
        with path.open("rb") as source:
            raw = [source.readline(MAX_HEADER_LINE + 1) for _ in range(3)]
        if any(len(line) > MAX_HEADER_LINE for line in raw):
            return None
        first, second, third = (line.decode("utf-8").rstrip("\r\n") for line in raw)
    except (OSError, UnicodeDecodeError):
        return None
    title = second.removeprefix("//").strip(" \t")
    plain = first.lstrip("\ufeff").startswith("// id-") and third.startswith("// #")
    return title if plain and second.startswith("//") and title else None


def _listed(root: Path, name: str) -> list[str] | None:
    """The collection's scenario names, once each, or None when its file is unusual."""
    if not name or "/" in name or "\\" in name or name.startswith("."):
        return None
    path = project_root.collections_dir(root) / f"{name}.yaml"
    try:
        source = path.read_bytes()
    except OSError:
        return None
    if len(source) > MAX_COLLECTION_BYTES or b"&" in source or b"*" in source:
        return None  # large, or anchors and aliases: the guarded reading decides
    import yaml

    try:
        data = yaml.safe_load(source)
    except (yaml.YAMLError, RecursionError, ValueError):
        return None
    scenarios = data.get("scenarios") if isinstance(data, dict) else None
    if not isinstance(scenarios, list) or not all(isinstance(s, str) for s in scenarios):
        return None
    return list(dict.fromkeys(scenarios))
