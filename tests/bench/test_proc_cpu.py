"""``bench/proc_cpu.py``: the CPU a command's processes spent, as the collection bench
reports it (``--cpu``), measured on real child processes."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

_BENCH = Path(__file__).resolve().parents[2] / "bench" / "proc_cpu.py"

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="Linux /proc")


def _module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("proc_cpu", _BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# Spins until it has used this much CPU itself: how long that takes in wall time
# depends on the machine, the CPU it spends does not.
SPIN = "import time\nwhile time.process_time() < {seconds}: pass\n"


def test_the_cpu_of_processes_started_meanwhile_is_counted_by_kind() -> None:
    proc_cpu = _module()
    with proc_cpu.ProcessCpu(interval=0.01) as spent:
        subprocess.run([sys.executable, "-c", SPIN.format(seconds=0.3)], check=True)
        # A grandchild too, which has ended by the time the run does.
        grandchild = [sys.executable, "-c", SPIN.format(seconds=0.2)]
        parent = f"import subprocess; subprocess.run({grandchild!r})"
        subprocess.run([sys.executable, "-c", parent], check=True)
    by_kind = spent.by_kind()
    assert set(by_kind) == {"Python"}
    # At most one interval of each process is lost (it ended between two readings).
    assert 0.5 - 3 * 0.01 - 0.05 <= by_kind["Python"] <= 0.5 + 0.2


def test_a_child_seen_before_its_exec_is_counted_as_what_it_execs(tmp_path: Path) -> None:
    # A Python that forks, waits, then execs a program called "node": read between the
    # fork and the exec, the child shows its parent's command line.
    node = tmp_path / "node"
    node.symlink_to(sys.executable)
    child = [str(node), "-c", SPIN.format(seconds=0.3)]
    parent = (
        "import os, time\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    time.sleep(0.2)\n"
        f"    os.execv({child[0]!r}, {child!r})\n"
        "os.waitpid(pid, 0)\n"
    )
    proc_cpu = _module()
    with proc_cpu.ProcessCpu(interval=0.01) as spent:
        subprocess.run([sys.executable, "-c", parent], check=True)
    by_kind = spent.by_kind()
    assert by_kind.get("Node", 0.0) >= 0.3 - 3 * 0.01 - 0.05
    assert by_kind.get("Python", 0.0) < 0.25


def test_processes_running_before_are_not_counted() -> None:
    proc_cpu = _module()
    busy = subprocess.Popen([sys.executable, "-c", SPIN.format(seconds=60)])
    try:
        with proc_cpu.ProcessCpu(interval=0.01) as spent:
            subprocess.run([sys.executable, "-c", "pass"], check=True)
    finally:
        busy.kill()
        busy.wait()
    assert spent.by_kind().get("Python", 0.0) < 0.2


@pytest.mark.parametrize(
    ("cmdline", "kind"),
    [
        (
            "/usr/lib/chromium/chromium-headless-shell --headless --remote-debugging-pipe",
            "Chromium",
        ),
        ("/proc/self/exe --type=renderer --lang=en-US", "Chromium"),
        (".venv/lib/python3.11/site-packages/playwright/driver/node cli.js run-driver", "Node"),
        ("node /work/node_modules/@playwright/test/cli.js test --workers 2", "Node"),
        ("/work/main/.venv/bin/python /work/main/.venv/bin/unotest collection bench", "Python"),
        ("python3 -m runner.workers.main /tmp/project", "Python"),
        ("/usr/bin/sh -c true", "other"),
    ],
)
def test_kinds(cmdline: str, kind: str) -> None:
    assert _module().kind_of(cmdline) == kind
