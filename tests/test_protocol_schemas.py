"""The committed JSON Schemas of @unotest/protocol 0.5.0 (``tests/protocol/``).

They are what every ``protocol_validate`` check reads, so they must be the README's
types, all of them, each a draft-07 schema of that type generated from the committed
``.d.ts`` by ``generate.sh`` (the script itself is run by hand: it needs npm).
"""

import re

import jsonschema
import pytest
from protocol_keys import (
    ADDITIVE_KINDS,
    COLLECTION_KINDS,
    MANIFEST_ADDITIVE_KEYS,
    MANIFEST_KEYS,
    MANIFEST_OPTIONAL_KEYS,
    PROTOCOL_KINDS,
    RUN_ARTIFACT_KINDS,
    RUNTIME_ADDITIVE_KEYS,
    RUNTIME_KEYS,
)
from protocol_schemas import PROTOCOL_DIR, definition, load_schema, readme_types, validate

DTS = PROTOCOL_DIR / "unotest-protocol-0.5.0.d.ts"
SCRIPT = PROTOCOL_DIR / "generate.sh"
TYPES = readme_types()


def test_the_readme_lists_the_thirteen_types_of_0_5_0() -> None:
    assert len(TYPES) == len(set(TYPES)) == 13
    assert TYPES[:3] == ["RunManifest", "RunArtifact", "CollectionRunArtifact"]


def test_the_committed_schemas_are_the_readme_types() -> None:
    committed = sorted(p.name for p in PROTOCOL_DIR.glob("*.schema.json"))
    assert committed == sorted(f"{name}.schema.json" for name in TYPES)


def test_the_script_generates_the_readme_types_with_a_pinned_generator() -> None:
    script = SCRIPT.read_text(encoding="utf-8")
    listed = re.search(r"^TYPES=\(\n(.*?)\n\)", script, re.M | re.S)
    assert listed is not None
    assert listed.group(1).split() == TYPES
    assert re.search(r'^GENERATOR="ts-json-schema-generator@\d+\.\d+\.\d+"$', script, re.M)
    assert "--additional-properties" in script
    assert str(DTS.name) in script


@pytest.mark.parametrize("type_name", TYPES)
def test_each_schema_is_draft_07_for_its_type(type_name: str) -> None:
    schema = load_schema(type_name)
    jsonschema.Draft7Validator.check_schema(schema)
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert schema["$ref"] == f"#/definitions/{type_name}"
    assert type_name in schema["definitions"]


@pytest.mark.parametrize("type_name", TYPES)
def test_each_type_is_declared_and_exported_by_the_dts(type_name: str) -> None:
    dts = DTS.read_text(encoding="utf-8")
    assert len(re.findall(rf"^(?:interface|type) {type_name}\b", dts, re.M)) == 1
    exported = re.search(r"^export \{(.*)\};$", dts, re.M)
    assert exported is not None
    assert f"type {type_name}" in [item.strip() for item in exported.group(1).split(",")]


def test_validation_refuses_what_0_5_0_refuses() -> None:
    manifest = {
        "schemaVersion": 1,
        "kind": "scenario",
        "ref": "smoke",
        "adapter": "@unotest/web",
        "startedAt": 1,
    }
    validate("RunManifest", manifest)
    validate("RunManifest", {**manifest, "extra": "additive"})
    with pytest.raises(jsonschema.ValidationError):
        validate("RunManifest", {k: v for k, v in manifest.items() if k != "ref"})
    with pytest.raises(jsonschema.ValidationError):
        validate("RunManifest", {**manifest, "kind": "suite"})


def test_an_unknown_type_is_an_error_not_a_skip() -> None:
    with pytest.raises(FileNotFoundError):
        validate("StepSkippedEvent", {})


# --- the shared key sets (protocol_keys.py) agree with the schemas ------------------------


def _union_kinds(type_name: str) -> tuple[str, ...]:
    members = definition(type_name)["anyOf"]
    return tuple(
        definition(type_name, ref["$ref"].rsplit("/", 1)[1])["properties"]["kind"]["const"]
        for ref in members
    )


def test_event_kinds_are_the_unions_of_0_5_0() -> None:
    assert _union_kinds("RunArtifact") == RUN_ARTIFACT_KINDS
    assert frozenset(RUN_ARTIFACT_KINDS) == PROTOCOL_KINDS
    assert _union_kinds("CollectionRunArtifact") == COLLECTION_KINDS
    known = set(RUN_ARTIFACT_KINDS) | set(COLLECTION_KINDS)
    assert not known & set(ADDITIVE_KINDS)


def test_manifest_and_runtime_keys_are_those_of_0_5_0() -> None:
    manifest = definition("RunManifest")
    assert set(manifest["required"]) == MANIFEST_KEYS
    assert set(manifest["properties"]) - MANIFEST_KEYS == MANIFEST_OPTIONAL_KEYS
    assert not set(manifest["properties"]) & MANIFEST_ADDITIVE_KEYS
    runtime = definition("RuntimeStateFile")
    assert set(runtime["required"]) == set(runtime["properties"]) == RUNTIME_KEYS
    assert not RUNTIME_KEYS & RUNTIME_ADDITIVE_KEYS
