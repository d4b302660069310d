"""``unotest`` started as a subprocess by the browser tests of hooks and expect_poll.

``launch`` (a fixture: import it into the test module) starts ``unotest ARGS`` in a
project with extra environment variables, its output in files under ``tmp_path``;
every process it started is stopped at teardown. A :class:`Run` reads its output,
its run directory, steps.jsonl and runtime.json. A scenario's own log lines are the
ones that start with ``@ `` (:meth:`Run.logged`).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from events import read_events
from procs import stop_tree, wait_for_run_dir
from sites import unotest_env

RUN_TIMEOUT_S = 90
_BIN = Path(sys.executable).with_name("unotest")
UNOTEST = [str(_BIN)] if _BIN.is_file() else [sys.executable, "-m", "unotest"]


@dataclass
class Run:
    proc: subprocess.Popen[bytes]
    project: Path
    out_path: Path
    err_path: Path
    _run_dir: Path | None = None

    @property
    def stdout(self) -> str:
        return self.out_path.read_text(errors="replace")

    @property
    def stderr(self) -> str:
        return self.err_path.read_text(errors="replace")

    @property
    def run_dir(self) -> Path:
        if self._run_dir is None:
            self._run_dir = wait_for_run_dir(
                self.project, self.proc, 45, lambda: f"{self.stdout}\n{self.stderr}"
            )
        return self._run_dir

    def wait(self) -> int:
        try:
            code = self.proc.wait(timeout=RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise AssertionError(
                f"unotest did not end within {RUN_TIMEOUT_S} s\n{self.stdout}\n{self.stderr}"
            ) from None
        assert "Traceback" not in self.stderr + self.stdout, self.stderr
        return code

    def events(self) -> list[dict[str, Any]]:
        return read_events(self.run_dir, finished=self.proc.poll() is not None)

    def runtime(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((self.run_dir / "runtime.json").read_text())
        return data

    def logged(self) -> list[str]:
        """What the scenario logged: its log lines start with ``@ `` (the prefix dropped).

        Found anywhere on a line, not only at its start: the runner's own console lines
        (a signal's notice) come from another thread and may share a line with a log
        line; a step's text quotes the log call's ``"@ …"``, which is left out.
        """
        return re.findall(r'(?<!")@ ([^\n]*)', self.stdout)


@pytest.fixture
def launch(tmp_path: Path) -> Iterator[Callable[..., Run]]:
    """``launch(project, *args, **env)`` starts ``unotest ...``; all stopped at teardown."""
    started: list[subprocess.Popen[bytes]] = []

    def start(project: Path, *args: str, **env: str) -> Run:
        index = len(started)
        out_path, err_path = tmp_path / f"run{index}.out", tmp_path / f"run{index}.err"
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            proc = subprocess.Popen(
                [*UNOTEST, *args],
                cwd=project,
                env=unotest_env(NO_COLOR="1", **env),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
            )
        started.append(proc)
        return Run(proc, project, out_path, err_path)

    try:
        yield start
    finally:
        for proc in started:
            if proc.poll() is None:
                stop_tree(proc)
