"""``unotest collection <name>``: run a collection and report it (console, JUnit, JSON).

The JSON report follows the versioned-envelope habit of the test-framework protocol
the project learns from: an ordered array of ``{protocol_version, type, data}`` events
(``run_start``, ``test_start``, ``test_end``, ``run_end``); consumers ignore types and
fields they do not know, and ``protocol_version`` changes only on a breaking change.
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
from typing import TextIO, TypedDict

from runner.collection import CollectionResult, CollectionRun, ScenarioOutcome, shard
from runner.config import load_config
from runner.errors import ConfigError, UsageError
from runner.events import run_error
from runner.project import CollectionEntry, Project, ProjectIndex, find_project_root
from runner.protocol import JSONObject
from runner.run_result import error_chain, error_location
from runner.text import did_you_mean
from unotest.console import format_diagnostic, print_warnings
from unotest.exit_codes import exit_code_for_run

__all__ = ["ReportEvent", "collection_command", "json_report", "junit_xml"]

REPORT_PROTOCOL_VERSION = 1
_MARK = {
    "completed": "✓",
    "failed": "✗",
    "aborted": "■",
    "interrupted": "⚠",
    "skipped": "○",
}


def _parse_reporters(text: str | None) -> tuple[bool, Path | None, Path | None]:
    show_list, junit, json_path = True, None, None
    if text is None:
        return show_list, junit, json_path
    show_list = False
    for part in text.split(","):
        part = part.strip()
        name, _, value = part.partition("=")
        if name == "list" and not value:
            show_list = True
        elif name == "junit" and value:
            junit = Path(value)
        elif name == "json" and value:
            json_path = Path(value)
        else:
            raise UsageError(f"--reporter {part!r}: expected list, junit=PATH or json=PATH")
    return show_list, junit, json_path


def _parse_shard(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    match = re.fullmatch(r"(\d+)/(\d+)", text.strip())
    if match is None or not 1 <= int(match[1]) <= int(match[2]):
        raise UsageError(f"--shard {text}: expected i/n with 1 <= i <= n, e.g. --shard 2/4")
    return int(match[1]), int(match[2])


def _seconds(ms: int) -> str:
    return f"{ms / 1000:.1f} s"


def collection_command(args: argparse.Namespace) -> int:
    root = find_project_root(Path.cwd(), args.root)
    project = Project(root)
    index = ProjectIndex.load(project)
    entry = _find_collection(project, index, args.name)
    if args.workers < 1:
        raise UsageError("--workers needs at least 1")
    show_list, junit_path, json_path = _parse_reporters(args.reporter)
    # Every usage error before any warning, so a bad --shard is one sentence on stderr.
    sharding = _parse_shard(args.shard)
    config = load_config(root, os.environ)
    print_warnings(config.warnings)
    names, skipped, broken = _runnable(entry, index)
    if sharding is not None:
        names = shard(names, *sharding)
    if args.headed:
        config = replace(config, headless=False)
    out = sys.stdout
    on_event = _event_printer(out) if show_list else _no_event
    if show_list:
        shard_text = f", shard {args.shard}" if sharding else ""
        # Every scenario the summary will count, those that cannot run said apart.
        listed = len(names) + len(skipped) + len(broken)
        unrun = [f"{len(skipped)} not found"] if skipped else []
        unrun += [f"{len(broken)} with errors"] if broken else []
        unrun_text = f" ({', '.join(unrun)})" if unrun else ""
        print(
            f"unotest collection {args.name}: {listed} scenario{'' if listed == 1 else 's'}"
            f"{unrun_text}, {min(args.workers, max(len(names), 1))} worker(s){shard_text}",
            file=out,
        )
    started = time.time()
    run = CollectionRun(
        project,
        index,
        args.name,
        names,
        config,
        workers=args.workers,
        bail=args.bail,
        headed=args.headed,
        out=out,
        on_event=on_event,
        skipped=skipped,
        broken=broken,
    )
    result = _add_unrun(run.run(), broken, skipped, on_event)
    if show_list:
        _summary(result, out)
    if junit_path is not None:
        _write(junit_path, junit_xml(result, started))
    if json_path is not None:
        _write(json_path, json.dumps(json_report(result), ensure_ascii=False, indent=2) + "\n")
    return exit_code_for_run(result.outcome, result.signal)


def _find_collection(project: Project, index: ProjectIndex, name: str) -> CollectionEntry:
    entry = index.collections.get(name)
    if entry is not None:
        return entry
    # A collection file that exists but does not load (wrong types, bad YAML) is a
    # configuration error naming the file and key, not "no collection named ...".
    wanted = project.relative(project.collections_dir / f"{name}.yaml")
    problem = next((d for d in index.errors if d.file == wanted), None)
    if problem is not None:
        raise ConfigError(f"{problem.file}:{problem.line}:{problem.col}: {problem.message}")
    hint = did_you_mean(name, index.collections)
    raise UsageError(f"no collection named '{name}'{hint}; 'unotest list' shows them")


def _runnable(
    entry: CollectionEntry, index: ProjectIndex
) -> tuple[list[str], list[str], list[str]]:
    """The listed scenarios split into those to run, missing ones and broken ones.

    Missing and broken scenarios are said on stderr here, before the run starts.
    """
    known = {meta["name"]: meta["path"] for meta in index.scenario_metas}
    names: list[str] = []
    skipped: list[str] = []
    broken: list[str] = []
    for name in entry.meta["scenarios"]:
        if name in names or name in skipped or name in broken:
            continue  # listed twice: run, warned about or reported once
        if name not in known:
            print(
                f"warning: {entry.meta['path']}: scenario '{name}' does not exist; skipped",
                file=sys.stderr,
            )
            skipped.append(name)
            continue
        problems = index.errors_in([known[name], *(h.file for h in index.helpers)])
        if problems or name not in index.scenarios:
            for problem in problems:
                print(format_diagnostic(problem), file=sys.stderr)
            broken.append(name)
            continue
        names.append(name)
    return names, skipped, broken


def _no_event(kind: str, result: ScenarioOutcome) -> None:
    pass


def _event_printer(out: TextIO) -> Callable[[str, ScenarioOutcome], None]:
    """The ``list`` reporter: a line when a scenario starts and one when it ends."""

    def on_event(kind: str, result: ScenarioOutcome) -> None:
        worker = f"[w{result.worker}]" if result.worker is not None else "    "
        if kind == "started":
            print(f"  … {worker} {result.scenario}", file=out, flush=True)
            return
        extra = f"  ({_seconds(result.duration_ms)})" if result.duration_ms else ""
        note = f"  {result.note}" if result.note else ""
        print(
            f"  {_MARK[result.outcome]} {worker} {result.scenario}{extra}{note}",
            file=out,
            flush=True,
        )

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
        missing = ScenarioOutcome(name, "skipped", note="scenario not found")
        result.scenarios.append(missing)
        on_event("finished", missing)
    return result


def _write(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as err:
        raise UsageError(f"cannot write report {path}: {err.strerror or err}") from None


def _summary(result: CollectionResult, out: TextIO) -> None:
    counts: dict[str, int] = {}
    for scenario in result.scenarios:
        counts[scenario.outcome] = counts.get(scenario.outcome, 0) + 1
    order = ("completed", "failed", "interrupted", "aborted", "skipped")
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
        message = _message(scenario)
        name = f"{error['errorName']}: " if error.get("errorName") else ""
        print(f"  ✗ {scenario.scenario}: {where}{name}{message}", file=out)
        if error.get("step"):
            print(f"      step: {error['step']}", file=out)
        if scenario.bundle_path:
            print(f"      bundle: {scenario.bundle_path}", file=out)
        if scenario.run_dir:
            print(f"      run: {scenario.run_dir}", file=out)
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
    ET.indent(suites)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
    )


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
    elif scenario.outcome == "aborted":
        ET.SubElement(case, "error", message="aborted", type="aborted")
    elif scenario.outcome == "skipped":
        ET.SubElement(case, "skipped", message=scenario.note or "skipped")
    if scenario.run_dir:
        ET.SubElement(case, "system-out").text = f"run directory: {scenario.run_dir}"


class ReportEvent(TypedDict):
    """One envelope of the JSON report."""

    protocol_version: int
    type: str
    data: JSONObject


def json_report(result: CollectionResult) -> list[ReportEvent]:
    """Ordered event envelopes: run_start, test_start/test_end per scenario, run_end."""
    events = [
        _envelope(
            "run_start",
            {
                "total": len(result.scenarios),
                "collection": result.collection,
                "runId": result.run_id,
            },
        )
    ]
    for scenario in result.scenarios:
        events.append(
            _envelope("test_start", {"name": scenario.scenario, "suite": result.collection})
        )
        events.append(_envelope("test_end", _test_end(scenario, result.collection)))
    counts = {
        k: sum(1 for s in result.scenarios if _STATUS[s.outcome] == k)
        for k in ("passed", "failed", "skipped")
    }
    events.append(
        _envelope(
            "run_end",
            {
                "total": len(result.scenarios),
                **counts,
                "flaky": 0,
                "duration_ns": result.duration_ms * 1_000_000,
                "outcome": result.outcome,
            },
        )
    )
    return events


_STATUS = {
    "completed": "passed",
    "failed": "failed",
    "interrupted": "failed",
    "aborted": "failed",
    "skipped": "skipped",
}


def _envelope(kind: str, data: JSONObject) -> ReportEvent:
    return {"protocol_version": REPORT_PROTOCOL_VERSION, "type": kind, "data": data}


def _test_end(scenario: ScenarioOutcome, collection: str) -> JSONObject:
    error: Mapping[str, object] = scenario.error or {}
    return {
        "name": scenario.scenario,
        "suite": collection,
        "status": _STATUS[scenario.outcome],
        "outcome": scenario.outcome,
        "duration_ns": scenario.duration_ms * 1_000_000,
        "error_message": error.get("error")
        or (scenario.note if scenario.outcome != "completed" else None),
        "error_name": error.get("errorName"),
        "location": _place(error),
        "chain": [dict(frame) for frame in error_chain(error)] or None,
        "bundle_path": scenario.bundle_path,
        "run_id": scenario.run_id,
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
