"""Python mirror of the TypeScript package ``@unotest/protocol`` 0.5.0.

The unotest viewer and the agent tools read what this runner leaves on disk
(``unotest/.runs/<runId>/``, ``unotest/.debugger.json``, ...) through that npm
package, so every path, field name, ``kind`` literal and reason string here is
copied verbatim from its ``dist/index.d.ts``, and the few pure functions behave
exactly like the bodies in its (obfuscated) ``dist/index.js``. A renamed field
or a differently sanitized run id would make a run invisible to the viewer.

The only departures from 0.5.0 are *additive*, because consumers ignore what
they do not know but reject what they misread:

* new optional fields on existing shapes (``RunManifest.pid``,
  ``RunManifest``/``RunMeta`` ``restartOf``/``attempt``/``retryOf``,
  ``StepStartedEvent.file``/``depth``, ``ResumedEvent.cmd``,
  ``RuntimeStateFile.file``/``page``/``breakpoints``, ``DbgCommand.file``/``expr``);
* new event kinds that 0.5.0 does not list (``command:applied``,
  ``command:rejected``, ``command:result``, ``step:skipped``, ``page:image``);
* Python conveniences that 0.5.0 only states in prose (``ADAPTER_NAME``,
  ``HEARTBEAT_STALE_SECONDS``) or in another place of the spec (secret names), the
  runner's narrower outcomes (``FinishedOutcome``, ``ScenarioOutcomeKind``), and
  ``JSONObject``, what a reader holds before it has narrowed a file's values.

Nothing of 0.5.0 is renamed or narrowed. The module depends on the standard
library only and never reads the protocol package itself at run time.

(No ``from __future__ import annotations``: on Python 3.11 it would hide
``NotRequired`` from ``TypedDict`` and make every optional key required at
run time.)
"""

import os
import re
import time
from collections.abc import Mapping
from typing import Literal, NotRequired, TypeAlias, TypedDict, TypeGuard

__all__ = [
    "ADAPTER_NAME",
    "COLLECTIONS_SUBDIR",
    "COLLECTION_NAME_FORBIDDEN_RE",
    "COMMANDS_FILE",
    "DEBUGGER_FILE",
    "E2E_SUBDIR",
    "ENV_FILE",
    "HEARTBEAT_FILE",
    "HEARTBEAT_STALE_SECONDS",
    "HELPERS_SUBDIR",
    "LOCK_FILE",
    "LOG_FILE",
    "PROTOCOL_VERSION",
    "RUNS_SUBDIR",
    "RUNTIME_FILE",
    "RUN_MANIFEST_FILE",
    "SECRET_NAME_MARKERS",
    "STDERR_FILE",
    "STDOUT_FILE",
    "STEPS_FILE",
    "TERMINAL_WS_EVENT",
    "UNOTEST_DIR",
    "BreakpointEntry",
    "BreakpointsFile",
    "CallFrame",
    "ChainFrame",
    "CollectionEndpointDownEvent",
    "CollectionMeta",
    "CollectionRunArtifact",
    "CollectionRunEvent",
    "CollectionRunFinishedEvent",
    "CollectionRunStartedEvent",
    "CollectionScenarioFinishedEvent",
    "CollectionScenarioStartedEvent",
    "CommandAppliedEvent",
    "CommandRejectedEvent",
    "CommandResultEvent",
    "CurrentLocation",
    "DbgCommand",
    "DbgCommandKind",
    "EnvFile",
    "EnvUpdate",
    "EnvVar",
    "FailureBundleWrittenEvent",
    "FailureError",
    "FinishedOutcome",
    "HelperMeta",
    "ImageViewport",
    "JSONObject",
    "LastFailure",
    "LockFile",
    "Matcher",
    "PageImageAfter",
    "PageImageEvent",
    "PageInfo",
    "PauseSnapshot",
    "PausedEvent",
    "RegexLiteral",
    "ResumedEvent",
    "RunArtifact",
    "RunArtifactBase",
    "RunEvent",
    "RunFinishedEvent",
    "RunId",
    "RunKind",
    "RunManifest",
    "RunMeta",
    "RunOutcome",
    "RunStartedEvent",
    "RunStatus",
    "RuntimeState",
    "RuntimeStateFile",
    "ScenarioMeta",
    "ScenarioOutcomeKind",
    "ScreenshotEvent",
    "StepFailEvent",
    "StepOkEvent",
    "StepSkippedEvent",
    "StepStartedEvent",
    "is_regex_literal",
    "is_secret_name",
    "make_run_id",
    "regex_literal",
    "sanitize_run_id_segment",
    "to_base36",
    "validate_collection_name",
]

