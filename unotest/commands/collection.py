"""``unotest collection <name>``: run a collection and report it (console, JUnit, JSON).

The events are the version-1 envelopes of docs/reporting.md (``run_start``,
``suite_start``, the ``before_all`` hook of the webServer, ``test_start``, ``retry``,
``test_end``, ``suite_end``, ``run_end``), built live as the collection runs: printed
by ``--reporter ndjson``, appended to the collection run's ``events.ndjson`` (the
viewer's ``/api/events``), written as one array by ``--reporter json=PATH``, as JUnit by
``--reporter junit=PATH`` (each reporter a sink of the run's log: unotest/reporters/)
and saved to history. A scenario that passed after a failed attempt is flaky in every
report. This module keeps the command, its console lines and summary, and the events.

``--grep``/``--grep-invert`` keep the listed scenarios whose ``"<name> <title>"`` they
match, before sharding (as Playwright filters before it shards); a grep that keeps none
is one sentence and exit 1, as Playwright's "No tests found", before any run starts.
Each ``test_start``/``test_end`` carries the scenario's ``title`` (JUnit's testcase
name), ``null`` for a listed name that is no scenario.

A collection's ``setup:`` scenarios are not filtered by ``--grep`` nor sharded: they
run first in every run (and shard) that runs any other scenario, and are reported like
the others, first. One that cannot run (it does not exist, or has errors) fails, and
every other scenario is reported ``skipped: setup <name> failed`` without a worker
started; the orchestrator does the same for one that runs and fails.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, TextIO, cast

from runner.collection import prelaunch as worker_prelaunch
from runner.collection.orchestrator import (
    CollectionResult,
    CollectionRun,
    ScenarioOutcome,
    setup_failed_note,
)
from runner.collection.shards import ShardPlan, plan_shard, read_durations
from runner.errors import (
    BrowserPoolDown,
    ConfigError,
    EventProtocolError,
    UnotestError,
    UsageError,
)
from runner.events import run_error
from runner.project.config import TRACE_ENV, CollectionUse, Config, load_config
from runner.project.index_cache import IndexSummary, ScenarioGrep, load_summary
from runner.project.root import Project, find_project_root
from runner.protocol import CollectionMeta, JSONObject
from runner.run.result import error_chain, error_location
from runner.store import envelope
from runner.store.envelope import Envelope
from runner.store.event_log import EventLog, LiveFile
from runner.store.history import SCENARIO_NOT_FOUND, longest_first, medians_ms
from runner.store.retries import flaky_line, retries_of
from runner.store.step_titles import read_titled_steps
from runner.text import did_you_mean, keep_lines, one_line
from runner.workers.lanes import lanes_per_process
from runner.workers.pool import endpoint_label
from unotest.console import ReaderMayLeave, format_diagnostic, print_warnings
from unotest.exit_codes import EXIT_FAILED, exit_code_for_run
from unotest.reporters import junit
from unotest.reporters.history import history_quietly
from unotest.reporters.options import parse_reporters
from unotest.reporters.sinks import ReportSinks

if TYPE_CHECKING:
    from dsl.errors import Diagnostic

__all__ = [
    "CollectionEvents",
    "collection_command",
    "find_collection",
    "json_report",
    "junit_xml",
    "parse_shard",
    "select",
]

_MARK = {
    "completed": "✓",
    "failed": "✗",
    "aborted": "■",
    "interrupted": "⚠",
    "skipped": "○",
}


def parse_shard(text: str | None) -> tuple[int, int] | None:
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


@dataclass(frozen=True)
class _Plan:
    """The listed scenarios: the setup scenarios this run starts first, those it (or its
    shard) starts then, those with errors, those never run because a setup scenario
    cannot run (``blocked``; the missing setup scenario in ``missing_setup``), and
    those not found; reports list them in that order."""

    names: list[str]
    skipped: list[str]
    broken: list[str]
    none_found: bool
    setup: list[str] = field(default_factory=list)
    missing_setup: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)
    blocked_by: str | None = None
    shard: ShardPlan | None = None
    """``--shard i/n``: the shard this run is, balanced by history (runner.collection.shards)."""
    whole: list[str] = field(default_factory=list)
    """With ``--shard``: what an unsharded run would list, in its order (``run_start.
    shard.scenarios``: ``unotest merge-reports`` lists the merged run in that order)."""

    @property
    def listed(self) -> list[str]:
        return [
            *self.setup,
            *self.names,
            *self.broken,
            *self.missing_setup,
            *self.blocked,
            *self.skipped,
        ]


def collection_command(args: argparse.Namespace) -> int:
    """The collection, with ``--trace`` over the config's ``trace``: its workers read the
    config themselves, so it reaches them as ``UNOTEST_TRACE`` in the environment they
    inherit, put back once the run is over (no worker was started early for such a
    command line: the prelaunch starts none for an option it does not know)."""
    trace = getattr(args, "trace", None)
    if trace is None:
        return _run_collection(args)
    before = os.environ.get(TRACE_ENV)
    os.environ[TRACE_ENV] = trace
    try:
        return _run_collection(args)
    finally:
        if before is None:
            os.environ.pop(TRACE_ENV, None)
        else:
            os.environ[TRACE_ENV] = before


def _run_collection(args: argparse.Namespace) -> int:
    root = find_project_root(Path.cwd(), args.root)
    project = Project(root)
    # The index cache: a project unchanged since the last list, check or collection is
    # not parsed again here (each worker parses the scenarios it runs).
    index = load_summary(project)
    entry = find_collection(project, index, args.name)
    if args.workers < 1:
        raise UsageError("--workers needs at least 1")
    if getattr(args, "lanes", None) is not None and args.lanes < 1:
        raise UsageError("--lanes needs at least 1")
    reporters = parse_reporters(args.reporter)
    # Every usage error before any warning, so a bad --shard is one sentence on stderr.
    sharding = parse_shard(args.shard)
    durations_file = getattr(args, "durations", None)
    given = read_durations(durations_file) if durations_file is not None else None
    grep = ScenarioGrep.parse(getattr(args, "grep", None), getattr(args, "grep_invert", None))
    config = load_config(root, os.environ)
    retries = retries_of(getattr(args, "retries", None), config)
    print_warnings(config.warnings)
    selected = select(project, index, entry, grep, sharding, given)
    if selected is None:
        return EXIT_FAILED  # said in one sentence: nothing runs, no run directory
    plan, use, durations = selected
    if args.headed:
        config = replace(config, headless=False)
    out = cast(TextIO, ReaderMayLeave(sys.stdout))
    printer = _event_printer(out, retries) if reporters.show_list else _no_event
    if reporters.show_list:
        _header(args, plan, out, grep, remote=bool(config.endpoints))
    started = time.time()
    live = LiveFile()
    reports = ReportSinks(reporters, out, started)
    log = EventLog([live, *reports.sinks])
    tracker = CollectionEvents(
        log, args.name, plan.listed, live, printer, index.titles(), root=project.root
    )
    if plan.shard is not None:
        tracker.shard = {**plan.shard.header(), "scenarios": plan.whole}
    console = out if reporters.show_list else sys.stderr
    tracker.console = console
    run = _collection_run(args, project, config, plan, retries, tracker, console, use, durations)
    # Taken only now: until here, an error leaves them to cli.main, which stops them.
    run.prelaunched = worker_prelaunch.take()
    try:
        finished = run.run()
    except UnotestError:
        tracker.abandon()
        raise
    result = _add_unrun(finished, plan, printer, _first_problems(project, index))
    tracker.finish(result)
    if reporters.show_list:
        _summary(result, out)
    reports.finish()  # JUnit and JSON, once the collection has ended
    if result.error is not None:
        if isinstance(result.error, BrowserPoolDown):  # the runs that finished are kept
            history_quietly(project, result.run_id, log.events, config)
        raise result.error  # its one sentence and exit code, once the reports are there
    history_quietly(project, result.run_id, log.events, config)
    return exit_code_for_run(result.outcome, result.signal)


def select(
    project: Project,
    index: IndexSummary,
    entry: CollectionMeta,
    grep: ScenarioGrep | None,
    sharding: tuple[int, int] | None,
    given: Mapping[str, float] | None,
) -> tuple[_Plan, CollectionUse | None, Mapping[str, float]] | None:
    """What the collection runs (and ``unotest list --shard`` shows): its plan, its
    setup and context keys, and the durations it is balanced and ordered by
    (``given`` by ``--durations``, else history's); None when the grep keeps nothing."""
    chosen = _grepped(entry, index, grep)
    if chosen is None:
        return None
    use = _collection_use(index, chosen, project.root)
    durations = given if given is not None else _history_durations(project)
    return _plan(project, chosen, index, sharding, use, durations), use, durations


def _grepped(
    entry: CollectionMeta, index: IndexSummary, grep: ScenarioGrep | None
) -> CollectionMeta | None:
    """The collection with only the scenarios ``grep`` keeps, each matched on its name
    and title (a listed name that is no scenario on its name alone: when it matches, it
    is reported missing as before); None when it keeps none, said in one sentence."""
    if grep is None:
        return entry
    titles = index.titles()
    kept = [name for name in entry["scenarios"] if grep.selects(name, titles.get(name))]
    if kept:
        return {**entry, "scenarios": kept}
    listed = len(dict.fromkeys(entry["scenarios"]))
    print(
        f"unotest: {one_line(f'no scenario matches {grep}')} in collection "
        f"'{entry['name']}' ({listed} listed): nothing runs",
        file=sys.stderr,
    )
    return None


def _collection_use(index: IndexSummary, entry: CollectionMeta, root: Path) -> CollectionUse | None:
    """The collection's setup scenarios and context keys, checked again here (the
    index cache holds them as the file wrote them); None when it has none."""
    data = index.collection_use.get(entry["name"])
    return None if data is None else CollectionUse.from_json(data, root)


def _plan(
    project: Project,
    entry: CollectionMeta,
    index: IndexSummary,
    sharding: tuple[int, int] | None,
    use: CollectionUse | None = None,
    durations: Mapping[str, float] | None = None,
) -> _Plan:
    """What this run starts, reports and skips; with ``sharding`` (i, n) only shard i of
    the runnable scenarios, balanced by ``durations`` (name → ms: history's medians or
    ``--durations``)."""
    setup = list(dict.fromkeys(use.setup)) if use is not None else []
    others: CollectionMeta = {
        **entry,
        "scenarios": [n for n in entry["scenarios"] if n not in setup],
    }
    names, skipped, broken = _runnable(project, others, index)
    none_found = bool(skipped) and not names and not broken
    if none_found:
        print(
            f"unotest: none of the {len(skipped)} scenario(s) collection '{entry['name']}' "
            f"lists exists: nothing runs, and the collection fails (see its scenarios: in "
            f"{entry['path']})",
            file=sys.stderr,
        )
    chosen = None
    whole = [*setup, *names, *broken, *skipped]
    if sharding is not None:
        chosen = plan_shard(names, durations or {}, *sharding)
        names = chosen.names
    plan = _Plan(names, skipped, broken, none_found, shard=chosen, whole=whole)
    # Setup scenarios only for a run of other scenarios (not for a shard left empty).
    return _with_setup(project, entry, index, plan, setup) if setup and names else plan


def _with_setup(
    project: Project, entry: CollectionMeta, index: IndexSummary, plan: _Plan, setup: list[str]
) -> _Plan:
    """``plan`` with its setup scenarios first; when one of them cannot run (it does not
    exist, or it or a helper has errors, said on stderr here), none runs: it fails, and
    every other scenario is blocked, reported skipped."""
    known = {meta["name"]: meta["path"] for meta in index.scenario_metas}
    helpers = index.errors_in(index.helper_files(project))  # said by _runnable already
    for name in setup:
        if name not in known:
            unloadable = index.errors_in([project.scenario_file(name)])
            for problem in unloadable:
                print(format_diagnostic(problem), file=sys.stderr)
            if not unloadable:
                print(
                    f"unotest: {entry['path']}: setup scenario '{name}' does not exist"
                    f"{did_you_mean(name, known)}: the collection fails",
                    file=sys.stderr,
                )
        problems = index.errors_in([known[name]]) if name in known else []
        for problem in problems:
            print(format_diagnostic(problem), file=sys.stderr)
        if name in known and not problems and not helpers:
            continue
        failed = [name] if name in known or index.errors_in([project.scenario_file(name)]) else []
        return replace(
            plan,
            names=[],
            broken=[*failed, *plan.broken],
            missing_setup=[] if failed else [name],
            blocked=[other for other in [*setup, *plan.names] if other != name],
            blocked_by=name,
        )
    return replace(plan, setup=setup)


def _collection_run(
    args: argparse.Namespace,
    project: Project,
    config: Config,
    plan: _Plan,
    retries: int,
    tracker: CollectionEvents,
    console: TextIO,
    use: CollectionUse | None = None,
    durations: Mapping[str, float] | None = None,
) -> CollectionRun:
    return CollectionRun(
        project,
        args.name,
        [*plan.setup, *plan.names],
        config,
        workers=args.workers,
        lanes=getattr(args, "lanes", None),
        bail=args.bail,
        headed=args.headed,
        out=console,
        on_event=tracker.on_event,
        skipped=plan.skipped,
        none_found=plan.none_found,
        broken=plan.broken,
        retries=retries,
        order=longest_first(plan.names, durations or {}),
        on_start=tracker.started,
        on_web_server=tracker.web_server,
        on_output=tracker.output,
        setup=plan.setup,
        use=use.to_json() if use is not None else None,
        on_endpoint=tracker.endpoint,
    )


def _history_durations(project: Project) -> dict[str, float]:
    """History's medians, which scenarios start by (longest first) and shards are
    balanced by; a history we cannot read only costs the ordering."""
    try:
        return medians_ms(project)
    except EventProtocolError as err:
        print(f"warning: {err}; scenarios start in the listed order", file=sys.stderr)
        return {}


def _header(
    args: argparse.Namespace,
    plan: _Plan,
    out: TextIO,
    grep: ScenarioGrep | None = None,
    *,
    remote: bool = False,
) -> None:
    """The first line of the list reporter: every scenario the summary will count,
    those that cannot run said apart, the workers and the processes they share
    (``--lanes``; ``remote``: browsers from ``wsEndpoint``, a process each), and the
    grep that chose them."""
    listed, runnable = len(plan.listed), len(plan.names)
    workers = min(args.workers, max(runnable, 1))
    processes = -(-workers // lanes_per_process(getattr(args, "lanes", None), remote))
    shared = f" in {processes} process{'' if processes == 1 else 'es'}"
    chosen_text = f", shard {args.shard}" if args.shard else ""
    if plan.shard is not None and plan.shard.expected_ms is not None:
        chosen_text += f" (about {_seconds(round(plan.shard.expected_ms))} of scenario time)"
    chosen_text += f", {one_line(str(grep))}" if grep is not None else ""
    unrun = [f"{len(plan.setup)} setup first"] if plan.setup else []
    unrun += [f"{len(plan.skipped)} not found"] if plan.skipped else []
    unrun += [f"{len(plan.broken)} with errors"] if plan.broken else []
    unrun += [f"setup {plan.blocked_by} cannot run"] if plan.blocked_by else []
    unrun_text = f" ({', '.join(unrun)})" if unrun else ""
    print(
        f"unotest collection {args.name}: {listed} scenario{'' if listed == 1 else 's'}"
        f"{unrun_text}, {workers} worker(s){shared if processes < workers else ''}{chosen_text}",
        file=out,
    )


class CollectionEvents:
    """The collection's envelopes as it runs: the orchestrator's callbacks become
    ``run_start``/``suite_start`` (once its run directory exists), the webServer's
    ``before_all`` hook, ``test_start`` (a scenario's first attempt), ``retry`` and
    ``test_end`` (its last), and at the end ``suite_end`` and ``run_end``.

    ``listed`` is every scenario the run counts, in the order reports list them: the
    ``run_start`` carries it as ``scenarios`` (JUnit's order; the events come as the
    scenarios end). ``titles`` (scenario name → its description line) gives each
    ``test_start``/``test_end`` its ``title``, ``null`` for a name it does not know.
    ``root`` (the project's) is where a ``test_end`` reads its run's titled steps
    (``steps``, when there are some)."""

    def __init__(
        self,
        log: EventLog,
        name: str,
        listed: list[str],
        live: LiveFile,
        printer: Callable[[str, ScenarioOutcome], None],
        titles: Mapping[str, str] | None = None,
        root: Path | None = None,
    ) -> None:
        self.root = root
        self.log = log
        self.name = name
        self.listed = listed
        self.titles = dict(titles or {})
        self.live = live
        self.printer = printer
        self.begun: set[str] = set()
        self.ended: set[str] = set()
        self.clock = time.monotonic()
        self.console: TextIO | None = None
        """Where a browser endpoint's going down is said (None: nowhere)."""
        self.endpoints_down: list[JSONObject] = []
        """Each time a browser endpoint went down (``run_end``'s ``browser_endpoints_down``)."""
        self.shard: JSONObject | None = None
        """``--shard``: ``{current, total, partition, scenarios}``, on ``run_start``."""

    def started(self, run_dir: Path) -> None:
        self.live.open(run_dir)
        self.begin(run_dir.name)

    def begin(self, run_id: str) -> None:
        """``run_start`` and ``suite_start`` of the collection run ``run_id``."""
        extra: JSONObject = {
            "collection": self.name,
            "runId": run_id,
            "scenarios": list(self.listed),
        }
        if self.shard is not None:
            extra["shard"] = self.shard
        self.log.emit(envelope.run_start(len(self.listed), extra=extra))
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

    def endpoint(self, kind: str, shown: str, reason: str | None) -> None:
        """A browser endpoint of the pool went down (said once each time) or came back."""
        if kind == "down":
            self.endpoints_down.append({"endpoint": shown, "reason": reason})
            line = f"  ! browser endpoint {shown} is down: {one_line(reason or '')}"
            line += "; its scenarios run on the other endpoints, and it is tried again later"
        else:
            line = f"  + browser endpoint {shown} is back"
        if self.console is not None:
            print(line, file=self.console, flush=True)

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
        extra = {"run_id": run_id, "worker": worker, "title": self.titles.get(scenario)}
        self.log.emit(envelope.test_start(scenario, self.name, extra=extra))

    def _end(self, outcome: ScenarioOutcome) -> None:
        self._begin(outcome.scenario, outcome.run_id, outcome.worker)
        self.ended.add(outcome.scenario)
        extra = {**_extra(outcome), "title": self.titles.get(outcome.scenario)}
        if self.root is not None and outcome.run_dir is not None:
            titled = read_titled_steps(self.root / outcome.run_dir)
            if titled:
                extra["steps"] = titled
        self.log.test_finished(
            outcome.scenario, self.name, outcome.attempt(), outcome.retries, extra
        )

    def finish(self, result: CollectionResult) -> None:
        """The scenarios that never ran (with errors, not found, not started), then the
        end of the suite and of the run."""
        for scenario in result.scenarios:
            if scenario.scenario not in self.ended:
                self._end(scenario)
        self.log.emit(envelope.suite_end(self.name))
        extra: JSONObject = {
            "outcome": result.outcome,
            "collection": self.name,
            "runId": result.run_id,
        }
        if self.endpoints_down:
            extra["browser_endpoints_down"] = list(self.endpoints_down)
        self.log.run_end(result.duration_ms, extra=extra)


def find_collection(project: Project, index: IndexSummary, name: str) -> CollectionMeta:
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
    said: list[Diagnostic] = []
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
        # Its folders' _hooks.js run around it: their problems stop it as its own do
        # (as `unotest e2e` refuses it), each said once however many scenarios share it.
        problems = index.errors_in([*project.hooks_files_over(name), known[name]])
        if helpers or problems:
            for problem in problems:
                if problem not in said:
                    print(format_diagnostic(problem), file=sys.stderr)
                    said.append(problem)
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
        on = f" {endpoint_label(result.endpoint)}" if result.endpoint else ""
        worker = f"[w{result.worker}{on}]" if result.worker is not None else "    "
        if kind == "started":
            print(f"  … {worker} {result.scenario}", file=out, flush=True)
            return
        extra = f"  ({_seconds(result.duration_ms)})" if result.duration_ms else ""
        if kind == "infra-retry":
            note = "  its browser endpoint went down: it runs again on another (not an attempt)"
            print(f"  ⟳ {worker} {result.scenario}{extra}{note}", file=out, flush=True)
            return
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


def _first_problems(project: Project, index: IndexSummary) -> Callable[[str], str | None]:
    """A broken scenario's first problem as ``file:line:col: message`` (the helper files'
    first, which stop every scenario), for its record; None if the index has none."""

    def first(name: str) -> str | None:
        problems = index.problems_of(project, project.scenario_file(name))
        return problems[0].head if problems else None

    return first


def _add_unrun(
    result: CollectionResult,
    plan: _Plan,
    on_event: Callable[[str, ScenarioOutcome], None],
    first_problem: Callable[[str], str | None] = lambda name: None,
) -> CollectionResult:
    """The scenarios that never started, added so that reports count every listed one;
    a broken one's record names its first problem, where it is. A setup scenario that
    does not exist fails; those it blocked are skipped, saying so."""
    for name in plan.missing_setup:
        error = run_error(f"setup scenario '{name}' does not exist", "Error")
        result.scenarios.append(ScenarioOutcome(name, "failed", error=error))
        result = replace(result, outcome="failed")
    for name in plan.broken:
        problem = first_problem(name)
        said = f"; the first: {problem}" if problem else ""
        result.scenarios.append(
            ScenarioOutcome(
                name,
                "failed",
                error=run_error(f"the scenario has errors ('unotest check'){said}", "SyntaxError"),
            )
        )
        if result.outcome == "completed":
            result = replace(result, outcome="failed")
    unrun = [(name, setup_failed_note(plan.blocked_by or "")) for name in plan.blocked]
    for name, note in [*unrun, *((name, SCENARIO_NOT_FOUND) for name in plan.skipped)]:
        # Listed like the scenarios that ran, so the list names what the count says.
        missing = ScenarioOutcome(name, "skipped", note=note)
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
        # Page and test text can hold terminal escapes: shown, never obeyed. A message
        # of several lines (the soft failures' list) keeps them, indented under its head.
        message = keep_lines(_message(scenario)).replace("\n", "\n    ")
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
    for teardown in result.teardown_errors:
        print(f"  ✗ {one_line(teardown)}", file=out)
    for scenario in (s for s in result.scenarios if s.flaky):
        print(f"  {flaky_line(scenario.scenario, scenario.retries)}", file=out)
    for scenario in (s for s in result.scenarios if s.infra_retries):
        lost = ", ".join(dict.fromkeys(r.endpoint for r in scenario.infra_retries))
        times = len(scenario.infra_retries)
        print(
            f"  ⟳ {scenario.scenario}: ran again after losing its browser endpoint ({lost}): "
            f"{times} infrastructure retr{'y' if times == 1 else 'ies'}, not counted",
            file=out,
        )
    print(f"  collection run: {result.run_dir}", file=out)


def json_report(
    result: CollectionResult, titles: Mapping[str, str] | None = None
) -> list[Envelope]:
    """The envelopes of a finished collection, as its live reporters emitted them
    (scenarios in the collection's order, each with its title from ``titles``)."""
    log = EventLog()
    listed = [scenario.scenario for scenario in result.scenarios]
    events = CollectionEvents(log, result.collection, listed, LiveFile(), _no_event, titles)
    events.begin(result.run_id)
    events.finish(result)
    return log.events


def junit_xml(
    result: CollectionResult, started: float, titles: Mapping[str, str] | None = None
) -> str:
    """The JUnit XML of a finished collection: its envelopes through the JUnit reporter."""
    return junit.render(json_report(result, titles), started)


def _extra(scenario: ScenarioOutcome) -> JSONObject:
    """The fields a ``test_end`` carries beyond version 1's table (consumers that do not
    know them ignore them): where it failed (and at which step), its bundle, its run
    directory, its worker, and the ``errorName`` of each failed attempt before it (its
    ``retry`` events', in order); the browser endpoint it ran on (``wsEndpoint``) and
    its runs lost with an endpoint that went down (``infra_retries``: neither attempts
    nor failures)."""
    error: Mapping[str, object] = scenario.error or {}
    return {
        "error_name": error.get("errorName"),
        "location": _place(error),
        "chain": [dict(frame) for frame in error_chain(error)] or None,
        "step": error.get("step"),
        "bundle_path": scenario.bundle_path,
        "run_dir": scenario.run_dir,
        "worker": scenario.worker,
        "retry_error_names": [attempt.error_name for attempt in scenario.retries],
        "browser_endpoint": scenario.endpoint,
        "infra_retries": [lost.to_json() for lost in scenario.infra_retries],
    }


def _location(error: Mapping[str, object]) -> str | None:
    """Where a scenario's error is, as the summary writes it: its chain from the
    scenario's own line (``file:line:col`` when it has none); JUnit reads the same from
    the ``test_end``'s ``chain`` and ``location``."""
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
