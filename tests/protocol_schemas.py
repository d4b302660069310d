"""Validate objects against the JSON Schemas of ``@unotest/protocol`` 0.5.0.

The schemas live in the sibling ``shared/protocol/`` checkout, outside this
repository: a user's clone does not have it, so every check skips there
instead of failing. Where the schemas exist, a missing ``<Type>.schema.json``
is an error, not a skip: it means the test asked for a type 0.5.0 does not
define (our additive event kinds have no schema and are tested directly).
"""

import functools
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

SHARED_DIR = Path(__file__).resolve().parents[1].parent / "shared"
PROTOCOL_DIR = SHARED_DIR / "protocol"


def schemas_available() -> bool:
    return PROTOCOL_DIR.is_dir()


def _require_schemas() -> None:
    if not schemas_available():
        pytest.skip(f"protocol schemas not available at {PROTOCOL_DIR}")


@functools.cache
def _load(type_name: str) -> dict[str, Any]:
    path = PROTOCOL_DIR / f"{type_name}.schema.json"
    if not path.is_file():
        raise FileNotFoundError(f"no JSON Schema for {type_name!r} in 0.5.0: {path}")
    schema: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.Draft7Validator.check_schema(schema)
    return schema


def load_schema(type_name: str) -> dict[str, Any]:
    """The whole ``<type_name>.schema.json`` (skips when the shared dir is absent)."""
    _require_schemas()
    return _load(type_name)


def definition(type_name: str, def_name: str | None = None) -> dict[str, Any]:
    """One entry of the schema's ``definitions`` (default: the type itself)."""
    defs: dict[str, Any] = load_schema(type_name)["definitions"]
    return dict(defs[def_name or type_name])


def validate(type_name: str, obj: object) -> None:
    """Raise ``jsonschema.ValidationError`` unless ``obj`` is a valid ``type_name``.

    ``obj`` goes through a JSON round trip first, so what is checked is what
    would land on disk (tuples become arrays, NaN is refused).
    """
    _require_schemas()
    schema = _load(type_name)
    on_disk = json.loads(json.dumps(obj, ensure_ascii=True, allow_nan=False))
    jsonschema.Draft7Validator(schema).validate(on_disk)
