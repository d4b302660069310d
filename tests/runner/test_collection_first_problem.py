"""A collection's scenario that does not load says where its first problem is.

``unotest collection`` never runs a listed scenario with a parse or check error; its
record used to say only ``SyntaxError: the scenario has errors ('unotest check')``, so a
CI log or a JSON report told nobody which line to open. Its record now carries the first
problem's ``file:line:col: message`` (a helper file's first, since those stop every
scenario): in the summary line and in the JSON report's ``test_end``. Driven through
the CLI as CI runs it; no scenario here starts a browser.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from sites import collection_yaml, config_yaml, scenario_source, unotest_env, write_project

BROKEN_SYNTAX = '  goto("/index.html"\n'  # the call never closes: line 6, col 0
UNKNOWN_NAME = '  goto("/index.html")\n  no_such_function(1)\n'  # line 6, col 2


def _collection(project: Path, name: str, report: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "unotest", "collection", name, "--reporter", f"list,json={report}"],
        cwd=project,
        env=unotest_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )


def _ends(report: Path) -> dict[str, dict[str, Any]]:
    data = json.loads(report.read_text(encoding="utf-8"))
    return {e["data"]["name"]: e["data"] for e in data if e["type"] == "test_end"}


def test_a_broken_scenario_record_names_its_first_problem(tmp_path: Path) -> None:
    project = write_project(
        tmp_path / "proj",
        config_yaml("http://127.0.0.1:9/"),
        {
            "syntax": scenario_source("syntax", BROKEN_SYNTAX, fn="test_syntax"),
            "unknown": scenario_source("unknown", UNKNOWN_NAME, fn="test_unknown"),
        },
        collections={"broken": collection_yaml(["syntax", "unknown"])},
    )
    report = tmp_path / "report.json"
    done = _collection(project, "broken", report)
    said = done.stdout + done.stderr
    assert done.returncode == 1, said
    assert "Traceback" not in said, said

    syntax_at = "unotest/e2e/syntax.test.js:6:0: SyntaxError: "
    unknown_at = "unotest/e2e/unknown.test.js:6:2: "
    summary = [line for line in done.stdout.splitlines() if line.strip().startswith("✗")]
    assert len(summary) == 2, done.stdout
    assert summary[0].startswith(
        "  ✗ syntax: SyntaxError: the scenario has errors ('unotest check'); the first: "
        + syntax_at
    ), summary
    assert f"; the first: {unknown_at}" in summary[1], summary
    assert "no_such_function" in summary[1], summary

    ends = _ends(report)
    assert ends["syntax"]["status"] == ends["unknown"]["status"] == "failed"
    assert syntax_at in ends["syntax"]["error_message"], ends
    assert unknown_at in ends["unknown"]["error_message"], ends


def test_a_broken_helper_is_the_first_problem_of_every_scenario(tmp_path: Path) -> None:
    """A helper file that does not parse stops every scenario: its problem is each
    one's first, though the scenario itself is fine."""
    project = write_project(
        tmp_path / "proj",
        config_yaml("http://127.0.0.1:9/"),
        {"fine": scenario_source("fine", '  goto("/index.html")\n', fn="test_fine")},
        helpers={"shared": "function helper( {\n}\n"},
        collections={"all": collection_yaml(["fine"])},
    )
    report = tmp_path / "report.json"
    done = _collection(project, "all", report)
    assert done.returncode == 1, done.stdout + done.stderr
    message = _ends(report)["fine"]["error_message"]
    assert "; the first: unotest/e2e/_helpers/shared.js:1:" in message, message
