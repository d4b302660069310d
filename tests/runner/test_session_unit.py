"""The parts of a scenario run that need no browser, tested in-process.

The browser tests (``test_e2e_run.py``, ``test_debugger_e2e.py``) run the whole thing;
these pin the seams between :class:`runner.run.session.ScenarioRun` and its parts: the
result and its JSON, the error records, the scenario thread and its timeout watchdog,
stopping (signals and ``abort()``), and breakpoints checked before a run directory.
No test here asserts a duration: the clocks are fakes or only bound a wait.
"""

from __future__ import annotations

import asyncio
import gc
import io
import json
import threading
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest
from events import read_events

from dsl.builtins import PureServices, make_pure_builtins
from dsl.errors import Interrupt, ScriptError
from dsl.scenario import ScenarioFile
from runner import protocol
from runner.browser.bridge import LoopBridge
from runner.debug.setup import DebugOptions, prepare_breakpoints
from runner.errors import UsageError
from runner.project.config import Config
from runner.project.index import Project, ProjectIndex
from runner.project.secrets import RunEnvironment, SecretMasker
from runner.run.console import ConsoleOutput
from runner.run.hook_chain import HookChain, record_steps
from runner.run.options import RunOptions, ScenarioInputs
from runner.run.result import RunResult, script_error_info, summary_lines, timeout_error_info
from runner.run.scenario_thread import (
    THREAD_STACK_BYTES,
    ScenarioThread,
    TimeoutFailure,
    run_in_thread,
    watch_timeout,
)
from runner.run.services import _title_of
from runner.run.session import ScenarioRun
from runner.run.signals import DRIVER_LOST, RunStopper, quiet_driver_loss
from runner.run.steps import StepRecord
from runner.store.rundir import RunDirectory

LOOPING = """\
// id-looping
// Never ends on its own: the scenario timeout ends it
// #334155
function test_looping() {
  let n = 0
  while (true) {
    n = n + 1
  }
}
"""

PASSING = """\
// id-passing
// Pure steps only
// #334155
function test_passing() {
  let a = 1
  expect_equal(a, 1)
}
"""

WAIT_S = 30.0  # a bound on waits that end on their own far sooner, never an assertion


def make_project(root: Path, scenarios: dict[str, str]) -> tuple[Project, ProjectIndex]:
    e2e = root / "unotest" / "e2e"
    e2e.mkdir(parents=True)
    for name, source in scenarios.items():
        (e2e / f"{name}.test.js").write_text(source, encoding="utf-8")
    project = Project(root)
    index = ProjectIndex.load(project)
    assert index.errors == [], index.errors
    return project, index


def make_result(**changes: Any) -> RunResult:
    fields: dict[str, Any] = {
        "run_id": "flows-login-mx2b0000-abcdef",
        "run_dir": "unotest/.runs/flows-login-mx2b0000-abcdef",
        "scenario": "flows/login",
        "outcome": "failed",
        "duration_ms": 1234,
        "steps": 7,
        "error": {"error": "boom", "errorName": "AssertionError", "file": "x.test.js"},
        "bundle_path": ".unotest/failures/flows__login__6",
        "signal": None,
    }
    fields.update(changes)
    return RunResult(**fields)


# --- RunResult and its JSON ---------------------------------------------------------------


@pytest.mark.parametrize(
    "result",
    [
        make_result(),
        make_result(outcome="completed", error=None, bundle_path=None),
        make_result(outcome="aborted", error=None, bundle_path=None, signal="SIGINT"),
        make_result(outcome="aborted", signal="abort"),
    ],
    ids=["failed", "completed", "signal", "abort-with-error"],
)
def test_run_result_json_round_trips_exactly(result: RunResult) -> None:
    data = result.to_json()
    assert RunResult.from_json(data) == result
    # Through the worker's pipe too: plain JSON, nothing lost.
    assert RunResult.from_json(json.loads(json.dumps(data))) == result


def test_run_result_json_keeps_the_cli_shape() -> None:
    """``e2e --json`` has these keys; ``signal`` joins them only when a signal ended it."""
    keys = {"runId", "runDir", "scenario", "outcome", "durationMs", "steps", "error", "bundlePath"}
    assert set(make_result().to_json()) == keys
    assert set(make_result(signal="SIGTERM").to_json()) == keys | {"signal"}


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("outcome", "interrupted"),
        ("outcome", None),
        ("runId", None),
        ("steps", "7"),
        ("durationMs", True),
        ("error", "boom"),
        ("signal", 15),
    ],
)
def test_run_result_from_json_refuses_what_it_cannot_make(key: str, value: Any) -> None:
    data = {**make_result().to_json(), key: value}
    with pytest.raises(ValueError, match=key):
        RunResult.from_json(data)


