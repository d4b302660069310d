"""``--trace on|off|on-failure`` on ``unotest e2e`` and ``unotest collection`` (issue 32,
deliverable 4): the config's ``trace`` for that run only. A collection's workers read
the config themselves and learn it as ``UNOTEST_TRACE``, which ``load_config`` takes
over the file's ``trace`` (checked as the key is).

The runs are real (``python -m unotest`` in real Chromium against a page served on
127.0.0.1); a trace is a ``trace.zip`` in the run's directory.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from flaky_site import find_chromium
from net import serve_directory
from sites import collection_yaml, config_yaml, scenario_source, unotest_env, write_project

from runner.errors import ConfigError
from runner.project.config import TRACE_ENV, load_config

RUN_TIMEOUT_S = 120


def _unotest(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "unotest", *args],
        cwd=root,
        env=unotest_env(),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def _traced(root: Path) -> dict[str, str]:
    """Each run directory holding a trace.zip, by its run's kind and ref."""
    found = {}
    for trace in sorted((root / "unotest" / ".runs").glob("*/trace.zip")):
        manifest = json.loads((trace.parent / "manifest.json").read_text(encoding="utf-8"))
        found[trace.parent.name] = f"{manifest['kind']} {manifest.get('ref')}"
    return found


def test_trace_on_the_command_line_wins_over_the_config_for_that_run(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<!doctype html><title>t</title><h1>Hi</h1>")
    with serve_directory(site) as url:
        config = config_yaml(url, chromium=find_chromium(), trace="off")
        body = '  goto("/")\n  expect_text(css("h1"), "Hi")\n'
        root = write_project(
            tmp_path / "proj",
            config,
            {"smoke": scenario_source("smoke", body)},
            collections={"all": collection_yaml(["smoke"])},
        )
        _unotest(root, "e2e", "smoke")
        assert _traced(root) == {}  # the config's trace: off
        _unotest(root, "e2e", "smoke", "--trace", "on")
        assert list(_traced(root).values()) == ["scenario smoke"]
        _unotest(root, "collection", "all", "--trace", "on")
        # The collection's worker traced its scenario's run too.
        assert sorted(_traced(root).values()) == ["scenario smoke", "scenario smoke"]


def test_unotest_trace_replaces_the_config_s_trace_and_is_checked(tmp_path: Path) -> None:
    (tmp_path / "unotest.config.yaml").write_text("trace: off\n")
    assert load_config(tmp_path, {}).trace == "off"
    assert load_config(tmp_path, {TRACE_ENV: "on-failure"}).trace == "on-failure"
    assert load_config(tmp_path, {TRACE_ENV: " "}).trace == "off"  # unset, in effect
    with pytest.raises(ConfigError, match="UNOTEST_TRACE"):
        load_config(tmp_path, {TRACE_ENV: "always"})
