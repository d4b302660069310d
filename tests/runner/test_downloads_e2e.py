"""``download(t, {timeout}?)`` as a ported suite uses it (Playwright's
``waitForEvent('download')`` around a click, then ``suggestedFilename()`` and
``saveAs``): real Chromium, real ``unotest e2e`` runs against a site this test serves.

One scenario run makes every download (a link with ``download``, a Blob made by
script, a binary file, a stranger's file name, the same name twice), so the file stays
quick; the files it keeps are read back from the run directory."""

from __future__ import annotations

import http.server
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from net import serve_handler
from sites import (
    E2E,
    check_errors,
    config_yaml,
    e2e_json,
    scenario_source,
    write_project,
)

from runner.builtins.downloads import safe_filename, unused_path

CSV = b"item,total\nA,3\nB,4\n"
BINARY = bytes([0xFF, 0xFE, 0x00, 0x80, 0x81])
NOTES = "h\u00e9llo from a Blob"

PAGE = """<!doctype html>
<title>Downloads</title>
<a href="/report.csv" download>Export CSV</a>
<button onclick="saveNotes()">Save notes</button>
<a id=bin href="/data.bin" download="data.bin">Binary</a>
<a href="/hostile">Hostile</a>
<a href="/broken">Broken</a>
<button>Nothing</button>
<script>
function saveNotes() {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(new Blob([NOTES], {type: "text/plain"}));
  a.download = "notes.txt";
  document.body.append(a);
  a.click();
}
</script>
""".replace("NOTES", json.dumps(NOTES))

DOWNLOADS = r"""  goto("/")
  const csv = download("Export CSV")
  log("@@ " + json(csv))
  expect_equal(csv.name, "report.csv")
  assert(csv.text.includes("total"), "the CSV has its total column")
  log("@@ " + json(download("Export CSV", {timeout: 5000})))
  log("@@ " + json(download(role("button", "Save notes"))))
  log("@@ " + json(download(css("#bin"))))
  log("@@ " + json(download("Hostile")))
  try { download("Nothing", {timeout: 1500}) } catch (e) { log("@@ " + e.name + ": " + e.message) }
  try { download("Broken") } catch (e) { log("@@ " + e.name + ": " + e.message) }
  const waiting = {wait: 1}
  try { download("Nothing", waiting) } catch (e) { log("@@ " + e.name + ": " + e.message) }
  try { download("Missing", {timeout: 300}) } catch (e) { log("@@ " + e.name + ": " + e.message) }
"""


class _Site(http.server.BaseHTTPRequestHandler):
    """The page, and the files its links download."""

    def do_GET(self) -> None:
        if self.path == "/report.csv":
            self._send(CSV, "text/csv")
        elif self.path == "/data.bin":
            self._send(BINARY, "application/octet-stream")
        elif self.path == "/hostile":
            # A name that climbs out of any folder and hides itself.
            self._send(b"x", "text/plain", 'attachment; filename="../../.evil.txt"')
        elif self.path == "/broken":
            # A download the server cuts short: Chromium ends it "canceled".
            self.send_response(200)
            self.send_header("Content-Disposition", 'attachment; filename="broken.bin"')
            self.send_header("Content-Length", "100000")
            self.end_headers()
            self.wfile.write(b"x" * 100)
            self.wfile.flush()
            self.close_connection = True
        else:
            self._send(PAGE.encode(), "text/html; charset=utf-8")

    def _send(self, body: bytes, kind: str, disposition: str | None = None) -> None:
        self.send_response(200)
        self.send_header("Content-Type", kind)
        if disposition is not None:
            self.send_header("Content-Disposition", disposition)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def download_site() -> Iterator[str]:
    with serve_handler(_Site, "download-site") as url:
        yield url


