"""runner.protocol must stay byte-for-byte compatible with @unotest/protocol 0.5.0.

Expected values are hard-coded from the package's index.d.ts / index.js: the
product never reads ../shared. The JSON Schemas and the package's dist/index.js are
committed in tests/protocol/; the JavaScript parity tests run that file in node (and
skip only where node is not installed).
"""

import json
import random
import re
import shutil
import subprocess
import time
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from protocol_keys import (
    ADDITIVE_KINDS,
    COLLECTION_ADDITIVE_KINDS,
    COLLECTION_KINDS,
    RUN_ARTIFACT_KINDS,
)
from protocol_schemas import definition

from runner import protocol
from runner.protocol import (
    COLLECTION_NAME_FORBIDDEN_RE,
    SECRET_NAME_MARKERS,
    BreakpointsFile,
    CollectionMeta,
    CollectionRunArtifact,
    CommandAppliedEvent,
    CommandRejectedEvent,
    CommandResultEvent,
    DbgCommand,
    HelperMeta,
    RunArtifact,
    RunEvent,
    RunManifest,
    RunMeta,
    RuntimeStateFile,
    ScenarioMeta,
    StepSkippedEvent,
    is_regex_literal,
    is_secret_name,
    make_run_id,
    regex_literal,
    sanitize_run_id_segment,
    to_base36,
    validate_collection_name,
)

Validate = Callable[[str, object], None]

PACKAGE_JS = Path(__file__).resolve().parents[1] / "protocol" / "unotest-protocol-0.5.0.js"
"""The package's ``dist/index.js`` (one line, as published), kept beside its schemas."""

FORBIDDEN_REASON = 'must not contain \\ / : * ? " < > | or control characters'


# ---------------------------------------------------------------------------
# Constants
# ---------------------------------------------------------------------------

EXPECTED_CONSTANTS = {
    "UNOTEST_DIR": "unotest",
    "E2E_SUBDIR": "e2e",
    "HELPERS_SUBDIR": "_helpers",
    "COLLECTIONS_SUBDIR": "_collections",
    "RUNS_SUBDIR": ".runs",
    "LOCK_FILE": ".viewer.lock",
    "LOG_FILE": ".viewer.log",
    "STEPS_FILE": "steps.jsonl",
    "HEARTBEAT_FILE": "heartbeat",
    "STDOUT_FILE": "stdout.log",
    "STDERR_FILE": "stderr.log",
    "COMMANDS_FILE": "commands.jsonl",
    "RUNTIME_FILE": "runtime.json",
    "DEBUGGER_FILE": "unotest/.debugger.json",
    "ENV_FILE": "unotest/.env",
    "RUN_MANIFEST_FILE": "manifest.json",
    "TERMINAL_WS_EVENT": "terminal",
}


@pytest.mark.parametrize(("name", "value"), sorted(EXPECTED_CONSTANTS.items()))
def test_path_constants_match_dts(name: str, value: str) -> None:
    assert getattr(protocol, name) == value


def test_identity_constants() -> None:
    assert protocol.ADAPTER_NAME == "@unotest/web"
    assert protocol.PROTOCOL_VERSION == "0.5.0"
    assert protocol.HEARTBEAT_STALE_SECONDS == 30


def test_all_names_exist() -> None:
    missing = [name for name in protocol.__all__ if not hasattr(protocol, name)]
    assert missing == []


def test_literal_aliases_match_dts() -> None:
    assert typing.get_args(protocol.RunKind) == ("scenario", "collection")
    assert typing.get_args(protocol.RunOutcome) == ("completed", "failed", "aborted", "interrupted")
    assert typing.get_args(protocol.RunStatus) == (
        "running",
        "passed",
        "failed",
        "aborted",
        "interrupted",
    )
    assert typing.get_args(protocol.RuntimeState) == (
        "starting",
        "running",
        "paused-step",
        "paused-failure",
        "paused-breakpoint",
        "completed",
        "failed",
        "aborted",
    )
    assert typing.get_args(protocol.DbgCommandKind) == (
        "step",
        "continue",
        "pause",
        "set-bp",
        "clear-bp",
        "abort",
    )


def _kinds(union: Any) -> list[str]:
    return [typing.get_args(member.__annotations__["kind"])[0] for member in typing.get_args(union)]


