"""The layers point one way, ``dsl`` ← ``runner`` ← ``unotest``, with no exceptions:
``dsl`` knows nothing of the browser or the engine, ``runner`` nothing of the front ends,
and no package has an import cycle between its own modules.

``unotest check`` must work without Playwright, and the language must be testable
(and reusable) on its own; an import added for convenience would quietly break both.
"""

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

DSL_MODULES = [
    "dsl",
    "dsl.parser",
    "dsl.interpreter",
    "dsl.builtins",
    "dsl.checker",
    "dsl.scenario",
]
DSL_FORBIDDEN = ("playwright", "runner", "unotest")
RUNNER_FORBIDDEN = ("unotest",)


def _top_level_hits(names: list[str], forbidden: tuple[str, ...]) -> list[str]:
    return sorted(n for n in names if any(n == f or n.startswith(f + ".") for f in forbidden))


def test_importing_dsl_loads_no_browser_runner_or_cli() -> None:
    code = (
        "import json, sys\n"
        f"import {', '.join(DSL_MODULES)}\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    loaded = json.loads(proc.stdout)
    assert "dsl.scenario" in loaded
    assert _top_level_hits(loaded, DSL_FORBIDDEN) == []


def test_a_collection_orchestrator_loads_no_parser() -> None:
    """The orchestrator reads the project through the index cache and never parses (its
    workers parse what they run): importing the parser, the interpreter and Lark would
    take CPU from the workers starting beside it."""
    code = (
        "import json, sys\n"
        "import unotest.cli, unotest.commands.collection, runner.collection.orchestrator\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    loaded = json.loads(proc.stdout)
    assert "runner.project.index_cache" in loaded
    heavy = (
        "lark",
        "dsl.parser",
        "dsl.interpreter",
        "dsl.ast",
        "dsl.checker",
        "runner.project.index",
    )
    assert _top_level_hits(loaded, heavy) == []


def _imports(path: Path, package: str) -> list[tuple[int, str]]:
    """Every module ``path`` imports (relative imports resolved), with its line.

    ``importlib.import_module("x")`` and ``__import__("x")`` with a literal count too.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    is_init = path.name == "__init__.py"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                # in a package's __init__, level 1 is the package itself
                keep = len(parts) - node.level + (1 if is_init else 0)
                base = ".".join(parts[: max(keep, 0)])
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            found.append((node.lineno, module))
            # `from unotest import cli` imports unotest.cli
            found.extend((node.lineno, f"{module}.{alias.name}") for alias in node.names)
        elif isinstance(node, ast.Call):
            func = node.func
            name = (
                func.attr
                if isinstance(func, ast.Attribute)
                else func.id
                if isinstance(func, ast.Name)
                else ""
            )
            if (
                name in ("import_module", "__import__")
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                found.append((node.lineno, node.args[0].value))
    return found


def _sources(folder: str) -> list[Path]:
    files = sorted((REPO / folder).rglob("*.py"))
    assert files, f"no Python files under {folder}/"
    return files


def _package_of(path: Path) -> str:
    rel = path.relative_to(REPO).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@pytest.mark.parametrize("path", _sources("dsl"), ids=lambda p: p.relative_to(REPO).as_posix())
def test_dsl_sources_do_not_import_playwright_runner_or_unotest(path: Path) -> None:
    bad = [
        f"{path.relative_to(REPO)}:{line}: imports {module}"
        for line, module in _imports(path, _package_of(path))
        if _top_level_hits([module], DSL_FORBIDDEN)
    ]
    assert bad == []


@pytest.mark.parametrize("path", _sources("runner"), ids=lambda p: p.relative_to(REPO).as_posix())
def test_runner_sources_do_not_import_the_front_ends(path: Path) -> None:
    bad = [
        f"{path.relative_to(REPO)}:{line}: imports {module}"
        for line, module in _imports(path, _package_of(path))
        if _top_level_hits([module], RUNNER_FORBIDDEN)
    ]
    assert bad == []


def _module_graph(package: str) -> dict[str, set[str]]:
    """Module → the modules of the same package it imports (any depth in the file)."""
    modules = {_package_of(path): path for path in _sources(package)}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets: set[str] = set()
        for _line, module in _imports(path, name):
            # `from runner import protocol` is judged by its `runner.protocol` entry
            if module in modules and module != name and module != package:
                targets.add(module)
        graph[name] = targets
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component larger than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


# What each part of runner/ may import, as Playwright's DEPS.list files say it: a
# sub-package imports the foundations, itself, and the sub-packages named in its row; a
# foundation (a module at runner/'s top) imports only the foundations in its row. A new
# sub-package or foundation needs a row; an import the table does not allow fails.
RUNNER_FOUNDATIONS: dict[str, set[str]] = {
    "protocol": set(),
    "text": set(),
    "errors": set(),
    "processes": set(),
    "events": {"protocol"},
    "ws_messages": {"protocol"},
    "files": {"errors"},
}
RUNNER_TABLE: dict[str, set[str]] = {
    "project": set(),
    "store": {"project"},
    "browser": {"project", "store"},
    "builtins": {"project", "browser"},
    "webserver": {"project", "store", "browser"},
    "debug": {"project", "store", "browser", "webserver"},
    "run": {"project", "store", "browser", "builtins", "webserver", "debug"},
    "workers": {"project", "store", "browser", "run"},
    "collection": {"project", "store", "webserver", "run", "workers"},
    "watch": {"project", "store", "webserver", "run", "workers"},
    "launch": {"project", "store"},
}


def _part_of(module: str) -> str | None:
    """``runner.debug.controller`` → ``debug``; ``runner.files`` → ``files``."""
    parts = module.split(".")
    return parts[1] if len(parts) >= 2 and parts[0] == "runner" else None


def _runner_part_edges() -> list[tuple[str, str, str]]:
    """(part, imported part, where) for every import between two parts of runner/."""
    found = []
    for path in _sources("runner"):
        name = _package_of(path)
        own = _part_of(name)
        if own is None:
            continue
        for line, module in _imports(path, name):
            other = _part_of(module)
            if other is not None and other != own:
                found.append((own, other, f"{path.relative_to(REPO)}:{line}: imports {module}"))
    return found


def test_every_part_of_runner_has_a_row_in_the_table() -> None:
    folders = {p.name for p in (REPO / "runner").iterdir() if (p / "__init__.py").is_file()}
    tops = {p.stem for p in (REPO / "runner").glob("*.py") if p.stem != "__init__"}
    assert folders == set(RUNNER_TABLE)
    assert tops == set(RUNNER_FOUNDATIONS)
    assert len(tops) <= 8
    for folder in folders:
        modules = [p for p in (REPO / "runner" / folder).glob("*.py") if p.stem != "__init__"]
        assert len(modules) <= 15, f"runner/{folder}/ holds {len(modules)} modules"


def test_runner_imports_follow_the_table() -> None:
    bad = []
    for own, other, where in _runner_part_edges():
        if own in RUNNER_FOUNDATIONS:
            allowed = RUNNER_FOUNDATIONS[own]
        else:
            allowed = RUNNER_TABLE[own] | set(RUNNER_FOUNDATIONS)
        if other not in allowed:
            bad.append(f"{where} ({own} may not import {other})")
    assert bad == []


def test_the_table_has_no_circle_and_foundations_stay_below() -> None:
    graph = {part: set(allowed) for part, allowed in RUNNER_TABLE.items()}
    graph.update({part: set(allowed) for part, allowed in RUNNER_FOUNDATIONS.items()})
    assert _cycles(graph) == []
    assert all(allowed <= set(RUNNER_FOUNDATIONS) for allowed in RUNNER_FOUNDATIONS.values())


def test_a_sub_package_is_a_folder_not_a_facade() -> None:
    """``runner/<part>/__init__.py`` holds a docstring only: an import there would load
    the part's modules for whoever imports one of them (the parser for ``check``)."""
    for init in (REPO / "runner").glob("*/__init__.py"):
        tree = ast.parse(init.read_text(encoding="utf-8"))
        assert [type(node).__name__ for node in tree.body] == ["Expr"], init


def test_the_table_check_finds_a_forbidden_import(tmp_path: Path) -> None:
    """The scan reads a sub-package's imports as the table test needs them."""
    src = tmp_path / "mod.py"
    src.write_text("from runner.run.session import ScenarioRun\nfrom runner import protocol\n")
    modules = [m for _line, m in _imports(src, "runner.store.mod")]
    parts = {_part_of(m) for m in modules} - {None, "store"}
    assert parts == {"run", "protocol"}
    assert "run" not in RUNNER_TABLE["store"]


@pytest.mark.parametrize("package", ["dsl", "runner", "unotest"])
def test_no_import_cycles_between_modules_of_a_package(package: str) -> None:
    assert _cycles(_module_graph(package)) == []


def test_the_cycle_finder_finds_cycles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_the_scanner_sees_what_it_should(tmp_path: Path) -> None:
    """The static scan itself: relative, aliased and dynamic imports are all resolved."""
    pkg = tmp_path / "dsl"
    pkg.mkdir()
    src = pkg / "mod.py"
    src.write_text(
        "import os\n"
        "from . import ast\n"
        "from .values import Value\n"
        "from unotest import cli\n"
        "import playwright.sync_api as pw\n"
        "import importlib\n"
        "importlib.import_module('runner.browser.launch')\n",
        encoding="utf-8",
    )
    modules = [m for _line, m in _imports(src, "dsl.mod")]
    assert "dsl.ast" in modules
    assert "dsl.values" in modules
    assert "unotest.cli" in modules
    assert "playwright.sync_api" in modules
    assert "runner.browser.launch" in modules
    assert _top_level_hits(modules, DSL_FORBIDDEN) == [
        "playwright.sync_api",
        "runner.browser.launch",
        "unotest",
        "unotest.cli",
    ]


def test_the_architecture_map_names_every_module() -> None:
    """docs/architecture.md is the newcomer's map: a module it does not name is a hole.
    A module in a sub-package is named with its folder (``debug/controller.py``), as
    two folders may hold modules of one name."""
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    unnamed = []
    for package in ("dsl", "runner", "unotest"):
        for path in _sources(package):
            if path.stem in ("__init__", "__main__"):
                continue
            inside = path.relative_to(REPO / package).with_suffix("").as_posix()
            names = [f"`{inside}.py`"] if "/" in inside else [f"`{inside}.py`", f"`{inside}`"]
            if not any(name in text for name in names):
                unnamed.append(path.relative_to(REPO).as_posix())
    assert unnamed == []
