"""``unotest list``: the project's scenarios, helpers, collections and parse errors."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from runner.project.index_cache import load_summary
from runner.project.root import Project, find_project_root
from runner.text import replace_controls
from unotest.console import diagnostic_json, json_dump, plural
from unotest.exit_codes import EXIT_OK

__all__ = ["list_command"]


def list_command(args: argparse.Namespace) -> int:
    root = find_project_root(Path.cwd(), args.root)
    index = load_summary(Project(root))
    warnings = list(index.warnings) + index.orphan_warnings
    errors = index.errors(check=False)
    if args.json:
        print(
            json_dump(
                {
                    "root": str(root),
                    "scenarios": index.scenario_metas,
                    "helpers": index.helper_metas(),
                    "collections": index.collections,
                    "errors": [diagnostic_json(d) for d in errors],
                    "warnings": warnings,
                }
            )
        )
        return EXIT_OK
    print(replace_controls(f"project {root}"))
    print(f"\nscenarios ({len(index.scenario_metas)})")
    width = max((len(m["name"]) for m in index.scenario_metas), default=0)
    for meta in index.scenario_metas:
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
        print(replace_controls(f"  {collection['name']} ({count}){description}"))
    if errors:
        print(f"\nerrors ({len(errors)})")
        for d in errors:
            print(replace_controls(f"  {d.file}:{d.line}:{d.col}: {d.message}"))
    for warning in warnings:
        print(f"warning: {replace_controls(warning)}", file=sys.stderr)
    return EXIT_OK
