"""Secrets, proven by planting them (runner.md §5, issue 7 "Reliability").

Three secret values, each read a different way: ``API_TOKEN`` from ``unotest/.env``,
``MY_PASSWORD`` from the process environment, ``SESSION_COOKIE`` from the process
environment but read for the first time by a debugger ``eval``. They travel through
every channel a scenario has: the URL (Chromium canonicalises it and escapes the
``'`` and the space its own way), ``fill`` into a password field, a page that shows
and logs them Base64- and URL-encoded and sends them in requests, ``log``, a failing
``expect`` whose message holds them, ``eval`` at a breakpoint and at the failure pause
(read, drive the page, fail on purpose), ``unotest dbg eval`` / ``unotest inspect``,
and the MCP server's tools. Then every byte under ``unotest/.runs/`` and ``.unotest/``
(binary files included), the console output and every tool result are searched for
every form: raw, Base64 (standard, URL-safe, padded or not), percent-encoded (Python,
JavaScript, the browser's own canonical forms) and any 8-character window of them, so
that a secret cut in half by a 200-character or 4 KB limit is caught too.

The one documented exception is the Playwright trace (``trace.zip``): it records what
the page showed and what was typed, and unotest cannot mask inside it. The tests prove
both halves of that sentence: with ``trace: off`` no trace is written anywhere, and
with ``trace: on-failure`` the trace exists and does hold the secret (if that ever
changes, the docs can drop the exception).

Every run is a real ``unotest`` subprocess on real Chromium against a page served on
127.0.0.1 by the test; each process tree is stopped at teardown, and no Chromium may
outlive a test.
"""

from __future__ import annotations

import base64
import contextlib
import json
import subprocess
import sys
import time
import uuid
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import anyio
import pytest
from events import answer_to, append_command, read_events, wait_for_event
from procs import outlivers, stop_tree, wait_for_run_dir
from sites import config_yaml, unotest_env, write_project

from runner.project.secrets import MASK, SecretMasker

UNOTEST = Path(sys.executable).with_name("unotest")
RUN_TIMEOUT_S = 90
EVENT_TIMEOUT_S = 45

# Chosen so that every encoding differs from the others: a space, "/", "+", "?", "'"
# and "~"; standard and URL-safe Base64 differ and both are padded.
TOKEN = "tok Zq8/+1?w~'~aa"  # unotest/.env
PASSWORD = "c0rrect horse/b@ttery+stap'le~~"  # process environment
COOKIE = "ck-9f8e7d6c5b4a3210"  # process environment, first read by an eval
GREETING = "hello-not-a-secret"  # process environment, not secret: stays visible
WINDOW = 8
MARKER_VAR = "RELIABILITY_TEST_MARKER"

PAGE = """\
<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Secrets page</title><link rel="icon" href="data:,"></head>
<body>
<h1>Secrets page</h1>
<form onsubmit="return false">
  <label>Password <input type="password" id="pw" autocomplete="off"></label>
  <label>Note <input type="text" id="note"></label>
</form>
<p id="echo"></p>
<p id="pw-b64"></p>
<p id="pw-url"></p>
<p id="note-b64"></p>
<p id="note-url"></p>
<script>
  // The query string (the token) is echoed into the page: the aria snapshot sees it.
  document.getElementById("echo").textContent =
    "query " + decodeURIComponent(location.search.slice(1));
  for (const id of ["pw", "note"]) {
    document.getElementById(id).addEventListener("input", (event) => {
      const value = event.target.value;
      // Shown encoded (aria snapshot, text_of, eval), logged (console.json) and sent
      // (network.json): a query parameter and a Basic-auth-like path segment.
      document.getElementById(id + "-b64").textContent = "b64 " + btoa(value);
      document.getElementById(id + "-url").textContent = "url " + encodeURIComponent(value);
      console.log("typed b64=" + btoa(value) + " url=" + encodeURIComponent(value));
      fetch("/api/login?" + id + "=" + encodeURIComponent(value)).catch(() => {});
      fetch("/api/basic/" + btoa("bob:" + value)).catch(() => {});
    });
  }
</script>
</body>
</html>
"""

