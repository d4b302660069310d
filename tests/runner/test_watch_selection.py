"""The watch daemon's selection: which scenarios a save selects, with which reasons.

Real project files in ``tmp_path``, loaded as the daemon loads them
(``ProjectIndex.load`` → ``DependencyGraph.build``); no browser is needed to decide.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from sites import collection_yaml, scenario_source, write_project

from runner.project.index import Project, ProjectIndex
from runner.watch.daemon_events import RunStatus, batch_status
from runner.watch.graph import DependencyGraph
from runner.watch.selection import Change, select, select_manual

H = "unotest/e2e/_helpers"
E = "unotest/e2e"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return write_project(
        tmp_path / "proj",
        "headless: true\n",
        {
            "login": scenario_source("login", '  sign_in("ana")\n'),
            "shop/cart": scenario_source("cart", "  open_cart()\n"),
            "plain": scenario_source("plain", '  log("no helper")\n'),
            "hooked": scenario_source("hooked", '  log("x")\n'),
        },
        helpers={
            "auth": 'function sign_in(user) {\n  log(user)\n}\n',
            "cart": 'function open_cart() {\n  sign_in("bob")\n  log(CART_URL)\n}\n',
            "consts": 'const CART_URL = "/cart"\n',
            "unused": "function nobody_calls_me() {\n  log(1)\n}\n",
        },
        collections={"smoke": collection_yaml(["login", "plain"])},
    )


def graph_of(root: Path) -> DependencyGraph:
    return DependencyGraph.build(ProjectIndex.load(Project(root)))


def abs_(root: Path, rel: str) -> str:
    return (root / rel).as_posix()


def test_a_saved_scenario_selects_itself(root: Path) -> None:
    graph = graph_of(root)
    sel = select(root, graph, graph, [Change(f"{E}/plain.test.js", "change")], None)
    assert sel.reasons == {
        "plain": [{"kind": "changed", "changedFile": abs_(root, f"{E}/plain.test.js")}]
    }
    assert sel.unmatched == []
    plan = sel.plan(graph)
    assert plan[0]["testFiles"] == [abs_(root, f"{E}/plain.test.js")]
    assert plan[0]["scenarios"] == ["plain"]


def test_a_helper_called_through_another_helper_gives_the_whole_chain(root: Path) -> None:
    graph = graph_of(root)
    sel = select(root, graph, graph, [Change(f"{H}/auth.js", "change")], None)
    assert sorted(sel.reasons) == ["login", "shop/cart"]
    (direct,) = sel.reasons["login"]
    assert direct == {
        "kind": "importer",
        "changedFile": abs_(root, f"{H}/auth.js"),
        "sourceFile": abs_(root, f"{E}/login.test.js"),
        "depth": 1,
        "chain": [abs_(root, f"{H}/auth.js"), abs_(root, f"{E}/login.test.js")],
        "via": ["sign_in", "test_it"],
    }
    (through,) = sel.reasons["shop/cart"]
    assert through["depth"] == 2
    assert through["chain"] == [
        abs_(root, f"{H}/auth.js"),
        abs_(root, f"{H}/cart.js"),
        abs_(root, f"{E}/shop/cart.test.js"),
    ]
    assert through["via"] == ["sign_in", "open_cart", "test_it"]
    assert through["sourceFile"] == through["chain"][-1]


def test_a_helper_const_read_by_a_helper_selects_its_scenarios(root: Path) -> None:
    graph = graph_of(root)
    sel = select(root, graph, graph, [Change(f"{H}/consts.js", "change")], None)
    assert list(sel.reasons) == ["shop/cart"]
    assert sel.reasons["shop/cart"][0]["via"] == ["CART_URL", "open_cart", "test_it"]


def test_a_config_change_selects_everything_and_says_so(root: Path) -> None:
    graph = graph_of(root)
    sel = select(root, graph, graph, [Change("unotest.config.yaml", "change")], None)
    assert sorted(sel.reasons) == ["hooked", "login", "plain", "shop/cart"]
    for reasons in sel.reasons.values():
        assert reasons[0]["kind"] == "config"
        assert "every scenario" in reasons[0]["message"]


def test_unmatched_files_say_why(root: Path) -> None:
    graph = graph_of(root)
    changes = [
        Change(f"{E}/_collections/smoke.yaml", "change"),
        Change(f"{H}/unused.js", "change"),
        Change(f"{E}/gone.test.js", "unlink"),
    ]
    sel = select(root, graph, graph, changes, None)
    assert sel.reasons == {}
    reasons = {m["file"].rsplit("/", 1)[-1]: m["reason"] for m in sel.unmatched}
    assert "collection file" in reasons["smoke.yaml"]
    assert reasons["unused.js"] == "a helper that no scenario calls"
    assert "deleted" in reasons["gone.test.js"]


def test_a_helper_that_does_not_parse_selects_its_scenarios_by_name(root: Path) -> None:
    old = graph_of(root)
    (root / H / "auth.js").write_text("function sign_in(user) {\n  log(user\n}\n", "utf-8")
    new = graph_of(root)
    assert f"{H}/auth.js" in new.broken
    sel = select(root, old, new, [Change(f"{H}/auth.js", "change")], None)
    assert sorted(sel.reasons) == ["login", "shop/cart"]
    assert all(r[0]["byName"] for r in sel.reasons.values())
    assert sel.reasons["shop/cart"][0]["chain"][0] == abs_(root, f"{H}/auth.js")
    (note,) = sel.notes
    assert "does not parse" in note.message
    assert "sign_in" in note.degraded_to and "by the names" in note.degraded_to
    assert note.detail is not None and "auth.js:" in note.detail
    # and what stops its scenarios from running is that problem
    assert any("auth.js" in p for p in new.problems_for("login"))


def test_a_broken_helper_nobody_calls_is_unmatched_with_its_problem(root: Path) -> None:
    (root / H / "unused.js").write_text("function nobody_calls_me( {\n", "utf-8")
    graph = graph_of(root)
    sel = select(root, graph, graph, [Change(f"{H}/unused.js", "change")], None)
    assert sel.reasons == {}
    (miss,) = sel.unmatched
    assert miss["reason"].startswith("a helper that does not parse")
    assert "unused.js:" in miss["reason"]
    # Not "nothing": no run starts until it parses, which the next batch showed first.
    assert "every scenario is blocked until it parses" in miss["reason"]


def test_a_scenario_that_does_not_parse_is_still_selected_by_its_save(root: Path) -> None:
    (root / E / "plain.test.js").write_text("// id-plain\n// t\n// #fff\nfunction t( {\n", "utf-8")
    graph = graph_of(root)
    sel = select(root, graph, graph, [Change(f"{E}/plain.test.js", "change")], None)
    (reason,) = sel.reasons["plain"]
    assert reason["kind"] == "changed" and "does not parse" in reason["message"]
    assert graph.problems_for("plain")


def test_a_collection_restricts_the_candidates(root: Path) -> None:
    graph = graph_of(root)
    smoke = graph.collections["smoke"]
    changes = [Change(f"{H}/auth.js", "change"), Change(f"{E}/shop/cart.test.js", "change")]
    sel = select(root, graph, graph, changes, smoke, "smoke")
    assert list(sel.reasons) == ["login"]
    (miss,) = sel.unmatched
    assert "not in the collection 'smoke'" in miss["reason"]


def test_project_hooks_select_every_scenario(root: Path) -> None:
    (root / H / "hooks.js").write_text('function before_each() {\n  log("hook")\n}\n', "utf-8")
    graph = graph_of(root)
    sel = select(root, graph, graph, [Change(f"{H}/hooks.js", "change")], None)
    assert sorted(sel.reasons) == ["hooked", "login", "plain", "shop/cart"]
    reason = sel.reasons["plain"][0]
    assert reason["chain"][-1] == abs_(root, f"{E}/plain.test.js")


def test_a_manual_selection_names_its_reason(root: Path) -> None:
    graph = graph_of(root)
    sel = select_manual(root, graph, ["plain", "nope"], "all asked for")
    assert sel.reasons == {"plain": [{"kind": "manual", "message": "all asked for"}]}


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        (["passed", "failed", "cancelled", "errored"], "errored"),
        (["passed", "failed", "cancelled"], "cancelled"),
        (["passed", "failed", "skipped"], "failed"),
        (["skipped", "passed"], "passed"),
        (["skipped"], "skipped"),
        ([], "skipped"),
    ],
)
def test_batch_status_precedence(statuses: list[RunStatus], expected: str) -> None:
    assert batch_status(statuses) == expected


def test_the_example_project_saving_auth_js_selects_exactly_its_users(tmp_path: Path) -> None:
    """The issue's "done when", decided on a copy of examples/ (no browser needed)."""
    examples = Path(__file__).resolve().parents[2] / "examples"
    root = tmp_path / "example"
    shutil.copytree(examples / "unotest" / "e2e", root / "unotest" / "e2e")
    shutil.copy(examples / "unotest.config.yaml", root / "unotest.config.yaml")
    graph = graph_of(root)
    users = sorted(
        name
        for name, rel in graph.scenario_files.items()
        if "sign_in(" in (root / rel).read_text(encoding="utf-8")
    )
    assert users  # the example still has scenarios that sign in
    sel = select(root, graph, graph, [Change(f"{H}/auth.js", "change")], None)
    assert sorted(sel.reasons) == users
    for name, reasons in sel.reasons.items():
        (reason,) = reasons
        scenario_file = abs_(root, graph.scenario_files[name])
        assert reason["chain"] == [abs_(root, f"{H}/auth.js"), scenario_file]


