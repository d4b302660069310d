"""The ``unotest`` command line: argument parsing and the one place errors become exit codes.

Exit codes (runner.md §8): 0 all passed / clean, 1 a scenario failed or a check found
problems, 2 usage or configuration error, 130 aborted by SIGINT. Errors are one clear
sentence on stderr; ``UNOTEST_DEBUG=1`` adds the traceback.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path

from unotest.errors import UnotestError, UsageError

__all__ = ["main"]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_ABORTED = 130


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, so usage errors share the one exit path."""

    def error(self, message: str) -> None:  # type: ignore[override]
        # argparse words an unknown command as "argument COMMAND: invalid choice: ...".
        bad = re.match(r"argument COMMAND: invalid choice: '(.*?)'", message)
        if bad is not None:
            commands = sorted(_COMMANDS)
            close = difflib.get_close_matches(bad.group(1), commands, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            message = f"unknown command '{bad.group(1)}'{hint}; commands: {', '.join(commands)}"
        raise UsageError(f"{message} (see '{self.prog} --help')")


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="unotest", description="A scenario debugger runner for browser end-to-end tests."
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    check = sub.add_parser("check", help="parse and statically check scenarios and helpers")
    check.add_argument(
        "paths", nargs="*", metavar="PATH", help="files or folders (default: the whole project)"
    )
    check.add_argument(
        "--root", type=Path, help="project root (default: found from the working directory)"
    )
    check.add_argument("--json", action="store_true", help="print the problems as JSON")

    listing = sub.add_parser("list", help="list scenarios, helpers, collections and parse errors")
    listing.add_argument("--root", type=Path, help="project root")
    listing.add_argument("--json", action="store_true", help="print the protocol shapes as JSON")

    e2e = sub.add_parser("e2e", help="run one scenario in a real browser")
    e2e.add_argument(
        "scenario", help="scenario name (e.g. auth/signin-flow) or the path of its file"
    )
    e2e.add_argument("--root", type=Path, help="project root")
    e2e.add_argument("--headed", action="store_true", help="show the browser window")
    e2e.add_argument("--json", action="store_true", help="print the result as JSON on stdout")
    e2e.add_argument("--debug", action="store_true", help="pause at breakpoints and failures")
    e2e.add_argument(
        "--break",
        dest="breaks",
        action="append",
        default=[],
        metavar="L[:C]",
        help="breakpoint in the scenario (or FILE:L[:C]); implies --debug; repeatable",
    )
    e2e.add_argument("--step", action="store_true", help="pause before the first statement")

    coll = sub.add_parser("collection", help="run a collection with parallel workers")
    coll.add_argument("name", help="collection name (a file under unotest/e2e/_collections/)")
    coll.add_argument("--workers", type=int, default=1, metavar="N", help="worker processes")
    coll.add_argument("--bail", action="store_true", help="stop after the first failure")
    coll.add_argument("--shard", metavar="i/n", help="run the i-th of n deterministic slices")
    coll.add_argument(
        "--reporter", metavar="LIST", help="list, junit=PATH, json=PATH (comma-separated)"
    )
    coll.add_argument("--headed", action="store_true", help="show the browsers")
    coll.add_argument("--root", type=Path, help="project root")

    mcp = sub.add_parser("mcp", help="an MCP server on stdio for agents")
    mcp.add_argument("--root", type=Path, help="project root")

    dbg = sub.add_parser("dbg", help="send a debugger command to a running scenario")
    dbg.add_argument("run_id", metavar="RUN_ID", help="the run (or a unique prefix of its id)")
    dbg.add_argument(
        "words",
        nargs=argparse.REMAINDER,
        metavar="COMMAND",
        help="step|continue|pause|abort|retry|skip|step-over|step-out|"
        "break L:C|clear L:C|eval EXPR",
    )
    dbg.add_argument("--root", type=Path, help="project root")
    dbg.add_argument("--json", action="store_true", help="print the runner's answers as JSON")

    inspect = sub.add_parser("inspect", help="show a run's runtime.json readably")
    inspect.add_argument("run_id", metavar="RUN_ID", help="the run (or a unique prefix of its id)")
    inspect.add_argument("--root", type=Path, help="project root")
    inspect.add_argument("--json", action="store_true", help="print runtime.json as it is")

    init = sub.add_parser("init", help="scaffold a project that passes on its first run")
    init.add_argument("directory", nargs="?", default=".", help="where (default: here)")

    doctor = sub.add_parser("doctor", help="report Python, Playwright, browser and config")
    doctor.add_argument("--root", type=Path, help="project root")

    runs = sub.add_parser("runs", help="list runs with their status")
    runs.add_argument("--root", type=Path, help="project root")
    runs.add_argument("--json", action="store_true", help="print a JSON list of RunMeta")
    runs.add_argument("--limit", type=int, metavar="N", help="show only the N newest runs")
    return parser


# Each command's module is imported only when that command runs: `unotest dbg` must
# not pay for Playwright or the MCP SDK (seconds) on every call.
_COMMANDS: dict[str, tuple[str, str]] = {
    "check": ("unotest.commands", "check_command"),
    "list": ("unotest.commands", "list_command"),
    "runs": ("unotest.runs", "runs_command"),
    "e2e": ("unotest.e2e", "e2e_command"),
    "init": ("unotest.scaffold", "init_command"),
    "doctor": ("unotest.doctor", "doctor_command"),
    "dbg": ("unotest.dbg", "dbg_command"),
    "inspect": ("unotest.dbg", "inspect_command"),
    "collection": ("unotest.collection_cmd", "collection_command"),
    "mcp": ("unotest.mcp_server", "mcp_command"),
}


def _command(name: str) -> Callable[[argparse.Namespace], int]:
    import importlib

    module_name, function = _COMMANDS[name]
    command: Callable[[argparse.Namespace], int] = getattr(
        importlib.import_module(module_name), function
    )
    return command


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; never lets a traceback reach the user unless asked to."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    try:
        _tolerate_unencodable_output()
        parser = _build_parser()
        args, extra = parser.parse_known_args(args_list)
        if isinstance(getattr(args, "paths", None), list):
            # `check a --json b`: argparse stops the PATH list at the option.
            args.paths.extend(e for e in extra if not e.startswith("-"))
            extra = [e for e in extra if e.startswith("-")]
        if extra:
            where = f"unotest {args.command}" if args.command else "unotest"
            raise UsageError(f"unrecognized arguments: {' '.join(extra)} (see '{where} --help')")
        if args.version:
            from importlib.metadata import version

            print(f"unotest {version('unotest')}")
            return EXIT_OK
        if args.command is None:
            parser.print_help(sys.stderr)
            raise UsageError("no command given (see 'unotest --help')")
        return _command(args.command)(args)
    except UnotestError as err:
        _report(str(err))
        return err.exit_code
    except KeyboardInterrupt:
        _report("interrupted")
        return EXIT_ABORTED
    except BrokenPipeError:
        return EXIT_OK
    except Exception as err:
        _report(f"internal error: {type(err).__name__}: {err} (set UNOTEST_DEBUG=1 for details)")
        return EXIT_USAGE


def _tolerate_unencodable_output() -> None:
    """A file name or title the terminal cannot encode must not become a crash."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


# C0 and C1 controls (ESC starts a terminal escape sequence), DEL, and the Unicode line
# and paragraph separators: shown as escapes, so a message stays one line of plain text
# whatever file name, scenario name or YAML value it quotes. A tab is harmless.
_UNPRINTABLE = {
    i: f"\\x{i:02x}" if i < 0x100 else f"\\u{i:04x}"
    for i in (*range(0x00, 0x09), *range(0x0A, 0x20), *range(0x7F, 0xA0), 0x2028, 0x2029)
}


def one_line(text: str) -> str:
    """``text`` with control characters and line separators shown as escapes."""
    return text.translate(_UNPRINTABLE)


def _report(message: str) -> None:
    if os.environ.get("UNOTEST_DEBUG") == "1":
        traceback.print_exc()
    print(f"unotest: {one_line(message)}", file=sys.stderr)


def json_dump(data: object) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2, allow_nan=False)
