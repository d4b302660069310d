"""``unotest collection <name>``: run a collection and report it (console, JUnit, JSON).

The events are the version-1 envelopes of docs/reporting.md (``run_start``,
``suite_start``, the ``before_all`` hook of the webServer, ``test_start``, ``retry``,
``test_end``, ``suite_end``, ``run_end``), built live as the collection runs: printed
by ``--reporter ndjson``, appended to the collection run's ``events.ndjson`` (the
viewer's ``/api/events``), written as one array by ``--reporter json=PATH`` and saved
to history. A scenario that passed after a failed attempt is flaky in every report.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TextIO, cast

from runner import envelope, worker_prelaunch
from runner.collection import CollectionResult, CollectionRun, ScenarioOutcome, shard
from runner.config import load_config
from runner.envelope import Envelope
from runner.errors import ConfigError, EventProtocolError, UnotestError, UsageError
from runner.event_log import EventLog, LiveFile
from runner.events import run_error
from runner.history import SCENARIO_NOT_FOUND, longest_first, medians_ms
from runner.index_cache import IndexSummary, load_summary
from runner.project_root import Project, find_project_root
from runner.protocol import CollectionMeta, JSONObject
from runner.retries import Attempt
from runner.run_result import error_chain, error_location
from runner.text import did_you_mean, one_line
from unotest.console import ReaderMayLeave, format_diagnostic, print_warnings
from unotest.exit_codes import exit_code_for_run
from unotest.reports import (
    Reporters,
    flaky_line,
    history_quietly,
    ndjson_printer,
    parse_reporters,
    retries_of,
    write_report,
)

__all__ = ["CollectionEvents", "collection_command", "json_report", "junit_xml"]

_MARK = {
    "completed": "✓",
    "failed": "✗",
    "aborted": "■",
    "interrupted": "⚠",
    "skipped": "○",
}


def _parse_shard(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    try:
        return worker_prelaunch.parse_shard(text)
    except ValueError:
        raise UsageError(
            f"--shard {text}: expected i/n with 1 <= i <= n, e.g. --shard 2/4"
        ) from None


def _seconds(ms: int) -> str:
    return f"{ms / 1000:.1f} s"


def collection_command(args: argparse.Namespace) -> int:
    root = find_project_root(Path.cwd(), args.root)
    project = Project(root)
    # The index cache: a project unchanged since the last list, check or collection is
    # not parsed again here (each worker parses the scenarios it runs).
    index = load_summary(project)
    entry = _find_collection(project, index, args.name)
    if args.workers < 1:
        raise UsageError("--workers needs at least 1")
    reporters = parse_reporters(args.reporter)
    # Every usage error before any warning, so a bad --shard is one sentence on stderr.
    sharding = _parse_shard(args.shard)
    config = load_config(root, os.environ)
    retries = retries_of(getattr(args, "retries", None), config)
    print_warnings(config.warnings)
    names, skipped, broken = _runnable(project, entry, index)
    none_found = bool(skipped) and not names and not broken
    if none_found:
        print(
            f"unotest: none of the {len(skipped)} scenario(s) collection '{args.name}' lists "
            f"exists: nothing runs, and the collection fails (see its scenarios: in "
            f"{entry['path']})",
            file=sys.stderr,
        )
    if sharding is not None:
        names = shard(names, *sharding)
    if args.headed:
        config = replace(config, headless=False)
    out = cast(TextIO, ReaderMayLeave(sys.stdout))
    printer = _event_printer(out, retries) if reporters.show_list else _no_event
    listed = len(names) + len(skipped) + len(broken)
    if reporters.show_list:
        _header(args, listed, len(names), skipped, broken, out)
    live = LiveFile()
    log = EventLog([live, *([ndjson_printer(out)] if reporters.ndjson else [])])
    tracker = CollectionEvents(log, args.name, listed, live, printer)
    started = time.time()
    run = CollectionRun(
        project,
        args.name,
        names,
        config,
        workers=args.workers,
        bail=args.bail,
        headed=args.headed,
        out=out if reporters.show_list else sys.stderr,
        on_event=tracker.on_event,
        skipped=skipped,
        none_found=none_found,
        broken=broken,
        retries=retries,
        order=_schedule(project, names),
        on_start=tracker.started,
        on_web_server=tracker.web_server,
        on_output=tracker.output,
    )
    # Taken only now: until here, an error leaves them to cli.main, which stops them.
    run.prelaunched = worker_prelaunch.take()
    try:
        finished = run.run()
    except UnotestError:
        tracker.abandon()
        raise
    result = _add_unrun(finished, broken, skipped, printer)
    tracker.finish(result)
    _report(result, reporters, log.events, started, out)
    if result.error is not None:
        raise result.error  # its one sentence and exit code, once the reports are there
    history_quietly(project, result.run_id, log.events, config)
    return exit_code_for_run(result.outcome, result.signal)


def _report(
    result: CollectionResult,
    reporters: Reporters,
    events: list[Envelope],
    started: float,
    out: TextIO,
) -> None:
    """The summary, JUnit and the JSON array, once the collection has ended."""
    if reporters.show_list:
        _summary(result, out)
    if reporters.junit is not None:
        write_report(reporters.junit, junit_xml(result, started))
    if reporters.json is not None:
        text = json.dumps(events, ensure_ascii=False, indent=2)
        write_report(reporters.json, text + "\n")


def _schedule(project: Project, names: list[str]) -> list[str]:
    """Longest first by history; a history we cannot read only costs the ordering."""
    try:
        medians = medians_ms(project)
    except EventProtocolError as err:
        print(f"warning: {err}; scenarios start in the listed order", file=sys.stderr)
        medians = {}
    return longest_first(names, medians)


def _header(
    args: argparse.Namespace,
    listed: int,
    runnable: int,
    skipped: list[str],
    broken: list[str],
    out: TextIO,
) -> None:
    """The first line of the list reporter: every scenario the summary will count,
    those that cannot run said apart."""
    shard_text = f", shard {args.shard}" if args.shard else ""
    unrun = [f"{len(skipped)} not found"] if skipped else []
    unrun += [f"{len(broken)} with errors"] if broken else []
    unrun_text = f" ({', '.join(unrun)})" if unrun else ""
    print(
        f"unotest collection {args.name}: {listed} scenario{'' if listed == 1 else 's'}"
        f"{unrun_text}, {min(args.workers, max(runnable, 1))} worker(s){shard_text}",
        file=out,
    )


class CollectionEvents:
    """The collection's envelopes as it runs: the orchestrator's callbacks become
    ``run_start``/``suite_start`` (once its run directory exists), the webServer's
    ``before_all`` hook, ``test_start`` (a scenario's first attempt), ``retry`` and
    ``test_end`` (its last), and at the end ``suite_end`` and ``run_end``."""

    def __init__(
        self,
        log: EventLog,
        name: str,
        total: int,
        live: LiveFile,
        printer: Callable[[str, ScenarioOutcome], None],
    ) -> None:
        self.log = log
        self.name = name
        self.total = total
        self.live = live
        self.printer = printer
        self.begun: set[str] = set()
        self.ended: set[str] = set()
        self.clock = time.monotonic()

    def started(self, run_dir: Path) -> None:
        self.live.open(run_dir)
        extra = {"collection": self.name, "runId": run_dir.name}
        self.log.emit(envelope.run_start(self.total, extra=extra))
        self.log.emit(envelope.suite_start(self.name))

    def web_server(self, milliseconds: float, error: str | None) -> None:
        duration = envelope.duration_ns(milliseconds)
        status: envelope.Status = "passed" if error is None else "failed"
        self.log.emit(
            envelope.hook("before_all", status, duration, suite=self.name, error_message=error)
        )

    def abandon(self) -> None:
        """The collection ended in an error (its webServer did not start): close the
        suite and the run, so a live reader is not left waiting for ``run_end``."""
        if self.log.events:
            self.log.emit(envelope.suite_end(self.name))
            elapsed = (time.monotonic() - self.clock) * 1000
            self.log.run_end(elapsed, extra={"outcome": "failed", "collection": self.name})

    def output(self, scenario: str, text: str) -> None:
        self.log.emit(envelope.output("stdout", text, scenario))

    def on_event(self, kind: str, outcome: ScenarioOutcome) -> None:
        self.printer(kind, outcome)
        if kind == "started":
            self._begin(outcome.scenario, outcome.run_id, outcome.worker)
        elif kind == "finished":
            self._end(outcome)

    def _begin(self, scenario: str, run_id: str | None, worker: int | None) -> None:
        if scenario in self.begun:
            return  # a retry: its test_start was the first attempt's
        self.begun.add(scenario)
        extra = {"run_id": run_id, "worker": worker}
        self.log.emit(envelope.test_start(scenario, self.name, extra=extra))

    def _end(self, outcome: ScenarioOutcome) -> None:
        self._begin(outcome.scenario, outcome.run_id, outcome.worker)
        self.ended.add(outcome.scenario)
        self.log.test_finished(
            outcome.scenario, self.name, outcome.attempt(), outcome.retries, _extra(outcome)
        )

    def finish(self, result: CollectionResult) -> None:
        """The scenarios that never ran (with errors, not found, not started), then the
        end of the suite and of the run."""
        for scenario in result.scenarios:
            if scenario.scenario not in self.ended:
                self._end(scenario)
        self.log.emit(envelope.suite_end(self.name))
        extra = {"outcome": result.outcome, "collection": self.name, "runId": result.run_id}
        self.log.run_end(result.duration_ms, extra=extra)


def _find_collection(project: Project, index: IndexSummary, name: str) -> CollectionMeta:
    entry = next((meta for meta in index.collections if meta["name"] == name), None)
    if entry is not None:
        return entry
    # A collection file that exists but does not load (wrong types, bad YAML) is a
    # configuration error naming the file and key, not "no collection named ...".
    wanted = project.collection_file(name)
    problem = next(iter(index.errors_in([wanted])), None)
    if problem is not None:
        raise ConfigError(problem.head)
    hint = did_you_mean(name, [meta["name"] for meta in index.collections])
    raise UsageError(f"no collection named '{name}'{hint}; 'unotest list' shows them")


def _runnable(
    project: Project, entry: CollectionMeta, index: IndexSummary
) -> tuple[list[str], list[str], list[str]]:
    """The listed scenarios split into those to run, missing ones and broken ones.

    Missing and broken scenarios are said on stderr here, before the run starts.
    """
    known = {meta["name"]: meta["path"] for meta in index.scenario_metas}
    names: list[str] = []
    skipped: list[str] = []
    broken: list[str] = []
    helpers = index.errors_in(index.helper_files(project))  # every scenario's, said once
    for problem in helpers:
        print(format_diagnostic(problem), file=sys.stderr)
    # What `check` says of this file (an unknown key such as `scenario:`), said here too.
    for warning in index.warnings:
        if warning.startswith(f"{entry['path']}:"):
            print_warnings([warning])
    for name in entry["scenarios"]:
        if name in skipped:
            continue  # said once: it does not exist
        if name in names or name in broken:
            print_warnings([f"{entry['path']}: scenario '{name}' is listed twice; it runs once"])
            continue
        if name not in known:
            # A file that is there but is no scenario (its header is wrong) is broken,
            # with its problem where it is: skipping it as "not found" passed CI.
            unloadable = index.errors_in([project.scenario_file(name)])
            if unloadable:
                for problem in unloadable:
                    print(format_diagnostic(problem), file=sys.stderr)
                broken.append(name)
                continue
            hint = did_you_mean(name, known)
            print_warnings([f"{entry['path']}: scenario '{name}' does not exist; skipped{hint}"])
            skipped.append(name)
            continue
        problems = index.errors_in([known[name]])
        if helpers or problems:
            for problem in problems:
                print(format_diagnostic(problem), file=sys.stderr)
            broken.append(name)
            continue
        names.append(name)
    return names, skipped, broken


def _no_event(kind: str, result: ScenarioOutcome) -> None:
    pass


def _event_printer(out: TextIO, retries: int) -> Callable[[str, ScenarioOutcome], None]:
    """The ``list`` reporter: a line when a scenario starts, one when an attempt fails
    and it runs again, one when it ends (flaky: passed after failed attempts)."""

    def on_event(kind: str, result: ScenarioOutcome) -> None:
        worker = f"[w{result.worker}]" if result.worker is not None else "    "
        if kind == "started":
            print(f"  … {worker} {result.scenario}", file=out, flush=True)
            return
        extra = f"  ({_seconds(result.duration_ms)})" if result.duration_ms else ""
        if kind == "retry":
            attempt = len(result.retries) + 1
            why = one_line(_message(result))
            note = f"  attempt {attempt} of {retries + 1} {result.outcome}: {why}"
            print(f"  ↻ {worker} {result.scenario}{extra}{note}", file=out, flush=True)
            return
        note = f"  {result.note}" if result.note else ""
        mark = _MARK[result.outcome]
        if result.flaky:
            mark, note = "~", f"  flaky: passed on attempt {len(result.retries) + 1}"
        print(f"  {mark} {worker} {result.scenario}{extra}{note}", file=out, flush=True)

    return on_event


def _add_unrun(
    result: CollectionResult,
    broken: list[str],
    skipped: list[str],
    on_event: Callable[[str, ScenarioOutcome], None],
) -> CollectionResult:
    """The scenarios that never started, added so that reports count every listed one."""
    for name in broken:
        result.scenarios.append(
            ScenarioOutcome(
                name,
                "failed",
                error=run_error("the scenario has errors ('unotest check')", "SyntaxError"),
            )
        )
        if result.outcome == "completed":
            result = replace(result, outcome="failed")
    for name in skipped:
        # Listed like the scenarios that ran, so the list names what the count says.
        missing = ScenarioOutcome(name, "skipped", note=SCENARIO_NOT_FOUND)
        result.scenarios.append(missing)
        on_event("finished", missing)
    return result


def _summary(result: CollectionResult, out: TextIO) -> None:
    counts: dict[str, int] = {}
    for scenario in result.scenarios:
        kind = "flaky" if scenario.flaky else scenario.outcome
        counts[kind] = counts.get(kind, 0) + 1
    order = ("completed", "flaky", "failed", "interrupted", "aborted", "skipped")
    labels = {"completed": "passed"}
    table = ", ".join(f"{counts[o]} {labels.get(o, o)}" for o in order if counts.get(o))
    print(
        f"\n{result.outcome.upper()}  {result.collection}: {table or 'nothing to run'} "
        f"in {_seconds(result.duration_ms)}",
        file=out,
    )
    failing = [s for s in result.scenarios if s.outcome in ("failed", "interrupted")]
    for scenario in failing:
        error: Mapping[str, object] = scenario.error or {}
        location = _location(error)
        where = f"{location}: " if location else ""
        # Page and test text can hold terminal escapes: shown, never obeyed.
        message = one_line(_message(scenario))
        name = f"{error['errorName']}: " if error.get("errorName") else ""
        print(f"  ✗ {scenario.scenario}: {where}{name}{message}", file=out)
        if error.get("step"):
            print(f"      step: {one_line(str(error['step']))}", file=out)
        if scenario.bundle_path:
            print(f"      bundle: {scenario.bundle_path}", file=out)
        if scenario.run_dir:
            print(f"      run: {scenario.run_dir}", file=out)
        if scenario.retries:
            print(f"      failed all {len(scenario.retries) + 1} attempts", file=out)
    for scenario in (s for s in result.scenarios if s.flaky):
        print(f"  {flaky_line(scenario.scenario, scenario.retries)}", file=out)
    print(f"  collection run: {result.run_dir}", file=out)


def junit_xml(result: CollectionResult, started: float) -> str:
    """JUnit XML as CI systems read it: one testcase per scenario."""
    outcomes = [s.outcome for s in result.scenarios]
    # The same totals on <testsuites> and on its one <testsuite>, as CI systems read either.
    totals = {
        "tests": str(len(outcomes)),
        "failures": str(sum(1 for o in outcomes if o in ("failed", "interrupted"))),
        "errors": str(outcomes.count("aborted")),
        "skipped": str(outcomes.count("skipped")),
        "time": f"{result.duration_ms / 1000:.3f}",
    }
    suites = ET.Element("testsuites", {"name": "unotest", **totals})
    suite = ET.SubElement(
        suites,
        "testsuite",
        {
            "name": result.collection,
            **totals,
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(started)),
        },
    )
    for scenario in result.scenarios:
        _junit_case(suite, result.collection, scenario)
    _xml_safe(suites)
    ET.indent(suites)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
    )


# What XML 1.0 cannot hold even escaped (C0 controls but tab and newlines, U+FFFE...).
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml_safe(root: ET.Element) -> None:
    """Every text and attribute written as CI can parse it: a message with an ESC (a
    thrown ANSI colour) made the whole file malformed; such a character is written as
    its escape (``\\x1b``) instead."""

    def safe(text: str) -> str:
        return _NOT_XML.sub(lambda m: repr(m.group())[1:-1], text)

    for element in root.iter():
        if element.text:
            element.text = safe(element.text)
        for key, value in element.attrib.items():
            element.attrib[key] = safe(value)


def _junit_case(suite: ET.Element, collection: str, scenario: ScenarioOutcome) -> None:
    case = ET.SubElement(
        suite,
        "testcase",
        classname=collection,
        name=scenario.scenario,
        time=f"{scenario.duration_ms / 1000:.3f}",
    )
    error: Mapping[str, object] = scenario.error or {}
    if scenario.outcome in ("failed", "interrupted"):
        message = _message(scenario)
        location = _location(error)
        node = ET.SubElement(
            case,
            "failure",
            # The place first, as CI shows the message alone: the scenario's own line,
            # then each helper down to where it failed.
            message=f"{location}: {message}" if location else message,
            type=str(error.get("errorName", scenario.outcome)),
        )
        details = [message]
        if location:
            details.append(f"at {location}")
        if error.get("step"):
            details.append(f"step: {error['step']}")
        if scenario.bundle_path:
            details.append(f"bundle: {scenario.bundle_path}")
        node.text = "\n".join(details)
        _junit_attempts(case, "rerunFailure", scenario.retries)
    elif scenario.flaky:
        _junit_attempts(case, "flakyFailure", scenario.retries)
    elif scenario.outcome == "aborted":
        ET.SubElement(case, "error", message="aborted", type="aborted")
    elif scenario.outcome == "skipped":
        ET.SubElement(case, "skipped", message=scenario.note or "skipped")
    if scenario.run_dir:
        ET.SubElement(case, "system-out").text = f"run directory: {scenario.run_dir}"


def _junit_attempts(case: ET.Element, tag: str, attempts: list[Attempt]) -> None:
    """The failed attempts as Maven Surefire and pytest-rerunfailures write them:
    ``<flakyFailure>`` (the test passed later) or ``<rerunFailure>`` (it never did),
    each with its message, type and a ``<stackTrace>`` naming the attempt's run."""
    for attempt in attempts:
        message = attempt.error_message or attempt.outcome
        node = ET.SubElement(case, tag, message=message, type=attempt.error_name or attempt.outcome)
        trace = f"attempt {attempt.number}: {message}"
        if attempt.run_id:
            trace += f"\nrun: {attempt.run_id}"
        ET.SubElement(node, "stackTrace").text = trace


def json_report(result: CollectionResult) -> list[Envelope]:
    """The envelopes of a finished collection, as its live reporters emitted them
    (scenarios in the collection's order)."""
    log = EventLog()
    events = CollectionEvents(log, result.collection, len(result.scenarios), LiveFile(), _no_event)
    log.emit(
        envelope.run_start(
            len(result.scenarios), extra={"collection": result.collection, "runId": result.run_id}
        )
    )
    log.emit(envelope.suite_start(result.collection))
    events.finish(result)
    return log.events


def _extra(scenario: ScenarioOutcome) -> JSONObject:
    """The fields a ``test_end`` carries beyond version 1's table (consumers that do not
    know them ignore them): where it failed, its bundle, its worker."""
    error: Mapping[str, object] = scenario.error or {}
    return {
        "error_name": error.get("errorName"),
        "location": _place(error),
        "chain": [dict(frame) for frame in error_chain(error)] or None,
        "bundle_path": scenario.bundle_path,
        "worker": scenario.worker,
    }


def _location(error: Mapping[str, object]) -> str | None:
    """Where a scenario's error is, as the console and JUnit write it: its chain from
    the scenario's own line (``file:line:col`` when it has none)."""
    return error_location(error)


def _place(error: Mapping[str, object]) -> str | None:
    """``file:line:col`` of the error itself (the JSON report's ``location``, kept as it
    was; its ``chain`` has the places from the scenario's own line)."""
    if error.get("file") is None:
        return None
    return f"{error['file']}:{error['line']}:{error['col']}"


def _message(scenario: ScenarioOutcome) -> str:
    error: Mapping[str, object] = scenario.error or {}
    return str(error.get("error") or scenario.note or scenario.outcome)
