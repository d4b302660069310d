"""``unotest collection`` end to end: real Chromium, driven through the CLI as CI runs it.

Each test builds a project in ``tmp_path`` (``unotest.config.yaml`` pointing at
``site_collection/``, served on 127.0.0.1 by a recording server, scenarios and
``unotest/e2e/_collections/<name>.yaml``) and runs ``.venv/bin/unotest collection``
as a subprocess with the project as working directory.

What is checked (runner.md §6 and §8): the collection run directory (``kind:
"collection"``, the four ``collection-run:*`` events in order, validated against the
protocol's JSON Schemas and key by key), each
scenario's run directory with ``parentRunId``; the list, JUnit and JSON reporters;
``--bail`` with one and two workers; ``--shard`` balanced by durations and its
shards merged (``unotest merge-reports``); ``UNOTEST_WORKER_INDEX`` /
``UNOTEST_WORKER_COUNT``; fresh browser contexts (no cookie or localStorage leak);
a worker killed with SIGKILL, a browser killed with SIGKILL, SIGINT to the
orchestrator; missing scenarios, bad collection files and bad arguments (exit 2).

The recording server is how the tests see inside a run: every scenario visits
``/index.html?s=<name>&…``, so a test knows when a scenario is running (to kill
something at the right moment) and what it saw (its worker index). ``/barrier.html?
for=<name>`` answers only once ``<name>`` has been visited: a scenario on one worker
waits for a scenario on another worker to be in flight.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from events import read_events
from protocol_keys import COLLECTION_KINDS
from protocol_schemas import validate
from recording_site import RecordingSite as Site
from sites import E2E, collection_yaml, config_yaml, scenario_source, write_files, write_project

from runner.collection.shards import plan_shard, read_durations

SITE = Path(__file__).resolve().parent / "site_collection"
UNOTEST = str(Path(sys.executable).with_name("unotest"))
RUN_TIMEOUT_S = 180  # a loaded CI machine can take 10 s just to start a worker

# --- scenario bodies ------------------------------------------------------------------


def visit(name: str, extra: str = "") -> str:
    return f'  goto("/index.html?s={name}{extra}")\n'


PASS = '  expect_visible(role("heading", "Collection home"))\n'
# About 15 s of browser calls: long enough to be killed or aborted in flight, and a
# dead browser fails the next call instead of going unnoticed.
BUSY = (
    "  for (const i of range(60)) {\n"
    "    wait(250)\n"
    '    expect_visible(role("heading", "Collection home"))\n'
    "  }\n"
)
FAIL_LINE = 6  # header (3 lines) + function line + visit + this
FAIL = '  expect_text(css("h1"), "Wrong heading")\n'


# --- the site -------------------------------------------------------------------------


@pytest.fixture
def site() -> Iterator[Site]:
    served = Site(SITE, RUN_TIMEOUT_S)
    try:
        yield served
    finally:
        served.close()


# --- projects and processes -----------------------------------------------------------


@dataclass
class Done:
    code: int
    out: str
    err: str

    @property
    def collection_dir(self) -> Path:
        match = re.search(r"collection run: (\S+)", self.out)
        assert match, self.out
        return Path(match[1])


class Project:
    def __init__(self, root: Path, site: Site, chromium: str) -> None:
        self.root = root
        # expect: what FAIL waits for a heading it never gets, kept short.
        timeout = {"action": 3000, "expect": 700, "navigation": 40000, "scenario": 90000}
        write_project(root, config_yaml(site.url, timeout=timeout, chromium=chromium))

    def scenario(self, name: str, body: str) -> None:
        slug = name.replace("/", "-")
        function = "test_" + re.sub(r"\W", "_", slug)
        source = scenario_source(slug, body, title=name, color="#2563eb", fn=function)
        write_files(self.root, {f"{E2E}/{name}.test.js": source})

    def collection(self, name: str, scenarios: list[str] | str) -> None:
        text = scenarios if isinstance(scenarios, str) else collection_yaml(scenarios)
        write_files(self.root, {f"{E2E}/_collections/{name}.yaml": text})

    def start(self, *args: str) -> subprocess.Popen[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("UNOTEST_")}
        return subprocess.Popen(
            [UNOTEST, "collection", *args],
            cwd=self.root,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def finish(self, proc: subprocess.Popen[str], timeout: float = RUN_TIMEOUT_S) -> Done:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            pytest.fail(f"unotest collection did not end in {timeout} s\n{out}\n{err}")
        assert "Traceback" not in err, err
        assert "Traceback" not in out, out
        return Done(proc.returncode, out, err)

    def run(self, *args: str) -> Done:
        return self.finish(self.start(*args))

    def events(self, done: Done) -> list[dict[str, Any]]:
        return read_events(self.root / done.collection_dir, finished=True)

    def manifest(self, run_dir: Path | str) -> dict[str, Any]:
        path = self.root / run_dir / "manifest.json"
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return data

    def run_events(self, run_id: str) -> list[dict[str, Any]]:
        return read_events(self.root / "unotest/.runs" / run_id, finished=True)


@pytest.fixture
def project(tmp_path: Path, site: Site, chromium_path: str) -> Project:
    return Project(tmp_path / "proj", site, chromium_path)


Validate = Callable[[str, object], None]


def json_report(path: Path) -> list[dict[str, Any]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(data, list)
    for envelope in data:
        assert set(envelope) == {"protocol_version", "type", "data"}, envelope
        assert envelope["protocol_version"] == 1
        assert isinstance(envelope["data"], dict)
    return data


def ends_by_name(report: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {e["data"]["name"]: e["data"] for e in report if e["type"] == "test_end"}


# --- processes ------------------------------------------------------------------------


def _processes() -> dict[int, tuple[int, list[str]]]:
    """pid -> (ppid, argv) of every process we can read."""
    found: dict[int, tuple[int, list[str]]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as f:
                stat = f.read()
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] == "Z":  # a zombie is dead already, its parent just has not reaped it
            continue
        found[int(entry)] = (int(fields[1]), argv)
    return found


def descendants(pid: int) -> dict[int, list[str]]:
    table = _processes()
    result: dict[int, list[str]] = {}
    parents = {pid}
    while True:
        new = {p: argv for p, (pp, argv) in table.items() if pp in parents and p not in result}
        if not new:
            return result
        result.update(new)
        parents = set(new)


def workers_of(pid: int) -> list[int]:
    table = _processes()
    return [p for p, (pp, argv) in table.items() if pp == pid and "runner.workers.main" in argv]


def browser_of(worker: int) -> int:
    """The main Chromium process a worker launched (a descendant with no ``--type=``)."""
    for p, argv in descendants(worker).items():
        if (
            argv
            and "chrom" in Path(argv[0]).name
            and not any(a.startswith("--type=") for a in argv)
        ):
            return p
    raise AssertionError(f"worker {worker} has no browser: {descendants(worker)}")


def wait_gone(pids: set[int], timeout: float = 10) -> set[int]:
    deadline = time.monotonic() + timeout
    while True:
        alive = {p for p in pids if p in _processes()}
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.2)


def worker_running(project_root: Path, orchestrator: int, scenario: str) -> int:
    """The worker whose current scenario is ``scenario`` (from its run's manifest pid)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for manifest in (project_root / "unotest/.runs").glob("*/manifest.json"):
            with contextlib.suppress(OSError, ValueError):
                data = json.loads(manifest.read_text(encoding="utf-8"))
                if data.get("ref") == scenario and data.get("pid") in workers_of(orchestrator):
                    return int(data["pid"])
        time.sleep(0.1)
    raise AssertionError(f"no worker of {orchestrator} runs {scenario}")


# --- green, mixed, reporters ----------------------------------------------------------


def test_green_collection_run_directories_events_and_worker_env(
    project: Project, site: Site, tmp_path: Path
) -> None:
    env_check = (
        '  const index = env("UNOTEST_WORKER_INDEX")\n'
        '  const count = env("UNOTEST_WORKER_COUNT")\n'
        "  goto(`/index.html?s=${SCENARIO}&index=${index}&count=${count}`)\n"
        '  expect_equal(count, "2")\n'
        '  assert(index == "0" || index == "1", "worker index " + index)\n'
        '  expect_text(css("#query"), `s=${SCENARIO}&index=${index}&count=${count}`)\n'
    )
    project.scenario("home", visit("home") + PASS)
    project.scenario("env/a", env_check.replace("${SCENARIO}", "env-a"))
    project.scenario("env/b", env_check.replace("${SCENARIO}", "env-b"))
    # An orphan reference, and both it and a scenario listed twice.
    listed = ["home", "env/a", "does/not-exist", "env/b", "home", "does/not-exist"]
    project.collection("green", listed)
    report = tmp_path / "reports" / "green.json"
    done = project.run("green", "--workers", "2", "--reporter", f"list,json={report}")

    assert done.code == 0, done
    assert "COMPLETED" in done.out
    # The orphan reference: a warning naming it, listed as skipped, never blocking.
    assert done.err.count("does/not-exist") == 1 and "warning" in done.err
    assert re.search(r"○.*does/not-exist", done.out), done.out
    assert "3 passed, 1 skipped" in done.out

    manifest = project.manifest(done.collection_dir)
    validate("RunManifest", manifest)
    assert manifest["kind"] == "collection"
    assert manifest["ref"] == "green"
    assert "parentRunId" not in manifest
    assert {"schemaVersion", "adapter", "startedAt", "pid"} <= set(manifest)
    run_id = done.collection_dir.name

    events = project.events(done)
    for event in events:
        validate("CollectionRunArtifact", event)
        assert isinstance(event["t"], int)
    kinds = [e["kind"] for e in events]
    assert kinds[0] == "collection-run:started" and kinds[-1] == "collection-run:finished"
    assert set(kinds) == set(COLLECTION_KINDS)
    assert kinds.count("collection-run:scenario-started") == 3
    assert kinds.count("collection-run:scenario-finished") == 3
    assert events[0]["runId"] == run_id
    assert events[0]["collection"] == "green"
    assert events[0]["scenarios"] == ["home", "env/a", "env/b"]
    assert events[-1]["outcome"] == "completed"

    started = {e["scenario"]: i for i, e in enumerate(events) if e["kind"].endswith("-started")}
    for i, event in enumerate(events):
        if event["kind"] != "collection-run:scenario-finished":
            continue
        assert event["outcome"] == "completed"
        assert started[event["scenario"]] < i  # each scenario starts before it finishes
        child = event["scenarioRunId"]
        assert events[started[event["scenario"]]]["scenarioRunId"] == child
        child_dir = Path("unotest/.runs") / child
        assert (project.root / child_dir).is_dir()
        child_manifest = project.manifest(child_dir)
        validate("RunManifest", child_manifest)
        assert child_manifest["kind"] == "scenario"
        assert child_manifest["ref"] == event["scenario"]
        assert child_manifest["parentRunId"] == run_id
        child_events = project.run_events(child)
        assert child_events[0]["kind"] == "run:started"
        assert child_events[-1] == {
            **child_events[-1],
            "kind": "run:finished",
            "outcome": "completed",
        }

    # Each scenario saw its own worker's index, and the worker count.
    ends = ends_by_name(json_report(report))
    for scenario, slug in (("env/a", "env-a"), ("env/b", "env-b")):
        (hit,) = site.visits(slug)
        assert hit["count"] == "2"
        assert hit["index"] == str(ends[scenario]["worker"])
    # scenario-started names its worker (ours, 0-based like the JSON report).
    workers = {e["scenario"]: e["worker"] for e in events if e["kind"].endswith("-started")}
    assert workers == {name: ends[name]["worker"] for name in ("home", "env/a", "env/b")}
    assert set(workers.values()) <= {0, 1}


def test_contexts_are_fresh_between_scenarios_of_one_worker(project: Project) -> None:
    state = 'expect_text(css("#state"), "cookie={0} storage={0}")\n'
    project.scenario(
        "leak/set",
        '  goto("/storage.html?set")\n  '
        + state.format("yes")
        + '  goto("/storage.html")\n  '  # kept within the scenario's own context
        + state.format("yes"),
    )
    project.scenario("leak/check", '  goto("/storage.html")\n  ' + state.format("no"))
    project.collection("leak", ["leak/set", "leak/check"])
    done = project.run("leak", "--workers", "1")

    assert done.code == 0, done
    events = project.events(done)
    children = [e["scenarioRunId"] for e in events if e["kind"].endswith("scenario-finished")]
    assert len(children) == 2
    pids = {project.manifest(Path("unotest/.runs") / child)["pid"] for child in children}
    assert len(pids) == 1  # one worker process, one browser, two contexts


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc")
def test_a_worker_closes_each_scenario_context_behind_it(project: Project, site: Site) -> None:
    """A worker's run ends without waiting for its context's close (the next scenario's
    opens meanwhile), but the close happens: six scenarios later its browser holds the
    running scenario's renderer (and at most a close or two still under way), not one
    per scenario it ran."""
    names = [f"quick{i}" for i in range(6)]
    for name in names:
        project.scenario(name, visit(name) + PASS)
    project.scenario("last", visit("last") + BUSY)
    project.collection("series", [*names, "last"])
    proc = project.start("series", "--workers", "1")
    try:
        site.wait_for("last")
        (worker,) = workers_of(proc.pid)
        browser = browser_of(worker)
        renderers = [
            pid
            for pid, argv in descendants(browser).items()
            if "--type=renderer" in " ".join(argv).split()
        ]
        proc.send_signal(signal.SIGINT)
    finally:
        done = project.finish(proc)
    assert done.code == 130, done
    assert 1 <= len(renderers) <= 4, renderers  # 7 when nothing is closed


def test_mixed_collection_summary_junit_and_json(project: Project, tmp_path: Path) -> None:
    project.scenario("ok/one", visit("one") + PASS)
    project.scenario("broken", visit("broken") + FAIL)
    project.scenario("ok/two", visit("two") + PASS)
    project.collection("mixed", ["ok/one", "broken", "ok/two"])
    junit = tmp_path / "reports" / "junit.xml"
    report = tmp_path / "reports" / "report.json"
    done = project.run("mixed", "--workers", "2", "--reporter", f"list,junit={junit},json={report}")

    assert done.code == 1, done
    assert "FAILED" in done.out and "2 passed, 1 failed" in done.out
    where = f"unotest/e2e/broken.test.js:{FAIL_LINE}:2"
    assert re.search(rf"✗ broken: {re.escape(where)}: AssertionError: .*Wrong heading", done.out)
    assert 'step: expect_text(css("h1"), "Wrong heading")' in done.out
    bundle = re.search(r"bundle: (\S+)", done.out)
    assert bundle, done.out
    assert (project.root / bundle[1] / "error.json").is_file()
    assert json.loads((project.root / bundle[1] / "error.json").read_text())["line"] == FAIL_LINE

    events = project.events(done)
    outcomes = {e["scenario"]: e["outcome"] for e in events if "outcome" in e and "scenario" in e}
    assert outcomes == {"ok/one": "completed", "broken": "failed", "ok/two": "completed"}
    assert events[-1] == {**events[-1], "kind": "collection-run:finished", "outcome": "failed"}

    root = ET.parse(junit).getroot()
    assert root.tag == "testsuites"
    cases = root.findall("./testsuite/testcase")
    assert [c.get("name") for c in cases] == ["ok/one", "broken", "ok/two"]  # their titles
    # classname: each scenario's name, as Playwright's JUnit names a test's file
    assert [c.get("classname") for c in cases] == ["ok/one", "broken", "ok/two"]
    failures = {c.get("name"): c.find("failure") for c in cases}
    assert failures["ok/one"] is None and failures["ok/two"] is None
    failure = failures["broken"]
    assert failure is not None
    assert failure.get("type") == "AssertionError"
    assert "Wrong heading" in (failure.get("message") or "")
    assert where in (failure.text or "") and bundle[1] in (failure.text or "")
    suite = root.find("testsuite")
    assert suite is not None and suite.get("tests") == "3" and suite.get("failures") == "1"

    data = json_report(report)
    # live order: two workers start two scenarios before the first ends
    kinds = [e["type"] for e in data]
    assert kinds[:2] == ["run_start", "suite_start"] and kinds[-2:] == ["suite_end", "run_end"]
    assert sorted(kinds[2:-2]) == ["test_end"] * 3 + ["test_start"] * 3
    for name in ("ok/one", "broken", "ok/two"):
        start, end = (
            next(i for i, e in enumerate(data) if e["type"] == kind and e["data"]["name"] == name)
            for kind in ("test_start", "test_end")
        )
        assert start < end
    assert data[0]["data"]["total"] == 3
    assert data[0]["data"]["runId"] == done.collection_dir.name
    ends = ends_by_name(data)
    assert ends["broken"]["status"] == "failed"
    assert ends["broken"]["location"] == where
    assert ends["broken"]["bundle_path"] == bundle[1]
    assert ends["ok/one"]["status"] == ends["ok/two"]["status"] == "passed"
    assert data[-1]["data"] == {**data[-1]["data"], "passed": 2, "failed": 1, "skipped": 0}


def test_scenario_that_does_not_parse_fails_the_collection(project: Project) -> None:
    """Listed but broken: reported with its position, never run, and the collection run
    directory says ``failed`` as the exit code does (it used to say ``completed``)."""
    project.scenario("broken-syntax", '  goto("/index.html"\n')
    project.collection("unparsable", ["broken-syntax"])
    done = project.run("unparsable")

    assert done.code == 1, done
    assert "unotest/e2e/broken-syntax.test.js:6:0: SyntaxError" in done.err
    assert "✗ broken-syntax: SyntaxError" in done.out
    events = project.events(done)
    assert [e["kind"] for e in events] == ["collection-run:started", "collection-run:finished"]
    assert events[-1]["outcome"] == "failed"


def test_the_project_is_read_through_the_index_cache_and_an_edit_is_seen(
    project: Project,
) -> None:
    """The orchestrator reads the project through ``unotest/.cache/index.json`` (an
    unchanged project is not parsed again), and a scenario edited since is: broken
    now, it is reported with its position and not run."""
    project.scenario("fine", visit("fine") + PASS)
    project.collection("cached", ["fine"])
    cache = project.root / "unotest/.cache/index.json"
    assert not cache.exists()
    first = project.run("cached")
    assert first.code == 0, first
    assert cache.is_file()  # written by the collection's own read
    written = cache.stat().st_mtime_ns

    again = project.run("cached")
    assert again.code == 0, again
    assert cache.stat().st_mtime_ns == written  # a hit: nothing rewritten

    project.scenario("fine", '  goto("/index.html"\n')
    broken = project.run("cached")
    assert broken.code == 1, broken
    assert "unotest/e2e/fine.test.js:6:0: SyntaxError" in broken.err
    assert "✗ fine: SyntaxError" in broken.out


# --- bail and shards ------------------------------------------------------------------


def test_bail_with_one_worker_starts_nothing_after_the_failure(
    project: Project, site: Site
) -> None:
    project.scenario("first-fails", visit("first-fails") + FAIL)
    for n in range(3):
        project.scenario(f"later-{n}", visit(f"later-{n}") + BUSY)
    project.collection("bail", ["first-fails", "later-0", "later-1", "later-2"])
    done = project.run("bail", "--workers", "1", "--bail")

    assert done.code == 1, done
    assert "1 failed, 3 skipped" in done.out
    for n in range(3):
        assert re.search(rf"○\s+later-{n}", done.out), done.out
        assert site.visits(f"later-{n}") == []
    events = project.events(done)
    assert [e.get("scenario") for e in events[1:-1]] == ["first-fails"] * 2
    assert events[-1]["outcome"] == "failed"


def test_bail_with_two_workers_aborts_the_scenario_in_flight(project: Project, site: Site) -> None:
    project.scenario("long", visit("long") + BUSY)
    # Fails only once "long" runs on the other worker, so "long" is surely in flight.
    project.scenario("fails", '  goto("/barrier.html?for=long&s=fails")\n' + FAIL)
    project.scenario("never-0", visit("never-0") + PASS)
    project.scenario("never-1", visit("never-1") + PASS)
    project.collection("bail2", ["long", "fails", "never-0", "never-1"])
    started = time.monotonic()
    done = project.run("bail2", "--workers", "2", "--bail")

    assert done.code == 1, done
    assert time.monotonic() - started < RUN_TIMEOUT_S
    events = project.events(done)
    outcomes = {e["scenario"]: e["outcome"] for e in events if "outcome" in e and "scenario" in e}
    assert outcomes == {"long": "aborted", "fails": "failed"}
    assert "1 failed, 1 aborted, 2 skipped" in done.out
    assert site.visits("never-0") == site.visits("never-1") == []
    long_run = next(e["scenarioRunId"] for e in events if e.get("scenario") == "long")
    assert project.run_events(long_run)[-1] == {
        **project.run_events(long_run)[-1],
        "kind": "run:finished",
        "outcome": "aborted",
    }


def _unotest(project: Project, *args: str) -> Done:
    """Another ``unotest`` command in the project (``history``, ``list``, ``merge-reports``)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("UNOTEST_")}
    done = subprocess.run(
        [UNOTEST, *args], cwd=project.root, env=env, capture_output=True, text=True, timeout=120
    )
    assert "Traceback" not in done.stderr, done.stderr
    return Done(done.returncode, done.stdout, done.stderr)


def test_shards_balanced_by_durations_merge_into_the_unsharded_run(
    project: Project, tmp_path: Path
) -> None:
    """The unsharded run, its history exported as a durations file and read back; then
    two shards balanced by a durations file where two scenarios are slow (a split by
    count would put both in shard 1), run side by side and merged: the same scenarios,
    outcomes and counts as the unsharded run, in valid JUnit."""
    names = ["a-slow", "b", "c-slow", "d", "e-fail"]
    for name in names:
        project.scenario(name, visit(name) + (FAIL if name == "e-fail" else PASS))
    project.collection("sharded", [*names, "gone"])
    whole = project.run("sharded", "--workers", "2", "--reporter", f"list,json={tmp_path}/w.json")
    assert whole.code == 1, whole

    exported = _unotest(project, "history", "--export", str(tmp_path / "history.json"))
    assert exported.code == 0, exported
    table = json.loads((tmp_path / "history.json").read_text(encoding="utf-8"))
    assert table["version"] == 1 and sorted(table["durations"]) == names
    shard_1 = ["--collection", "sharded", "--shard", "1/2"]
    durations = ["--durations", str(tmp_path / "history.json")]
    listed = _unotest(project, "list", *shard_1, *durations)
    assert listed.code == 0 and "expected" in listed.out, listed
    first = json.loads(_unotest(project, "list", *shard_1, "--json", *durations).out)
    expected = plan_shard(names, read_durations(tmp_path / "history.json"), 1, 2)
    assert [row["name"] for row in first["scenarios"]] == expected.names
    assert first["shard"] == expected.header() and first["balancedBy"] == "file"

    slow = {"version": 1, "durations": {"a-slow": 9000, "c-slow": 9000, "b": 300, "d": 300}}
    (tmp_path / "slow.json").write_text(json.dumps(slow), encoding="utf-8")
    reports = [tmp_path / f"shard{i}.json" for i in (1, 2)]
    balanced = ["--durations", str(tmp_path / "slow.json")]
    procs = [
        project.start("sharded", "--shard", f"{i}/2", *balanced, "--reporter", f"list,json={path}")
        for i, path in enumerate(reports, start=1)
    ]
    dones = [project.finish(p) for p in procs]
    ran = []
    for i, done in enumerate(dones, start=1):
        assert done.code in (0, 1), done
        assert f"shard {i}/2 (about " in done.out
        report = json_report(reports[i - 1])
        assert report[0]["data"]["shard"]["current"] == i
        ran.append({e["data"]["name"] for e in report if e["type"] == "test_end"} - {"gone"})
    assert {"a-slow", "c-slow"} & ran[0] and {"a-slow", "c-slow"} & ran[1]  # one slow each
    assert sorted(n for shard in ran for n in shard) == names

    merging = f"list,json={tmp_path}/m.json,junit={tmp_path}/m.xml"
    merged = _unotest(project, "merge-reports", *map(str, reports), "--reporter", merging)
    assert merged.code == 1, merged
    assert "2 reports merged" in merged.out
    one = json_report(tmp_path / "w.json")
    two = json_report(tmp_path / "m.json")
    statuses = {n: d["status"] for n, d in ends_by_name(one).items()}
    assert {n: d["status"] for n, d in ends_by_name(two).items()} == statuses
    assert statuses["e-fail"] == "failed" and statuses["gone"] == "skipped"
    assert len([e for e in two if e["type"] == "test_end"]) == len(names) + 1
    count_keys = ("total", "passed", "flaky", "failed", "skipped")
    assert {k: two[-1]["data"][k] for k in count_keys} == {
        k: one[-1]["data"][k] for k in count_keys
    }
    assert two[0]["data"]["scenarios"] == one[0]["data"]["scenarios"]
    suite = ET.parse(tmp_path / "m.xml").getroot().find("./testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("6", "1", "1")


# --- dying workers, browsers and orchestrators ----------------------------------------


def test_killed_worker_costs_only_its_scenario(project: Project, site: Site) -> None:
    """ "after" was sent to the worker ahead of time, while "victim" ran: killed with
    the worker, it goes back to the queue and a new worker runs it."""
    project.scenario("before", visit("before") + PASS)
    project.scenario("victim", visit("victim") + BUSY)
    project.scenario("after", visit("after") + PASS)
    project.collection("kill", ["before", "victim", "after"])
    junit = project.root / "kill.xml"
    proc = project.start("kill", "--workers", "1", "--reporter", f"list,junit={junit}")
    try:
        site.wait_for("victim")
        worker = worker_running(project.root, proc.pid, "victim")
        doomed = {worker, *descendants(worker)}
        os.kill(worker, signal.SIGKILL)
    finally:
        done = project.finish(proc)

    assert done.code == 1, done
    assert re.search(r"⚠ \[w0\] victim.*the worker died", done.out), done.out
    assert "2 passed, 1 interrupted" in done.out
    assert "✗ victim: the worker died" in done.out
    assert site.visits("after")
    events = project.events(done)
    outcomes = {e["scenario"]: e["outcome"] for e in events if "outcome" in e and "scenario" in e}
    assert outcomes == {"before": "completed", "victim": "interrupted", "after": "completed"}
    assert events[-1]["outcome"] == "failed"
    runs = {e["scenario"]: e["scenarioRunId"] for e in events if "scenarioRunId" in e}
    pids = {s: project.manifest(Path("unotest/.runs") / r)["pid"] for s, r in runs.items()}
    assert pids["before"] == pids["victim"] == worker != pids["after"]  # a new worker
    assert wait_gone(doomed) == set()  # its driver and browser went with it
    # JUnit names the killed attempt's run directory, as it does every other's.
    case = ET.parse(junit).getroot().find("./testsuite/testcase[@name='victim']")
    assert case is not None
    assert case.findtext("system-out") == f"run directory: unotest/.runs/{runs['victim']}"
    assert (project.root / "unotest/.runs" / runs["victim"]).is_dir()


def test_killed_worker_while_the_other_drains_the_queue(project: Project, site: Site) -> None:
    """Regression: the replacement worker became ready after the other worker had taken
    the last scenario, and the orchestrator popped from an empty queue (IndexError)."""
    project.scenario("victim", visit("victim") + BUSY)
    project.scenario("quick-0", visit("quick-0"))
    project.scenario("quick-1", visit("quick-1"))
    project.collection("drain", ["victim", "quick-0", "quick-1"])
    proc = project.start("drain", "--workers", "2", "--lanes", "1")
    try:
        site.wait_for("quick-0")  # on the other worker; "quick-1" is still queued
        os.kill(worker_running(project.root, proc.pid, "victim"), signal.SIGKILL)
    finally:
        done = project.finish(proc)

    assert done.code == 1, done
    assert "internal error" not in done.err
    events = project.events(done)
    outcomes = {e["scenario"]: e["outcome"] for e in events if "outcome" in e and "scenario" in e}
    assert outcomes == {"victim": "interrupted", "quick-0": "completed", "quick-1": "completed"}
    assert events[-1] == {**events[-1], "kind": "collection-run:finished", "outcome": "failed"}


def test_killed_browser_costs_only_its_scenario(project: Project, site: Site) -> None:
    project.scenario("victim", visit("victim") + BUSY)
    project.scenario("after", visit("after") + PASS)
    project.collection("crash", ["victim", "after"])
    proc = project.start("crash", "--workers", "1")
    try:
        site.wait_for("victim")
        worker = worker_running(project.root, proc.pid, "victim")
        os.kill(browser_of(worker), signal.SIGKILL)
    finally:
        done = project.finish(proc)

    assert done.code == 1, done
    events = project.events(done)
    outcomes = {e["scenario"]: e["outcome"] for e in events if "outcome" in e and "scenario" in e}
    assert outcomes["victim"] in ("failed", "interrupted")
    assert outcomes["after"] == "completed"  # on a new browser, not the dead one
    assert re.search(r"✗ victim: ", done.out), done.out
    assert events[-1]["outcome"] == "failed"


def test_sigint_aborts_everything_and_leaves_no_process(project: Project, site: Site) -> None:
    for name in ("slow-0", "slow-1", "slow-2"):
        project.scenario(name, visit(name) + BUSY)
    project.collection("interrupt", ["slow-0", "slow-1", "slow-2"])
    proc = project.start("interrupt", "--workers", "2")
    try:
        site.wait_for("slow-0")
        site.wait_for("slow-1")
        family = set(descendants(proc.pid))
        assert len(workers_of(proc.pid)) == 1  # two lanes of one process (the default)
        proc.send_signal(signal.SIGINT)
        sent = time.monotonic()
    finally:
        done = project.finish(proc)

    assert done.code == 130, done
    assert time.monotonic() - sent < 30
    assert "ABORTED" in done.out
    assert wait_gone(family) == set()  # workers, drivers and browsers
    events = project.events(done)
    assert events[-1] == {**events[-1], "kind": "collection-run:finished", "outcome": "aborted"}
    finished = {e["scenario"]: e for e in events if e["kind"].endswith("scenario-finished")}
    assert {"slow-0", "slow-1"} <= set(finished)
    for name, event in finished.items():
        assert event["outcome"] == "aborted"
        assert project.run_events(event["scenarioRunId"])[-1] == {
            "kind": "run:finished",
            "outcome": "aborted",
            "t": project.run_events(event["scenarioRunId"])[-1]["t"],
        }
        assert re.search(rf"■ \[w\d\] {name}", done.out)
    if "slow-2" not in finished:
        assert re.search(r"○\s+slow-2", done.out), done.out
    assert site.visits("slow-2") == [] or "slow-2" in finished
    # No scenario run directory is left looking alive.
    for manifest in (project.root / "unotest/.runs").glob("*/manifest.json"):
        if json.loads(manifest.read_text())["kind"] == "scenario":
            assert project.run_events(manifest.parent.name)[-1]["kind"] == "run:finished"


def test_dbg_abort_of_a_collection_run_stops_it(project: Project, site: Site) -> None:
    """What an agent's ``debug(runId, "abort")`` and ``unotest dbg RUN abort`` do to a
    collection: it used to append to commands.jsonl, which nothing reads, and the
    collection ran to its end."""
    project.scenario("slow-0", visit("slow-0") + BUSY)
    project.collection("interrupt", ["slow-0"])
    proc = project.start("interrupt", "--workers", "1")
    try:
        site.wait_for("slow-0")
        [run_dir] = [
            m.parent
            for m in (project.root / "unotest/.runs").glob("*/manifest.json")
            if json.loads(m.read_text())["kind"] == "collection"
        ]
        env = {k: v for k, v in os.environ.items() if not k.startswith("UNOTEST_")}
        pause = subprocess.run(
            [UNOTEST, "dbg", run_dir.name, "pause"],
            cwd=project.root, env=env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        abort = subprocess.run(
            [UNOTEST, "dbg", run_dir.name, "abort"],
            cwd=project.root, env=env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    finally:
        done = project.finish(proc)

    assert pause.returncode == 2 and "it takes 'abort' only" in pause.stderr, pause
    assert abort.returncode == 0, abort
    assert abort.stdout.strip() == f"collection run {run_dir.name} ended: aborted", abort
    assert done.code == 143, done
    assert project.events(done)[-1]["outcome"] == "aborted"
    assert (run_dir / "commands.jsonl").read_text() == ""


def test_sigint_with_a_run_queued_on_the_worker_starts_nothing_more(
    project: Project, site: Site
) -> None:
    """One worker: its next run is sent ahead, while ``slow`` runs. Ctrl-C aborts
    ``slow`` and the queued run never starts: skipped, as if it had not been sent."""
    project.scenario("slow", visit("slow") + BUSY)
    project.scenario("queued", visit("queued") + PASS)
    project.collection("ahead", ["slow", "queued"])
    proc = project.start("ahead", "--workers", "1")
    try:
        site.wait_for("slow")
        family = set(descendants(proc.pid))
        proc.send_signal(signal.SIGINT)
    finally:
        done = project.finish(proc)

    assert done.code == 130, done
    assert re.search(r"○\s+queued", done.out), done.out
    assert site.visits("queued") == []
    assert wait_gone(family) == set()
    events = project.events(done)
    outcomes = {e["scenario"]: e["outcome"] for e in events if "outcome" in e and "scenario" in e}
    assert outcomes == {"slow": "aborted"}
    assert events[-1] == {**events[-1], "kind": "collection-run:finished", "outcome": "aborted"}


def test_sigint_while_workers_start(project: Project) -> None:
    """Ctrl-C before the workers are ready: exit 130, nothing ran, and no "the worker
    did not start" noise about workers the orchestrator stopped itself."""
    project.scenario("never", visit("never") + PASS)
    project.collection("early", ["never"])
    proc = project.start("early", "--workers", "1")
    runs = project.root / "unotest/.runs"
    try:
        deadline = time.monotonic() + RUN_TIMEOUT_S
        # The worker starts before the project loads (runner.collection.prelaunch): wait
        # for the collection itself to have begun too.
        while not (workers_of(proc.pid) and any(runs.glob("early-*/manifest.json"))):
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.02)
        family = set(descendants(proc.pid))
        proc.send_signal(signal.SIGINT)
    finally:
        done = project.finish(proc)

    assert done.code == 130, done
    assert done.err == ""
    assert "ABORTED" in done.out
    assert project.events(done)[-1]["outcome"] == "aborted"
    assert wait_gone(family) == set()


