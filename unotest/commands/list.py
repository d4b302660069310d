"""``unotest list``: the project's scenarios, helpers, collections and parse errors.

``--grep``/``--grep-invert`` keep the scenarios whose ``"<name> <title>"`` they match
(``runner.project.index_cache.ScenarioGrep``, as ``unotest collection`` selects); a
grep that keeps none is one sentence and exit 1, as Playwright's "No tests found".

A parameterised scenario is listed as its cases, each a scenario of its own named
``<name>[<case>]`` (its title ends with ``[<case>]``); in ``--json`` each carries our
additive ``case`` (the case's name).

``--collection NAME --shard i/n`` lists what ``unotest collection NAME --shard i/n``
would run instead (the same selection: grep, setup scenarios, balanced by history or
``--durations``), each scenario with its expected duration, and the shard's expected
time beside every other shard's: a CI matrix can be checked before it runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from runner.errors import UsageError
from runner.project.index_cache import IndexSummary, ScenarioGrep, load_summary
from runner.project.root import Project, find_project_root, split_case_name
from runner.protocol import ScenarioMeta
from runner.text import one_line, replace_controls
from unotest.console import diagnostic_json, json_dump, plural
from unotest.exit_codes import EXIT_FAILED, EXIT_OK

__all__ = ["list_command"]


def list_command(args: argparse.Namespace) -> int:
    grep = ScenarioGrep.parse(getattr(args, "grep", None), getattr(args, "grep_invert", None))
    shard_text: str | None = getattr(args, "shard", None)
    collection: str | None = getattr(args, "collection", None)
    if (shard_text is None) != (collection is None):
        raise UsageError(
            "--shard and --collection go together: 'unotest list --collection NAME "
            "--shard i/n' lists shard i of n of that collection"
        )
    if getattr(args, "durations", None) is not None and shard_text is None:
        raise UsageError("--durations balances a shard: give it with --collection and --shard")
    root = find_project_root(Path.cwd(), args.root)
    index = load_summary(Project(root))
    if collection is not None and shard_text is not None:
        return _print_shard(Project(root), index, collection, shard_text, grep, args)
    scenarios = [
        meta
        for meta in index.scenario_metas
        if grep is None or grep.selects(meta["name"], meta["title"])
    ]
    if grep is not None and not scenarios:
        total = plural(len(index.scenario_metas), "scenario")
        print(f"unotest: {one_line(f'no scenario matches {grep} (of {total})')}", file=sys.stderr)
        return EXIT_FAILED
    if args.json:
        _print_json(root, index, scenarios)
        return EXIT_OK
    _print_text(root, index, scenarios, grep)
    return EXIT_OK


def _print_json(root: Path, index: IndexSummary, scenarios: list[ScenarioMeta]) -> None:
    """The protocol's shapes; each scenario with our additive ``tags`` (its title's) and,
    for a case of a parameterised scenario, ``case``."""
    print(
        json_dump(
            {
                "root": str(root),
                "scenarios": [_scenario_json(index, meta) for meta in scenarios],
                "helpers": index.helper_metas(),
                "collections": index.collections,
                "errors": [diagnostic_json(d) for d in index.errors(check=False)],
                "warnings": list(index.warnings) + index.orphan_warnings,
            }
        )
    )


def _scenario_json(index: IndexSummary, meta: ScenarioMeta) -> dict[str, object]:
    found: dict[str, object] = {**meta, "tags": index.tags_of(meta["name"])}
    base, case = split_case_name(meta["name"])
    if case is not None and base in index.cases:
        found["case"] = case
    return found


def _print_text(
    root: Path, index: IndexSummary, scenarios: list[ScenarioMeta], grep: ScenarioGrep | None
) -> None:
    """Each scenario's title as written, its ``@tags`` with it."""
    print(replace_controls(f"project {root}"))
    matched = f" of {len(index.scenario_metas)} matching {grep}" if grep is not None else ""
    print(f"\nscenarios ({len(scenarios)}{matched})")  # show_name escaped the patterns
    width = max((len(m["name"]) for m in scenarios), default=0)
    for meta in scenarios:
        print(replace_controls(f"  {meta['name']:<{width}}  {meta['title']}  [id-{meta['id']}]"))
    print(f"\nhelpers ({len(index.helpers)})")
    for helper in index.helpers:
        names = ", ".join(helper.functions)
        print(replace_controls(f"  {helper.name}: {names}"))
    print(f"\ncollections ({len(index.collections)})")
    for collection in index.collections:
        text = " ".join((collection["description"] or "").split())
        description = f"  {text}" if text else ""
        count = plural(len(collection["scenarios"]), "scenario")
        use = index.collection_use.get(collection["name"])
        if use is not None and use["setup"]:
            count += f" after {plural(len(use['setup']), 'setup scenario')}"
        print(replace_controls(f"  {collection['name']} ({count}){description}"))
    errors = index.errors(check=False)
    if errors:
        print(f"\nerrors ({len(errors)})")
        for d in errors:
            print(replace_controls(f"  {d.file}:{d.line}:{d.col}: {d.message}"))
    for warning in list(index.warnings) + index.orphan_warnings:
        print(f"warning: {replace_controls(warning)}", file=sys.stderr)