# ---------------------------------------------------------------------------
# Versions and identities
# ---------------------------------------------------------------------------

PROTOCOL_VERSION = "0.5.0"
"""The ``@unotest/protocol`` release this module was copied from; bump only by re-diffing."""

ADAPTER_NAME = "@unotest/web"
"""``RunManifest.adapter``: the viewer renders our artifacts as the web (Playwright) runner's."""

HEARTBEAT_STALE_SECONDS = 30
"""Readers infer ``interrupted`` after this long without a heartbeat mtime change (0.5.0 prose)."""

# ---------------------------------------------------------------------------
# Path constants (verbatim from index.d.ts)
# ---------------------------------------------------------------------------

UNOTEST_DIR = "unotest"
E2E_SUBDIR = "e2e"
HELPERS_SUBDIR = "_helpers"
COLLECTIONS_SUBDIR = "_collections"
RUNS_SUBDIR = ".runs"
LOCK_FILE = ".viewer.lock"
LOG_FILE = ".viewer.log"
STEPS_FILE = "steps.jsonl"
HEARTBEAT_FILE = "heartbeat"
STDOUT_FILE = "stdout.log"
STDERR_FILE = "stderr.log"
COMMANDS_FILE = "commands.jsonl"
RUNTIME_FILE = "runtime.json"
DEBUGGER_FILE = "unotest/.debugger.json"
ENV_FILE = "unotest/.env"
RUN_MANIFEST_FILE = "manifest.json"
TERMINAL_WS_EVENT = "terminal"

# ---------------------------------------------------------------------------
# JSON read back (not a 0.5.0 name)
# ---------------------------------------------------------------------------

JSONObject: TypeAlias = dict[str, object]
"""A JSON object whose shape no type here pins: a ``steps.jsonl`` line, a manifest or a
worker's message as read back (checked only to be an object), or one we build that has
no protocol shape. Its values are narrowed with ``isinstance`` where they are read."""

# ---------------------------------------------------------------------------
# Literal aliases
# ---------------------------------------------------------------------------

RunId: TypeAlias = str
RunKind: TypeAlias = Literal["scenario", "collection"]
RunOutcome: TypeAlias = Literal["completed", "failed", "aborted", "interrupted"]
FinishedOutcome: TypeAlias = Literal["completed", "failed", "aborted"]
"""How a runner ends its own run; ``interrupted`` is only ever a reader's conclusion (the
runner died before ``run:finished``). Not a 0.5.0 name: the runner's narrower view."""
ScenarioOutcomeKind: TypeAlias = Literal[RunOutcome, "skipped"]
"""A collection's scenario: a run's outcome, or ``skipped`` (never started). Not a 0.5.0 name."""
RunStatus: TypeAlias = Literal["running", "passed", "failed", "aborted", "interrupted"]
RuntimeState: TypeAlias = Literal[
    "starting",
    "running",
    "paused-step",
    "paused-failure",
    "paused-breakpoint",
    "completed",
    "failed",
    "aborted",
]
DbgCommandKind: TypeAlias = Literal["step", "continue", "pause", "set-bp", "clear-bp", "abort"]
"""The commands 0.5.0 knows; the runner accepts more, hence ``DbgCommand.cmd: str``."""

