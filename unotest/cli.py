"""The ``unotest`` command line: argument parsing and the one place errors become exit codes.

Exceptions of the product's tree (``runner.errors``) reach ``main`` and leave it as one
clear sentence on stderr and the exit code ``unotest.exit_codes`` maps them to;
``UNOTEST_DEBUG=1`` adds the traceback. Each command lives in ``unotest/commands/``,
in a module named after it, imported only when that command runs.
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from runner.errors import UnotestError, UsageError
from runner.text import did_you_mean, one_line
from unotest.exit_codes import EXIT_OK, EXIT_USAGE, exit_code_for

__all__ = ["main"]


def _terminal_columns() -> int:
    """``shutil.get_terminal_size().columns`` without importing shutil (with bz2 and
    lzma, 4 ms of every command: argparse's formatter imports it at each argument)."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


class _Formatter(argparse.HelpFormatter):
    """argparse's help, as wide as the terminal (as argparse computes it)."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24) -> None:
        super().__init__(prog, indent_increment, max_help_position, _terminal_columns() - 2)


class _RawFormatter(argparse.RawDescriptionHelpFormatter, _Formatter):
    """:class:`_Formatter` keeping the description's and epilog's own line breaks."""


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, so usage errors share the one exit path."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]
        # argparse words an unknown command as "argument COMMAND: invalid choice: ...".
        bad = re.match(r"argument COMMAND: invalid choice: '(.*?)'", message)
        if bad is not None:
            commands = sorted(_COMMANDS)
            hint = did_you_mean(bad.group(1), commands)
            message = f"unknown command '{bad.group(1)}'{hint}; commands: {', '.join(commands)}"
        raise UsageError(f"{message} (see '{self.prog} --help')")


class _Unused(_Parser):
    """The parser of a command this command line does not name: its arguments are
    dropped as they are added, and it is not one of the choices. Made without
    ``__init__`` (:meth:`_Commands.add_parser`): argparse's asks gettext for its titles,
    a search of the locale folders each time."""

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        return argparse.Action([], argparse.SUPPRESS)


class _Commands(argparse._SubParsersAction):  # type: ignore[type-arg]
    """The commands, of which only ``only``'s parser is built when the command line
    names one (``None``: every one, for ``unotest --help`` or a command it does not
    know): building all fourteen costs about 10 ms, a tenth of ``unotest runs``."""

    only: str | None = None

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        if self.only is None or name == self.only:
            return super().add_parser(name, **kwargs)  # type: ignore[no-any-return]
        return _Unused.__new__(_Unused)  # only add_argument is ever called on it


def _build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser; ``only``: the command named, the one built."""
    parser = _Parser(
        prog="unotest", description="A scenario debugger runner for browser end-to-end tests."
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(
        dest="command", metavar="COMMAND", parser_class=_Parser, action=_Commands
    )
    assert isinstance(sub, _Commands)
    sub.only = only
    _add_project_commands(sub)
    _add_run_commands(sub)
    _add_run_reading_commands(sub)
    _add_viewer_commands(sub)
    _add_watch_command(sub)
    return parser


_Subparsers = argparse._SubParsersAction  # argparse's own name for what add_subparsers returns


def _add_project_commands(sub: _Subparsers[_Parser]) -> None:
    """Commands that read or make a project without running it."""
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
    _add_grep_arguments(listing)
    listing.add_argument(
        "--collection", metavar="NAME", help="with --shard: the collection to split"
    )
    listing.add_argument(
        "--shard",
        metavar="i/n",
        help="the scenarios of shard i of n of --collection and its expected time",
    )
    _add_durations_argument(listing)

    init = sub.add_parser("init", help="scaffold a project that passes on its first run")
    init.add_argument("directory", nargs="?", default=".", help="where (default: here)")

    doctor = sub.add_parser("doctor", help="report Python, Playwright, browser and config")
    doctor.add_argument("--root", type=Path, help="project root")


def _add_grep_arguments(parser: argparse.ArgumentParser) -> None:
    """``list`` and ``collection`` select scenarios alike (runner.project.index_cache's
    ``ScenarioGrep``); runner.collection.prelaunch reads the same two options."""
    parser.add_argument(
        "--grep",
        metavar="REGEX",
        help="only scenarios whose 'NAME TITLE' matches (e.g. @smoke: the tagged ones)",
    )
    parser.add_argument(
        "--grep-invert", metavar="REGEX", help="only scenarios whose 'NAME TITLE' does not match"
    )


def _add_durations_argument(parser: argparse.ArgumentParser) -> None:
    """``--durations``: what ``--shard`` balances by instead of this machine's history."""
    parser.add_argument(
        "--durations",
        type=Path,
        metavar="PATH",
        help="balance --shard by this file ('unotest history --export PATH') not by history",
    )


def _add_trace_argument(parser: _Parser) -> None:
    """``--trace``: the config's ``trace`` for this run only."""
    parser.add_argument(
        "--trace",
        choices=("on", "off", "on-failure"),
        help="record a Playwright trace: on (every run), off, on-failure (default: the config)",
    )


def _add_run_commands(sub: _Subparsers[_Parser]) -> None:
    """Commands that run scenarios (or serve an agent that does)."""
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
    e2e.add_argument(
        "--retries", type=int, metavar="N", help="run a failed scenario up to N more times"
    )
    e2e.add_argument("--reporter", metavar="LIST", help="list, json=PATH, ndjson (comma-separated)")
    _add_trace_argument(e2e)

    coll = sub.add_parser("collection", help="run a collection with parallel workers")
    coll.add_argument("name", help="collection name (a file under unotest/e2e/_collections/)")
    coll.add_argument(
        "--workers", type=int, default=1, metavar="N", help="scenarios at once (lanes)"
    )
    coll.add_argument(
        "--lanes",
        type=int,
        metavar="L",
        help="lanes to a worker process, sharing its browser (default 2; 1: a process each)",
    )
    coll.add_argument("--bail", action="store_true", help="stop after the first failure")
    coll.add_argument(
        "--shard",
        metavar="i/n",
        help="run the i-th of n shards, balanced by history's medians (by count without any)",
    )
    _add_durations_argument(coll)
    coll.add_argument(
        "--reporter",
        metavar="LIST",
        help="list, junit=PATH, json=PATH, ndjson (comma-separated)",
    )
    coll.add_argument(
        "--retries", type=int, metavar="N", help="run a failed scenario up to N more times"
    )
    coll.add_argument("--headed", action="store_true", help="show the browsers")
    coll.add_argument("--root", type=Path, help="project root")
    _add_trace_argument(coll)
    _add_grep_arguments(coll)

    mcp = sub.add_parser("mcp", help="an MCP server on stdio for agents")
    mcp.add_argument("--root", type=Path, help="project root")


def _add_run_reading_commands(sub: _Subparsers[_Parser]) -> None:
    """Commands that look at runs, or drive one, from another terminal."""
    dbg = sub.add_parser(
        "dbg",
        help="send a debugger command to a running scenario",
        formatter_class=_RawFormatter,
        epilog="COMMAND is one of:\n"
        "  step, step-over, step-out, continue, retry, skip, pause,\n"
        "  reload, restart, abort,\n"
        "  break [FILE:]LINE[:COL], clear [FILE:]LINE[:COL], eval EXPR,\n"
        "  pick X Y | pick NAME",
    )
    dbg.add_argument("run_id", metavar="RUN_ID", help="the run (or a unique prefix of its id)")
    dbg.add_argument(
        "words", nargs=argparse.REMAINDER, metavar="COMMAND", help="the command (see below)"
    )
    dbg.add_argument("--root", type=Path, help="project root")
    dbg.add_argument("--json", action="store_true", help="print the runner's answers as JSON")

    inspect = sub.add_parser("inspect", help="show a run's runtime.json readably")
    inspect.add_argument("run_id", metavar="RUN_ID", help="the run (or a unique prefix of its id)")
    inspect.add_argument("--root", type=Path, help="project root")
    inspect.add_argument("--json", action="store_true", help="print runtime.json as it is")

    runs = sub.add_parser("runs", help="list runs with their status")
    runs.add_argument("--root", type=Path, help="project root")
    runs.add_argument("--json", action="store_true", help="print a JSON list of RunMeta")
    runs.add_argument("--limit", type=int, metavar="N", help="show only the N newest runs")
    runs.add_argument(
        "--prune", action="store_true", help="remove old runs (keeps those history points to)"
    )
    runs.add_argument("--older-than", metavar="DAYS", type=float, help="--prune: by age")
    runs.add_argument("--keep", metavar="N", type=int, help="--prune: keep the N newest runs")

    history = sub.add_parser("history", help="recent outcomes per scenario (from unotest/.history)")
    history.add_argument("scenario", nargs="?", metavar="SCENARIO", help="one scenario")
    history.add_argument("--root", type=Path, help="project root")
    history.add_argument("--json", action="store_true", help="print the summaries as JSON")
    history.add_argument("--last", type=int, default=10, metavar="N", help="outcomes per strip")
    history.add_argument(
        "--export",
        type=Path,
        metavar="PATH",
        help="write each scenario's median as a durations file (for --shard's --durations)",
    )

    merging = sub.add_parser(
        "merge-reports",
        help="merge the JSON reports of a collection's shards into one run's reports",
        description="Merge the JSON reports (--reporter json=PATH) of every shard i/n of one "
        "collection run into one run's reports and history. Exit 0 when the merged run "
        "passed, 1 when a scenario failed, 2 when the input is not every shard of one run "
        "(a shard missing or twice, another protocol version, a file that is no report). "
        "See docs/ci.md.",
    )
    merging.add_argument(
        "reports",
        nargs="+",
        type=Path,
        metavar="FILE_OR_DIR",
        help="the shards' --reporter json= files, or folders holding them",
    )
    merging.add_argument(
        "--reporter",
        metavar="LIST",
        help="list (default), junit=PATH, json=PATH, ndjson (comma-separated)",
    )
    merging.add_argument("--root", type=Path, help="project root (its history gets the run)")
    merging.add_argument(
        "--no-history", action="store_true", help="do not add the merged run to history"
    )


def _add_viewer_commands(sub: _Subparsers[_Parser]) -> None:
    """The viewer server: the project in a browser tab."""
    view = sub.add_parser("view", help="serve the project to a browser (the viewer)")
    view.add_argument("--root", type=Path, help="project root")
    view.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)"
    )
    view.add_argument(
        "--port", type=int, default=0, help="port (default 0: the last one if free, else any)"
    )
    view.add_argument(
        "--new-token", action="store_true", help="a new token: the old URL stops working"
    )
    view.add_argument("--no-open", action="store_true", help="do not open a browser")
    view.add_argument(
        "--detach", action="store_true", help="serve in the background (log: unotest/.viewer.log)"
    )
    view.add_argument("--stop", action="store_true", help="stop the viewer serving this project")


