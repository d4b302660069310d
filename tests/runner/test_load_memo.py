"""LoadMemo: a load after a load reads, parses and checks only what changed, and says
exactly what a load without it says."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import runner.project.index as index_module
import runner.project.sources as sources_module
from runner.project.index import LoadMemo, ProjectIndex
from runner.project.root import Project

HELPER = "function greet(who) {\n  log(who)\n}\n"
HELPER_TWO_ARGS = "function greet(who, how) {\n  log(who + how)\n}\n"


def _scenario(number: int) -> str:
    return (
        f"// id-s{number}\n// Scenario {number}\n// #4f46e5\n"
        f'function test_it() {{\n  greet("s{number}")\n}}\n'
    )


@pytest.fixture
def project(tmp_path: Path) -> Project:
    e2e = tmp_path / "unotest" / "e2e"
    (e2e / "_helpers").mkdir(parents=True)
    (e2e / "_helpers" / "greeting.js").write_text(HELPER)
    for number in range(3):
        (e2e / f"s{number}.test.js").write_text(_scenario(number))
    return Project(tmp_path)


def _same(a: ProjectIndex, b: ProjectIndex) -> None:
    assert a.scenario_metas == b.scenario_metas
    assert [(d.file, d.line, d.col, d.head) for d in a.errors] == [
        (d.file, d.line, d.col, d.head) for d in b.errors
    ]
    assert a.files == b.files


def test_a_second_load_parses_only_the_changed_file(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed: list[str] = []
    real = index_module.load_scenario

    def counting(source: str, rel: str, name: str) -> object:
        parsed.append(name)
        return real(source, rel, name)

    monkeypatch.setattr(index_module, "load_scenario", counting)
    memo = LoadMemo()
    first = ProjectIndex.load(project, memo=memo)
    assert sorted(parsed) == ["s0", "s1", "s2"]
    parsed.clear()
    again = ProjectIndex.load(project, memo=memo)
    assert parsed == []
    _same(first, again)
    edited = project.e2e_dir / "s1.test.js"
    edited.write_text(_scenario(1).replace('greet("s1")', 'greet("s1!")'))
    os.utime(edited, ns=(1, 1))  # another stat, whatever the clock's resolution
    after = ProjectIndex.load(project, memo=memo)
    assert parsed == ["s1"]
    _same(after, ProjectIndex.load(project))


def test_a_helper_whose_arity_changed_checks_its_callers_again(project: Project) -> None:
    memo = LoadMemo()
    assert ProjectIndex.load(project, memo=memo).errors == []
    (project.helpers_dir / "greeting.js").write_text(HELPER_TWO_ARGS)
    with_memo = ProjectIndex.load(project, memo=memo)
    assert len(with_memo.errors) == 3, with_memo.errors  # each call now has one argument
    _same(with_memo, ProjectIndex.load(project))


def test_told_what_changed_it_looks_at_nothing_else(project: Project) -> None:
    memo = LoadMemo()
    ProjectIndex.load(project, memo=memo)
    s0, s2 = project.e2e_dir / "s0.test.js", project.e2e_dir / "s2.test.js"
    s0.write_text(_scenario(0).replace("Scenario 0", "Scenario zero"))
    s2.write_text(_scenario(2).replace("Scenario 2", "Scenario two"))
    memo.only_changed(["unotest/e2e/s2.test.js"])
    told = ProjectIndex.load(project, memo=memo)
    titles = {m["name"]: m["title"] for m in told.scenario_metas}
    # s0 changed unannounced: taken as it was; s2 was named: read again.
    assert titles == {"s0": "Scenario 0", "s1": "Scenario 1", "s2": "Scenario two"}
    # Told for one load only: the next looks at every file again.
    again = ProjectIndex.load(project, memo=memo)
    assert {m["name"]: m["title"] for m in again.scenario_metas}["s0"] == "Scenario zero"


def test_a_removed_file_is_forgotten(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sources_module, "UNUSED_KEPT", 0)  # forgotten at once
    memo = LoadMemo()
    ProjectIndex.load(project, memo=memo)
    sizes = [len(memo._sources), len(memo._parsed)]
    (project.e2e_dir / "s2.test.js").unlink()
    after = ProjectIndex.load(project, memo=memo)
    assert [m["name"] for m in after.scenario_metas] == ["s0", "s1"]
    assert [len(memo._sources), len(memo._parsed)] == [s - 1 for s in sizes]


def test_unused_entries_are_forgotten_once_they_pile_up(project: Project) -> None:
    """A load after a save keeps its tables as they are while few entries are unused (a
    rebuild of 10,000 files' was a sixth of such a load), and drops them past that."""
    memo = LoadMemo()
    ProjectIndex.load(project, memo=memo)
    edits = sources_module.UNUSED_KEPT + 1
    for n in range(edits):
        (project.e2e_dir / "s1.test.js").write_text(_scenario(1) + f"// edit {n}\n")
        ProjectIndex.load(project, memo=memo)
        # at most the kept allowance of old versions: never one per edit ever made
        assert len(memo._parsed) <= 4 + sources_module.UNUSED_KEPT
    assert len(memo._parsed) < 4 + edits  # the old versions were dropped at some point


def test_the_watch_graph_walks_again_only_what_changed(project: Project) -> None:
    from runner.watch.graph import DependencyGraph

    memo = LoadMemo()
    first = DependencyGraph.build(ProjectIndex.load(project, memo=memo))
    (project.e2e_dir / "s1.test.js").write_text(_scenario(1) + "// saved\n")
    second = DependencyGraph.build(ProjectIndex.load(project, memo=memo), previous=first)
    assert second.reach["s0"] is first.reach["s0"]  # the same program: its reach kept
    assert second.reach["s1"] is not first.reach["s1"]
    assert second.reach["s1"] == first.reach["s1"]
    # A helper's body edited without a new call: every path stays, nothing walked again.
    (project.helpers_dir / "greeting.js").write_text(HELPER.replace("log(who)", "log(who, 1)"))
    third = DependencyGraph.build(ProjectIndex.load(project, memo=memo), previous=second)
    assert all(third.reach[n] is second.reach[n] for n in ("s0", "s1", "s2"))
    # A helper that now calls another function: every scenario walked again.
    calling = "function shout(x) {\n  log(x)\n}\n" + HELPER.replace("log(who)", "shout(who)")
    (project.helpers_dir / "greeting.js").write_text(calling)
    fourth = DependencyGraph.build(ProjectIndex.load(project, memo=memo), previous=third)
    assert all(fourth.reach[n] is not third.reach[n] for n in ("s0", "s1", "s2"))
    fresh = DependencyGraph.build(ProjectIndex.load(project))
    assert fourth.reach == fresh.reach
    assert ("unotest/e2e/_helpers/greeting.js", "shout") in fourth.reach["s0"]


def test_told_only_contents_changed_it_lists_no_folder_again(project: Project) -> None:
    memo = LoadMemo()
    ProjectIndex.load(project, memo=memo)
    (project.e2e_dir / "s3.test.js").write_text(_scenario(3))
    memo.only_changed(["unotest/e2e/s1.test.js"], added=False)
    assert len(ProjectIndex.load(project, memo=memo).scenario_metas) == 3  # as listed before
    memo.only_changed(["unotest/e2e/s3.test.js"], added=True)
    assert len(ProjectIndex.load(project, memo=memo).scenario_metas) == 4


def test_a_new_file_reported_as_a_change_is_listed(project: Project) -> None:
    memo = LoadMemo()
    ProjectIndex.load(project, memo=memo)
    (project.e2e_dir / "s3.test.js").write_text(_scenario(3))
    # A watcher may report a new file's creation as its last event: a change.
    memo.only_changed(["unotest/e2e/s3.test.js"], added=False)
    assert len(ProjectIndex.load(project, memo=memo).scenario_metas) == 4