# --- configuration and usage errors ---------------------------------------------------


# (arguments, what the one-line message on stderr says)
USAGE_ERRORS = [
    (["typed"], r"unotest/e2e/_collections/typed\.yaml:2:0: 'scenarios' must be a list"),
    (["itemtyped"], r"unotest/e2e/_collections/itemtyped\.yaml:3:4: 'scenarios' item 2 must"),
    (["nighty"], r"no collection named 'nighty' \(did you mean 'nightly'\?\)"),
    (["nightly", "--workers", "0"], r"--workers"),
    (["nightly", "--lanes", "0"], r"^unotest: --lanes needs at least 1$"),
    (["nightly", "--shard", "4/3"], r"--shard 4/3"),
    (["orphaned", "--shard", "4/3"], r"--shard 4/3"),  # before any orphan warning
    (["nightly", "--shard", "0/3"], r"--shard 0/3"),
    (["nightly", "--reporter", "xml"], r"--reporter 'xml'"),
]


def test_usage_and_collection_file_errors_exit_2(project: Project) -> None:
    """Wrong types in a collection file, an unknown name and bad arguments: exit 2 with
    one sentence, before anything starts."""
    project.scenario("home", visit("home") + PASS)
    project.collection("nightly", ["home"])
    project.collection("typed", "description: wrong types\nscenarios: 3\n")
    project.collection("itemtyped", "scenarios:\n  - home\n  - 4\n")
    project.collection("orphaned", ["home", "ghost"])
    procs = [project.start(*args) for args, _ in USAGE_ERRORS]  # together: each is quick
    for proc, (args, message) in zip(procs, USAGE_ERRORS, strict=True):
        done = project.finish(proc)
        assert done.code == 2, (args, done)
        lines = done.err.strip().splitlines()
        assert len(lines) == 1, (args, done.err)  # one sentence
        assert lines[0].startswith("unotest: ")
        assert re.search(message, lines[0]), (args, lines[0])
        assert done.out == ""
    assert not (project.root / "unotest/.runs").exists()  # nothing was started


