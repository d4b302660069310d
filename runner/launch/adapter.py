"""The Python face of the protocol's ``IRunnerAdapter``: what to spawn for a ``RunRequest``.

Pure, as the protocol asks: :meth:`RunnerAdapter.build_args` and
:meth:`RunnerAdapter.build_env` depend only on the request (no spawning, no file
system, no ``os.environ``); :mod:`runner.launch.launcher` does the spawning. A request
whose ``kind`` is not in ``supported_kinds`` is refused with
:class:`runner.errors.UnsupportedRunKindError` before any argv is built, and a request
whose fields do not have the protocol's types with :class:`runner.errors.UsageError`
(the viewer gets it from a client, as JSON).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import cast

from runner import protocol
from runner.errors import RunnerAdapterNotFoundError, UnsupportedRunKindError, UsageError
from runner.launch.limits import check_limit
from runner.processes import OWNER_ENV

__all__ = ["RunnerAdapter"]


def _flag(request: Mapping[str, object], key: str) -> bool:
    value = request.get(key, False)
    if not isinstance(value, bool):
        raise UsageError(f"{key} must be true or false")
    return value


def _name(request: Mapping[str, object], key: str) -> str:
    value = request.get(key)
    if not isinstance(value, str) or not value.strip():
        raise UsageError(f"a {request.get('kind')} run needs a {key} name")
    if value.startswith("-"):
        raise UsageError(f"{value!r} is not a {key} name (it starts with '-')")
    return value


class RunnerAdapter:
    """``@unotest/web``: runs are ``unotest e2e`` / ``unotest collection`` processes."""

    name: str = protocol.ADAPTER_NAME
    supported_kinds: tuple[protocol.RunKind, ...] = ("scenario", "collection")

    def resolve_bin(self) -> list[str]:
        """The command a run starts with: the ``unotest`` script beside this Python, or
        ``python -m unotest`` (argv, where the protocol's ``resolveBin`` has one path)."""
        script = Path(sys.executable).with_name("unotest")
        if script.exists():
            return [str(script)]
        if importlib.util.find_spec("unotest") is None:
            raise RunnerAdapterNotFoundError(
                "unotest", f"install it into {sys.executable} (pip install unotest)"
            )
        return [sys.executable, "-m", "unotest"]

    def check_kind(self, request: Mapping[str, object]) -> protocol.RunKind:
        kind = request.get("kind")
        if kind is None:
            kinds = " or ".join(repr(k) for k in self.supported_kinds)
            raise UsageError(f"a run request needs its kind: {kinds}")
        if kind not in self.supported_kinds:
            raise UnsupportedRunKindError(str(kind), self.name)
        return kind

    def build_args(self, request: protocol.RunRequest) -> list[str]:
        """The argv after :meth:`resolve_bin`, e.g. ``["e2e", "smoke", "--debug",
        "--break", "10:4"]`` or ``["collection", "nightly", "--workers", "2", "--bail"]``."""
        fields = cast(Mapping[str, object], request)
        if self.check_kind(fields) == "scenario":
            args = ["e2e", _name(fields, "scenario")]
            if _flag(fields, "debug"):
                args.append("--debug")
                args += [arg for text in _breakpoints(fields) for arg in ("--break", text)]
        else:
            args = ["collection", _name(fields, "collection"), "--workers", str(_workers(fields))]
            if _flag(fields, "bail"):
                args.append("--bail")
        if _flag(fields, "headed"):
            args.append("--headed")
        return args

    def build_env(self, request: protocol.RunRequest) -> dict[str, str | None]:
        """Overrides on top of the spawner's environment (``None``: unset). A run the viewer
        starts writes its output into its run directory, has no owner to end with (it
        outlives the viewer), and never imports a package of the project's folder."""
        self.check_kind(cast(Mapping[str, object], request))
        return {"UNOTEST_OUTPUT_TO_RUN_DIR": "1", "PYTHONSAFEPATH": "1", OWNER_ENV: None}


def _breakpoints(request: Mapping[str, object]) -> list[str]:
    value = request.get("breakpoints", [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError('breakpoints must be a list of "line:col" strings')
    bad = [v for v in value if not v.strip() or v.startswith("-")]
    if bad:
        raise UsageError(f'{bad[0]!r} is not a breakpoint (write "line:col")')
    return [str(v) for v in value]


def _workers(request: Mapping[str, object]) -> int:
    return check_limit("workers", request.get("workers", 1))
