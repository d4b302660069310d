"""Crash consistency: ``kill -9`` of ``unotest e2e`` at random moments (issue 7, part 1).

A runner can die at any instant (OOM killer, CI timeout, a closed laptop lid); what it
leaves behind must still be readable, and must not keep a browser running. Each kill
cycle starts ``unotest e2e crash`` (the console script, as a user runs it) against a
page this test serves on 127.0.0.1, waits for a seeded *anchor* (spawn, ``run:started``,
the k-th ``step:started``, ``step:fail``, ``failure-bundle:written``) plus a seeded
delay, and sends SIGKILL. The anchors make every phase reachable whatever the machine's
speed: interpreter start before the run directory exists, webServer start, driver and
browser launch, the steps, the failure bundle, closing. Then, for every killed run:

* every ``\\n``-terminated line of ``steps.jsonl`` is a JSON object (validated against
  the protocol's ``RunArtifact`` schema for its kinds); an unterminated tail is allowed;
  the lines are a prefix of the documented event order;
* ``manifest.json`` and ``runtime.json`` (when present) parse and validate; a
  directory without a manifest holds nothing else (the manifest is written first);
* files named by an event (screenshot PNG, failure bundle ``error.json``) are whole;
* ``unotest runs --json`` reports the run ``interrupted`` at once: its heartbeat is
  touched just before the call, so only the manifest's ``pid`` + ``pidStartTime``
  can tell that the runner is dead (not the 30 s staleness);
* no Playwright driver or Chromium process of the run survives (bounded poll, 35 s),
  and the browser's temporary profile directory is gone with them. After SIGKILL the
  children are re-parented, so they are known three ways: the runner's descendants
  (pid + start time) sampled just before the kill; every process whose environment
  carries the cycle's unique marker (inherited by the driver, the browser's main
  process and its crashpad handlers, which are double-forked to init at once, also
  when spawned after the sample; Chromium starts its zygotes, renderers
  and utility processes with an environment of its own, so they do not carry it); and,
  twice a second while any of those lives, their descendants.

A webServer started by the run stops too: its watchdog (runner/webserver/server.py) sees the
runner's end of a pipe close (``test_kill9_leaves_no_web_server``).

The campaign is seeded (``CRASH_KILL9_SEED`` overrides the default): a failure names the
seed, the cycle, its anchor and delay and the phase the kill landed in. The engine is
shared with ``bench/crash_kill9.py``, which runs a larger campaign and prints numbers.
Nothing here asserts a duration.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import random
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from net import free_port
from procs import alive, cmdline, descendants, proc_stat
from protocol_keys import ADDITIVE_KINDS, PROTOCOL_KINDS
from protocol_schemas import validate
from sites import config_yaml, unotest_env, write_project

Validate = Callable[[str, object], None]

SEED = 20_260_7
# The default, what CI runs, is one plan block: every anchor drawn in its exact share,
# every phase reached, in about half the time of the full campaign (issue 19: the suite
# under 10 minutes). CRASH_KILL9_KILLS=200 (or bench/crash_kill9.py, for thousands) runs
# the full size.
KILLS = int(os.environ.get("CRASH_KILL9_KILLS", "").strip() or "100")
PARALLEL = 5
WEB_SERVER_SHARE = 0.15  # of the run:started cycles
LEFTOVER_WAIT_S = 35.0
WEB_SERVER_GRACE_S = 10.0  # the watchdog: SIGTERM at once, SIGKILL 5 s later
ANCHOR_WAIT_S = 180.0  # a cycle whose anchor never comes is a broken setup, not a hang
MARKER_VAR = "CRASH_KILL9_MARKER"
UNOTEST = str(Path(sys.executable).with_name("unotest"))
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


INDEX_HTML = """\
<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Crash home</title><link rel="icon" href="data:,"></head>
<body>
  <h1>Crash home</h1>
  <button id="inc" onclick="const n = document.getElementById('n');
    n.textContent = String(Number(n.textContent) + 1)">Add one</button>
  <p id="n">0</p>
  <a href="/second.html">Second page</a>
