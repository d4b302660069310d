"""Files of the project in a scenario: ``upload`` into a file input, and ``read_file``.

A scenario names files by project-relative paths, and a scenario is code a stranger may
have written (a shared suite, an agent's edit): so every path must stay inside the
project (no ``..`` out, no absolute path, no symlink that leads out), checked after
symlinks are followed, the way the viewer's editor resolves its paths. A file a test
needs but the project should not hold (a generated CSV, a short note) is given inline
instead: ``upload(t, {name, mimeType, text})``, Playwright's ``FilePayload``.

:func:`project_path` is the one check, shared with ``save_storage_state``
(:mod:`runner.builtins.browser_state`).
"""

from __future__ import annotations

import mimetypes
import os
from collections.abc import Callable
from pathlib import Path

from playwright.async_api import FilePayload

from dsl.errors import BuiltinError
from dsl.values import Value, render, type_name
from runner.builtins.page_calls import PageCalls
from runner.text import did_you_mean

__all__ = ["MAX_READ_BYTES", "Files", "project_path"]

MAX_READ_BYTES = 10 * 1024 * 1024
"""``read_file`` refuses a larger file (10 MB): a scenario's text, not a data set."""
_PAYLOAD_KEYS = ("name", "mimeType", "text")


def project_path(fn: str, root: Path, name: Value, what: str = "files") -> Path:
    """``name`` (project-relative) resolved under ``root``, symlinks followed; one
    sentence when it is no string, is absolute, or leads out of the project."""
    if not isinstance(name, str) or not name:
        raise BuiltinError(
            "TypeError",
            f"{fn}() needs a path relative to the project root, got {type_name(name)}",
        )
    if "\0" in name:
        raise BuiltinError("TypeError", f"{fn}(): a path cannot contain a NUL character")
    if os.path.isabs(name):
        path = Path(name).resolve()
        where = "is outside" if not path.is_relative_to(root) else "is an absolute path"
        raise BuiltinError(
            "TypeError",
            f"{fn}() only takes {what} inside the project, by a path relative to its root: "
            f"{name} {where}",
        )
    path = (root / name).resolve()
    if not path.is_relative_to(root):
        why = "" if ".." in Path(name).parts else " (a symbolic link leads out)"
        raise BuiltinError(
            "TypeError", f"{fn}() only takes {what} inside the project: {name} is outside{why}"
        )
    return path


class Files:
    """``upload`` and ``read_file`` for one run's page and project."""

    def __init__(self, calls: PageCalls, root: Path) -> None:
        self.calls = calls
        self.root = root.resolve()

    def builtins(self) -> dict[str, Callable[..., Value]]:
        return {"upload": self.upload, "read_file": self.read_file}

    def upload(self, value: Value, files: Value) -> Value:
        """Playwright's ``set_input_files``: project files by path, or inline files
        ``{name, mimeType?, text}`` (the text sent as UTF-8); an array of either kind,
        not both (``[]`` clears the input)."""
        items = files if isinstance(files, list) else [files]
        if all(isinstance(item, str) for item in items):
            chosen: list[Path] | list[FilePayload] = [self._existing(item) for item in items]
        elif all(isinstance(item, dict) for item in items):
            chosen = [_payload(item) for item in items]
        else:
            kinds = sorted({type_name(item) for item in items})
            raise BuiltinError(
                "TypeError",
                "upload() needs a path, an inline file {name, mimeType, text}, or an array "
                f"of one kind of them, got {' and '.join(kinds) or type_name(files)}",
            )
        return self.calls.act(
            "upload",
            value,
            lambda loc: loc.set_input_files(chosen, timeout=self.calls.timeouts.action),
            for_input=True,
        )

    def read_file(self, name: Value) -> Value:
        """The text of a project file (UTF-8), as the scenario's own fixture data."""
        path = self._existing(name, "read_file")
        try:
            size = path.stat().st_size
            if size > MAX_READ_BYTES:
                raise BuiltinError(
                    "Error",
                    f"read_file(): {name} is {size:,} bytes; it reads files of at most "
                    f"{MAX_READ_BYTES:,}",
                )
            data = path.read_bytes()
        except OSError as err:
            raise BuiltinError(
                "Error", f"read_file(): {name} cannot be read: {err.strerror or err}"
            ) from None
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError as err:
            raise BuiltinError(
                "Error",
                f"read_file(): {name} is not UTF-8 text (byte 0x{data[err.start]:02x} at "
                f"offset {err.start})",
            ) from None

    def _existing(self, name: Value, fn: str = "upload") -> Path:
        path = project_path(fn, self.root, name)
        if not path.is_file():
            assert isinstance(name, str)
            what = "a folder, not a file" if path.is_dir() else "no such file"
            raise BuiltinError("TypeError", f"{fn}(): {what} {name} in the project")
        return path


def _payload(item: Value) -> FilePayload:
    """An inline file as Playwright takes it; ``mimeType`` guessed from the name when
    not given (text/plain for a name without a known extension)."""
    assert isinstance(item, dict)
    for key in item:
        if key not in _PAYLOAD_KEYS:
            raise BuiltinError(
                "TypeError",
                f"upload(): an inline file has no key '{key}'{did_you_mean(key, _PAYLOAD_KEYS)} "
                "(its keys: name, mimeType, text)",
            )
    name, text = item.get("name"), item.get("text")
    kind = item.get("mimeType", None)
    if not isinstance(name, str) or not name or "/" in name or "\\" in name:
        raise BuiltinError(
            "TypeError",
            "upload(): an inline file needs a name, a file name without folders such as "
            f'"notes.txt", got {_shown(name)}',
        )
    if not isinstance(text, str):
        raise BuiltinError(
            "TypeError", f"upload(): the inline file {name} needs its text, got {type_name(text)}"
        )
    if kind is None:
        kind = mimetypes.guess_type(name)[0] or "text/plain"
    if not isinstance(kind, str) or "/" not in kind:
        raise BuiltinError(
            "TypeError",
            f'upload(): the mimeType of {name} must be a type such as "text/csv", got '
            f"{_shown(kind)}",
        )
    return {"name": name, "mimeType": kind, "buffer": text.encode("utf-8")}


def _shown(value: Value) -> str:
    """A wrong value as a message shows it: a string quoted, anything else by its type."""
    return render(value) if isinstance(value, str) else type_name(value)