# ---------------------------------------------------------------------------
# Matchers
# ---------------------------------------------------------------------------


class RegexLiteral(TypedDict):
    """A regex that survives JSON: a compiled pattern cannot cross the wire to the viewer."""

    kind: Literal["regex"]
    source: str
    flags: str


Matcher: TypeAlias = str | RegexLiteral

# ---------------------------------------------------------------------------
# Discovery metadata
# ---------------------------------------------------------------------------


class ScenarioMeta(TypedDict):
    id: str
    title: str
    color: str
    name: str
    path: str


class HelperMeta(TypedDict):
    name: str
    path: str


class CollectionMeta(TypedDict):
    name: str
    path: str
    description: str | None
    scenarios: list[str]


# ---------------------------------------------------------------------------
# Run directory: manifest.json
# ---------------------------------------------------------------------------


class RunManifest(TypedDict):
    """``manifest.json``; ``pid``/``pidStartTime``/``hostname`` are ours.

    They let a reader tell a dead runner at once (PID reuse included) instead of
    waiting ``HEARTBEAT_STALE_SECONDS`` for the heartbeat to go stale.
    """

    schemaVersion: Literal[1]
    kind: RunKind
    ref: str
    parentRunId: NotRequired[str]
    adapter: str
    startedAt: int
    pid: NotRequired[int]
    pidStartTime: NotRequired[int]
    hostname: NotRequired[str]
    restartOf: NotRequired[str]
    """The run this one restarted (``restart``): same process, same browser."""
    attempt: NotRequired[int]
    """A retry's attempt number (2, 3, …; ``--retries``)."""
    retryOf: NotRequired[str]
    """A retry's first attempt's run id."""
    browserEndpoint: NotRequired[str]
    """Ours: the Playwright server (``wsEndpoint``) the run's browser came from, without
    credentials or query; absent for a browser launched on the runner's machine."""
    infraRetryOf: NotRequired[str]
    """Ours: the run this one runs again because that run's browser endpoint went down
    mid-scenario (an infrastructure retry: neither a ``--retries`` attempt nor a failure)."""


# ---------------------------------------------------------------------------
# Run directory: steps.jsonl (scenario runs)
# ---------------------------------------------------------------------------


class RunArtifactBase(TypedDict):
    t: int


class RunStartedEvent(RunArtifactBase):
    kind: Literal["run:started"]
    runId: RunId
    scenario: str


class StepStartedEvent(RunArtifactBase):
    """``file``/``depth`` are ours, so steps that run inside helpers can be placed;
    ``title`` (ours) is a ``step("title", fn)`` statement's, when its source says it."""

    kind: Literal["step:started"]
    line: int
    col: int
    text: str
    file: NotRequired[str]
    depth: NotRequired[int]
    title: NotRequired[str]


class StepOkEvent(RunArtifactBase):
    """``pausedMs`` is ours: the time the debugger held the run while this step was
    open (a failure pause, or pauses inside a call), left out of ``durationMs``;
    ``title`` (ours): a ``step(title, fn)`` statement's title, known once it ran."""

    kind: Literal["step:ok"]
    durationMs: float
    pausedMs: NotRequired[float]
    title: NotRequired[str]


class StepFailEvent(RunArtifactBase):
    """``caught``/``soft``/``durationMs``/``pausedMs``/``title`` are ours: ``caught`` is
    true when a ``try`` of the scenario catches the error (then it is not the run's
    failure); ``soft`` when a soft assertion failed (the scenario went on; the run fails
    at its end); ``durationMs``, ``pausedMs`` and ``title`` as on ``step:ok``."""

    kind: Literal["step:fail"]
    error: str
    errorName: NotRequired[str]
    trace: NotRequired[str]
    caught: NotRequired[bool]
    soft: NotRequired[bool]
    durationMs: NotRequired[float]
    pausedMs: NotRequired[float]
    title: NotRequired[str]