def test_run_artifact_union_kinds() -> None:
    assert tuple(_kinds(RunArtifact)) == RUN_ARTIFACT_KINDS
    assert tuple(_kinds(CollectionRunArtifact)) == COLLECTION_KINDS
    assert tuple(_kinds(RunEvent)[9:]) == ADDITIVE_KINDS
    assert tuple(_kinds(protocol.CollectionRunEvent)[4:]) == COLLECTION_ADDITIVE_KINDS


def test_additive_fields_are_optional() -> None:
    assert {
        "pid",
        "pidStartTime",
        "hostname",
        "parentRunId",
        "restartOf",
        "attempt",
        "retryOf",
        "browserEndpoint",
        "infraRetryOf",
    } == RunManifest.__optional_keys__
    assert {"file", "depth", "title"} == protocol.StepStartedEvent.__optional_keys__
    assert {"cmd"} == protocol.ResumedEvent.__optional_keys__
    assert {"file", "page", "breakpoints", "frameVars"} == RuntimeStateFile.__optional_keys__
    assert {"id", "cmd"} == DbgCommand.__required_keys__
    assert {
        "line",
        "col",
        "file",
        "expr",
        "frame",
        "x",
        "y",
        "name",
        "role",
    } == DbgCommand.__optional_keys__
    assert {"t", "kind", "id", "cmd"} == CommandAppliedEvent.__required_keys__
    assert {"t", "kind", "reason"} == CommandRejectedEvent.__required_keys__
    assert {"id", "cmd"} == CommandRejectedEvent.__optional_keys__
    assert {"t", "kind", "id", "ok"} == CommandResultEvent.__required_keys__
    assert {"value", "error"} == CommandResultEvent.__optional_keys__
    assert {"t", "kind", "line", "col"} == StepSkippedEvent.__required_keys__


# ---------------------------------------------------------------------------
# Secrets
# ---------------------------------------------------------------------------


def test_secret_markers() -> None:
    assert SECRET_NAME_MARKERS == (
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


@pytest.mark.parametrize(
    "name",
    [
        "PASSWORD",
        "db_pass",
        "Client_Secret",
        "GITHUB_TOKEN",
        "api_key",
        "apiKey",
        "AUTH_HEADER",
        "oauth",
        "GOOGLE_CREDENTIALS",
        "private_pem",
        "cookie",
        "SESSIONID",
    ],
)
def test_secret_names(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.parametrize("name", ["PWD", "pwd", "USER", "BASE_URL", "HOME", "PATH", ""])
def test_non_secret_names(name: str) -> None:
    assert not is_secret_name(name)


def test_pwd_is_explicitly_not_a_secret() -> None:
    # PWD reads like "password" but is the shell's working directory.
    assert is_secret_name("PWD") is False


# ---------------------------------------------------------------------------
# Regex literals
# ---------------------------------------------------------------------------


def test_regex_literal() -> None:
    assert regex_literal("a+b") == {"kind": "regex", "source": "a+b", "flags": ""}
    assert regex_literal("x", "gi") == {"kind": "regex", "source": "x", "flags": "gi"}
    # Flags are deliberately not validated (the DSL parser owns that).
    assert regex_literal("x", "zz")["flags"] == "zz"
    assert is_regex_literal(regex_literal("x", "i"))


@pytest.mark.parametrize(
    "value",
    [
        None,
        "regex",
        ["regex"],
        {},
        {"kind": "regex"},
        {"kind": "regex", "source": "a"},
        {"kind": "regex", "source": 1, "flags": ""},
        {"kind": "regex", "source": "a", "flags": None},
        {"kind": "REGEX", "source": "a", "flags": ""},
    ],
)
def test_not_regex_literal(value: object) -> None:
    assert not is_regex_literal(value)


def test_regex_literal_with_extra_keys_is_accepted() -> None:
    assert is_regex_literal({"kind": "regex", "source": "a", "flags": "", "extra": 1})


# ---------------------------------------------------------------------------
# Run ids
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("smoke", "smoke"),
        ("auth/signin", "auth-signin"),
        ("auth/signin-flow", "auth-signin-flow"),
        ("🔥 smoke 🔥", "smoke"),
        ("🔥🔥🔥", "run"),
        ("", "run"),
        ("---", "run"),
        ("--a--b--", "a-b"),
        ("snake_case_name", "snake_case_name"),
        ("__x__", "__x__"),
        ("a b\tc\nd", "a-b-c-d"),
        ("café", "caf"),
        ("日本語", "run"),
        ("x\n", "x"),
        ("-", "run"),
        ("a.b", "a-b"),
        ("ABC-xyz_09", "ABC-xyz_09"),
        ("a\u0660b", "a-b"),  # Arabic-Indic digit: Unicode \d, not [0-9]
        ("aǅb", "a-b"),  # Unicode letter, not [a-zA-Z]
    ],
)
def test_sanitize_run_id_segment(name: str, expected: str) -> None:
    assert sanitize_run_id_segment(name) == expected


