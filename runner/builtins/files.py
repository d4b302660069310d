"""Files of the project in a scenario: ``upload`` into a file input, and reading one.

Every path is project-relative and must stay inside the project (no ``..`` out, no
absolute path, no symlink that leads out).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from dsl.errors import BuiltinError
from dsl.values import Value, type_name
from runner.builtins.page_calls import PageCalls

__all__ = ["Files"]


class Files:
    """``upload`` (and, to come, ``read_file``) for one run's page and project."""

    def __init__(self, calls: PageCalls, root: Path) -> None:
        self.calls = calls
        self.root = root.resolve()

    def builtins(self) -> dict[str, Callable[..., Value]]:
        return {"upload": self.upload}

    def upload(self, value: Value, paths: Value) -> Value:
        names = [paths] if isinstance(paths, str) else paths
        if not isinstance(names, list) or not all(isinstance(p, str) for p in names):
            raise BuiltinError(
                "TypeError", f"upload() needs a path or an array of paths, got {type_name(paths)}"
            )
        files: list[Path] = []
        for name in names:
            assert isinstance(name, str)
            path = (self.root / name).resolve()
            if not path.is_relative_to(self.root):
                raise BuiltinError(
                    "TypeError", f"upload() only takes files inside the project: {name} is outside"
                )
            if not path.is_file():
                raise BuiltinError("TypeError", f"upload(): no such file {name} in the project")
            files.append(path)
        return self.calls.act(
            "upload",
            value,
            lambda loc: loc.set_input_files(files, timeout=self.calls.timeouts.action),
            for_input=True,
        )
