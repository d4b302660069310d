"""A restarted ``unotest view`` takes its last port and token again (issue 32, defect 11):
``unotest/.cache/viewer.json`` read and written (``unotest.viewer.lockfile``), the port
preferred only while it is free (``unotest.viewer.server.bind_preferring``), and the CLI
as a user runs it: the same URL after a stop, another port and token once the old port
is taken by another program, a new token with ``--new-token``."""

from __future__ import annotations

import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from sites import scenario_source, unotest_env, write_project

from runner.errors import UsageError
from unotest.viewer.lockfile import LastViewer, last_viewer, remember_viewer
from unotest.viewer.server import bind_preferring

TOKEN = "t" * 32


def test_the_last_viewer_is_kept_for_this_user_and_read_back_only_whole(tmp_path: Path) -> None:
    assert last_viewer(tmp_path, "127.0.0.1") is None
    remember_viewer(tmp_path, LastViewer("127.0.0.1", 8765, TOKEN))
    path = tmp_path / "unotest" / ".cache" / "viewer.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # it holds the token
    assert last_viewer(tmp_path, "127.0.0.1") == LastViewer("127.0.0.1", 8765, TOKEN)
    assert last_viewer(tmp_path, "0.0.0.0") is None  # another host: no preference
    for text in ("{", "[]", '{"host": "127.0.0.1", "port": 0, "token": "' + TOKEN + '"}'):
        path.write_text(text, encoding="utf-8")
        assert last_viewer(tmp_path, "127.0.0.1") is None, text
    path.write_text('{"host": "127.0.0.1", "port": 8765, "token": "short"}', encoding="utf-8")
    assert last_viewer(tmp_path, "127.0.0.1") is None  # not a token this viewer makes


def test_port_0_prefers_the_last_port_while_it_is_free() -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        taken = holder.getsockname()[1]
        other = bind_preferring("127.0.0.1", 0, taken)
        with other:
            assert other.getsockname()[1] != taken
        with pytest.raises(UsageError, match=f"cannot listen on 127.0.0.1:{taken}"):
            bind_preferring("127.0.0.1", taken, None)  # asked for: refused, not moved
    again = bind_preferring("127.0.0.1", 0, taken)
    with again:
        assert again.getsockname()[1] == taken


def _url(root: Path, *args: str) -> str:
    """The URL ``unotest view`` prints, the viewer stopped once it is printed."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "unotest", "view", "--no-open", *args],
        cwd=root,
        env=unotest_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert url.startswith("http://127.0.0.1:"), err
    return url


def test_a_restarted_viewer_prints_the_same_url_unless_its_port_is_taken(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "proj", "headless: true\n", {"smoke": scenario_source("smoke", '  log("x")\n')}
    )
    first = _url(root)
    assert _url(root) == first  # the same port and token: open pages reconnect
    port = int(first.split(":")[2].split("/")[0])
    with socket.socket() as holder:  # another program took the port meanwhile
        holder.bind(("127.0.0.1", port))
        holder.listen(1)
        moved = _url(root)
    assert moved.split("?")[0] != first.split("?")[0]
    assert moved.split("token=")[1] != first.split("token=")[1]  # not the old page's token
    renewed = _url(root, "--new-token")
    assert renewed.split("?")[0] == moved.split("?")[0]
    assert renewed.split("token=")[1] != moved.split("token=")[1]