FORMS_SCENARIO = """\
// id-secret-forms
// Every form of the secrets, through every channel
// #7c3aed
function test_secret_forms() {
  const token = env("API_TOKEN")
  const password = env("MY_PASSWORD")
  const greeting = env("GREETING")
  goto("/index.html?" + token)
  fill(css("#pw"), password)
  fill(css("#note"), token)
  log("token", token, "password", password, "greeting", greeting)
  let shown = { url: text_of(css("#pw-url")), echo: text_of(css("#echo")) }
  let b64 = text_of(css("#pw-b64"))
  log("seen", b64, shown.url)
  expect_text(css("#pw-b64"), "not " + password)
}
"""
FORMS_BREAK = "15:2"  # the failing expect_text

# A statement whose source holds the token (pasted by hand) so that the token
# straddles the 200-character cut of step:started.text: 9 of its characters before it,
# and the text stays longer than 200 once the token is masked.
_PASTED_PREFIX = 'let pasted = "'
PASTED_LINE = f'  {_PASTED_PREFIX}{"p" * (190 - len(_PASTED_PREFIX))}{TOKEN}" + "{"q" * 20}"'

CUT_SCENARIO = f"""\
// id-secret-cuts
// Secrets that straddle every cut: 4 KB variables and messages, 200-character steps
// #0f766e
function test_secret_cuts() {{
  const password = env("MY_PASSWORD")
  goto("/index.html")
  fill(css("#pw"), password)
  let pad = "xxxxxxxx"
  for (const i of range(9)) {{
    pad = pad + pad
  }}
{PASTED_LINE}
  let edge = pad.slice(0, 4080) + password + pad.slice(0, 100)
  wait(1000)
  expect_equal(pad.slice(0, 4040) + password + pad.slice(0, 100), "x")
}}
"""
CUT_WAIT_LINE = 14  # wait(1000): runtime.json is read while it runs

SNAPSHOT_SCENARIO = """\
// id-secret-snapshot
// A secret at the 4 KB cut of a paused snapshot and of an eval result
// #b45309
function test_secret_snapshot() {
  const password = env("MY_PASSWORD")
  let pad = "xxxxxxxx"
  for (const i of range(9)) {
    pad = pad + pad
  }
  let edge = pad.slice(0, 4080) + password + pad.slice(0, 100)
  log("done")
}
"""
SNAPSHOT_BREAK = "11:2"


# --- the forms a leak could take ---------------------------------------------------------


def leak_forms(value: str) -> set[str]:
    """Every encoding of ``value`` a leak could use, written independently of the masker."""
    raw = value.encode()
    forms = {
        value,
        quote(value, safe=""),
        quote_plus(value),
        quote(value, safe="!'()*"),  # encodeURIComponent
        quote(value, safe=";,/?:@&=+$#!'()*"),  # encodeURI
        value.replace(" ", "%20").replace("'", "%27"),  # Chromium's canonical query
        json.dumps(value)[1:-1],
    }
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        text = encode(raw).decode()
        forms |= {text, text.rstrip("=")}
    # The page's Basic-auth-like segment, whole (the masker hides its middle).
    forms.add(base64.b64encode(b"bob:" + raw).decode())
    return forms


def windows(forms: set[str]) -> set[str]:
    """Every ``WINDOW``-character piece of the forms: what a cut in half would leave."""
    found: set[str] = set()
    for form in forms:
        found |= {form[i : i + WINDOW] for i in range(max(1, len(form) - WINDOW + 1))}
    return found


def needles(*values: str) -> dict[str, str]:
    """piece → the secret it belongs to, for every value."""
    return {piece: value for value in values for piece in windows(leak_forms(value))}