def _print_shard(
    project: Project,
    index: IndexSummary,
    name: str,
    shard_text: str,
    grep: ScenarioGrep | None,
    args: argparse.Namespace,
) -> int:
    """Shard ``shard_text`` of collection ``name`` as ``unotest collection`` would run it,
    with the durations it is balanced by; ``--json`` prints it as an object."""
    # The collection command's own selection, imported only for this listing.
    from runner.collection.shards import read_durations
    from unotest.commands.collection import find_collection, parse_shard, select

    entry = find_collection(project, index, name)
    sharding = parse_shard(shard_text)
    assert sharding is not None
    path: Path | None = getattr(args, "durations", None)
    given = read_durations(path) if path is not None else None
    selected = select(project, index, entry, grep, sharding, given)
    if selected is None:
        return EXIT_FAILED  # the grep kept nothing: said in one sentence
    plan, _, durations = selected
    chosen = plan.shard
    assert chosen is not None
    assumed = chosen.assumed_ms

    def expected_of(scenario: str) -> float | None:
        return durations.get(scenario, assumed)

    def rows(names: list[str]) -> list[dict[str, object]]:
        return [{"name": n, "expectedMs": expected_of(n), "known": n in durations} for n in names]

    setup_ms = sum(expected_of(n) or 0.0 for n in plan.setup)
    expected = None if chosen.expected_ms is None else chosen.expected_ms + setup_ms
    balanced_by = None if chosen.loads_ms is None else "file" if given is not None else "history"
    if args.json:
        shown = {
            "collection": name,
            "shard": chosen.header(),
            "balancedBy": balanced_by,
            "expectedMs": expected,
            "shardsMs": chosen.loads_ms,
            "assumedMs": assumed,
            "setup": rows(plan.setup),
            "scenarios": rows(plan.names),
        }
        print(json_dump(shown))
        return EXIT_OK
    current, total = sharding
    count = plural(len(plan.names), "scenario")
    if expected is None or chosen.loads_ms is None:
        print(f"collection {name}, shard {current}/{total}: {count}, split by count (no history)")
    else:
        by = f"--durations {path}" if given is not None else "history's medians"
        shards = ", ".join(_seconds(ms) for ms in chosen.loads_ms)
        print(
            replace_controls(
                f"collection {name}, shard {current}/{total}: {count}, expected "
                f"{_seconds(expected)} of scenario time (shards: {shards}; by {by})"
            )
        )
    width = max((len(n) for n in [*plan.setup, *plan.names]), default=0)
    for scenario in [*plan.setup, *plan.names]:
        known = expected_of(scenario)
        took = "-" if known is None else _seconds(known)
        if scenario not in durations and known is not None:
            took += " assumed (no duration of its own)"
        note = "  (setup: runs first in every shard)" if scenario in plan.setup else ""
        print(replace_controls(f"  {scenario:<{width}}  {took}{note}"))
    return EXIT_OK


def _seconds(ms: float) -> str:
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.1f} s"