# --- the error records and the summary -------------------------------------------------------


def script_error(message: str = "expected 1, got 2") -> ScriptError:
    return ScriptError("AssertionError", message, "unotest/e2e/a.test.js", 12, 4)


def test_script_error_info_without_a_step_has_the_error_place_only() -> None:
    assert script_error_info(script_error(), None, "a") == {
        "error": "expected 1, got 2",
        "errorName": "AssertionError",
        "file": "unotest/e2e/a.test.js",
        "line": 12,
        "col": 4,
        "scenario": "a",
    }


class _Step:
    """An open step as the steps record keeps it (what a timeout is placed at)."""

    index = 3
    line = 8
    col = 2
    file = "unotest/e2e/a.test.js"
    text = "while (true)"
    call_stack: ClassVar[list[protocol.CallFrame]] = [{"fn": "helper", "file": "h.js", "line": 2}]
    chain: ClassVar[tuple[protocol.ChainFrame, ...]] = (
        {"file": "unotest/e2e/a.test.js", "line": 5, "col": 2, "fn": "test_a"},
        {"file": "unotest/e2e/a.test.js", "line": 8, "col": 2, "fn": "helper"},
    )

    def variables(self) -> dict[str, str]:
        return {"n": "41"}


def test_timeout_error_info_is_placed_at_the_step_it_stopped() -> None:
    info = timeout_error_info("too long", "a", _Step())
    # the same record as a script error's (one builder): the step is where it stopped
    assert list(info) == [
        "error",
        "errorName",
        "file",
        "line",
        "col",
        "at",
        "chain",
        "scenario",
        "step",
        "stepIndex",
        "stepLine",
        "stepCol",
        "callStack",
        "vars",
    ]
    assert (info["file"], info["line"], info["col"]) == ("unotest/e2e/a.test.js", 8, 2)
    assert (info["stepLine"], info["stepCol"]) == (8, 2)
    assert info["chain"] == list(_Step.chain) and info["at"] == _Step.chain[0]
    assert info["errorName"] == "TimeoutError" and info["stepIndex"] == 3
    assert info["vars"] == {"n": "41"}
    assert timeout_error_info("too long", "a", None) == {
        "error": "too long",
        "errorName": "TimeoutError",
        "scenario": "a",
    }


def test_summary_lines_per_outcome() -> None:
    passed = make_result(outcome="completed", error=None, bundle_path=None)
    assert summary_lines(passed) == ["passed  flows/login: 7 steps in 1.23 s"]
    one = make_result(outcome="completed", error=None, bundle_path=None, steps=1)
    assert summary_lines(one) == ["passed  flows/login: 1 step in 1.23 s"]
    aborted = make_result(outcome="aborted", error=None, bundle_path=None)
    assert summary_lines(aborted) == ["aborted  flows/login after 7 steps (1.23 s)"]
    error = {"error": "boom", "errorName": "AssertionError", "file": "a.js", "line": 3, "col": 1}
    failed = make_result(error={**error, "step": "expect_equal(a, 2)"})
    assert summary_lines(failed) == [
        "\nfailed  flows/login",
        "  a.js:3:1: AssertionError: boom",
        "  step: expect_equal(a, 2)",
        "  failure bundle: .unotest/failures/flows__login__6",
        "  run: unotest/.runs/flows-login-mx2b0000-abcdef  (7 steps in 1.23 s)",
    ]


def test_summary_lines_show_terminal_escapes_and_never_send_them() -> None:
    error = {"error": "bad \x1b[31mred\nnext", "errorName": "Error", "step": "fail(\x1b[2J)"}
    lines = summary_lines(make_result(error=error))
    assert "\x1b" not in "".join(lines)
    assert lines[1] == "  Error: bad \\x1b[31mred\nnext"  # its line breaks kept
    assert lines[2] == "  step: fail(\\x1b[2J)"


# --- the scenario thread and its watchdog ------------------------------------------------------