def test_the_planted_secrets_make_every_form_distinct() -> None:
    """The search below only proves something if the forms really differ."""
    for value in (TOKEN, PASSWORD):
        raw = value.encode()
        assert base64.b64encode(raw) != base64.urlsafe_b64encode(raw)
        assert base64.b64encode(raw).endswith(b"=")
        assert len({value, quote(value, safe=""), quote_plus(value)}) == 3
        assert value.replace(" ", "%20").replace("'", "%27") not in {
            quote(value, safe=";,/?:@&=+$#!'()*"),
            quote(value, safe=""),
        }
    # The pasted token straddles the 200-character cut of step texts.
    text = PASTED_LINE.strip()
    assert text.index(TOKEN) < 199 < text.index(TOKEN) + len(TOKEN)


def test_the_browser_canonical_url_forms_are_masked() -> None:
    """Chromium escapes a query's ``'`` and space but not its ``/``, ``+`` or ``?``:
    a form no Python or JavaScript encoder writes (found by the end-to-end test)."""
    masker = SecretMasker()
    masker.add(TOKEN)
    for url in (
        "http://h/index.html?tok%20Zq8/+1?w~%27~aa",  # special-query set (http)
        "http://h/tok%20Zq8/+1%3Fw~'~aa",  # path set
        "http://h/#tok%20Zq8/+1?w~'~aa",  # fragment set
    ):
        assert masker.mask(url).endswith(MASK), url


def find_leaks(
    places: dict[str, bytes], pieces: dict[str, str], skip: Callable[[str], bool] = lambda _: False
) -> dict[str, list[str]]:
    """secret → where a piece of it was found."""
    leaks: dict[str, list[str]] = {}
    for where, data in places.items():
        if skip(where):
            continue
        for piece, value in pieces.items():
            if piece.encode() in data:
                leaks.setdefault(value, []).append(f"{where}: {piece!r}")
    return leaks


def artifact_files(project: Path) -> dict[str, bytes]:
    """Every file under ``unotest/.runs/`` and ``.unotest/``, binary ones included."""
    files: dict[str, bytes] = {}
    for top in (project / "unotest" / ".runs", project / ".unotest"):
        for path in sorted(top.rglob("*")):
            if path.is_file():
                files[str(path.relative_to(project))] = path.read_bytes()
    return files


# --- projects and processes -----------------------------------------------------------


def make_project(root: Path, base_url: str, scenarios: dict[str, str], *, trace: str) -> Path:
    timeout = {"action": 3000, "expect": 1000, "navigation": 15000, "scenario": 60000}
    return write_project(
        root,
        config_yaml(base_url, timeout=timeout, trace=trace),
        scenarios,
        # Quoted: the value holds a space and a quote.
        files={"unotest/.env": f'API_TOKEN="{TOKEN}"\n'},
    )


def run_env() -> dict[str, str]:
    return unotest_env(
        drop=("API_TOKEN", "MY_PASSWORD"),
        MY_PASSWORD=PASSWORD,
        SESSION_COOKIE=COOKIE,
        GREETING=GREETING,
        NO_COLOR="1",
    )


@dataclass
class Run:
    proc: subprocess.Popen[bytes]
    project: Path
    out: Path
    err: Path
    _run_dir: Path | None = None

    @property
    def stdout(self) -> bytes:
        return self.out.read_bytes()

    @property
    def stderr(self) -> bytes:
        return self.err.read_bytes()

    @property
    def run_dir(self) -> Path:
        """The run directory whose manifest names this process (waits for it)."""
        if self._run_dir is None:
            self._run_dir = wait_for_run_dir(
                self.project, self.proc, EVENT_TIMEOUT_S, lambda: repr(self.stderr)
            )
        return self._run_dir

    def wait(self) -> int:
        code = self.proc.wait(timeout=RUN_TIMEOUT_S)
        assert b"Traceback" not in self.stderr, self.stderr.decode(errors="replace")
        return code


