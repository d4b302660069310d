"""Playwright's driver keeps its compiled code in the user's cache folder
(``runner/browser/node_cache.py``), a user's own choice wins, and a webServer command does not
inherit our setting.

Each test runs ``unotest e2e`` as a user does (the console script, real Chromium, a
webServer this project starts on 127.0.0.1 that writes down the environment it got).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

from net import free_port
from sites import config_yaml, unotest_env, write_project

from runner.browser.node_cache import cache_folder

UNOTEST = str(Path(sys.executable).with_name("unotest"))
SCENARIO = """\
// id-cache
// The driver's compile cache
// #123456
function test_cache() {
  goto("/index.html")
  expect_title("Cache")
}
"""
PAGE = "<!doctype html><html><head><title>Cache</title></head><body>ok</body></html>"


def _run(tmp_path: Path, chromium_path: str, **env: str) -> dict[str, str]:
    """One passing run; the environment its webServer command saw."""
    port = free_port()
    serve = f"{shlex.quote(sys.executable)} -m http.server {port} --bind 127.0.0.1 --directory site"
    web_server = (
        "webServer:\n"
        f"  command: {json.dumps('env -0 > webserver.env && exec ' + serve)}\n"
        f"  url: http://127.0.0.1:{port}/index.html\n"
        "  timeout: 30000\n"
    )
    project = write_project(
        tmp_path / "project",
        config_yaml(f"http://127.0.0.1:{port}", chromium=chromium_path, extra=web_server),
        {"cache": SCENARIO},
        files={"site/index.html": PAGE},
    )
    done = subprocess.run(
        [UNOTEST, "e2e", "cache"],
        cwd=project,
        env=unotest_env(drop=("NODE_COMPILE_CACHE", "NODE_DISABLE_COMPILE_CACHE"), **env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    pairs = (project / "webserver.env").read_bytes().split(b"\0")
    return dict(p.decode().split("=", 1) for p in pairs if b"=" in p)


def _cached_versions(folder: Path) -> list[str]:
    """Node's compile cache holds one folder per Node version and V8 flags."""
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def test_the_driver_fills_the_users_cache_folder_and_the_web_server_is_left_alone(
    tmp_path: Path, chromium_path: str
) -> None:
    cache_home = tmp_path / "cache-home"
    seen = _run(tmp_path, chromium_path, XDG_CACHE_HOME=str(cache_home))

    folder = cache_home / "unotest" / "node-compile-cache"
    versions = _cached_versions(folder)
    assert versions and all(v.startswith("v") for v in versions), versions
    assert any(os.scandir(folder / versions[0])), "Node wrote no compiled code"
    assert "NODE_COMPILE_CACHE" not in seen
    assert seen["XDG_CACHE_HOME"] == str(cache_home)  # the rest of the environment passes


def test_a_cache_folder_the_user_chose_is_used_and_passed_on(
    tmp_path: Path, chromium_path: str
) -> None:
    cache_home, mine = tmp_path / "cache-home", tmp_path / "mine"
    seen = _run(
        tmp_path, chromium_path, XDG_CACHE_HOME=str(cache_home), NODE_COMPILE_CACHE=str(mine)
    )

    assert _cached_versions(mine)
    assert not (cache_home / "unotest").exists()
    assert seen["NODE_COMPILE_CACHE"] == str(mine)


def test_node_disable_compile_cache_turns_it_off(tmp_path: Path, chromium_path: str) -> None:
    cache_home = tmp_path / "cache-home"
    seen = _run(
        tmp_path, chromium_path, XDG_CACHE_HOME=str(cache_home), NODE_DISABLE_COMPILE_CACHE="1"
    )

    assert not (cache_home / "unotest").exists()
    assert "NODE_COMPILE_CACHE" not in seen


def test_the_cache_folder_follows_each_platforms_convention() -> None:
    folder = "unotest/node-compile-cache"
    linux = {"HOME": "/home/ann", "XDG_CACHE_HOME": "/var/cache/ann"}
    assert cache_folder(linux, "linux") == Path("/var/cache/ann") / folder
    assert cache_folder({"HOME": "/home/ann"}, "linux") == Path("/home/ann/.cache") / folder
    assert cache_folder({"HOME": "/Users/ann"}, "darwin") == Path(
        "/Users/ann/Library/Caches"
    ) / folder
    assert cache_folder({"LOCALAPPDATA": "/c/ann/local"}, "win32") == Path("/c/ann/local") / folder
    assert cache_folder({"USERPROFILE": "/c/ann"}, "win32") == Path("/c/ann/AppData/Local") / folder
    # No home, or a relative one: no cache rather than one in the working directory.
    assert cache_folder({}, "linux") is None
    assert cache_folder({"HOME": "relative", "XDG_CACHE_HOME": "rel"}, "linux") is None