def test_run_in_thread_reports_how_the_work_ended() -> None:
    async def end_of(work: Callable[[], object]) -> tuple[str, BaseException | None]:
        async def no_watch(done: asyncio.Future[Any]) -> None:
            await done

        return await run_in_thread(work, no_watch, lambda: None)

    def fail() -> None:
        raise script_error()

    def interrupt() -> None:
        raise Interrupt("aborted")

    def crash() -> None:
        raise KeyError("bug")

    assert asyncio.run(end_of(lambda: None)) == ("completed", None)
    for work, kind, exc_type in [
        (fail, "failed", ScriptError),
        (interrupt, "interrupted", Interrupt),
        (crash, "crashed", KeyError),
    ]:
        ended, exc = asyncio.run(end_of(work))
        assert (ended, type(exc)) == (kind, exc_type)


def test_run_in_thread_restores_the_stack_size_of_later_threads() -> None:
    """The large stack is for the scenario's thread only: the size is process-wide."""

    async def main() -> tuple[str, BaseException | None]:
        async def no_watch(done: asyncio.Future[Any]) -> None:
            await done

        return await run_in_thread(lambda: None, no_watch, lambda: None)

    before = threading.stack_size()
    assert asyncio.run(main()) == ("completed", None)
    assert threading.stack_size() == before != THREAD_STACK_BYTES


def test_the_watchdog_interrupts_a_thread_that_runs_past_its_limit() -> None:
    async def main() -> tuple[str, BaseException | None, list[str]]:
        bridge = LoopBridge(asyncio.get_running_loop())
        reasons: list[str] = []

        def interrupt(reason: str) -> None:
            reasons.append(reason)
            bridge.interrupt(reason)

        def spin() -> None:
            deadline = time.monotonic() + WAIT_S
            while time.monotonic() < deadline:
                bridge.check()
                time.sleep(0.001)

        def watch(done: asyncio.Future[Any]) -> Any:
            return watch_timeout(done, 0.0, lambda: 0.0, interrupt, interval=0.001)

        kind, exc = await run_in_thread(spin, watch, lambda: None)
        return kind, exc, reasons

    kind, exc, reasons = asyncio.run(main())
    assert kind == "interrupted" and isinstance(exc, Interrupt) and exc.reason == "timeout"
    assert reasons == ["timeout"]


def test_the_watchdog_does_not_count_paused_time() -> None:
    """Paused for longer than the whole run: the limit is never reached."""

    async def main() -> list[str]:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        reasons: list[str] = []
        ticks = 0

        def paused_for() -> float:
            nonlocal ticks
            ticks += 1
            if ticks == 20:
                done.set_result(None)
            return 1e9

        await asyncio.wait_for(
            watch_timeout(done, 0.0, paused_for, reasons.append, interval=0.001), WAIT_S
        )
        return reasons

    assert asyncio.run(main()) == []


def _thread_for(
    tmp_path: Path, loop: asyncio.AbstractEventLoop, name: str, source: str, timeout_ms: int
) -> tuple[ScenarioThread, StepRecord, RunDirectory]:
    project, index = make_project(tmp_path, {name: source})
    rundir = RunDirectory.create(project.runs_dir, "scenario", name)
    scenario = index.scenarios[name]
    bridge = LoopBridge(loop)
    console = ConsoleOutput(io.StringIO(), lambda text: text, quiet=True)
    steps, _ = record_steps(rundir, name, scenario.test_fn.name, console)
    hook = HookChain(steps, bridge)
    thread = ScenarioThread(scenario, index.helper_table, hook, console, bridge, timeout_ms)
    return thread, steps, rundir


def _pure_builtins() -> dict[str, Any]:
    return dict(make_pure_builtins(PureServices(env=lambda name: None, log=lambda line: None)))


def test_scenario_thread_completes_a_passing_scenario(tmp_path: Path) -> None:
    async def main() -> tuple[Any, ...]:
        thread, steps, rundir = _thread_for(
            tmp_path, asyncio.get_running_loop(), "passing", PASSING, 60_000
        )
        with rundir:
            return (await thread.execute(_pure_builtins()), steps.step_count)

    assert asyncio.run(main()) == (("completed", None, None), 2)


