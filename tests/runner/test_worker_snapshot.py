"""A real worker process (``python -m runner.workers.main``, real Chromium) runs the
scenarios as they were when it started or last reloaded, though it parses each only when
ordered to run it; a scenario that does not parse is reported with its file:line:col; a
project it cannot load is a ``fatal`` report with the reason, not a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from sites import config_yaml, unotest_env, write_project

from runner.workers import messages


def scenario(n: int, body: str) -> str:
    return f"// id-snap-{n}\n// Snapshot {n}\n// #123456\nfunction test_snap_{n}() {{\n{body}\n}}\n"


class Worker:
    """One worker process, spoken to as its orchestrator does: JSON lines both ways."""

    def __init__(self, root: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "runner.workers.main", str(root)],
            cwd=root,
            env=unotest_env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def order(self, order: Any) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(order) + "\n")
        self.proc.stdin.flush()

    def report(self, kind: str) -> dict[str, Any]:
        """The next report of this kind; the scenario's output lines before it are kept
        in ``printed``."""
        assert self.proc.stdout is not None
        self.printed: list[str] = []
        for line in self.proc.stdout:
            message: dict[str, Any] = json.loads(line)
            if message["type"] == "output":
                self.printed.append(message["text"])
            if message["type"] in (kind, "fatal"):
                return message
        raise AssertionError(f"the worker ended before a {kind!r} report: {self.stderr()}")

    def stderr(self) -> str:
        assert self.proc.stderr is not None
        return self.proc.stderr.read()

    def exit(self) -> int:
        self.order(messages.exit_order())
        return self.proc.wait(timeout=60)


def test_edits_after_the_start_wait_for_a_reload_and_a_broken_file_says_where(
    tmp_path: Path, chromium_path: str
) -> None:
    root = write_project(
        tmp_path / "project",
        config_yaml(None, chromium=chromium_path),
        {
            "a": scenario(1, '  log("a", "v1")'),
            "b": scenario(2, '  log("b", "v1")'),
            "broken": scenario(3, "  let = 1"),
        },
    )
    worker = Worker(root)
    try:
        assert worker.report("ready")["type"] == "ready", worker.stderr()
        # b is edited after the worker started, before it ever ran b.
        (root / "unotest/e2e/b.test.js").write_text(scenario(2, '  log("b", "v2")'))
        worker.order(messages.run_order("b", None))
        first = worker.report("finished")
        assert first["result"]["outcome"] == "completed", first
        assert any("b v1" in line for line in worker.printed), worker.printed
        assert not any("b v2" in line for line in worker.printed)

        worker.order(messages.run_order("broken", None))
        broken = worker.report("finished")
        assert broken["error"]["error"].startswith(
            "scenario 'broken' cannot be loaded: unotest/e2e/broken.test.js:5:6: SyntaxError: "
        ), broken

        worker.order(messages.reload_order())
        worker.order(messages.run_order("b", None))
        second = worker.report("finished")
        assert second["result"]["outcome"] == "completed", second
        assert any("b v2" in line for line in worker.printed), worker.printed
        assert worker.exit() == 0
    finally:
        worker.proc.kill()
        worker.proc.wait()


def test_a_project_the_worker_cannot_load_is_a_fatal_report(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "project", "timeout: [not, a, mapping]\n", {"a": scenario(1, "  log(1)")}
    )
    worker = Worker(root)
    try:
        report = worker.report("ready")
        assert report["type"] == "fatal" and "timeout" in report["error"], report
        assert worker.proc.wait(timeout=60) == 2
        assert "Traceback" not in worker.stderr()
    finally:
        worker.proc.kill()
        worker.proc.wait()
