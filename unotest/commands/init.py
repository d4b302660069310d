"""``unotest init``: a project that passes on its first run.

It writes a tiny site of its own and a ``webServer`` entry that serves it, so the
sample scenario has something real to click before the user points ``baseURL`` at
their application. Existing files are never overwritten.
"""

from __future__ import annotations

import argparse
import socket
from pathlib import Path

from runner.errors import UsageError

__all__ = ["init_command", "scaffold"]

_CONFIG = """\
# unotest configuration: every key is optional (see 'unotest doctor').
baseURL: http://127.0.0.1:{port}
browser: chromium
headless: true
timeout:
  action: 5000
  expect: 5000
  navigation: 30000
  scenario: 300000
trace: on-failure
# The sample site; point baseURL at your application and remove this block.
webServer:
  command: python3 -m http.server {port} --bind 127.0.0.1 --directory site
  url: http://127.0.0.1:{port}/index.html
  timeout: 30000
  reuseExistingServer: true
"""

# What the sample scenario needs from a configuration that init did not write.
_SAMPLE_SERVED = """\
baseURL: http://127.0.0.1:{port}
webServer:
  command: python3 -m http.server {port} --bind 127.0.0.1 --directory site
  url: http://127.0.0.1:{port}/index.html
"""

_SCENARIO = """\
// id-welcome
// The sample page greets its visitor
// #4f46e5
function test_welcome() {
  goto("/")
  expect_title("unotest sample")
  expect_visible(role("heading", "Hello from unotest"))
  greet(env("VISITOR", "friend"))
}
"""

_HELPER = """\
// Helpers: snake_case functions that every scenario can call without an import.

function greet(name) {
  fill("Your name", name)
  click("Greet")
  expect_text(testid("greeting"), `Hello, ${name}!`)
}
"""

_COLLECTION = """\
description: Scenarios to run on every change
scenarios:
  - welcome
"""

_SITE = """\
<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>unotest sample</title></head>
<body>
  <h1>Hello from unotest</h1>
  <label>Your name <input id="name"></label>
  <button id="greet">Greet</button>
  <p data-testid="greeting"></p>
  <script>
    document.getElementById("greet").addEventListener("click", () => {
      const name = document.getElementById("name").value;
      document.querySelector("[data-testid=greeting]").textContent = `Hello, ${name}!`;
    });
  </script>
</body>
</html>
"""

_ENV = """\
# KEY=VALUE lines read by env(); names with PASS, SECRET, TOKEN, KEY, AUTH, ...
# are secrets and are masked in every artifact.
VISITOR=friend
"""

# What runs write: unotest/.runs/ (run directories), .unotest/ (failure bundles),
# unotest/.history/ (outcomes for 'unotest history'), unotest/.cache/ (the project
# index cache, rebuilt when missing), the viewer's lock (it names its token) and log,
# the watch daemon's discovery file; unotest/.env holds the project's secrets, and
# unotest/.auth/ the signed-in sessions save_storage_state writes (docs/suites.md).
_GITIGNORE_LINES = (
    "unotest/.runs/",
    ".unotest/",
    "unotest/.env",
    "unotest/.viewer.lock",
    "unotest/.viewer.log",
    "unotest/.cache/",
    "unotest/.history/",
    "unotest/.daemon.json",
    "unotest/.daemon.lock",
    "unotest/.auth/",
)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def scaffold(root: Path, port: int | None = None) -> tuple[list[str], list[str]]:
    """Write the sample project; returns (written, kept) project-relative paths."""
    chosen = port or _free_port()
    files = {
        "unotest.config.yaml": _CONFIG.format(port=chosen),
        "unotest/e2e/welcome.test.js": _SCENARIO,
        "unotest/e2e/_helpers/greeting.js": _HELPER,
        "unotest/e2e/_collections/smoke.yaml": _COLLECTION,
        "unotest/.env": _ENV,
        "site/index.html": _SITE,
    }
    written: list[str] = []
    kept: list[str] = []
    for relative, content in files.items():
        path = root / relative
        if path.exists():
            kept.append(relative)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
        written.append(relative)
    gitignore = root / ".gitignore"
    existing = gitignore.read_text(encoding="utf-8").splitlines() if gitignore.exists() else []
    missing = [line for line in _GITIGNORE_LINES if line not in existing]
    if missing:
        with gitignore.open("a", encoding="utf-8") as handle:
            if existing and existing[-1].strip():
                handle.write("\n")
            handle.write("\n".join(missing) + "\n")
        written.append(".gitignore")
    return written, kept


def init_command(args: argparse.Namespace) -> int:
    root = Path(args.directory).resolve()
    if root.exists() and not root.is_dir():
        raise UsageError(f"{args.directory} is not a directory")
    port = _free_port()
    try:
        root.mkdir(parents=True, exist_ok=True)
        had_gitignore = (root / ".gitignore").exists()
        written, kept = scaffold(root, port)
    except OSError as err:
        where = f" ({err.filename})" if err.filename else ""
        raise UsageError(
            f"cannot create the project in {args.directory}: {err.strerror or err}{where}"
        ) from None
    for relative in written:
        done = "updated" if relative == ".gitignore" and had_gitignore else "created"
        print(f"  {done:<7}  {relative}")
    for relative in kept:
        print(f"  kept     {relative} (already there)")
    where = "" if root == Path.cwd().resolve() else f"cd {args.directory} && "
    if "unotest.config.yaml" in kept:
        # The sample needs the site it comes with: an existing config may serve another.
        print(
            "\nthe existing unotest.config.yaml was kept: the sample scenario needs the "
            "sample page (site/index.html) at its baseURL, e.g. with these settings:"
        )
        for line in _SAMPLE_SERVED.format(port=port).splitlines():
            print(f"    {line}")
        print(f"then: {where}unotest e2e welcome")
        return 0
    print(f"\nnext: {where}unotest e2e welcome")
    return 0
