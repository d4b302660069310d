"""The annotations of the MCP tools' arguments: their JSON schema and how a null reaches them.

Several tool groups take the same arguments (a run id, a string that may be left out):
one annotation each, so that every tool describes an argument alike and takes a
string the same way (the SDK's JSON decoding of strings is the trap, see below).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from pydantic import BeforeValidator, Field, WithJsonSchema, WrapValidator

from runner.debug.commands import NAMES

__all__ = [
    "CmdArg",
    "NullableText",
    "OptionalText",
    "RunIdArg",
    "ScenarioArg",
    "TimeoutArg",
    "UntilArg",
]

RunIdArg = Annotated[
    str,
    Field(
        description="a run's id as run_scenario, run_collection or list_runs give it, or a "
        "unique prefix of it"
    ),
]
ScenarioArg = Annotated[
    str,
    Field(
        description="a scenario's name as list_scenarios gives it (shop/known-bug), "
        "`_helpers/<name>` for a helper, or the project-relative path of its file"
    ),
]
CmdArg = Annotated[
    str,
    Field(description="the debugger command", json_schema_extra={"enum": list(NAMES)}),
]
UntilArg = Annotated[
    str,
    Field(
        description="'paused' (a breakpoint, a step, a failure) or 'finished'",
        json_schema_extra={"enum": ["paused", "finished"]},
    ),
]
TimeoutArg = Annotated[float, Field(description="seconds to wait, at most 600")]


# The SDK decodes a string argument as JSON unless its annotation is plain ``str``
# (FuncMetadata.pre_parse_json): ``str | None`` turned the expression "[1, 2]" into a
# list and "null" into None. Every string argument is therefore ``str``: an optional
# one defaults to "" (absent), and an explicit null is taken as absent too.


def _null_as_absent(value: object) -> object:
    return "" if value is None else value


def _null_kept(value: object, handler: Callable[[object], object]) -> object:
    return None if value is None else handler(value)


OptionalText = Annotated[str, BeforeValidator(_null_as_absent)]
"""A string argument that may be left out: "" (or null) is absent."""
NullableText = Annotated[
    str,
    WrapValidator(_null_kept),
    WithJsonSchema({"anyOf": [{"type": "string"}, {"type": "null"}]}),
]
"""A string argument for which null means something of its own (it reaches the tool as
``None``, though typed ``str``: the annotation must stay ``str``, see above)."""
