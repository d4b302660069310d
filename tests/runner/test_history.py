"""History, envelopes and pruning without a browser: the files are written as the CLI
writes them (``runner.store.history.save_history``, ``runner.store.rundir.RunDirectory``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from flaky_site import validate_envelopes
from sites import write_project

from runner import events
from runner.errors import ConfigError, EventProtocolError
from runner.project.config import HistoryConfig, load_config
from runner.project.index import Project
from runner.store import envelope
from runner.store.event_log import EventLog
from runner.store.history import (
    SCENARIO_NOT_FOUND,
    bound_history,
    history_dir,
    history_report,
    load_history,
    longest_first,
    medians_ms,
    outcomes,
    referenced_run_ids,
    save_history,
    summarize,
)
from runner.store.prune import prune_runs
from runner.store.retries import Attempt, final_status
from runner.store.rundir import RunDirectory

UNBOUNDED = HistoryConfig(max_age_days=0, max_bytes=0)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(write_project(tmp_path / "proj", "headless: true\n"))


def one_run(name: str, statuses: list[str], ms: int, run_id: str) -> list[envelope.Envelope]:
    """The envelopes of one run of ``name`` whose attempts ended with ``statuses``."""
    log = EventLog()
    log.emit(envelope.run_start(1))
    log.emit(envelope.test_start(name))
    kinds = {"passed": "completed", "failed": "failed", "skipped": "skipped"}
    attempts = [
        Attempt(i + 1, f"{run_id}-{i}", kinds[s], ms, "boom" if s == "failed" else None)  # type: ignore[arg-type]
        for i, s in enumerate(statuses)
    ]
    log.test_finished(name, None, attempts[-1], attempts[:-1])
    log.run_end(ms * len(statuses))
    return log.events


def test_envelopes_of_every_type_validate_and_optional_fields_are_null() -> None:
    every = [
        envelope.run_start(2),
        envelope.suite_start("s"),
        envelope.hook("before_all", "passed", 5),
        envelope.test_start("t"),
        envelope.output("stdout", "hi"),
        envelope.retry("t", 1, "failed", 7),
        envelope.test_end("t", None, "flaky", 9),
        envelope.suite_end("s"),
        envelope.run_end({"passed": 1, "flaky": 1}, 20),
    ]
    validate_envelopes(every)
    assert every[0]["data"] == {"total": 2, "random_seed": None}
    assert every[2]["data"]["test_name"] is None and every[2]["data"]["error_message"] is None
    assert every[-1]["data"]["total"] == 2
    assert envelope.duration_ns(1.5) == 1_500_000
    frame = envelope.sse_frame(every[5])
    assert frame.startswith("event: retry\ndata: {") and frame.endswith("}\n\n")


def test_a_reader_refuses_another_major_version_in_one_sentence() -> None:
    ok = [envelope.run_start(0), {"protocol_version": 1, "type": "future", "data": {}}]
    assert [e["type"] for e in envelope.read_envelopes(ok, "r.json")] == ["run_start", "future"]
    with pytest.raises(EventProtocolError) as caught:
        envelope.read_envelopes([{"protocol_version": 2, "type": "x", "data": {}}], "r.json")
    assert str(caught.value).startswith("r.json: event protocol version 2 is not supported")
    assert "\n" not in str(caught.value)


def test_a_scenario_that_never_ran_has_no_attempt_and_a_missing_one_no_history(
    tmp_path: Path,
) -> None:
    log = EventLog()
    log.emit(envelope.run_start(2))
    for name, note in (("gone", SCENARIO_NOT_FOUND), ("later", "not started")):
        never = Attempt(1, None, "skipped", 0, note)
        log.test_finished(name, "c", never, [], {"error_message": note})
    log.run_end(0)
    validate_envelopes(log.events)
    ends = [e["data"] for e in log.events if e["type"] == "test_end"]
    assert [(e["attempts"], e["run_ids"]) for e in ends] == [(0, []), (0, [])]
    # A name the collection lists that is no scenario (a typo) gets no history rows.
    assert set(outcomes([(tmp_path / "h.json", log.events)])) == {"later"}


def test_an_aborted_run_is_shown_but_is_no_failure_of_the_scenario(tmp_path: Path) -> None:
    """A debug session closed (MCP), a restart, Ctrl-C: the report's status is failed,
    but the scenario did not fail; its pass rate and failed count leave it out."""
    runs = [one_run("s", ["passed"], 10, "a")]
    log = EventLog()
    log.emit(envelope.run_start(1))
    log.test_finished("s", None, Attempt(1, "b-0", "aborted", 5), [])
    log.run_end(5)
    assert [e["data"]["status"] for e in log.events if e["type"] == "test_end"] == ["failed"]
    runs.append(log.events)
    seen = outcomes([(tmp_path / f"{i}.json", run) for i, run in enumerate(runs)])
    row = summarize("s", seen["s"], 10)
    assert (row.strip, row.pass_rate, row.failed) == ("✓-", 1.0, 0)


def test_retry_events_precede_test_end_and_status_is_flaky() -> None:
    run = one_run("a", ["failed", "failed", "passed"], 10, "r")
    validate_envelopes(run)
    assert [e["type"] for e in run] == [
        "run_start",
        "test_start",
        "retry",
        "retry",
        "test_end",
        "run_end",
    ]
    assert [e["data"]["attempt"] for e in run if e["type"] == "retry"] == [1, 2]
    assert run[4]["data"]["status"] == "flaky" and run[4]["data"]["run_ids"] == [
        "r-0",
        "r-1",
        "r-2",
    ]
    assert run[-1]["data"]["flaky"] == 1 and run[-1]["data"]["total"] == 1
    assert final_status("interrupted", 0) == "failed" and final_status("completed", 0) == "passed"


def test_history_summaries_strip_rate_flaky_median(project: Project) -> None:
    for i, (statuses, ms) in enumerate(
        [(["passed"], 100), (["failed"], 300), (["failed", "passed"], 200), (["passed"], 400)]
    ):
        path = save_history(project, f"run{i}", one_run("a", statuses, ms, f"run{i}"), UNBOUNDED)
        os.utime(path, (1000 + i, 1000 + i))  # saved in this order
    seen = outcomes(load_history(project))
    summary = summarize("a", seen["a"], 10)
    assert summary.strip == "✓✗~✓"
    assert summary.pass_rate == 0.75 and summary.flaky == 1 and summary.failed == 1
    assert summary.median_ms == 250.0
    assert summarize("a", seen["a"], 2).strip == "~✓"
    assert medians_ms(project) == {"a": 250.0}
    [report] = history_report(project, "a", last=3)
    assert report["strip"] == "✗~✓" and report["runs"] == 3 and report["flaky"] == 1
    assert history_report(project, "nope") == [] and len(history_report(project)) == 1
    assert {"run0", "run2-0", "run2-1"} <= referenced_run_ids(project)


def test_history_is_bounded_by_age_and_size(project: Project) -> None:
    folder = history_dir(project)
    for i in range(4):
        path = save_history(project, f"r{i}", one_run("a", ["passed"], 1, f"r{i}"), UNBOUNDED)
        os.utime(path, (1000 + i * 86400, 1000 + i * 86400))
    now = 1000 + 3 * 86400 - 10
    removed = bound_history(folder, HistoryConfig(max_age_days=2, max_bytes=0), now=now)
    assert sorted(p.name for p in removed) == ["r0.json"]
    size = (folder / "r3.json").stat().st_size
    removed = bound_history(folder, HistoryConfig(max_age_days=0, max_bytes=size + 1), now=now)
    assert sorted(p.name for p in removed) == ["r1.json", "r2.json"]
    assert [p.name for p in folder.iterdir()] == ["r3.json"]


def test_a_history_file_of_another_version_is_refused(project: Project) -> None:
    folder = history_dir(project)
    folder.mkdir(parents=True)
    (folder / "x.json").write_text(json.dumps([{"protocol_version": 3, "type": "a", "data": {}}]))
    (folder / "cut.json").write_text("[{")  # a cut file is skipped, not an error
    with pytest.raises(EventProtocolError, match="version 3 is not supported"):
        load_history(project)


def test_longest_first_puts_unknown_then_slowest_first() -> None:
    names = ["quick", "new", "slow", "mid"]
    assert longest_first(names, {"quick": 10, "slow": 900, "mid": 50}) == [
        "new",
        "slow",
        "mid",
        "quick",
    ]


def finished_run(project: Project, name: str, started_at: int) -> str:
    run = RunDirectory.create(project.runs_dir, "scenario", name, now_ms=lambda: started_at)
    run.append({**events.run_started(run.run_id, name), "t": started_at})
    run.append({**events.run_finished("completed"), "t": started_at + 1000})
    run.close()
    return run.run_id


def test_prune_by_count_and_age_keeps_what_history_needs(project: Project) -> None:
    day = 86_400_000
    now = 1_800_000_000_000
    ids = [finished_run(project, f"s{i}", now - (5 - i) * day) for i in range(5)]  # oldest first
    bundle = project.root / ".unotest/failures/s0__x__1"
    bundle.mkdir(parents=True)
    (bundle / "error.json").write_text("{}")
    with open(project.runs_dir / ids[0] / "steps.jsonl", "a") as steps:
        steps.write(json.dumps(events.failure_bundle_written(".unotest/failures/s0__x__1")) + "\n")
    save_history(project, "h", one_run("s1", ["passed"], 1, "h"), UNBOUNDED)
    history = history_dir(project) / "h.json"
    data = json.loads(history.read_text())
    data[-2]["data"]["run_ids"] = [ids[1]]  # history points to the second oldest run
    history.write_text(json.dumps(data))

    dry = prune_runs(project, None, 2, now_ms=now, dry_run=True)
    assert sorted(dry.removed) == sorted([ids[0], ids[2]]) and dry.kept_for_history == [ids[1]]
    assert all((project.runs_dir / i).is_dir() for i in ids)
    result = prune_runs(project, 3.5, None, now_ms=now)
    assert result.removed == [ids[0]] and result.kept_for_history == [ids[1]]
    assert result.bundles == [".unotest/failures/s0__x__1"] and not bundle.exists()
    assert sorted(p.name for p in project.runs_dir.iterdir()) == sorted(ids[1:])


def test_config_retries_and_history_bounds(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", "retries: 2\nhistory: {maxAgeDays: 7, maxBytes: 1000}\n")
    config = load_config(root, {})
    assert config.retries == 2 and config.history == HistoryConfig(7, 1000)
    assert load_config(write_project(tmp_path / "q", "headless: true\n"), {}).retries == 0
    for text, words in [
        ("retries: -1\n", "'retries' must be a whole number from 0 to 10"),
        ("retries: true\n", "'retries' must be a whole number"),
        ("history: {maxBytes: -5}\n", "'history.maxBytes' must be a whole number"),
    ]:
        root = write_project(tmp_path / f"bad{len(words)}{len(text)}", text)
        with pytest.raises(ConfigError, match=words):
            load_config(root, {})
