"""A run as a front end asks for it: one typed request, checked against one table.

The viewer's ``POST /api/runs`` body and the MCP server's ``run_scenario`` /
``run_collection`` arguments both become a :class:`LaunchRequest`; its limits are the
one table of :mod:`runner.launch.limits`; its
argv is the protocol's runner adapter's (:class:`runner.launch.adapter.RunnerAdapter`)
plus the options only we have. :func:`runner.launch.start.start_run` turns it into a
running child.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import cast

from runner import protocol
from runner.errors import UsageError
from runner.launch.adapter import RunnerAdapter
from runner.launch.limits import check_limit
from runner.protocol import JSONObject

__all__ = ["LaunchRequest"]

_KEPT = {
    "scenario": ("kind", "scenario", "headed", "debug", "breakpoints", "step", "retries"),
    "collection": ("kind", "collection", "headed", "workers", "bail", "retries"),
}
"""The fields of a request a run keeps (``request.json``): the protocol's and ours."""


@dataclass(frozen=True)
class LaunchRequest:
    """A scenario (``debug``, ``breakpoints`` as ``LINE[:COL]`` or ``FILE:LINE[:COL]``,
    ``step``: pause before the first statement) or a collection (``workers``, ``bail``)
    to run; ``retries``: ``--retries N`` (None: the project's config decides)."""

    kind: protocol.RunKind
    name: str
    headed: bool = False
    debug: bool = False
    step: bool = False
    breakpoints: tuple[str, ...] = ()
    workers: int = 1
    bail: bool = False
    retries: int | None = None
    asked: JSONObject = field(default_factory=dict, compare=False)
    """The fields as they were asked (those a run keeps), for ``request.json``."""

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> LaunchRequest:
        """A ``RunRequest`` of the protocol, with ``retries`` and ``step`` besides; a
        kind the adapter does not run is :class:`UnsupportedRunKindError`, a field of
        the wrong type one sentence (``UsageError``)."""
        adapter = RunnerAdapter()
        kind = adapter.check_kind(data)
        adapter.build_args(cast(protocol.RunRequest, data))  # checks the protocol's fields
        debug = kind == "scenario" and data.get("debug") is True
        step = data.get("step", False) if kind == "scenario" else False
        if not isinstance(step, bool):
            raise UsageError("step must be true or false")
        # Read only where the adapter has checked them: with debug on.
        breakpoints = tuple(cast(list[str], data.get("breakpoints", []))) if debug else ()
        retries = check_limit("retries", data["retries"]) if "retries" in data else None
        return cls(
            kind,
            str(data[kind]),
            headed=data.get("headed") is True,
            debug=debug,
            step=step,
            breakpoints=breakpoints,
            workers=cast(int, data.get("workers", 1)),
            bail=data.get("bail") is True,
            retries=retries,
            asked={key: data[key] for key in _KEPT[kind] if key in data},
        )

    def protocol_request(self) -> protocol.RunRequest:
        if self.kind == "scenario":
            scenario: protocol.ScenarioRunRequest = {
                "kind": "scenario",
                "scenario": self.name,
                "headed": self.headed,
                "debug": self.debug,
                "breakpoints": list(self.breakpoints),
            }
            return scenario
        collection: protocol.CollectionRunRequest = {
            "kind": "collection",
            "collection": self.name,
            "headed": self.headed,
            "workers": self.workers,
            "bail": self.bail,
        }
        return collection

    def args(self) -> list[str]:
        """The argv after the runner's own command (``unotest``)."""
        args = RunnerAdapter().build_args(self.protocol_request())
        if self.kind == "scenario" and self.debug and self.step:
            args.append("--step")
        if self.retries is not None:
            args += ["--retries", str(self.retries)]
        return args
