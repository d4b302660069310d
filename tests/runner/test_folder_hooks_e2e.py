"""Folder hooks (``_hooks.js``) and ``before_all``/``after_all`` end to end: real Chromium,
``unotest e2e`` and ``unotest collection`` as a user runs them; ``check`` and the watch
daemon's selection without a browser.

A project in ``tmp_path`` has hooks at every level: the project's (a helper file), the
e2e folder's own ``_hooks.js``, ``shop/_hooks.js`` and a scenario file's. Every hook
calls ``hit(what)``, a helper that logs ``@ what`` and asks the test's site for
``/hit?h=<what>&w=<worker index>``: the site (served on 127.0.0.1 by this module)
counts them, so a collection's ``before_all``/``after_all`` can be counted per worker.

Covered: the order of every hook's steps (steps.jsonl, the console's headings and the
scenario's log lines); ``before_all``/``after_all`` once per worker in a 2-worker
collection, the ``after_all`` hooks in a run of their own per worker; a failing
``before_all`` (the first scenario of its scope fails with it, the others of the worker
fail with ``before_all failed: …`` without running, its ``after_all`` still runs, a
scenario outside the scope passes) in a collection and in ``unotest e2e``; ``check`` for
misplaced and duplicate hooks; watch selecting the scenarios under a saved ``_hooks.js``.
"""

from __future__ import annotations

import http.server
import json
import re
import subprocess
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from cli_runs import UNOTEST, Run, launch
from events import read_events
from net import serve_handler
from sites import (
    check_errors,
    collection_yaml,
    config_yaml,
    scenario_source,
    unotest_env,
    write_files,
    write_project,
)

from runner.project.index import Project, ProjectIndex
from runner.watch.graph import DependencyGraph
from runner.watch.selection import Change, select

__all__ = ["launch"]  # the fixture, imported for pytest

E2E = "unotest/e2e"
HELPER = f"{E2E}/_helpers/hooks.js"
ROOT_HOOKS = f"{E2E}/_hooks.js"
SHOP_HOOKS = f"{E2E}/shop/_hooks.js"
CART = f"{E2E}/shop/cart.test.js"
RUN_TIMEOUT_S = 180


def level_hooks(level: str, extra: str = "") -> str:
    """The four hooks of one level, each hitting ``<level>-<hook>``."""
    return (
        "".join(
            f'function {hook}() {{\n  hit("{level}-{hook}")\n}}\n'
            for hook in ("before_all", "before_each", "after_each", "after_all")
        )
        + extra
    )


PROJECT_HOOKS = level_hooks(
    "project",
    'function hit(what) {\n  log("@ " + what)\n'
    '  request("GET", "/hit?h=" + what + "&w=" + env("UNOTEST_WORKER_INDEX", "-"))\n}\n',
)
ROOT = 'const HOME = "/index.html"\n' + level_hooks("root").replace(
    'hit("root-before_each")', 'hit("root-before_each")\n  goto(HOME)'
)
SHOP = level_hooks("shop")
CART_SOURCE = scenario_source("cart", '  hit("cart-test")\n  expect_text(css("h1"), "Shop")\n')
CART_SOURCE += level_hooks("cart")


def plain(ident: str) -> str:
    return scenario_source(ident, f'  hit("{ident}-test")\n')


# --- the site: pages and a counter of hits --------------------------------------------------


class Hits:
    """What the site was asked for: each ``/hit`` as (what, worker)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.seen: list[tuple[str, str]] = []

    def add(self, what: str, worker: str) -> None:
        with self.lock:
            self.seen.append((what, worker))

    def count(self) -> Counter[tuple[str, str]]:
        with self.lock:
            return Counter(self.seen)

    def of(self, what: str) -> list[str]:
        """The workers that hit ``what``, once per hit, sorted."""
        with self.lock:
            return sorted(worker for seen, worker in self.seen if seen == what)


@pytest.fixture
def site() -> Iterator[tuple[str, Hits]]:
    hits = Hits()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            url = urlsplit(self.path)
            if url.path == "/hit":
                query = parse_qs(url.query)
                hits.add(query.get("h", ["?"])[0], query.get("w", ["?"])[0])
                body = b"ok"
            else:
                body = b"<!doctype html><title>Shop</title><h1>Shop</h1>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    with serve_handler(Handler, "hooks-site") as url:
        yield url, hits


def make_project(root: Path, url: str, scenarios: dict[str, str], **files: str) -> Path:
    timeout = {"action": 3000, "expect": 3000, "navigation": 15000, "scenario": 60000}
    return write_project(
        root,
        config_yaml(url, timeout=timeout),
        scenarios,
        helpers={"hooks": PROJECT_HOOKS},
        files={ROOT_HOOKS: ROOT, SHOP_HOOKS: SHOP, **files},
    )


def collection(project: Path, name: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*UNOTEST, "collection", name, *args],
        cwd=project,
        env=unotest_env(NO_COLOR="1"),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
    )


def runs_of(project: Path) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Every run directory's manifest (with its ``runId``, the directory's name) and
    steps.jsonl."""
    found = []
    for run_dir in sorted((project / "unotest/.runs").iterdir()):
        manifest = json.loads((run_dir / "manifest.json").read_text())
        found.append(({**manifest, "runId": run_dir.name}, read_events(run_dir, finished=True)))
    return found


