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


COLLECTOR = """\
import gc, sys
import unotest.cli as cli
seen = []
def command(args):
    seen.append((gc.isenabled(), gc.get_freeze_count() > 0))
    return 0
cli._command = lambda name: command
sys.argv = ["unotest", *sys.argv[1:]]
code = cli.main({argv})
print(seen, gc.isenabled(), code)
"""


def collector_seen(argv: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", COLLECTOR.format(argv=argv), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.strip().splitlines()[-1]


def test_the_program_collects_while_its_command_runs_and_after() -> None:
    """Off during the imports only: the command runs with the collector on (and what
    was imported frozen), and a usage error leaves it on too."""
    assert collector_seen("", "list") == "[(True, True)] True 0"
    assert collector_seen("", "list", "--no-such-option") == "[] True 2"


def test_main_called_with_arguments_never_turns_the_collector_off() -> None:
    assert collector_seen('["list"]') == "[(True, False)] True 0"