# --- workers started before the project loads (runner.collection.prelaunch) ------------------


def _started_at_ms(pid: int) -> float:
    """When process ``pid`` started, in ms since the epoch: its start in clock ticks
    since boot (``/proc/PID/stat``), against the time since boot now (``/proc/uptime``);
    both in 10 ms steps."""
    with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
        ticks = int(f.read().rsplit(")", 1)[1].split()[19])
    with open("/proc/uptime", encoding="utf-8") as f:
        uptime = float(f.read().split()[0])
    now = time.time()
    return (now - (uptime - ticks / os.sysconf("SC_CLK_TCK"))) * 1000


def _watch_workers(proc: subprocess.Popen[str]) -> dict[int, float]:
    """Every worker the orchestrator ``proc`` has while it runs: pid -> start (ms)."""
    seen: dict[int, float] = {}
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while proc.poll() is None and time.monotonic() < deadline:
        for pid in workers_of(proc.pid):
            if pid not in seen:
                with contextlib.suppress(OSError, StopIteration, ValueError):
                    seen[pid] = _started_at_ms(pid)
        time.sleep(0.01)
    return seen


def _workers_of_project(root: Path) -> set[int]:
    return {
        pid
        for pid, (_, argv) in _processes().items()
        if "runner.workers.main" in argv and str(root) in argv
    }


