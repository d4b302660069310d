"""What ``unotest collection`` writes when its output meets the real world: a reader
that leaves early (``| head``), messages with characters XML cannot hold."""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
import xml.dom.minidom
import xml.etree.ElementTree as ET
from pathlib import Path

from cli_helpers import write
from sites import scenario_source, unotest_env

from runner.collection.orchestrator import CollectionResult, ScenarioOutcome
from unotest.commands.collection import _header, _Plan, _summary, junit_xml

E2E = "unotest/e2e"


def test_junit_holds_a_message_with_control_characters() -> None:
    """A thrown ANSI colour (ESC), a C0 control, U+FFFE: each written as its escape;
    the file used to be malformed XML that CI could not read at all."""
    error = {"error": "colour \x1b[31mred\x1b[0m, \x01 and \ufffe", "errorName": "Error"}
    outcome = ScenarioOutcome("x/ctrl", "failed", 0, "r-1", "unotest/.runs/r-1", 5, 1, error)
    result = CollectionResult("c-1", "unotest/.runs/c-1", "c", "failed", 9, [outcome])
    text = junit_xml(result, 0.0)
    xml.dom.minidom.parseString(text)  # well-formed
    failure = ET.fromstring(text).find("./testsuite/testcase/failure")
    assert failure is not None
    assert failure.get("message") == "colour \\x1b[31mred\\x1b[0m, \\x01 and \\ufffe"
    assert (failure.text or "").startswith("colour \\x1b[31mred")


def test_the_list_summary_shows_terminal_escapes_and_never_sends_them() -> None:
    """Page or test text with an ANSI sequence could recolour or move the user's cursor;
    the summary writes it as its escape, as JUnit does."""
    error = {"error": "bad \x1b[31mred\x1b[0m", "errorName": "Error", "step": "x\x1b[2J"}
    outcome = ScenarioOutcome("x/ctrl", "failed", 0, "r-1", "unotest/.runs/r-1", 5, 1, error)
    result = CollectionResult("c-1", "unotest/.runs/c-1", "c", "failed", 9, [outcome])
    out = io.StringIO()
    _summary(result, out)
    assert "\x1b" not in out.getvalue()
    assert "  ✗ x/ctrl: Error: bad \\x1b[31mred\\x1b[0m" in out.getvalue()
    assert "      step: x\\x1b[2J" in out.getvalue()


def test_a_reader_that_leaves_early_does_not_change_the_outcome_or_the_reports(
    tmp_path: Path,
) -> None:
    """``unotest collection c | head -1``: the pipe closed after the first line used to
    stop the collection with exit 0 (a failed collection reported green) and no report.
    Here every listed scenario is broken, so no browser is needed: exit 1, JUnit
    written, nothing on stderr about a pipe."""
    project = write(
        tmp_path / "p",
        {
            f"{E2E}/ok.test.js": scenario_source("ok", '  log("hi")\n'),
            f"{E2E}/bad.test.js": scenario_source("bad", '  log("unclosed\n'),
            f"{E2E}/_collections/c.yaml": "scenarios:\n  - bad\n",
        },
    )
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before anything is written
    done = subprocess.run(
        [sys.executable, "-m", "unotest", "collection", "c", "--reporter", "list,junit=out/c.xml"],
        cwd=project,
        env=unotest_env(),
        stdin=subprocess.DEVNULL,
        stdout=write_end,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
    )
    os.close(write_end)
    assert done.returncode == 1, done.stderr
    assert "BrokenPipe" not in done.stderr and "Traceback" not in done.stderr
    suite = ET.parse(project / "out" / "c.xml").getroot().find("./testsuite")
    assert suite is not None and suite.get("failures") == "1"


def test_the_header_says_how_many_processes_the_workers_share() -> None:
    """``--lanes`` workers to a process (2 by default), one each with ``wsEndpoint``:
    the header says so whenever workers share a process, so that a `ps` showing fewer
    worker processes than ``--workers`` is not taken for a failure."""
    plan = _Plan(names=[f"s{n}" for n in range(5)], skipped=[], broken=[], none_found=False)

    def header(workers: int, lanes: int | None, remote: bool = False) -> str:
        out = io.StringIO()
        args = argparse.Namespace(name="nightly", workers=workers, lanes=lanes, shard=None)
        _header(args, plan, out, remote=remote)
        return out.getvalue().strip()

    assert header(2, None) == "unotest collection nightly: 5 scenarios, 2 worker(s) in 1 process"
    assert header(3, None) == "unotest collection nightly: 5 scenarios, 3 worker(s) in 2 processes"
    assert header(4, 4) == "unotest collection nightly: 5 scenarios, 4 worker(s) in 1 process"
    assert header(2, 1) == "unotest collection nightly: 5 scenarios, 2 worker(s)"
    assert header(2, None, remote=True) == "unotest collection nightly: 5 scenarios, 2 worker(s)"
    assert header(1, None) == "unotest collection nightly: 5 scenarios, 1 worker(s)"
    assert header(9, None) == "unotest collection nightly: 5 scenarios, 5 worker(s) in 3 processes"