class ScreenshotEvent(RunArtifactBase):
    kind: Literal["screenshot"]
    path: str


class FailureBundleWrittenEvent(RunArtifactBase):
    kind: Literal["failure-bundle:written"]
    bundlePath: str
    screenshotPath: NotRequired[str]


class CallFrame(TypedDict):
    """Anonymous ``{fn, file, line}`` in 0.5.0; named here because Python needs a name."""

    fn: str
    file: str
    line: int


class ChainFrame(TypedDict):
    """Ours: one place of a failure's chain, outermost first. The first is the
    scenario's own statement, each next one the statement running in the function it
    called, the last one where the error happened; ``fn`` is the function that holds
    the place (the test function for the first)."""

    file: str
    line: int
    col: int
    fn: str


class PauseSnapshot(TypedDict):
    """Anonymous in 0.5.0 (``PausedEvent.snapshot``)."""

    vars: dict[str, str]
    callStack: list[CallFrame]


class PausedEvent(RunArtifactBase):
    kind: Literal["paused"]
    reason: Literal["breakpoint", "step", "failure"]
    line: int
    col: int
    snapshot: NotRequired[PauseSnapshot]


class ResumedEvent(RunArtifactBase):
    """``by`` stays within 0.5.0's two values because the viewer validates it.

    Our extra resuming commands (``step-over``, ``retry``, ...) map onto one of
    them and name themselves in the additive ``cmd``.
    """

    kind: Literal["resumed"]
    by: Literal["step", "continue"]
    cmd: NotRequired[str]


class RunFinishedEvent(RunArtifactBase):
    kind: Literal["run:finished"]
    outcome: RunOutcome
    # Ours, additive (0.5.0 readers ignore them): why a run that could not go on
    # (its webServer, its browser) failed, when no step failed.
    error: NotRequired[str]
    errorName: NotRequired[str]


RunArtifact: TypeAlias = (
    RunStartedEvent
    | StepStartedEvent
    | StepOkEvent
    | StepFailEvent
    | ScreenshotEvent
    | FailureBundleWrittenEvent
    | PausedEvent
    | ResumedEvent
    | RunFinishedEvent
)

# --- additive event kinds (not in 0.5.0; consumers skip unknown kinds) ------


class CommandAppliedEvent(RunArtifactBase):
    """Lets whoever appended a command to ``commands.jsonl`` know that it landed."""

    kind: Literal["command:applied"]
    id: str
    cmd: str
    note: NotRequired[str]
    """What the runner made of it (a breakpoint moved to the next statement start)."""


class CommandRejectedEvent(RunArtifactBase):
    """``id``/``cmd`` are optional because a malformed line may carry neither."""

    kind: Literal["command:rejected"]
    id: NotRequired[str]
    cmd: NotRequired[str]
    reason: str


class CommandResultEvent(RunArtifactBase):
    """The answer to ``eval``: the command file is one-way, so results come back as events."""

    kind: Literal["command:result"]
    id: str
    ok: bool
    value: NotRequired[str]
    error: NotRequired[str]


class StepSkippedEvent(RunArtifactBase):
    """Marks a statement that ``skip`` never ran, so the step list has no silent hole."""

    kind: Literal["step:skipped"]
    line: int
    col: int
    text: NotRequired[str]
    """The statement, when it never started (its ``step:started`` would have said it)."""


PageImageAfter = Literal["step", "pause", "eval"]


class ImageViewport(TypedDict):
    width: int
    height: int


class PageImageEvent(RunArtifactBase):
    """The page as an image in the run directory (``pages/…``), taken after a step
    (``step``: that step's index, in ``step:started`` order), at a pause or after an
    ``eval`` there, at the statement ``file:line:col``; ``viewport`` is the page's
    size in CSS pixels (the image may be scaled), ``aria`` (at a pause) its aria
    snapshot beside it."""

    kind: Literal["page:image"]
    path: str
    after: PageImageAfter
    file: str
    line: int
    col: int
    viewport: ImageViewport
    step: NotRequired[int]
    aria: NotRequired[str]