@pytest.mark.parametrize(
    ("n", "expected"),
    [
        (0, "0"),
        (1, "1"),
        (35, "z"),
        (36, "10"),
        (1_700_000_000_000, "loyw3v28"),
        (2**53 - 1, "2gosa7pa2gv"),
        (-36, "-10"),
    ],
)
def test_to_base36(n: int, expected: str) -> None:
    assert to_base36(n) == expected


def test_make_run_id_is_deterministic_with_injected_parts() -> None:
    assert make_run_id("auth/signin", now_ms=1_700_000_000_000, rand_hex="0a1b2c") == (
        "auth-signin-loyw3v28-0a1b2c"
    )
    assert make_run_id("🔥", now_ms=36, rand_hex="ffffff") == "run-10-ffffff"


@pytest.mark.parametrize("name", ["smoke", "auth/signin", "🔥 smoke 🔥", "🔥", "a b c"])
def test_make_run_id_format(name: str) -> None:
    seg = re.escape(sanitize_run_id_segment(name))
    run_id = make_run_id(name)
    assert re.fullmatch(rf"{seg}-[0-9a-z]+-[0-9a-f]{{6}}", run_id), run_id


def test_make_run_id_uses_current_time() -> None:
    before = time.time_ns() // 1_000_000
    stamp = int(make_run_id("x").split("-")[1], 36)
    after = time.time_ns() // 1_000_000
    assert before <= stamp <= after


def test_make_run_id_differs_between_calls() -> None:
    assert make_run_id("smoke") != make_run_id("smoke")


@pytest.mark.parametrize("bad", ["ABCDEF", "abc", "abcdefg", "xyz123", ""])
def test_make_run_id_rejects_malformed_rand_hex(bad: str) -> None:
    with pytest.raises(ValueError):
        make_run_id("x", now_ms=1, rand_hex=bad)


# ---------------------------------------------------------------------------
# Collection names
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("value", [None, 1, 1.5, True, ["a"], {"a": 1}, b"smoke"])
def test_collection_name_must_be_string(value: object) -> None:
    assert validate_collection_name(value) == "must be a string"


@pytest.mark.parametrize(
    "value",
    ["", " ", "\t\n", "\u00a0", "\ufeff", "\u2028\u2029", "\u3000 \u200a", "\u1680\v\f\r"],
)
def test_collection_name_must_not_be_empty(value: str) -> None:
    assert validate_collection_name(value) == "must not be empty"


@pytest.mark.parametrize("value", [".", "..", " . ", "\t..\n"])
def test_collection_name_dot_and_dotdot(value: str) -> None:
    assert validate_collection_name(value) == 'must not be "." or ".."'


@pytest.mark.parametrize("value", [".hidden", "...", " .x", ".a/b"])
def test_collection_name_leading_dot(value: str) -> None:
    assert validate_collection_name(value) == "must not start with '.'"


@pytest.mark.parametrize(
    "char",
    ["\\", "/", ":", "*", "?", '"', "<", ">", "|", *(chr(c) for c in range(0x20))],
)
def test_collection_name_forbidden_chars(char: str) -> None:
    assert validate_collection_name(f"a{char}b") == FORBIDDEN_REASON
    assert COLLECTION_NAME_FORBIDDEN_RE.search(f"a{char}b")


