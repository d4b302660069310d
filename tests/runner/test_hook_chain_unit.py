"""runner.run.hook_chain with its steps and their listeners, in-process: the step hook
driven with plain step objects.

A real :class:`RunDirectory` in ``tmp_path`` receives the events and runtime.json; the
console goes to a ``StringIO`` (or a fake terminal). No interpreter, no browser: a step
is a small object with what the hook reads (place, text, frames, variables).
"""

from __future__ import annotations

import asyncio
import io
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from events import read_events

from dsl.errors import CallFrame, Interrupt, ScriptError
from dsl.interpreter import Directive
from dsl.values import RegexValue, Value
from runner.browser.bridge import LoopBridge
from runner.builtins.locators import LocatorValue
from runner.project.secrets import MASK, SecretMasker
from runner.run.console import ConsoleOutput
from runner.run.console import step_line as console_line
from runner.run.hook_chain import HookChain, record_steps
from runner.run.runtime_state import RuntimeState
from runner.run.steps import MAX_TEXT, MAX_VAR_CHARS, StepRecord, render_var
from runner.store.rundir import RunDirectory

SECRET = "s3cr3t-T0ken-value"
FILE = "unotest/e2e/shop.test.js"
HELPER = "unotest/e2e/_helpers/sign_in.js"


@dataclass
class Program:
    """What the steps ask of a program: a statement's text, cut to ``limit``."""

    texts: dict[int, str]
    asked: list[int] = field(default_factory=list)

    def statement_text(self, stmt: int, limit: int = 200) -> str:
        self.asked.append(limit)
        text = self.texts[stmt]
        return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass
