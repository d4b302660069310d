"""runner.project.envfile: unotest/.env read as an EnvFile, EnvUpdate written back byte for byte."""

from __future__ import annotations

import io
import stat
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from dotenv import dotenv_values

from runner import protocol
from runner.errors import UsageError
from runner.project.envfile import read_env_view, save_env_file

ENV = (
    "# the site under test\n"
    "BASE_URL=http://localhost:3000  # local\n"
    "\n"
    "export API_TOKEN='s3cr3t'\n"
    'GREETING="hello world"\n'
    "# OLD_PASSWORD=hunter2\n"
    "HEADLESS=1\r\n"
    "EMPTY=\n"
    "# just a note, no key here\n"
    "LAST = tail"
)


def parse_env_file(path: Path) -> protocol.EnvFile:
    """The ``EnvFile`` of the Env page's view (without the view's own keys)."""
    view = read_env_view(path)
    return {"version": view["version"], "vars": view["vars"]}


@pytest.fixture
def env(tmp_path: Path) -> Path:
    path = tmp_path / ".env"
    path.write_bytes(ENV.encode())
    path.chmod(0o600)
    return path


def test_parse_lists_active_and_commented_keys_in_order(
    env: Path, protocol_validate: Callable[[str, object], None]
) -> None:
    parsed = parse_env_file(env)
    protocol_validate("EnvFile", parsed)
    assert [(v["key"], v["value"], v["commented"]) for v in parsed["vars"]] == [
        ("BASE_URL", "http://localhost:3000", False),
        ("API_TOKEN", "s3cr3t", False),
        ("GREETING", "hello world", False),
        ("OLD_PASSWORD", "hunter2", True),
        ("HEADLESS", "1", False),
        ("EMPTY", "", False),
        ("LAST", "tail", False),
    ]
    flags = {v["key"]: (v["secret"], v["bool"]) for v in parsed["vars"]}
    assert flags["API_TOKEN"] == (True, False)
    assert flags["OLD_PASSWORD"] == (True, False)
    assert flags["HEADLESS"] == (False, True)
    assert flags["BASE_URL"] == (False, False)


def test_parse_of_a_missing_file_is_empty(tmp_path: Path) -> None:
    assert parse_env_file(tmp_path / ".env") == {"version": 1, "vars": []}


def test_update_changes_only_the_values_asked_for(env: Path) -> None:
    save_env_file(env, {"version": 1, "values": {"BASE_URL": "http://x:1", "HEADLESS": "0"}})
    expected = ENV.replace("localhost:3000", "x:1").replace("HEADLESS=1", "HEADLESS=0")
    assert env.read_bytes() == expected.encode()
    assert stat.S_IMODE(env.stat().st_mode) == 0o600


def test_update_keeps_quoting_styles(env: Path) -> None:
    save_env_file(
        env, {"version": 1, "values": {"API_TOKEN": "n3w", "GREETING": "hi", "LAST": "end"}}
    )
    text = env.read_text()
    assert "export API_TOKEN='n3w'\n" in text
    assert 'GREETING="hi"\n' in text
    assert text.endswith("LAST = end")


@pytest.mark.parametrize(
    "value",
    [
        "two words",
        'it\'s "quoted"',
        "a # not a comment",
        "line one\nline two",
        "back\\slash\\n",
        " padded ",
        "#hash",
        "",
        "ünï¢ødé",
    ],
)
@pytest.mark.parametrize("key", ["BASE_URL", "API_TOKEN", "GREETING", "EMPTY", "LAST"])
def test_awkward_values_round_trip_through_python_dotenv(env: Path, key: str, value: str) -> None:
    save_env_file(env, {"version": 1, "values": {key: value}})
    read_back = dotenv_values(env, interpolate=False)
    assert read_back[key] == value
    others = {k: v for k, v in read_back.items() if k != key}
    assert others == {
        k: v
        for k, v in dotenv_values(stream=io.StringIO(ENV), interpolate=False).items()
        if k != key
    }
    assert {v["key"]: v["value"] for v in parse_env_file(env)["vars"]}[key] == value


def test_inline_comment_after_an_empty_value_stays_a_comment(tmp_path: Path) -> None:
    path = tmp_path / ".env"
    path.write_text("KEY= # set me\nOTHER=x\n")
    save_env_file(path, {"version": 1, "values": {"KEY": "v"}})
    assert path.read_text() == "KEY= v # set me\nOTHER=x\n"
    assert dotenv_values(path)["KEY"] == "v"


def test_a_commented_key_cannot_be_set_and_the_file_is_untouched(env: Path) -> None:
    before = env.stat().st_mtime_ns, env.read_bytes()
    with pytest.raises(UsageError, match="OLD_PASSWORD is commented out"):
        save_env_file(env, {"version": 1, "values": {"BASE_URL": "y", "OLD_PASSWORD": "x"}})
    with pytest.raises(UsageError, match="NOPE is not a key"):
        save_env_file(env, {"version": 1, "values": {"NOPE": "x"}})
    assert (env.stat().st_mtime_ns, env.read_bytes()) == before
    assert "# OLD_PASSWORD=hunter2\n" in env.read_text()


def test_a_bom_is_kept(tmp_path: Path) -> None:
    path = tmp_path / ".env"
    path.write_bytes("\ufeffA=1\nB=2\n".encode())
    save_env_file(path, {"version": 1, "values": {"B": "3"}})
    assert path.read_bytes() == "\ufeffA=1\nB=3\n".encode()


@pytest.mark.skipif(sys.platform == "win32", reason="flock")
def test_a_save_waits_while_another_unotest_process_saves(env: Path) -> None:
    """The viewer and the MCP server may save ``.env`` at once: the version check and the
    write of one happen while the other waits (an advisory lock on the folder)."""
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD_LOCK, str(env.parent)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        saved = threading.Event()

        def save() -> None:
            save_env_file(env, {"version": 1, "values": {"HEADLESS": "0"}})
            saved.set()

        thread = threading.Thread(target=save)
        thread.start()
        assert not saved.wait(0.5)  # held by the other process: not saved meanwhile
        assert b"HEADLESS=1" in env.read_bytes()
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(10)
    thread.join(10)
    assert saved.is_set()
    assert b"HEADLESS=0" in env.read_bytes()


_HOLD_LOCK = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
sys.stdin.read()
"""