@pytest.mark.parametrize("char", ["\x1c", "\x1d", "\x1e", "\x1f"])
def test_collection_name_trim_keeps_separator_controls(char: str) -> None:
    # JS trim does not strip \x1c-\x1f (Python's str.strip would), so they are
    # still there to be rejected as control characters.
    assert validate_collection_name(f"{char}smoke{char}") == FORBIDDEN_REASON


def test_collection_name_trim_keeps_nel() -> None:
    # \x85 is not whitespace for JS trim and not a control char in the block list.
    assert validate_collection_name("\x85smoke") is None


@pytest.mark.parametrize(
    "value",
    [
        "smoke",
        "nightly-suite_2",
        "Регрессия",
        "回归测试",
        "🔥 hot",
        "a.b",
        "x..",
        "\x7f",
        "  padded  ",
        "\ufeffbom",
        "\n\tsmoke\r\n",
    ],
)
def test_collection_name_ok(value: str) -> None:
    assert validate_collection_name(value) is None


def test_collection_name_trimmed_before_checks() -> None:
    # Trailing newline is trimmed, so it is not reported as a control char...
    assert validate_collection_name("smoke\n") is None
    # ...but an inner one is.
    assert validate_collection_name("smo\nke") == FORBIDDEN_REASON
    # Leading whitespace does not hide a leading dot.
    assert validate_collection_name("  .x") == "must not start with '.'"


# ---------------------------------------------------------------------------
# Parity with the JS implementation (needs node and the seed)
# ---------------------------------------------------------------------------

_NODE_SCRIPT = r"""
import * as p from "./index.mjs";
const chunks = [];
for await (const c of process.stdin) chunks.push(c);
const input = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const consts = {};
for (const [k, v] of Object.entries(p)) if (typeof v === "string") consts[k] = v;
process.stdout.write(JSON.stringify({
  consts,
  forbidden: p.COLLECTION_NAME_FORBIDDEN_RE.source,
  sanitize: input.strings.map((s) => p.sanitizeRunIdSegment(s)),
  forbiddenTest: input.strings.map((s) => p.COLLECTION_NAME_FORBIDDEN_RE.test(s)),
  validate: input.values.map((v) => p.validateCollectionName(v)),
  runIds: input.strings.map((s) => [Date.now(), p.makeRunId(s), Date.now()]),
  base36: input.ints.map((n) => n.toString(36)),
  isRegex: input.values.map((v) => p.isRegexLiteral(v)),
  regex: input.strings.map((s) => [p.regexLiteral(s), p.regexLiteral(s, "gi")]),
}));
"""

