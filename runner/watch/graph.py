"""The watch daemon's dependency graph: which scenarios a saved file can change.

Built from the static checker's own walk (:func:`dsl.checker.function_references`:
every call and every name read that no variable declares), so the graph sees exactly
the calls the checker sees (nested blocks, loops, ``expect_poll``'s function, helper
consts). A node is a function of a file; a scenario's roots are every function of its
file, the project's hooks (helpers named ``before_each``, ``after_all``, ..., which run
around every test) and the hooks of each ``_hooks.js`` over it (a folder's, run around
each scenario of the folder and below; a const of one it reads is an edge to it too).
A breadth-first walk from the roots gives, for every file a
scenario reaches, the shortest call path to it: that path is the ``chain`` a reason
shows. Names that resolve to nothing (a helper that no longer parses) are kept as
leaves, so a broken helper's scenarios can still be found by the names of its
functions.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from dsl import ast
from dsl.checker import function_references
from dsl.interpreter import HOOK_NAMES
from runner import protocol
from runner.project.index import SCENARIO_SUFFIX, ProjectIndex
from runner.project.root import HOOKS_FILE

__all__ = ["DependencyGraph", "Node", "absolute", "helper_names_in_source"]

Node = tuple[str, str]
"""``(file, function)``: a function of a project-relative file; ``("", name)`` is a name
that resolves to no function (a helper that does not parse, or a typo)."""
_Resolution = tuple[dict[str, str], dict[str, str]]
"""Each helper function's file and each const's file, by name."""

_FUNCTION_DECL = re.compile(r"\bfunction\s+([A-Za-z_$][\w$]*)\s*\(")


def helper_names_in_source(source: str) -> set[str]:
    """Function names declared in a helper's text, read without parsing it: what is left
    to go on when the file does not parse."""
    return set(_FUNCTION_DECL.findall(source))


@dataclass
class DependencyGraph:
    """Scenarios, the files they reach, and how (all paths project-relative)."""

    scenario_files: dict[str, str] = field(default_factory=dict)
    """Scenario name → its file, every scenario file that was read (broken ones too)."""
    reach: dict[str, dict[Node, tuple[Node, ...]]] = field(default_factory=dict)
    """Scenario name → every node it reaches → the call path from one of its roots."""
    helper_functions: dict[str, set[str]] = field(default_factory=dict)
    """Helper file → the functions and consts it declares (as last parsed)."""
    broken: dict[str, str] = field(default_factory=dict)
    """File that does not load → its first problem, ``file:line:col: message``."""
    problems: dict[str, list[str]] = field(default_factory=dict)
    """Every file with a problem (parse or check) → its problems, as ``unotest check``."""
    collections: dict[str, list[str]] = field(default_factory=dict)
    hooks_files: list[str] = field(default_factory=list)
    """Every folder's ``_hooks.js`` that was read, loaded or not."""
    built_from: tuple[dict[str, object], object] = field(
        default_factory=lambda: ({}, None), repr=False
    )
    """Each scenario's program object, and what every helper and ``_hooks.js`` function
    calls: a graph built after a save reuses the reach of a scenario whose program is
    the very same object (a ``LoadMemo`` hands the unchanged ones over) when no helper's
    calls changed (a helper's body edited without a new call keeps every path), and
    walks only the rest (10,000 scenarios: a tenth of a second per save)."""
    resolved_by: _Resolution = field(default_factory=lambda: ({}, {}), repr=False)
    """What a call's name resolves to besides the caller's own functions: each helper
    function's file, each const's file."""
    program_edges: dict[int, tuple[object, list[tuple[Node, set[Node]]]]] = field(
        default_factory=dict, repr=False
    )
    """Each program's functions and their callees, by the program's id (the program is
    kept beside them): a graph built after a save takes those of a program that is the
    very same object when names resolve as before, and resolves only the rest (10,000
    scenarios: most of the edges' cost)."""

    @classmethod
    def build(cls, index: ProjectIndex, previous: DependencyGraph | None = None) -> DependencyGraph:
        graph = cls()
        edges, graph.helper_functions = _edges(index, graph, previous)
        shared_files = {h.file for h in index.helpers}
        shared_files |= {hooks.file for hooks in index.hooks_files.values()}
        shared = {node: targets for node, targets in edges.items() if node[0] in shared_files}
        programs: dict[str, object] = {}
        graph.built_from = (programs, shared)
        before: dict[str, object] = {}
        if previous is not None and previous.built_from[1] == shared:
            before = previous.built_from[0]
        hooks = [
            (ref.program.file, name)
            for name in sorted(HOOK_NAMES)
            if (ref := index.helper_table.hook(name)) is not None
        ]
        for name, scenario in index.scenarios.items():
            graph.scenario_files[name] = scenario.file
            programs[name] = scenario.program
            kept = previous.reach.get(name) if previous is not None else None
            if kept is not None and before.get(name) is scenario.program:
                graph.reach[name] = kept
                continue
            roots = [(scenario.file, fn.name) for fn in scenario.program.functions] + hooks
            roots += [
                (folder.file, fn.name)
                for folder in scenario.folders
                for fn in folder.program.functions
                if fn.name in HOOK_NAMES
            ]
            graph.reach[name] = _walk(roots, edges)
        graph.hooks_files = [f for f in index.files if f.endswith("/" + HOOKS_FILE)]
        e2e = protocol.UNOTEST_DIR + "/" + protocol.E2E_SUBDIR + "/"
        for rel in index.files:
            inner = rel[len(e2e) :] if rel.startswith(e2e) else ""
            name = inner[: -len(SCENARIO_SUFFIX)]
            # a parameterised scenario is its cases, mapped above
            wanted = rel.endswith(SCENARIO_SUFFIX) and not inner.startswith("_")
            if wanted and name not in index.cases:
                graph.scenario_files.setdefault(name, rel)
        for problem in index.errors:
            text = problem.head
            graph.problems.setdefault(problem.file, []).append(text)
        loaded = {s.file for s in index.scenarios.values()} | {h.file for h in index.helpers}
        loaded |= {hooks.file for hooks in index.hooks_files.values()}
        for rel, texts in graph.problems.items():
            if rel.endswith(".js") and rel not in loaded:
                graph.broken[rel] = texts[0]
        graph.collections = {
            name: list(entry.meta["scenarios"]) for name, entry in index.collections.items()
        }
        return graph

    def scenario_of_file(self, rel: str) -> str | None:
        return next((n for n, f in self.scenario_files.items() if f == rel), None)

    def scenarios_of_file(self, rel: str) -> list[str]:
        """The scenarios of one file: itself, or each case of a parameterised one."""
        return [n for n, f in self.scenario_files.items() if f == rel]

    def scenarios_under(self, hooks_file: str) -> list[str]:
        """The scenarios a ``_hooks.js`` runs around: those in its folder and below."""
        folder = hooks_file[: -len(HOOKS_FILE)]
        return [n for n, f in self.scenario_files.items() if f.startswith(folder)]

    def helper_files(self) -> list[str]:
        """Every helper file read, loaded or not."""
        helpers = protocol.UNOTEST_DIR + "/" + protocol.E2E_SUBDIR + "/"
        helpers += protocol.HELPERS_SUBDIR + "/"
        names = set(self.helper_functions) | {f for f in self.problems if f.startswith(helpers)}
        return sorted(names)

    def paths_into(self, scenario: str, rel: str) -> tuple[Node, ...] | None:
        """The shortest call path from ``scenario`` into a function of ``rel``."""
        best: tuple[Node, ...] | None = None
        for node, path in self.reach.get(scenario, {}).items():
            if node[0] == rel and (best is None or len(path) < len(best)):
                best = path
        return best

    def paths_to_names(self, scenario: str, names: Collection[str]) -> tuple[Node, ...] | None:
        """The shortest call path from ``scenario`` to any of ``names``, however they
        resolve (the by-name fallback for a helper that does not parse)."""
        best: tuple[Node, ...] | None = None
        for node, path in self.reach.get(scenario, {}).items():
            if node[1] in names and (best is None or len(path) < len(best)):
                best = path
        return best

    def problems_for(self, scenario: str) -> list[str]:
        """What stops ``scenario`` from running: problems in its file or in any helper
        (as ``unotest e2e`` refuses to start, helpers that do not parse included), the
        files that do not load first."""
        file = self.scenario_files.get(scenario, "")
        over = [h for h in self.hooks_files if file.startswith(h[: -len(HOOKS_FILE)])]
        files = [*self.helper_files(), *over, file]
        found = [text for rel in files for text in self.problems.get(rel, [])]
        # A file that does not load first: it is often why the others have problems
        # (a helper that does not parse leaves its callers calling an unknown name).
        return sorted(found, key=lambda text: text.split(":", 1)[0] not in self.broken)


