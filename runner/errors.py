"""The CLI-side exception tree; the CLI maps it to exit codes in one place.

    UnotestError            anything reported to the user as one sentence
    ├── UsageError          exit 2: bad arguments, no project, unknown scenario
    └── ConfigError         exit 2: unotest.config.yaml, collection YAML, .debugger.json

Language errors (``dsl.errors``) are reported with their file:line:col by the
commands that meet them.
"""

from __future__ import annotations


class UnotestError(Exception):
    """A failure the user can act on; ``str()`` is the whole message."""

    exit_code = 2


class UsageError(UnotestError):
    exit_code = 2


class ConfigError(UnotestError):
    exit_code = 2
