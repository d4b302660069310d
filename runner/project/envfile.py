"""``unotest/.env`` as the viewer edits it: ``EnvFile`` read, ``EnvUpdate`` written back.

Parsing is python-dotenv's own (:func:`dotenv.parser.parse_stream`), so a value reads
here exactly as a run will read it. Writing changes only the characters of the values
asked for: every other byte (comments, blank lines, order, ``export``, spacing, inline
comments, line endings) stays as it was, a value keeps its quoting style when the new
value can be written in it (an unquoted value that needs quotes gets double quotes),
a commented ``# KEY=VALUE`` line is never written back as an active one, and the file
keeps its mode.

The viewer's Env page reads it with :func:`read_env_view` (the ``EnvFile`` and, ours,
whether the file exists and its ``fileVersion``) and saves with :func:`save_env_file`:
changed values, new keys appended as ``KEY=value`` lines (a name is a portable
environment variable name, :data:`NAME_RE`), and the version the page read, so a file
changed on disk meanwhile is never overwritten unasked (:class:`FileConflict`, as for
a scenario file). Saving new keys creates a missing file, readable by its owner only.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NotRequired

from dotenv.parser import Binding, parse_stream

from runner import protocol
from runner.errors import UsageError
from runner.files import atomic_write
from runner.project.editing import (
    UNCHECKED,
    FileConflict,
    Unchecked,
    version_of,
    writers_excluded,
)
from runner.protocol import is_secret_name

__all__ = [
    "NAME_RE",
    "EnvFileView",
    "read_env_view",
    "save_env_file",
]

NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
"""A new key's name: letters, digits and ``_``, not starting with a digit (what every
shell and ``os.environ`` take; python-dotenv reads more, but such a name cannot be set
with ``export`` nor always read back from a process's environment)."""


class EnvFileView(protocol.EnvFile):
    """The ``EnvFile`` and, ours, whether the file exists and the version of its bytes
    (``None`` when it does not exist): what a save's ``baseVersion`` is compared with."""

    exists: NotRequired[bool]
    fileVersion: NotRequired[str | None]


_BOM = "\ufeff"
# The key and '=' of a binding, as python-dotenv's parser reads them.
_PREFIX_RE = re.compile(
    r"\s*(?:export[^\S\r\n]+)?(?:'[^']+'|[^=\#\s]+)[^\S\r\n]*=[^\S\r\n]*", re.MULTILINE
)
_SINGLE_RE = re.compile(r"'((?:\\.|[^'\\])*)'", re.DOTALL)
_DOUBLE_RE = re.compile(r'"((?:\\.|[^"\\])*)"', re.DOTALL)
_COMMENTED_RE = re.compile(r"[^\S\r\n]*#[^\S\r\n]*((?:export[^\S\r\n]+)?[A-Za-z_][\w.]*=.*)")
_UNQUOTED_UNSAFE_RE = re.compile(r"[\r\n'\"]|\s#|^\s|\s$|^#")


@dataclass(frozen=True)
class _Entry:
    binding: Binding
    key: str | None
    value: str
    commented: bool


def _commented(binding: Binding) -> tuple[str, str] | None:
    """``(key, value)`` of a ``# KEY=VALUE`` line; ``None`` for any other comment."""
    lines = binding.original.string.strip("\r\n").splitlines()
    match = _COMMENTED_RE.fullmatch(lines[-1]) if lines else None
    if match is None:
        return None
    inner = list(parse_stream(io.StringIO(match.group(1))))
    if len(inner) != 1 or inner[0].key is None or inner[0].value is None:
        return None
    return inner[0].key, inner[0].value


def _entries(text: str) -> list[_Entry]:
    entries: list[_Entry] = []
    for binding in parse_stream(io.StringIO(text)):
        if binding.key is not None and binding.value is not None and not binding.error:
            entries.append(_Entry(binding, binding.key, binding.value, False))
            continue
        commented = None if binding.error else _commented(binding)
        if commented is not None:
            entries.append(_Entry(binding, commented[0], commented[1], True))
        else:
            entries.append(_Entry(binding, None, "", False))
    return entries


def _env_var(key: str, value: str, commented: bool) -> protocol.EnvVar:
    return {
        "key": key,
        "value": value,
        "secret": is_secret_name(key),
        "bool": value in ("0", "1"),
        "commented": commented,
    }


def _env_file(entries: list[_Entry]) -> protocol.EnvFile:
    return {
        "version": 1,
        "vars": [_env_var(e.key, e.value, e.commented) for e in entries if e.key is not None],
    }


