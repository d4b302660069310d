"""``unotest mcp``: the MCP server for agents, on stdio."""

from __future__ import annotations

import argparse
from pathlib import Path

from runner.project.root import find_project_root
from unotest.exit_codes import EXIT_OK

__all__ = ["mcp_command"]


def mcp_command(args: argparse.Namespace) -> int:
    from unotest.mcp.server import build_server  # the MCP SDK costs seconds: only here

    root = find_project_root(Path.cwd(), args.root, new_project_ok=True)
    build_server(root).run("stdio")
    return EXIT_OK
