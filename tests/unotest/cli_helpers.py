"""Running ``python -m unotest`` as a user does, in a project built in ``tmp_path``.

Shared by the CLI tests (``from cli_helpers import ...``: pytest puts this folder on
sys.path, as it does tests/runner for ``procs``).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from sites import write_files


@dataclass
class Result:
    code: int
    out: str
    err: str


def run(cwd: Path, *args: str, timeout: float = 60) -> Result:
    """``python -m unotest ARGS`` in ``cwd``; never lets a traceback pass unnoticed."""
    proc = subprocess.run(
        [sys.executable, "-m", "unotest", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        timeout=timeout,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stdout, proc.stdout
    assert "internal error" not in proc.stderr, proc.stderr
    return Result(proc.returncode, proc.stdout, proc.stderr)


def write(root: Path, files: Mapping[str, str | bytes]) -> Path:
    """Create ``files`` (relative path -> text or bytes) under ``root``."""
    return write_files(root, files)