</body>
</html>
"""
SECOND_HTML = """\
<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Crash second</title><link rel="icon" href="data:,"></head>
<body><h1>Second page</h1><a href="/index.html">Home</a></body>
</html>
"""

# 22 steps: goto, click, expect, log, a screenshot, and a failure at the end (so that
# the failure bundle, with its trace, is written while a kill may land). Most steps are
# cheap: what a cycle costs is the browser launch, not the steps.
SCENARIO = """\
// id-crash
// Many steps, then a failure
// #dc2626
function test_crash() {
  goto("/index.html")
  expect_title("Crash home")
  let clicks = 0
  for (const i of range(3)) {
    click(role("button", "Add one"))
    clicks += 1
    log("clicked", i, "total", clicks)
  }
  expect_text(css("#n"), "3")
  screenshot("counted")
  click(role("link", "Second page"))
  expect_visible(role("heading", "Second page"))
  log("on the second page after", clicks, "clicks")
  expect_equal(clicks, 4)
}
"""
SCENARIO_NAME = "crash"
STEP_COUNT = 22  # step:started events of a whole run (the `for` header counts 4 times)

# Where a kill lands, from what the run directory holds afterwards.
PHASES = ("startup", "rundir", "launch", "steps", "bundle", "closing", "finished")
REQUIRED_PHASES = ("startup", "launch", "steps", "bundle", "closing")

# (anchor, share of the kills). A kill after the browser launch costs a whole browser
# start (3-6 CPU seconds on a CI core), one before it at most a Python start: in CI most
# kills land early and every later phase still gets its exact share (see make_plans);
# the bench's "even" mix spends more on the late phases.
Mix = tuple[tuple[str, float], ...]
ANCHORS: Mix = (
    ("spawn", 0.50),
    ("run:started", 0.38),
    ("step:started", 0.05),
    ("step:fail", 0.04),
    ("failure-bundle:written", 0.03),
)
EVEN_ANCHORS: Mix = (
    ("spawn", 0.25),
    ("run:started", 0.25),
    ("step:started", 0.30),
    ("step:fail", 0.10),
    ("failure-bundle:written", 0.10),
)
ANCHOR_DELAY_S = {
    "spawn": 1.0,  # the interpreter starts, imports, writes the run directory
    "run:started": 2.5,  # webServer, driver, Chromium, context and page
    "step:started": 0.12,
    "step:fail": 0.25,  # the failure bundle: screenshot, aria, network, console, trace
    "failure-bundle:written": 0.15,  # closing the context and the browser
}
PLAN_BLOCK = 100  # every block of this many cycles holds each anchor's exact share


# --- the plan ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """One kill cycle: wait for the ``nth`` ``anchor``, then ``delay`` seconds, then kill.

    ``anchor == "never"`` is the reference run that is left to finish.
    """

    index: int
    anchor: str
    nth: int
    delay: float
    web_server: bool = False

    def describe(self, seed: int) -> str:
        nth = f"#{self.nth}" if self.anchor == "step:started" else ""
        server = " (webServer project)" if self.web_server else ""
        return (
            f"seed={seed} cycle={self.index} anchor={self.anchor}{nth} "
            f"delay={self.delay:.3f}s{server}"
        )


def make_plans(
    seed: int, count: int, web_server_share: float, anchors: Mix = ANCHORS
) -> list[Plan]:
    """``count`` seeded cycles; the same seed gives the same anchors and delays.

    Stratified, not drawn: each block of ``PLAN_BLOCK`` cycles holds every anchor's
    share exactly, shuffled, so any campaign of 100+ kills reaches every phase.
    """
    rng = random.Random(seed)
    plans: list[Plan] = []
    while len(plans) < count:
        block: list[str] = []
        for name, share in anchors:
            block += [name] * round(share * PLAN_BLOCK)
        rng.shuffle(block)
        for anchor in block:
            index = len(plans)
            # webServer cycles are about the server's start: soon after run:started.
            web_server = anchor == "run:started" and rng.random() < web_server_share
            nth = rng.randint(1, STEP_COUNT) if anchor == "step:started" else 1
            limit = 0.6 if web_server else ANCHOR_DELAY_S[anchor]
            plans.append(Plan(index, anchor, nth, round(rng.uniform(0, limit), 4), web_server))
    return plans[:count]


# --- projects ---------------------------------------------------------------------------


def write_site(site_dir: Path) -> None:
    site_dir.mkdir(parents=True, exist_ok=True)
    (site_dir / "index.html").write_text(INDEX_HTML, encoding="utf-8")
    (site_dir / "second.html").write_text(SECOND_HTML, encoding="utf-8")


def make_project(root: Path, base_url: str, chromium: str, web_server: str = "") -> Path:
    """A project with the one scenario; ``executablePath`` pins the browser under test."""
    timeout = {"action": 10000, "expect": 10000, "navigation": 20000, "scenario": 90000}
    config = config_yaml(
        base_url,
        timeout=timeout,
        chromium=json.dumps(chromium),
        trace="on-failure",
        extra=web_server,
    )
    return write_project(root, config, {SCENARIO_NAME: SCENARIO})



def cli_env(marker: str | None = None) -> dict[str, str]:
    """The test's environment without UNOTEST_* settings, plus the cycle's marker."""
    extra = {} if marker is None else {MARKER_VAR: marker}
    return unotest_env(drop=(MARKER_VAR,), **extra)


# --- processes --------------------------------------------------------------------------


def marked_processes(marker: str, *, prefix: bool = False) -> dict[int, int]:
    """Live processes whose environment holds ``MARKER_VAR=marker`` (or a marker that
    starts with ``marker`` when ``prefix``): pid → start time.

    The environment is inherited through fork and exec, so this finds the driver,
    Chromium and its zygotes/renderers, and a webServer, whoever their parent is now.
    """
    needle = f"{MARKER_VAR}={marker}".encode()
    found: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        try:
            with open(f"/proc/{pid}/environ", "rb") as handle:
                environ = handle.read()
        except OSError:
            continue
        for item in environ.split(b"\0"):
            if item == needle or (prefix and item.startswith(needle)):
                stat = proc_stat(pid)
                if stat is not None and stat[0] not in ("Z", "X"):
                    found[pid] = stat[2]
                break
    return found


def all_descendants(roots: dict[int, int]) -> dict[int, int]:
    """Every live descendant of any of ``roots`` (pid → start time), one /proc scan."""
    if not roots:
        return {}
    children: dict[int, list[tuple[int, int]]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and (info := proc_stat(int(entry.name))) and info[0] != "Z":
            children.setdefault(info[1], []).append((int(entry.name), info[2]))
    found: dict[int, int] = {}
    todo = list(roots)
    while todo:
        for pid, start in children.get(todo.pop(), []):
            if pid not in found:
                found[pid] = start
                todo.append(pid)
    return found


def cpu_seconds(pids: list[int]) -> float:
    """CPU time used so far by these processes and the children they reaped."""
    ticks = 0
    for pid in pids:
        with contextlib.suppress(OSError, ValueError, IndexError):
            text = Path(f"/proc/{pid}/stat").read_text()
            fields = text[text.rfind(")") + 2 :].split()
            ticks += sum(int(fields[i]) for i in (11, 12, 13, 14))  # utime .. cstime
    return ticks / os.sysconf("SC_CLK_TCK")


def is_web_server(pid: int) -> bool:
    return "http.server" in cmdline(pid)


def kill_group_of(pid: int) -> None:
    """SIGKILL ``pid``'s whole process group (a webServer leads its own session)."""
    stat = Path(f"/proc/{pid}/stat")
    with contextlib.suppress(OSError, ValueError):
        text = stat.read_text()
        pgid = int(text[text.rfind(")") + 2 :].split()[2])
        if pgid > 1 and pgid != os.getpgid(0):
            os.killpg(pgid, signal.SIGKILL)
            return
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)


