"""Reports name a scenario by its title (issue 31, item 9).

JUnit's ``<testcase>`` is named as Playwright's JUnit reporter names a test: ``name``
the scenario's title (its description line, ``@tags`` included), ``classname`` the
scenario's name (its path under ``unotest/e2e/``); a scenario without a description
line (a listed name that is no scenario) keeps its name as both. The collection's
``test_start``/``test_end`` envelopes carry ``title`` (additive; ``null`` when there is
none), so the JSON report, NDJSON and history have it too, and ``unotest history
--json`` gives each scenario's newest title.
"""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

from flaky_site import validate_envelopes

from runner.collection.orchestrator import CollectionResult, ScenarioOutcome
from runner.project.config import HistoryConfig
from runner.project.root import Project
from runner.store import envelope
from runner.store.envelope import Envelope
from runner.store.event_log import EventLog
from runner.store.history import history_report, save_history
from unotest.commands.collection import json_report, junit_xml
from unotest.reporters.json_report import JsonReport
from unotest.reporters.junit import render

UNBOUNDED = HistoryConfig(max_age_days=0, max_bytes=0)
TITLES = {"shop/cart": "Adds two items @smoke @cart", "auth/login": 'Signs in as "<admin>" & out'}


def _result() -> CollectionResult:
    """A finished collection: two scenarios that ran, one listed name with no file."""
    outcomes = [
        ScenarioOutcome("shop/cart", "completed", 1200, "r-1", "unotest/.runs/r-1", 0),
        ScenarioOutcome(
            "auth/login",
            "failed",
            800,
            "r-2",
            "unotest/.runs/r-2",
            1,
            1,
            {"error": "boom", "errorName": "Error"},
        ),
        ScenarioOutcome("ghost", "skipped", note="scenario not found"),
    ]
    return CollectionResult("c-1", "unotest/.runs/c-1", "nightly", "failed", 2500, outcomes)


def _cases(xml: str) -> list[tuple[str | None, str | None]]:
    root = ET.fromstring(xml)
    return [(c.get("classname"), c.get("name")) for c in root.findall("./testsuite/testcase")]


def test_junit_names_a_testcase_by_its_title_and_classes_it_by_the_scenario() -> None:
    xml = junit_xml(_result(), 0.0, TITLES)
    assert _cases(xml) == [
        ("shop/cart", "Adds two items @smoke @cart"),
        ("auth/login", 'Signs in as "<admin>" & out'),  # escaped in the file, read back whole
        ("ghost", "ghost"),  # no description line: its name
    ]
    assert 'name="Signs in as &quot;&lt;admin&gt;&quot; &amp; out"' in xml
    suite = ET.fromstring(xml).find("testsuite")
    assert suite is not None and suite.get("name") == "nightly"  # the suite: the collection


def test_without_titles_every_testcase_keeps_its_scenario_name() -> None:
    assert _cases(junit_xml(_result(), 0.0)) == [
        ("shop/cart", "shop/cart"),
        ("auth/login", "auth/login"),
        ("ghost", "ghost"),
    ]


def test_a_title_with_control_characters_is_still_well_formed_xml() -> None:
    xml = junit_xml(_result(), 0.0, {"shop/cart": "Cart \x1b[31mred\x1b[0m @smoke"})
    assert _cases(xml)[0] == ("shop/cart", "Cart \\x1b[31mred\\x1b[0m @smoke")


def test_test_start_and_test_end_carry_the_title_and_null_without_one() -> None:
    events = json_report(_result(), TITLES)
    validate_envelopes(events)
    for kind in ("test_start", "test_end"):
        titles = {e["data"]["name"]: e["data"]["title"] for e in events if e["type"] == kind}
        assert titles == {**TITLES, "ghost": None}
    ends = [e["data"] for e in events if e["type"] == "test_end"]
    assert [d["name"] for d in ends] == ["shop/cart", "auth/login", "ghost"]  # names unchanged


def test_the_json_report_writes_the_titles_it_received(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    report = JsonReport(path)
    log = EventLog([report])
    for event in json_report(_result(), TITLES):
        log.emit(event)
    report.finish()
    written = json.loads(path.read_text(encoding="utf-8"))
    starts = [e["data"] for e in written if e["type"] == "test_start"]
    assert [(d["name"], d["title"]) for d in starts] == [
        ("shop/cart", TITLES["shop/cart"]),
        ("auth/login", TITLES["auth/login"]),
        ("ghost", None),
    ]


def _run(title: str | None) -> list[Envelope]:
    extra = {"outcome": "completed", "run_ids": ["r"], "title": title}
    return [
        envelope.run_start(1),
        envelope.test_end("shop/cart", "nightly", "passed", 10**9, extra=extra),
        envelope.run_end({"passed": 1}, 10**9),
    ]


def test_history_gives_each_scenario_its_newest_title(tmp_path: Path) -> None:
    project = Project(tmp_path)
    (tmp_path / "unotest").mkdir()
    save_history(project, "old", _run(None), UNBOUNDED)  # before titles were recorded
    [row] = history_report(project)
    assert row["scenario"] == "shop/cart" and row["title"] is None
    for i, title in enumerate(["Adds items @smoke", "Adds two items @smoke @cart"]):
        path = save_history(project, f"run{i}", _run(title), UNBOUNDED)
        os.utime(path, (1000 + i, 1000 + i))  # saved in this order
    os.utime(tmp_path / "unotest/.history/old.json", (2000, 2000))  # newest, no title
    [row] = history_report(project)
    assert row["title"] == "Adds two items @smoke @cart"
    assert row["runs"] == 3


def test_render_reads_the_title_from_the_envelope_alone() -> None:
    events = [
        envelope.run_start(1, extra={"scenarios": ["a/b"]}),
        envelope.suite_start("c"),
        envelope.test_end("a/b", "c", "passed", 0, extra={"title": "A title @x"}),
        envelope.run_end({"passed": 1}, 0),
    ]
    assert _cases(render(events, 0.0)) == [("a/b", "A title @x")]
