"""runner.project_files: paths under unotest/e2e/, atomic saves, breakpoints, collections."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from sites import scenario_source, write_project

from runner.errors import UsageError
from runner.project import Project
from runner.project_files import (
    FileExists,
    FileMissing,
    TooLarge,
    project_summary,
    read_breakpoints,
    resolve_source,
    save_breakpoints,
    save_source,
    source_view,
    write_collection,
)

SMOKE = "unotest/e2e/smoke.test.js"
BODY = '  const a = 1\n  if (a) {\n    log("x")\n  }\n'


@pytest.fixture
def project(tmp_path: Path) -> Project:
    root = tmp_path / "proj"
    root.mkdir()
    write_project(
        root,
        "headless: true\n",
        {"smoke": scenario_source("smoke", BODY)},
        helpers={"auth": 'function sign_in() {\n  log("in")\n}\n'},
        collections={"all": "scenarios:\n  - smoke\n"},
    )
    return Project(root)


@pytest.mark.parametrize(
    "rel",
    [
        "unotest/e2e/../../etc/passwd",
        "unotest/e2e/_helpers/../../unotest.config.yaml",
        "unotest.config.yaml",
        "unotest/.env",
        "unotest/e2e/smoke.js",
        "unotest/e2e/_collections/x/y.yaml",
        "unotest/e2e/.hidden.test.js",
        "unotest/e2e/missing.test.js",
    ],
)
def test_paths_outside_the_sources_are_missing(project: Project, rel: str) -> None:
    with pytest.raises(FileMissing):
        resolve_source(project, rel)


@pytest.mark.parametrize("rel", ["/etc/passwd", "unotest/e2e/a\0.test.js", "a\\b", ""])
def test_malformed_paths_are_usage_errors(project: Project, rel: str) -> None:
    with pytest.raises(UsageError) as info:
        resolve_source(project, rel)
    assert not isinstance(info.value, FileMissing)


def test_a_symlink_out_of_e2e_is_missing(project: Project, tmp_path: Path) -> None:
    outside = tmp_path / "outside.test.js"
    outside.write_text("secret", encoding="utf-8")
    (project.e2e_dir / "link.test.js").symlink_to(outside)
    (project.e2e_dir / "dir").symlink_to(tmp_path, target_is_directory=True)
    with pytest.raises(FileMissing):
        resolve_source(project, "unotest/e2e/link.test.js")
    with pytest.raises(FileMissing):
        resolve_source(project, "unotest/e2e/dir/outside.test.js")
    with pytest.raises(FileMissing):
        save_source(project, "unotest/e2e/dir/new.test.js", "x")
    assert outside.read_text(encoding="utf-8") == "secret"


def test_the_view_has_text_statements_and_problems(project: Project) -> None:
    view = source_view(project, "unotest/e2e/smoke.test.js")
    assert view.text.startswith("// id-smoke")
    assert view.statements == [(5, 2), (6, 2), (7, 4)]
    assert view.problems == []
    helper = source_view(project, "unotest/e2e/_helpers/auth.js")
    assert helper.statements == [(2, 2)]


def test_saving_keeps_the_mode_and_answers_the_new_problems(project: Project) -> None:
    path = project.e2e_dir / "smoke.test.js"
    os.chmod(path, 0o600)
    view = save_source(project, "unotest/e2e/smoke.test.js", scenario_source("smoke", "  nope(\n"))
    assert (path.stat().st_mode & 0o777) == 0o600
    assert view.problems and "missing ')'" in view.problems[0].message
    assert view.statements == []
    assert [p.name for p in project.e2e_dir.iterdir() if p.name.endswith(".tmp")] == []


def test_a_source_too_large_is_neither_read_nor_written(project: Project) -> None:
    big = "// " + "x" * (5 * 1024 * 1024) + "\n"
    (project.e2e_dir / "big.test.js").write_text(big, encoding="utf-8")
    with pytest.raises(TooLarge):
        source_view(project, "unotest/e2e/big.test.js")
    with pytest.raises(TooLarge):
        save_source(project, SMOKE, big)
    assert (project.root / SMOKE).read_text(encoding="utf-8").startswith("// id-smoke")


def test_saving_creates_a_new_scenario(project: Project) -> None:
    view = save_source(project, "unotest/e2e/sub/new.test.js", scenario_source("new", BODY))
    assert view.problems == []
    assert (project.e2e_dir / "sub" / "new.test.js").is_file()


def test_breakpoints_move_to_the_nearest_statement_and_say_so(
    project: Project, protocol_validate: Callable[[str, object], None]
) -> None:
    saved = save_breakpoints(
        project,
        {
            "version": 1,
            "scenarios": {
                "smoke": [{"line": 5, "col": 2}, {"line": 7, "col": 0}],
                "_helpers/auth": [{"line": 2, "col": 2}],
                "gone": [{"line": 1, "col": 0}],
            },
        },
    )
    assert saved.file["scenarios"]["smoke"] == [{"line": 5, "col": 2}, {"line": 7, "col": 4}]
    assert saved.file["scenarios"]["gone"] == [{"line": 1, "col": 0}]
    assert any("7:0 is no statement start; moved to 7:4" in n for n in saved.notes)
    assert any(n.startswith("gone:") for n in saved.notes)
    on_disk = json.loads((project.root / "unotest/.debugger.json").read_text(encoding="utf-8"))
    protocol_validate("BreakpointsFile", on_disk)
    assert read_breakpoints(project) == on_disk == saved.file


@pytest.mark.parametrize(
    "data",
    [[], {"version": 2, "scenarios": {}}, {"version": 1, "scenarios": {"a": [{"line": 0}]}}],
)
def test_malformed_breakpoints_are_refused(project: Project, data: object) -> None:
    with pytest.raises(UsageError):
        save_breakpoints(project, data)
    assert not (project.root / "unotest/.debugger.json").exists()


def test_collections_are_created_once_and_replaced(project: Project) -> None:
    meta = write_collection(project, "new", "Two", ["smoke", "orphan"], create=True)
    assert meta == {
        "name": "new",
        "path": "unotest/e2e/_collections/new.yaml",
        "description": "Two",
        "scenarios": ["smoke", "orphan"],
    }
    path = project.collections_dir / "new.yaml"
    assert yaml.safe_load(path.read_text(encoding="utf-8")) == {
        "description": "Two",
        "scenarios": ["smoke", "orphan"],
    }
    with pytest.raises(FileExists):
        write_collection(project, "new", None, [], create=True)
    write_collection(project, "new", None, ["smoke"], create=False)
    assert yaml.safe_load(path.read_text(encoding="utf-8")) == {"scenarios": ["smoke"]}


@pytest.mark.parametrize("name", ["", "..", ".x", "a/b", "a\0", 3, " a"])
def test_bad_collection_names_are_refused(project: Project, name: object) -> None:
    with pytest.raises(UsageError):
        write_collection(project, name, None, [], create=True)


def test_project_summary_names_version_adapter_and_config(project: Project) -> None:
    summary = project_summary(project)
    assert summary["protocolVersion"] == "0.5.0"
    assert summary["adapter"] == "@unotest/web"
    assert summary["name"] == "proj"
    config = summary["config"]
    assert isinstance(config, dict) and config["headless"] is True
    (project.root / "unotest.config.yaml").write_text("timeout: nope\n", encoding="utf-8")
    broken = project_summary(project)
    assert broken["config"] is None and isinstance(broken["configError"], str)