RunEvent: TypeAlias = (
    RunArtifact
    | CommandAppliedEvent
    | CommandRejectedEvent
    | CommandResultEvent
    | StepSkippedEvent
    | PageImageEvent
)
"""Every line this runner may write to a scenario's ``steps.jsonl``."""

# ---------------------------------------------------------------------------
# Run directory: steps.jsonl (collection runs)
# ---------------------------------------------------------------------------


class CollectionRunStartedEvent(RunArtifactBase):
    kind: Literal["collection-run:started"]
    runId: RunId
    collection: str
    scenarios: list[str]


class CollectionScenarioStartedEvent(RunArtifactBase):
    """``worker`` is ours: the worker (0-based, as ``UNOTEST_WORKER_INDEX``) running it;
    ``endpoint`` (ours) the browser endpoint it runs on (``wsEndpoint``, shown without
    credentials), absent for a browser launched here."""

    kind: Literal["collection-run:scenario-started"]
    scenarioRunId: RunId
    scenario: str
    worker: NotRequired[int]
    endpoint: NotRequired[str]


class CollectionScenarioFinishedEvent(RunArtifactBase):
    """``infraRetry`` (ours): the run was lost with its browser endpoint and the
    scenario runs again elsewhere; its ``outcome`` counts for nothing."""

    kind: Literal["collection-run:scenario-finished"]
    scenarioRunId: RunId
    scenario: str
    outcome: RunOutcome
    infraRetry: NotRequired[bool]


class CollectionRunFinishedEvent(RunArtifactBase):
    kind: Literal["collection-run:finished"]
    outcome: RunOutcome


CollectionRunArtifact: TypeAlias = (
    CollectionRunStartedEvent
    | CollectionScenarioStartedEvent
    | CollectionScenarioFinishedEvent
    | CollectionRunFinishedEvent
)


class CollectionEndpointDownEvent(RunArtifactBase):
    """Ours: a browser endpoint of the collection's pool refused a connection or
    dropped one; said once each time it goes down (``endpoint`` without credentials,
    ``reason`` one sentence, ``retryInMs`` until it is tried again)."""

    kind: Literal["collection-run:endpoint-down"]
    endpoint: str
    reason: str
    retryInMs: int


CollectionRunEvent: TypeAlias = CollectionRunArtifact | CollectionEndpointDownEvent
"""Every line this runner may write to a collection's ``steps.jsonl``."""

# ---------------------------------------------------------------------------
# Listing runs
# ---------------------------------------------------------------------------


class RunMeta(TypedDict):
    runId: RunId
    kind: RunKind
    ref: str
    startedAt: int
    finishedAt: int | None
    durationMs: float | None
    status: RunStatus
    outcome: RunOutcome | None
    parentRunId: NotRequired[str]
    restartOf: NotRequired[str]
    """Ours, from the manifest: the run this one restarted."""
    attempt: NotRequired[int]
    """Ours, from the manifest: a retry's attempt number (2, 3, …)."""
    retryOf: NotRequired[str]
    """Ours, from the manifest: a retry's first attempt's run id."""


# ---------------------------------------------------------------------------
# Run directory: runtime.json
# ---------------------------------------------------------------------------


class CurrentLocation(TypedDict):
    """Anonymous ``{line, col}`` in 0.5.0 (``RuntimeStateFile.current``)."""

    line: int
    col: int


class FailureError(TypedDict):
    """Anonymous in 0.5.0 (``RuntimeStateFile.lastFailure.error``)."""

    message: str
    name: NotRequired[str]