def profiles_of(pids: dict[int, int]) -> set[str]:
    """The Chromium ``--user-data-dir`` of these processes (Playwright's temp profile)."""
    found = set()
    for pid in pids:
        match = re.search(r"--user-data-dir=(\S+)", cmdline(pid))
        if match:
            found.add(match.group(1))
    return found


# --- reading what a killed run left --------------------------------------------------------


class RunIndex:
    """``unotest/.runs`` of several projects: which run directory belongs to which pid.

    Only directories not yet known are opened, so polling stays cheap as runs pile up.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_pid: dict[tuple[Path, int], Path] = {}
        self._known: set[Path] = set()

    def lookup(self, project: Path, pid: int) -> Path | None:
        runs = project / "unotest" / ".runs"
        with self._lock:
            found = self._by_pid.get((project, pid))
            if found is not None:
                return found
            try:
                entries = list(os.scandir(runs))
            except OSError:
                return None
            for entry in entries:
                path = Path(entry.path)
                if path in self._known:
                    continue
                try:
                    manifest = json.loads((path / "manifest.json").read_bytes())
                except (OSError, ValueError):
                    continue  # not written yet (or never: a kill between mkdir and write)
                self._known.add(path)
                if isinstance(manifest, dict) and isinstance(manifest.get("pid"), int):
                    self._by_pid[(project, manifest["pid"])] = path
            return self._by_pid.get((project, pid))


def landed_phase(run_dir: Path | None, kinds: list[str]) -> str:
    if run_dir is None:
        return "startup"
    seen = set(kinds)
    if "run:finished" in seen:
        return "finished"
    if "failure-bundle:written" in seen:
        return "closing"
    if "step:fail" in seen:
        return "bundle"
    if "step:started" in seen:
        return "steps"
    if "run:started" in seen:
        return "launch"
    return "rundir"


def check_event_prefix(events: list[dict[str, Any]]) -> list[str]:
    """The whole lines must be a prefix of runner.md §1's order (no debugger here)."""
    problems: list[str] = []
    depth = 0
    bundle = finished = False
    for number, event in enumerate(events, 1):
        kind = event.get("kind")
        where = f"steps.jsonl line {number} ({kind})"
        if finished:
            problems.append(f"{where} after run:finished")
        if number == 1:
            if kind != "run:started":
                problems.append(f"{where}: the first event is not run:started")
            continue
        if kind == "run:started":
            problems.append(f"{where}: a second run:started")
        elif kind == "step:started":
            if bundle:
                problems.append(f"{where} after the failure bundle")
            if event.get("depth") != depth:
                problems.append(f"{where}: depth {event.get('depth')} with {depth} open")
            depth += 1
        elif kind in ("step:ok", "step:fail"):
            if depth == 0:
                problems.append(f"{where} without an open step")
            depth = max(0, depth - 1)
        elif kind == "failure-bundle:written":
            if depth or bundle:
                problems.append(f"{where} while steps are open or twice")
            bundle = True
        elif kind == "run:finished":
            finished = True
    return problems


