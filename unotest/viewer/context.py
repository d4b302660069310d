"""What every route of one viewer process shares: the project and its loaded index, the
token, the live hub.

One object, made once by ``unotest view`` (or a test) and handed to each route module's
``routes(ctx)``, so no route keeps module-level state (two servers in one process, as
the tests run them, must not see each other).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from runner.project.index import Project
from runner.store.run_index import RunIndex, index_path
from runner.store.run_list import RunLister
from unotest.viewer.daemon_link import DaemonLink
from unotest.viewer.hub import Hub
from unotest.viewer.project_index import ViewerIndex


@dataclass
class ViewerContext:
    root: Path
    """The project root (absolute)."""
    token: str
    """The secret (at least 128 random bits) every request must carry: made at launch, or
    the last viewer's on the same port (``unotest/.cache/viewer.json``, mode 0600)."""
    host: str = "127.0.0.1"
    port: int = 0
    """The bound port, known once the socket is bound (0 until then)."""
    hub: Hub = field(default_factory=Hub)
    """The live hub: ``ctx.hub.publish(message)`` sends a ``WsMessage`` to every ``/ws``
    client (``runner.ws_messages`` builds them; ``publish_threadsafe`` from a thread)."""
    daemon_link: DaemonLink | None = None
    """This server's link to the watch daemon: made by ``routes_daemon.startup`` and
    stopped by its ``shutdown``; ``None`` outside the lifespan (an app built without
    one answers ``/api/watch`` from the discovery file alone). Held here, not in a
    module, so two servers in one process never share or swap links."""
    index: ViewerIndex = field(init=False, repr=False)
    """The project index ``/api/scenarios``, ``/api/helpers``, ``/api/collections`` and
    ``/api/problems`` answer from, kept until a project file changes (the file watcher
    and the viewer's own saves say so), with one ``LoadMemo`` for the process's life."""

    newest_runs: RunLister = field(init=False, repr=False)
    """Each scenario's and collection's newest run (``/api/runs?latest=1``, the tree's
    badges), with a run index of its own: its first answer reads every run's ref (about
    a second at 100,000 runs), so it never holds a page of ``/api/runs`` up meanwhile,
    and ``routes_runs.startup`` has that first answer found ahead (``when_serving``)."""
    when_serving: list[Callable[[], None]] = field(default_factory=list, repr=False)
    """Work a route module's ``startup`` leaves until the server listens and its URL is
    out (``server.serve`` calls each once then): started earlier, a thread of it would
    share the interpreter with the start itself and delay the URL."""

    def __post_init__(self) -> None:
        self.index = ViewerIndex(self.root)
        runs_dir = self.project.runs_dir
        self.newest_runs = RunLister(runs_dir, RunIndex(index_path(runs_dir)))

    @property
    def project(self) -> Project:
        return Project(self.root)