def _add_watch_command(sub: _Subparsers[_Parser]) -> None:
    """``unotest watch``: re-run what each save affects, in warm browsers."""
    watch = sub.add_parser("watch", help="re-run the scenarios a save affects, in warm browsers")
    watch.add_argument("--root", type=Path, help="project root")
    watch.add_argument("--collection", metavar="NAME", help="only this collection's scenarios")
    watch.add_argument("--workers", type=int, default=1, metavar="N", help="warm browsers")
    watch.add_argument("--json", action="store_true", help="events as NDJSON on stdout")
    watch.add_argument("--port", type=int, default=0, help="event socket port (0: any free one)")
    watch.add_argument("--host", default="127.0.0.1", help=argparse.SUPPRESS)
    watch.add_argument(
        "--status", action="store_true", help="say whether a daemon watches this project"
    )
    # The debounce windows (ms): hidden, for tests and the benchmark.
    watch.add_argument("--idle-ms", type=int, default=150, help=argparse.SUPPRESS)
    watch.add_argument("--max-ms", type=int, default=1500, help=argparse.SUPPRESS)


# Each command's module is imported only when that command runs: `unotest dbg` must
# not pay for Playwright or the MCP SDK (seconds) on every call.
# The module unotest.commands.<name> defines <name>_command (list → list_command; a
# dash is an underscore: merge-reports → merge_reports_command).
_COMMANDS = (
    "check",
    "list",
    "runs",
    "e2e",
    "init",
    "doctor",
    "dbg",
    "inspect",
    "collection",
    "mcp",
    "view",
    "history",
    "watch",
    "merge-reports",
)