# --- order ---------------------------------------------------------------------------------


ORDER = [
    "project-before_all",
    "root-before_all",
    "shop-before_all",
    "cart-before_all",
    "project-before_each",
    "root-before_each",
    "shop-before_each",
    "cart-before_each",
    "cart-test",
    "cart-after_each",
    "shop-after_each",
    "root-after_each",
    "project-after_each",
    "cart-after_all",
    "shop-after_all",
    "root-after_all",
    "project-after_all",
]


def test_hooks_run_level_by_level_around_the_test(
    tmp_path: Path, site: tuple[str, Hits], launch: Callable[..., Run]
) -> None:
    url, hits = site
    project = make_project(tmp_path / "proj", url, {"shop/cart": CART_SOURCE})
    run = launch(project, "e2e", "shop/cart")
    assert run.wait() == 0, run.stdout + run.stderr
    assert run.logged() == ORDER
    assert [what for what, _ in hits.seen] == ORDER
    # steps.jsonl: each hook's steps in its own file, the order above.
    files = [
        (e["file"], e["line"])
        for e in run.events()
        if e["kind"] == "step:started" and e["depth"] == 0
    ]
    level_files = {"project": HELPER, "root": ROOT_HOOKS, "shop": SHOP_HOOKS, "cart": CART}
    hook_lines = {"before_all": 2, "before_each": 5, "after_each": 8, "after_all": 11}
    expected = []
    for what in ORDER:
        level, hook = what.split("-")
        if hook == "test":
            expected += [(CART, 5), (CART, 6)]
            continue
        line = hook_lines[hook] + {"cart": 7, "root": 1}.get(level, 0)
        if level == "root" and hook.startswith("after"):
            line += 1  # below the goto(HOME) of its before_each
        expected.append((level_files[level], line))
        if what == "root-before_each":
            expected.append((ROOT_HOOKS, line + 1))  # goto(HOME), after the hit
    assert files == expected
    # The console heads each part with its hook and file.
    headings = re.findall(r"^  (\w+)  \((.+)\)$", run.stdout, re.M)
    assert headings[:4] == [
        ("before_all", HELPER),
        ("before_all", ROOT_HOOKS),
        ("before_all", SHOP_HOOKS),
        ("before_all", "this file"),
    ]
    assert headings[-1] == ("after_all", HELPER)
    assert re.search(r"^  test_it$", run.stdout, re.M)
    assert run.runtime()["testFn"] == "test_it"


# --- before_all / after_all per worker -------------------------------------------------------