@pytest.mark.skipif(not Path("/proc/uptime").exists(), reason="needs /proc")
def test_workers_start_before_the_project_loads_and_are_the_ones_that_run(
    project: Project,
) -> None:
    """The orchestrator adopts the workers ``cli.main`` started from the command line
    alone, before the collection's own run directory existed; they run the scenarios."""
    for name in ("one", "two", "three"):
        project.scenario(name, visit(name) + PASS)
    project.collection("trio", ["one", "two", "three", "one"])  # listed twice: once
    proc = project.start("trio", "--workers", "2", "--lanes", "1")
    seen = _watch_workers(proc)
    done = project.finish(proc)

    assert done.code == 0, done
    started = next(e for e in project.events(done) if e["kind"] == "collection-run:started")
    runs = [
        e["scenarioRunId"]
        for e in project.events(done)
        if e["kind"].endswith("started") and "scenarioRunId" in e
    ]
    pids = {project.manifest(f"unotest/.runs/{run}")["pid"] for run in runs}
    assert len(seen) == 2, seen  # two workers, no other ever spawned
    # Those that ran are among them (on a loaded machine one can run all three before
    # the other is ready: that one still counts as started early).
    assert pids and pids <= set(seen), (pids, seen)
    for pid in seen:
        assert seen[pid] < started["t"], (seen, started)