class LastFailure(TypedDict):
    """Anonymous in 0.5.0 (``RuntimeStateFile.lastFailure``).

    ``file``/``stack`` are ours: ``line``/``col`` are where the error happened, in
    ``file`` (a helper's, when it failed in one); ``stack`` is the failure's chain from
    the scenario's own statement down to that place.
    """

    line: int
    col: int
    error: FailureError
    file: NotRequired[str]
    stack: NotRequired[list[ChainFrame]]


class PageInfo(TypedDict):
    """Ours: what the paused browser shows, so a reader need not open the page."""

    url: str
    title: str


class RuntimeStateFile(TypedDict):
    """``runtime.json``; ``file``/``page``/``breakpoints``/``frameVars`` are ours.

    ``current`` alone is ambiguous once helpers run, hence ``file``;
    ``breakpoints`` maps a project-relative file to its active ``"line:col"``
    strings so a reader sees what the debugger will actually stop on.
    """

    runId: str
    scenario: str
    testFn: str
    state: RuntimeState
    current: CurrentLocation | None
    vars: dict[str, str]
    callStack: list[CallFrame]
    lastFailure: LastFailure | None
    updatedAt: int
    file: NotRequired[str]
    page: NotRequired[PageInfo]
    breakpoints: NotRequired[dict[str, list[str]]]
    frameVars: NotRequired[list[dict[str, str]]]
    """At a pause inside a call: the variables where each frame stands, the test
    function first, then one per ``callStack`` entry (the last one is ``vars``), so
    a debugger's selected caller shows its own locals."""


# ---------------------------------------------------------------------------
# Debugger: unotest/.debugger.json and commands.jsonl
# ---------------------------------------------------------------------------


class BreakpointEntry(TypedDict):
    line: int
    col: int


class BreakpointsFile(TypedDict):
    version: Literal[1]
    scenarios: dict[str, list[BreakpointEntry]]


class DbgCommand(TypedDict):
    """One ``commands.jsonl`` line, looser than 0.5.0's six-way union on purpose.

    The runner also accepts ``step-over``, ``step-out``, ``retry``, ``skip`` and
    ``eval``; an unknown ``cmd`` must reach the runner so it can answer with
    ``command:rejected`` instead of being lost to a type error.
    """

    id: str
    cmd: str
    line: NotRequired[int]
    col: NotRequired[int]
    file: NotRequired[str]
    expr: NotRequired[str]
    x: NotRequired[float]
    """Ours, with ``pick``: a point of the page (CSS pixels from the viewport's top
    left, ``y`` too), or ``name`` (and ``role``): an element's accessible name or text."""
    y: NotRequired[float]
    name: NotRequired[str]
    role: NotRequired[str]
    frame: NotRequired[int]
    """Ours, with ``eval``: the call-stack frame whose scope evaluates ``expr``
    (an index of ``runtime.json``'s ``frameVars``: 0 the test function, ``i`` the
    ``callStack[i - 1]`` helper call); the innermost when left out."""


# ---------------------------------------------------------------------------
# Viewer-owned files (mirrored so the runner never clobbers their shape)
# ---------------------------------------------------------------------------


class LockFile(TypedDict):
    pid: int
    url: str
    startedAt: str


class EnvVar(TypedDict):
    key: str
    value: str
    secret: bool
    bool: bool
    commented: bool


class EnvFile(TypedDict):
    version: Literal[1]
    vars: list[EnvVar]


class EnvUpdate(TypedDict):
    version: Literal[1]
    values: dict[str, str]


# ---------------------------------------------------------------------------
# Pure functions (behave exactly like dist/index.js)
# ---------------------------------------------------------------------------


def is_regex_literal(v: object) -> TypeGuard[RegexLiteral]:
    """JS ``isRegexLiteral``: any non-null object counts, so any ``Mapping`` does here."""
    return (
        isinstance(v, Mapping)
        and v.get("kind") == "regex"
        and isinstance(v.get("source"), str)
        and isinstance(v.get("flags"), str)
    )


def regex_literal(source: str, flags: str = "") -> RegexLiteral:
    """JS ``regexLiteral``: flags are deliberately not validated (the DSL parser owns that)."""
    return {"kind": "regex", "source": source, "flags": flags}