def _command(name: str) -> Callable[[argparse.Namespace], int]:
    import importlib

    name = name.replace("-", "_")  # merge-reports → unotest.commands.merge_reports
    module = importlib.import_module(f"unotest.commands.{name}")
    command: Callable[[argparse.Namespace], int] = getattr(module, f"{name}_command")
    return command


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; never lets a traceback reach the user unless asked to."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    if argv is None:
        # The program's imports make almost no garbage, but their allocations would set
        # off collections that walk everything imported so far: about 15 % of the
        # imports' CPU. Back on, with what was imported frozen, once the command's
        # module is in (_started).
        gc.disable()
    early = args_list[:1]
    try:
        _start_early(early, args_list[1:])
        return _run_command(args_list, in_process=argv is not None)
    except UnotestError as err:
        _report(str(err))
        return exit_code_for(err)
    except KeyboardInterrupt as err:
        _report("interrupted")
        return exit_code_for(err)
    except BrokenPipeError:
        return EXIT_OK
    except Exception as err:
        _report(f"internal error: {type(err).__name__}: {err} (set UNOTEST_DEBUG=1 for details)")
        return EXIT_USAGE
    finally:
        _stop_lingering_web_servers()
        _discard_early(early)
        if argv is None:
            _leave_objects_to_the_os()
            gc.enable()  # an exit before the command ran (a usage error): as it was


