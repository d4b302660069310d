"""Which scenarios a batch of saved files selects, and why (``plan[].reasons``).

The answer is made to be read: every selected scenario carries its reasons (the saved
scenario itself, every case of a saved parameterised one, the call chain from a saved
helper, a saved ``_hooks.js`` over it, a manual trigger, a changed config), and every
saved file that selects nothing is listed in ``unmatched`` with the explanation. A
helper that does not parse has no call graph of its own any more: its scenarios are
then found by the names of its functions (as last parsed, and as its text still
declares them), and an ``error`` says so (``degradedTo``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from runner import protocol
from runner.project.index import CONFIG_FILE, SCENARIO_SUFFIX
from runner.project.root import HOOKS_FILE
from runner.protocol import ENV_FILE
from runner.watch.daemon_events import (
    ADAPTER_ID,
    RUNNER_KEY,
    ChangeKind,
    PlanEntry,
    SelectionReason,
    Unmatched,
)
from runner.watch.graph import DependencyGraph, Node, absolute, helper_names_in_source

__all__ = ["Change", "DegradedNote", "Selection", "select", "select_manual"]

_E2E = f"{protocol.UNOTEST_DIR}/{protocol.E2E_SUBDIR}/"
_HELPERS = f"{_E2E}{protocol.HELPERS_SUBDIR}/"
_COLLECTIONS = f"{_E2E}{protocol.COLLECTIONS_SUBDIR}/"


@dataclass(frozen=True)
class Change:
    rel: str
    """Project-relative POSIX path."""
    kind: ChangeKind


@dataclass(frozen=True)
class DegradedNote:
    """An ``error`` event to publish: something failed and something else took over."""

    scope: str
    message: str
    detail: str | None
    degraded_to: str


@dataclass
class Selection:
    root: Path
    reasons: dict[str, list[SelectionReason]] = field(default_factory=dict)
    unmatched: list[Unmatched] = field(default_factory=list)
    notes: list[DegradedNote] = field(default_factory=list)

    def add(self, scenario: str, reason: SelectionReason) -> None:
        self.reasons.setdefault(scenario, []).append(reason)

    def miss(self, rel: str, reason: str) -> None:
        self.unmatched.append({"file": absolute(self.root, rel), "reason": reason})

    def plan(self, graph: DependencyGraph) -> list[PlanEntry]:
        """One plan entry (our one runner) listing every selected scenario's file."""
        if not self.reasons:
            return []
        names = list(self.reasons)
        files = [absolute(self.root, graph.scenario_files.get(n, n)) for n in names]
        reasons: dict[str, list[SelectionReason]] = {}
        for file, name in zip(files, names, strict=True):
            # The cases of one file share it: their reasons once, without repeats.
            known = reasons.setdefault(file, [])
            known.extend(r for r in self.reasons[name] if r not in known)
        return [
            {
                "runnerKey": RUNNER_KEY,
                "adapterId": ADAPTER_ID,
                "testFiles": list(reasons),
                "reasons": reasons,
                "scenarios": names,
            }
        ]


def select_manual(
    root: Path, graph: DependencyGraph, names: Iterable[str], message: str
) -> Selection:
    """A key or a client asked for these scenarios."""
    selection = Selection(root)
    for name in names:
        if name in graph.scenario_files:
            selection.add(name, {"kind": "manual", "message": message})
    return selection


def select(
    root: Path,
    old: DependencyGraph,
    new: DependencyGraph,
    changes: list[Change],
    candidates: Collection[str] | None,
    collection: str | None = None,
) -> Selection:
    """The scenarios ``changes`` select among ``candidates`` (None: every scenario)."""
    selection = Selection(root)
    allowed = set(new.scenario_files) if candidates is None else set(candidates)
    for change in changes:
        rel = change.rel
        if rel in (CONFIG_FILE, ENV_FILE):
            _config_changed(selection, new, rel, allowed)
        elif rel.startswith(_COLLECTIONS):
            selection.miss(rel, "a collection file: it lists scenarios, a save runs none of them")
        elif rel.startswith(_HELPERS) and rel.endswith(".js"):
            _helper_changed(selection, old, new, change, allowed)
        elif rel.startswith(_E2E) and rel.endswith("/" + HOOKS_FILE):
            _hooks_changed(selection, new, change, allowed)
        elif rel.startswith(_E2E) and rel.endswith(SCENARIO_SUFFIX):
            _scenario_changed(selection, new, change, allowed, collection)
        else:
            selection.miss(
                rel, "not a scenario, helper, collection, unotest.config.yaml or unotest/.env"
            )
    return selection


def _config_changed(
    selection: Selection, graph: DependencyGraph, rel: str, allowed: set[str]
) -> None:
    # unotest/.env too: any scenario may read it through env() (the next run reads it).
    message = f"{rel} changed: every scenario is selected"
    if not allowed:
        selection.miss(rel, f"{rel} changed but there is no scenario to run")
    for name in sorted(allowed):
        if name in graph.scenario_files:
            changed = absolute(selection.root, rel)
            selection.add(name, {"kind": "config", "changedFile": changed, "message": message})


