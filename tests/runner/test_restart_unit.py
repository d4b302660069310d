"""The pieces of ``restart`` without a browser: the scenario read again (and refused
with its first problem at file:line:col), the breakpoints carried to the new statement
starts, the restart's id found in steps.jsonl, and a reader following the link between
two run directories (``restartOf`` one way, the ``command:result`` the other), which an
``eval`` result that looks like a run id does not fool."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sites import scenario_source, write_project

from runner.debug.breakpoints import Breakpoints
from runner.debug.commands import Command
from runner.debug.restart import (
    RestartWatch,
    carry_breakpoints,
    held_breakpoints,
    reload_scenario,
)
from runner.errors import UsageError
from runner.project.index import Project
from runner.store.links import latest_restart, restarted_as
from runner.store.rundir import RunDirectory

FLOW = "unotest/e2e/flows/again.test.js"
HELPER = "unotest/e2e/_helpers/notes.js"
BODY = '  let a = 1\n  note("x")\n'
NOTES = "function note(text) {\n  log(text)\n}\n"


def project_with(tmp_path: Path, body: str = BODY, notes: str = NOTES) -> Project:
    root = write_project(
        tmp_path / "proj",
        None,
        {"flows/again": scenario_source("flows-again", body)},
        helpers={"notes": notes},
    )
    return Project(root)


def test_reload_scenario_reads_the_files_again(tmp_path: Path) -> None:
    project = project_with(tmp_path)
    scenario, helpers = reload_scenario(project, "flows/again")
    assert scenario.file == FLOW and "note" in helpers
    (project.root / FLOW).write_text(scenario_source("flows-again", '  let a = 2\n  note("y")\n'))
    again, _ = reload_scenario(project, "flows/again")
    assert again.program is not scenario.program
    assert '"y"' in (project.root / FLOW).read_text()


@pytest.mark.parametrize(
    ("file", "text", "where"),
    [
        (FLOW, scenario_source("flows-again", "  let a = = 1\n"), f"{FLOW}:5:"),
        (FLOW, scenario_source("flows-again", "  no_such_thing(1)\n"), f"{FLOW}:5:2:"),
        (HELPER, "function note(text) {\n  log(\n}\n", f"{HELPER}:3:"),
    ],
)
def test_reload_scenario_refuses_a_problem_with_its_place(
    tmp_path: Path, file: str, text: str, where: str
) -> None:
    project = project_with(tmp_path)
    (project.root / file).write_text(text)
    with pytest.raises(UsageError) as caught:
        reload_scenario(project, "flows/again")
    assert str(caught.value).startswith(f"not restarted: {where}"), caught.value


def test_reload_scenario_of_a_scenario_gone(tmp_path: Path) -> None:
    project = project_with(tmp_path)
    (project.root / FLOW).unlink()
    with pytest.raises(UsageError, match="'flows/again' is gone from the project"):
        reload_scenario(project, "flows/again")


def test_breakpoints_carried_to_the_new_statement_starts() -> None:
    old = Breakpoints({"a.js": [(5, 2), (6, 2)], "b.js": [(2, 2)]})
    old.add("a.js", (5, 2))
    old.add("a.js", (6, 2))
    old.add("b.js", (2, 2))
    held = held_breakpoints(old)
    assert held == {"a.js": [(5, 2), (6, 2)], "b.js": [(2, 2)]}

    # The file was edited: 6:2 is no statement start any more (kept, with a note, as
    # --break keeps one); b.js is no longer used by the scenario (dropped, said so).
    new = Breakpoints({"a.js": [(5, 2), (7, 2)]})
    notes: list[str] = []
    carry_breakpoints(held, new, notes.append)
    assert new.active() == {"a.js": ["5:2", "6:2"]}
    assert new.hit("a.js", 5, 2) and not new.hit("a.js", 7, 2)
    assert len(notes) == 2
    assert notes[0].startswith("breakpoint a.js:6:2 matches no statement start")
    assert notes[1] == "restart: b.js is no longer used by the scenario; its breakpoints dropped"


def test_the_restart_id_heard_or_read_back(tmp_path: Path) -> None:
    rundir = RunDirectory.create(tmp_path / "runs", "scenario", "flows/again")
    try:
        watch = RestartWatch()
        assert watch.ident_in(rundir) is None
        rundir.append({"kind": "command:applied", "id": "a1", "cmd": "abort", "t": 1})
        rundir.append({"kind": "command:applied", "id": "r7", "cmd": "restart", "t": 2})
        assert watch.ident_in(rundir) == "r7"  # applied before the listener was there
        watch.applied(Command("restart", "r9"))
        assert watch.ident_in(rundir) == "r9"
    finally:
        rundir.close()


def _run(runs: Path, name: str, restart_of: str | None, results: list[object]) -> Path:
    path = runs / name
    path.mkdir(parents=True)
    manifest: dict[str, object] = {"schemaVersion": 1, "kind": "scenario", "ref": "x"}
    if restart_of is not None:
        manifest["restartOf"] = restart_of
    (path / "manifest.json").write_text(json.dumps(manifest))
    lines = [
        {"kind": "command:result", "id": f"c{i}", "ok": True, "value": value, "t": i}
        for i, value in enumerate(results)
    ]
    (path / "steps.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_following_restarts_from_run_to_run(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    # eval results that look like run ids: one names a run that is no restart of this
    # one, one names nothing, one a path; only the restart's result links the runs.
    first = _run(runs, "r-1", None, ["r-other", "r-none", "../r-2", "r-2"])
    second = _run(runs, "r-2", "r-1", ["r-3"])
    third = _run(runs, "r-3", "r-2", [])
    _run(runs, "r-other", "r-somebody", [])
    assert restarted_as(first) == second
    assert restarted_as(second) == third
    assert restarted_as(third) is None
    assert latest_restart(first) == third
    assert latest_restart(third) == third
    alone = _run(runs, "r-alone", None, ["r-other"])
    assert latest_restart(alone) == alone
