"""A static site on 127.0.0.1 that remembers every request's query: how the collection
and worker tests see inside a run. Every scenario visits ``/index.html?s=<name>&…``, so a
test knows when a scenario is running (to kill or signal something at the right moment),
which ones never reached the page, and what each saw. ``/barrier.html?for=<name>``
answers only once ``<name>`` has been visited: a scenario on one worker waits for a
scenario on another worker to be in flight.
"""

from __future__ import annotations

import http.server
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

__all__ = ["RecordingSite"]


class RecordingSite:
    """``directory`` on a free port, with every request's query remembered."""

    def __init__(self, directory: Path, timeout: float) -> None:
        self.timeout = timeout
        self.lock = threading.Condition()
        self.hits: list[dict[str, str]] = []
        site = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, directory=str(directory), **kwargs)

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
                if parts.path == "/barrier.html":
                    site.wait_for(query.get("for", ""), timeout=30)
                    self.path = "/index.html?s=" + query.get("s", "barrier")
                with site.lock:
                    if "s" in query:
                        site.hits.append(query)
                    site.lock.notify_all()
                super().do_GET()

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def visits(self, name: str) -> list[dict[str, str]]:
        with self.lock:
            return [hit for hit in self.hits if hit.get("s") == name]

    def wait_for(self, name: str, timeout: float | None = None) -> dict[str, str]:
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        with self.lock:
            while True:
                found = [hit for hit in self.hits if hit.get("s") == name]
                if found:
                    return found[0]
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"scenario {name!r} never reached the site")
                self.lock.wait(min(left, 0.5))

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
