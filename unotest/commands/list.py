"""``unotest list``: the project's scenarios, helpers, collections and parse errors.

``--grep``/``--grep-invert`` keep the scenarios whose ``"<name> <title>"`` they match
(``runner.project.index_cache.ScenarioGrep``, as ``unotest collection`` selects); a
grep that keeps none is one sentence and exit 1, as Playwright's "No tests found".

A parameterised scenario is listed as its cases, each a scenario of its own named
``<name>[<case>]`` (its title ends with ``[<case>]``); in ``--json`` each carries our
additive ``case`` (the case's name).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from runner.project.index_cache import IndexSummary, ScenarioGrep, load_summary
from runner.project.root import Project, find_project_root, split_case_name
from runner.protocol import ScenarioMeta
from runner.text import one_line, replace_controls
from unotest.console import diagnostic_json, json_dump, plural
from unotest.exit_codes import EXIT_FAILED, EXIT_OK

__all__ = ["list_command"]


def list_command(args: argparse.Namespace) -> int:
    grep = ScenarioGrep.parse(getattr(args, "grep", None), getattr(args, "grep_invert", None))
    root = find_project_root(Path.cwd(), args.root)
    index = load_summary(Project(root))
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