class FakeStep:
    """A plain step: where it is, what it says, its frames and variables."""

    program: Program
    stmt: int
    line: int
    col: int
    file: str = FILE
    depth: int = 0
    chain: tuple[CallFrame, ...] = (CallFrame("test_shop", FILE, 1),)
    scope: dict[str, Value] = field(default_factory=dict)
    caught: bool = False

    def frames(self) -> tuple[CallFrame, ...]:
        return self.chain

    def variables(self) -> dict[str, Value]:
        return dict(self.scope)


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@dataclass
class Harness:
    hook: HookChain
    steps: StepRecord
    state: RuntimeState
    console: ConsoleOutput
    rundir: RunDirectory
    stream: io.StringIO
    bridge: LoopBridge

    def events(self) -> list[dict[str, Any]]:
        return read_events(self.rundir.path)

    def runtime(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((self.rundir.path / "runtime.json").read_text())
        return data

    def step(self, text: str, line: int, col: int = 2, **kw: Any) -> FakeStep:
        program = Program({line: text})
        return FakeStep(program, line, line, col, **kw)


@pytest.fixture
def make(tmp_path: Path) -> Iterator[Callable[..., Harness]]:
    made: list[tuple[RunDirectory, asyncio.AbstractEventLoop]] = []

    def build(
        stream: io.StringIO | None = None,
        page_info: Callable[[], dict[str, str] | None] = lambda: None,
        quiet: bool = False,
    ) -> Harness:
        masker = SecretMasker()
        masker.add(SECRET)
        rundir = RunDirectory.create(tmp_path / "unotest" / ".runs", "scenario", "shop")
        loop = asyncio.new_event_loop()
        made.append((rundir, loop))
        out = io.StringIO() if stream is None else stream
        console = ConsoleOutput(out, masker.mask, quiet=quiet)
        bridge = LoopBridge(loop)
        steps, runtime = record_steps(rundir, "shop", "test_shop", console, page_info=page_info)
        return Harness(HookChain(steps, bridge), steps, runtime, console, rundir, out, bridge)

    yield build
    for rundir, loop in made:
        rundir.close()
        loop.close()


# --- a step that passes, one that fails -----------------------------------------------------


def test_a_passing_step_is_started_then_ok_with_runtime_json_and_a_console_line(
    make: Callable[..., Harness],
) -> None:
    h = make()
    step = h.step('click("Save")', 3, scope={"count": 2.0, "name": "ann"})
    assert h.hook.before_statement(step) is Directive.PROCEED  # type: ignore[arg-type]

    [started] = h.events()
    assert started == {
        "kind": "step:started",
        "line": 3,
        "col": 2,
        "text": 'click("Save")',
        "file": FILE,
        "depth": 0,
        "t": started["t"],
    }
    running = h.runtime()
    assert running["state"] == "running"
    assert running["current"] == {"line": 3, "col": 2} and running["file"] == FILE
    assert running["vars"] == {"count": "2", "name": '"ann"'}
    assert running["callStack"] == [] and running["lastFailure"] is None
    assert "page" not in running  # page_info answered None

    assert h.hook.after_statement(step, None) is Directive.PROCEED  # type: ignore[arg-type]
    _, ok = h.events()
    assert ok["kind"] == "step:ok" and ok["durationMs"] >= 0
    assert h.stream.getvalue().splitlines() == [
        f'  ✓ 3:2  click("Save")  ({ok["durationMs"]:.0f} ms)'
    ]
    assert h.steps.step_count == 1 and h.steps.open == []
    assert h.steps.failures == {}


def test_a_failing_step_records_where_the_error_happened(
    make: Callable[..., Harness],
) -> None:
    h = make()
    frames = (CallFrame("test_shop", FILE, 4), CallFrame("sign_in", HELPER, 2))
    outer = h.step("sign_in()", 4)
    inner = h.step('expect_text(css("#hi"), "Hi")', 2, file=HELPER, depth=1, chain=frames)
    inner.scope = {"user": "bob"}
    error = ScriptError("AssertionError", 'expected "Hi"', HELPER, 2, 2)

    h.hook.before_statement(outer)  # type: ignore[arg-type]
    h.hook.before_statement(inner)  # type: ignore[arg-type]
    h.hook.after_statement(inner, error)  # type: ignore[arg-type]
    h.hook.after_statement(outer, error)  # type: ignore[arg-type]

    kinds = [(e["kind"], e.get("line"), e.get("depth")) for e in h.events()]
    assert kinds == [
        ("step:started", 4, 0),
        ("step:started", 2, 1),
        ("step:fail", None, None),
        ("step:fail", None, None),
    ]
    fails = [e for e in h.events() if e["kind"] == "step:fail"]
    assert [(e["error"], e["errorName"]) for e in fails] == [
        ('expected "Hi"', "AssertionError"),
    ] * 2
    # The innermost step is where the error was first reported; the outer one does not
    # replace it.
    point = h.steps.failure_for(error)
    assert point is not None
    assert (point.step_index, point.line, point.file, point.text) == (
        1,
        2,
        HELPER,
        'expect_text(css("#hi"), "Hi")',
    )
    assert point.call_stack == [{"fn": "sign_in", "file": HELPER, "line": 2}]
    assert point.variables == {"user": '"bob"'}
    chain = [
        {"file": FILE, "line": 4, "col": 2, "fn": "test_shop"},
        {"file": HELPER, "line": 2, "col": 2, "fn": "sign_in"},
    ]
    assert point.chain == chain
    assert h.runtime()["lastFailure"] == {
        "line": 2,
        "col": 2,
        "error": {"message": 'expected "Hi"', "name": "AssertionError"},
        "file": HELPER,
        "stack": chain,
    }
    lines = h.stream.getvalue().splitlines()
    assert [line.split()[0] for line in lines] == ["…", "✗", "✗"]
    assert lines[0].startswith("  … 4:2  sign_in()")  # off a terminal: the call first
    assert lines[1].startswith("    ✗ _helpers/sign_in.js:2:2  ")  # by its depth, its file
    assert lines[2].startswith("  ✗ 4:2  ")


# --- masking and bounds ---------------------------------------------------------------------


def test_secrets_are_masked_in_the_text_the_message_the_variables_and_the_console(
    make: Callable[..., Harness],
) -> None:
    h = make()
    step = h.step(f'fill("Token", "{SECRET}")', 5, scope={"token": SECRET})
    error = ScriptError("Error", f"rejected {SECRET}", FILE, 5, 2)
    h.hook.before_statement(step)  # type: ignore[arg-type]
    running = h.runtime()
    h.hook.after_statement(step, error)  # type: ignore[arg-type]

    started, fail = h.events()
    assert started["text"] == f'fill("Token", "{MASK}")'
    assert fail["error"] == f"rejected {MASK}"
    assert running["vars"] == {"token": f'"{MASK}"'}
    assert h.runtime()["lastFailure"]["error"]["message"] == f"rejected {MASK}"
    point = h.steps.failure_for(error)
    assert point is not None and point.variables == {"token": f'"{MASK}"'}
    everything = (h.rundir.path / "steps.jsonl").read_text() + h.stream.getvalue()
    everything += (h.rundir.path / "runtime.json").read_text()
    assert SECRET not in everything
    assert MASK in h.stream.getvalue()


def test_the_step_text_is_masked_before_its_cut_to_200_characters(
    make: Callable[..., Harness],
) -> None:
    h = make()
    # The secret straddles character 200: cut first, its start would stay readable.
    text = "log(" + "x" * 190 + f'"{SECRET}")'
    step = h.step(text, 7)
    h.hook.before_statement(step)  # type: ignore[arg-type]
    h.hook.after_statement(step, None)  # type: ignore[arg-type]
    started = h.events()[0]
    assert len(started["text"]) == MAX_TEXT and started["text"].endswith("…")
    assert SECRET[:3] not in started["text"]
    assert step.program.asked[0] > MAX_TEXT  # the longer text was asked for, then cut here


def test_a_long_error_message_is_cut_to_4_kb_in_steps_jsonl_and_runtime_json(
    make: Callable[..., Harness],
) -> None:
    h = make()
    step = h.step("expect_equal(big, 1)", 9)
    error = ScriptError("AssertionError", "m" * 100_000, FILE, 9, 2)
    h.hook.before_statement(step)  # type: ignore[arg-type]
    h.hook.after_statement(step, error)  # type: ignore[arg-type]
    fail = h.events()[-1]
    assert len(fail["error"]) == MAX_VAR_CHARS and fail["error"].endswith("…")
    message = h.runtime()["lastFailure"]["error"]["message"]
    assert len(message) == MAX_VAR_CHARS
    # The error itself is not cut: the failure bundle takes it whole.
    point = h.steps.failure_for(error)
    assert point is not None and len(point.error.message) == 100_000


def test_render_var_shows_json_readable_locators_and_regexes_cut_to_4_kb() -> None:
    assert render_var(None) == "null"
    assert render_var([1.0, "a", True]) == '[1, "a", true]'
    assert render_var({"k": 1.5}) == '{"k": 1.5}'
    assert render_var(LocatorValue((("css", ("#cart li",)), ("nth", (0,))))) == (
        '<Locator css="#cart li" >> nth=0>'
    )
    assert render_var(RegexValue("sa+ve", "i", re.compile("sa+ve", re.I))) == "/sa+ve/i"
    big = render_var("y" * 10_000)
    assert len(big) == MAX_VAR_CHARS and big.startswith('"yyy') and big.endswith("…")
    masker = SecretMasker()
    masker.add(SECRET)
    assert render_var({"t": SECRET}, masker.mask) == f'{{"t": "{MASK}"}}'
    assert render_var({"t": SECRET}) == f'{{"t": "{SECRET}"}}'  # no mask given, none applied


# --- the console ----------------------------------------------------------------------------


def test_console_lines_collapse_whitespace_shorten_to_100_and_show_seconds(
    make: Callable[..., Harness],
) -> None:
    h = make()
    assert console_line("✓", 0, "3:2", "a\n   b\tc", 12.4) == "  ✓ 3:2  a b c  (12 ms)"
    # A string literal's own spaces are the scenario's: shown as written.
    said = 'let s = "  Hello, World  "'
    assert console_line("✓", 0, "3:2", said, 1) == f"  ✓ 3:2  {said}  (1 ms)"
    assert console_line("✗", 2, "3:2", "x", 1500) == "      ✗ 3:2  x  (1.50 s)"
    assert console_line("…", 0, "1:0", "y" * 150, None) == "  … 1:0  " + "y" * 99 + "…"
    step = h.step("z" * 150, 4)
    h.hook.before_statement(step)  # type: ignore[arg-type]
    h.hook.after_statement(step, None)  # type: ignore[arg-type]
    [line] = h.stream.getvalue().splitlines()
    assert "z" * 99 + "…  (" in line


def test_on_a_terminal_the_running_step_is_overwritten_by_its_result(
    make: Callable[..., Harness],
) -> None:
    h = make(stream=Terminal())
    step = h.step("wait(10)", 6)
    h.hook.before_statement(step)  # type: ignore[arg-type]
    assert h.stream.getvalue() == "  … 6:2  wait(10)"  # no newline: it will be replaced
    h.hook.after_statement(step, None)  # type: ignore[arg-type]
    shown = h.stream.getvalue()
    assert shown.startswith("  … 6:2  wait(10)\r\033[K  ✓ 6:2  wait(10)  (")
    assert shown.endswith(" ms)\n")


def test_a_line_printed_while_a_step_runs_ends_the_running_line_first() -> None:
    out = Terminal()
    console = ConsoleOutput(out, lambda text: text.replace("pw", "**"))
    console.running("  … 1:2  step")
    console.line("log: pw")
    console.finish("  ✓ 1:2  step")
    assert out.getvalue() == "  … 1:2  step\nlog: **\n  ✓ 1:2  step\n"


def test_no_running_line_off_a_terminal_and_nothing_at_all_when_quiet() -> None:
    plain = io.StringIO()
    console = ConsoleOutput(plain, lambda text: text)
    console.running("  … 1:2  step")
    console.finish("  ✓ 1:2  step")
    assert plain.getvalue() == "  ✓ 1:2  step\n"
    quiet_out = Terminal()
    quiet = ConsoleOutput(quiet_out, lambda text: text, quiet=True)
    quiet.running("a")
    quiet.line("b")
    quiet.finish("c")
    assert quiet_out.getvalue() == ""


def test_a_closed_console_never_stops_the_run(make: Callable[..., Harness]) -> None:
    gone = io.StringIO()
    h = make(stream=gone)
    gone.close()  # a terminal that went away: writes raise ValueError
    step = h.step("log(1)", 2)
    h.hook.before_statement(step)  # type: ignore[arg-type]
    h.hook.after_statement(step, None)  # type: ignore[arg-type]
    h.console.line("still fine")
    assert [e["kind"] for e in h.events()] == ["step:started", "step:ok"]


# --- interrupts, unwinding, runtime.json outside a step ---------------------------------------


def test_an_interrupt_is_raised_after_the_step_is_opened_and_closes_as_failed(
    make: Callable[..., Harness],
) -> None:
    h = make()
    outer = h.step("loop()", 3)
    inner = h.step("while (true) {}", 8, depth=1)
    h.hook.before_statement(outer)  # type: ignore[arg-type]
    h.bridge.interrupt("scenario timeout")
    with pytest.raises(Interrupt):
        h.hook.before_statement(inner)  # type: ignore[arg-type]
    # The interrupted statement is a step of its own, open until the unwinding closes it.
    assert [e["kind"] for e in h.events()] == ["step:started", "step:started"]
    assert [o.line for o in h.steps.open] == [3, 8]
    h.steps.close_open_steps("Timeout: the scenario took longer than 1 s", "TimeoutError")
    fails = h.events()[2:]
    assert [(e["kind"], e["errorName"]) for e in fails] == [("step:fail", "TimeoutError")] * 2
    assert h.steps.open == []
    lines = h.stream.getvalue().splitlines()
    assert [line.strip().split()[:2] for line in lines] == [
        ["…", "3:2"],  # off a terminal, the call says it started before its step ends
        ["✗", "8:2"],
        ["✗", "3:2"],
    ]


def test_runtime_json_carries_the_page_inside_a_step_and_never_asks_outside_one(
    make: Callable[..., Harness],
) -> None:
    asked: list[int] = []

    def page_info() -> dict[str, str]:
        asked.append(1)
        return {"url": f"http://127.0.0.1/?t={SECRET}", "title": "Shop"}

    h = make(page_info=page_info)
    h.state.write_final("starting")
    assert asked == []
    starting = h.runtime()
    assert starting["state"] == "starting" and starting["current"] is None
    assert "page" not in starting and "file" not in starting
    assert starting["vars"] == {} and starting["callStack"] == []

    step = h.step('goto("/")', 2)
    h.hook.before_statement(step)  # type: ignore[arg-type]
    assert asked == [1]
    assert h.runtime()["page"] == {"url": f"http://127.0.0.1/?t={MASK}", "title": "Shop"}
    h.hook.after_statement(step, None)  # type: ignore[arg-type]
    h.state.write_final("completed")
    # the step's end came within the progress interval: kept for the timer with the
    # page as last asked (no second round trip), then dropped by the end
    assert len(asked) == 1
    assert h.runtime()["state"] == "completed" and "page" not in h.runtime()


def _whole_then_cut(value: Value, mask: Callable[[str], str] | None) -> str:
    """render_var as it was: the whole JSON text, then masked and cut."""
    from dsl.values import to_json_data
    from runner.project.secrets import cut_masked

    text = json.dumps(to_json_data(value, display=True), ensure_ascii=False)
    return cut_masked(text, MAX_VAR_CHARS, mask)


def test_render_var_of_a_huge_value_reads_only_its_head_and_shows_the_same() -> None:
    masker = SecretMasker()
    masker.add(SECRET)
    cases: list[Value] = [
        [f"item number {i}" for i in range(100_000)],
        {f"k{i}": [float(i), None, True, {"s": "é\n"}] for i in range(20_000)},
        ["x" * 4090, SECRET, "tail"],  # the secret straddles the 4 KB cut
        [SECRET * 3000],  # masking shrinks the head a lot
        ["short", 1.5, float("nan")],
    ]
    for value in cases:
        for mask in (None, masker.mask):
            shown = render_var(value, mask)
            assert len(shown) <= MAX_VAR_CHARS
            assert SECRET not in (shown if mask else "")
            if value != cases[3] or mask is None:
                assert shown == _whole_then_cut(value, mask)
    # Masking that shrinks the head: the shown text is a safe prefix of the old one.
    shown = render_var(cases[3], masker.mask)
    assert shown.endswith("…") and _whole_then_cut(cases[3], masker.mask).startswith(shown[:-1])


def test_progress_states_render_a_variable_again_only_when_it_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A progress state is built around every step: rendering a big array each time
    made every step of a loop beside it cost the array's size (20 s for 8,000 steps)."""
    import runner.run.runtime_state as runtime_module
    from runner.store.runtime_file import RuntimeFile

    rendered: list[Value] = []
    real = runtime_module.render_var

    def counting(value: Value, mask: Callable[[str], str] | None = None) -> str:
        rendered.append(value)
        return real(value, mask)

    monkeypatch.setattr(runtime_module, "render_var", counting)
    masker = SecretMasker()
    rundir = RunDirectory.create(tmp_path / "unotest" / ".runs", "scenario", "shop")
    loop = asyncio.new_event_loop()
    try:
        steps, runtime = record_steps(
            rundir, "shop", "test_shop", ConsoleOutput(io.StringIO(), masker.mask),
            runtime_file=RuntimeFile(rundir.write_runtime, interval=3600),
            secrets_count=lambda: len(masker),
        )  # fmt: skip
        hook = HookChain(steps, LoopBridge(loop))
        big = [f"item {i}" for i in range(5000)]
        program = Program({3: "t += 1"})
        for t in range(10):
            step = FakeStep(program, 3, 3, 2, scope={"big": big, "t": float(t)})
            hook.before_statement(step)
            hook.after_statement(step, None)
        # The first state was written at once (fresh); then big kept its text.
        assert sum(1 for v in rendered if v is big) == 1
        assert sum(1 for v in rendered if isinstance(v, float)) >= 10
        big.append("one more")  # its length changed: rendered again
        masker.add("item 4999")  # a secret registered since: rendered again
        step = FakeStep(program, 3, 3, 2, scope={"big": big, "t": 1.0})
        hook.before_statement(step)
        assert sum(1 for v in rendered if v is big) == 2
        masker.add("item 0")
        hook.after_statement(step, None)
        assert sum(1 for v in rendered if v is big) == 3
        # A state written at once (a pause, the end) renders everything afresh.
        runtime.write("paused-step", step, page=False)
        assert sum(1 for v in rendered if v is big) == 4
        assert "item 0" not in json.loads((rundir.path / "runtime.json").read_text())["vars"]["big"]
    finally:
        rundir.close()
        loop.close()