def test_download_keeps_each_file_in_the_run_directory_and_describes_it(
    tmp_path: Path, download_site: str, chromium_path: str
) -> None:
    timeout = {"action": 5000, "expect": 2000, "navigation": 10000, "scenario": 60000}
    project = write_project(
        tmp_path,
        config_yaml(download_site, timeout=timeout, chromium=chromium_path),
        {"downloads": scenario_source("downloads", DOWNLOADS, fn="test_downloads")},
    )
    code, result, output = e2e_json(project, "downloads")
    assert code == 0 and result["outcome"] == "completed", output
    said = [line[3:] for line in output.splitlines() if line.startswith("@@ ")]
    assert len(said) == 9, output
    csv, again, notes, binary, hostile = (json.loads(line) for line in said[:5])
    folder = project / result["runDir"] / "downloads"

    assert csv == {
        "name": "report.csv",
        "path": f"{result['runDir']}/downloads/report.csv",
        "size": len(CSV),
        "text": CSV.decode(),
    }
    # The same name again: both files kept, the second numbered as a browser would.
    assert again["name"] == "report.csv"
    assert again["path"] == f"{result['runDir']}/downloads/report (2).csv"
    assert notes == {
        "name": "notes.txt",
        "path": f"{result['runDir']}/downloads/notes.txt",
        "size": len(NOTES.encode()),
        "text": NOTES,
    }
    assert binary["size"] == len(BINARY) and binary["text"] is None  # not UTF-8
    assert (folder / "report.csv").read_bytes() == CSV
    assert (folder / "report (2).csv").read_bytes() == CSV
    assert (folder / "data.bin").read_bytes() == BINARY

    # A stranger's name: kept as one plain file inside the folder, no hidden file.
    kept = (project / hostile["path"]).resolve()
    assert kept.parent == folder.resolve() and kept.read_bytes() == b"x", hostile
    assert not kept.name.startswith(".") and hostile["size"] == 1, hostile
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        ["report.csv", "report (2).csv", "notes.txt", "data.bin", kept.name]
    )

    assert said[5] == (
        'TimeoutError: download: clicking "Nothing" started no download within 1500 ms'
    )
    assert said[6].startswith("Error: download: the download of 'broken.bin' that clicking "), said
    assert said[6].endswith("failed: canceled"), said
    assert said[7] == (
        "TypeError: download() has no option 'wait' (its only option: timeout, in milliseconds)"
    )
    # A target that is not there reads as click's would, within this call's timeout.
    assert said[8].startswith('LocatorError: no visible element matches "Missing" after 300 ms')


def test_check_knows_the_arity_of_download(tmp_path: Path) -> None:
    fine = '  download("Export")\n  download(css("a"), {timeout: 100})\n'
    wrong = '  download()\n  download("Export", {}, 3)\n'
    project = write_project(
        tmp_path,
        config_yaml(None),
        {"fine": scenario_source("fine", fine), "wrong": scenario_source("wrong", wrong)},
    )
    problems = check_errors(project)
    found = [(p["path"], p["line"], p["message"]) for p in problems]
    assert found == [
        (f"{E2E}/wrong.test.js", 5, "TypeError: download() takes 1 to 2 arguments but got 0"),
        (f"{E2E}/wrong.test.js", 6, "TypeError: download() takes 1 to 2 arguments but got 3"),
    ], found


@pytest.mark.parametrize(
    ("suggested", "kept"),
    [
        ("report.csv", "report.csv"),
        ("../../etc/passwd", "_.._etc_passwd"),
        ("..", "download"),
        ("", "download"),
        (".bashrc", "bashrc"),
        ("a\\b/c.txt", "a_b_c.txt"),
        ("line\nbreak\x00.txt", "line_break_.txt"),
    ],
)
def test_a_suggested_name_becomes_one_plain_file_name(suggested: str, kept: str) -> None:
    assert safe_filename(suggested) == kept


def test_a_long_name_is_cut_to_what_a_file_system_takes_keeping_its_extension(
    tmp_path: Path,
) -> None:
    """Cut by its UTF-8 bytes (255 a name on Linux): 200 characters of Cyrillic are 400
    bytes, which could not be saved."""
    for long in ["отчёт" * 60 + ".csv", "r" * 300 + ".csv", "名" * 300]:
        kept = safe_filename(long)
        assert len(kept.encode()) <= 200, kept
        assert kept.endswith(".csv") == long.endswith(".csv")
        assert long.startswith(kept.removesuffix(".csv"))
        assert unused_path(tmp_path, kept).exists()  # the file system takes it


def test_a_taken_name_gets_a_number_before_its_extension(tmp_path: Path) -> None:
    names = [unused_path(tmp_path, name).name for name in ["a.csv", "a.csv", "a.csv", "README"]]
    names.append(unused_path(tmp_path, "README").name)
    assert names == ["a.csv", "a (2).csv", "a (3).csv", "README", "README (2)"]
