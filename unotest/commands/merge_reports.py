"""``unotest merge-reports FILE_OR_DIR...``: the shards of a CI matrix as one run.

Reads the version-1 JSON reports the shards wrote (``unotest collection NAME --shard
i/n --reporter json=PATH``; a folder stands for every ``*.json`` under it), checks they
are every shard of one run and merges them (:mod:`unotest.reporters.merge`) into the
envelopes one unsharded run would have written. Those go to the reporters
``--reporter`` names, as a collection's do (``list``, the default, ``junit=PATH``,
``json=PATH``, ``ndjson``), and to this project's history (``unotest/.history/``),
unless ``--no-history`` or no project is found here: the merge job of a matrix then
has every shard's durations for the next split (``unotest history --export``).

The exit code is the merged run's: 0 when every scenario passed (flaky ones too), 1
when one failed or a shard was aborted; 2, with one sentence, for input that is no
set of shard reports.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO, cast

from runner.errors import ConfigError, UsageError
from runner.project.config import load_config
from runner.project.root import Project, find_project_root
from runner.protocol import JSONObject
from runner.run.result import error_location
from runner.store.envelope import Envelope
from runner.store.retries import Attempt, flaky_line
from runner.text import keep_lines, one_line
from unotest.console import ReaderMayLeave, plural
from unotest.exit_codes import EXIT_FAILED, EXIT_OK
from unotest.reporters.history import history_quietly
from unotest.reporters.merge import ShardReport, check_shards, load_reports, merge, report_paths
from unotest.reporters.options import parse_reporters
from unotest.reporters.sinks import ReportSinks

__all__ = ["merge_reports_command"]

_MARK = {
    "completed": "✓",
    "flaky": "~",
    "failed": "✗",
    "aborted": "■",
    "interrupted": "⚠",
    "skipped": "○",
}


def merge_reports_command(args: argparse.Namespace) -> int:
    reporters = parse_reporters(getattr(args, "reporter", None))
    given: list[Path] = list(getattr(args, "reports", []) or [])
    if not given:
        raise UsageError("name the shards' JSON reports (or a folder holding them)")
    reports = check_shards(load_reports(report_paths(given)))
    events = merge(reports)
    out = cast(TextIO, ReaderMayLeave(sys.stdout))
    if reporters.show_list:
        _print_list(reports, events, out)
    sinks = ReportSinks(reporters, out, time.time())
    for event in events:
        for sink in sinks.sinks:
            sink(event)
    sinks.finish()
    if not getattr(args, "no_history", False):
        _save_history(getattr(args, "root", None), events)
    end = events[-1]["data"]
    return EXIT_OK if end.get("outcome") == "completed" else EXIT_FAILED


def _save_history(root_option: Path | None, events: list[Envelope]) -> None:
    """The merged run into this project's history, as a collection run saves itself; a
    merge outside any project (a bare CI job) keeps none, unless ``--root`` named one."""
    try:
        root = find_project_root(Path.cwd(), root_option)
    except UsageError:
        if root_option is not None:
            raise
        return
    try:
        config = load_config(root, os.environ)
    except ConfigError as err:
        print(f"warning: history not saved: {err}", file=sys.stderr)
        return
    run_id = str(events[0]["data"].get("runId"))
    history_quietly(Project(root), run_id, events, config)


def _kind(data: JSONObject) -> str:
    """A ``test_end`` as the list reporter marks it (``flaky``, or its own outcome)."""
    if data.get("status") == "flaky":
        return "flaky"
    outcome = data.get("outcome")
    if isinstance(outcome, str) and outcome in _MARK:
        return outcome
    status = data.get("status")
    return "failed" if status == "failed" else "skipped" if status == "skipped" else "completed"


def _seconds(duration_ns: object) -> str:
    ns = duration_ns if isinstance(duration_ns, int) else 0
    return f"{ns / 1e9:.1f} s"


def _print_list(reports: list[ShardReport], events: list[Envelope], out: TextIO) -> None:
    """Each scenario's line, in the collection's order, then the summary a collection
    prints: counts, each failure with its place, flaky scenarios, the merged run."""
    start, end = events[0]["data"], events[-1]["data"]
    collection = one_line(str(start.get("collection")))
    shards = ", ".join(report.label for report in reports)
    print(f"unotest merge-reports: collection {collection}, {shards}", file=out)
    ends = {str(e["data"].get("name")): e["data"] for e in events if e["type"] == "test_end"}
    retries: dict[str, list[JSONObject]] = {}
    for event in events:
        if event["type"] == "retry":
            retries.setdefault(str(event["data"].get("name")), []).append(event["data"])
    listed = start.get("scenarios")
    order = [str(n) for n in listed] if isinstance(listed, list) else list(ends)
    counts: dict[str, int] = {}
    for name in order:
        data = ends.get(name)
        if data is None:
            continue
        kind = _kind(data)
        counts[kind] = counts.get(kind, 0) + 1
        took = f"  ({_seconds(data.get('duration_ns'))})" if data.get("duration_ns") else ""
        note = ""
        if kind == "flaky":
            note = f"  flaky: passed on attempt {len(retries.get(name, [])) + 1}"
        elif kind == "skipped" and data.get("error_message"):
            note = f"  {one_line(str(data['error_message']))}"
        print(f"  {_MARK[kind]} {one_line(name)}{took}{note}", file=out)
    order_of = ("completed", "flaky", "failed", "interrupted", "aborted", "skipped")
    labels = {"completed": "passed"}
    table = ", ".join(f"{counts[k]} {labels.get(k, k)}" for k in order_of if counts.get(k))
    outcome = str(end.get("outcome") or "failed")
    print(
        f"\n{outcome.upper()}  {collection}: {table or 'nothing to run'} in "
        f"{_seconds(end.get('duration_ns'))} ({plural(len(reports), 'report')} merged)",
        file=out,
    )
    for name in order:
        data = ends.get(name)
        if data is not None and _kind(data) in ("failed", "interrupted"):
            _print_failure(name, data, len(retries.get(name, [])), out)
    for name in order:
        data = ends.get(name)
        if data is not None and _kind(data) == "flaky" and retries.get(name):
            print(f"  {flaky_line(name, _attempts(retries[name], data))}", file=out)
    print(f"  merged run: {one_line(str(start.get('runId')))}", file=out)


def _print_failure(name: str, data: JSONObject, retried: int, out: TextIO) -> None:
    """A failed scenario as a collection's summary says it: where, what, its step, its
    bundle and run directory (on the shard's machine)."""
    error: Mapping[str, object] = {"chain": data.get("chain")}
    location = error_location(error) or data.get("location")
    where = f"{one_line(location)}: " if isinstance(location, str) and location else ""
    error_name = data.get("error_name")
    said = f"{error_name}: " if isinstance(error_name, str) else ""
    message = keep_lines(str(data.get("error_message") or "failed")).replace("\n", "\n    ")
    print(f"  ✗ {one_line(name)}: {where}{said}{message}", file=out)
    for key, label in (("step", "step"), ("bundle_path", "bundle"), ("run_dir", "run")):
        if data.get(key):
            print(f"      {label}: {one_line(str(data[key]))}", file=out)
    if retried:
        print(f"      failed all {retried + 1} attempts", file=out)


def _attempts(retries: list[JSONObject], end: JSONObject) -> list[Attempt]:
    """The failed attempts before a flaky pass, as ``flaky_line`` names the first."""
    names = end.get("retry_error_names")
    error_names = names if isinstance(names, list) else []
    found: list[Attempt] = []
    for at, data in enumerate(retries):
        number, ns = data.get("attempt"), data.get("duration_ns")
        run_id, message = data.get("run_id"), data.get("error_message")
        error_name = error_names[at] if at < len(error_names) else None
        found.append(
            Attempt(
                number if isinstance(number, int) else at + 1,
                run_id if isinstance(run_id, str) else None,
                "interrupted" if data.get("outcome") == "interrupted" else "failed",
                round(ns / 1e6) if isinstance(ns, int) else 0,
                message if isinstance(message, str) else None,
                error_name if isinstance(error_name, str) else None,
            )
        )
    return found
