"""``upload`` of project files and of inline files (Playwright's ``FilePayload``) into
file inputs the page reads, and ``read_file``: real Chromium, a real ``unotest e2e`` run
against pages this test serves. Every path that leaves the project (``..``, absolute,
a symbolic link out) is refused in one sentence, and so is a folder, a missing file or
a file that is not UTF-8 text. (``check`` knows ``read_file``: test_state_clock_e2e.py.)"""

from __future__ import annotations

from pathlib import Path

from sites import config_yaml, e2e_json, scenario_source, write_project

PAGE = """<!doctype html>
<title>Files</title>
<input type=file id=one>
<input type=file id=many multiple>
<pre id=out></pre>
<script>
async function show(input) {
  const parts = [];
  for (const f of input.files) parts.push(f.name + "|" + f.type + "|" + await f.text());
  document.getElementById("out").textContent = parts.join(" ; ");
}
for (const input of document.querySelectorAll("input")) {
  input.addEventListener("change", () => show(input));
}
</script>
"""

FILES = r"""  goto("files.html")
  upload(css("#one"), "data/hello.txt")
  expect_text(css("#out"), "hello.txt|text/plain|h\u00e9llo from a file")
  const csv = {name: "notes.csv", text: "a,b;1,2"}
  const bin = {name: "x.bin", mimeType: "application/x-thing", text: "\u00fcn\u00ef"}
  upload(css("#many"), [csv, bin])
  expect_text(css("#out"), "notes.csv|text/csv|a,b;1,2 ; x.bin|application/x-thing|\u00fcn\u00ef")
  upload(css("#one"), {name: "single.json", text: "{}"})
  expect_text(css("#out"), "single.json|application/json|{}")
  upload(css("#many"), [])
  expect_text(css("#out"), "")
  log("@@ " + read_file("data/hello.txt"))
  log("@@ " + read_file("./data/../data/bom.txt"))
  try { read_file("../secret.txt") } catch (e) { log("@@ " + e.name + ": " + e.message) }
  try { read_file("/etc/hostname") } catch (e) { log("@@ " + e.name + ": " + e.message) }
  try { read_file("out/secret.txt") } catch (e) { log("@@ " + e.name + ": " + e.message) }
  try { read_file("data") } catch (e) { log("@@ " + e.name + ": " + e.message) }
  try { read_file("data/missing.txt") } catch (e) { log("@@ " + e.name + ": " + e.message) }
  try { read_file("data/binary.bin") } catch (e) { log("@@ " + e.name + ": " + e.message) }
  try { read_file(3) } catch (e) { log("@@ " + e.name + ": " + e.message) }
  try { upload(css("#one"), "out/secret.txt") } catch (e) { log("@@ " + e.message) }
  try { upload(css("#many"), ["data/hello.txt", csv]) } catch (e) { log("@@ " + e.message) }
  try { upload(css("#one"), {name: "a/b.txt", text: ""}) } catch (e) { log("@@ " + e.message) }
  try { upload(css("#one"), {name: "a.txt", txt: ""}) } catch (e) { log("@@ " + e.message) }
  try { upload(css("#one"), {name: "a.txt"}) } catch (e) { log("@@ " + e.message) }
  const kind = {name: "a.txt", text: "", mimeType: "text"}
  try { upload(css("#one"), kind) } catch (e) { log("@@ " + e.message) }
"""


def test_upload_of_project_and_inline_files_and_read_file(
    tmp_path: Path, static_site: str, chromium_path: str
) -> None:
    timeout = {"action": 3000, "expect": 2000, "navigation": 10000, "scenario": 60000}
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("not yours")
    (tmp_path / "secret.txt").write_text("not yours either")
    project = write_project(
        tmp_path / "p",
        config_yaml(f"{static_site}/p/site/", timeout=timeout, chromium=chromium_path),
        {"files": scenario_source("files", FILES, fn="test_files")},
        files={
            "site/files.html": PAGE,
            "data/hello.txt": "h\u00e9llo from a file",
            "data/bom.txt": "\ufeffwith a BOM",
            "data/binary.bin": b"ok\xff\xfe",
        },
    )
    (project / "out").symlink_to(tmp_path / "outside")
    code, result, output = e2e_json(project, "files")
    assert code == 0 and result["outcome"] == "completed", output
    said = [line[3:] for line in output.splitlines() if line.startswith("@@ ")]
    assert said == [
        "h\u00e9llo from a file",
        "with a BOM",
        "TypeError: read_file() only takes files inside the project: ../secret.txt is outside",
        "TypeError: read_file() only takes files inside the project, by a path relative to "
        "its root: /etc/hostname is outside",
        "TypeError: read_file() only takes files inside the project: out/secret.txt is "
        "outside (a symbolic link leads out)",
        "TypeError: read_file(): a folder, not a file data in the project",
        "TypeError: read_file(): no such file data/missing.txt in the project",
        "Error: read_file(): data/binary.bin is not UTF-8 text (byte 0xff at offset 2)",
        "TypeError: read_file() needs a path relative to the project root, got number",
        "upload() only takes files inside the project: out/secret.txt is outside (a symbolic "
        "link leads out)",
        "upload() needs a path, an inline file {name, mimeType, text}, or an array of one "
        "kind of them, got object and string",
        "upload(): an inline file needs a name, a file name without folders such as "
        '"notes.txt", got "a/b.txt"',
        "upload(): an inline file has no key 'txt' (did you mean 'text'?) (its keys: name, "
        "mimeType, text)",
        "upload(): the inline file a.txt needs its text, got null",
        'upload(): the mimeType of a.txt must be a type such as "text/csv", got "text"',
    ], output