def _quote_single(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _quote_double(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("\n", "\\n").replace("\r", "\\r") + '"'


def _unquoted(rest: str, prefix: str, value: str) -> tuple[int, str]:
    """Where an unquoted value ends in ``rest``, and the new value as it will be written."""
    written = _quote_double(value) if _UNQUOTED_UNSAFE_RE.search(value) else value
    if rest.startswith("#") and prefix[-1:] in (" ", "\t"):
        return 0, written + " "  # ``KEY= # comment``: empty value, the comment stays
    line = re.match(r"[^\r\n]*", rest)
    part = line.group(0) if line else ""
    return len(re.sub(r"\s+#.*", "", part).rstrip()), written


def _rewrite(original: str, value: str) -> str:
    """The binding's text with its value replaced, its quoting style kept if it can be."""
    prefix = _PREFIX_RE.match(original)
    if prefix is None:  # cannot happen for a binding python-dotenv read a value from
        raise UsageError("cannot find the value to change in unotest/.env")
    start = prefix.end()
    rest = original[start:]
    if rest.startswith("'"):
        match = _SINGLE_RE.match(rest)
        end, written = (match.end() if match else 0), _quote_single(value)
    elif rest.startswith('"'):
        match = _DOUBLE_RE.match(rest)
        end, written = (match.end() if match else 0), _quote_double(value)
    else:
        end, written = _unquoted(rest, prefix.group(0), value)
    return original[:start] + written + rest[end:]


def _check_update(entries: list[_Entry], update: protocol.EnvUpdate) -> dict[str, str]:
    values = update.get("values")
    if update.get("version") != 1 or not isinstance(values, dict):
        raise UsageError("an EnvUpdate needs version 1 and a values object")
    active = {e.key for e in entries if e.key is not None and not e.commented}
    commented = {e.key for e in entries if e.key is not None and e.commented}
    for key, value in values.items():
        if not isinstance(value, str):
            raise UsageError(f"the value of {key} must be a string")
        if key in active:
            continue
        if key in commented:
            raise UsageError(f"{key} is commented out in {protocol.ENV_FILE} and cannot be set")
        raise UsageError(f"{key} is not a key of {protocol.ENV_FILE}")
    return dict(values)


def _decode(data: bytes | None) -> str:
    """The file's text, its BOM included (none when the file is missing)."""
    try:
        return "" if data is None else data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise UsageError(f"cannot read {protocol.ENV_FILE}: {err}") from err


def _view(data: bytes | None) -> EnvFileView:
    env = _env_file(_entries(_decode(data).removeprefix(_BOM)))
    return {
        "version": env["version"],
        "vars": env["vars"],
        "exists": data is not None,
        "fileVersion": None if data is None else version_of(data),
    }


def _bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as err:
        raise UsageError(f"cannot read {protocol.ENV_FILE}: {err}") from err


def read_env_view(path: Path) -> EnvFileView:
    """The file as the Env page shows it: its keys, whether it exists, its version."""
    return _view(_bytes(path))


def _check_added(entries: list[_Entry], added: Sequence[tuple[str, str]]) -> None:
    active = {e.key for e in entries if e.key is not None and not e.commented}
    seen: set[str] = set()
    for key, value in added:
        if not isinstance(key, str) or not isinstance(value, str):
            raise UsageError("a new variable is a name and a value, both strings")
        if not NAME_RE.fullmatch(key):
            raise UsageError(
                f"{key!r} cannot be a variable's name: use letters, digits and _, "
                "not starting with a digit"
            )
        if key in active:
            raise UsageError(f"{key} is already in {protocol.ENV_FILE}: change its value there")
        if key in seen:
            raise UsageError(f"{key} is added twice")
        seen.add(key)


def _new_line(key: str, value: str, newline: str) -> str:
    """``KEY=value``: unquoted when it reads back as it is, else quoted (single quotes
    keep a ``$`` from being expanded; a line break needs double quotes' escapes)."""
    if "\n" in value or "\r" in value:
        written = _quote_double(value)
    elif _UNQUOTED_UNSAFE_RE.search(value) or "$" in value or "\\" in value:
        written = _quote_single(value)
    else:
        written = value
    return f"{key}={written}{newline}"


def _appended(text: str, added: Sequence[tuple[str, str]]) -> str:
    if not added:
        return text
    newline = "\r\n" if "\r\n" in text else "\n"
    if text and not text.endswith(("\n", "\r")):
        text += newline
    return text + "".join(_new_line(key, value, newline) for key, value in added)


def _check_base(data: bytes | None, base: str | Unchecked | None) -> None:
    if base is UNCHECKED:
        return
    version = None if data is None else version_of(data)
    if version == base:
        return
    if data is None:
        said = f"{protocol.ENV_FILE} was removed on disk since you opened it"
    elif base is None:
        said = f"{protocol.ENV_FILE} was created on disk since you opened the page"
    else:
        said = f"{protocol.ENV_FILE} changed on disk since you opened it"
    raise FileConflict(said, None, version)


def save_env_file(
    path: Path,
    update: protocol.EnvUpdate,
    added: Sequence[tuple[str, str]] = (),
    base_version: str | Unchecked | None = UNCHECKED,
) -> EnvFileView:
    """Change the values of existing active keys and append ``added`` ones (a missing
    file is created, mode 0600: it holds secrets), if the file is still at
    ``base_version`` (``None``: it must not exist; :data:`UNCHECKED`: no check), else
    :class:`FileConflict` with the version on disk. Every other byte stays."""
    # From the version check to the rename: two saves (of this process or another
    # unotest process) never both pass the check against the same bytes.
    with writers_excluded(path.parent):
        data = _bytes(path)
        _check_base(data, base_version)
        text = _decode(data)
        bom = _BOM if text.startswith(_BOM) else ""
        entries = _entries(text.removeprefix(_BOM))
        values = _check_update(entries, update)
        _check_added(entries, added)
        parts = []
        for entry in entries:
            original = entry.binding.original.string
            if entry.key in values and not entry.commented and entry.value != values[entry.key]:
                original = _rewrite(original, values[entry.key])
            parts.append(original)
        new_text = bom + _appended("".join(parts), added)
        if new_text == text:
            return _view(data)  # nothing to change: a missing file is not created
        if data is None:
            _create_private(path)
        atomic_write(path, new_text.encode("utf-8"), display=protocol.ENV_FILE, fsync=True)
        return _view(new_text.encode("utf-8"))


def _create_private(path: Path) -> None:
    """An empty file readable by its owner only, so the save that fills it keeps that
    mode from its first byte on (``atomic_write`` keeps an existing file's mode)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        pass  # created meanwhile: the save replaces it, keeping its mode
    except OSError as err:
        raise UsageError(f"cannot create {protocol.ENV_FILE}: {err}") from err