def _start_early(command: list[str], rest: list[str]) -> None:
    """What a run needs first starts before the parser is even built."""
    if command == ["collection"]:
        # The collection's workers start first (Playwright's driver, their imports,
        # the browser's launch), while the orchestrator imports and loads the
        # project; the run adopts them (runner.collection.prelaunch), and main's
        # `finally` stops them if nothing does.
        from runner.collection import prelaunch as worker_prelaunch

        worker_prelaunch.start(rest)
    if command == ["e2e"]:
        # Playwright's driver starts first, while the parser is built and the command's
        # imports, the project and the config load; the run takes it
        # (runner.browser.early_driver), and main's `finally` ends it if nothing does.
        # Imported here only: asyncio costs every other command ~25 ms.
        from runner.browser import early_driver

        early_driver.start()


def _discard_early(command: list[str]) -> None:
    """An exit before the run adopted what :func:`_start_early` started: nothing left."""
    if command == ["collection"]:
        from runner.collection import prelaunch as worker_prelaunch

        worker_prelaunch.discard()
    if command == ["e2e"]:
        from runner.browser import early_driver

        early_driver.discard()


def _run_command(args_list: list[str], *, in_process: bool) -> int:
    _tolerate_unencodable_output()
    named = args_list[0] if args_list and args_list[0] in _COMMANDS else None
    parser = _build_parser(named)
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
    command = _command(args.command)
    if not in_process:
        _started()
    return command(args)


def _stop_lingering_web_servers() -> None:
    """A webServer this command started and other unotest runs still use was left up
    for them: it stops once they end (``runner.webserver.server.stop_lingering``)."""
    webserver = sys.modules.get("runner.webserver.server")  # only if a run used one
    if webserver is not None:
        webserver.stop_lingering(_report)


def _started() -> None:
    """The command's modules are imported: they stay for the process's life, so later
    collections need not walk them (``gc.freeze``), and collecting resumes."""
    gc.freeze()
    gc.enable()


def _leave_objects_to_the_os() -> None:
    """The program ends here: Python's shutdown would still walk every object a run
    made (its syntax trees, Playwright's objects, the events) in a last collection,
    about 60 ms of an ``e2e`` run's end. Frozen, they are left to the OS to free. Files
    are closed and streams flushed as before (modules are still torn down, and atexit
    runs); only a caller that passes ``argv`` (a test, in process) keeps its collector."""
    gc.freeze()


def _tolerate_unencodable_output() -> None:
    """A file name or title the terminal cannot encode must not become a crash."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


def _report(message: str) -> None:
    if os.environ.get("UNOTEST_DEBUG") == "1":
        import traceback  # here: every command would pay its import for the rare error

        traceback.print_exc()
    print(f"unotest: {one_line(message)}", file=sys.stderr)
