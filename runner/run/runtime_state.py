"""``runtime.json`` of a run: where it is, its variables, its last failure, its page.

Written at once when its meaning changes (a failure, the debugger's pauses and resumes,
the start and the end) and at most every
:data:`~runner.store.runtime_file.PROGRESS_INTERVAL_S` while the steps run
(:class:`~runner.store.runtime_file.RuntimeFile`): one write and one page-title round
trip per step were most of a step's cost.
"""

from __future__ import annotations

from collections.abc import Callable

from dsl.interpreter import Step
from dsl.values import Value
from runner import events, protocol
from runner.project.secrets import cut_masked
from runner.run.steps import MAX_VAR_CHARS, Ended, OpenStep, StepListener, render_var
from runner.store.runtime_file import RuntimeFile

__all__ = ["RuntimeState"]


class RuntimeState(StepListener):
    """``write`` puts a state in runtime.json now (the debugger's ``write_state``); the
    steps' progress is written by the timer of ``runtime_file``.

    ``last_failure`` and ``breakpoints`` are read whenever a state is built;
    ``page_info`` only for a state written at once (it may cost a round trip to the
    page); ``secrets_count``: a variable rendered before a secret was registered is
    rendered again.
    """

    def __init__(
        self,
        runtime_file: RuntimeFile,
        run_id: str,
        scenario: str,
        test_fn: str,
        mask: Callable[[str], str],
        *,
        last_failure: Callable[[], protocol.LastFailure | None],
        breakpoints: Callable[[], dict[str, list[str]]] | None = None,
        page_info: Callable[[], dict[str, str] | None] = lambda: None,
        secrets_count: Callable[[], int] = lambda: 0,
    ) -> None:
        self.runtime_file = runtime_file
        self.run_id = run_id
        self.scenario = scenario
        self.test_fn = test_fn
        self.mask = mask
        self.last_failure = last_failure
        self.breakpoints = breakpoints
        self.page_info = page_info
        self.secrets_count = secrets_count
        self._page: protocol.PageInfo | None = None
        """The page as last asked, shown by progress states written later."""
        self._shown: dict[str, tuple[Value, int, int, str]] = {}
        """Each variable as last rendered: (its value, its length, the secrets then, the
        text)."""

    # --- told by the steps -------------------------------------------------------------

    def running(self, opened: OpenStep, step: Step) -> None:
        self.progress(step)

    def passed(self, ended: Ended) -> None:
        assert ended.step is not None
        self.progress(ended.step)

    def failed(self, ended: Ended) -> None:
        if ended.caught and ended.step is not None:
            self.progress(ended.step)  # an uncaught failure is written at once (went_on)

    def failure_skipped(self, failed: OpenStep, step: Step) -> None:
        self.progress(step)

    def went_on(self, step: Step) -> None:
        self.write("running", step)  # lastFailure is new: shown at once

    # --- writing ---------------------------------------------------------------------------

    def progress(self, step: Step) -> None:
        """runtime.json while steps run: written now when the last write is old enough,
        else built now (the step's variables are this thread's) and written by the
        timer, with the page as last asked (asking again costs a round trip)."""
        writer = self.runtime_file
        if writer.due():
            self.write("running", step)
            return
        number = writer.number()
        writer.progress(number, self._state("running", step, self._page, reuse=True))

    def write(
        self, state: protocol.RuntimeState, step: Step | None = None, *, page: bool = True
    ) -> None:
        """runtime.json now (a pause, a resume, a failure, the start and the end)."""
        writer = self.runtime_file
        number = writer.number()
        info = self.page_info() if page else None
        shown: protocol.PageInfo | None = None
        if info is not None:
            shown = {
                "url": cut_masked(info.get("url", ""), MAX_VAR_CHARS, self.mask),
                "title": cut_masked(info.get("title", ""), MAX_VAR_CHARS, self.mask),
            }
            self._page = shown
        writer.write_now(number, self._state(state, step, shown))

    def write_final(self, state: protocol.RuntimeState) -> None:
        """runtime.json outside any step (``starting`` and the terminal states).

        Written by the runner's event loop, never by the scenario thread, so it must
        not ask the page anything: ``page_info`` goes through the loop bridge, which
        raises ``Interrupt`` after an abort (a traceback instead of exit 130) and would
        block forever on the loop's own thread otherwise. No page is open at these
        points anyway (not yet, or being closed), so ``page`` is left out. A progress
        state still waiting for its timer is dropped: it is older.
        """
        try:
            self.write(state, None, page=False)
        finally:
            if state != "starting":  # even when the write failed: nothing older after it
                self.runtime_file.close()

    def _state(
        self,
        state: protocol.RuntimeState,
        step: Step | None,
        page: protocol.PageInfo | None,
        *,
        reuse: bool = False,
    ) -> protocol.RuntimeStateFile:
        variables = self._shown_vars(step, reuse) if step is not None else {}
        paused = step is not None and state.startswith("paused")
        return events.runtime_state(
            run_id=self.run_id,
            scenario=self.scenario,
            test_fn=self.test_fn,
            state=state,
            current=None if step is None else (step.file, step.line, step.col),
            variables=variables,
            call_stack=events.call_stack(step.frames()) if step is not None else [],
            failure=self.last_failure(),
            breakpoints=self.breakpoints() if self.breakpoints is not None else None,
            page=page,
            frame_vars=self._frame_vars(step, variables) if paused and step else None,
        )

    def _frame_vars(self, step: Step, innermost: dict[str, str]) -> list[dict[str, str]] | None:
        """At a pause inside a call, each caller's own variables, then the innermost
        frame's (``vars``); rendered only at pauses, where a person picks a frame."""
        frames = len(step.frames())
        if frames < 2:
            return None
        shown = [
            {name: render_var(value, self.mask) for name, value in step.variables(i).items()}
            for i in range(frames - 1)
        ]
        return [*shown, innermost]

    def _shown_vars(self, step: Step, reuse: bool) -> dict[str, str]:
        """The variables. A progress state is built around every step (the timer may
        write it) and rendering a big array each time made a loop beside it quadratic:
        with ``reuse``, a variable that still holds the very same value, of the same
        length, keeps its text. An element changed in place is then shown at the next
        state written at once (at most an interval later, or at a pause)."""
        secrets = self.secrets_count()
        shown: dict[str, str] = {}
        kept: dict[str, tuple[Value, int, int, str]] = {}
        for name, value in step.variables().items():
            size = len(value) if isinstance(value, list | dict | str) else -1
            last = self._shown.get(name) if reuse else None
            if last is not None and last[0] is value and last[1] == size and last[2] == secrets:
                text = last[3]
            else:
                text = render_var(value, self.mask)
            kept[name] = (value, size, secrets, text)
            shown[name] = text
        self._shown = kept
        return shown
