"""The viewer page has one client module: ``unotest/viewer/static/api.js``.

Every HTTP request the page makes (JSON calls, a save with its version, a run's files,
the probe ``live.js`` makes when its socket closes) is a function of ``api.js``, so the
URLs, the cookie, the headers and what a 401/403 means are decided in one place (the
style guide: no component talks to the server on its own). This test reads every
module under ``static/`` (``vendor/`` excepted: third-party code) and fails when one
other than ``api.js`` calls ``fetch(`` or uses ``XMLHttpRequest``.

WebSockets are allowed anywhere: ``/ws`` (``live.js``) and ``/ws/terminal``
(``terminals.js``) are the live channels, not REST calls, and stay in their modules.
Comments are not code: a comment that mentions ``fetch(`` is not a call.
"""

from __future__ import annotations

import re
from pathlib import Path

STATIC = Path(__file__).resolve().parents[2] / "unotest" / "viewer" / "static"
CLIENT = "api.js"

# `fetch(` (also `window.fetch (`), not `refetch(` nor `prefetch(`; XMLHttpRequest in any use.
SERVER_CALL = re.compile(r"(?<![\w$])fetch\s*\(|\bXMLHttpRequest\b")
# Block comments, and line comments that start a line or follow a space or a code
# character other than ':' (so "https://host" in a string is not cut as a comment).
COMMENT = re.compile(r"/\*.*?\*/|(?:^|(?<=[\s;,{}()]))//[^\n]*", re.DOTALL)


def without_comments(source: str) -> str:
    """`source` with its comments blanked, newlines kept (line numbers stay right)."""
    return COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), source)


def server_calls(root: Path) -> dict[str, list[str]]:
    """Every module under `root` (not under vendor/) that makes a server call itself:
    its path relative to `root` → the lines ("LINE: text") that do."""
    found: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*.js")):
        rel = path.relative_to(root)
        if rel.parts[0] == "vendor":
            continue
        source = path.read_text(encoding="utf-8")
        code = without_comments(source).splitlines()
        lines = source.splitlines()
        hits = [
            f"{n}: {lines[n - 1].strip()}"
            for n, line in enumerate(code, 1)
            if SERVER_CALL.search(line)
        ]
        if hits:
            found[rel.as_posix()] = hits
    return found


def calls_outside_client(root: Path) -> dict[str, list[str]]:
    return {rel: hits for rel, hits in server_calls(root).items() if rel != CLIENT}


def test_only_api_js_talks_to_the_server() -> None:
    found = server_calls(STATIC)
    # The scan sees the page's modules: api.js itself is found making its calls.
    assert CLIENT in found, f"no fetch( found in {STATIC / CLIENT}: is the scanner broken?"
    outside = calls_outside_client(STATIC)
    assert outside == {}, (
        "only api.js may call the server; add a function there and call it instead:\n"
        + "\n".join(f"{rel}:{hit}" for rel, hits in outside.items() for hit in hits)
    )


def test_the_scanner_reports_a_module_calling_the_server_itself(tmp_path: Path) -> None:
    (tmp_path / "views").mkdir()
    (tmp_path / "vendor").mkdir()
    (tmp_path / CLIENT).write_text("export const get = (p) => fetch(p, {});\n", encoding="utf-8")
    (tmp_path / "views" / "rogue.js").write_text(
        '// reads the file itself\nconst response = await fetch("/api/project");\n',
        encoding="utf-8",
    )
    (tmp_path / "views" / "old.js").write_text(
        "const xhr = new XMLHttpRequest();\n",
        encoding="utf-8",
    )
    (tmp_path / "views" / "window.js").write_text(
        "window.fetch (url);\n",
        encoding="utf-8",
    )
    # Not calls: a comment, refetch(), a URL in a string, a WebSocket, vendored code.
    (tmp_path / "views" / "fine.js").write_text(
        "// api.js is the only module that may call fetch(path)\n"
        "/* no fetch( here either */\n"
        "const refetch = () => load(); refetch();\n"
        'const url = "https://example.test/x"; // fetch( in a trailing comment\n'
        "const ws = new WebSocket(url);\n",
        encoding="utf-8",
    )
    (tmp_path / "vendor" / "lib.mjs").write_text("fetch(x);\n", encoding="utf-8")
    (tmp_path / "vendor" / "lib.js").write_text("fetch(x);\n", encoding="utf-8")

    outside = calls_outside_client(tmp_path)

    assert outside == {
        "views/old.js": ["1: const xhr = new XMLHttpRequest();"],
        "views/rogue.js": ['2: const response = await fetch("/api/project");'],
        "views/window.js": ["1: window.fetch (url);"],
    }
    assert CLIENT in server_calls(tmp_path)
