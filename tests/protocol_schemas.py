"""Validate objects against the JSON Schemas of ``@unotest/protocol`` 0.5.0.

The schemas are committed in ``tests/protocol/`` (generated from the package's
``.d.ts`` by ``tests/protocol/generate.sh``), so every check runs on any clone.
Asking for a type that has no ``<Type>.schema.json`` is an error: 0.5.0 does not
define it (our additive event kinds have no schema and are tested directly).
"""

import functools
import json
import re
from pathlib import Path
from typing import Any

import jsonschema

PROTOCOL_DIR = Path(__file__).resolve().parent / "protocol"
README = PROTOCOL_DIR / "README.md"


def readme_types() -> list[str]:
    """The types the README lists, in order: its paragraph made only of backquoted
    names separated by commas (and a final full stop)."""
    for paragraph in README.read_text(encoding="utf-8").split("\n\n"):
        if re.fullmatch(r"(`[A-Za-z]+`[,.]\s*)+", paragraph.strip() + "\n"):
            return re.findall(r"`([A-Za-z]+)`", paragraph)
    raise AssertionError(f"{README}: no list of types")


@functools.cache
def _load(type_name: str) -> dict[str, Any]:
    path = PROTOCOL_DIR / f"{type_name}.schema.json"
    if not path.is_file():
        raise FileNotFoundError(f"no JSON Schema for {type_name!r} in 0.5.0: {path}")
    schema: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.Draft7Validator.check_schema(schema)
    return schema


def load_schema(type_name: str) -> dict[str, Any]:
    """The whole ``<type_name>.schema.json``."""
    return _load(type_name)


def definition(type_name: str, def_name: str | None = None) -> dict[str, Any]:
    """One entry of the schema's ``definitions`` (default: the type itself)."""
    defs: dict[str, Any] = load_schema(type_name)["definitions"]
    return dict(defs[def_name or type_name])


@functools.cache
def _validator(type_name: str) -> jsonschema.Draft7Validator:
    """One validator per type: building it (and its reference registry) is not free."""
    return jsonschema.Draft7Validator(_load(type_name))


@functools.cache
def _branches(type_name: str) -> dict[str, jsonschema.Draft7Validator]:
    """For a union discriminated by ``kind`` (``RunArtifact``, ``WsMessage``, ...): one
    validator per member, by its ``kind`` constant; empty for any other type.

    Why: a long run's ``steps.jsonl`` holds tens of thousands of events, and ``anyOf``
    tries every member of the union for each, which made schema checks most of the
    time of some end-to-end tests. An object valid against its member is valid against
    the ``anyOf``, so the answer does not change (see ``validate``).
    """
    schema = _load(type_name)
    if set(schema) != {"$ref", "$schema", "definitions"}:
        return {}
    defs: dict[str, Any] = schema["definitions"]
    union = defs.get(schema["$ref"].removeprefix("#/definitions/"), {})
    if "anyOf" not in union or not set(union) <= {"anyOf", "description"}:
        return {}
    branches: dict[str, jsonschema.Draft7Validator] = {}
    for member in union["anyOf"]:
        ref = member.get("$ref", "") if set(member) == {"$ref"} else ""
        kind = defs.get(ref.removeprefix("#/definitions/"), {}).get("properties", {}).get("kind")
        if not isinstance(kind, dict) or not isinstance(kind.get("const"), str):
            return {}
        if kind["const"] in branches:
            return {}
        try:  # the member with its references written out: no look-ups while validating
            member_schema = _inline(defs[ref.removeprefix("#/definitions/")], defs, ())
        except ValueError:
            member_schema = {"$ref": ref, "definitions": defs}
        branches[kind["const"]] = jsonschema.Draft7Validator(member_schema)
    return branches


def _inline(node: Any, defs: dict[str, Any], seen: tuple[str, ...]) -> Any:
    """``node`` with every ``{"$ref": "#/definitions/X"}`` replaced by X itself;
    ``ValueError`` for a reference that is not alone in its object (draft 7 ignores its
    siblings) or that refers back to itself."""
    if isinstance(node, list):
        return [_inline(item, defs, seen) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        name = str(node["$ref"]).removeprefix("#/definitions/")
        if len(node) != 1 or name in seen or name not in defs:
            raise ValueError(node["$ref"])
        return _inline(defs[name], defs, (*seen, name))
    return {key: _inline(value, defs, seen) for key, value in node.items()}


def validate(type_name: str, obj: object) -> None:
    """Raise ``jsonschema.ValidationError`` unless ``obj`` is a valid ``type_name``.

    ``obj`` goes through a JSON round trip first, so what is checked is what
    would land on disk (tuples become arrays, NaN is refused). A member of a
    ``kind`` union that its own member accepts is valid; anything else goes through
    the whole schema, so a failure reads exactly as before.
    """
    on_disk = json.loads(json.dumps(obj, ensure_ascii=True, allow_nan=False))
    if isinstance(on_disk, dict) and isinstance(on_disk.get("kind"), str):
        branch = _branches(type_name).get(on_disk["kind"])
        if branch is not None and branch.is_valid(on_disk):
            return
    _validator(type_name).validate(on_disk)