# Characters chosen to hit every branch and every JS/Python difference:
# trim sets (JS-only \ufeff; Python-only \x1c-\x1f, \x85), forbidden chars,
# non-ASCII letters/digits, astral emoji and a lone surrogate.
_ALPHABET = (
    list("aZ09_-.") * 3
    + list('\\/:*?"<>| \t\n\v\f\r')
    + ["\x00", "\x07", "\x1b", "\x1c", "\x1f", "\x7f", "\x85", "\u00a0", "\u1680"]
    + ["\u2000", "\u200a", "\u200b", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000"]
    + ["\ufeff", "é", "ß", "Я", "日", "\u0660", "🔥", "\U0001f600", "\ud800"]
)


def _generate_inputs() -> dict[str, list[Any]]:
    rng = random.Random(20260529)
    strings: list[str] = ["", ".", "..", "..x", " .", "auth/signin", "🔥 smoke 🔥", "--a--b--"]
    while len(strings) < 200:
        length = rng.choice([1, 2, 3, 5, 8, 13])
        s = "".join(rng.choice(_ALPHABET) for _ in range(length))
        if rng.random() < 0.3:
            s = rng.choice(_ALPHABET) + "." + s
        strings.append(s)
    values: list[Any] = [
        *strings,
        None,
        0,
        1.5,
        True,
        [],
        ["regex"],
        {},
        {"kind": "regex", "source": "a", "flags": ""},
        {"kind": "regex", "source": "a", "flags": "gi", "x": 1},
        {"kind": "regex", "source": 1, "flags": ""},
        {"kind": "regex", "source": "a"},
        {"kind": "Regex", "source": "a", "flags": ""},
    ]
    ints = [0, 1, 35, 36, 1295, 1296, 2**31, 2**53 - 1, *(rng.randrange(2**45) for _ in range(50))]
    return {"strings": strings, "values": values, "ints": ints}


@pytest.fixture(scope="module")
def js_results(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], dict[str, Any]]:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    workdir = tmp_path_factory.mktemp("protocol_js")
    (workdir / "index.mjs").write_text(PACKAGE_JS.read_text(encoding="utf-8"), encoding="utf-8")
    (workdir / "run.mjs").write_text(_NODE_SCRIPT, encoding="utf-8")
    inputs = _generate_inputs()
    proc = subprocess.run(
        [node, "run.mjs"],
        cwd=workdir,
        input=json.dumps(inputs),
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="surrogatepass",
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    outputs: dict[str, Any] = json.loads(proc.stdout)
    return inputs, outputs


def test_js_constants_parity(js_results: tuple[dict[str, Any], dict[str, Any]]) -> None:
    _, out = js_results
    assert out["consts"] == EXPECTED_CONSTANTS
    assert out["forbidden"] == COLLECTION_NAME_FORBIDDEN_RE.pattern


def test_js_sanitize_parity(js_results: tuple[dict[str, Any], dict[str, Any]]) -> None:
    inputs, out = js_results
    assert [sanitize_run_id_segment(s) for s in inputs["strings"]] == out["sanitize"]


def test_js_forbidden_re_parity(js_results: tuple[dict[str, Any], dict[str, Any]]) -> None:
    inputs, out = js_results
    ours = [COLLECTION_NAME_FORBIDDEN_RE.search(s) is not None for s in inputs["strings"]]
    assert ours == out["forbiddenTest"]


def test_js_validate_parity(js_results: tuple[dict[str, Any], dict[str, Any]]) -> None:
    inputs, out = js_results
    ours = [validate_collection_name(v) for v in inputs["values"]]
    mismatches = [
        (v, mine, theirs)
        for v, mine, theirs in zip(inputs["values"], ours, out["validate"], strict=True)
        if mine != theirs
    ]
    assert mismatches == []
    # The generated inputs must actually exercise every branch.
    assert set(out["validate"]) >= {
        None,
        "must be a string",
        "must not be empty",
        'must not be "." or ".."',
        "must not start with '.'",
        FORBIDDEN_REASON,
    }


def test_js_run_id_parity(js_results: tuple[dict[str, Any], dict[str, Any]]) -> None:
    inputs, out = js_results
    for name, (before, run_id, after) in zip(inputs["strings"], out["runIds"], strict=True):
        seg, stamp, rand = run_id.rsplit("-", 2)
        assert seg == sanitize_run_id_segment(name)
        assert re.fullmatch(r"[0-9a-f]{6}", rand)
        assert before <= int(stamp, 36) <= after
        assert make_run_id(name, now_ms=int(stamp, 36), rand_hex=rand) == run_id


def test_js_base36_parity(js_results: tuple[dict[str, Any], dict[str, Any]]) -> None:
    inputs, out = js_results
    assert [to_base36(n) for n in inputs["ints"]] == out["base36"]


def test_js_regex_literal_parity(js_results: tuple[dict[str, Any], dict[str, Any]]) -> None:
    inputs, out = js_results
    assert [is_regex_literal(v) for v in inputs["values"]] == out["isRegex"]
    assert [[regex_literal(s), regex_literal(s, "gi")] for s in inputs["strings"]] == out["regex"]


# ---------------------------------------------------------------------------
# JSON Schemas (tests/protocol/)
# ---------------------------------------------------------------------------

MANIFEST: RunManifest = {
    "schemaVersion": 1,
    "kind": "scenario",
    "ref": "auth/signin",
    "adapter": "@unotest/web",
    "startedAt": 1_700_000_000_000,
}
CHILD_MANIFEST: RunManifest = {
    **MANIFEST,
    "parentRunId": "nightly-loyw3v28-0a1b2c",
    "pid": 4242,
    "pidStartTime": 123456,
    "hostname": "ci-runner-7",
}

T = 1_700_000_000_123
RUN_ARTIFACTS: list[RunArtifact] = [
    {
        "t": T,
        "kind": "run:started",
        "runId": "auth-signin-loyw3v28-0a1b2c",
        "scenario": "auth/signin",
    },
    {"t": T, "kind": "step:started", "line": 5, "col": 2, "text": 'goto("https://example.com")'},
    {
        "t": T,
        "kind": "step:started",
        "line": 3,
        "col": 4,
        "text": 'click("Sign in")',
        "file": "unotest/e2e/_helpers/signin_as.test.js",
        "depth": 1,
    },
    {"t": T, "kind": "step:ok", "durationMs": 12},
    {"t": T, "kind": "step:ok", "durationMs": 12.5},
    {"t": T, "kind": "step:fail", "error": "expected visible"},
    {
        "t": T,
        "kind": "step:fail",
        "error": "Timeout 5000ms exceeded",
        "errorName": "TimeoutError",
        "trace": "unotest/.runs/x/trace.zip",
    },
    {"t": T, "kind": "screenshot", "path": "unotest/.runs/x/screenshot/1.png"},
    {"t": T, "kind": "failure-bundle:written", "bundlePath": ".unotest/failures/a__b__0"},
    {
        "t": T,
        "kind": "failure-bundle:written",
        "bundlePath": ".unotest/failures/a__b__0",
        "screenshotPath": ".unotest/failures/a__b__0/screenshot.png",
    },
    {"t": T, "kind": "paused", "reason": "breakpoint", "line": 7, "col": 0},
    {
        "t": T,
        "kind": "paused",
        "reason": "failure",
        "line": 7,
        "col": 0,
        "snapshot": {
            "vars": {"user": '"alice"', "n": "3"},
            "callStack": [
                {"fn": "signin_as", "file": "unotest/e2e/_helpers/signin_as.test.js", "line": 3}
            ],
        },
    },
    {"t": T, "kind": "paused", "reason": "step", "line": 1, "col": 0},
    {"t": T, "kind": "resumed", "by": "step"},
    {"t": T, "kind": "resumed", "by": "step", "cmd": "step-over"},
    {"t": T, "kind": "resumed", "by": "continue", "cmd": "retry"},
    {"t": T, "kind": "run:finished", "outcome": "completed"},
    {"t": T, "kind": "run:finished", "outcome": "failed"},
    {"t": T, "kind": "run:finished", "outcome": "aborted"},
]

COLLECTION_ARTIFACTS: list[CollectionRunArtifact] = [
    {
        "t": T,
        "kind": "collection-run:started",
        "runId": "nightly-loyw3v28-0a1b2c",
        "collection": "nightly",
        "scenarios": ["smoke", "auth/signin"],
    },
    {
        "t": T,
        "kind": "collection-run:scenario-started",
        "scenarioRunId": "smoke-loyw3v29-ffffff",
        "scenario": "smoke",
    },
    {
        "t": T,
        "kind": "collection-run:scenario-finished",
        "scenarioRunId": "smoke-loyw3v29-ffffff",
        "scenario": "smoke",
        "outcome": "completed",
    },
    {"t": T, "kind": "collection-run:finished", "outcome": "failed"},
]

RUNTIME_STATES: list[RuntimeStateFile] = [
    {
        "runId": "smoke-loyw3v28-0a1b2c",
        "scenario": "smoke",
        "testFn": "test_smoke",
        "state": "starting",
        "current": None,
        "vars": {},
        "callStack": [],
        "lastFailure": None,
        "updatedAt": T,
    },
    {
        "runId": "smoke-loyw3v28-0a1b2c",
        "scenario": "smoke",
        "testFn": "test_smoke",
        "state": "paused-failure",
        "current": {"line": 9, "col": 4},
        "vars": {"user": '"alice"'},
        "callStack": [
            {"fn": "signin_as", "file": "unotest/e2e/_helpers/signin_as.test.js", "line": 3}
        ],
        "lastFailure": {
            "line": 9,
            "col": 4,
            "error": {"message": "boom", "name": "AssertionError"},
        },
        "updatedAt": T,
        "file": "unotest/e2e/_helpers/signin_as.test.js",
        "page": {"url": "https://example.com/", "title": "Example"},
        "breakpoints": {"unotest/e2e/smoke.test.js": ["5:2", "9:4"]},
    },
    {
        "runId": "smoke-loyw3v28-0a1b2c",
        "scenario": "smoke",
        "testFn": "test_smoke",
        "state": "failed",
        "current": None,
        "vars": {},
        "callStack": [],
        "lastFailure": {"line": 9, "col": 4, "error": {"message": "boom"}},
        "updatedAt": T,
    },
]

BREAKPOINTS: BreakpointsFile = {
    "version": 1,
    "scenarios": {"smoke": [{"line": 5, "col": 2}], "_helpers/signin_as": []},
}

RUN_METAS: list[RunMeta] = [
    {
        "runId": "smoke-loyw3v28-0a1b2c",
        "kind": "scenario",
        "ref": "smoke",
        "startedAt": T,
        "finishedAt": None,
        "durationMs": None,
        "status": "running",
        "outcome": None,
    },
    {
        "runId": "smoke-loyw3v28-0a1b2c",
        "kind": "scenario",
        "ref": "smoke",
        "startedAt": T,
        "finishedAt": T + 900,
        "durationMs": 900,
        "status": "passed",
        "outcome": "completed",
        "parentRunId": "nightly-loyw3v28-0a1b2c",
    },
]

COLLECTION_METAS: list[CollectionMeta] = [
    {
        "name": "nightly",
        "path": "unotest/e2e/_collections/nightly.yaml",
        "description": None,
        "scenarios": [],
    },
    {
        "name": "Регрессия",
        "path": "unotest/e2e/_collections/Регрессия.yaml",
        "description": "all of it",
        "scenarios": ["smoke", "auth/signin"],
    },
]

SCENARIO_META: ScenarioMeta = {
    "id": "smoke-welcome",
    "title": "Welcome page renders",
    "color": "#ff8800",
    "name": "smoke-welcome",
    "path": "unotest/e2e/smoke-welcome.test.js",
}
HELPER_META: HelperMeta = {"name": "signin_as", "path": "unotest/e2e/_helpers/signin_as.test.js"}

PROTOCOL_COMMANDS: list[DbgCommand] = [
    {"id": "1", "cmd": "step"},
    {"id": "2", "cmd": "continue"},
    {"id": "3", "cmd": "pause"},
    {"id": "4", "cmd": "set-bp", "line": 5, "col": 2},
    {"id": "5", "cmd": "clear-bp", "line": 5, "col": 2, "file": "unotest/e2e/_helpers/a.test.js"},
    {"id": "6", "cmd": "abort"},
]

CASES: list[tuple[str, object]] = [
    ("RunManifest", MANIFEST),
    ("RunManifest", CHILD_MANIFEST),
    ("RunManifest", {**MANIFEST, "kind": "collection", "ref": "nightly"}),
    *(("RunArtifact", e) for e in RUN_ARTIFACTS),
    *(("CollectionRunArtifact", e) for e in COLLECTION_ARTIFACTS),
    *(("RuntimeStateFile", s) for s in RUNTIME_STATES),
    ("BreakpointsFile", BREAKPOINTS),
    *(("RunMeta", m) for m in RUN_METAS),
    *(("CollectionMeta", m) for m in COLLECTION_METAS),
    ("ScenarioMeta", SCENARIO_META),
    ("HelperMeta", HELPER_META),
    *(("DbgCommand", c) for c in PROTOCOL_COMMANDS),
    ("LockFile", {"pid": 1, "url": "http://localhost:5173", "startedAt": "2026-05-29T10:00:00Z"}),
    (
        "EnvFile",
        {
            "version": 1,
            "vars": [
                {"key": "API_KEY", "value": "x", "secret": True, "bool": False, "commented": False}
            ],
        },
    ),
]


@pytest.mark.parametrize(
    ("type_name", "obj"),
    CASES,
    ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)],
)
def test_sample_validates_against_schema(
    protocol_validate: Validate, type_name: str, obj: object
) -> None:
    protocol_validate(type_name, obj)