@pytest.fixture
def launch(
    tmp_path: Path, chromium_path: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[..., Run]]:
    """``launch(project, *args)`` starts ``unotest ...``; no process of it survives the test.

    Every process started from the test carries a marker in its environment, Chromium
    included (it inherits the runner's), so one that outlived its runner is found.
    """
    marker = uuid.uuid4().hex
    monkeypatch.setenv(MARKER_VAR, marker)  # run_env() and cli() copy os.environ
    started: list[subprocess.Popen[bytes]] = []
    counter = iter(range(1000))

    def start(project: Path, *args: str) -> Run:
        index = next(counter)
        out, err = tmp_path / f"run{index}.out", tmp_path / f"run{index}.err"
        with open(out, "wb") as out_file, open(err, "wb") as err_file:
            proc = subprocess.Popen(
                [str(UNOTEST), *args],
                cwd=project,
                env=run_env(),
                stdin=subprocess.DEVNULL,
                stdout=out_file,
                stderr=err_file,
            )
        started.append(proc)
        return Run(proc, project, out, err)

    try:
        yield start
    finally:
        for proc in started:
            stop_tree(proc)  # a run still going (a failed test): SIGTERM, then its whole tree
        left = outlivers(MARKER_VAR, marker)
    assert not left, f"processes left behind: {left}"


@pytest.fixture
def site(static_site: str, tmp_path: Path) -> str:
    (tmp_path / "index.html").write_text(PAGE, encoding="utf-8")
    return static_site


def send(run: Run, cmd: str, **fields: Any) -> list[dict[str, Any]]:
    """Append one command to commands.jsonl; its answers (applied, then result for eval)."""
    ident = append_command(run.run_dir, cmd, **fields)
    wait_for_event(run, answer_to(ident, cmd))
    return [e for e in read_events(run.run_dir) if e.get("id") == ident]


def eval_result(run: Run, expr: str) -> dict[str, Any]:
    answers = send(run, "eval", expr=expr)
    [result] = [a for a in answers if a["kind"] == "command:result"]
    return result


def cli(project: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [str(UNOTEST), *args],
        cwd=project,
        env=run_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
        check=False,
    )


# --- 1. every form, every channel, the debugger and the CLI -----------------------------------


