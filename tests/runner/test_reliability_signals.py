"""Signals, proven end to end (issue 7, "Reliability, proven by fault injection"):
real Chromium, real ``unotest`` processes, a real ``webServer``.

Each test builds a project in ``tmp_path`` whose ``unotest.config.yaml`` starts a
``webServer`` (a small ``python -m http.server`` serving ``site/``) and points
``baseURL`` at it, starts ``unotest e2e`` or ``unotest collection --workers 2`` in a
session of its own, and signals it as a terminal or a CI runner would: to the whole
process group (a terminal's Ctrl-C reaches the runner, the Playwright driver and
Chromium alike; a closed terminal sends SIGHUP the same way).

What every abort must leave (runner.md §1, §6, §8): exit code 130 for SIGINT, 143 for
SIGTERM, 129 for SIGHUP; every run directory ended (``run:finished`` /
``collection-run:finished`` with outcome ``aborted``, no step left open, runtime.json
in its final ``aborted`` state); no browser, driver, worker or webServer process;
nothing on stderr, in particular no ``Traceback`` (no ``KeyboardInterrupt`` unwinds
through a Playwright call: Playwright is launched with ``handle_sigint=False`` and the
runner turns signals into an orderly abort).

What the existing tests already cover, and is not repeated: SIGINT and SIGTERM sent
to the runner's pid alone during an auto-wait (``test_e2e_run.py``), SIGINT to the
orchestrator of a 2-worker collection and SIGINT while workers start
(``test_collection.py``), a killed worker or browser (``test_collection.py``).

Added here: the three signals to the process group, with a webServer, for a scenario
and for a collection; SIGHUP to the pid alone; a second SIGINT within a second being
ignored; a later one forcing the stop, for a scenario and for a collection (with a
worker that hangs); workers leaving when their orchestrator is killed with SIGKILL.

The forced stops use a webServer that ignores SIGTERM (``stubborn.py``): stopping it
takes the runner's 5 s grace period, a window in which to press Ctrl-C again; it
writes a marker file when its SIGTERM arrives, which shows that an abort whose second
Ctrl-C was ignored went all the way through its orderly stop.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from events import read_events
from net import free_port
from procs import alive, cmdline, descendants, proc_stat
from sites import collection_yaml, config_yaml, unotest_env, write_project

UNOTEST = str(Path(sys.executable).with_name("unotest"))
RUN_TIMEOUT_S = 120.0
GONE_TIMEOUT_S = 20.0
EXIT_CODES = {"SIGINT": 130, "SIGTERM": 143, "SIGHUP": 129}

HANG = """\
// id-hang
// Waits for something that never appears
// #f59e0b
function test_hang() {
  goto("/index.html?s=hang")
  expect_visible(css("h1"))
  wait_for(css("#never"))
}
"""
# About 20 s of browser calls: long enough to be signalled in flight.
BUSY = """\
// id-{name}
// Busy for a while
// #2563eb
function test_{fn}() {{
  goto("/index.html?s={name}")
  for (const i of range(100)) {{
    wait(200)
    expect_visible(css("h1"))
  }}
}}
"""
SLOW = ("slow-0", "slow-1", "slow-2")
STUBBORN = """\
import functools, http.server, signal, sys
from pathlib import Path

port, marker = int(sys.argv[1]), Path(sys.argv[2])


def on_term(signum, frame):
    marker.write_text("SIGTERM\\n")  # and keep serving


signal.signal(signal.SIGTERM, on_term)
signal.signal(signal.SIGINT, signal.SIG_IGN)
handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory="site")
handler.log_message = lambda *args: None
http.server.ThreadingHTTPServer(("127.0.0.1", port), handler).serve_forever()
"""


def _answers(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) == 0


@dataclass
class Project:
    root: Path
    port: int
    marker: Path  # written by the stubborn webServer when its SIGTERM arrives

    def server_pids(self) -> list[int]:
        """Processes of this project's webServer (either kind), wherever they are."""
        needles = (f"http.server {self.port} ", f"stubborn.py {self.port} ")
        return [
            int(entry.name)
            for entry in Path("/proc").iterdir()
            if entry.name.isdigit()
            and any(n in cmdline(int(entry.name)) + " " for n in needles)
            and (stat := proc_stat(int(entry.name))) is not None
            and stat[0] != "Z"
        ]

    def run_dirs(self) -> list[Path]:
        return sorted(p.parent for p in (self.root / "unotest/.runs").glob("*/manifest.json"))


