"""Retries and flaky scenarios through the real CLI, in real Chromium (issue 18).

The test's own server (tests/flaky_site.py) makes a scenario flaky: its page is broken
on the first request and ready on the next. What is checked: one ``retry`` event and a
``flaky`` ``test_end``, exit 0; an always failing scenario runs N+1 times and fails,
exit 1; each retry is its own run directory linked to the first (``attempt``,
``retryOf``); flaky in the list summary, JUnit (``<flakyFailure>``/``<rerunFailure>``)
and JSON; ``--bail`` counts only scenarios that failed every attempt; the NDJSON stream
equals the JSON report; every envelope validates against the version-1 schema.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from flaky_site import FlakyProject, FlakySite, served, validate_envelopes

from runner.store.retries import attempt_chain


@pytest.fixture
def site() -> Iterator[FlakySite]:
    yield from served()


@pytest.fixture
def project(tmp_path: Path, site: FlakySite, chromium_path: str) -> FlakyProject:
    return FlakyProject(tmp_path / "proj", site, chromium_path)


def types(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]


def of_type(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e["data"] for e in events if e["type"] == kind]


def test_e2e_flaky_scenario_passes_on_its_retry(
    project: FlakyProject, tmp_path: Path, protocol_validate: Callable[[str, object], None]
) -> None:
    project.scenario("shop/cart", "cart", "1")
    report = tmp_path / "report.json"
    done = project.cli("e2e", "shop/cart", "--retries", "2", "--reporter", f"json={report}")

    assert done.code == 0, done
    assert project.site.requests("cart") == 2
    # The last line is no clean pass's: it says flaky and why the first attempt failed.
    last = done.out.strip().splitlines()[-1]
    assert last.startswith("~ shop/cart: flaky, passed on attempt 2 (attempt 1: "), done.out
    assert "Ready" in last
    events = json.loads(report.read_text())
    validate_envelopes(events)
    assert types(events)[:3] == ["run_start", "suite_start", "test_start"]
    assert types(events)[-4:] == ["retry", "test_end", "suite_end", "run_end"]
    # test_start names the first attempt's run, as a collection's does (reporting.md).
    [start] = of_type(events, "test_start")
    assert start["run_id"] == of_type(events, "test_end")[0]["run_ids"][0]
    assert "worker" in start and start["worker"] is None
    [retry] = of_type(events, "retry")
    assert retry["name"] == "shop/cart" and retry["attempt"] == 1 and retry["status"] == "failed"
    assert "Ready" in retry["error_message"]
    [end] = of_type(events, "test_end")
    assert end["status"] == "flaky" and end["error_message"] is None
    assert end["suite"] == "shop" and isinstance(end["duration_ns"], int)
    assert of_type(events, "run_end")[0] == {
        **of_type(events, "run_end")[0],
        "total": 1,
        "passed": 0,
        "flaky": 1,
        "failed": 0,
        "skipped": 0,
        "random_seed": None,
    }
    # the scenario's log() line, once per attempt, as output events
    logged = [o["text"] for o in of_type(events, "output") if o["test_name"] == "shop/cart"]
    assert logged.count("@ visiting cart") == 2
    # every attempt is its own run, the retry linked to the first
    first, second = end["run_ids"]
    assert retry["run_id"] == first and end["run_id"] == second
    assert project.manifest(second)["attempt"] == 2
    assert project.manifest(second)["retryOf"] == first
    protocol_validate("RunManifest", project.manifest(second))  # additive fields only
    assert "attempt" not in project.manifest(first)
    runs = project.root / "unotest/.runs"
    for either in (first, second):
        chain = attempt_chain(runs, either)
        assert chain.run_ids == (first, second) and chain.status == "flaky"
    # the live copy in the first attempt's directory holds the same envelopes
    live = project.root / "unotest/.runs" / first / "events.ndjson"
    assert [json.loads(line) for line in live.read_text().splitlines()] == events


def test_e2e_always_failing_runs_n_plus_one_times(project: FlakyProject, tmp_path: Path) -> None:
    project.scenario("broken", "down", "always")
    done = project.cli("e2e", "broken", "--retries", "2", "--json")

    assert done.code == 1, done
    assert project.site.requests("down") == 3
    result = json.loads(done.out)
    assert result["outcome"] == "failed" and result["status"] == "failed"
    assert result["attempts"] == 3
    [history] = project.history_files()
    events = json.loads(history.read_text())
    validate_envelopes(events)
    retries = of_type(events, "retry")
    assert [r["attempt"] for r in retries] == [1, 2]
    assert all(r["status"] == "failed" for r in retries)
    [end] = of_type(events, "test_end")
    assert end["status"] == "failed" and "Ready" in end["error_message"]
    assert end["suite"] is None and "suite_start" not in types(events)
    assert len(set(end["run_ids"])) == 3
    assert history.stem == end["run_ids"][0]
    chain = attempt_chain(project.root / "unotest/.runs", end["run_ids"][1])
    assert chain.run_ids == tuple(end["run_ids"]) and chain.status == "failed"


def test_retries_from_the_config_and_the_flag_wins(
    tmp_path: Path, site: FlakySite, chromium_path: str
) -> None:
    project = FlakyProject(tmp_path / "proj", site, chromium_path, extra="retries: 1\n")
    project.scenario("a", "a", "1")
    project.scenario("b", "b", "1")

    assert project.cli("e2e", "a").code == 0  # retries: 1 from the config
    assert site.requests("a") == 2
    done = project.cli("e2e", "b", "--retries", "0")
    assert done.code == 1, done
    assert site.requests("b") == 1


def test_collection_reports_flaky_everywhere(project: FlakyProject, tmp_path: Path) -> None:
    project.scenario("ok", "ok", "0")
    project.scenario("flaky", "flaky", "1")
    project.scenario("down", "down", "always")
    project.collection("nightly", ["ok", "flaky", "down"])
    junit, report = tmp_path / "junit.xml", tmp_path / "report.json"
    done = project.cli(
        "collection", "nightly", "--retries", "1", "--reporter", f"list,junit={junit},json={report}"
    )

    assert done.code == 1, done  # "down" failed both attempts
    assert project.site.requests("flaky") == 2 and project.site.requests("down") == 2
    assert project.site.requests("ok") == 1
    assert "1 passed, 1 flaky, 1 failed" in done.out
    assert "~ flaky: flaky, passed on attempt 2" in done.out
    assert "↻" in done.out and "failed all 2 attempts" in done.out

    cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    assert cases["flaky"].find("failure") is None
    [flaky_failure] = cases["flaky"].findall("flakyFailure")
    assert "Ready" in (flaky_failure.get("message") or "")
    assert cases["down"].find("failure") is not None
    assert len(cases["down"].findall("rerunFailure")) == 1
    assert not cases["ok"].findall("flakyFailure") and cases["ok"].find("failure") is None

    events = json.loads(report.read_text())
    validate_envelopes(events)
    assert types(events)[:2] == ["run_start", "suite_start"]
    assert types(events)[-2:] == ["suite_end", "run_end"]
    ends = {e["name"]: e for e in of_type(events, "test_end")}
    assert {n: e["status"] for n, e in ends.items()} == {
        "ok": "passed",
        "flaky": "flaky",
        "down": "failed",
    }
    # each retry comes right before its own test_end
    for index, event in enumerate(events):
        if event["type"] == "retry":
            follower = events[index + 1]
            assert follower["type"] in ("retry", "test_end")
            assert follower["data"]["name"] == event["data"]["name"]
    run_end = of_type(events, "run_end")[0]
    assert (run_end["passed"], run_end["flaky"], run_end["failed"]) == (1, 1, 1)
    # each attempt's log() line, forwarded by the worker, inside its test's start and end
    outputs = [i for i, e in enumerate(events) if e["type"] == "output"]
    flaky_lines = [i for i in outputs if events[i]["data"]["test_name"] == "flaky"]
    assert [events[i]["data"]["text"] for i in flaky_lines] == ["@ visiting flaky"] * 2
    start = types(events).index("test_start", 0)
    starts = {e["data"]["name"]: i for i, e in enumerate(events) if e["type"] == "test_start"}
    finish = {e["data"]["name"]: i for i, e in enumerate(events) if e["type"] == "test_end"}
    assert start <= starts["flaky"] < min(flaky_lines) and max(flaky_lines) < finish["flaky"]
    assert len(outputs) == 1 + 2 + 2  # ok once, flaky and down twice each
    retry_id = ends["flaky"]["run_id"]
    assert project.manifest(retry_id)["retryOf"] == ends["flaky"]["run_ids"][0]
    assert project.manifest(retry_id)["parentRunId"] == run_end["runId"]


def test_collection_with_only_a_flaky_failure_passes_and_bail_ignores_it(
    project: FlakyProject,
) -> None:
    project.scenario("flaky", "flaky", "1")
    project.scenario("after", "after", "0")
    project.collection("nightly", ["flaky", "after"])
    done = project.cli("collection", "nightly", "--retries", "1", "--bail", "--workers", "1")

    assert done.code == 0, done
    assert "PASSED" in done.out or "COMPLETED" in done.out
    assert project.site.requests("after") == 1  # --bail did not stop at the flaky one


def test_bail_before_a_retry_reports_the_attempt_that_failed_not_not_started(
    project: FlakyProject, tmp_path: Path
) -> None:
    """One worker: "flaky" is handed to it while "down" runs, fails its first attempt and
    waits for its retry; "down"'s last attempt fails first and --bail stops the
    collection. "flaky" ran and failed: it was reported "not started" (JUnit skipped)."""
    project.scenario("down", "down", "always")
    project.scenario("flaky", "flaky", "1")
    project.scenario("after", "after", "0")
    project.collection("nightly", ["down", "flaky", "after"])
    junit = tmp_path / "junit.xml"
    done = project.cli(
        "collection", "nightly", "--retries", "1", "--bail", "--workers", "1",
        "--reporter", f"list,junit={junit}",
    )  # fmt: skip

    assert done.code == 1, done
    assert project.site.requests("down") == 2 and project.site.requests("flaky") == 1
    assert project.site.requests("after") == 0
    assert re.search(r"✗ .*flaky", done.out), done.out
    assert not re.search(r"flaky\s+not started", done.out), done.out
    cases = {case.get("name"): case for case in ET.parse(junit).iter("testcase")}
    assert cases["flaky"].find("failure") is not None and cases["flaky"].find("skipped") is None
    assert "Ready" in (cases["flaky"].find("failure").get("message") or "")
    assert cases["after"].find("skipped") is not None


def test_ndjson_stream_is_the_json_report(project: FlakyProject, tmp_path: Path) -> None:
    project.scenario("flaky", "flaky", "1")
    project.collection("nightly", ["flaky"])
    report = tmp_path / "report.json"
    done = project.cli(
        "collection", "nightly", "--retries", "1", "--reporter", f"ndjson,json={report}"
    )

    assert done.code == 0, done
    streamed = [json.loads(line) for line in done.out.splitlines()]
    validate_envelopes(streamed)
    assert streamed == json.loads(report.read_text())
    assert types(streamed).count("retry") == 1


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--retries", "-1"], "--retries -1"),
        (["--retries", "11"], "from 0 to 10"),
        (["--reporter", "ndjson,list"], "without 'list'"),
    ],
)
def test_bad_retry_and_reporter_arguments_are_one_sentence(
    project: FlakyProject, args: list[str], words: str
) -> None:
    project.scenario("a", "a", "0")
    project.collection("c", ["a"])
    for command in (["e2e", "a"], ["collection", "c"]):
        done = project.cli(*command, *args)
        assert done.code == 2, done
        assert words in done.err and len(done.err.strip().splitlines()) == 1, done.err
    assert project.site.requests("a") == 0


def test_e2e_json_and_ndjson_cannot_share_stdout(project: FlakyProject) -> None:
    project.scenario("a", "a", "0")
    done = project.cli("e2e", "a", "--json", "--reporter", "ndjson")
    assert done.code == 2 and "choose one" in done.err, done
    assert project.site.requests("a") == 0


def test_e2e_ndjson_streams_on_stdout(project: FlakyProject) -> None:
    project.scenario("a", "a", "1")
    done = project.cli("e2e", "a", "--retries", "1", "--reporter", "ndjson")
    assert done.code == 0, done
    streamed = [json.loads(line) for line in done.out.splitlines()]
    validate_envelopes(streamed)
    assert types(streamed) == [
        "run_start",
        "test_start",
        "output",
        "output",
        "retry",
        "test_end",
        "run_end",
    ]
    assert "@ visiting a" in done.err  # the run's own console went to stderr


def test_the_web_server_start_is_a_before_all_hook(
    tmp_path: Path, site: FlakySite, chromium_path: str
) -> None:
    from net import free_port

    port = free_port()
    (tmp_path / "www").mkdir()
    extra = (
        "webServer:\n"
        f"  command: {sys.executable} -m http.server {port} --bind 127.0.0.1\n"
        f"  url: http://127.0.0.1:{port}/\n"
        f"  cwd: {tmp_path / 'www'}\n"
    )
    project = FlakyProject(tmp_path / "proj", site, chromium_path, extra=extra)
    project.scenario("ok", "ok", "0")
    project.collection("c", ["ok"])
    report = tmp_path / "report.json"
    done = project.cli("collection", "c", "--reporter", f"json={report}")

    assert done.code == 0, done
    events = json.loads(report.read_text())
    validate_envelopes(events)
    assert types(events)[:4] == ["run_start", "suite_start", "hook", "test_start"]
    [hook] = of_type(events, "hook")
    assert hook["kind"] == "before_all" and hook["status"] == "passed"
    assert hook["suite"] == "c" and hook["test_name"] is None and hook["duration_ns"] > 0


def test_e2e_retries_keep_the_web_server_of_the_first_attempt(
    tmp_path: Path, site: FlakySite, chromium_path: str
) -> None:
    """Each attempt restarted it, and with it whatever state the site keeps; now the
    first attempt's server serves the retry and stops after it, as in a collection."""
    from net import free_port

    port = free_port()
    www = tmp_path / "www"
    www.mkdir()
    starts = tmp_path / "starts.txt"
    extra = (
        "webServer:\n"
        f"  command: echo started >> {starts}; exec {sys.executable} -m http.server {port} "
        "--bind 127.0.0.1\n"
        f"  url: http://127.0.0.1:{port}/\n"
        f"  cwd: {www}\n"
    )
    project = FlakyProject(tmp_path / "proj", site, chromium_path, extra=extra)
    project.scenario("cart", "cart", "1")  # fails once, then passes
    done = project.cli("e2e", "cart", "--retries", "1")

    assert done.code == 0, done
    assert site.requests("cart") == 2
    assert starts.read_text().splitlines() == ["started"]  # one server for both attempts
    with pytest.raises(OSError):  # and stopped at the end
        socket.create_connection(("127.0.0.1", port), timeout=2).close()