def check_run_dir(
    run_dir: Path, project: Path, validate: Validate | None
) -> tuple[list[str], list[str], bool]:
    """(problems, event kinds, unterminated tail?) of one run directory after a kill."""
    problems: list[str] = []
    manifest_path = run_dir / "manifest.json"
    try:
        manifest = json.loads(manifest_path.read_bytes())
        if validate is not None:
            validate("RunManifest", manifest)
    except Exception as err:
        problems.append(f"manifest.json: {type(err).__name__}: {str(err)[:200]}")

    data = b""
    with contextlib.suppress(FileNotFoundError):
        data = (run_dir / "steps.jsonl").read_bytes()
    *lines, tail = data.split(b"\n")
    events: list[dict[str, Any]] = []
    for number, line in enumerate(lines, 1):
        try:
            line.decode("ascii")
            event = json.loads(line)
            if not isinstance(event, dict) or not isinstance(event.get("kind"), str):
                raise ValueError("not an object with a kind")
            if event["kind"] in PROTOCOL_KINDS:
                if validate is not None:
                    validate("RunArtifact", event)
            elif event["kind"] not in ADDITIVE_KINDS:
                raise ValueError(f"unknown kind {event['kind']!r}")
        except Exception as err:
            problems.append(
                f"steps.jsonl line {number}: {type(err).__name__}: {str(err)[:200]}: {line[:120]!r}"
            )
            continue
        events.append(event)
    problems += check_event_prefix(events)

    runtime_path = run_dir / "runtime.json"
    if runtime_path.exists():
        try:
            runtime = json.loads(runtime_path.read_bytes())
            if validate is not None:
                validate("RuntimeStateFile", runtime)
        except Exception as err:
            problems.append(f"runtime.json: {type(err).__name__}: {str(err)[:200]}")

    # Files an event names were whole before the event was written.
    for event in events:
        if event["kind"] == "screenshot":
            png = project / str(event.get("path"))
            if not png.is_file() or not png.read_bytes().startswith(PNG_MAGIC):
                problems.append(f"screenshot event names a missing or partial {png}")
        elif event["kind"] == "failure-bundle:written":
            error_json = project / str(event.get("bundlePath")) / "error.json"
            try:
                json.loads(error_json.read_bytes())
            except (OSError, ValueError) as err:
                problems.append(f"failure-bundle:written but {error_json}: {err}")
    return problems, [e["kind"] for e in events], bool(tail)


def orphan_dirs(project: Path) -> list[str]:
    """Run directories without a manifest that hold more than a temp file: the
    manifest is written first, so a kill may leave an empty directory and no more."""
    bad = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(project / "unotest" / ".runs"):
            path = Path(entry.path)
            if entry.is_dir() and not (path / "manifest.json").exists():
                extra = [p.name for p in path.iterdir() if not p.name.endswith(".tmp")]
                if extra:
                    bad.append(f"{path.name} has {sorted(extra)} but no manifest.json")
    return bad


# --- the campaign -------------------------------------------------------------------------


@dataclass
class Cycle:
    """What one kill cycle found."""

    plan: Plan
    project: Path
    killed: bool = False
    returncode: int | None = None
    phase: str = "?"
    run_dir: Path | None = None
    problems: list[str] = field(default_factory=list)
    leftovers: list[str] = field(default_factory=list)  # driver / Chromium, after 35 s
    web_server_orphans: list[str] = field(default_factory=list)
    profiles_left: list[str] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    fragment: bool = False
    status: str | None = None  # as `unotest runs --json` reported it
    cpu: float = 0.0  # CPU seconds the run's processes had used when it was killed
    browser_seen: bool = False  # a Chromium process was among the runner's descendants
    browser_marked: bool = False  # ... and the marker scan found it too


@dataclass
class Report:
    seed: int
    cycles: list[Cycle]
    cli_problems: list[str]
    seconds: float

    @property
    def kills(self) -> list[Cycle]:
        return [c for c in self.cycles if c.killed]

    def phases(self) -> Counter[str]:
        return Counter(c.phase for c in self.kills)

    def failures(self) -> list[str]:
        """Every broken guarantee, each naming the seed, cycle, anchor and delay."""
        lines = [f"seed={self.seed}: {p}" for p in self.cli_problems]
        for cycle in self.cycles:
            where = f"{cycle.plan.describe(self.seed)} phase={cycle.phase}"
            lines += [f"{where}: {p}" for p in cycle.problems]
            lines += [f"{where}: survived the kill: {p}" for p in cycle.leftovers]
            lines += [f"{where}: Chromium profile left: {p}" for p in cycle.profiles_left]
            lines += [
                f"{where}: webServer outlived the runner: {p}" for p in cycle.web_server_orphans
            ]
        return lines

    def summary(self) -> str:
        kills = self.kills
        phases = self.phases()
        return "\n".join(
            [
                f"seed {self.seed}: {len(kills)} kills in {len(self.cycles)} cycles, "
                f"{self.seconds:.1f} s",
                "landed in: " + ", ".join(f"{p} {phases[p]}" for p in PHASES if phases[p]),
                f"invalid artifacts / lines: {sum(len(c.problems) for c in self.cycles)}",
                f"unterminated steps.jsonl tails (allowed): {sum(c.fragment for c in kills)}",
                "runs not reported interrupted at once: "
                f"{sum(1 for c in kills if c.run_dir and c.status != expected_status(c))}",
                f"runs listing problems: {len(self.cli_problems)}",
                f"leftover driver/Chromium processes: {sum(len(c.leftovers) for c in kills)}",
                "orphaned webServers: "
                f"{sum(len(c.web_server_orphans) for c in kills)} "
                f"of {sum(1 for c in kills if c.plan.web_server)} webServer kills",
                f"leftover Chromium profile dirs: {sum(len(c.profiles_left) for c in kills)}",
                "CPU seconds used before the kill, by phase: "
                + ", ".join(
                    f"{p} {sum(c.cpu for c in kills if c.phase == p) / phases[p]:.2f}"
                    for p in PHASES
                    if phases[p]
                )
                + f" (total {sum(c.cpu for c in kills):.0f})",
            ]
        )


