"""Starting runs for front ends: a typed request made a child process, and followed.

The request and its one table of limits (``request``, ``limits``), the protocol's
runner adapter (``adapter``), the child process and its output (``launcher``), and the
one function the viewer and the MCP server start runs with (``start``).

May import: the foundations, ``project`` and ``store``.
"""
