"""runner.project.envfile's save for the Env page: new keys appended as lines that read
back as typed, a missing file created for its owner only, and a save refused when the
file is no longer at the version it was made on."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from dotenv import dotenv_values

from runner.errors import UsageError
from runner.project.editing import FileConflict
from runner.project.envfile import read_env_view, save_env_file

NOTHING = {"version": 1, "values": {}}


def test_new_keys_are_appended_in_the_file_s_own_line_endings_and_read_back_as_typed(
    tmp_path: Path,
) -> None:
    env = tmp_path / ".env"
    env.write_bytes(b"\xef\xbb\xbfA=1\r\n# note\r\nB=2")  # a BOM, CRLF, no last line end
    env.chmod(0o640)
    added = [
        ("PLAIN", "x"),
        ("SPACED", "two words"),
        ("DOLLAR", "a$b"),
        ("QUOTES", 'it\'s "q"'),
        ("LINES", "one\ntwo"),
        ("EMPTY", ""),
    ]
    saved = save_env_file(env, {"version": 1, "values": {"A": "9"}}, added)
    data = env.read_bytes()
    assert data.startswith(b"\xef\xbb\xbfA=9\r\n# note\r\nB=2\r\nPLAIN=x\r\n")
    assert data.count(b"\r\n") == 2 + len(added) + 1
    assert stat.S_IMODE(env.stat().st_mode) == 0o640  # kept
    values = dotenv_values(env, interpolate=True)
    assert {key: values[key] for key, _ in added} == dict(added)
    assert [v["key"] for v in saved["vars"]] == ["A", "B", *(k for k, _ in added)]
    assert saved == read_env_view(env)


def test_a_missing_file_is_created_0600_by_adding_and_only_then(tmp_path: Path) -> None:
    env = tmp_path / "unotest" / ".env"
    assert read_env_view(env) == {"version": 1, "vars": [], "exists": False, "fileVersion": None}
    assert save_env_file(env, NOTHING, (), None)["exists"] is False
    assert not env.exists()
    with pytest.raises(UsageError, match="NOPE is not a key"):
        save_env_file(env, {"version": 1, "values": {"NOPE": "1"}})
    saved = save_env_file(env, NOTHING, [("API_TOKEN", "t0k3n-value")], None)
    assert env.read_text(encoding="utf-8") == "API_TOKEN=t0k3n-value\n"
    assert stat.S_IMODE(env.stat().st_mode) == 0o600
    assert saved["exists"] is True and saved["vars"][0]["secret"] is True


def test_a_save_from_another_version_is_refused_with_the_version_on_disk(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text("A=1\n", encoding="utf-8")
    read = read_env_view(env)["fileVersion"]
    env.write_text("A=2\n", encoding="utf-8")
    with pytest.raises(FileConflict, match="changed on disk since you opened it") as refused:
        save_env_file(env, {"version": 1, "values": {"A": "3"}}, (), read)
    assert refused.value.version == read_env_view(env)["fileVersion"]
    assert env.read_text(encoding="utf-8") == "A=2\n"
    with pytest.raises(FileConflict, match="was created on disk"):
        save_env_file(env, NOTHING, [("B", "1")], None)
    env.unlink()
    with pytest.raises(FileConflict, match="was removed on disk") as gone:
        save_env_file(env, NOTHING, [("B", "1")], read)
    assert gone.value.version is None


@pytest.mark.parametrize(
    ("key", "said"),
    [
        ("1ST", "cannot be a variable's name"),
        ("A-B", "cannot be a variable's name"),
        ("A B", "cannot be a variable's name"),
        ("", "cannot be a variable's name"),
        ("A", "A is already in unotest/.env"),
    ],
)
def test_a_new_key_must_be_a_name_not_taken(tmp_path: Path, key: str, said: str) -> None:
    env = tmp_path / ".env"
    env.write_text("A=1\n# OLD=1\n", encoding="utf-8")
    with pytest.raises(UsageError, match=said):
        save_env_file(env, NOTHING, [(key, "v")])
    with pytest.raises(UsageError, match="OLD is added twice"):
        save_env_file(env, NOTHING, [("OLD", "1"), ("OLD", "2")])
    assert env.read_text(encoding="utf-8") == "A=1\n# OLD=1\n"
