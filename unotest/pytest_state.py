"""The unotest pytest plugin's per-process state, shared by the plugin and its fixtures.

A module of its own so that ``unotest.pytest_fixtures`` (registered by the plugin)
and ``unotest.pytest_plugin`` both read it without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from runner.project.config import Config
    from runner.project.index import Project, ProjectIndex
    from runner.webserver.server import WebServer

__all__ = ["STATE", "PluginState", "plugin_state"]


@dataclass
class PluginState:
    """What one pytest process knows about the project (each xdist worker has its own)."""

    project: Project
    index: ProjectIndex
    config: Config
    selected: set[str] | None
    """Scenario names of ``--unotest-collection``; None: every scenario file."""
    e2e_dir: Path
    web_server: WebServer | None = None
    warnings: list[str] = field(default_factory=list)
    seeded_secrets: list[str] = field(default_factory=list)
    """The values of the storage state every context was seeded from (read once, by
    ``browser_context_args``): each scenario's run masks them."""


STATE = pytest.StashKey[PluginState]()


def plugin_state(config: pytest.Config) -> PluginState:
    """The session's project, index and configuration (the plugin is on)."""
    return config.stash[STATE]
