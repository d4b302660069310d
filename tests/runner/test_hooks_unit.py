"""Hooks and the bridge reopened for them, in-process: the real interpreter, hook chain and
run directory, pure built-ins (plus two that abort the run and record a failure bundle),
no browser. The browser tests are tests/runner/test_hooks.py.
"""

from __future__ import annotations

import asyncio
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from events import read_events
from sites import scenario_source, write_project

from dsl.builtins import PureServices, make_pure_builtins
from dsl.errors import Interrupt
from dsl.interpreter import Builtin
from dsl.values import Value
from runner.browser.bridge import LoopBridge
from runner.events import RunError
from runner.project.index import Project, ProjectIndex
from runner.run.console import ConsoleOutput
from runner.run.hook_chain import HookChain, record_steps
from runner.run.scenario_thread import Execution, Hooks, ScenarioThread
from runner.run.steps import StepRecord
from runner.store.rundir import RunDirectory

WAIT_S = 30

PROJECT_HOOKS = """\
function before_each() {
  log("project before")
}

function after_each() {
  log("project after")
}
"""


def scenario(
    body: str, before: str = 'log("file before")', after: str = 'log("file after")'
) -> str:
    return scenario_source(
        "hooked",
        body,
        fn="test_hooked",
        title="Hooked",
    ) + (f"function before_each() {{\n  {before}\n}}\nfunction after_each() {{\n  {after}\n}}\n")


class Harness:
    """One scenario run in its thread; what it logged, bundled and wrote."""

    def __init__(self, tmp_path: Path, source: str, helpers: dict[str, str]) -> None:
        root = write_project(tmp_path / "proj", None, {"hooked": source}, helpers=helpers)
        self.index = ProjectIndex.load(Project(root))
        problems = [d for d in self.index.errors if "'abort_now'" not in d.message]
        assert problems == [], problems  # abort_now() is this harness's own built-in
        self.project = Project(root)
        self.logs: list[str] = []
        self.bundles: list[tuple[int, int | None, int]] = []

    async def run(self) -> tuple[Execution | BaseException, list[dict[str, Any]], Ran]:
        bridge = LoopBridge(asyncio.get_running_loop())
        rundir = RunDirectory.create(self.project.runs_dir, "scenario", "hooked")
        console = ConsoleOutput(io.StringIO(), lambda text: text)
        scenario = self.index.scenarios["hooked"]
        steps, _ = record_steps(rundir, "hooked", "test_hooked", console)

        def on_failure(info: RunError, step_index: int) -> None:
            self.bundles.append((len(self.logs), info.get("line"), step_index))

        def abort_now() -> Value:
            bridge.interrupt("aborted")
            bridge.check()
            return None

        pure = make_pure_builtins(PureServices(env=lambda name: None, log=self.logs.append))
        builtins = {**pure, "abort_now": Builtin("abort_now", abort_now, 0, 0)}
        thread = ScenarioThread(
            scenario,
            self.index.helper_table,
            HookChain(steps, bridge),
            console,
            bridge,
            60_000,
            on_failure=on_failure,
        )
        with rundir:
            try:
                execution: Execution | BaseException = await asyncio.wait_for(
                    thread.execute(builtins), WAIT_S
                )
            except Interrupt as err:
                execution = err
        return execution, read_events(rundir.path), Ran(steps, console)


@dataclass
class Ran:
    steps: StepRecord
    console: ConsoleOutput


def run(harness: Harness) -> tuple[Execution | BaseException, list[dict[str, Any]], Ran]:
    return asyncio.run(harness.run())


def test_the_order_of_hooks(tmp_path: Path) -> None:
    harness = Harness(tmp_path, scenario('  log("test")\n'), {"hooks": PROJECT_HOOKS})
    hooks = Hooks.of(harness.index.scenarios["hooked"], harness.index.helper_table)
    assert [(ref.decl.name, ref.program.file) for ref in hooks.before] == [
        ("before_each", "unotest/e2e/_helpers/hooks.js"),
        ("before_each", "unotest/e2e/hooked.test.js"),
    ]
    execution, events, _ = run(harness)
    assert execution == ("completed", None, None)
    assert harness.logs == ["project before", "file before", "test", "file after", "project after"]
    assert harness.bundles == []
    assert [e["kind"] for e in events].count("step:ok") == 5


def test_a_failing_before_each_skips_the_test_but_not_after_each(tmp_path: Path) -> None:
    source = scenario('  log("test")\n', before='fail("no fixture")')
    harness = Harness(tmp_path, source, {"hooks": PROJECT_HOOKS})
    execution, _, _ = run(harness)
    assert isinstance(execution, tuple)
    outcome, info, _ = execution
    assert outcome == "failed" and info is not None
    assert (info["error"], info["line"]) == ("no fixture", 8)
    assert harness.logs == ["project before", "file after", "project after"]
    assert harness.bundles == [(1, 8, 1)]  # taken before any after_each ran