@pytest.mark.skipif(not Path("/proc/uptime").exists(), reason="needs /proc")
def test_workers_started_for_another_count_are_stopped_and_replaced(project: Project) -> None:
    """Two listed, one missing: the two workers started early are one too many; they
    are stopped and one new worker runs the scenario. Nothing is left running."""
    project.scenario("here", visit("here") + PASS)
    project.collection("gappy", ["here", "gone"])
    proc = project.start("gappy", "--workers", "2")
    seen = _watch_workers(proc)
    done = project.finish(proc)

    assert done.code == 0, done
    assert "scenario 'gone' does not exist" in done.err
    events = project.events(done)
    started = next(e for e in events if e["kind"] == "collection-run:started")
    (run,) = [e["scenarioRunId"] for e in events if e["kind"] == "collection-run:scenario-started"]
    pid = project.manifest(f"unotest/.runs/{run}")["pid"]
    assert seen[pid] >= started["t"] - 20, (seen, started)  # a new one (10 ms ticks)
    assert wait_gone(set(seen)) == set()
    assert _workers_of_project(project.root) == set()


def test_a_usage_error_after_the_workers_started_leaves_none(project: Project) -> None:
    """A bad --reporter is found after the workers were started from the command line:
    exit 2, one sentence, and the workers are stopped before the command returns."""
    project.scenario("home", visit("home") + PASS)
    project.collection("nightly", ["home"])
    done = project.run("nightly", "--workers", "2", "--reporter", "xml")
    assert done.code == 2, done
    (line,) = done.err.strip().splitlines()  # one sentence
    assert line.startswith("unotest: --reporter 'xml': expected"), line
    assert _workers_of_project(project.root) == set()