def test_every_run_artifact_kind_is_sampled() -> None:
    sampled = {e["kind"] for e in RUN_ARTIFACTS}
    assert sampled == set(_kinds(RunArtifact))
    assert {e["kind"] for e in COLLECTION_ARTIFACTS} == set(_kinds(CollectionRunArtifact))


@pytest.mark.parametrize(
    ("type_name", "obj"),
    [
        ("RunManifest", {**MANIFEST, "schemaVersion": 2}),
        ("RunManifest", {k: v for k, v in MANIFEST.items() if k != "adapter"}),
        ("RunArtifact", {"t": T, "kind": "resumed", "by": "step-over"}),
        ("RunArtifact", {"t": T, "kind": "paused", "reason": "eval", "line": 1, "col": 0}),
        ("RunArtifact", {"t": T, "kind": "run:finished", "outcome": "passed"}),
        ("RuntimeStateFile", {**RUNTIME_STATES[0], "state": "paused"}),
        ("BreakpointsFile", {"version": 1, "scenarios": {"x": [{"line": 1}]}}),
    ],
)
def test_schema_helper_rejects_invalid(
    protocol_validate: Validate, type_name: str, obj: object
) -> None:
    with pytest.raises(jsonschema.ValidationError):
        protocol_validate(type_name, obj)


