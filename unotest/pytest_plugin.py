"""unotest scenarios as pytest items, on pytest-playwright's ``page``.

Registered for every pytest session through the ``pytest11`` entry point, so it must
cost nothing and change nothing unless asked: ``--unotest``, ``--unotest-collection
NAME`` or ``unotest = true`` in the ini file. Then each scenario of the project is one
item named after the scenario (parametrized by browser exactly like a pytest-playwright
test: ``shop/add-to-cart[chromium]``), run through the same interpreter and built-ins
as ``unotest e2e`` on the page pytest-playwright made (runner/browser/sync_adapter.py), so
``--browser``, ``--headed``, ``--slowmo``, ``--tracing``, ``--screenshot``, ``--video``
and ``browser_context_args`` apply as they do to any pytest-playwright test.

What the plugin adds for the whole session:

- the project's ``webServer``, started once by the controlling process (not by each
  pytest-xdist worker) and stopped at the end;
- ``base_url``: ``--base-url`` when given, else the project's ``baseURL``, for
  scenarios and ordinary tests alike;
- a system Chromium (``executablePath`` or Debian's ``chromium``) with unotest's launch
  flags when Playwright's own Chromium is not installed; otherwise nothing changes.

A failing scenario is reported like a failing Python test: the scenario source around
the failing statement with a ``>`` marker, the ``E`` error line, ``file:line:col`` and
the failure bundle.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from unotest.pytest_state import STATE, PluginState

if TYPE_CHECKING:
    from _pytest._code.code import ExceptionChainRepr, ReprEntry, TerminalRepr, TracebackStyle
    from playwright.sync_api import Page as SyncPage

    from runner.project.index import Project
    from runner.run.result import RunResult, ScenarioFailed

__all__ = ["ScenarioItem", "ScenarioModule"]

_SOURCE_CONTEXT = 3
"""Lines of scenario source shown before the failing statement (pytest shows the
whole function; a scenario can be long, so a window)."""


# --- options ------------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("unotest", "unotest scenarios")
    group.addoption(
        "--unotest",
        action="store_true",
        default=False,
        help="collect the unotest scenarios of the project (unotest/e2e/*.test.js)",
    )
    group.addoption(
        "--unotest-collection",
        metavar="NAME",
        default=None,
        help="collect exactly the scenarios of this unotest collection (implies --unotest)",
    )
    parser.addini("unotest", "collect the unotest scenarios of the project", type="bool")


def _enabled(config: pytest.Config) -> bool:
    return bool(
        config.getoption("unotest", False)
        or config.getoption("unotest_collection", None)
        or config.getini("unotest")
    )


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    if not _enabled(config):
        return
    if not config.pluginmanager.has_plugin("playwright"):
        # Its fixtures (page, base_url) are what a scenario runs on; without them pytest
        # says "recursive dependency involving fixture 'base_url'" from our own file.
        raise pytest.UsageError(
            "unotest: scenarios run on pytest-playwright's page, and it is not loaded: "
            "drop '-p no:playwright' (or install pytest-playwright)"
        )
    # pytest-playwright 0.10 defines its session fixture `base_url` as a method, which
    # pytest 9.2 warns about at every run that uses it (every scenario does): noise the
    # user can do nothing about, until pytest-playwright changes it.
    config.addinivalue_line(
        "filterwarnings",
        "ignore:Session-scoped fixtures defined as instance methods are deprecated"
        ":pytest.PytestRemovedIn10Warning",
    )
    from runner.text import one_line

    state = _load_state(config)
    config.stash[STATE] = state
    browsers = config.getoption("browser", None) or ["chromium"]
    if state.config.browser not in browsers:
        # pytest-playwright's --browser decides under pytest; say so rather than run
        # the scenarios somewhere the project did not ask for without a word.
        state.warnings.append(
            f"unotest.config.yaml asks for browser '{state.config.browser}', but pytest runs "
            f"{', '.join(browsers)}: pass --browser {state.config.browser} to follow it"
        )
    for warning in state.warnings:
        # One line per problem, before any test output (pytest's own warnings come
        # at the end, where they are easy to miss for a missing scenario).
        print(f"unotest: warning: {one_line(warning)}", file=sys.stderr)
    _add_scenarios_to_args(config, state)
    from unotest import pytest_fixtures

    # Registered after pytest-playwright, so its fixtures of the same name are theirs
    # to build on (and only when the plugin is on: otherwise nothing changes).
    config.pluginmanager.register(pytest_fixtures, "unotest-fixtures")


def _load_state(config: pytest.Config) -> PluginState:
    from runner.errors import UnotestError
    from runner.project.config import load_config
    from runner.project.index import Project, ProjectIndex, find_project_root

    # Where pytest runs, its rootdir, then the paths it was given (a monorepo's root
    # with `pytest app/unotest/e2e/x.test.js`): the first inside a project.
    here = config.invocation_params.dir
    starts = [here, config.rootpath, *_folders_given(here, config.args)]
    root: Path | None = None
    for start in starts:
        try:
            root = find_project_root(start)
            break
        except UnotestError:
            continue
    if root is None:
        # The CLI's sentence names its --root, which pytest has not.
        raise pytest.UsageError(
            f"--unotest: no unotest project found in {here} or above it, nor in pytest's "
            f"rootdir {config.rootpath} or the paths given: run pytest inside a project (a "
            "folder with unotest/ or unotest.config.yaml), or point --rootdir DIR at one"
        )
    project = Project(root)
    try:
        index = ProjectIndex.load(project)
        run_config = load_config(root, os.environ)
    except UnotestError as err:
        raise pytest.UsageError(f"unotest: {err}") from None
    warnings = [*run_config.warnings]
    known = {meta["name"] for meta in index.scenario_metas}
    selected: set[str] | None = None
    collection = config.getoption("unotest_collection", None)
    if collection:
        entry = index.collections.get(collection)
        if entry is None:
            wanted = project.relative(project.collections_dir / f"{collection}.yaml")
            problem = next((d for d in index.errors if d.file == wanted), None)
            if problem is not None:
                raise pytest.UsageError(f"unotest: {problem}")
            names = ", ".join(sorted(index.collections)) or "none"
            raise pytest.UsageError(
                f"--unotest-collection {collection}: no such collection (the project has: {names})"
            )
        selected = set()
        for name in entry.meta["scenarios"]:
            if name in known:
                selected.add(name)
            else:
                warnings.append(f"{entry.meta['path']}: scenario '{name}' does not exist; skipped")
    return PluginState(
        project, index, run_config, selected, project.e2e_dir.resolve(), None, warnings
    )


def _add_scenarios_to_args(config: pytest.Config, state: PluginState) -> None:
    """Scenarios are collected wherever pytest was pointed, unless it was pointed
    elsewhere on purpose: paths on the command line are obeyed; ``testpaths`` or the
    current directory get the project's ``unotest/e2e`` added when they miss it."""
    if config.args_source == pytest.Config.ArgsSource.ARGS:
        return
    e2e = state.e2e_dir
    for arg in config.args:
        path = Path(arg.split("::", 1)[0])
        if not path.is_absolute():
            path = config.invocation_params.dir / path
        if e2e.is_relative_to(path.resolve()):
            return
    if e2e.is_dir():
        config.args.append(str(e2e))