def make_project(root: Path, chromium: str, *, stubborn: bool = False) -> Project:
    port = free_port()
    marker = root / "webserver-got-sigterm"
    files = {"site/index.html": "<!doctype html><title>Signals</title><h1>Signals</h1>"}
    python = shlex.quote(sys.executable)
    if stubborn:
        files["stubborn.py"] = STUBBORN
        command = f"{python} stubborn.py {port} {shlex.quote(str(marker))}"
    else:
        command = f"{python} -m http.server {port} --bind 127.0.0.1 --directory site"
    web_server = (
        "webServer:\n"
        f"  command: {json.dumps(command)}\n"
        f"  url: http://127.0.0.1:{port}/index.html\n"
        "  timeout: 60000\n"
        "  reuseExistingServer: false\n"
    )
    timeout = {"action": 60000, "expect": 60000, "navigation": 30000, "scenario": 120000}
    config = config_yaml(
        f"http://127.0.0.1:{port}", timeout=timeout, chromium=chromium, extra=web_server
    )
    scenarios = {"hang": HANG}
    for name in SLOW:
        scenarios[name] = BUSY.format(name=name, fn=name.replace("-", "_"))
    write_project(root, config, scenarios, collections={"slow": collection_yaml(SLOW)}, files=files)
    return Project(root, port, marker)


@dataclass
class Done:
    code: int
    out: str
    err: str