@pytest.mark.parametrize(
    "event",
    [
        {"t": T, "kind": "command:applied", "id": "1", "cmd": "step"},
        {"t": T, "kind": "command:rejected", "reason": "malformed line"},
        {"t": T, "kind": "command:result", "id": "7", "ok": True, "value": "3"},
        {"t": T, "kind": "step:skipped", "line": 9, "col": 4},
    ],
)
def test_additive_kinds_are_unknown_to_0_5_0(protocol_validate: Validate, event: object) -> None:
    # Our new kinds must not collide with a 0.5.0 kind: the viewer has to see
    # them as unknown (and skip them), never misread them as a known event.
    with pytest.raises(jsonschema.ValidationError):
        protocol_validate("RunArtifact", event)


# (TypedDict, schema file, definition) pairs whose keys must agree with 0.5.0.
_SHAPES: list[tuple[Any, str, str]] = [
    (RunManifest, "RunManifest", "RunManifest"),
    (RunMeta, "RunMeta", "RunMeta"),
    (RuntimeStateFile, "RuntimeStateFile", "RuntimeStateFile"),
    (BreakpointsFile, "BreakpointsFile", "BreakpointsFile"),
    (protocol.BreakpointEntry, "BreakpointsFile", "BreakpointEntry"),
    (CollectionMeta, "CollectionMeta", "CollectionMeta"),
    (ScenarioMeta, "ScenarioMeta", "ScenarioMeta"),
    (HelperMeta, "HelperMeta", "HelperMeta"),
    (protocol.LockFile, "LockFile", "LockFile"),
    (protocol.EnvFile, "EnvFile", "EnvFile"),
    (protocol.EnvVar, "EnvFile", "EnvVar"),
    *((m, "RunArtifact", m.__name__) for m in typing.get_args(RunArtifact)),
    *((m, "CollectionRunArtifact", m.__name__) for m in typing.get_args(CollectionRunArtifact)),
]


