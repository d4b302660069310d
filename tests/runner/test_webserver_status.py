"""The webServer wait names what it last got (issue 13, item 10).

A URL that answers 404 every time is not "did not answer": the error says the last
status (or why nothing answered: refused, timed out) after the timeout, or when the
command exits first. Real processes and a real HTTP server on 127.0.0.1.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from net import free_port, serve_statuses

from runner.errors import WebServerError
from runner.webserver.server import WebServer, probe


@pytest.fixture
def statuses() -> Iterator[tuple[str, dict[str, int]]]:
    """``http://127.0.0.1:PORT`` answering each path with the status set for it (404)."""
    with serve_statuses() as served:
        yield served


def test_probe_says_what_answered(statuses: tuple[str, dict[str, int]]) -> None:
    base, table = statuses
    table["/health"] = 204
    table["/broken"] = 500
    assert probe(f"{base}/health") == (True, "HTTP 204")
    assert probe(f"{base}/missing") == (False, "HTTP 404")
    assert probe(f"{base}/broken") == (False, "HTTP 500")
    assert probe(f"{base}/") == (False, "HTTP 404, and HTTP 404 at /index.html")
    table["/index.html"] = 503
    assert probe(f"{base}/") == (False, "HTTP 404, and HTTP 503 at /index.html")
    table["/index.html"] = 200
    assert probe(f"{base}/") == (True, "HTTP 200 at /index.html")
    assert probe(f"http://127.0.0.1:{free_port()}/") == (False, "connection refused")


def test_a_url_answering_404_each_time_is_named_after_the_timeout(
    statuses: tuple[str, dict[str, int]], tmp_path: Path
) -> None:
    base, _ = statuses
    url = f"{base}/app"
    with pytest.raises(WebServerError) as caught:
        WebServer.start(
            "echo serving; exec sleep 30",
            url,
            cwd=tmp_path,
            timeout_ms=600,
            reuse_existing_server=False,
        )
    message = str(caught.value)
    assert message == (
        f"webServer 'echo serving; exec sleep 30' did not answer at {url} within 600 ms "
        "with a success status (200-403; last: HTTP 404); last output: serving"
    )


def test_nothing_listening_and_a_command_that_exits_say_so(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/"
    with pytest.raises(WebServerError) as caught:
        WebServer.start(
            "exec sleep 30", url, cwd=tmp_path, timeout_ms=400, reuse_existing_server=False
        )
    assert "within 400 ms with a success status (200-403; last: connection refused)" in str(
        caught.value
    )
    with pytest.raises(WebServerError) as caught:
        WebServer.start(
            "echo bye; exit 3", url, cwd=tmp_path, timeout_ms=30_000, reuse_existing_server=False
        )
    assert str(caught.value) == (
        f"webServer 'echo bye; exit 3' exited with code 3 before {url} answered "
        "(last: connection refused); last output: bye"
    )