def expected_status(cycle: Cycle) -> str:
    return "failed" if "run:finished" in cycle.kinds else "interrupted"


class Campaign:
    """Seeded kill cycles, ``parallel`` at a time, and a checker of ``unotest runs``.

    Everything a cycle starts carries ``MARKER_VAR=<campaign>-<cycle>``; :meth:`run`
    SIGKILLs whatever still carries the campaign's prefix when it ends, so a failing
    campaign leaves nothing behind either.
    """

    def __init__(
        self,
        root: Path,
        site_url: str,
        site_dir: Path,
        chromium: str,
        *,
        seed: int,
        parallel: int,
        validate: Validate | None,
        web_server_share: float = WEB_SERVER_SHARE,
        anchors: Mix = ANCHORS,
    ) -> None:
        self.root = root
        self.site_url = site_url
        self.site_dir = site_dir
        self.chromium = chromium
        self.seed = seed
        self.parallel = parallel
        self.validate = validate
        self.web_server_share = web_server_share
        self.anchors = anchors
        self.campaign = f"{seed}-{uuid.uuid4().hex[:8]}"
        self.leftover_wait = LEFTOVER_WAIT_S
        self.project = make_project(root / "project", site_url, chromium)
        self.index = RunIndex()
        self._pending: queue.Queue[Cycle | None] = queue.Queue()
        self._cli_problems: list[str] = []
        self._lock = threading.Lock()
        self._killed = 0

    # --- one cycle ------------------------------------------------------------------

    def _project_for(self, plan: Plan) -> Path:
        if not plan.web_server:
            return self.project
        port = free_port()
        command = (
            f"exec {sys.executable} -m http.server {port} --bind 127.0.0.1 "
            f"--directory {self.site_dir}"
        )
        server = (
            "webServer:\n"
            f"  command: {json.dumps(command)}\n"
            f"  url: http://127.0.0.1:{port}/index.html\n"
            "  timeout: 30000\n"
        )
        return make_project(
            self.root / f"web-server-{plan.index}",
            f"http://127.0.0.1:{port}",
            self.chromium,
            server,
        )

    def _wait_for_anchor(self, plan: Plan, project: Path, proc: subprocess.Popen[bytes]) -> bool:
        """True once the anchor is there (or ``spawn``); False when the run ended first."""
        if plan.anchor == "spawn":
            return proc.poll() is None
        needle = f'"kind":"{plan.anchor}"'.encode()
        deadline = time.monotonic() + ANCHOR_WAIT_S
        while proc.poll() is None and time.monotonic() < deadline:
            run_dir = self.index.lookup(project, proc.pid)
            if run_dir is None:
                time.sleep(0.01)
                continue
            with contextlib.suppress(OSError):
                data = (run_dir / "steps.jsonl").read_bytes()
                if data.count(needle) >= plan.nth:
                    return True
            time.sleep(0.008)
        return False

    def cycle(self, plan: Plan) -> Cycle:
        project = self._project_for(plan)
        result = Cycle(plan, project)
        marker = f"{self.campaign}-{plan.index}"
        proc = subprocess.Popen(
            [UNOTEST, "e2e", SCENARIO_NAME],
            cwd=project,
            env=cli_env(marker),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        tree: dict[int, int] = {}
        sent = False
        try:
            if plan.anchor == "never":
                proc.wait()
            elif self._wait_for_anchor(plan, project, proc):
                end = time.monotonic() + plan.delay
                while proc.poll() is None and time.monotonic() < end:
                    time.sleep(min(0.005, max(0.0, end - time.monotonic())))
                if proc.poll() is None:
                    tree = descendants(proc.pid)
                    # The marker scan must find what the tree shows, else it would be
                    # blind to what is spawned after the sample. Both are read before
                    # the kill: a browser that exits (the context closing) between a
                    # scan and the kill is then neither seen nor expected.
                    marked = marked_processes(marker)
                    browsers = [pid for pid in tree if "chrom" in cmdline(pid)]
                    cpu = cpu_seconds([proc.pid, *tree])
                    proc.send_signal(signal.SIGKILL)
                    sent = True
                    result.cpu = cpu
                    result.browser_seen = bool(browsers)
                    result.browser_marked = any(pid in marked for pid in browsers)
        finally:
            hung = proc.poll() is None and not sent
            if hung:  # no anchor in ANCHOR_WAIT_S (or an error here): not a planned kill
                proc.kill()
            proc.wait()
        result.returncode = proc.returncode
        result.killed = proc.returncode == -signal.SIGKILL and not hung
        if hung:
            result.problems.append(f"no {plan.anchor} within {ANCHOR_WAIT_S:g} s: killed")
        if plan.anchor == "never" and proc.returncode != 1:
            result.problems.append(f"the reference run exited {proc.returncode}, not 1")
        elif plan.anchor != "never" and not result.killed and proc.returncode not in (0, 1):
            result.problems.append(f"unotest e2e exited {proc.returncode} before the kill")
        self._settle_processes(result, marker, tree)
        result.run_dir = self.index.lookup(project, proc.pid)
        if result.run_dir is not None:
            problems, result.kinds, result.fragment = check_run_dir(
                result.run_dir, project, self.validate
            )
            result.problems += problems
        result.phase = landed_phase(result.run_dir, result.kinds)
        if plan.anchor == "never" and result.kinds.count("step:started") != STEP_COUNT:
            result.problems.append(
                f"the reference run has {result.kinds.count('step:started')} steps, "
                f"not {STEP_COUNT}: the kill anchors no longer fit the scenario"
            )
        if result.run_dir is not None:
            self._pending.put(result)
        if result.killed:
            with self._lock:
                self._killed += 1
        return result

    def _settle_processes(self, result: Cycle, marker: str, tree: dict[int, int]) -> None:
        """Poll (35 s at most) until nothing of the cycle lives; what does not end by
        itself is recorded and then killed, so the campaign goes on clean."""
        profiles = profiles_of(tree)
        settle_started = time.monotonic()
        deadline = settle_started + self.leftover_wait
        live = dict(tree)
        next_scan = 0.0
        while True:
            live = {pid: start for pid, start in live.items() if alive(pid, start)}
            now = time.monotonic()
            if not live or now >= next_scan:
                # The costly part, twice a second: marked processes, and whatever the
                # live ones started since (Chromium's helpers carry no marker).
                live.update(marked_processes(marker))
                live.update(all_descendants(live))
                next_scan = now + 0.5
            # The webServer's watchdog stops it once it sees the runner gone (SIGTERM,
            # then SIGKILL 5 s later): an orphan is one still there after that.
            servers = {pid for pid in live if is_web_server(pid)}
            if servers and time.monotonic() - settle_started > WEB_SERVER_GRACE_S:
                for pid in servers:
                    result.web_server_orphans.append(f"{pid} {cmdline(pid)[:100]}")
                    kill_group_of(pid)
                for pid in servers:
                    live.pop(pid)
            if not live or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        for pid, start in live.items():
            if alive(pid, start):
                result.leftovers.append(f"{pid} {cmdline(pid)[:160]}")
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
        profiles |= profiles_of(live)
        result.profiles_left = sorted(p for p in profiles if Path(p).exists())

    # --- unotest runs --json, as a user runs it ---------------------------------------

    def _check_runs(self, batch: list[Cycle]) -> None:
        """One ``unotest runs --json`` per project for a batch of killed runs.

        Each run's heartbeat is touched first: a reader going by staleness alone would
        say ``running`` for 30 s, so ``interrupted`` can only come from the manifest's
        pid and start time.
        """
        by_project: dict[Path, list[Cycle]] = {}
        for cycle in batch:
            by_project.setdefault(cycle.project, []).append(cycle)
        for project, cycles in by_project.items():
            for cycle in cycles:
                assert cycle.run_dir is not None
                with contextlib.suppress(OSError):
                    os.utime(cycle.run_dir / "heartbeat")
            done = subprocess.run(
                [UNOTEST, "runs", "--json"],
                cwd=project,
                env=cli_env(),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=120,
                check=False,
            )
            if done.returncode != 0 or "Traceback" in done.stderr.decode(errors="replace"):
                self._cli_problems.append(
                    f"unotest runs --json in {project.name} exited {done.returncode}: "
                    f"{done.stderr.decode(errors='replace')[-400:]}"
                )
                continue
            metas = {meta["runId"]: meta for meta in json.loads(done.stdout)}
            for meta in metas.values():
                if self.validate is not None:
                    try:
                        self.validate("RunMeta", meta)
                    except Exception as err:
                        self._cli_problems.append(f"RunMeta {meta.get('runId')}: {err}")
            for cycle in cycles:
                assert cycle.run_dir is not None
                meta = metas.get(cycle.run_dir.name)
                cycle.status = None if meta is None else meta["status"]
                if cycle.status != expected_status(cycle):
                    cycle.problems.append(
                        f"unotest runs --json says {cycle.status!r} for {cycle.run_dir.name}, "
                        f"expected {expected_status(cycle)!r}"
                    )

    def _checker(self) -> None:
        stop = False
        while not stop:
            first = self._pending.get()
            if first is None:
                break
            batch = [first]
            settle = time.monotonic() + 3.0  # gather what else was killed meanwhile
            while len(batch) < 4 * self.parallel:
                try:
                    item = self._pending.get(timeout=max(0.0, settle - time.monotonic()))
                except queue.Empty:
                    break
                if item is None:
                    stop = True
                    break
                batch.append(item)
            self._check_runs(batch)

    # --- the whole campaign -------------------------------------------------------------

    def run(self, kills: int, *, reference: bool = True, max_cycles: int | None = None) -> Report:
        """Cycles until ``kills`` processes died of SIGKILL (or ``max_cycles``)."""
        began = time.monotonic()
        limit = max_cycles if max_cycles is not None else kills * 2 + 20
        plans = make_plans(self.seed, limit, self.web_server_share, self.anchors)
        if reference:
            plans.insert(0, Plan(-1, "never", 1, 0.0))
        checker = threading.Thread(target=self._checker, name="runs-checker", daemon=True)
        checker.start()
        cycles: list[Cycle] = []
        try:
            with ThreadPoolExecutor(self.parallel, thread_name_prefix="kill9") as pool:
                running: set[Any] = set()
                todo = iter(plans)
                while True:
                    with self._lock:
                        enough = self._killed >= kills
                    while not enough and len(running) < self.parallel:
                        plan = next(todo, None)
                        if plan is None:
                            break
                        running.add(pool.submit(self.cycle, plan))
                    if not running:
                        break
                    finished = {f for f in running if f.done()}
                    if not finished:
                        time.sleep(0.01)
                        continue
                    for future in finished:
                        running.discard(future)
                        cycles.append(future.result())
        finally:
            self._pending.put(None)
            checker.join(timeout=300)
            for pid in marked_processes(self.campaign + "-", prefix=True):
                if is_web_server(pid):
                    kill_group_of(pid)
                else:
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)
        cycles.sort(key=lambda c: c.plan.index)
        for project in {c.project for c in cycles}:
            self._cli_problems += orphan_dirs(project)
        self._final_listing()
        return Report(self.seed, cycles, list(self._cli_problems), time.monotonic() - began)

    def _final_listing(self) -> None:
        """After the campaign nothing runs: no run of the project may say ``running``."""
        done = subprocess.run(
            [UNOTEST, "runs", "--json"],
            cwd=self.project,
            env=cli_env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=120,
            check=False,
        )
        if done.returncode != 0:
            self._cli_problems.append(f"final unotest runs --json exited {done.returncode}")
            return
        running = [m["runId"] for m in json.loads(done.stdout) if m["status"] == "running"]
        if running:
            self._cli_problems.append(f"still 'running' after the campaign: {running}")