# --- the webServer, once per session ----------------------------------------------


def _folders_given(here: Path, args: list[str]) -> list[Path]:
    """The folders of the paths pytest was given (a node id's file part)."""
    folders = []
    for arg in args:
        path = Path(here, str(arg).split("::", 1)[0])
        try:
            folders.append(path if path.is_dir() else path.parent)
        except OSError:  # a name too long for the file system is no path of ours
            continue
    return folders


def _is_xdist_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def _distributing(config: pytest.Config) -> bool:
    """This process is xdist's controller: it runs no test and collects none itself."""
    return not _is_xdist_worker(config) and getattr(config.option, "dist", "no") != "no"


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    # xdist's controller starts it for every worker before any of them collects.
    if _distributing(session.config):
        _start_web_server(session.config)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Without xdist: the webServer once it is known that a selected test needs the site
    (a scenario, or a test on pytest-playwright's page), so ``-k nothing`` or a plain
    unit test never waits for it, nor fails with it."""
    config = session.config
    if _distributing(config) or _is_xdist_worker(config):
        return
    if any(
        isinstance(item, ScenarioItem) or "page" in getattr(item, "fixturenames", ())
        for item in session.items
    ):
        _start_web_server(config)


def _start_web_server(config: pytest.Config) -> None:
    state = config.stash.get(STATE, None)
    if state is None or _is_xdist_worker(config) or config.option.collectonly:
        return
    server = state.config.web_server
    if server is None or state.web_server is not None:
        return
    from runner.errors import UnotestError
    from runner.project.secrets import project_masker
    from runner.webserver.server import WebServer

    try:
        state.web_server = WebServer.from_config(
            server, mask=project_masker(state.project.root).mask
        )
    except UnotestError as err:
        raise pytest.UsageError(f"unotest: webServer: {err}") from None


def pytest_sessionfinish(session: pytest.Session) -> None:
    state = session.config.stash.get(STATE, None)
    if state is not None and state.web_server is not None:
        from runner.webserver.server import stop_lingering

        state.web_server.stop()
        state.web_server = None
        # Other unotest runs may still use it: it stops when they end.
        stop_lingering(lambda text: print(f"unotest: {text}", file=sys.stderr, flush=True))


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(STATE, None)
    if state is not None and state.web_server is not None:
        state.web_server.stop()  # an interrupted session skips sessionfinish
        state.web_server = None


# --- collection ---------------------------------------------------------------------


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> ScenarioModule | None:
    state = parent.config.stash.get(STATE, None)
    if state is None or not file_path.name.endswith(".test.js"):
        return None
    try:
        relative = file_path.resolve().relative_to(state.e2e_dir)
    except ValueError:
        return None
    if relative.parts[0].startswith("_"):
        return None  # _helpers/, _collections/
    name = relative.as_posix()[: -len(".test.js")]
    if state.selected is not None and not any(
        chosen == name or chosen.startswith(name + "[") for chosen in state.selected
    ):
        return None
    module: ScenarioModule = ScenarioModule.from_parent(parent, path=file_path)
    module.scenario_name = name
    return module


class ScenarioModule(pytest.File):
    """One scenario file; collects one item per browser, like a test function."""

    scenario_name: str = ""

    def collect(self) -> Iterator[pytest.Item]:
        state = self.config.stash[STATE]
        index = state.index
        # Every helper file's problems, one that does not parse included (it is in no
        # list of parsed helpers): unotest e2e refuses to start on them, so must this.
        problems = index.problems_of(state.project.relative(self.path))
        # A parameterised file is its cases, each a test of its own (shop/pay[visa]).
        names = [
            f"{self.scenario_name}[{case}]" for case in index.cases.get(self.scenario_name, [])
        ]
        if not names:
            names = [self.scenario_name]
        elif state.selected is not None:  # a collection lists the cases it runs
            names = [name for name in names if name in state.selected]
        if problems or any(name not in index.scenarios for name in names):
            from unotest.console import format_diagnostic

            lines = [format_diagnostic(problem) for problem in problems] or [
                f"{state.project.relative(self.path)}: not a runnable scenario"
            ]
            raise self.CollectError(
                "\n".join(
                    [
                        *lines,
                        f"scenario '{self.scenario_name}' cannot run: "
                        "'unotest check' lists its problems",
                    ]
                )
            )
        for name in names:
            yield from _parametrized_items(self, name)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, self.scenario_name


def _parametrized_items(parent: ScenarioModule, name: str) -> Iterator[ScenarioItem]:
    """Items the way pytest makes them for a function, so pytest-playwright's
    ``pytest_generate_tests`` parametrizes ``browser_name`` (``--browser`` given twice
    makes two items) and every fixture the function asks for is resolved."""
    from _pytest.python import FunctionDefinition, Metafunc

    definition = FunctionDefinition.from_parent(parent, name=name, callobj=run_scenario)
    fixtureinfo = definition._fixtureinfo
    metafunc = Metafunc(
        definition=definition,
        fixtureinfo=fixtureinfo,
        config=parent.config,
        cls=None,
        module=None,
        _ispytest=True,
    )
    parent.ihook.pytest_generate_tests.call_extra([], dict(metafunc=metafunc))
    if not metafunc._calls:
        item = ScenarioItem.from_parent(
            parent, name=name, callobj=run_scenario, fixtureinfo=fixtureinfo
        )
        item.scenario_name = name
        yield item
        return
    metafunc._recompute_direct_params_indices()
    fixtureinfo.prune_dependency_tree()
    for callspec in metafunc._calls:
        item = ScenarioItem.from_parent(
            parent,
            name=f"{name}[{callspec.id}]" if callspec._idlist else name,
            callobj=run_scenario,
            callspec=callspec,
            fixtureinfo=fixtureinfo,
            keywords={callspec.id: True},
            originalname=name,
        )
        item.scenario_name = name
        yield item


class ScenarioItem(pytest.Function):
    """A scenario run as a test; its failures read like a Python test's.
    ``scenario_name``: the file's, or one of its cases' (``shop/pay[visa]``)."""

    scenario_name: str = ""

    def reportinfo(self) -> tuple[Path, int, str]:
        # 0-based, as pytest counts: its test function's line (JUnit's line="..."),
        # where a Python test's def is.
        scenario = self.config.stash[STATE].index.scenarios.get(self.scenario_name)
        line = scenario.test_fn.name_span.line - 1 if scenario is not None else 0
        return self.path, line, f"scenario {self.name}"

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: TracebackStyle | None = None
    ) -> str | TerminalRepr:
        from runner.run.result import ScenarioFailed

        if isinstance(excinfo.value, ScenarioFailed):
            path, line, _ = self.reportinfo()
            return _failure_repr(
                self.config.stash[STATE].project,
                excinfo.value.result,
                style=_tb_style(self.config),
                rootdir=self.config.rootpath,
                scenario_place=(Path(path), (line or 0) + 1),
            )
        # pytest.Function.repr_failure takes no style (passing one was a TypeError that
        # hid any other failure, e.g. PlaywrightInternalsChanged, behind pytest's own)
        return super().repr_failure(excinfo)


def run_scenario(page: SyncPage, base_url: str | None, request: pytest.FixtureRequest) -> None:
    """The body of every scenario item: ``page`` is pytest-playwright's."""
    item = request.node
    assert isinstance(item, ScenarioItem)
    state = request.config.stash[STATE]
    result = _run(state, item.scenario_name, page, base_url)
    if result.outcome != "completed":
        raise _scenario_failed(result)


def _run(state: PluginState, name: str, page: SyncPage, base_url: str | None) -> RunResult:
    from runner.browser.bundle import MAX_ERROR_CHARS
    from runner.browser.sync_adapter import async_page, run_on_page_loop
    from runner.project.secrets import RunEnvironment, SecretMasker, cut_masked
    from runner.run.options import RunOptions, ScenarioInputs
    from runner.run.session import ScenarioRun
    from runner.text import one_line

    config = replace(state.config, base_url=base_url or state.config.base_url, web_server=None)
    masker = SecretMasker()
    for value in state.seeded_secrets:  # the page's context was seeded with them
        masker.add(value)
    environment = RunEnvironment.of_project(state.project.root, masker)
    run = ScenarioRun(
        ScenarioInputs(
            state.project,
            state.index.scenarios[name],
            state.index.helper_table,
            config,
            masker,
            environment,
        ),
        RunOptions(
            out=sys.stdout,
            log_stream=sys.stdout,
            handle_signals=False,
            provided_page=async_page(page),
        ),
    )
    for warning in environment.warnings:
        print(f"unotest: warning: {one_line(warning)}", file=sys.stderr)
    result = run_on_page_loop(page, run.run_async())
    if result.error:
        # What pytest shows and --junitxml keeps: masked like every unotest output,
        # and bounded (a failed expect_equal on 1 MB must not make a 1 MB report).
        error = masker.mask_error(result.error)
        error["error"] = cut_masked(error["error"], MAX_ERROR_CHARS, masker.mask)
        result = replace(result, error=error)
    return result


# --- failure reports ------------------------------------------------------------------


def _scenario_failed(result: RunResult) -> ScenarioFailed:
    from runner.run.result import ScenarioFailed

    error: Mapping[str, object] = result.error or {}
    name = error.get("errorName", "Error")
    return ScenarioFailed(f"{name}: {error.get('error', result.outcome)}", result)


def _tb_style(config: pytest.Config) -> str:
    """pytest's ``--tb`` as its own test items read it: ``--fulltrace`` forces the long
    form, ``auto`` is the long form."""
    if config.getoption("fulltrace", False):
        return "long"
    style = str(config.getoption("tbstyle", "auto"))
    return "long" if style == "auto" else style


def _failure_repr(
    project: Project,
    result: RunResult,
    *,
    style: str = "long",
    rootdir: Path | None = None,
    scenario_place: tuple[Path, int] | None = None,
) -> ExceptionChainRepr:
    """pytest's own failure representation, so the terminal, ``--junitxml``, the
    short summary and pytest-xdist (which serializes it) all show it as for a
    Python test: source with ``>``, ``E`` lines, ``file:line:col: ErrorName``.

    A failure inside a helper is a traceback of one entry per place of its chain, as
    Python's are: the scenario's own line first, then each helper down to the one
    that failed, which carries the ``E`` lines.

    ``style`` is ``--tb``'s (see :func:`_tb_style`): ``short`` keeps each place's
    location and its one source line, and the error; ``line`` shows nothing here, as
    pytest then prints the crash line itself (``path:line: ErrorName: message``,
    the path relative to ``rootdir``; a failure without a place names the scenario
    file at ``scenario_place``); under ``no`` pytest prints none of it. Without
    ``rootdir``, paths are the project's.
    """
    from _pytest._code.code import ExceptionChainRepr, ReprFileLocation, ReprTraceback

    from runner.run.result import chain_text, error_chain

    error: Mapping[str, object] = result.error or {}
    name = str(error.get("errorName", "Error"))
    message = str(error.get("error", f"the scenario was {result.outcome}"))
    file, line, col = error.get("file"), error.get("line"), error.get("col")
    message_lines = message.splitlines() or [""]
    chain = error_chain(error)
    e_lines = [f"E   {name}: {message_lines[0]}", *(f"E   {rest}" for rest in message_lines[1:])]
    # A Python test has a traceback to print natively; a scenario has none, so
    # --tb=native gives what --tb=short gives.
    base = rootdir if rootdir is not None else project.root
    short = style in ("short", "native")
    if len(chain) > 1 and not short:  # the short form's entries are the chain
        e_lines.append(f"E   at {chain_text(chain)}")
    entry = _short_entry if short else _repr_entry
    callers = [
        entry(project, f["file"], f["line"], f["col"], f"in {f['fn']}", []) for f in chain[:-1]
    ]
    if isinstance(file, str) and file and isinstance(line, int):
        at = col if isinstance(col, int) else 0
        entries = [*callers, entry(project, file, line, at, name, e_lines)]
        crash_path, crash_line = _relative_to(base, project.root / file), line
    else:
        entries = [entry(project, result.scenario, 0, None, name, e_lines)]
        place = scenario_place or (project.root / result.scenario, 0)
        crash_path, crash_line = _relative_to(base, place[0]), place[1]
    crash = ReprFileLocation(crash_path, crash_line, f"{name}: {message_lines[0]}")
    if style == "line":
        entries = []
    chained = ExceptionChainRepr([(ReprTraceback(entries, None, "long"), crash, None)])
    if style == "long":
        chained.addsection("unotest", _where_to_look(result))
    return chained


def _where_to_look(result: RunResult) -> str:
    """The long form's own section: the failure bundle and the run directory."""
    details = []
    if result.bundle_path:
        details.append(f"failure bundle: {result.bundle_path}")
    details.append(f"run directory: {result.run_dir}")
    return "\n".join(details)


def _relative_to(rootdir: Path, path: Path) -> str:
    """``path`` as pytest names a test file: relative to its rootdir (``..`` if need be)."""
    return os.path.relpath(path.resolve(), rootdir.resolve())


def _repr_entry(
    project: Project, file: str, line: int, col: int | None, label: str, e_lines: list[str]
) -> ReprEntry:
    """One traceback entry: the source up to ``line`` (none for a place without a
    line), the ``E`` lines, and ``file:line:col: label`` (the column rides in pytest's
    lineno slot so the line reads like every unotest message)."""
    from _pytest._code.code import ReprEntry, ReprFileLocation

    lines = _source_window(project.root / file, line, col) if line > 0 else []
    if line > 0:
        location = ReprFileLocation(f"{file}:{line}", col or 0, label)
    else:
        location = ReprFileLocation(file, 0, label)
    return ReprEntry([*lines, *e_lines], None, None, location, "long")


def _short_entry(
    project: Project, file: str, line: int, col: int | None, label: str, e_lines: list[str]
) -> ReprEntry:
    """One entry of pytest's ``--tb=short``: ``file:line:col: label``, the one source
    line, indented, and the ``E`` lines (no window, no caret)."""
    from _pytest._code.code import ReprEntry, ReprFileLocation

    source = _source_lines(project.root / file) if line > 0 else []
    lines = [f"    {source[line - 1].strip()}"] if 1 <= line <= len(source) else []
    if line > 0:
        location = ReprFileLocation(f"{file}:{line}", col or 0, label)
    else:
        location = ReprFileLocation(file, 0, label)
    return ReprEntry([*lines, *e_lines], None, None, location, "short")


def _source_lines(path: Path) -> list[str]:
    """The file's lines; none when it cannot be read (the report goes on without)."""
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []


def _source_window(path: Path, line: int, col: object) -> list[str]:
    """pytest's look: the lines up to the failing one, ``>`` at the failing line."""
    source = _source_lines(path)
    if not 1 <= line <= len(source):
        return []
    first = max(1, line - _SOURCE_CONTEXT)
    width = len(str(line))
    out = []
    for number in range(first, line + 1):
        marker = ">" if number == line else " "
        out.append(f"{marker} {number:>{width}} | {source[number - 1]}")
        if number == line and isinstance(col, int) and col >= 0:
            out.append(" " * (width + 5 + col) + "^")
    return out