def test_the_tests_failure_stays_the_runs_when_after_each_fails_too(tmp_path: Path) -> None:
    source = scenario('  log("test")\n  fail("the test broke")\n', after='fail("cleanup broke")')
    harness = Harness(tmp_path, source, {"hooks": PROJECT_HOOKS})
    execution, events, ran = run(harness)
    assert isinstance(execution, tuple)
    _, info, _ = execution
    assert info is not None and (info["error"], info["line"]) == ("the test broke", 6)
    assert ran.steps.last_failure is not None and ran.steps.last_failure["line"] == 6
    assert [e["error"] for e in events if e["kind"] == "step:fail"] == [
        "the test broke",
        "cleanup broke",
    ]
    assert harness.logs == ["project before", "file before", "test", "project after"]


def test_a_failing_after_each_fails_a_passing_test(tmp_path: Path) -> None:
    harness = Harness(tmp_path, scenario('  log("test")\n', after='fail("cleanup broke")'), {})
    execution, _, _ = run(harness)
    assert isinstance(execution, tuple)
    outcome, info, _ = execution
    assert outcome == "failed" and info is not None
    assert (info["error"], info["line"]) == ("cleanup broke", 11)
    assert harness.bundles == []  # taken after the hooks, as for a run without them


def test_after_each_runs_after_an_abort_and_a_second_abort_stops_it(tmp_path: Path) -> None:
    once = Harness(
        tmp_path / "once", scenario('  abort_now()\n  log("test")\n'), {"hooks": PROJECT_HOOKS}
    )
    execution, events, _ = run(once)
    assert isinstance(execution, Interrupt) and execution.reason == "aborted"
    assert once.logs == ["project before", "file before", "file after", "project after"]
    assert [e["errorName"] for e in events if e["kind"] == "step:fail"] == ["AbortError"]
    assert once.bundles == []

    twice = Harness(
        tmp_path / "twice",
        scenario("  abort_now()\n", after='abort_now(); log("never")'),
        {"hooks": PROJECT_HOOKS},
    )
    execution, events, _ = run(twice)
    assert isinstance(execution, Interrupt)
    assert twice.logs == ["project before", "file before"]
    assert [e["errorName"] for e in events if e["kind"] == "step:fail"] == ["AbortError"] * 2


def test_a_scenario_without_hooks_prints_no_headings(tmp_path: Path) -> None:
    harness = Harness(tmp_path, scenario_source("hooked", '  log("test")\n', fn="test_hooked"), {})
    execution, _, ran = run(harness)
    assert execution == ("completed", None, None)
    assert isinstance(ran.console.stream, io.StringIO)
    assert "test_hooked" not in ran.console.stream.getvalue()


# --- the bridge ----------------------------------------------------------------------------------


def _bridge_calls() -> list[str]:
    async def main() -> list[str]:
        bridge = LoopBridge(asyncio.get_running_loop())
        seen: list[str] = []

        def attempt(label: str) -> None:
            try:
                bridge.call(asyncio.sleep(0))
                seen.append(f"{label}: ran")
            except Interrupt as err:
                seen.append(f"{label}: {err.reason}")

        def work() -> None:
            attempt("before")
            bridge.interrupt("timeout")
            attempt("interrupted")
            seen.append(f"reopen: {bridge.reopen_for_teardown()}")
            attempt("reopened")
            bridge.check()
            bridge.interrupt("aborted")
            attempt("again")
            seen.append(f"reopen: {bridge.reopen_for_teardown()}")
            seen.append(f"reason: {bridge.interrupted}")

        await asyncio.to_thread(work)
        final = LoopBridge(asyncio.get_running_loop())
        final.interrupt("aborted", final=True)
        seen.append(f"final reopen: {final.reopen_for_teardown()}")
        return seen

    return asyncio.run(main())


def test_the_bridge_reopens_once_after_the_first_interrupt() -> None:
    assert _bridge_calls() == [
        "before: ran",
        "interrupted: timeout",
        "reopen: True",
        "reopened: ran",
        "again: timeout",
        "reopen: False",
        "reason: timeout",
        "final reopen: False",
    ]


def test_a_sleep_on_the_bridge_ends_when_interrupted() -> None:
    async def main() -> BaseException | None:
        bridge = LoopBridge(asyncio.get_running_loop())
        loop = asyncio.get_running_loop()
        loop.call_later(0.05, bridge.interrupt, "aborted")
        try:
            await asyncio.wait_for(asyncio.to_thread(bridge.sleep, 3600), WAIT_S)
        except Interrupt as err:
            return err
        return None

    ended = asyncio.run(main())
    assert isinstance(ended, Interrupt) and ended.reason == "aborted"


@pytest.mark.parametrize("name", ["before_each", "after_each"])
def test_a_project_hook_is_not_a_helper_anyone_calls(tmp_path: Path, name: str) -> None:
    source = scenario_source("hooked", f"  {name}()\n", fn="test_hooked")
    root = write_project(tmp_path / "proj", None, {"hooked": source}, helpers={"h": PROJECT_HOOKS})
    index = ProjectIndex.load(Project(root))
    assert [(d.line, d.message.split(":")[0]) for d in index.errors] == [(5, "TypeError")]