def seed_from_env(default: int = SEED) -> int:
    value = os.environ.get("CRASH_KILL9_SEED", "")
    return int(value) if value.strip() else default


# --- the tests ----------------------------------------------------------------------------



def test_plans_are_seeded_and_cover_every_anchor() -> None:
    """The same seed gives the same campaign; every anchor is drawn; delays are bounded."""
    plans = make_plans(SEED, KILLS, WEB_SERVER_SHARE)
    assert plans == make_plans(SEED, KILLS, WEB_SERVER_SHARE)
    assert plans != make_plans(SEED + 1, KILLS, WEB_SERVER_SHARE)
    assert {p.anchor for p in plans} == {name for name, _ in ANCHORS}
    assert Counter(p.anchor for p in plans[:PLAN_BLOCK]) == {
        name: round(share * PLAN_BLOCK) for name, share in ANCHORS
    }
    assert any(p.web_server for p in plans)
    assert all(1 <= p.nth <= STEP_COUNT for p in plans)
    assert all(0 <= p.delay <= max(ANCHOR_DELAY_S.values()) for p in plans)


def test_landed_phase_and_prefix_checks_catch_what_they_must() -> None:
    """The checks of the campaign are not blind: a broken order or a missing manifest
    is reported (otherwise the campaign could pass whatever the runner wrote)."""
    assert landed_phase(None, []) == "startup"
    assert landed_phase(Path("x"), []) == "rundir"
    assert landed_phase(Path("x"), ["run:started", "step:started", "step:fail"]) == "bundle"
    good = [
        {"kind": "run:started"},
        {"kind": "step:started", "depth": 0},
        {"kind": "step:ok"},
        {"kind": "step:started", "depth": 0},
    ]
    assert check_event_prefix(good) == []
    assert check_event_prefix([{"kind": "step:ok"}])
    assert check_event_prefix([*good, {"kind": "failure-bundle:written"}])
    assert check_event_prefix([good[0], {"kind": "run:finished"}, {"kind": "step:ok"}])


