"""A run's page log: every run, passing ones too, writes its page's requests and console
messages to ``network.jsonl`` and ``console.jsonl`` as they happen, masked and bounded;
the engine reads them back (``runner.store.page_log``) for the viewer and MCP.

One real ``unotest e2e`` run on real Chromium against a page this test serves on
127.0.0.1: the page fetches a URL holding a secret of ``unotest/.env``, a missing file and
one a route mocks, and logs to the console; the scenario passes. The bounds are proven
in-process on the writer alone (no browser needed to count lines)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from net import serve_directory
from sites import config_yaml, e2e_json, scenario_source, write_project

from runner import events
from runner.browser.page_log import PageLog
from runner.project.secrets import MASK, SecretMasker
from runner.store.page_log import page_log_summary, read_page_log
from unotest.mcp.run_tools import RunTools
from unotest.mcp.state import ToolState

TOKEN = "pl-s3cret-Tok3n"
DATA = b'{"items": [1, 2, 3]}'
PAGE = """<!doctype html><title>Log page</title><link rel="icon" href="data:,">
<p id="out">waiting</p>
<script>
  const token = new URLSearchParams(location.search).get("t");
  console.log("page says token " + token);
  fetch("/data.json?token=" + token)
    .then((r) => r.json())
    .then(() => fetch("/missing.json"))
    .then(() => fetch("/mocked.json"))
    .then(() => {
      console.error("page error words");
      document.getElementById("out").textContent = "loaded";
    });
</script>
"""
BODY = """  route("**/mocked.json", {status: 503, body: "down"})
  goto("/index.html?t=" + env("API_TOKEN"))
  expect_text(css("#out"), "loaded")
"""


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_passing_run_writes_its_requests_and_console_messages_masked(
    tmp_path: Path, chromium_path: str
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text(PAGE, encoding="utf-8")
    (site / "data.json").write_bytes(DATA)
    with serve_directory(site) as url:
        project = write_project(
            tmp_path / "project",
            config_yaml(url, chromium=chromium_path),
            {"logs": scenario_source("logs", BODY)},
            files={"unotest/.env": f"API_TOKEN={TOKEN}\n"},
        )
        code, result, output = e2e_json(project, "logs")
    assert code == 0 and result["outcome"] == "completed", output
    run_dir = project / result["runDir"]
    for name in ("network.jsonl", "console.jsonl"):
        assert TOKEN.encode() not in (run_dir / name).read_bytes(), name

    network = {line["url"].rsplit("/", 1)[1]: line for line in _lines(run_dir / "network.jsonl")}
    data = network[f"data.json?token={MASK}"]
    assert data["method"] == "GET" and data["status"] == 200 and data["failure"] is None
    assert data["size"] == len(DATA) and isinstance(data["durationMs"], float)
    assert isinstance(data["t"], int) and "routed" not in data
    assert network["missing.json"]["status"] == 404
    assert network["mocked.json"]["status"] == 503
    assert network["mocked.json"]["routed"] == "fulfilled"
    console = _lines(run_dir / "console.jsonl")
    said = {(line["type"], line["text"]) for line in console}
    assert ("log", f"page says token {MASK}") in said
    assert ("error", "page error words") in said
    assert all(line["url"].startswith(url) for line in console if line["type"] == "log")

    # The engine reads them back from a byte offset, and on from where it stopped.
    chunk = read_page_log(run_dir, "network", 0)
    assert chunk["recorded"] and chunk["capped"] is None
    assert len(chunk["entries"]) == len(network)
    assert chunk["next"] == (run_dir / "network.jsonl").stat().st_size
    assert read_page_log(run_dir, "network", chunk["next"])["entries"] == []
    summary = page_log_summary(run_dir, 10)
    assert summary is not None
    assert summary["network"]["problems"] == 2  # the 404 and the mocked 503
    assert any(
        s.endswith("/mocked.json 503 (fulfilled by a route)") for s in summary["network"]["shown"]
    )
    assert "error: page error words" in "\n".join(summary["console"]["shown"])

    # MCP's get_run says the same, in a few words.
    page = RunTools(ToolState(project)).get_run(run_dir.name)["pageLog"]
    assert isinstance(page, dict)
    assert page["network"]["count"] == len(network) and page["network"]["problems"] == 2
    assert page["console"]["count"] == len(console)


def test_a_page_log_is_capped_by_lines_and_by_bytes_and_says_so(tmp_path: Path) -> None:
    masker = SecretMasker()
    masker.add(TOKEN)
    by_lines = tmp_path / "lines"
    by_lines.mkdir()
    log = PageLog(by_lines, masker.mask, max_lines=3)
    for n in range(10):
        log.console(events.console_line("log", f"message {n} {TOKEN}"))
    chunk = read_page_log(by_lines, "console")
    assert [e["text"] for e in chunk["entries"]] == [f"message {n} {MASK}" for n in range(3)]
    assert chunk["capped"] is not None and chunk["capped"]["limit"] == "lines"
    assert chunk["capped"]["kept"] == 3
    assert read_page_log(by_lines, "network")["entries"] == []  # there, and empty

    by_bytes = tmp_path / "bytes"
    by_bytes.mkdir()
    log = PageLog(by_bytes, masker.mask, max_bytes=1000)
    for n in range(50):
        url = f"http://x/{n}" + "a" * 100
        log.network(
            events.network_line("GET", url, status=200, duration_ms=1.0, size=1, failure=None)
        )
    log.close()
    chunk = read_page_log(by_bytes, "network")
    assert 0 < len(chunk["entries"]) < 10
    assert chunk["capped"] is not None and chunk["capped"]["limit"] == "bytes"
    assert (by_bytes / "network.jsonl").stat().st_size < 1200