def test_every_form_of_every_secret_stays_out_of_files_console_and_eval(
    tmp_path: Path, site: str, launch: Callable[..., Run]
) -> None:
    project = make_project(tmp_path / "forms", site, {"secret-forms": FORMS_SCENARIO}, trace="off")
    run = launch(project, "e2e", "secret-forms", "--debug", "--break", FORMS_BREAK)
    at, _ = wait_for_event(run, lambda e: e["kind"] == "paused" and e["reason"] == "breakpoint")
    run_id = run.run_dir.name

    # Another terminal looks at the paused run while the debugger answers evals.
    lookers = [
        subprocess.Popen(
            [str(UNOTEST), *args],
            cwd=project,
            env=run_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for args in (("dbg", run_id, "eval", "shown"), ("inspect", run_id))
    ]
    outputs: dict[str, bytes] = {}
    for index, looker in enumerate(lookers):
        out, err = looker.communicate(timeout=60)
        assert looker.returncode == 0, err
        outputs[f"looker{index}.stdout"], outputs[f"looker{index}.stderr"] = out, err
    assert MASK.encode() in outputs["looker0.stdout"]  # the dbg eval answer
    assert f'"{MASK}"'.encode() in outputs["looker1.stdout"]  # inspect's vars

    answers = {
        "password": eval_result(run, "password"),
        "url shown": eval_result(run, 'text_of(css("#pw-url"))'),
        "drive the page": eval_result(run, 'fill(css("#note"), password + " again")'),
        "fail on purpose": eval_result(run, 'fail("leaked " + token)'),
        "first read in eval": eval_result(run, 'env("SESSION_COOKIE")'),
    }
    assert answers["password"]["value"] == f'"{MASK}"'
    assert answers["url shown"]["value"] == f'"url {MASK}"'
    assert answers["drive the page"]["ok"] is True
    assert answers["fail on purpose"] == {**answers["fail on purpose"], "ok": False}
    assert MASK in answers["fail on purpose"]["error"]
    assert answers["first read in eval"]["value"] == f'"{MASK}"'

    send(run, "continue")
    wait_for_event(run, lambda e: e["kind"] == "paused" and e["reason"] == "failure", after=at + 1)
    assert eval_result(run, "shown.echo")["value"] == f'"query {MASK}"'
    send(run, "continue")
    assert run.wait() == 1

    files = artifact_files(project)
    assert not [name for name in files if name.endswith("trace.zip")], "trace: off wrote a trace"
    places = {**files, **outputs, "stdout": run.stdout, "stderr": run.stderr}
    pieces = needles(TOKEN, PASSWORD, COOKIE)
    assert find_leaks(places, pieces) == {}

    # Masked, not dropped: each channel did carry the secrets.
    stdout = run.stdout.decode()
    assert f"token {MASK} password {MASK} greeting {GREETING}" in stdout
    assert f"seen b64 {MASK} url {MASK}" in stdout  # the page's encodings, logged
    [bundle] = (project / ".unotest" / "failures").iterdir()
    aria = (bundle / "page.aria.yaml").read_text()
    for shown in (
        f'textbox "Password": {MASK}',
        f'textbox "Note": {MASK} again',  # typed by the eval
        f"query {MASK}",
        f"b64 {MASK}",
        f"url {MASK}",
    ):
        assert shown in aria, aria
    error = json.loads((bundle / "error.json").read_text())
    assert error["error"].count(MASK) == 2, error["error"]  # expected and received
    assert error["url"].endswith(f"index.html?{MASK}")
    assert error["vars"]["greeting"] == f'"{GREETING}"'
    console = (bundle / "console.json").read_text()
    assert console.count(f"typed b64={MASK} url={MASK}") == 2, console  # pw, note
    network = (bundle / "network.json").read_text()
    assert f"/api/login?pw={MASK}" in network and "/api/basic/" in network
    runtime = json.loads((run.run_dir / "runtime.json").read_text())
    assert MASK in runtime["lastFailure"]["error"]["message"]


# --- 2. cuts at 200 characters and 4 KB; the trace exception ----------------------------------


def test_cut_values_leave_no_fragment_and_only_the_configured_trace_holds_secrets(
    tmp_path: Path, site: str, launch: Callable[..., Run]
) -> None:
    """A secret that straddles a cut is masked before the cut, never after.

    ``trace: on-failure`` here: the trace is written into the bundle and holds what was
    typed (the documented exception); every other file is clean.
    """
    project = make_project(
        tmp_path / "cuts", site, {"secret-cuts": CUT_SCENARIO}, trace="on-failure"
    )
    run = launch(project, "e2e", "secret-cuts")
    # runtime.json while wait(1000) runs: the 4 KB-cut variables of that step.
    deadline = time.monotonic() + EVENT_TIMEOUT_S
    runtime: dict[str, Any] = {}
    while (runtime.get("current") or {}).get("line") != CUT_WAIT_LINE:
        assert run.proc.poll() is None and time.monotonic() < deadline, runtime
        with contextlib.suppress(OSError, ValueError):
            runtime = json.loads((run.run_dir / "runtime.json").read_text())
        time.sleep(0.02)
    while_running = json.dumps(runtime).encode()
    assert run.wait() == 1

    edge = runtime["vars"]["edge"]
    assert len(edge) == 4096 and edge.endswith("…") and MASK[:4] in edge
    events = read_events(run.run_dir)
    [pasted] = [e for e in events if e["kind"] == "step:started" and "pasted" in e["text"]]
    assert len(pasted["text"]) == 200 and pasted["text"].endswith("…") and MASK in pasted["text"]
    [fail] = [e for e in events if e["kind"] == "step:fail"]
    assert len(fail["error"]) == 4096 and MASK in fail["error"]

    files = artifact_files(project)
    [trace] = [name for name in files if name.endswith("trace.zip")]
    assert trace.startswith(".unotest/failures/")
    with zipfile.ZipFile(project / trace) as archive:
        recorded = b"".join(archive.read(name) for name in archive.namelist())
    # The documented exception, proven real: the trace holds what fill() typed.
    assert PASSWORD.encode() in recorded

    places = {**files, "runtime.json while running": while_running}
    places.update(stdout=run.stdout, stderr=run.stderr)
    leaks = find_leaks(places, needles(TOKEN, PASSWORD), skip=lambda where: where == trace)
    assert leaks == {}


def test_debugger_snapshot_and_eval_mask_before_the_4kb_cut(
    tmp_path: Path, site: str, launch: Callable[..., Run]
) -> None:
    project = make_project(
        tmp_path / "snap", site, {"secret-snapshot": SNAPSHOT_SCENARIO}, trace="off"
    )
    run = launch(project, "e2e", "secret-snapshot", "--debug", "--break", SNAPSHOT_BREAK)
    _, paused = wait_for_event(run, lambda e: e["kind"] == "paused")
    result = eval_result(run, "edge")
    send(run, "continue")
    assert run.wait() == 0
    assert len(paused["snapshot"]["vars"]["edge"]) == 4096
    assert len(result["value"]) == 4096
    places = {**artifact_files(project), "stdout": run.stdout, "stderr": run.stderr}
    assert find_leaks(places, needles(PASSWORD)) == {}


# --- 3. the MCP server --------------------------------------------------------------------------


def test_mcp_tool_results_never_hold_a_secret(
    tmp_path: Path, site: str, chromium_path: str
) -> None:
    """Every tool an agent calls on a debugged, failing run: the process secret too.

    The server's own masker knows only ``unotest/.env``; ``MY_PASSWORD`` comes from the
    process environment (the client configuration's ``env``), so its masking in the
    answers rests on the run's own masking of everything it writes.
    """
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    project = make_project(tmp_path / "mcp", site, {"secret-forms": FORMS_SCENARIO}, trace="off")
    hand_made = _hand_made_failure(project)
    marker = uuid.uuid4().hex
    env = {
        MARKER_VAR: marker,
        "MY_PASSWORD": PASSWORD,
        "SESSION_COOKIE": COOKIE,
        "GREETING": GREETING,
        "PYTHONSAFEPATH": "1",
    }
    params = StdioServerParameters(
        command=str(UNOTEST), args=["mcp", "--root", str(project)], env=env
    )
    texts: dict[str, str] = {}

    async def agent() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            count = iter(range(1000))

            async def call(tool: str, **arguments: Any) -> dict[str, Any]:
                result = await session.call_tool(tool, arguments)
                text = "\n".join(c.text for c in result.content if c.type == "text")
                texts[f"{next(count)} {tool} {arguments}"] = text
                assert not result.is_error, f"{tool}: {text}"
                data: dict[str, Any] = json.loads(text)
                return data

            # A bundle whose aria snapshot holds the token in plain (a hand edit, an older
            # runner) right across get_failure's 12,000-character cut.
            old = await session.call_tool("get_failure", {"run_id": hand_made})
            texts["hand-made get_failure"] = old.content[0].text
            assert not old.is_error and MASK in json.loads(old.content[0].text)["ariaSnapshot"]

            started = await call("run_scenario", name="secret-forms", breakpoints=[FORMS_BREAK])
            run_id = started["runId"]
            try:
                paused = await call("wait_for_run", run_id=run_id, until="paused", timeout_s=60)
                assert paused["reached"], paused
                await call("inspect_runtime", run_id=run_id)
                for expr in ("password", "shown", 'env("SESSION_COOKIE")', 'fail("x" + token)'):
                    answer = await call("debug", run_id=run_id, cmd="eval", expr=expr)
                    assert MASK in json.dumps(answer), answer
                await call("debug", run_id=run_id, cmd="continue")
                failed = await call("wait_for_run", run_id=run_id, until="paused", timeout_s=60)
                assert failed["state"] == "paused-failure", failed
                await call("get_run", run_id=run_id)
                await call("debug", run_id=run_id, cmd="continue")
                done = await call("wait_for_run", run_id=run_id, until="finished", timeout_s=60)
                assert done["run"]["status"] == "failed", done
                await call("get_run", run_id=run_id)
                await call("inspect_runtime", run_id=run_id)
                await call("list_runs")
                await call("list_scenarios")
                failure = await session.call_tool("get_failure", {"run_id": run_id})
                texts["get_failure"] = "\n".join(
                    c.text for c in failure.content if c.type == "text"
                )
                assert not failure.is_error, texts["get_failure"]
                assert [c.type for c in failure.content] == ["text", "image"]
            except BaseException:
                with anyio.CancelScope(shield=True), anyio.move_on_after(10):
                    await session.call_tool("debug", {"run_id": run_id, "cmd": "abort"})
                raise

    try:
        try:
            anyio.run(_with_timeout, agent, 120)
        except BaseExceptionGroup as group:
            raise _leaf(group) from None
    finally:
        left = outlivers(MARKER_VAR, marker)
    assert not left, f"processes left behind: {left}"

    places = {name: text.encode() for name, text in texts.items()}
    assert find_leaks(places, needles(TOKEN, PASSWORD, COOKIE)) == {}
    failure = json.loads(texts["get_failure"])
    assert f'textbox "Password": {MASK}' in failure["ariaSnapshot"]
    assert any(f"pw={MASK}" in r["url"] for r in failure["failedRequests"]), failure
    run_answers = [t for name, t in texts.items() if " get_run " in name]
    assert f"token {MASK} password {MASK}" in json.loads(run_answers[-1])["output"]["stdout"]


def _hand_made_failure(project: Path) -> str:
    """A finished failed run whose bundle holds the token in plain; returns its id."""
    from runner import protocol

    run_id = protocol.make_run_id("hand-made")
    run_dir = project / "unotest" / ".runs" / run_id
    run_dir.mkdir(parents=True)
    manifest = {
        "schemaVersion": 1,
        "kind": "scenario",
        "ref": "hand-made",
        "adapter": protocol.ADAPTER_NAME,
        "startedAt": 1_700_000_000_000,
    }
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    bundle = ".unotest/failures/hand-made__2026__0"
    events = [
        {"kind": "run:started", "runId": run_id, "scenario": "hand-made", "t": 1},
        {"kind": "failure-bundle:written", "bundlePath": bundle, "t": 2},
        {"kind": "run:finished", "outcome": "failed", "t": 3},
    ]
    (run_dir / "steps.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    (run_dir / "heartbeat").touch()
    (run_dir / "commands.jsonl").touch()
    (project / bundle).mkdir(parents=True)
    (project / bundle / "error.json").write_text(json.dumps({"error": "x", "errorName": "E"}))
    aria = (
        "- paragraph: " + "y" * (11_950 - 13) + TOKEN + "z" * 200 + "\n"
    )  # 10 chars before the cut
    (project / bundle / "page.aria.yaml").write_text(aria)
    return run_id


async def _with_timeout(agent: Callable[[], Any], seconds: float) -> None:
    with anyio.fail_after(seconds):
        await agent()


def _leaf(error: BaseException) -> BaseException:
    """The failing assertion inside the client's task groups, not their wrapper."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error
