"""``/api/events`` on a real ``unotest view``, read by a real HTTP client (httpx) while a
real collection runs in real Chromium: the same version-1 envelopes as the collection's
JSON report, live, each a server-sent event named after the envelope's type."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from flaky_site import FlakyProject, FlakySite, find_chromium, served, validate_envelopes
from sites import unotest_env


@pytest.fixture
def site() -> Iterator[FlakySite]:
    yield from served()


@pytest.fixture
def viewer(tmp_path: Path, site: FlakySite) -> Iterator[tuple[FlakyProject, str]]:
    project = FlakyProject(tmp_path / "proj", site, find_chromium())
    proc = subprocess.Popen(
        [sys.executable, "-m", "unotest", "view", "--no-open"],
        cwd=project.root,
        env=unotest_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), proc.stderr.read() if proc.stderr else ""
        yield project, url
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(30)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


class SseReader:
    """Reads ``/api/events`` in a thread: (event name, decoded data) until ``run_end``."""

    def __init__(self, url: str) -> None:
        base, _, query = url.partition("?")
        self.url = base.rstrip("/") + "/api/events?" + query
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.connected = threading.Event()
        self.ended = threading.Event()
        self.content_type = ""
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        with (
            httpx.Client(timeout=httpx.Timeout(10, read=120)) as client,
            client.stream("GET", self.url) as response,
        ):
            self.content_type = response.headers.get("content-type", "")
            name = ""
            for line in response.iter_lines():
                if line.startswith(":"):
                    self.connected.set()
                elif line.startswith("event: "):
                    name = line[len("event: ") :]
                elif line.startswith("data: "):
                    data = json.loads(line[len("data: ") :])
                    self.events.append((name, data))
                    if data["type"] == "run_end":
                        self.ended.set()
                        return


def test_a_collection_streams_its_envelopes_live(
    viewer: tuple[FlakyProject, str], tmp_path: Path
) -> None:
    project, url = viewer
    project.scenario("ok", "ok", "0")
    project.scenario("flaky", "flaky", "1")
    project.collection("nightly", ["ok", "flaky"])
    reader = SseReader(url)
    assert reader.connected.wait(30), "the stream did not open"
    assert reader.content_type.startswith("text/event-stream")

    report = tmp_path / "report.json"
    done = project.cli("collection", "nightly", "--retries", "1", "--reporter", f"json={report}")
    assert done.code == 0, done
    assert reader.ended.wait(30), reader.events

    names = [name for name, _ in reader.events]
    envelopes = [data for _, data in reader.events]
    assert names == [e["type"] for e in envelopes]  # the SSE event name is the type
    validate_envelopes(envelopes)
    assert envelopes == json.loads(report.read_text())
    assert names.count("retry") == 1
    assert [e["data"]["status"] for e in envelopes if e["type"] == "test_end"].count("flaky") == 1


def test_the_stream_needs_the_token(viewer: tuple[FlakyProject, str]) -> None:
    _, url = viewer
    base = url.partition("?")[0].rstrip("/")
    answer = httpx.get(base + "/api/events", timeout=10)
    assert answer.status_code == 401


def test_only_version_1_envelopes_from_files_that_appear_later(
    viewer: tuple[FlakyProject, str],
) -> None:
    project, url = viewer
    old = project.root / "unotest/.runs/old-run"
    old.mkdir(parents=True)
    (old / "events.ndjson").write_text(
        json.dumps({"protocol_version": 1, "type": "x", "data": {}}) + "\n"
    )
    reader = SseReader(url)
    assert reader.connected.wait(30)
    new = project.root / "unotest/.runs/new-run"
    new.mkdir()
    lines = [
        {"protocol_version": 2, "type": "run_start", "data": {}},
        {"protocol_version": 1, "type": "run_start", "data": {"total": 0, "random_seed": None}},
        "not json",
        {"protocol_version": 1, "type": "run_end", "data": {"total": 0}},
    ]
    with open(new / "events.ndjson", "a") as live:
        for line in lines:
            live.write((line if isinstance(line, str) else json.dumps(line)) + "\n")
    assert reader.ended.wait(30), reader.events
    assert [(name, data["protocol_version"]) for name, data in reader.events] == [
        ("run_start", 1),
        ("run_end", 1),
    ]  # the file present before the connection is not replayed
