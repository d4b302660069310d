"""A helper file that no longer parses: its own syntax error, with its ``file:line:col``,
comes first wherever problems are listed (``unotest e2e``, ``collection``, ``check``,
MCP ``check``), before the scenario's resulting "'note' is not a function".

Before, ``e2e`` and ``collection`` listed only the problems of the helpers that had
loaded, so the one line that named the cause was missing. The CLI runs as a user runs
it (``python -m unotest`` in a project written by the test); nothing reaches a browser:
the run is refused first.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from sites import collection_yaml, scenario_source, unotest_env, write_project

from runner.project.index import Project, ProjectIndex

E2E = "unotest/e2e"
BROKEN = f"{E2E}/_helpers/notes.js"
HELPER_ERROR = f"{BROKEN}:3:0: SyntaxError: missing ')'"
CALLER = f"{E2E}/01-calls-note.test.js"  # sorts before _helpers/: the order is by cause


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(
        tmp_path / "proj",
        "baseURL: http://127.0.0.1:9\n",
        {
            "01-calls-note": scenario_source("calls-note", "  note(1)\n  other(2)\n"),
            "plain": scenario_source("plain", "  other(2)\n"),
        },
        files={
            BROKEN: 'function note(x) {\n  log("note " + x\n}\n',
            f"{E2E}/_helpers/other.js": "function other(x) {\n  return x\n}\n",
            f"{E2E}/_collections/both.yaml": collection_yaml(["01-calls-note", "plain"]),
        },
    )


def cli(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "unotest", *args],
        cwd=project,
        env=unotest_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    assert "internal error" not in proc.stderr, proc.stderr
    return proc


def located(text: str) -> list[str]:
    """The ``file:line:col: message`` lines of an output (not the source and caret lines)."""
    return [line for line in text.splitlines() if line.startswith(f"{E2E}/")]


def test_e2e_names_the_helpers_syntax_error_first(project: Path) -> None:
    proc = cli(project, "e2e", "01-calls-note")
    assert proc.returncode == 2, proc.stderr
    problems = located(proc.stderr)
    assert problems[0].startswith(HELPER_ERROR), proc.stderr
    assert problems[1].startswith(f"{CALLER}:5:2: ReferenceError: 'note' is not a function")
    assert len(problems) == 2
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("unotest: scenario '01-calls-note' cannot run: fix the 2 problem(s)")
    assert not (project / "unotest" / ".runs").exists()  # refused before any run


def test_e2e_of_a_scenario_not_calling_it_is_refused_by_it_too(project: Path) -> None:
    """Every run loads every helper file: the broken one stops it, and is named."""
    proc = cli(project, "e2e", "plain")
    assert proc.returncode == 2, proc.stderr
    assert [p.split(": SyntaxError")[0] for p in located(proc.stderr)] == [f"{BROKEN}:3:0"]
    assert "fix the 1 problem(s)" in proc.stderr


def test_collection_names_the_helpers_syntax_error_once_and_first(project: Path) -> None:
    proc = cli(project, "collection", "both")
    assert proc.returncode == 1, proc.stdout + proc.stderr  # its scenarios fail: not run
    problems = located(proc.stderr)
    assert problems[0].startswith(HELPER_ERROR), proc.stderr
    assert sum(p.startswith(BROKEN) for p in problems) == 1  # once, not per scenario
    # (its "did you mean" names the closest of every helper and built-in: not pinned)
    assert len(problems) == 2, proc.stderr
    assert problems[1].startswith(
        f"{CALLER}:5:2: ReferenceError: 'note' is not a function, helper or built-in"
    ), proc.stderr
    assert "2 scenarios (2 with errors)" in proc.stdout


def test_check_lists_the_helpers_syntax_error_first(project: Path) -> None:
    proc = cli(project, "check")
    assert proc.returncode == 1, proc.stdout
    problems = located(proc.stdout)
    assert problems[0].startswith(HELPER_ERROR), proc.stdout
    assert problems[1].startswith(f"{CALLER}:5:2: ReferenceError"), proc.stdout
    again = cli(project, "check", "--json")  # from the index cache now: the same order
    errors = json.loads(again.stdout)["errors"]
    assert [(e["path"], e["line"], e["col"]) for e in errors] == [(BROKEN, 3, 0), (CALLER, 5, 2)]


def test_the_index_says_which_helper_files_stop_a_scenario(project: Path) -> None:
    index = ProjectIndex.load(Project(project))
    assert [h.file for h in index.helpers] == [f"{E2E}/_helpers/other.js"]  # loaded ones
    assert sorted(index.helper_files) == [BROKEN, f"{E2E}/_helpers/other.js"]
    assert [(d.file, d.line) for d in index.problems_of(CALLER)] == [(BROKEN, 3), (CALLER, 5)]
    assert [(d.file, d.line) for d in index.problems_of(f"{E2E}/plain.test.js")] == [(BROKEN, 3)]


def test_mcp_check_of_the_scenario_names_the_helper_first(project: Path) -> None:
    from unotest.mcp.server import build_server

    server = build_server(project)
    result = anyio.run(server.call_tool, "check", {"name": "01-calls-note"})
    answer = json.loads(result.content[0].text)
    assert answer["ok"] is False
    assert [(e["file"], e["line"], e["col"]) for e in answer["errors"]] == [
        (BROKEN, 3, 0),
        (CALLER, 5, 2),
    ]