class Runner:
    """One ``unotest`` process in a session (process group) of its own."""

    def __init__(self, project: Project, *args: str) -> None:
        self.project = project
        self.proc = subprocess.Popen(
            [UNOTEST, *args],
            cwd=project.root,
            env=unotest_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        # Every descendant ever seen: pid -> start time, and its command line then.
        self.seen: dict[int, int] = {}
        self.cmdlines: dict[int, str] = {}

    def watch(self) -> None:
        """Remember the process tree as it is now (workers, drivers, browsers, server)."""
        for pid, start in descendants(self.proc.pid).items():
            if pid not in self.seen:
                self.seen[pid] = start
                self.cmdlines[pid] = cmdline(pid)

    def seen_with(self, needle: str) -> dict[int, int]:
        """The watched processes (alive or not) whose command line held ``needle``."""
        return {p: s for p, s in self.seen.items() if needle in self.cmdlines[p]}

    def signal(self, sig: signal.Signals, *, group: bool = True, watch: bool = True) -> None:
        if watch:
            self.watch()
        if group:
            os.killpg(self.proc.pid, sig)
        else:
            self.proc.send_signal(sig)

    def finish(self) -> Done:
        try:
            out, err = self.proc.communicate(timeout=RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
            pytest.fail(f"unotest did not end within {RUN_TIMEOUT_S} s\n{out}\n{err}")
        assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
        assert "Traceback" not in out, out
        return Done(self.proc.returncode, out, err)

    def cleanup(self) -> None:
        if self.proc.poll() is None:
            self.watch()
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        for pid, start in self.seen.items():
            if alive(pid, start):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        for pid in self.project.server_pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)  # a leaked webServer (a failed test)


@pytest.fixture
def start() -> Iterator[Callable[..., Runner]]:
    """``start(project, *args)``; every process tree is gone after the test, whatever
    happened (the assertions about leftovers come before this)."""
    started: list[Runner] = []

    def run(project: Project, *args: str) -> Runner:
        runner = Runner(project, *args)
        started.append(runner)
        return runner

    yield run
    for runner in started:
        runner.cleanup()


# --- waiting and checking -------------------------------------------------------------------


def wait_until(what: str, predicate: Callable[[], bool], timeout: float = RUN_TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"{what}: not within {timeout} s"
        time.sleep(0.05)


def in_flight(project: Project, text: str) -> list[Path]:
    """Scenario run directories whose last event is the start of a step holding ``text``."""
    found = []
    for run_dir in project.run_dirs():
        with contextlib.suppress(OSError, ValueError):
            events = read_events(run_dir)
            if events and events[-1]["kind"] == "step:started" and text in events[-1]["text"]:
                found.append(run_dir)
    return found


def wait_in_flight(runner: Runner, text: str, count: int = 1) -> None:
    def ready() -> bool:
        assert runner.proc.poll() is None, runner.proc.communicate()
        return len(in_flight(runner.project, text)) >= count

    wait_until(f"{count} run(s) inside {text!r}", ready)
    time.sleep(0.3)  # well inside the action
    runner.watch()


def check_scenario_aborted(run_dir: Path) -> None:
    """runner.md §1-2: an aborted run directory, ended as a reader must find it."""
    events = read_events(run_dir)
    kinds = [e["kind"] for e in events]
    assert kinds.count("run:finished") == 1, kinds
    assert events[-1] == {**events[-1], "kind": "run:finished", "outcome": "aborted"}
    open_steps = 0
    for kind in kinds:
        open_steps += {"step:started": 1, "step:ok": -1, "step:fail": -1}.get(kind, 0)
    assert open_steps == 0, f"steps left open in {run_dir.name}: {kinds}"
    runtime = json.loads((run_dir / "runtime.json").read_text())
    assert (runtime["state"], runtime["current"]) == ("aborted", None), runtime
    assert "page" not in runtime  # the browser is closed
    assert not list(run_dir.glob(".*.tmp")), "a temp file was left behind"


def check_collection_aborted(project: Project) -> list[dict[str, Any]]:
    """The collection's directory and every scenario directory it started, ended."""
    collections = [
        d
        for d in project.run_dirs()
        if json.loads((d / "manifest.json").read_text())["kind"] == "collection"
    ]
    assert len(collections) == 1, collections
    events = read_events(collections[0])
    assert events[-1] == {**events[-1], "kind": "collection-run:finished", "outcome": "aborted"}
    started = {e["scenarioRunId"] for e in events if e["kind"].endswith("scenario-started")}
    finished = {
        e["scenarioRunId"]: e["outcome"] for e in events if e["kind"].endswith("scenario-finished")
    }
    assert started and set(finished) == started, events
    assert set(finished.values()) == {"aborted"}, finished
    children = [d for d in project.run_dirs() if d not in collections]
    assert {d.name for d in children} == started
    for child in children:
        assert json.loads((child / "manifest.json").read_text())["parentRunId"]
        check_scenario_aborted(child)
    return events


def check_nothing_left(runner: Runner, timeout: float = GONE_TIMEOUT_S) -> None:
    """Every process the run ever had (browsers, drivers, workers, the webServer) gone,
    and the webServer's port closed (bounded poll: processes take a moment to die)."""
    project = runner.project

    def left() -> list[str]:
        found = [f"{p}: {runner.cmdlines[p][:100]}" for p, s in runner.seen.items() if alive(p, s)]
        found += [f"webServer {pid}: {cmdline(pid)[:100]}" for pid in project.server_pids()]
        if _answers(project.port):
            found.append(f"port {project.port} still answers")
        return found

    with contextlib.suppress(AssertionError):
        wait_until("everything gone", lambda: not left(), timeout)
    assert left() == []
    # The check above meant something: the tree did hold all of these.
    assert runner.seen_with("--user-data-dir"), "no browser was ever seen"
    assert runner.seen_with("run-driver"), "no Playwright driver was ever seen"
    server = f"stubborn.py {project.port}", f"http.server {project.port}"
    assert runner.seen_with(server[0]) or runner.seen_with(server[1]), "no webServer was seen"


# --- a scenario run: the three signals ------------------------------------------------------

# (signal, to the whole group?): SIGHUP to the pid alone is the one case where the
# driver survives and the runner must close the browser itself that the existing
# tests (SIGINT and SIGTERM to the pid) do not cover.
SCENARIO_CASES = [("SIGINT", True), ("SIGTERM", True), ("SIGHUP", True), ("SIGHUP", False)]


def test_scenario_run_aborted_by_each_signal_leaves_an_ended_directory_and_no_process(
    tmp_path: Path, chromium_path: str, start: Callable[..., Runner]
) -> None:
    """The cases run at once (one project each), to keep the file fast."""
    runs = []
    for signame, group in SCENARIO_CASES:
        project = make_project(tmp_path / f"{signame}-{'group' if group else 'pid'}", chromium_path)
        runs.append((signame, group, start(project, "e2e", "hang")))
    for signame, group, runner in runs:
        wait_in_flight(runner, "wait_for(")
        runner.signal(getattr(signal, signame), group=group)
    for signame, group, runner in runs:
        case = (signame, "group" if group else "pid")
        done = runner.finish()
        assert done.code == EXIT_CODES[signame], (case, done)
        assert f"{signame}: aborting the run" in done.out, case
        assert "stopping now" not in done.out, case
        assert re.search(r"^aborted  hang after 3 steps", done.out, re.M), (case, done.out)
        assert done.err == "", case
        [run_dir] = runner.project.run_dirs()
        check_scenario_aborted(run_dir)
        fails = [e for e in read_events(run_dir) if e["kind"] == "step:fail"]
        assert [f["errorName"] for f in fails] == ["AbortError"], case  # aborted, not failed
    for _, _, runner in runs:
        check_nothing_left(runner)


# --- a collection with two workers: the three signals ---------------------------------------

PROCESSES = 1
"""``--workers 2`` is two lanes of one worker process (the default ``--lanes``): the
process, its driver and its browser must go as two processes would."""


def test_collection_aborted_by_each_signal_ends_every_directory_and_leaves_no_process(
    tmp_path: Path, chromium_path: str, start: Callable[..., Runner]
) -> None:
    """Three collections of two workers each, at once, each signalled as a group."""
    runs = []
    for signame in EXIT_CODES:
        project = make_project(tmp_path / signame, chromium_path)
        runs.append((signame, start(project, "collection", "slow", "--workers", "2")))
    for signame, runner in runs:
        wait_in_flight(runner, "wait(", count=2)
        assert len(runner.seen_with("runner.workers.main")) == PROCESSES, signame
        runner.signal(getattr(signal, signame))
    for signame, runner in runs:
        done = runner.finish()
        assert done.code == EXIT_CODES[signame], (signame, done)
        assert f"{signame}: aborting the collection" in done.out, signame
        assert "stopping now" not in done.out, signame
        assert "ABORTED" in done.out, signame
        assert done.err == "", signame
        check_collection_aborted(runner.project)
    for _, runner in runs:
        check_nothing_left(runner)


# --- a second signal, a killed orchestrator ---------------------------------------------
#
# Each of these needs a run of its own driven through its own sequence; they run at
# once (a thread each, in a module-scoped fixture) to keep the file fast, and each test
# then checks its own run. A driver that fails fails the test that reads its result.


@dataclass
class Outcome:
    runner: Runner
    done: Done | None = None
    error: BaseException | None = None

    def result(self) -> Done:
        if self.error is not None:
            raise self.error
        assert self.done is not None
        return self.done


def _drive_all(drivers: dict[str, tuple[Runner, Callable[[Runner], Done]]]) -> dict[str, Outcome]:
    outcomes = {name: Outcome(runner) for name, (runner, _) in drivers.items()}

    def drive(name: str) -> None:
        runner, driver = drivers[name]
        try:
            outcomes[name].done = driver(runner)
        except BaseException as err:  # handed to the test that reads it
            outcomes[name].error = err

    threads = [threading.Thread(target=drive, args=(name,)) for name in drivers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


@pytest.fixture(scope="module")
def started() -> Iterator[list[Runner]]:
    """Every runner of the module-scoped runs; their trees are gone after the module."""
    runners: list[Runner] = []
    yield runners
    for runner in runners:
        runner.cleanup()


def _twice_within_a_second(runner: Runner) -> Done:
    runner.signal(signal.SIGINT)
    time.sleep(0.2)
    assert runner.proc.poll() is None, "the abort ended before the second SIGINT"
    # No /proc scan between the two: on a loaded machine it can take most of a second.
    runner.signal(signal.SIGINT, watch=False)
    runner.watch()
    return runner.finish()


def _force(runner: Runner) -> Done:
    """SIGINT, then SIGINT again more than a second later, while the abort still waits
    (for the stubborn webServer's grace period, or for a hung worker)."""
    runner.signal(signal.SIGINT)
    first = time.monotonic()
    time.sleep(1.3)
    assert runner.proc.poll() is None, "the abort ended before it could be forced"
    runner.signal(signal.SIGINT)
    assert time.monotonic() - first >= 1.0
    return runner.finish()


@pytest.fixture(scope="module")
def scenario_double_sigint(
    tmp_path_factory: pytest.TempPathFactory, chromium_path: str, started: list[Runner]
) -> dict[str, Outcome]:
    """Two ``unotest e2e hang`` runs with the stubborn webServer: "ignored" gets its
    second SIGINT 0.2 s after the first, "forced" 1.3 s after."""
    root = tmp_path_factory.mktemp("scenario-double")
    runners = {}
    for name in ("ignored", "forced"):
        project = make_project(root / name, chromium_path, stubborn=True)
        runners[name] = Runner(project, "e2e", "hang")
        started.append(runners[name])

    def ignored(runner: Runner) -> Done:
        wait_in_flight(runner, "wait_for(")
        return _twice_within_a_second(runner)

    def forced(runner: Runner) -> Done:
        wait_in_flight(runner, "wait_for(")
        return _force(runner)

    return _drive_all(
        {"ignored": (runners["ignored"], ignored), "forced": (runners["forced"], forced)}
    )


def test_scenario_second_sigint_within_a_second_is_ignored(
    scenario_double_sigint: dict[str, Outcome],
) -> None:
    """A double Ctrl-C is one Ctrl-C: the abort runs its full course (here the
    webServer's whole grace period) and nothing is cut short."""
    outcome = scenario_double_sigint["ignored"]
    done = outcome.result()
    assert done.code == 130, done
    assert done.out.count("SIGINT: aborting the run") == 1
    assert "stopping now" not in done.out
    assert re.search(r"^aborted  hang after 3 steps", done.out, re.M), done.out
    assert done.err == ""
    project = outcome.runner.project
    assert project.marker.exists()  # the orderly stop reached the webServer
    [run_dir] = project.run_dirs()
    check_scenario_aborted(run_dir)
    check_nothing_left(outcome.runner)  # the webServer was killed after its grace period


def test_scenario_later_sigint_forces_the_stop_and_still_ends_the_directory(
    scenario_double_sigint: dict[str, Outcome],
) -> None:
    outcome = scenario_double_sigint["forced"]
    done = outcome.result()
    assert done.code == 130, done
    assert "SIGINT: aborting the run" in done.out
    assert "stopping now" in done.out  # forced, not the orderly end
    assert done.err == ""
    [run_dir] = outcome.runner.project.run_dirs()
    check_scenario_aborted(run_dir)
    browsers = outcome.runner.seen_with("--user-data-dir")
    assert browsers
    wait_until("no browser", lambda: not any(alive(p, s) for p, s in browsers.items()), 20)


def test_scenario_forced_stop_also_stops_the_web_server(
    scenario_double_sigint: dict[str, Outcome],
) -> None:
    """The forced stop exits at once (``os._exit``), the webServer's grace period
    unfinished; the webServer, in a session of its own, still goes: its watchdog
    (runner/webserver/server.py) sees the runner's pipe close, and this one, which ignores
    SIGTERM, is killed after the watchdog's own 5 s."""
    outcome = scenario_double_sigint["forced"]
    assert "stopping now" in outcome.result().out
    check_nothing_left(outcome.runner)


@pytest.fixture(scope="module")
def collection_faults(
    tmp_path_factory: pytest.TempPathFactory, chromium_path: str, started: list[Runner]
) -> dict[str, Outcome]:
    """Three ``unotest collection slow --workers 2`` runs, each once both workers are
    busy: "ignored" (stubborn webServer) gets two SIGINTs 0.2 s apart; "forced"
    (stubborn webServer) has one worker hang (SIGSTOP) and gets a second SIGINT 1.3 s
    after the first; "orphaned" has its orchestrator killed with SIGKILL."""
    root = tmp_path_factory.mktemp("collection-faults")
    runners = {}
    for name in ("ignored", "forced", "orphaned"):
        project = make_project(root / name, chromium_path, stubborn=name != "orphaned")
        runners[name] = Runner(project, "collection", "slow", "--workers", "2")
        started.append(runners[name])

    def busy(runner: Runner) -> list[int]:
        wait_in_flight(runner, "wait(", count=2)
        workers = list(runner.seen_with("runner.workers.main"))
        assert len(workers) == PROCESSES
        return workers

    def ignored(runner: Runner) -> Done:
        busy(runner)
        return _twice_within_a_second(runner)

    def forced(runner: Runner) -> Done:
        os.kill(busy(runner)[0], signal.SIGSTOP)
        return _force(runner)

    def orphaned(runner: Runner) -> Done:
        busy(runner)
        runner.signal(signal.SIGKILL, group=False)
        return runner.finish()  # stderr closes when the last worker and driver are gone

    drivers = {"ignored": ignored, "forced": forced, "orphaned": orphaned}
    return _drive_all({name: (runners[name], drivers[name]) for name in drivers})


def test_collection_second_sigint_within_a_second_is_ignored(
    collection_faults: dict[str, Outcome],
) -> None:
    outcome = collection_faults["ignored"]
    done = outcome.result()
    assert done.code == 130, done
    assert done.out.count("SIGINT: aborting the collection") == 1
    assert "stopping now" not in done.out
    assert done.err == ""
    assert outcome.runner.project.marker.exists()
    check_collection_aborted(outcome.runner.project)
    check_nothing_left(outcome.runner)


def test_collection_later_sigint_forces_the_stop_of_a_hung_worker(
    collection_faults: dict[str, Outcome],
) -> None:
    """A worker that does not react (SIGSTOP: it hangs) keeps the orderly abort waiting;
    a second Ctrl-C kills it, and the orchestrator ends its scenario's directory in its
    place, kills the webServer (which ignores SIGTERM) and exits."""
    outcome = collection_faults["forced"]
    done = outcome.result()
    assert done.code == 130, done
    assert "SIGINT: aborting the collection" in done.out
    assert "stopping now" in done.out
    assert done.err == ""
    check_collection_aborted(outcome.runner.project)
    check_nothing_left(outcome.runner)


def test_workers_leave_when_the_orchestrator_is_killed(
    collection_faults: dict[str, Outcome],
) -> None:
    """``kill -9`` of ``unotest collection``: each worker sees its stdin end, aborts its
    scenario (whose directory still ends with run:finished), closes its browser and
    exits, quietly; the webServer's watchdog (runner/webserver/server.py) stops the server.
    Only the collection's own directory is left without its end: its writer is dead
    (readers infer ``interrupted`` from its heartbeat)."""
    outcome = collection_faults["orphaned"]
    done = outcome.result()
    runner, project = outcome.runner, outcome.runner.project
    assert done.code == -signal.SIGKILL
    assert done.err == "", done.err  # no BrokenPipeError from a worker
    assert len(runner.seen_with("runner.workers.main")) == PROCESSES
    check_nothing_left(runner)  # workers, drivers, browsers and the webServer
    children = [
        d
        for d in project.run_dirs()
        if json.loads((d / "manifest.json").read_text())["kind"] == "scenario"
    ]
    assert len(children) == 2
    for child in children:
        check_scenario_aborted(child)
