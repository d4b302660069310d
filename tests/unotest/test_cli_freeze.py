"""``unotest`` as a program leaves its objects to the OS at exit (``gc.freeze``: no last
collection over everything a run made), while ``main(argv)`` called in process (tests,
embedding) leaves the caller's garbage collector alone."""

from __future__ import annotations

import subprocess
import sys

PROBE = """\
import gc, sys
from unotest.cli import main
sys.argv = ["unotest", "--version"]
{call}
print(gc.get_freeze_count() > 0)
"""


def frozen_after(call: str) -> bool:
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(call=call)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.strip().splitlines()[-1] == "True"


def test_the_program_freezes_its_objects_before_the_interpreter_ends() -> None:
    assert frozen_after("main()")


def test_main_called_with_arguments_keeps_the_callers_collector() -> None:
    assert not frozen_after('main(["--version"])')