# --- lanes: several workers on one process --------------------------------------------


MEET = '  goto("/barrier.html?for={other}&s=met")\n'
"""Waits for the other scenario to be running: the two run at once."""
LANE_HOOKS = (
    "function before_all() {\n"
    '  goto("/index.html?s=before_all&w=" + env("UNOTEST_WORKER_INDEX"))\n'
    "}\n"
    "function after_all() {\n"
    '  goto("/index.html?s=after_all&w=" + env("UNOTEST_WORKER_INDEX"))\n'
    "}\n"
)


def test_two_lanes_share_a_process_and_keep_a_worker_each(project: Project, site: Site) -> None:
    """The default: ``--workers 2`` is one process with two lanes, whose scenarios run
    side by side (each waits at a barrier for the other's), each lane with its own
    worker index and its own ``before_all``/``after_all`` scope, as a worker of its own."""
    write_files(project.root, {f"{E2E}/_helpers/hooks.js": LANE_HOOKS})
    with_index = '  goto("/index.html?s={s}&w=" + env("UNOTEST_WORKER_INDEX"))\n'
    project.scenario("meet-a", visit("meet-a") + MEET.format(other="meet-b"))
    project.scenario("meet-b", visit("meet-b") + MEET.format(other="meet-a"))
    for name in ("more-0", "more-1"):
        project.scenario(name, with_index.replace("{s}", name))
    project.collection("lanes", ["meet-a", "meet-b", "more-0", "more-1"])
    done = project.run("lanes", "--workers", "2")

    assert done.code == 0, done
    events = project.events(done)
    runs = {e["scenario"]: e["scenarioRunId"] for e in events if "scenarioRunId" in e}
    pids = {project.manifest(Path("unotest/.runs") / run)["pid"] for run in runs.values()}
    assert len(runs) == 4 and len(pids) == 1, (runs, pids)  # one process ran all four
    workers = {e["scenario"]: e["worker"] for e in events if "worker" in e}
    assert sorted(workers[name] for name in ("meet-a", "meet-b")) == [0, 1]
    # Each lane entered the project scope once, and left it once, as its own worker.
    assert sorted(hit["w"] for hit in site.visits("before_all")) == ["0", "1"]
    assert sorted(hit["w"] for hit in site.visits("after_all")) == ["0", "1"]
    assert {site.visits(name)[0]["w"] for name in ("more-0", "more-1")} <= {"0", "1"}


