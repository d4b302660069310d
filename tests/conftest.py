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


def _import_anyio_whole() -> None:
    """anyio imports its parts on first use, and pytest compiles each module of a
    plugin's distribution (anyio is one) from source to rewrite its asserts. A first use
    in a test could then compile while another thread compiles too (a viewer server's
    thread), which CPython 3.11's compiler does not survive ("AST constructor recursion
    depth mismatch", seen in test_mcp.py under ``-n 2``): every part is imported here,
    before any test runs, on one thread."""
    import anyio

    for name in dir(anyio):
        if not name.startswith("_"):
            getattr(anyio, name)


_import_anyio_whole()


@pytest.fixture
def protocol_validate() -> Callable[[str, object], None]:
    """``validate(type_name, obj)`` against the @unotest/protocol 0.5.0 JSON Schemas
    committed in ``tests/protocol/``."""
    return validate
