"""A collection over a pool of real browser servers: three ``playwright run-server``
processes on loopback ports, as three hosts (``run_servers.RunServer``, ``--unsafe``
since the config sends ``executablePath``), and ``unotest collection`` run as CI runs it.

- spread: every scenario's manifest names the endpoint it ran on, and all three are
  used; the console's worker column, the collection's events and the JSON report say
  the same.
- a server killed with ``kill -9`` (its whole process tree, as a host that dies)
  mid-scenario: every scenario still passes; the endpoint is said down once (console,
  JSON report, the collection's ``collection-run:endpoint-down``); the lost scenario
  runs again elsewhere as an infrastructure retry, recorded (``infra_retries``,
  ``infraRetryOf``) and counted as neither a retry nor a flaky pass.
- every endpoint down: the collection stops with one sentence and exit 2, keeping the
  run that finished (its report and history).
- ``unotest watch``'s warm pool: a worker placed on an endpoint that refuses it goes to
  another, the endpoint said down once.

The two servers that stay up are shared by the module's tests; each test that kills
one starts its own.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from events import read_events
from net import free_port
from recording_site import RecordingSite
from run_servers import RunServer
from sites import E2E, collection_yaml, config_yaml, scenario_source, write_files, write_project

from runner.project.config import load_config
from runner.watch.pool import WarmPool
from runner.workers.pool import BrowserPool

SITE = Path(__file__).resolve().parent / "site_collection"
UNOTEST = str(Path(sys.executable).with_name("unotest"))
RUN_TIMEOUT_S = 240


@pytest.fixture(scope="module")
def site() -> Iterator[RecordingSite]:
    served = RecordingSite(SITE, RUN_TIMEOUT_S)
    try:
        yield served
    finally:
        served.close()


@pytest.fixture(scope="module")
def servers() -> Iterator[list[RunServer]]:
    """Two servers that stay up for every test of the module."""
    started: list[RunServer] = []
    try:
        for _ in range(2):
            started.append(RunServer("--unsafe"))
        yield started
    finally:
        for server in started:
            server.stop()


@pytest.fixture
def victim() -> Iterator[RunServer]:
    """A third server, of one test: it is killed."""
    server = RunServer("--unsafe")
    try:
        yield server
    finally:
        server.stop()


def busy(name: str, beats: int) -> str:
    """Visit the site (so a test sees it run), then about ``beats`` quarter seconds of
    browser calls: a dead connection fails the next one."""
    return (
        f'  goto("/index.html?s={name}")\n'
        f"  for (const i of range({beats})) {{\n"
        "    wait(250)\n"
        '    expect_visible(role("heading", "Collection home"))\n'
        "  }\n"
    )


def project_with(
    root: Path, site: RecordingSite, chromium: str, pool: str, scenarios: dict[str, int]
) -> Path:
    timeout = {"action": 5000, "expect": 5000, "navigation": 40000, "scenario": 90000}
    write_project(root, config_yaml(site.url, timeout=timeout, chromium=chromium, extra=pool))
    for name, beats in scenarios.items():
        source = scenario_source(
            name, busy(name, beats), title=name, fn="test_" + name.replace("-", "_")
        )
        write_files(root, {f"{E2E}/{name}.test.js": source})
    write_files(root, {f"{E2E}/_collections/pool.yaml": collection_yaml(scenarios)})
    return root


def start(root: Path, *args: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("UNOTEST_")}
    return subprocess.Popen(
        [UNOTEST, "collection", "pool", *args],
        cwd=root,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    try:
        out, err = proc.communicate(timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"unotest collection did not end\n{out}\n{err}")
    assert "Traceback" not in out + err, out + err
    return proc.returncode, out, err


def manifests(root: Path) -> dict[str, dict[str, Any]]:
    """Each scenario run's manifest by run id."""
    found = {}
    for path in (root / "unotest/.runs").glob("*/manifest.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("kind") == "scenario":
            found[path.parent.name] = data
    return found


def collection_events(root: Path) -> list[dict[str, Any]]:
    (run_dir,) = [
        path.parent
        for path in (root / "unotest/.runs").glob("*/manifest.json")
        if json.loads(path.read_text(encoding="utf-8")).get("kind") == "collection"
    ]
    return read_events(run_dir, finished=True)


def report(path: Path) -> list[dict[str, Any]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(data, list)
    return data


def shown(endpoint: str) -> str:
    return endpoint if endpoint.endswith("/") else endpoint + "/"


def pool_yaml(*endpoints: str, capacity: int | None = None) -> str:
    lines = ["wsEndpoint:"]
    for endpoint in endpoints:
        lines.append(f"  - url: {endpoint}")
        if capacity is not None:
            lines.append(f"    capacity: {capacity}")
    return "\n".join(lines) + "\n"


def test_a_collection_is_spread_over_three_servers(
    tmp_path: Path,
    site: RecordingSite,
    servers: list[RunServer],
    victim: RunServer,
    chromium_path: str,
) -> None:
    hosts = [*servers, victim]
    endpoints = [shown(server.endpoint) for server in hosts]
    names = {f"spread-{i}": 2 for i in range(6)}
    root = project_with(tmp_path / "p", site, chromium_path, pool_yaml(*endpoints), names)
    json_path = tmp_path / "report.json"

    code, out, err = finish(start(root, "--workers", "3", "--reporter", f"list,json={json_path}"))

    assert code == 0, out + err
    assert "6 passed" in out
    runs = manifests(root)
    assert sorted(m["ref"] for m in runs.values()) == sorted(names)
    assert {m["browserEndpoint"] for m in runs.values()} == set(endpoints)  # all three
    for endpoint in endpoints:  # the console's worker column names each host
        label = endpoint.removeprefix("ws://").removesuffix("/")
        assert re.search(rf"✓ \[w\d {re.escape(label)}\] spread-", out), out
    started = [e for e in collection_events(root) if e["kind"].endswith("scenario-started")]
    assert {e["endpoint"] for e in started} == set(endpoints)
    assert all(runs[e["scenarioRunId"]]["browserEndpoint"] == e["endpoint"] for e in started)
    ends = [e["data"] for e in report(json_path) if e["type"] == "test_end"]
    assert {end["browser_endpoint"] for end in ends} == set(endpoints)
    assert all(end["infra_retries"] == [] for end in ends)
    assert "endpoint" not in err and "is down" not in out

    # A run of its own uses the pool's first endpoint, and its manifest says so.
    env = {k: v for k, v in os.environ.items() if not k.startswith("UNOTEST_")}
    single = subprocess.run(
        [UNOTEST, "e2e", "spread-0"], cwd=root, env=env, capture_output=True, text=True
    )
    assert single.returncode == 0, single.stdout + single.stderr
    (alone,) = [m for run, m in manifests(root).items() if run not in runs]
    assert alone["browserEndpoint"] == endpoints[0]


def test_a_server_killed_mid_collection_costs_nothing(
    tmp_path: Path,
    site: RecordingSite,
    servers: list[RunServer],
    victim: RunServer,
    chromium_path: str,
) -> None:
    doomed = shown(victim.endpoint)
    endpoints = [doomed, *(shown(server.endpoint) for server in servers)]
    names = {f"kill-{i}": 10 for i in range(6)}
    root = project_with(tmp_path / "p", site, chromium_path, pool_yaml(*endpoints), names)
    json_path = tmp_path / "report.json"
    proc = start(root, "--workers", "3", "--reporter", f"list,json={json_path}")
    try:
        # A scenario in flight on the doomed server: its run says so and it reached the site.
        deadline = time.monotonic() + 120
        while True:
            on_it = [
                m["ref"] for m in manifests(root).values() if m.get("browserEndpoint") == doomed
            ]
            if any(site.visits(name) for name in on_it):
                break
            assert time.monotonic() < deadline, "no scenario ran on the doomed server"
            time.sleep(0.1)
        victim.kill_host()
    finally:
        code, out, err = finish(proc)

    assert code == 0, out + err
    assert "6 passed" in out, out
    assert "flaky" not in out and "failed" not in out, out
    assert out.count(f"browser endpoint {doomed} is down") == 1, out
    assert re.search(r"⟳ .*kill-\d.*infrastructure retry, not counted", out), out

    events = collection_events(root)
    down = [e for e in events if e["kind"] == "collection-run:endpoint-down"]
    assert [e["endpoint"] for e in down] == [doomed]
    lost = [e for e in events if e.get("infraRetry")]
    assert len(lost) == 1
    lost_run, scenario = lost[0]["scenarioRunId"], lost[0]["scenario"]
    runs = manifests(root)
    assert runs[lost_run]["browserEndpoint"] == doomed
    (again,) = [run for run, m in runs.items() if m.get("infraRetryOf") == lost_run]
    assert runs[again]["ref"] == scenario and runs[again]["browserEndpoint"] != doomed
    assert "attempt" not in runs[again] and "retryOf" not in runs[again]  # no --retries attempt

    envelopes = report(json_path)
    assert not [e for e in envelopes if e["type"] == "retry"]
    ends = {e["data"]["name"]: e["data"] for e in envelopes if e["type"] == "test_end"}
    assert {end["status"] for end in ends.values()} == {"passed"}
    assert ends[scenario]["attempts"] == 1 and ends[scenario]["run_id"] == again
    (infra,) = ends[scenario]["infra_retries"]
    assert (infra["run_id"], infra["browser_endpoint"]) == (lost_run, doomed)
    assert "ECONNREFUSED" in infra["reason"], infra
    (run_end,) = [e["data"] for e in envelopes if e["type"] == "run_end"]
    assert (run_end["passed"], run_end["flaky"], run_end["failed"]) == (6, 0, 0)
    assert [d["endpoint"] for d in run_end["browser_endpoints_down"]] == [doomed]


def test_every_server_down_stops_the_collection_keeping_what_finished(
    tmp_path: Path, site: RecordingSite, victim: RunServer, chromium_path: str
) -> None:
    doomed = shown(victim.endpoint)
    nobody = f"ws://127.0.0.1:{free_port()}/"
    names = {"first-done": 1, "second-lost": 40, "third-never": 1}
    root = project_with(
        tmp_path / "p", site, chromium_path, pool_yaml(doomed, nobody, capacity=1), names
    )
    json_path = tmp_path / "report.json"
    proc = start(root, "--workers", "1", "--reporter", f"list,json={json_path}")
    try:
        site.wait_for("second-lost")
        victim.kill_host()
    finally:
        code, out, err = finish(proc)

    assert code == 2, out + err
    sentences = [line for line in err.splitlines() if "every browser endpoint" in line]
    assert len(sentences) == 1, err
    assert doomed in sentences[0] and nobody in sentences[0]
    assert "✓ [w0 " in out and "first-done" in out
    ends = {e["data"]["name"]: e["data"] for e in report(json_path) if e["type"] == "test_end"}
    assert ends["first-done"]["status"] == "passed"
    assert ends["second-lost"]["outcome"] == "interrupted"
    assert ends["third-never"]["status"] == "skipped"
    history = list((root / "unotest/.history").glob("*.json"))
    assert len(history) == 1  # the run that finished is kept
    kept = {
        e["data"]["name"]: e["data"]["status"]
        for e in json.loads(history[0].read_text())
        if e["type"] == "test_end"
    }
    assert kept["first-done"] == "passed"


def test_watch_workers_avoid_an_endpoint_that_refuses_them(
    tmp_path: Path, site: RecordingSite, servers: list[RunServer], chromium_path: str
) -> None:
    nobody = f"ws://127.0.0.1:{free_port()}/"
    live = shown(servers[0].endpoint)
    root = project_with(tmp_path / "p", site, chromium_path, pool_yaml(nobody, live), {"w-1": 1})

    async def scenario() -> None:
        degraded: list[tuple[str, str]] = []
        pool = WarmPool(root, 2, lambda scope, what, *_: degraded.append((scope, what)))
        pool.browsers = BrowserPool(load_config(root, {}).endpoints, 2)
        await pool.start()
        try:
            assert sorted(pool.browsers.endpoint_of(i) for i in pool.members) == [1, 1]
            outcome = await pool.run("w-1", lambda run_id: None, lambda: True)
            assert outcome is not None and outcome.report is not None
            assert outcome.report["result"]["outcome"] == "completed"  # type: ignore[index]
            assert outcome.run_id is not None
            manifest = root / "unotest/.runs" / outcome.run_id / "manifest.json"
            assert json.loads(manifest.read_text())["browserEndpoint"] == live
        finally:
            await pool.close()
        assert degraded == [("endpoint:0", f"browser endpoint {nobody} is down")]

    asyncio.run(scenario())
