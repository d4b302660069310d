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
from dataclasses import replace
from pathlib import Path
from typing import Any

from runner.collection import CollectionResult, CollectionRun, ScenarioOutcome, shard
from runner.config import load_config
from runner.errors import ConfigError, UsageError
from runner.project import Project, ProjectIndex, find_project_root
from runner.text import did_you_mean
from unotest.console import format_diagnostic, print_warnings
from unotest.exit_codes import exit_code_for_run

__all__ = ["collection_command", "json_report", "junit_xml"]

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
    entry = index.collections.get(args.name)
    if entry is None:
        # A collection file that exists but does not load (wrong types, bad YAML) is a
        # configuration error naming the file and key, not "no collection named ...".
        wanted = project.relative(project.collections_dir / f"{args.name}.yaml")
        problem = next((d for d in index.errors if d.file == wanted), None)
        if problem is not None:
            raise ConfigError(f"{problem.file}:{problem.line}:{problem.col}: {problem.message}")
        hint = did_you_mean(args.name, index.collections)
        raise UsageError(f"no collection named '{args.name}'{hint}; 'unotest list' shows them")
    if args.workers < 1:
        raise UsageError("--workers needs at least 1")
    show_list, junit_path, json_path = _parse_reporters(args.reporter)
    # Every usage error before any warning, so a bad --shard is one sentence on stderr.
    sharding = _parse_shard(args.shard)
    config = load_config(root, os.environ)
    print_warnings(config.warnings)
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
    if sharding is not None:
        names = shard(names, *sharding)
    if args.headed:
        config = replace(config, headless=False)
    out = sys.stdout

    def on_event(kind: str, result: ScenarioOutcome) -> None:
        if not show_list:
            return
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

    if show_list:
        shard_text = f", shard {args.shard}" if sharding else ""
        print(
            f"unotest collection {args.name}: {len(names)} scenario(s), "
            f"{min(args.workers, max(len(names), 1))} worker(s){shard_text}",
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
    result = run.run()
    for name in broken:
        result.scenarios.append(
            ScenarioOutcome(
                name,
                "failed",
                error={
                    "error": "the scenario has errors ('unotest check')",
                    "errorName": "SyntaxError",
                },
            )
        )
        if result.outcome == "completed":
            result = replace(result, outcome="failed")
    for name in skipped:
        # Listed like the scenarios that ran, so the list names what the count says.
        missing = ScenarioOutcome(name, "skipped", note="scenario not found")
        result.scenarios.append(missing)
        on_event("finished", missing)
    if show_list:
        _summary(result, out)
    if junit_path is not None:
        _write(junit_path, junit_xml(result, started))
    if json_path is not None:
        _write(json_path, json.dumps(json_report(result), ensure_ascii=False, indent=2) + "\n")
    return exit_code_for_run(result.outcome, result.signal)


def _write(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as err:
        raise UsageError(f"cannot write report {path}: {err.strerror or err}") from None


def _summary(result: CollectionResult, out: Any) -> None:
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
        error = scenario.error or {}
        where = f"{error['file']}:{error['line']}:{error['col']}: " if "file" in error else ""
        message = error.get("error") or scenario.note or scenario.outcome
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
    failures = sum(1 for s in result.scenarios if s.outcome in ("failed", "interrupted"))
    errors = sum(1 for s in result.scenarios if s.outcome == "aborted")
    skipped = sum(1 for s in result.scenarios if s.outcome == "skipped")
    suites = ET.Element(
        "testsuites",
        name="unotest",
        tests=str(len(result.scenarios)),
        failures=str(failures),
        errors=str(errors),
        skipped=str(skipped),
        time=f"{result.duration_ms / 1000:.3f}",
    )
    suite = ET.SubElement(
        suites,
        "testsuite",
        name=result.collection,
        tests=str(len(result.scenarios)),
        failures=str(failures),
        errors=str(errors),
        skipped=str(skipped),
        time=f"{result.duration_ms / 1000:.3f}",
        timestamp=time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(started)),
    )
    for scenario in result.scenarios:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=result.collection,
            name=scenario.scenario,
            time=f"{scenario.duration_ms / 1000:.3f}",
        )
        error = scenario.error or {}
        message = error.get("error") or scenario.note or scenario.outcome
        if scenario.outcome in ("failed", "interrupted"):
            node = ET.SubElement(
                case, "failure", message=message, type=error.get("errorName", scenario.outcome)
            )
            details = [message]
            if "file" in error:
                details.append(f"at {error['file']}:{error['line']}:{error['col']}")
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
    ET.indent(suites)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
    )


def json_report(result: CollectionResult) -> list[dict[str, Any]]:
    """Ordered event envelopes: run_start, test_start/test_end per scenario, run_end."""
    status = {
        "completed": "passed",
        "failed": "failed",
        "interrupted": "failed",
        "aborted": "failed",
        "skipped": "skipped",
    }

    def envelope(kind: str, data: dict[str, Any]) -> dict[str, Any]:
        return {"protocol_version": REPORT_PROTOCOL_VERSION, "type": kind, "data": data}

    events = [
        envelope(
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
            envelope("test_start", {"name": scenario.scenario, "suite": result.collection})
        )
        error = scenario.error or {}
        events.append(
            envelope(
                "test_end",
                {
                    "name": scenario.scenario,
                    "suite": result.collection,
                    "status": status[scenario.outcome],
                    "outcome": scenario.outcome,
                    "duration_ns": scenario.duration_ms * 1_000_000,
                    "error_message": error.get("error")
                    or (scenario.note if scenario.outcome != "completed" else None),
                    "error_name": error.get("errorName"),
                    "location": f"{error['file']}:{error['line']}:{error['col']}"
                    if "file" in error
                    else None,
                    "bundle_path": scenario.bundle_path,
                    "run_id": scenario.run_id,
                    "worker": scenario.worker,
                },
            )
        )
    counts = {
        k: sum(1 for s in result.scenarios if status[s.outcome] == k)
        for k in ("passed", "failed", "skipped")
    }
    events.append(
        envelope(
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