def test_scenario_thread_timeout_fails_at_the_statement_it_stopped(tmp_path: Path) -> None:
    async def main() -> tuple[Any, ...]:
        thread, steps, rundir = _thread_for(
            tmp_path, asyncio.get_running_loop(), "looping", LOOPING, 1
        )
        with rundir:
            execution = await asyncio.wait_for(thread.execute(_pure_builtins()), WAIT_S)
        return execution, steps.open, steps.last_failure, rundir.path

    (outcome, info, failure), still_open, last_failure, run_dir = asyncio.run(main())
    assert outcome == "failed" and info is not None
    assert info["errorName"] == "TimeoutError"
    assert info["error"] == "the scenario took longer than its timeout of 1 ms"
    assert info["scenario"] == "looping" and info["file"] == "unotest/e2e/looping.test.js"
    assert (info["line"], info["col"]) in {(6, 2), (7, 4)}  # the loop or its body
    assert isinstance(failure, TimeoutFailure) and failure.step_index == info["stepIndex"]
    assert still_open == []  # every open step was closed as failed
    assert last_failure is not None and last_failure["error"]["name"] == "TimeoutError"
    fails = [e for e in read_events(run_dir) if e["kind"] == "step:fail"]
    assert fails and {e["errorName"] for e in fails} == {"TimeoutError"}


def test_scenario_thread_lets_an_abort_go_on_as_an_interrupt(tmp_path: Path) -> None:
    async def main() -> None:
        thread, _, rundir = _thread_for(
            tmp_path, asyncio.get_running_loop(), "passing", PASSING, 60_000
        )
        with rundir:
            thread.conclude("interrupted", Interrupt("aborted"))

    with pytest.raises(Interrupt, match="aborted"):
        asyncio.run(main())


def test_scenario_thread_reports_a_crash_as_an_internal_error(tmp_path: Path) -> None:
    async def main() -> Any:
        thread, _, rundir = _thread_for(
            tmp_path, asyncio.get_running_loop(), "passing", PASSING, 60_000
        )
        with rundir:
            return thread.conclude("crashed", KeyError("x"))

    outcome, info, failure = asyncio.run(main())
    assert (outcome, info) == (
        "failed",
        {"error": "internal error: KeyError: 'x'", "errorName": "Error"},
    )
    assert failure == TimeoutFailure(0)


# --- stopping ---------------------------------------------------------------------------------


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_stopper_first_request_stops_cleanly_and_a_later_one_forces() -> None:
    clock = _Clock()
    calls: list[str] = []
    stopper = RunStopper(calls.append, lambda: calls.append("force"), can_force=True, clock=clock)
    stopper.request("SIGINT")
    assert calls == ["SIGINT"] and stopper.signal_name == "SIGINT"
    clock.now += 0.2
    stopper.request("SIGINT")  # a double Ctrl-C is one
    assert calls == ["SIGINT"]
    clock.now += 1.0
    stopper.request("SIGTERM")
    assert calls == ["SIGINT", "force"] and stopper.signal_name == "SIGINT"


def test_stopper_never_forces_a_run_that_does_not_own_the_signals() -> None:
    clock = _Clock()
    calls: list[str] = []
    stopper = RunStopper(calls.append, lambda: calls.append("force"), can_force=False, clock=clock)
    stopper.request("abort")
    clock.now += 60
    stopper.request("abort")
    assert calls == ["abort"]


class _Loop:
    def __init__(self) -> None:
        self.passed: list[dict[str, Any]] = []

    def default_exception_handler(self, context: dict[str, Any]) -> None:
        self.passed.append(context)


def test_quiet_driver_loss_drops_only_the_lost_driver() -> None:
    loop = _Loop()
    lost = {"message": "Future exception was never retrieved", "exception": Exception(DRIVER_LOST)}
    other = {"message": "boom", "exception": RuntimeError(DRIVER_LOST)}
    quiet_driver_loss(loop, lost)  # type: ignore[arg-type]
    quiet_driver_loss(loop, other)  # type: ignore[arg-type]
    assert loop.passed == [other]


def _scenario_run(tmp_path: Path, name: str, source: str) -> tuple[ScenarioRun, Project]:
    project, index = make_project(tmp_path, {name: source})
    masker = SecretMasker()
    environment = RunEnvironment({}, tmp_path / protocol.ENV_FILE, masker)
    out = io.StringIO()
    run = ScenarioRun(
        ScenarioInputs(
            project,
            index.scenarios[name],
            index.helper_table,
            Config(root=tmp_path),
            masker,
            environment,
        ),
        RunOptions(out=out, quiet=True, log_stream=out, handle_signals=False),
    )
    return run, project


def test_abort_right_after_construction_does_not_raise(tmp_path: Path) -> None:
    run, project = _scenario_run(tmp_path, "passing", PASSING)
    run.abort()
    run.abort("abort")  # a second one is no force: this run does not own the signals
    assert run.signal_name == "SIGTERM"
    assert not project.runs_dir.exists()  # nothing made until run()