_BASE36_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


def to_base36(n: int) -> str:
    """JS ``Number.prototype.toString(36)`` for integers: the run id embeds ``Date.now()`` so."""
    if n < 0:
        return "-" + to_base36(-n)
    if n == 0:
        return "0"
    digits: list[str] = []
    while n:
        n, rem = divmod(n, 36)
        digits.append(_BASE36_DIGITS[rem])
    return "".join(reversed(digits))


# JS /[^a-zA-Z0-9_-]+/ is ASCII-only; spelled out so no Unicode \w sneaks in.
_RUN_ID_UNSAFE_RE = re.compile(r"[^a-zA-Z0-9_-]+")
_RUN_ID_DASHES_RE = re.compile(r"-+")
# JS `$` (no m flag) is the very end; Python `$` would also match before a final "\n".
_RUN_ID_EDGE_DASH_RE = re.compile(r"^-|-\Z")


def sanitize_run_id_segment(name: str) -> str:
    """JS ``sanitizeRunIdSegment``: the run directory must be named as the viewer expects.

    Falls back to ``run`` when nothing safe is left (an all-emoji name); the
    timestamp and random suffix of ``make_run_id`` still keep ids unique.
    """
    segment = _RUN_ID_UNSAFE_RE.sub("-", name)
    segment = _RUN_ID_DASHES_RE.sub("-", segment)
    segment = _RUN_ID_EDGE_DASH_RE.sub("", segment)
    return segment if segment else "run"


_RAND_BYTES = 3
_RAND_HEX_RE = re.compile(r"[0-9a-f]{6}")


def make_run_id(name: str, now_ms: int | None = None, rand_hex: str | None = None) -> str:
    """JS ``makeRunId``: ``<segment>-<Date.now() base 36>-<3 random bytes as hex>``.

    ``now_ms`` and ``rand_hex`` exist only so tests can pin the result; the JS
    function takes neither. A malformed ``rand_hex`` is refused rather than
    producing an id the viewer would not recognise.
    """
    if now_ms is None:
        now_ms = time.time_ns() // 1_000_000
    if rand_hex is None:
        rand_hex = os.urandom(_RAND_BYTES).hex()  # secrets.token_hex, without its imports
    elif not _RAND_HEX_RE.fullmatch(rand_hex):
        raise ValueError(f"rand_hex must be 6 lowercase hex digits, got {rand_hex!r}")
    return f"{sanitize_run_id_segment(name)}-{to_base36(now_ms)}-{rand_hex}"


COLLECTION_NAME_FORBIDDEN_RE = re.compile(r'[\\/:*?"<>|\x00-\x1f]')
"""JS ``COLLECTION_NAME_FORBIDDEN_RE``; use ``.search`` (JS ``.test`` is unanchored)."""

