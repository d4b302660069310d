"""``unotest/.env`` as the viewer edits it: ``EnvFile`` read, ``EnvUpdate`` written back.

Parsing is python-dotenv's own (:func:`dotenv.parser.parse_stream`), so a value reads
here exactly as a run will read it. Writing changes only the characters of the values
asked for: every other byte (comments, blank lines, order, ``export``, spacing, inline
comments, line endings) stays as it was, a value keeps its quoting style when the new
value can be written in it (an unquoted value that needs quotes gets double quotes),
a commented ``# KEY=VALUE`` line is never written back as an active one, and the file
keeps its mode.
"""

from __future__ import annotations

import io
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from dotenv.parser import Binding, parse_stream

from runner import protocol
from runner.errors import UsageError
from runner.files import atomic_write
from runner.protocol import is_secret_name

__all__ = ["parse_env_file", "update_env_file"]

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


def _read(path: Path) -> tuple[str, str]:
    """The BOM (if any) and the text after it, newlines untouched."""
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return "", ""
    except (OSError, UnicodeDecodeError) as err:
        raise UsageError(f"cannot read {protocol.ENV_FILE}: {err}") from err
    if text.startswith(_BOM):
        return _BOM, text[1:]
    return "", text


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


def parse_env_file(path: Path) -> protocol.EnvFile:
    """Every ``KEY=VALUE`` of the file, active and commented, in file order (none when
    the file is missing). Values are the raw ones, before any ``${VAR}`` expansion."""
    _, text = _read(path)
    return _env_file(_entries(text))


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


def update_env_file(path: Path, update: protocol.EnvUpdate) -> protocol.EnvFile:
    """Change the values of existing active keys; every other byte stays. The new file."""
    bom, text = _read(path)
    entries = _entries(text)
    values = _check_update(entries, update)
    if not values:
        return _env_file(entries)
    parts: list[str] = []
    for entry in entries:
        original = entry.binding.original.string
        if entry.key in values and not entry.commented and entry.value != values[entry.key]:
            original = _rewrite(original, values[entry.key])
        parts.append(original)
    new_text = "".join(parts)
    mode = stat.S_IMODE(path.stat().st_mode)
    atomic_write(path, (bom + new_text).encode("utf-8"), display=protocol.ENV_FILE, fsync=True)
    os.chmod(path, mode)
    return _env_file(_entries(new_text))