def test_abort_before_run_ends_the_run_aborted_before_any_browser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("UNOTEST_OUTPUT_TO_RUN_DIR", raising=False)
    run, project = _scenario_run(tmp_path, "passing", PASSING)
    run.abort("abort")
    result = run.run()
    assert (result.outcome, result.signal, result.steps, result.error) == (
        "aborted",
        "abort",
        0,
        None,
    )
    assert run.browser.page is None and run.browser.launched is None  # none was opened
    run_dir = project.root / result.run_dir
    assert [e["kind"] for e in read_events(run_dir)] == ["run:started", "run:finished"]
    assert read_events(run_dir)[-1]["outcome"] == "aborted"
    runtime = json.loads((run_dir / protocol.RUNTIME_FILE).read_text())
    assert runtime["state"] == "aborted"


# --- breakpoints, before any run directory -------------------------------------------------------


def test_a_bad_break_fails_before_anything_is_made(tmp_path: Path) -> None:
    project, index = make_project(tmp_path, {"passing": PASSING})
    scenario: ScenarioFile = index.scenarios["passing"]
    warnings: list[str] = []
    debug = DebugOptions(breaks=(("no-such-file", 5, None),))
    with pytest.raises(UsageError, match="--break no-such-file:5: no such scenario or helper"):
        prepare_breakpoints(debug, scenario, index.helper_table, project.root, warnings.append)
    assert not project.runs_dir.exists()


def test_breaks_resolve_to_statement_starts_with_a_note(tmp_path: Path) -> None:
    project, index = make_project(tmp_path, {"passing": PASSING})
    scenario = index.scenarios["passing"]
    warnings: list[str] = []
    debug = DebugOptions(breaks=((None, 5, None), ("passing", 6, 3)))
    breakpoints, file_keys = prepare_breakpoints(
        debug, scenario, index.helper_table, project.root, warnings.append
    )
    assert file_keys["passing"] == file_keys[""] == scenario.file
    assert breakpoints.hit(scenario.file, 5, 2)
    assert len(warnings) == 1  # 6:3 is no statement start: the nearest one is kept instead


def test_without_debug_no_breakpoint_is_read(tmp_path: Path) -> None:
    project, index = make_project(tmp_path, {"passing": PASSING})
    (tmp_path / protocol.DEBUGGER_FILE).write_text(
        json.dumps({"version": 1, "scenarios": {"passing": [{"line": 5, "col": 2}]}})
    )
    scenario = index.scenarios["passing"]
    breakpoints, _ = prepare_breakpoints(None, scenario, {}, project.root, lambda text: None)
    assert not breakpoints.hit(scenario.file, 5, 2)


# --- the page's title, refreshed through the bridge ---------------------------------------------


class _Page:
    def __init__(self) -> None:
        self.asked = 0

    async def title(self) -> str:
        self.asked += 1
        return "Shop"


def test_an_interrupted_title_refresh_leaves_no_unawaited_coroutine() -> None:
    """runtime.json's title is refreshed through the bridge; after an abort the bridge
    closes the coroutine unstarted, which must leave no RuntimeWarning on stderr."""
    page = _Page()

    async def main() -> None:
        bridge = LoopBridge(asyncio.get_running_loop())
        bridge.interrupt("aborted")
        with pytest.raises(Interrupt):
            bridge.call(_title_of(page))  # type: ignore[arg-type]

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        asyncio.run(main())
        gc.collect()
    # Only RuntimeWarning ("coroutine ... was never awaited") is this test's business:
    # gc.collect() may also finalise another test's unclosed file (a ResourceWarning).
    never_awaited = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert never_awaited == [] and page.asked == 0


def test_ctrl_c_is_the_prompt_s_only_while_the_scenario_runs_or_waits_at_a_pause() -> None:
    """Before the first statement (a webServer starting) or after the last, a Ctrl-C has
    no next statement to pause before: it stops the run as without a prompt."""
    from types import SimpleNamespace

    def state(open_steps: list[object], pause: object | None) -> bool:
        debugger = SimpleNamespace(current_pause=pause)
        run = SimpleNamespace(steps=SimpleNamespace(open=open_steps), debugger=debugger)
        return bool(ScenarioRun._in_scenario(run))  # type: ignore[arg-type]

    assert state([], None) is False  # not started, or ended
    assert state([object()], None) is True  # a statement runs
    assert state([], object()) is True  # paused
    assert ScenarioRun._in_scenario(SimpleNamespace(steps=None, debugger=None)) is False  # type: ignore[arg-type]