# Exactly what JS String.prototype.trim strips (WhiteSpace + LineTerminator).
# Python's str.strip() differs both ways: it also strips \x1c-\x1f and \x85,
# and keeps \ufeff, which would change which names are rejected.
_JS_TRIM_CHARS = (
    "\t\n\v\f\r \u00a0\u1680"
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def _js_trim(s: str) -> str:
    return s.strip(_JS_TRIM_CHARS)


def validate_collection_name(name: object) -> str | None:
    """JS ``validateCollectionName``: ``None`` if acceptable, else the viewer's exact reason.

    Same reasons as the viewer so a name refused here reads the same there.
    """
    if not isinstance(name, str):
        return "must be a string"
    trimmed = _js_trim(name)
    if len(trimmed) == 0:
        return "must not be empty"
    if trimmed in (".", ".."):
        return 'must not be "." or ".."'
    if trimmed.startswith("."):
        return "must not start with '.'"
    if COLLECTION_NAME_FORBIDDEN_RE.search(trimmed):
        return 'must not contain \\ / : * ? " < > | or control characters'
    return None


# ---------------------------------------------------------------------------
# Secrets (not part of 0.5.0)
# ---------------------------------------------------------------------------

SECRET_NAME_MARKERS = (
    "PASS",
    "SECRET",
    "TOKEN",
    "KEY",
    "AUTH",
    "CREDENTIAL",
    "PRIVATE",
    "COOKIE",
    "SESSION",
)


def is_secret_name(name: str) -> bool:
    """Whether a variable's value must be masked in artifacts.

    A plain substring test errs towards masking (``MONKEY`` counts): a leaked
    credential costs more than a hidden harmless value. ``PWD`` holds none of
    the markers, so the shell's working directory stays visible.
    """
    upper = name.upper()
    return any(marker in upper for marker in SECRET_NAME_MARKERS)


# ---------------------------------------------------------------------------
# Starting runs (the viewer's RunRequest; mirrored for the runner adapter)
# ---------------------------------------------------------------------------


class ScenarioRunRequest(TypedDict):
    kind: Literal["scenario"]
    scenario: str
    headed: NotRequired[bool]
    debug: NotRequired[bool]
    breakpoints: NotRequired[list[str]]
    """``"line:col"`` strings, honoured only with ``debug``."""


class CollectionRunRequest(TypedDict):
    kind: Literal["collection"]
    collection: str
    headed: NotRequired[bool]
    workers: NotRequired[int]
    bail: NotRequired[bool]


RunRequest: TypeAlias = ScenarioRunRequest | CollectionRunRequest

__all__ += ["CollectionRunRequest", "RunRequest", "ScenarioRunRequest"]


# ---------------------------------------------------------------------------
# A run's page log: network.jsonl and console.jsonl (ours, additive; not part of 0.5.0)
# ---------------------------------------------------------------------------
# Every scenario run appends its page's requests and console messages to these two
# files of its run directory as they happen (runner/browser/page_log.py), one JSON
# object a line, masked and bounded; the last 200 of each also go to a failure bundle's
# network.json / console.json, in the same shapes.

NETWORK_LOG_FILE = "network.jsonl"
CONSOLE_LOG_FILE = "console.jsonl"

PageRouted: TypeAlias = Literal["fulfilled", "aborted", "recorded"]
"""How a scenario's ``route()`` answered a request: mocked, aborted or let through and
recorded."""


class NetworkLine(TypedDict):
    """One request that finished or failed (a line of ``network.jsonl``, an entry of a
    bundle's ``network.json``). ``durationMs``: from the request's start to the end of
    its response, by the browser's own timing; ``size``: the response's
    ``Content-Length``, ``None`` when it sent none; ``failure``: why it failed
    (``net::ERR_…``), ``None`` when answered (a 4xx/5xx is answered); ``t``: when it
    ended; ``routed`` only when a scenario's route answered it."""

    method: str
    url: str | None
    durationMs: float | None
    status: int | None
    failure: str | None
    size: int | None
    t: int
    routed: NotRequired[PageRouted]


class ConsoleLine(TypedDict):
    """One console message (``type`` as the browser says: ``log``, ``error``,
    ``warning``, …), page error (``pageerror``, no place) or dialog the run answered
    (``dialog``); a line of ``console.jsonl``, an entry of a bundle's ``console.json``."""

    type: str
    text: str | None
    url: NotRequired[str | None]
    line: NotRequired[int | None]
    t: int


class PageLogCapped(TypedDict):
    """The last line of a page log that reached its bound: ``kept`` lines were written
    before it, and nothing after (``limit``: which bound, ``lines`` or ``bytes``)."""

    capped: Literal[True]
    limit: Literal["lines", "bytes"]
    kept: int
    t: int


__all__ += [
    "CONSOLE_LOG_FILE",
    "NETWORK_LOG_FILE",
    "ConsoleLine",
    "NetworkLine",
    "PageLogCapped",
    "PageRouted",
]