@pytest.mark.parametrize(("td", "schema", "def_name"), _SHAPES, ids=[s[2] for s in _SHAPES])
def test_typeddict_keys_match_schema(td: Any, schema: str, def_name: str) -> None:
    d = definition(schema, def_name)
    props = set(d["properties"])
    required = set(d.get("required", []))
    # Same required keys; every 0.5.0 key present; anything extra is optional.
    assert td.__required_keys__ == required
    assert props <= set(td.__annotations__)
    assert set(td.__annotations__) - props <= td.__optional_keys__


def test_literal_aliases_match_schema() -> None:
    defs = definition("RunMeta", "RunKind"), definition("RunMeta", "RunStatus")
    assert tuple(defs[0]["enum"]) == typing.get_args(protocol.RunKind)
    assert tuple(defs[1]["enum"]) == typing.get_args(protocol.RunStatus)
    assert tuple(definition("RunMeta", "RunOutcome")["enum"]) == typing.get_args(
        protocol.RunOutcome
    )
    assert tuple(definition("RuntimeStateFile", "RuntimeState")["enum"]) == typing.get_args(
        protocol.RuntimeState
    )
    dbg = definition("DbgCommand", "DbgCommand")["anyOf"]
    kinds = [
        definition("DbgCommand", ref["$ref"].rsplit("/", 1)[1])["properties"]["cmd"]["const"]
        for ref in dbg
    ]
    assert tuple(kinds) == typing.get_args(protocol.DbgCommandKind)