def test_a_web_server_that_does_not_start_is_a_failed_hook_and_the_run_ends(
    tmp_path: Path, site: FlakySite, chromium_path: str
) -> None:
    from net import free_port

    port = free_port()
    extra = (
        "webServer:\n"
        f"  command: {sys.executable} -c 'raise SystemExit(3)'\n"
        f"  url: http://127.0.0.1:{port}/\n"
        "  timeout: 20000\n"
    )
    project = FlakyProject(tmp_path / "proj", site, chromium_path, extra=extra)
    project.scenario("ok", "ok", "0")
    project.collection("c", ["ok"])
    done = project.cli("collection", "c", "--reporter", "ndjson,junit=out/c.xml")

    assert done.code == 2, done
    assert done.err.startswith("unotest: "), done.err
    streamed = [json.loads(line) for line in done.out.splitlines()]
    validate_envelopes(streamed)
    # The scenario it could not run is failed, with why (as a scenario run alone is).
    assert types(streamed) == [
        "run_start",
        "suite_start",
        "hook",
        "test_start",
        "test_end",
        "suite_end",
        "run_end",
    ]
    hook = streamed[2]["data"]
    assert hook["kind"] == "before_all" and hook["status"] == "failed"
    assert hook["error_message"] and hook["error_message"] in done.err
    end = streamed[4]["data"]
    assert end["status"] == "failed" and end["error_message"] == hook["error_message"]
    assert streamed[-1]["data"]["outcome"] == "failed"
    assert project.site.requests("ok") == 0
    # The reports and the run directory are whole: it used to end with neither.
    junit = ET.parse(project.root / "out" / "c.xml").getroot()
    assert junit.get("failures") == "1"
    [run_dir] = (project.root / "unotest" / ".runs").glob("c-*")
    last = json.loads((run_dir / "steps.jsonl").read_text().splitlines()[-1])
    assert (last["kind"], last["outcome"]) == ("collection-run:finished", "failed")