def test_broken_run_directories_are_reported(tmp_path: Path) -> None:
    """check_run_dir flags a torn line, a partial manifest and a partial runtime.json,
    and accepts an unterminated tail (what a kill in the middle of a write may leave)."""
    project = tmp_path
    run = project / "unotest" / ".runs" / "crash-1-abcdef"
    run.mkdir(parents=True)
    (run / "manifest.json").write_text('{"schemaVersion": 1, "kind": "sce')
    (run / "runtime.json").write_text("")
    (run / "steps.jsonl").write_bytes(
        b'{"kind":"run:started","runId":"crash-1-abcdef","scenario":"crash","t":1}\n'
        b'{"kind":"step:star\n'
        b'{"kind":"step:started","line":5,"col'
    )
    problems, kinds, tail = check_run_dir(run, project, None)
    assert kinds == ["run:started"] and tail
    assert any(p.startswith("manifest.json") for p in problems)
    assert any(p.startswith("runtime.json") for p in problems)
    assert any(p.startswith("steps.jsonl line 2") for p in problems)
    half = project / "unotest" / ".runs" / "crash-2-abcdef"
    half.mkdir()
    (half / "steps.jsonl").write_bytes(b"")
    assert orphan_dirs(project) == ["crash-2-abcdef has ['steps.jsonl'] but no manifest.json"]


