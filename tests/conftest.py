"""Fixtures shared by every test package."""

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

# `.venv/bin/pytest` does not put the checkout on sys.path and the project is
# not necessarily installed into the venv: make dsl/runner/unotest importable.
# (`pythonpath = ["."]` under [tool.pytest.ini_options] would do the same.)
_PROJECT_ROOT = str(Path(__file__).resolve().parents[1])
if _PROJECT_ROOT not in sys.path:
    sys.path.insert(0, _PROJECT_ROOT)

from protocol_schemas import validate  # noqa: E402  (tests/ is on sys.path via rootdir conftest)


@pytest.fixture
def protocol_validate() -> Callable[[str, object], None]:
    """``validate(type_name, obj)`` against the @unotest/protocol 0.5.0 JSON Schemas
    committed in ``tests/protocol/``."""
    return validate