def _scenario_changed(
    selection: Selection,
    graph: DependencyGraph,
    change: Change,
    allowed: set[str],
    collection: str | None,
) -> None:
    rel = change.rel
    if change.kind == "unlink":
        selection.miss(rel, "a scenario that was deleted: nothing left to run")
        return
    names = graph.scenarios_of_file(rel)
    chosen = [name for name in names if name in allowed]
    if not names:
        selection.miss(rel, "a scenario file that could not be read")
    elif not chosen:
        selection.miss(rel, f"scenario '{names[0]}' is not in the collection '{collection}'")
    for name in chosen:  # every case of a parameterised scenario
        changed = absolute(selection.root, rel)
        reason: SelectionReason = {"kind": "changed", "changedFile": changed}
        if rel in graph.broken:
            reason["message"] = f"does not parse: {graph.broken[rel]}"
        selection.add(name, reason)


def _hooks_changed(
    selection: Selection, graph: DependencyGraph, change: Change, allowed: set[str]
) -> None:
    """A folder's ``_hooks.js``: every scenario of its folder and below (its hooks run
    around each, its consts are theirs), whether it parses or not (one that does not
    stops them all, which their runs then say)."""
    rel = change.rel
    names = [name for name in graph.scenarios_under(rel) if name in allowed]
    if not names:
        selection.miss(rel, "a folder's hooks file, and no scenario is in its folder")
        return
    changed = absolute(selection.root, rel)
    for name in sorted(names):
        scenario = absolute(selection.root, graph.scenario_files[name])
        reason: SelectionReason = {
            "kind": "importer",
            "changedFile": changed,
            "sourceFile": scenario,
            "depth": 1,
            "chain": [changed, scenario],
            "via": ["(its folder's hooks)"],
        }
        if change.kind == "unlink":
            reason["message"] = "its folder's hooks file was deleted"
        elif rel in graph.broken:
            reason["message"] = f"its folder's hooks file does not load: {graph.broken[rel]}"
        selection.add(name, reason)


def _helper_changed(
    selection: Selection,
    old: DependencyGraph,
    new: DependencyGraph,
    change: Change,
    allowed: set[str],
) -> None:
    rel = change.rel
    parses = change.kind != "unlink" and rel in new.helper_functions and rel not in new.broken
    found = 0
    if parses:
        for name in sorted(allowed):
            path = new.paths_into(name, rel)
            if path is not None:
                where = new.scenario_files[name]
                selection.add(name, _importer(selection.root, rel, where, path, by_name=False))
                found += 1
        if not found:
            selection.miss(rel, "a helper that no scenario calls")
        return
    names = _names_of_lost_helper(selection.root, old, rel)
    for name in sorted(allowed):
        path = new.paths_to_names(name, names)
        if path is not None:
            where = new.scenario_files[name]
            selection.add(name, _importer(selection.root, rel, where, path, by_name=True))
            found += 1
    _note_lost_helper(selection, new, change, names, found)


def _names_of_lost_helper(root: Path, old: DependencyGraph, rel: str) -> set[str]:
    """A helper's functions when it no longer parses: as last parsed, and as its text
    still declares them."""
    names = set(old.helper_functions.get(rel, set()))
    with contextlib.suppress(OSError, UnicodeDecodeError):
        names |= helper_names_in_source((root / rel).read_text(encoding="utf-8"))
    return names


def _note_lost_helper(
    selection: Selection, new: DependencyGraph, change: Change, names: set[str], found: int
) -> None:
    rel = change.rel
    listed = ", ".join(sorted(names)) or "none known"
    if change.kind == "unlink":
        what, detail = "was deleted", None
    else:
        what, detail = "does not parse", new.broken.get(rel)
    selection.notes.append(
        DegradedNote(
            f"graph:{rel}",
            f"the helper {rel} {what}: its calls are unknown",
            detail,
            f"its scenarios are selected by the names of its functions ({listed})",
        )
    )
    if not found:
        detail_text = f": {detail}" if detail else ""
        if change.kind == "unlink":
            selection.miss(rel, "a deleted helper, and no scenario calls its functions")
            return
        # Nothing to rerun, but nothing runs either: every run refuses to start while a
        # helper does not parse, which "nothing" alone hid until the next batch.
        selection.miss(
            rel,
            "a helper that does not parse and no scenario calls; every scenario is "
            f"blocked until it parses (as unotest e2e refuses to start){detail_text}",
        )


def _importer(
    root: Path, rel: str, scenario_file: str, path: tuple[Node, ...], *, by_name: bool
) -> SelectionReason:
    """The reason for a scenario whose call path ``path`` (from its root) ends in the
    saved file ``rel``: the files along it, from the saved one to the scenario's (a
    path from a project hook ends with the scenario the hook runs around)."""
    files: list[str] = [rel]
    via: list[str] = [path[-1][1]]
    for node in reversed(path[:-1]):
        if node[0] != files[-1]:
            files.append(node[0])
            via.append(node[1])
    if files[-1] != scenario_file:
        files.append(scenario_file)
        via.append(path[0][1] if path[0][0] == scenario_file else "(its hooks)")
    chain = [absolute(root, f) for f in files]
    reason: SelectionReason = {
        "kind": "importer",
        "changedFile": chain[0],
        "sourceFile": chain[-1],
        "depth": len(chain) - 1,
        "chain": chain,
        "via": via,
    }
    if by_name:
        reason["byName"] = True
    return reason
