"""Event kinds and file keys of ``@unotest/protocol`` 0.5.0, and our additions to it.

One copy for every test that checks a run directory key by key (``from protocol_keys
import ...``: ``tests/`` is on sys.path, see conftest.py). The 0.5.0 sets are checked
against the committed JSON Schemas by ``tests/test_protocol_schemas.py``.
"""

from __future__ import annotations

# Every kind of 0.5.0's RunArtifact union, in its order (only these have a schema).
RUN_ARTIFACT_KINDS = (
    "run:started",
    "step:started",
    "step:ok",
    "step:fail",
    "screenshot",
    "failure-bundle:written",
    "paused",
    "resumed",
    "run:finished",
)
PROTOCOL_KINDS = frozenset(RUN_ARTIFACT_KINDS)

# Every kind of 0.5.0's CollectionRunArtifact union, in its order (and in a run's order).
COLLECTION_KINDS = (
    "collection-run:started",
    "collection-run:scenario-started",
    "collection-run:scenario-finished",
    "collection-run:finished",
)

# The steps.jsonl kinds that are ours: 0.5.0 does not know them (no schema).
ADDITIVE_KINDS = (
    "command:applied",
    "command:rejected",
    "command:result",
    "step:skipped",
    "page:image",
)

# The collection steps.jsonl kinds that are ours: a browser endpoint of the pool went down.
COLLECTION_ADDITIVE_KINDS = ("collection-run:endpoint-down",)

# manifest.json: what 0.5.0 requires, what it allows, what we add.
MANIFEST_KEYS = frozenset({"schemaVersion", "kind", "ref", "adapter", "startedAt"})
MANIFEST_OPTIONAL_KEYS = frozenset({"parentRunId"})
MANIFEST_ADDITIVE_KEYS = frozenset(
    {"pid", "pidStartTime", "hostname", "browserEndpoint", "infraRetryOf"}
)

# runtime.json: what 0.5.0 requires (all of its keys), what we add.
RUNTIME_KEYS = frozenset(
    {
        "runId",
        "scenario",
        "testFn",
        "state",
        "current",
        "vars",
        "callStack",
        "lastFailure",
        "updatedAt",
    }
)
RUNTIME_ADDITIVE_KEYS = frozenset({"file", "page", "breakpoints"})
RUNTIME_IN_A_CALL_KEYS = frozenset({"frameVars"})
"""Ours too, only at a pause inside a helper call."""