def _edges(
    index: ProjectIndex, graph: DependencyGraph, previous: DependencyGraph | None
) -> tuple[dict[Node, set[Node]], dict[str, set[str]]]:
    """Every function's callees (resolved as the interpreter resolves them: the file's
    own functions first, then helpers, then helper consts) and each helper's names.
    A program's are taken from ``previous`` when it is the same object and every name
    resolves as it did then; ``graph`` keeps them for the next build."""
    consts = {name: const.file for name, const in index.helper_table.consts.items()}
    for hooks in index.hooks_files.values():
        consts.update({const.name: const.file for const in hooks.consts})
    helpers = {name: ref.program.file for name, ref in index.helper_table.items()}
    kept: dict[int, tuple[object, list[tuple[Node, set[Node]]]]] = {}
    if previous is not None and previous.resolved_by == (helpers, consts):
        kept = previous.program_edges
    graph.resolved_by = (helpers, consts)
    edges: dict[Node, set[Node]] = {}
    declared: dict[str, set[str]] = {}
    programs = [h.program for h in index.helpers]
    programs += [hooks.program for hooks in index.hooks_files.values()]
    programs += list({s.file: s.program for s in index.scenarios.values()}.values())
    for helper in index.helpers:
        names = {fn.name for fn in helper.program.functions}
        declared[helper.file] = names | {c.name for c in helper.consts}
    for program in programs:
        found = kept.get(id(program))
        if found is not None and found[0] is program:
            pairs = found[1]
        else:
            pairs = _program_edges(index, program, helpers, consts)
        graph.program_edges[id(program)] = (program, pairs)
        edges.update(pairs)
    return edges, declared


