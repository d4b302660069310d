"""Test projects: scenario sources, ``unotest.config.yaml``, a project tree in ``tmp_path``,
and the environment to run ``unotest`` in.

Imported as ``from sites import ...`` (``tests/`` is on ``sys.path``, see conftest.py).
The pages a project points at are served by ``net.serve_directory`` (``static_site`` in
tests/runner/conftest.py serves ``tmp_path``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

E2E = "unotest/e2e"


def scenario_source(
    ident: str,
    body: str,
    *,
    title: str | None = None,
    color: str = "#4f46e5",
    fn: str = "test_it",
) -> str:
    """A scenario file: the three header lines (``// id-<ident>``, the title, the colour)
    and one function whose body is ``body`` (which ends with its own newline)."""
    heading = f"Scenario {ident}" if title is None else title
    return f"// id-{ident}\n// {heading}\n// {color}\nfunction {fn}() {{\n{body}}}\n"


def config_yaml(
    base_url: str | None,
    *,
    timeout: Mapping[str, int] | None = None,
    chromium: str | None = None,
    trace: str | None = "off",
    extra: str = "",
) -> str:
    """``unotest.config.yaml`` for a headless run against ``base_url`` (omitted when None),
    with these timeouts (ms), this browser executable and this trace mode; ``extra`` is
    appended as is (a ``webServer:`` block, say)."""
    lines = [] if base_url is None else [f"baseURL: {base_url}"]
    lines.append("headless: true")
    if chromium is not None:
        lines.append(f"executablePath: {chromium}")
    if trace is not None:
        lines.append(f"trace: {trace}")
    if timeout:
        lines.append("timeout: {" + ", ".join(f"{k}: {v}" for k, v in timeout.items()) + "}")
    return "\n".join(lines) + "\n" + extra


def write_files(root: Path, files: Mapping[str, str | bytes]) -> Path:
    """Create ``files`` (relative path -> text or bytes) under ``root``; returns ``root``."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


def write_project(
    root: Path,
    config: str | None,
    scenarios: Mapping[str, str] = {},
    *,
    helpers: Mapping[str, str] = {},
    collections: Mapping[str, str] = {},
    files: Mapping[str, str | bytes] = {},
) -> Path:
    """A project under ``root``: ``unotest.config.yaml`` (unless None), ``unotest/e2e/``
    with ``<name>.test.js`` per scenario (a name may hold folders), ``_helpers/<name>.js``
    per helper, ``_collections/<name>.yaml`` per collection, then ``files`` (relative
    path -> content) as they are. Returns ``root``."""
    (root / E2E).mkdir(parents=True)
    tree: dict[str, str | bytes] = {}
    if config is not None:
        tree["unotest.config.yaml"] = config
    tree.update({f"{E2E}/{name}.test.js": source for name, source in scenarios.items()})
    tree.update({f"{E2E}/_helpers/{name}.js": source for name, source in helpers.items()})
    tree.update({f"{E2E}/_collections/{name}.yaml": text for name, text in collections.items()})
    tree.update(files)
    return write_files(root, tree)


def collection_yaml(scenarios: Iterable[str]) -> str:
    """A collection file that lists ``scenarios`` in order."""
    return "scenarios:\n" + "".join(f"  - {name}\n" for name in scenarios)


def unotest_env(drop: Iterable[str] = (), **extra: str) -> dict[str, str]:
    """This process's environment for a ``unotest`` child: no ``UNOTEST_*`` setting and
    none of ``drop``, ``PYTHONSAFEPATH=1``, then ``extra``.

    ``PYTHONSAFEPATH``: ``python -m unotest`` puts the working directory first on
    sys.path, and a project root holds a ``unotest/`` folder: with the editable install
    (a meta-path finder that comes after the path finder) ``unotest`` would then import
    as a namespace package from the *project*.
    """
    dropped = set(drop)
    env = {k: v for k, v in os.environ.items() if not k.startswith("UNOTEST_") and k not in dropped}
    env["PYTHONSAFEPATH"] = "1"
    env.update(extra)
    return env


def e2e_json(project: Path, name: str, timeout: float = 150) -> tuple[int, dict[str, Any], str]:
    """``unotest e2e NAME --json`` in ``project``: its exit code, its JSON result, and
    everything it printed (for the assertion messages)."""
    done = subprocess.run(
        [sys.executable, "-m", "unotest", "e2e", name, "--json"],
        cwd=project,
        env=unotest_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    try:
        result: dict[str, Any] = json.loads(done.stdout)
    except json.JSONDecodeError:
        raise AssertionError(f"{name}: no JSON\n{done.stdout}\n{done.stderr}") from None
    return done.returncode, result, done.stdout + done.stderr


def caught(*calls: str) -> str:
    """A scenario body trying each call in turn, logging ``@@ name: message`` of what it
    threw (``@@ no error`` when it threw nothing)."""
    return "".join(
        f'  try {{ {call}; log("@@ no error") }} '
        f'catch (e) {{ log("@@ " + e.name + ": " + e.message) }}\n'
        for call in calls
    )


def check_errors(project: Path) -> list[dict[str, Any]]:
    """``unotest check --json`` in ``project``: its problems (``errors``), never a
    traceback."""
    done = subprocess.run(
        [sys.executable, "-m", "unotest", "check", "--json"],
        cwd=project,
        env=unotest_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "Traceback" not in done.stderr, done.stderr
    errors: list[dict[str, Any]] = json.loads(done.stdout)["errors"]
    return errors