def test_scenarios_a_stopped_watch_never_ran_say_it_stopped() -> None:
    """Ctrl-C during a batch reported its other scenarios as "a newer batch started
    before this scenario ran"."""
    import asyncio

    from runner.watch.batches import Batch
    from runner.watch.results import ScenarioJob

    published: list[dict[str, object]] = []

    def publish(event: dict[str, object]) -> dict[str, object]:
        published.append(event)
        return event

    async def never(*_: object) -> None:
        raise AssertionError("a cancelled batch starts nothing")

    async def scenario() -> list[dict[str, object]]:
        batch = Batch("b1", [ScenarioJob("a", "unotest/e2e/a.test.js", [])], {}, publish)
        batch.cancel("the watch stopped (SIGINT) before this scenario ran")
        batch.start(never)
        assert batch.task is not None
        await batch.task
        return batch.results

    (result,) = asyncio.run(scenario())
    assert result["status"] == "cancelled"
    assert "the watch stopped (SIGINT) before this scenario ran" in json.dumps(result)
    assert "newer batch" not in json.dumps(published)


def test_a_failed_run_s_message_starts_with_where_it_failed() -> None:
    """As `unotest e2e` prints it: a watch user goes from the line to the statement."""
    from runner.run.result import RunResult
    from runner.watch.results import ScenarioJob, make_test_run_result

    error = {
        "error": 'expected "Total: 22.5 EUR", received "Total: 25 EUR"',
        "errorName": "AssertionError",
        "file": "unotest/e2e/shop/known-bug.test.js",
        "line": 9,
        "col": 2,
    }
    result = RunResult("r-1", "unotest/.runs/r-1", "shop/known-bug", "failed", 5, 3, error)
    job = ScenarioJob("shop/known-bug", "unotest/e2e/shop/known-bug.test.js", [])
    made = make_test_run_result(job, "failed", result=result)
    wanted = (
        'unotest/e2e/shop/known-bug.test.js:9:2: AssertionError: expected "Total: 22.5 EUR", '
        'received "Total: 25 EUR"'
    )
    assert made["cases"][0]["failureMessage"] == wanted