def test_a_debug_run_never_retries_and_the_flag_wins() -> None:
    from runner.errors import UsageError
    from runner.project.config import Config
    from runner.store.retries import retries_of

    config = Config(root=Path("."), retries=3)
    assert retries_of(None, config) == 3
    assert retries_of(1, config) == 1
    assert retries_of(0, config) == 0
    assert retries_of(2, config, debug=True) == 0
    assert retries_of(None, config, debug=True) == 0
    with pytest.raises(UsageError, match="--retries 11"):
        retries_of(11, config)


def test_a_debugger_restart_is_no_attempt_and_debug_never_retries(project: FlakyProject) -> None:
    from events import append_command, is_kind, wait_for_event
    from sites import unotest_env

    project.scenario("again", "again", "always")
    proc = subprocess.Popen(
        [sys.executable, "-m", "unotest", "e2e", "again", "--debug", "--break", "6:2"],
        cwd=project.root,
        env=unotest_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    runs = project.root / "unotest/.runs"
    try:
        deadline = time.monotonic() + 60
        while not (runs.is_dir() and any(runs.iterdir())) and time.monotonic() < deadline:
            time.sleep(0.05)
        [first] = list(runs.iterdir())
        wait_for_event(first, is_kind("paused", line=6, col=2))
        ident = append_command(first, "restart")
        _, answer = wait_for_event(
            first, lambda e: e.get("id") == ident and e["kind"] == "command:result"
        )
        second = runs / answer["value"]
        wait_for_event(second, is_kind("paused", line=6, col=2))
        append_command(second, "continue")
        wait_for_event(second, is_kind("paused", reason="failure"))  # debug: pauses there
        append_command(second, "abort")
        assert proc.wait(60) != 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)

    manifest = project.manifest(second.name)
    assert manifest["restartOf"] == first.name
    assert "attempt" not in manifest and "retryOf" not in manifest
    assert project.site.requests("again") == 1  # no retry after the failure
    live = [json.loads(line) for line in (first / "events.ndjson").read_text().splitlines()]
    assert types(live).count("test_start") == 1 and "retry" not in types(live)
    assert types(live)[-1] == "run_end"
