"""``unotest merge-reports``: the JSON reports of a collection's shards as one run.

The shards' reports are made by the collection command's own ``json_report`` (the
envelopes a finished collection writes) with the ``shard`` header a ``--shard`` run
puts on its ``run_start``; the command runs in process, as the CLI's ``main``. The
end-to-end run (real Chromium, shards of a served project merged and compared with the
unsharded run) is in tests/runner/test_collection.py.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from flaky_site import validate_envelopes

from runner.collection.orchestrator import CollectionResult, ScenarioOutcome
from runner.events import run_error
from runner.project.root import Project
from runner.store.history import history_report
from runner.store.retries import Attempt
from unotest.cli import main
from unotest.commands.collection import json_report

WHOLE = ["auth", "a", "b", "flaky", "gone"]


def shard_report(path: Path, current: int, outcomes: list[ScenarioOutcome], **shard: Any) -> Path:
    result = CollectionResult(f"c-run{current}", "unotest/.runs/x", "c", "failed", 4000, outcomes)
    events = json_report(result)
    header = {"current": current, "total": 2, "partition": "p1", "scenarios": WHOLE, **shard}
    events[0]["data"]["shard"] = header
    path.write_text(json.dumps(events), encoding="utf-8")
    return path


@pytest.fixture
def shards(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """Shard 1: the setup scenario passed, ``a`` passed, ``flaky`` passed on its second
    attempt; shard 2: the setup scenario failed, so ``b`` was skipped. Both report the
    listed name that is no scenario (``gone``)."""
    (tmp_path / "unotest" / "e2e").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    gone = ScenarioOutcome("gone", "skipped", note="scenario not found")
    failed_once = Attempt(1, "r-f1", "failed", 300, "boom", "AssertionError")
    first = [
        ScenarioOutcome("auth", "completed", 0, "r-a1", duration_ms=900),
        ScenarioOutcome("a", "completed", 0, "r-a", duration_ms=400),
        ScenarioOutcome("flaky", "completed", 0, "r-f2", duration_ms=500, retries=[failed_once]),
        gone,
    ]
    second = [
        ScenarioOutcome(
            "auth", "failed", 0, "r-a2", duration_ms=700, error=run_error("no login", "Error")
        ),
        ScenarioOutcome("b", "skipped", note="skipped: setup auth failed"),
        gone,
    ]
    return (
        shard_report(tmp_path / "s1.json", 1, first),
        shard_report(tmp_path / "s2.json", 2, second),
    )


def test_merged_shards_read_as_one_run_in_every_report_and_in_history(
    shards: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reporter = ["--reporter", "list,junit=m.xml,json=out/m.json"]
    assert main(["merge-reports", *map(str, shards), *reporter]) == 1  # auth failed
    out = capsys.readouterr().out
    assert "FAILED  c: 1 passed, 1 flaky, 1 failed, 2 skipped" in out, out
    assert "~ flaky: flaky, passed on attempt 2 (attempt 1: AssertionError: boom)" in out

    merged = json.loads((tmp_path / "out" / "m.json").read_text(encoding="utf-8"))
    validate_envelopes(merged)  # version 1's table, every optional field present
    start, end = merged[0]["data"], merged[-1]["data"]
    assert start["scenarios"] == WHOLE and start["total"] == 5
    ends = {e["data"]["name"]: e["data"] for e in merged if e["type"] == "test_end"}
    assert len([e for e in merged if e["type"] == "test_end"]) == 5  # gone and auth once
    assert {n: d["status"] for n, d in ends.items()} == {
        "auth": "failed",  # the worse of the two shards' results
        "a": "passed",
        "b": "skipped",
        "flaky": "flaky",
        "gone": "skipped",
    }
    assert ends["auth"]["run_id"] == "r-a2"
    kinds = [(e["type"], e["data"].get("name")) for e in merged]
    assert kinds.index(("retry", "flaky")) == kinds.index(("test_end", "flaky")) - 1
    counts = {k: end[k] for k in ("total", "passed", "flaky", "failed", "skipped")}
    assert counts == {"total": 5, "passed": 1, "flaky": 1, "failed": 1, "skipped": 2}
    assert end["outcome"] == "failed" and end["duration_ns"] == 4_000_000_000

    suite = ET.parse(tmp_path / "m.xml").getroot().find("./testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("5", "1", "2")
    cases = suite.findall("testcase")
    assert [c.get("classname") for c in cases] == WHOLE
    assert cases[3].find("flakyFailure") is not None

    history = {row["scenario"]: row for row in history_report(Project(tmp_path))}
    assert history["flaky"]["statuses"] == ["flaky"] and history["auth"]["statuses"] == ["failed"]
    saved = sorted((tmp_path / "unotest" / ".history").iterdir())
    assert [p.name for p in saved] == [f"{start['runId']}.json"]
    assert main(["merge-reports", *map(str, shards), "--reporter", "json=again.json"]) == 1
    assert sorted((tmp_path / "unotest" / ".history").iterdir()) == saved  # merged once


def _version_2(path: Path) -> None:
    events = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps([{**e, "protocol_version": 2} for e in events]), encoding="utf-8")


def _split_otherwise(path: Path) -> None:
    events = json.loads(path.read_text(encoding="utf-8"))
    events[0]["data"]["shard"]["partition"] = "p2"
    path.write_text(json.dumps(events), encoding="utf-8")


@pytest.mark.parametrize(
    ("spoil", "said"),
    [
        (None, "shard 2/2 is missing (given: shard 1/2 ("),
        (_version_2, "cannot merge reports of event protocol versions 1 ("),
        (lambda p: p.write_text("<testsuites/>"), "s2.json is not a unotest JSON report"),
        (_split_otherwise, "were split differently"),
    ],
)
def test_input_that_is_not_the_shards_of_one_run_is_one_sentence_and_exit_2(
    shards: tuple[Path, Path],
    capsys: pytest.CaptureFixture[str],
    spoil: Any,
    said: str,
) -> None:
    first, second = shards
    given = [first] if spoil is None else [first, second]
    if spoil is not None:
        spoil(second)
    assert main(["merge-reports", *map(str, given), "--reporter", "json=m.json"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("unotest: ") and err.count("\n") == 1, err
    assert said in err, err
    assert not Path("m.json").exists()
    assert not (Path("unotest") / ".history").exists()