def _program_edges(
    index: ProjectIndex, program: ast.Program, helpers: dict[str, str], consts: dict[str, str]
) -> list[tuple[Node, set[Node]]]:
    """One program's functions and the nodes each calls."""
    local = {fn.name for fn in program.functions}
    memo = index.memo
    references = (
        memo.derived(program, "references", partial(function_references, program))
        if memo is not None
        else function_references(program)
    )
    pairs: list[tuple[Node, set[Node]]] = []
    for refs in references:
        targets: set[Node] = set()
        for name in refs.names:
            if name in local:
                targets.add((program.file, name))
            elif (helper_file := helpers.get(name)) is not None:
                targets.add((helper_file, name))
            elif (const_file := consts.get(name)) is not None:
                targets.add((const_file, name))
            else:
                targets.add(("", name))
        pairs.append(((program.file, refs.name), targets))
    return pairs


def _walk(roots: list[Node], edges: Mapping[Node, set[Node]]) -> dict[Node, tuple[Node, ...]]:
    """Breadth first from ``roots``: every reachable node with its shortest path."""
    paths: dict[Node, tuple[Node, ...]] = {}
    queue: deque[Node] = deque()
    for root in roots:
        if root not in paths:
            paths[root] = (root,)
            queue.append(root)
    while queue:
        node = queue.popleft()
        for target in sorted(edges.get(node, ())):
            if target not in paths:
                paths[target] = (*paths[node], target)
                queue.append(target)
    return paths


def absolute(root: Path, rel: str) -> str:
    """A project-relative path as the events show it: absolute, POSIX (strings joined:
    a save selecting 10,000 scenarios makes 20,000 of these)."""
    return f"{root.as_posix().rstrip('/')}/{rel}" if rel else root.as_posix()