def test_a_killed_process_costs_each_of_its_lanes_scenario(project: Project, site: Site) -> None:
    project.scenario("victim-a", visit("victim-a") + BUSY)
    project.scenario("victim-b", visit("victim-b") + BUSY)
    project.scenario("after-0", visit("after-0") + PASS)
    project.scenario("after-1", visit("after-1") + PASS)
    project.collection("kill", ["victim-a", "victim-b", "after-0", "after-1"])
    proc = project.start("kill", "--workers", "2")
    try:
        site.wait_for("victim-a")
        site.wait_for("victim-b")
        worker = worker_running(project.root, proc.pid, "victim-a")
        assert worker == worker_running(project.root, proc.pid, "victim-b")
        doomed = set(descendants(worker)) | {worker}
        os.kill(worker, signal.SIGKILL)
    finally:
        done = project.finish(proc)

    assert done.code == 1, done
    events = project.events(done)
    outcomes = {e["scenario"]: e["outcome"] for e in events if "outcome" in e and "scenario" in e}
    assert outcomes == {
        "victim-a": "interrupted",
        "victim-b": "interrupted",
        "after-0": "completed",
        "after-1": "completed",
    }
    runs = {e["scenario"]: e["scenarioRunId"] for e in events if "scenarioRunId" in e}
    after = {
        project.manifest(Path("unotest/.runs") / runs[n])["pid"] for n in ("after-0", "after-1")
    }
    assert after.isdisjoint({worker}), after  # a new process took over
    assert wait_gone(doomed) == set()


def test_lanes_1_gives_each_worker_its_own_process(project: Project, site: Site) -> None:
    project.scenario("meet-a", visit("meet-a") + MEET.format(other="meet-b"))
    project.scenario("meet-b", visit("meet-b") + MEET.format(other="meet-a"))
    project.collection("own", ["meet-a", "meet-b"])
    done = project.run("own", "--workers", "2", "--lanes", "1")

    assert done.code == 0, done
    runs = {e["scenarioRunId"] for e in project.events(done) if "scenarioRunId" in e}
    pids = {project.manifest(Path("unotest/.runs") / run)["pid"] for run in runs}
    assert len(runs) == 2 and len(pids) == 2, (runs, pids)
