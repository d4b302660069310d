"""Every exception the product raises on purpose, in one tree split by cause.

The edges map it once: ``unotest.cli.main`` turns any ``UnotestError`` into one sentence
on stderr and the exit code of ``unotest.exit_codes``; the MCP server turns it into a
``ToolError``; the pytest plugin into a failed or errored test::

    UnotestError                  a failure the user can act on; str() is the sentence
    ├── UsageError                bad arguments, no project, unknown scenario or run
    │   └── UnsupportedRunKindError  a RunRequest kind its runner adapter does not run
    ├── ConfigError               unotest.config.yaml, collection YAML, .debugger.json
    ├── EventProtocolError        an event stream of a major version we do not read
    ├── BrowserError              the browser could not be had
    │   ├── BrowserNotFound       nothing to launch; the message says how to install one
    │   ├── BrowserLaunchError    found, but it did not start
    │   ├── DriverStartError      Playwright's driver (its Node process) did not start
    │   └── BrowserConnectError   wsEndpoint did not lead to a browser
    │       └── BrowserPoolDown   every endpoint of a collection's browser pool is down
    ├── WebServerError            the webServer did not start, or its URL is taken
    │   └── WebServerCancelled    the run was aborted while it was starting
    ├── RunnerAdapterNotFoundError  the runner a run would be spawned with is not installed
    ├── RunWriteError             a run artifact could not be written (also an OSError)
    ├── PlaywrightInternalsChanged  this Playwright lacks what runner.browser.sync_adapter uses
    └── ScenarioFailed            a scenario did not pass where an exception must say so
                                  (the pytest plugin); carries the RunResult, so it is
                                  defined beside it, in runner.run.result

    CommandError                  a debugger command that cannot be applied: never
                                  reaches the user as an exception, its sentence goes
                                  to the run's ``command:rejected`` event

The scenario language's own errors (``dsl.errors``: syntax errors at file:line:col,
script errors with a protocol ``errorName``, ``Interrupt``) are reported by the commands
that meet them, as problems or failed steps, not through this tree.
"""

from __future__ import annotations

__all__ = [
    "BrowserConnectError",
    "BrowserError",
    "BrowserLaunchError",
    "BrowserNotFound",
    "BrowserPoolDown",
    "CommandError",
    "ConfigError",
    "DriverStartError",
    "EventProtocolError",
    "PlaywrightInternalsChanged",
    "RunWriteError",
    "RunnerAdapterNotFoundError",
    "UnotestError",
    "UnsupportedRunKindError",
    "UsageError",
    "WebServerCancelled",
    "WebServerError",
]


class UnotestError(Exception):
    """A failure the user can act on; ``str()`` is the whole message."""


class UsageError(UnotestError):
    """Bad arguments, no project here, an unknown scenario, collection or run."""


class UnsupportedRunKindError(UsageError):
    """A ``RunRequest.kind`` its adapter does not list in ``supported_kinds`` (protocol
    ``UnsupportedRunKindError(kind, adapterName)``): the message names both."""

    def __init__(self, kind: str, adapter_name: str) -> None:
        super().__init__(f"the runner adapter {adapter_name} cannot run a run of kind {kind!r}")
        self.kind = kind
        self.adapter_name = adapter_name


class ConfigError(UnotestError):
    """A configuration file (config, collection YAML, .debugger.json) names its key."""


class EventProtocolError(UnotestError):
    """Event envelopes (JSON report, history file) of an unsupported ``protocol_version``."""


class BrowserError(UnotestError):
    """The browser could not be had; the message says what to do."""


class BrowserNotFound(BrowserError):
    """No browser to launch; the message says how to install one."""


class BrowserLaunchError(BrowserError):
    """A browser was found but did not start."""


class DriverStartError(BrowserError):
    """Playwright's driver, the Node process every browser call goes through, ended
    before it was ready (a ``NODE_OPTIONS`` it refuses, a broken install): no browser
    can be had without it."""


class BrowserConnectError(BrowserError):
    """``wsEndpoint`` did not lead to a browser."""


class BrowserPoolDown(BrowserConnectError):
    """Every endpoint of ``wsEndpoint``'s list is down at once: the collection stops
    (its finished runs, reports and history kept), as no browser is left to run on."""


class WebServerError(UnotestError):
    """The webServer could not be started (or its URL is taken)."""


class WebServerCancelled(WebServerError):
    """The run was aborted while the webServer was starting; it has been stopped."""


class RunnerAdapterNotFoundError(UnotestError):
    """The runner a run would be spawned with cannot be found (protocol
    ``RunnerAdapterNotFoundError(packageName, hint)``): the message says how to install it."""

    def __init__(self, package_name: str, hint: str) -> None:
        super().__init__(f"the runner {package_name} cannot be found: {hint}")
        self.package_name = package_name
        self.hint = hint


class RunWriteError(UnotestError, OSError):
    """A run artifact could not be written (disk full, file too large, ...).

    An ``OSError`` (``errno`` is the original one) and a ``UnotestError``, so the CLI
    reports it as one sentence: ``cannot write unotest/.runs/<id>/steps.jsonl: ...``.
    """


class PlaywrightInternalsChanged(UnotestError, RuntimeError):
    """This Playwright release no longer has what :mod:`runner.browser.sync_adapter` uses."""


class CommandError(Exception):
    """A debugger command that cannot be applied: the reason goes to ``command:rejected``."""
