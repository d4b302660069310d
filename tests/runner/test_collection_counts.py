"""A collection's header and summary count the same scenarios (issue 13, item 10).

A collection that names a missing scenario used to say "3 scenario(s)" in its header
and "1 passed, 2 failed, 1 skipped" in its summary. Now the header counts every listed
scenario and says apart those that cannot run; the summary counts a missing one once,
as skipped, and one with errors once, as failed. Real ``unotest collection`` runs on
Chromium (scenarios that open no page).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from sites import collection_yaml, config_yaml, scenario_source, unotest_env, write_project

UNOTEST = str(Path(sys.executable).with_name("unotest"))

SCENARIOS = {
    "passes": scenario_source("passes", "  let a = 1\n"),
    "fails": scenario_source("fails", "  expect_equal(1, 2)\n"),
    "broken": scenario_source("broken", "  no_such_function(1)\n"),
}


def counts(summary: str) -> dict[str, int]:
    """``1 passed, 2 failed, 1 skipped`` → {"passed": 1, "failed": 2, "skipped": 1}."""
    return {word: int(number) for number, word in re.findall(r"(\d+) (\w+)", summary)}


def test_header_and_summary_count_missing_and_broken_scenarios_alike(
    tmp_path: Path, chromium_path: str
) -> None:
    root = write_project(
        tmp_path / "proj",
        config_yaml(None, chromium=chromium_path),
        SCENARIOS,
        collections={
            "one-missing": collection_yaml(["passes", "fails", "gone"]),
            "mixed": collection_yaml(["passes", "gone", "fails", "broken", "gone"]),
            "only-missing": collection_yaml(["gone"]),
        },
    )
    procs = {
        name: subprocess.Popen(
            [UNOTEST, "collection", name],
            cwd=root,
            env=unotest_env(NO_COLOR="1"),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("one-missing", "mixed", "only-missing")
    }
    outs: dict[str, str] = {}
    errs: dict[str, str] = {}
    for name, proc in procs.items():
        out, err = proc.communicate(timeout=180)
        assert "Traceback" not in out + err, out + err
        outs[name], errs[name] = out, err
    # Nothing ran because nothing listed exists: a typo must not pass CI.
    assert procs["only-missing"].returncode == 1, outs["only-missing"]
    assert re.search(r"^FAILED  only-missing: ", outs["only-missing"], re.M)
    assert (
        "none of the 1 scenario(s) collection 'only-missing' lists exists" in errs["only-missing"]
    )
    assert "none of the" not in errs["one-missing"]

    expected = {
        "one-missing": ("3 scenarios (1 not found)", {"passed": 1, "failed": 1, "skipped": 1}),
        "mixed": (
            "4 scenarios (1 not found, 1 with errors)",
            {"passed": 1, "failed": 2, "skipped": 1},
        ),
        "only-missing": ("1 scenario (1 not found)", {"skipped": 1}),
    }
    for name, (header, summary) in expected.items():
        lines = outs[name].splitlines()
        assert lines[0] == f"unotest collection {name}: {header}, 1 worker(s)", outs[name]
        total = re.search(r"^[A-Z]+  " + re.escape(name) + r": (.*) in [\d.]+ s$", outs[name], re.M)
        assert total is not None, outs[name]
        assert counts(total[1]) == summary, outs[name]
        listed = int(header.split()[0])
        assert sum(counts(total[1]).values()) == listed  # the header counts what the summary does
