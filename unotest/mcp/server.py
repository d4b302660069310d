"""The MCP server itself: ``build_server``, the session's lifecycle, an argument error's wording.

Everything the tools do is in their groups (:mod:`unotest.mcp.project_tools`,
:mod:`unotest.mcp.run_tools`, :mod:`unotest.mcp.debug_tools`); here they are joined
into one SDK server over one :class:`~unotest.mcp.state.ToolState`, whose session ends
the runs it started (:meth:`~unotest.mcp.run_tools.RunTools.end_owned_runs`) however
the session ends: a client that closes, a server that exits, a client gone in the
middle of a call.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from pydantic import ValidationError

from unotest.mcp.debug_tools import DebugTools, add_debug_tools
from unotest.mcp.project_tools import ProjectTools, add_project_tools
from unotest.mcp.run_tools import RunTools, add_run_tools
from unotest.mcp.state import ToolState

__all__ = ["build_server"]

INSTRUCTIONS = (
    "unotest runs browser end-to-end scenarios statement by statement. Loop: "
    "list_scenarios → read_scenario → run_scenario (debug/breakpoints) → "
    "wait_for_run → inspect_runtime / debug (eval, step, continue) → get_failure → "
    "write_file the fix → debug reload + retry the paused run (or restart it, or run "
    "again)."
)

# What writing to (or reading from) a client that has gone away raises.
_CLIENT_GONE = (
    BrokenPipeError,
    ConnectionResetError,
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
)


class _Server(MCPServer):
    """The SDK's server, with an argument of the wrong type or a missing one answered in
    one sentence (pydantic's own text is several lines and a link), and a client that
    goes away in the middle of a call taken as the end of the session it is."""

    async def run_stdio_async(self) -> None:
        """The SDK's stdio loop. A client killed while a call is under way breaks the
        pipe of the answer (the SDK's stdout writer raises, in a task group): that is
        the session's end, as when the client closes stdin; the session's runs have
        been ended on the way out (the lifespan's ``finally``)."""
        try:
            await super().run_stdio_async()
        except _CLIENT_GONE:
            pass
        except BaseExceptionGroup as group:
            _, rest = group.split(_CLIENT_GONE)
            if rest is not None:
                raise

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as err:
            cause = err.__cause__
            if isinstance(cause, ValidationError) and not isinstance(err, UnexpectedToolError):
                raise ToolError(_argument_problem(name, cause)) from None
            raise


def _argument_problem(tool: str, error: ValidationError) -> str:
    """The first wrong argument of a call, as one sentence."""
    first = error.errors()[0]
    where = ".".join(str(part) for part in first.get("loc", ()))
    if first.get("type") == "missing":
        return f"{tool}: the argument '{where}' is required"
    shown = json.dumps(first.get("input"), default=str)[:80]
    return f"{tool}: the argument '{where}' {first.get('msg', 'is not valid').lower()}, got {shown}"


def build_server(root: Path) -> MCPServer:
    """The server with every tool registered; the docstrings are the tools' descriptions."""
    state = ToolState(root)
    runs = RunTools(state)

    @contextlib.asynccontextmanager
    async def session(_server: MCPServer) -> AsyncIterator[None]:
        try:
            yield
        finally:
            ended = runs.end_owned_runs()
            if ended:
                print(
                    f"unotest mcp: the session closed; aborted the runs it started: "
                    f"{', '.join(ended)}",
                    file=sys.stderr,
                    flush=True,
                )

    server: MCPServer = _Server("unotest", lifespan=session, instructions=INSTRUCTIONS)
    add_project_tools(server, ProjectTools(state))
    add_run_tools(server, runs)
    add_debug_tools(server, DebugTools(state, runs))
    return server
