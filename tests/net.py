"""Local network helpers shared by the tests: a free port, a directory served over http.

Imported as ``from net import ...`` (``tests/`` is on ``sys.path``, see conftest.py).
"""

from __future__ import annotations

import contextlib
import http.server
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def free_port() -> int:
    """A port nothing listens on right now (the OS picks it)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def serve_directory(directory: Path, name: str = "site") -> Iterator[str]:
    """``http://127.0.0.1:PORT`` serving ``directory`` from a background thread, quietly;
    files are served as they are at request time. Shut down on exit."""

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(directory), **kwargs)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    with serve_handler(Handler, name) as url:
        yield url


@contextlib.contextmanager
def serve_handler(
    handler: type[http.server.BaseHTTPRequestHandler], name: str = "site"
) -> Iterator[str]:
    """``http://127.0.0.1:PORT`` answered by ``handler`` from a background thread (a
    thread a request); shut down on exit."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name=name, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@contextlib.contextmanager
def serve_statuses() -> Iterator[tuple[str, dict[str, int]]]:
    """``http://127.0.0.1:PORT`` answering each path with the status the returned table
    sets for it (404 for any other), an empty body: what a webServer probe meets."""
    table: dict[str, int] = {}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(table.get(self.path, 404))
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    with serve_handler(Handler, "statuses") as url:
        yield url, table
