"""runner.project.editing: paths under unotest/e2e/, atomic saves, breakpoints, collections."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from sites import scenario_source, write_project

from runner.errors import UsageError
from runner.project.breakpoints_file import read_breakpoints, save_breakpoints
from runner.project.editing import (
    FileConflict,
    FileExists,
    FileMissing,
    TooLarge,
    project_summary,
    resolve_source,
    save_source,
    source_view,
    version_of,
    write_collection,
)
from runner.project.index import Project

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


def test_a_version_is_the_hash_of_the_bytes_on_disk(project: Project) -> None:
    path = project.root / SMOKE
    view = source_view(project, SMOKE)
    assert view.version == hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    saved = save_source(project, SMOKE, view.text + "// more\n")
    assert saved.version == version_of(path.read_bytes()) != view.version
    assert source_view(project, SMOKE).version == saved.version


def test_a_save_from_an_old_version_is_refused_with_what_is_on_disk(project: Project) -> None:
    path = project.root / SMOKE
    opened = source_view(project, SMOKE)
    meanwhile = opened.text.replace("const a = 1", "const a = 2")
    path.write_text(meanwhile, encoding="utf-8")  # an editor saves meanwhile
    with pytest.raises(FileConflict) as caught:
        save_source(project, SMOKE, opened.text + "// mine\n", base_version=opened.version)
    assert str(caught.value) == f"{SMOKE} changed on disk since you opened it"
    assert caught.value.text == meanwhile
    assert caught.value.version == version_of(meanwhile.encode())
    assert path.read_text(encoding="utf-8") == meanwhile
    # Saved again from the version on disk now: written.
    again = save_source(project, SMOKE, "// mine\n", base_version=caught.value.version)
    assert path.read_text(encoding="utf-8") == "// mine\n"
    assert again.version == version_of(b"// mine\n")


def test_a_null_base_version_means_the_file_must_not_exist_yet(project: Project) -> None:
    new = "unotest/e2e/fresh.test.js"
    created = save_source(project, new, scenario_source("fresh", BODY), base_version=None)
    assert created.problems == []
    with pytest.raises(FileConflict, match="exists already") as caught:
        save_source(project, new, "// other\n", base_version=None)
    assert caught.value.version == created.version
    assert (project.root / new).read_text(encoding="utf-8") == created.text


def test_a_file_deleted_since_it_was_opened_is_a_conflict(project: Project) -> None:
    opened = source_view(project, SMOKE)
    (project.root / SMOKE).unlink()
    with pytest.raises(FileConflict, match="was deleted since you opened it") as caught:
        save_source(project, SMOKE, opened.text, base_version=opened.version)
    assert (caught.value.text, caught.value.version) == (None, None)
    assert not (project.root / SMOKE).exists()


def test_saves_from_one_version_in_many_threads_exactly_one_wins(project: Project) -> None:
    base = source_view(project, SMOKE).version
    start = threading.Barrier(8)
    outcomes: list[str] = []

    def save(n: int) -> None:
        start.wait()
        try:
            save_source(project, SMOKE, f"// writer {n}\n", base_version=base)
            outcomes.append(f"won {n}")
        except FileConflict:
            outcomes.append("refused")

    threads = [threading.Thread(target=save, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    winners = [o for o in outcomes if o.startswith("won")]
    assert len(winners) == 1 and outcomes.count("refused") == 7
    assert (project.root / SMOKE).read_text() == f"// writer {winners[0].split()[1]}\n"


HOLD_FLOCK = (
    "import fcntl, os, sys\n"
    "fd = os.open(sys.argv[1], os.O_RDONLY)\n"
    "fcntl.flock(fd, fcntl.LOCK_EX)\n"
    "print('held', flush=True)\n"
    "sys.stdin.readline()\n"
    "open(sys.argv[2], 'w').write('// the other process\\n')\n"
)


def test_another_unotest_process_saving_holds_off_the_check(project: Project) -> None:
    """The viewer and the MCP server are separate processes: a save waits for the other's
    ``flock`` on ``unotest/e2e/``, and checks the version only after it."""
    base = source_view(project, SMOKE).version
    path = project.root / SMOKE
    other = subprocess.Popen(
        [sys.executable, "-c", HOLD_FLOCK, str(project.e2e_dir), str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert other.stdout is not None and other.stdout.readline() == "held\n"
        outcome: list[BaseException | None] = []

        def save() -> None:
            try:
                save_source(project, SMOKE, "// mine\n", base_version=base)
                outcome.append(None)
            except FileConflict as err:
                outcome.append(err)

        thread = threading.Thread(target=save)
        thread.start()
        thread.join(0.5)
        assert thread.is_alive(), "the save did not wait for the other process's lock"
        assert other.stdin is not None
        other.stdin.write("go\n")
        other.stdin.close()
        assert other.wait(30) == 0
        thread.join(30)
    finally:
        if other.poll() is None:
            other.kill()
            other.wait()
    assert isinstance(outcome[0], FileConflict)
    assert path.read_text() == "// the other process\n"


def test_breakpoints_move_to_the_nearest_statement_and_say_so(
    project: Project, protocol_validate: Callable[[str, object], None]
) -> None:
    saved = save_breakpoints(
        project,
        {
            "version": 1,
            "scenarios": {
                # (7:0 would be line 7 itself, which lands on its first statement)
                "smoke": [{"line": 5, "col": 2}, {"line": 7, "col": 1}],
                "_helpers/auth": [{"line": 2, "col": 2}],
                "gone": [{"line": 1, "col": 0}],
            },
        },
    )
    assert saved.file["scenarios"]["smoke"] == [{"line": 5, "col": 2}, {"line": 7, "col": 4}]
    assert saved.file["scenarios"]["gone"] == [{"line": 1, "col": 0}]
    assert any("7:1 is no statement start; moved to 7:4" in n for n in saved.notes)
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
