"""What the watch daemon reuses from one save to the next at 10,000 scenarios, and that
each reuse still gives what a load and a graph made from nothing give: a file's
project-relative path (``LoadMemo.known_rel``), a program's call edges
(``DependencyGraph.program_edges``), and the heap frozen out of the collector's scans
(``runner.watch.daemon._FrozenHeap``)."""

from __future__ import annotations

import gc
import os
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest

import runner.project.index as index_module
from runner.project.index import LoadMemo, ProjectIndex
from runner.project.root import Project
from runner.watch import graph as graph_module
from runner.watch.daemon import _FrozenHeap
from runner.watch.graph import DependencyGraph

HELPER = "function greet(who) {\n  log(who)\n}\n"
HELPER_WITH_WAVE = HELPER + "function wave() {\n  log(1)\n}\n"


def _scenario(number: int) -> str:
    return (
        f"// id-s{number}\n// Scenario {number}\n// #4f46e5\n"
        f'function test_it() {{\n  greet("s{number}")\n  wave()\n}}\n'
    )


@pytest.fixture
def project(tmp_path: Path) -> Project:
    e2e = tmp_path / "unotest" / "e2e"
    (e2e / "_helpers").mkdir(parents=True)
    (e2e / "_helpers" / "greeting.js").write_text(HELPER)
    for number in range(3):
        (e2e / f"s{number}.test.js").write_text(_scenario(number))
    return Project(tmp_path)


def _reload(project: Project, memo: LoadMemo, *changed: str, added: bool = False) -> ProjectIndex:
    memo.only_changed(list(changed), added=added)
    return ProjectIndex.load(project, memo=memo)


def test_unchanged_files_are_not_looked_at_again_and_a_file_made_a_link_is(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    looked: list[str] = []
    real = os.path.islink

    def counting(path: str) -> bool:
        if str(path).endswith(".js"):  # the walk looks at folders too
            looked.append(os.path.basename(path))
        return real(path)

    monkeypatch.setattr(index_module.os.path, "islink", counting)
    memo = LoadMemo()
    ProjectIndex.load(project, memo=memo)
    assert sorted(looked) == ["greeting.js", "s0.test.js", "s1.test.js", "s2.test.js"]
    looked.clear()
    _reload(project, memo, "unotest/e2e/s1.test.js")
    assert looked == ["s1.test.js"]  # told what changed: only it is looked at

    # s2 becomes a link to a file elsewhere in e2e/: a removal and a creation to the watcher
    e2e = project.e2e_dir
    (e2e / "_shared").mkdir()
    target = e2e / "_shared" / "s2.source"
    target.write_text((e2e / "s2.test.js").read_text())
    (e2e / "s2.test.js").unlink()
    (e2e / "s2.test.js").symlink_to(target)
    looked.clear()
    linked = _reload(project, memo, "unotest/e2e/s2.test.js", added=True)
    assert looked == ["s2.test.js"]
    _same_as_fresh(project, linked)
    # a link's target may change unseen (no event names the link): read at every load
    target.write_text(_scenario(2).replace("Scenario 2", "Scenario two"))
    again = _reload(project, memo)
    assert "Scenario two" in {m["title"] for m in again.scenario_metas}
    _same_as_fresh(project, again)

    # the link pointed elsewhere (ln -sf): reported under the link's own path
    other = e2e / "_shared" / "other.source"
    other.write_text(_scenario(2).replace("Scenario 2", "Scenario other"))
    (e2e / "s2.test.js").unlink()
    (e2e / "s2.test.js").symlink_to(other)
    retargeted = _reload(project, memo, "unotest/e2e/s2.test.js", added=True)
    _same_as_fresh(project, retargeted)
    assert "Scenario other" in {m["title"] for m in retargeted.scenario_metas}

    # an editor's save over the link: a file of its own now, under the link's path
    (e2e / "s2.test.js").unlink()
    (e2e / "s2.test.js").write_text(_scenario(2).replace("Scenario 2", "Scenario own"))
    own = _reload(project, memo, "unotest/e2e/s2.test.js", added=True)
    _same_as_fresh(project, own)
    assert "Scenario own" in {m["title"] for m in own.scenario_metas}


def _same_as_fresh(project: Project, index: ProjectIndex) -> None:
    fresh = ProjectIndex.load(project)
    assert index.files == fresh.files
    assert index.scenario_metas == fresh.scenario_metas


def _edges_of(graph: DependencyGraph, scenario: str) -> set[tuple[str, str]]:
    return set(graph.reach[scenario])


def test_edges_are_reused_only_while_every_name_resolves_as_before(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    resolved: list[str] = []
    real = graph_module._program_edges

    def counting(index: ProjectIndex, program: object, *rest: object) -> object:
        resolved.append(getattr(program, "file", "?"))
        return real(index, program, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(graph_module, "_program_edges", counting)
    memo = LoadMemo()
    first = DependencyGraph.build(ProjectIndex.load(project, memo=memo))
    assert len(resolved) == 4  # the helper and three scenarios
    assert ("", "wave") in _edges_of(first, "s0")  # no helper declares it yet

    (project.e2e_dir / "s1.test.js").write_text(_scenario(1) + "// edited\n")
    resolved.clear()
    second = DependencyGraph.build(_reload(project, memo, "unotest/e2e/s1.test.js"), previous=first)
    assert resolved == ["unotest/e2e/s1.test.js"]  # only the edited file's program

    # a helper now declares wave(): every scenario's call to it resolves anew
    (project.e2e_dir / "_helpers" / "greeting.js").write_text(HELPER_WITH_WAVE)
    resolved.clear()
    third_index = _reload(project, memo, "unotest/e2e/_helpers/greeting.js")
    third = DependencyGraph.build(third_index, previous=second)
    assert len(resolved) == 4
    wave = ("unotest/e2e/_helpers/greeting.js", "wave")
    for name in ("s0", "s1", "s2"):
        assert wave in _edges_of(third, name)
        assert ("", "wave") not in _edges_of(third, name)
    from_nothing = DependencyGraph.build(ProjectIndex.load(project))
    assert third.reach == from_nothing.reach


class _Cycle:
    def __init__(self) -> None:
        self.me = self


@pytest.fixture
def thawed() -> Iterator[None]:
    yield
    gc.unfreeze()  # the rest of the test session collects as it did


def test_a_frozen_cycle_is_collected_once_the_frozen_heap_has_grown(
    thawed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_FrozenHeap, "CHECK_EVERY", 2)
    heap = _FrozenHeap()
    heap.settle()  # the first load's objects
    assert gc.get_freeze_count() > 0
    grown = [_Cycle() for _ in range(gc.get_freeze_count())]  # twice the heap, in cycles
    probe = weakref.ref(grown[0])
    heap.settle()  # frozen with them (a check: they are still alive)
    del grown
    gc.collect()
    assert probe() is not None  # frozen: no collection frees them
    heap.settle()
    heap.settle()  # the check: grown by far more than a quarter, so all is collected
    assert probe() is None


def test_a_cycle_left_by_other_work_is_collected_not_frozen(
    thawed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_FrozenHeap, "CHECK_EVERY", 1000)
    heap = _FrozenHeap()
    heap.settle()
    probe = weakref.ref(_Cycle())  # garbage no collection has met yet (a batch's leftovers)
    heap.settle()
    assert probe() is None
