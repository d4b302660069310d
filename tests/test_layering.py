"""The layers stay apart: ``dsl`` knows nothing of the browser or the CLI, ``runner``
reaches into ``unotest`` only for the protocol, project discovery and errors.

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
RUNNER_ALLOWED_UNOTEST = ("unotest.protocol", "unotest.project", "unotest.errors")


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
def test_runner_sources_use_only_protocol_project_errors_of_unotest(path: Path) -> None:
    bad = []
    for line, module in _imports(path, _package_of(path)):
        if module == "unotest":
            continue  # `from unotest import protocol` is judged by its `unotest.protocol` entry
        if module.startswith("unotest.") and not any(
            module == allowed or module.startswith(allowed + ".")
            for allowed in RUNNER_ALLOWED_UNOTEST
        ):
            bad.append(f"{path.relative_to(REPO)}:{line}: imports {module}")
    assert bad == []


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
        "importlib.import_module('runner.browser')\n",
        encoding="utf-8",
    )
    modules = [m for _line, m in _imports(src, "dsl.mod")]
    assert "dsl.ast" in modules
    assert "dsl.values" in modules
    assert "unotest.cli" in modules
    assert "playwright.sync_api" in modules
    assert "runner.browser" in modules
    assert _top_level_hits(modules, DSL_FORBIDDEN) == [
        "playwright.sync_api",
        "runner.browser",
        "unotest",
        "unotest.cli",
    ]
