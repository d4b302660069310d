"""The reporters are sinks of the run's one event log: what they write comes from the
envelopes they received, nothing else (``unotest/reporters/``)."""

from __future__ import annotations

import io
import json
from pathlib import Path

from runner.store import envelope
from runner.store.envelope import Envelope
from runner.store.event_log import EventLog
from unotest.reporters.junit import JUnitReport
from unotest.reporters.options import parse_reporters
from unotest.reporters.sinks import ReportSinks

LISTED = ["shop/cart", "auth/login", "shop/slow", "broken", "gone"]
CHAIN = [
    {"file": "e2e/shop/cart.test.js", "line": 8, "col": 2, "fn": ""},
    {"file": "e2e/_helpers/cart.js", "line": 3, "col": 4, "fn": "add"},
]


def _end(
    name: str,
    status: envelope.Status,
    seconds: float,
    message: str | None = None,
    **extra: object,
) -> Envelope:
    """A ``test_end`` with the fields a collection adds to it (``None`` unless given)."""
    fields: dict[str, object] = dict.fromkeys(
        ("run_id", "error_name", "location", "chain", "step", "bundle_path", "run_dir")
    )
    fields.update(retry_error_names=[], worker=None)
    fields.update(extra)
    duration = envelope.duration_ns(seconds * 1000)
    return envelope.test_end(name, "c", status, duration, message, extra=fields)


def _retry(name: str, attempt: int, message: str, run_id: str, outcome: str) -> Envelope:
    extra = {"suite": "c", "run_id": run_id, "outcome": outcome}
    return envelope.retry(name, attempt, "failed", 10**9, message, extra=extra)


# As a collection emits them: in the order the scenarios ended (two workers), with the
# events JUnit has no use for in between.
EVENTS = [
    envelope.run_start(5, extra={"collection": "c", "runId": "c-7", "scenarios": LISTED}),
    envelope.suite_start("c"),
    envelope.hook("before_all", "passed", 1_500_000_000, suite="c"),
    envelope.test_start("shop/cart", "c", extra={"run_id": "r-3", "worker": 0}),
    envelope.test_start("auth/login", "c", extra={"run_id": "r-1", "worker": 1}),
    envelope.output("stdout", "signing in", "auth/login"),
    _retry("auth/login", 1, "timeout \x1b[31mwaiting", "r-1", "failed"),
    _end(
        "auth/login",
        "flaky",
        1.2,
        outcome="completed",
        run_id="r-2",
        run_dir="unotest/.runs/r-2",
        retry_error_names=["TimeoutError"],
    ),
    envelope.test_start("shop/slow", "c", extra={"run_id": "r-4", "worker": 1}),
    _end("shop/slow", "failed", 4, outcome="aborted", run_dir="unotest/.runs/r-4"),
    _retry("shop/cart", 1, "found 0", "r-3", "failed"),
    _retry("shop/cart", 2, "the worker died", "r-5", "interrupted"),
    _end(
        "shop/cart",
        "failed",
        2.5,
        "found 1",
        outcome="failed",
        error_name="AssertionError",
        location="e2e/_helpers/cart.js:3:4",
        chain=CHAIN,
        step='add("milk")',
        bundle_path="b/r-6",
        run_dir="unotest/.runs/r-6",
        retry_error_names=["AssertionError", None],
    ),
    envelope.test_start("broken", "c"),
    _end("broken", "failed", 0, "has errors", outcome="failed", error_name="SyntaxError"),
    envelope.test_start("gone", "c"),
    _end("gone", "skipped", 0, "scenario not found", outcome="skipped"),
    envelope.suite_end("c"),
    envelope.run_end({"flaky": 1, "failed": 3, "skipped": 1}, 8_123_000_000),
]

# Each testcase: classname the scenario's name, name its title (these envelopes carry
# none, so its name again: tests/unotest/test_junit_titles.py has the titles).
TOTALS = 'tests="5" failures="2" errors="1" skipped="1" time="8.123"'
PLACE = "e2e/shop/cart.test.js:8:2 → e2e/_helpers/cart.js:3:4 add"
EXPECTED = "\n".join(
    [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<testsuites name="unotest" {TOTALS}>',
        f'  <testsuite name="c" {TOTALS} timestamp="1970-01-01T00:00:00">',
        '    <testcase classname="shop/cart" name="shop/cart" time="2.500">',
        f'      <failure message="{PLACE}: found 1" type="AssertionError">found 1',
        f"at {PLACE}",
        'step: add("milk")',
        "bundle: b/r-6</failure>",
        '      <rerunFailure message="found 0" type="AssertionError">',
        "        <stackTrace>attempt 1: found 0",
        "run: r-3</stackTrace>",
        "      </rerunFailure>",
        '      <rerunFailure message="the worker died" type="interrupted">',
        "        <stackTrace>attempt 2: the worker died",
        "run: r-5</stackTrace>",
        "      </rerunFailure>",
        "      <system-out>run directory: unotest/.runs/r-6</system-out>",
        "    </testcase>",
        '    <testcase classname="auth/login" name="auth/login" time="1.200">',
        '      <flakyFailure message="timeout \\x1b[31mwaiting" type="TimeoutError">',
        "        <stackTrace>attempt 1: timeout \\x1b[31mwaiting",
        "run: r-1</stackTrace>",
        "      </flakyFailure>",
        "      <system-out>run directory: unotest/.runs/r-2</system-out>",
        "    </testcase>",
        '    <testcase classname="shop/slow" name="shop/slow" time="4.000">',
        '      <error message="aborted" type="aborted" />',
        "      <system-out>run directory: unotest/.runs/r-4</system-out>",
        "    </testcase>",
        '    <testcase classname="broken" name="broken" time="0.000">',
        '      <failure message="has errors" type="SyntaxError">has errors</failure>',
        "    </testcase>",
        '    <testcase classname="gone" name="gone" time="0.000">',
        '      <skipped message="scenario not found" />',
        "    </testcase>",
        "  </testsuite>",
        "</testsuites>",
        "",
    ]
)


def test_junit_is_a_sink_of_the_envelopes(tmp_path: Path) -> None:
    """Fed the envelopes a collection emits (read back from their NDJSON lines, as
    ``events.ndjson`` holds them), the JUnit reporter writes the XML CI reads: the
    collection's order, not the order they ended; failures with their place, step and
    bundle; reruns and flaky attempts; aborts, skips and run directories."""
    report = JUnitReport(tmp_path / "out" / "junit.xml", started=0.0)
    for event in EVENTS:
        report(json.loads(envelope.to_json_line(event)))
    assert not report.path.exists()  # written once the run has ended, not before
    report.finish()
    assert report.path.read_text(encoding="utf-8") == EXPECTED


def test_the_report_sinks_stream_ndjson_and_write_the_files_at_finish(tmp_path: Path) -> None:
    junit, report = tmp_path / "junit.xml", tmp_path / "events.json"
    reporters = parse_reporters(f"junit={junit},json={report},ndjson")
    out = io.StringIO()
    sinks = ReportSinks(reporters, out, started=0.0)
    log = EventLog(sinks.sinks)
    for event in EVENTS:
        log.emit(event)
    assert out.getvalue() == "".join(envelope.to_json_line(e) + "\n" for e in EVENTS)
    assert not junit.exists() and not report.exists()
    sinks.finish()
    assert junit.read_text(encoding="utf-8") == EXPECTED
    assert json.loads(report.read_text(encoding="utf-8")) == json.loads(json.dumps(EVENTS))
