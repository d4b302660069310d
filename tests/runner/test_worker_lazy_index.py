"""A worker's project index: the helpers at start, each scenario parsed when it is
first asked for (``ProjectIndex.load_helpers`` / ``load_scenario``), so that a worker of
a large collection parses only the scenarios it runs. Real collections run these
workers in ``test_collection.py``."""

from __future__ import annotations

from pathlib import Path

from sites import write_project

from runner.project.index import Project, ProjectIndex

HELPER = """\
function add_item(name) {
  log(name)
}
"""


def scenario(n: int, body: str = '  add_item("x")') -> str:
    return f"// id-lazy-{n}\n// Lazy {n}\n// #123456\nfunction test_lazy_{n}() {{\n{body}\n}}\n"


def make(tmp_path: Path) -> Project:
    root = write_project(
        tmp_path / "project",
        None,
        {"shop/a": scenario(1), "b": scenario(2), "broken": scenario(3, "  let = 1")},
        helpers={"items": HELPER},
        files={"outside.test.js": scenario(4)},
    )
    return Project(root)


def test_the_helpers_alone_then_a_scenario_parsed_once_when_asked(tmp_path: Path) -> None:
    index = ProjectIndex.load_helpers(make(tmp_path))
    assert index.scenarios == {}
    assert "add_item" in index.helper_table
    assert [h.name for h in index.helpers] == ["items"]

    first = index.load_scenario("shop/a")
    assert first is not None and first.name == "shop/a"
    assert first.header.id == "lazy-1"
    assert index.load_scenario("shop/a") is first  # kept, not parsed again
    assert list(index.scenarios) == ["shop/a"]  # b was never read
    assert index.errors == []


def test_a_broken_missing_or_outside_scenario_is_none(tmp_path: Path) -> None:
    index = ProjectIndex.load_helpers(make(tmp_path))
    assert index.load_scenario("broken") is None
    [problem] = index.errors
    assert (problem.file, problem.line) == ("unotest/e2e/broken.test.js", 5)
    assert index.load_scenario("nope") is None
    assert index.load_scenario("../../outside") is None  # a file, but not a scenario's
    assert index.load_scenario("b") is not None


def test_the_full_load_and_the_lazy_one_give_the_same_scenario(tmp_path: Path) -> None:
    project = make(tmp_path)
    full = ProjectIndex.load(project)
    lazy = ProjectIndex.load_helpers(project)
    assert lazy.load_scenario("shop/a") == full.scenarios["shop/a"]
    assert lazy.helper_table.keys() == full.helper_table.keys()
