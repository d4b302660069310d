"""What a :class:`~runner.run.session.ScenarioRun` is made of, as two frozen records.

:class:`ScenarioInputs` is what a run reads from the project before it starts (the
same for every attempt of a scenario, and for every scenario of a worker but the
scenario itself); :class:`RunOptions` is how its caller wants it run. A caller names
only what it changes: ``unotest e2e`` its output and debugger, a collection worker its
shared browser and reports, the pytest plugin the page it owns.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TextIO

from playwright.async_api import Browser, Page

from dsl.scenario import HelperTable, ScenarioFile
from runner.debug.setup import DebugOptions
from runner.project.config import Config
from runner.project.root import Project
from runner.project.secrets import RunEnvironment, SecretMasker
from runner.run.scenario_thread import ScopeLedger
from runner.webserver.server import WebServer

__all__ = ["RunOptions", "ScenarioInputs"]


@dataclass(frozen=True)
class ScenarioInputs:
    """The project, the scenario and the helpers it may call, the config, the secrets
    (``masker``) and ``env()``'s values (``environment``)."""

    project: Project
    scenario: ScenarioFile
    helpers: HelperTable
    config: Config
    masker: SecretMasker
    environment: RunEnvironment


@dataclass(frozen=True)
class RunOptions:
    """How a run is made; every field has the value of a plain ``unotest e2e`` run.

    ``out``: the console's steps (``quiet``: none); ``log_stream``: the scenario's
    ``log()`` lines. ``parent_run_id``: the collection run this one belongs to.
    ``extra_env``: values ``env()`` sees before the process's and ``.env``'s.
    ``handle_signals``: the run installs its SIGINT/SIGTERM/SIGHUP handlers (not in a
    worker, nor under pytest). ``on_started``: told the run id once the run directory
    exists. ``shared_browser``: a browser someone else launched (a worker's): the run
    opens a context of it. ``provided_page``: a page someone else owns
    (pytest-playwright's, through ``runner.browser.sync_adapter``): the run drives it as
    it is, launching and closing nothing. ``web_server``: the one an earlier attempt of
    the same scenario started, used as it is; ``keep_web_server``: leave the webServer
    up at the end, in ``ScenarioRun.kept_web_server``, for the next attempt (the site,
    and the state it keeps, stay as they were between attempts, as in a collection).
    ``browser_endpoint``: the Playwright server a shared browser came from, as the
    manifest shows it (``browserEndpoint``; a run launching its own browser knows it
    from its config). ``scopes``: the hook scopes of a worker's lane, which outlive its
    runs (None: the run is its own scope, as in ``unotest e2e``).
    """

    debug: DebugOptions | None = None
    out: TextIO = field(default_factory=lambda: sys.stdout)
    quiet: bool = False
    log_stream: TextIO = field(default_factory=lambda: sys.stdout)
    parent_run_id: str | None = None
    extra_env: Mapping[str, str] = field(default_factory=dict)
    handle_signals: bool = True
    on_started: Callable[[str], None] | None = None
    shared_browser: Browser | None = None
    provided_page: Page | None = None
    web_server: WebServer | None = None
    keep_web_server: bool = False
    browser_endpoint: str | None = None
    scopes: ScopeLedger | None = None

    def restart_refusal(self) -> str | None:
        """Why a run made with these options cannot restart in its process, if it cannot."""
        if self.provided_page is not None:
            return "not restarted: this run drives a page it does not own (pytest)"
        if self.shared_browser is not None or self.parent_run_id is not None:
            return "not restarted: a scenario of a collection run restarts with the collection"
        return None