def test_kill9_at_random_moments_leaves_consistent_runs_and_no_browser(
    tmp_path: Path,
    static_site: str,
    chromium_path: str,
) -> None:
    """100 SIGKILLs (more with CRASH_KILL9_KILLS) across every phase: artifacts stay
    whole, `unotest runs` says `interrupted` at once, and no driver or Chromium outlives
    its runner."""
    write_site(tmp_path)
    seed = seed_from_env()
    campaign = Campaign(
        tmp_path / "crash",
        static_site,
        tmp_path,
        chromium_path,
        seed=seed,
        parallel=PARALLEL,
        validate=validate,
    )
    report = campaign.run(KILLS)
    print(report.summary())

    failures = report.failures()
    assert not failures, "\n".join([report.summary(), *failures[:40]])
    assert len(report.kills) >= KILLS, report.summary()
    phases = report.phases()
    missing = [p for p in REQUIRED_PHASES if not phases[p]]
    assert not missing, f"no kill landed in {missing}: {report.summary()}"
    checked = [c for c in report.kills if c.run_dir is not None]
    assert checked and all(c.status == expected_status(c) for c in checked)
    # The process checks are not blind: runs killed after their first step had a
    # browser among their descendants, and the marker scan found it each time.
    seen = [c for c in report.kills if c.phase in ("steps", "bundle") and c.browser_seen]
    assert seen, report.summary()
    assert [c.plan for c in seen if not c.browser_marked] == []
    assert any(c.plan.web_server for c in report.kills), report.summary()


def test_survivors_are_found_by_their_marker_even_when_reparented(tmp_path: Path) -> None:
    """The leftover check is not blind: a process that outlives its parent (re-parented
    to init, so no longer anyone's descendant) is found by the marker it inherited,
    reported, and killed."""
    campaign = Campaign(
        tmp_path / "crash",
        "http://127.0.0.1:9",
        tmp_path,
        "/bin/false",
        seed=SEED,
        parallel=1,
        validate=None,
    )
    campaign.leftover_wait = 0.3
    marker = f"{campaign.campaign}-orphan"
    # An orphan with the marker, and its child without it (as Chromium's helpers are).
    script = f"(env -u {MARKER_VAR} sleep 61 & exec sleep 60) </dev/null >/dev/null 2>&1 &"
    subprocess.run(["/bin/sh", "-c", script], env=cli_env(marker), check=True)
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            marked = marked_processes(marker)
            family = all_descendants(marked)
            ready = any(cmdline(pid).startswith("sleep 61") for pid in family)
            if len(marked) == 1 and ready:  # both have exec'd their sleep
                break
            time.sleep(0.02)
        [orphan] = marked
        assert proc_stat(orphan) is not None and proc_stat(orphan)[1] != os.getpid()
        cycle = Cycle(Plan(0, "spawn", 1, 0.0), tmp_path)
        campaign._settle_processes(cycle, marker, {})
        assert sorted(line.split(" ", 1)[1].strip() for line in cycle.leftovers) == [
            "sleep 60",
            "sleep 61",
        ]
        deadline = time.monotonic() + 10
        while marked_processes(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert marked_processes(marker) == {}
    finally:  # nothing of this test outlives it, whatever failed above
        stray = marked_processes(marker)
        for pid in {**stray, **all_descendants(stray)}:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def test_kill9_leaves_no_web_server(tmp_path: Path, chromium_path: str) -> None:
    """Once the webServer answers, SIGKILL the runner: the server stops too."""
    write_site(tmp_path / "site")
    campaign = Campaign(
        tmp_path / "crash",
        "http://127.0.0.1:9",
        tmp_path / "site",
        chromium_path,
        seed=SEED,
        parallel=1,
        validate=None,
        web_server_share=1.0,
    )
    plan = Plan(0, "step:started", 1, 0.0, web_server=True)
    cycle = campaign.cycle(plan)
    assert cycle.killed, cycle
    assert cycle.leftovers == []
    assert cycle.web_server_orphans == []