def test_before_all_and_after_all_run_once_per_worker(
    tmp_path: Path, site: tuple[str, Hits]
) -> None:
    url, hits = site
    scenarios = {f"shop/s{i}": plain(f"s{i}") for i in range(4)}
    scenarios["shop/cart"] = CART_SOURCE
    names = [*scenarios, "elsewhere"]
    scenarios["elsewhere"] = plain("elsewhere")
    project = make_project(tmp_path / "proj", url, scenarios)
    write_files(project, {f"{E2E}/_collections/all.yaml": collection_yaml(names)})

    done = collection(project, "all", "--workers", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    # Both workers ran scenarios: each entered the project's, e2e's and shop's scopes
    # once, and left them once, at its end.
    for level in ("project", "root", "shop"):
        assert hits.of(f"{level}-before_all") == ["0", "1"], hits.seen
        assert hits.of(f"{level}-after_all") == ["0", "1"], hits.seen
    assert len(hits.of("cart-before_all")) == len(hits.of("cart-after_all")) == 1
    assert len(hits.of("project-before_each")) == len(names)
    # Per worker: every before_all before its first test, every after_all after its last.
    for worker in ("0", "1"):
        mine = [what for what, w in hits.seen if w == worker]
        assert mine[0] == "project-before_all" and mine[-1] == "project-after_all"
        alls = [i for i, what in enumerate(mine) if what.endswith("after_all")]
        tests = [i for i, what in enumerate(mine) if what.endswith(("-test", "_each"))]
        assert min(alls) > max(tests), mine
    # The after_all hooks ran in a run of their own per worker, in the collection.
    runs = runs_of(project)
    collection_id = next(m["runId"] for m, _ in runs if m["kind"] == "collection")
    teardowns = [(m, e) for m, e in runs if m["ref"] == "after_all"]
    assert len(teardowns) == 2
    for manifest, events in teardowns:
        assert manifest["parentRunId"] == collection_id
        assert events[-1]["kind"] == "run:finished" and events[-1]["outcome"] == "completed"
        assert {e["file"] for e in events if e["kind"] == "step:started" and e["depth"] == 0} >= {
            HELPER,
            ROOT_HOOKS,
            SHOP_HOOKS,
        }
    # Each before_all's steps are in the run of the first scenario it ran with.
    with_before_all = [
        m["ref"]
        for m, events in runs
        if any(e.get("text") == 'hit("shop-before_all")' for e in events)
    ]
    assert len(with_before_all) == 2 and "elsewhere" not in with_before_all


# --- a failing before_all -----------------------------------------------------------------


FAILING_HOOKS = (
    'function before_all() {\n  hit("f-before_all")\n  fail("seed broke")\n}\n'
    'function before_each() {\n  hit("f-before_each")\n}\n'
    'function after_each() {\n  hit("f-after_each")\n}\n'
    'function after_all() {\n  hit("f-after_all")\n}\n'
)


def test_a_failing_before_all_fails_its_scope_once(
    tmp_path: Path, site: tuple[str, Hits], launch: Callable[..., Run]
) -> None:
    url, hits = site
    scenarios = {name: plain(name.replace("/", "-")) for name in ("f/a", "f/b", "f/c", "ok")}
    project = make_project(
        tmp_path / "proj",
        url,
        scenarios,
        **{f"{E2E}/f/_hooks.js": FAILING_HOOKS},
    )
    listed = ["f/a", "f/b", "ok", "f/c"]
    write_files(project, {f"{E2E}/_collections/c.yaml": collection_yaml(listed)})
    report = tmp_path / "report.json"

    done = collection(project, "c", "--workers", "1", "--reporter", f"list,json={report}")
    assert done.returncode == 1, done.stdout + done.stderr
    ends = {
        e["data"]["name"]: e["data"]
        for e in json.loads(report.read_text())
        if e["type"] == "test_end"
    }
    assert {name: data["status"] for name, data in ends.items()} == {
        "f/a": "failed",
        "f/b": "failed",
        "ok": "passed",
        "f/c": "failed",
    }
    assert "unotest/e2e/f/_hooks.js:3:2: ScenarioError: seed broke" in done.stdout
    said = "before_all failed: unotest/e2e/f/_hooks.js:3:2: seed broke (it ran with f/a)"
    assert done.stdout.count(said) == 2, done.stdout
    # It ran once; the scenarios after it in the worker did not run at all.
    count = hits.count()
    assert count[("f-before_all", "0")] == 1
    never = ("f-a-test", "f-b-test", "f-c-test", "f-before_each")
    assert not any(what in never for what, _ in count), count
    assert ("f-after_each", "0") not in count
    assert count[("ok-test", "0")] == 1
    assert count[("f-after_all", "0")] == 1  # at the worker's end, all the same
    scenario_runs = [m["ref"] for m, _ in runs_of(project) if m["kind"] == "scenario"]
    assert sorted(scenario_runs) == ["after_all", "f/a", "ok"]

    # unotest e2e: the scenario fails with it, its after_all runs, no each hook does.
    alone = launch(project, "e2e", "f/b")
    assert alone.wait() == 1, alone.stdout + alone.stderr
    assert alone.logged() == [
        "project-before_all",
        "root-before_all",
        "f-before_all",
        "f-after_all",
        "root-after_all",
        "project-after_all",
    ]
    last = alone.runtime()["lastFailure"]
    assert (last["file"], last["line"], last["error"]["message"]) == (
        f"{E2E}/f/_hooks.js",
        3,
        "seed broke",
    )


def test_a_failing_after_all_fails_the_collection(tmp_path: Path, site: tuple[str, Hits]) -> None:
    """As Playwright fails a run on an error in afterAll: the scenarios passed, the
    collection did not."""
    url, hits = site
    project = make_project(
        tmp_path / "proj",
        url,
        {"g/a": plain("g-a")},
        **{f"{E2E}/g/_hooks.js": 'function after_all() {\n  fail("cleanup broke")\n}\n'},
    )
    write_files(project, {f"{E2E}/_collections/c.yaml": collection_yaml(["g/a"])})
    done = collection(project, "c", "--workers", "1")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAILED  c: 1 passed in" in done.stdout, done.stdout
    said = (
        f"worker 0: after_all failed: {E2E}/g/_hooks.js:2:2: cleanup broke "
        "(its run: unotest/.runs/after_all-"
    )
    assert said in done.stderr, done.stderr
    assert f"  ✗ {said}" in done.stdout, done.stdout
    assert hits.count()[("g-a-test", "0")] == 1


# --- check --------------------------------------------------------------------------------


def test_check_reports_misplaced_and_duplicate_hooks(tmp_path: Path) -> None:
    project = write_project(
        tmp_path / "proj",
        config_yaml("http://127.0.0.1:9"),
        {"shop/cart": plain("cart"), "twice": plain("twice") + "function after_all() {\n}\n" * 2},
        helpers={"hooks": PROJECT_HOOKS, "_hooks": "function before_all() {\n}\n"},
        files={
            SHOP_HOOKS: 'function before_each() {\n}\n\nfunction test_cart() {\n  log("x")\n}\n',
            f"{E2E}/a/_hooks.js": "function before_all() {\n}\nfunction before_all() {\n}\n",
            f"{E2E}/b/_hooks.js": "function beforeAll() {\n}\n",
            f"{E2E}/c/_hooks.js": 'const BASE = "/c"\nfunction after_each() {\n  clik()\n}\n',
            f"{E2E}/_helpers/consts.js": 'const BASE = "/x"\n',
        },
    )
    found = {(e["path"], e["line"], e["col"]): e["message"] for e in check_errors(project)}
    assert found == {
        (f"{E2E}/_helpers/_hooks.js", 1, 0): (
            "a _hooks.js holds the hooks of its folder's scenarios, and _helpers/ holds none: "
            "declare the project's hooks in a helper file (e.g. _helpers/hooks.js), a "
            "folder's in that folder's _hooks.js"
        ),
        (SHOP_HOOKS, 4, 9): (
            "SyntaxError: a _hooks.js holds the hooks of the scenarios in its folder, not a "
            "test: move test_cart() to a scenario file (<name>.test.js) of the folder"
        ),
        (f"{E2E}/a/_hooks.js", 3, 9): (
            "SyntaxError: hook 'before_all' is already declared at line 1: a file has at "
            "most one of each hook"
        ),
        (f"{E2E}/twice.test.js", 9, 9): (
            "SyntaxError: hook 'after_all' is already declared at line 7: a file has at "
            "most one of each hook"
        ),
        (f"{E2E}/b/_hooks.js", 1, 9): (
            "SyntaxError: 'beforeAll' would never run: name it before_all()"
        ),
        (f"{E2E}/c/_hooks.js", 1, 6): (
            "SyntaxError: hooks const 'BASE' is already a helper const "
            f"({E2E}/_helpers/consts.js:1): the scenarios of this folder see both; give it a "
            "name of its own"
        ),
    }


def test_a_broken_hooks_file_stops_the_scenarios_of_its_folder(tmp_path: Path) -> None:
    project = write_project(
        tmp_path / "proj",
        config_yaml("http://127.0.0.1:9"),
        {"shop/cart": plain("cart"), "shop/pay": plain("pay"), "elsewhere": plain("elsewhere")},
        helpers={"hooks": PROJECT_HOOKS},
        files={SHOP_HOOKS: "function before_each() {\n  clik()\n}\n"},
        collections={"shop": collection_yaml(["shop/cart", "shop/pay"])},
    )
    done = subprocess.run(
        [*UNOTEST, "e2e", "shop/cart"],
        cwd=project,
        env=unotest_env(NO_COLOR="1"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"{SHOP_HOOKS}:2:2: ReferenceError: 'clik' is not a function" in done.stderr
    assert "scenario 'shop/cart' cannot run: fix the 1 problem(s) above" in done.stderr
    # A collection refuses them too, before any browser, the problem said once.
    ran = subprocess.run(
        [*UNOTEST, "collection", "shop"],
        cwd=project,
        env=unotest_env(NO_COLOR="1"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert ran.stderr.count(f"{SHOP_HOOKS}:2:2: ReferenceError: 'clik' is not a function") == 1
    assert "2 scenarios (2 with errors)" in ran.stdout, ran.stdout
    for name in ("shop/cart", "shop/pay"):
        said = (
            f"  ✗ {name}: SyntaxError: the scenario has errors ('unotest check'); the first: "
            f"{SHOP_HOOKS}:2:2: ReferenceError: 'clik' is not a function"
        )
        assert said in ran.stdout, ran.stdout


# --- watch ----------------------------------------------------------------------------------


PAY = "// id-pay\n// Pays\n// #4f46e5\nconst CASES = [1, 2]\nfunction test_pay(c) {\n  log(c)\n}\n"


def test_watch_selects_the_scenarios_under_a_saved_hooks_file(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "proj",
        "headless: true\n",
        {
            "shop/cart": plain("cart"),
            "shop/cards/pay": PAY,
            "elsewhere": plain("elsewhere"),
        },
        helpers={"hooks": PROJECT_HOOKS},
        files={ROOT_HOOKS: ROOT, SHOP_HOOKS: SHOP},
    )
    graph = DependencyGraph.build(ProjectIndex.load(Project(root)))
    assert "shop/cards/pay[0]" in graph.scenario_files

    shop = select(root, graph, graph, [Change(SHOP_HOOKS, "change")], None)
    assert sorted(shop.reasons) == ["shop/cards/pay[0]", "shop/cards/pay[1]", "shop/cart"]
    reason = shop.reasons["shop/cart"][0]
    assert reason == {
        "kind": "importer",
        "changedFile": (root / SHOP_HOOKS).as_posix(),
        "sourceFile": (root / f"{E2E}/shop/cart.test.js").as_posix(),
        "depth": 1,
        "chain": [(root / SHOP_HOOKS).as_posix(), (root / f"{E2E}/shop/cart.test.js").as_posix()],
        "via": ["(its folder's hooks)"],
    }
    # The cases share their file in the plan: one test file, both scenario names.
    plan = shop.plan(graph)[0]
    assert len(plan["testFiles"]) == 2 and len(plan["scenarios"]) == 3

    everything = select(root, graph, graph, [Change(ROOT_HOOKS, "change")], None)
    assert sorted(everything.reasons) == [
        "elsewhere",
        "shop/cards/pay[0]",
        "shop/cards/pay[1]",
        "shop/cart",
    ]
    # Within a collection's scenarios only.
    some = select(root, graph, graph, [Change(SHOP_HOOKS, "change")], ["elsewhere"])
    assert some.reasons == {} and "no scenario is in its folder" in some.unmatched[0]["reason"]

    # A hooks file that no longer loads still selects its folder, says why, and is what
    # stops those scenarios.
    (root / SHOP_HOOKS).write_text("function before_each() {\n  log(\n}\n")
    broken = DependencyGraph.build(ProjectIndex.load(Project(root)))
    saved = select(root, graph, broken, [Change(SHOP_HOOKS, "change")], None)
    assert sorted(saved.reasons) == ["shop/cards/pay[0]", "shop/cards/pay[1]", "shop/cart"]
    assert saved.reasons["shop/cart"][0]["message"].startswith(
        f"its folder's hooks file does not load: {SHOP_HOOKS}:3:0"
    )
    assert broken.problems_for("shop/cart")[0].startswith(f"{SHOP_HOOKS}:3:0")
    assert broken.problems_for("elsewhere") == []
    # A saved scenario file selects each of its cases.
    pay = select(root, graph, graph, [Change(f"{E2E}/shop/cards/pay.test.js", "change")], None)
    assert sorted(pay.reasons) == ["shop/cards/pay[0]", "shop/cards/pay[1]"]
