"""``unotest watch`` as a user and a tool meet it: a real daemon, real saves, real Chromium.

One daemon (``python -m unotest watch --json`` with short debounce windows) serves the
tests of this module in turn, in a project of real files whose pages a local server
serves; each test saves files and reads the events from a real TCP client on the
port the discovery file names (and, for one, from ``--json`` stdout too). The tests
that kill or stop a daemon start their own.
"""

from __future__ import annotations

import contextlib
import json
import os
import pty
import queue
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from net import serve_directory
from sites import collection_yaml, config_yaml, scenario_source, unotest_env, write_project

from runner.browser.launch import playwright_browser_path, resolve_executable
from runner.errors import BrowserNotFound
from runner.watch.discovery import discovery_path, read_discovery

Event = dict[str, Any]
H = "unotest/e2e/_helpers"
E = "unotest/e2e"
WAIT_S = 60.0

PLAIN = '  goto("/index.html")\n  expect_visible("Welcome")\n'
SLOW = '  goto("/index.html")\n  wait({ms})\n'
HTML = "<!doctype html><title>Shop</title><h1>Welcome</h1><button>Sign in</button>\n"


def chromium() -> str:
    try:
        resolved = resolve_executable("chromium", None, headless=True)
    except BrowserNotFound as exc:
        pytest.fail(f"this test needs Chromium: {exc} (run 'bash .ci/setup')", pytrace=False)
    path = resolved or playwright_browser_path("chromium", headless=True)
    assert path, "Playwright's own Chromium was reported but its path is unknown"
    return path


def make_project(root: Path, url: str) -> Path:
    return write_project(
        root,
        config_yaml(url, chromium=chromium(), timeout={"scenario": 60000}),
        {
            "login": scenario_source("login", '  sign_in("ana")\n'),
            "shop/cart": scenario_source("cart", "  open_cart()\n"),
            "plain": scenario_source("plain", PLAIN),
            "slow": scenario_source("slow", SLOW.format(ms=1)),
        },
        helpers={
            "auth": 'function sign_in(user) {\n  goto("/index.html")\n  log(user)\n}\n',
            "cart": 'function open_cart() {\n  sign_in("bob")\n  expect_visible("Welcome")\n}\n',
            "unused": "function nobody_calls_me() {\n  log(1)\n}\n",
        },
        collections={"smoke": collection_yaml(["login", "plain"])},
    )


def _lines_into(stream: Any, into: queue.Queue[Event | None]) -> None:
    with contextlib.suppress(OSError, ValueError):  # the test closed its end
        for line in stream:
            with contextlib.suppress(ValueError):
                into.put(json.loads(line))
    into.put(None)


class Client:
    """A real TCP client of the daemon's socket: every line, parsed, in a queue."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT_S)
        self.sock.settimeout(None)  # the queue's get has the timeouts
        self.events: queue.Queue[Event | None] = queue.Queue()
        self.reader = self.sock.makefile("rb")
        threading.Thread(target=_lines_into, args=(self.reader, self.events), daemon=True).start()

    def next(self, timeout: float = WAIT_S) -> Event:
        event = self.events.get(timeout=timeout)
        assert event is not None, "the daemon closed the connection"
        return event

    def until(self, check: Callable[[Event], bool], timeout: float = WAIT_S) -> list[Event]:
        """Every event up to and including the first that ``check`` accepts."""
        seen: list[Event] = []
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            assert left > 0, f"no such event; saw {[e['type'] for e in seen]}"
            event = self.next(left)
            seen.append(event)
            if check(event):
                return seen

    def batch(self, timeout: float = WAIT_S) -> tuple[Event, list[Event], Event]:
        """The next batch: its ``batch.started``, what came between, its ``batch.finished``."""
        started = self.until(lambda e: e["type"] == "batch.started", timeout)[-1]
        return started, *self.rest_of(started, timeout)

    def rest_of(self, started: Event, timeout: float = WAIT_S) -> tuple[list[Event], Event]:
        """What follows ``batch.started`` up to its ``batch.finished``, and that one."""
        rest = self.until(
            lambda e: e["type"] == "batch.finished" and e["batchId"] == started["batchId"],
            timeout,
        )
        return rest[:-1], rest[-1]

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


class Daemon:
    def __init__(self, root: Path, *args: str, terminal: bool = False) -> None:
        """``terminal``: stdin is a pseudo-terminal (``press`` types keys on it)."""
        self.root = root
        self.keyboard: int | None = None
        stdin: int | None = subprocess.DEVNULL
        if terminal:
            self.keyboard, stdin = pty.openpty()
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "unotest",
                "watch",
                "--json",
                "--idle-ms",
                "80",
                "--max-ms",
                "1000",
                *args,
            ],
            cwd=root,
            env=unotest_env(),
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        if terminal:
            assert isinstance(stdin, int)
            os.close(stdin)
        self.stdout: queue.Queue[Event | None] = queue.Queue()
        threading.Thread(
            target=_lines_into, args=(self.proc.stdout, self.stdout), daemon=True
        ).start()
        first = self.stdout.get(timeout=WAIT_S)
        if first is None:
            assert self.proc.stderr is not None
            pytest.fail(f"the daemon did not start: {self.proc.stderr.read().decode()}")
        self.started = first
        assert first["type"] == "daemon.started"
        self.port = int(first["server"]["port"])

    def press(self, key: str) -> None:
        assert self.keyboard is not None
        os.write(self.keyboard, key.encode())

    def save(self, rel: str, text: str | None = None) -> None:
        path = self.root / rel
        content = text if text is not None else path.read_text(encoding="utf-8") + "\n"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")

    def stop(self, sig: int = signal.SIGINT) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=WAIT_S)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            if self.keyboard is not None:
                os.close(self.keyboard)
                self.keyboard = None

    def workers(self) -> list[int]:
        return [p for p in children(self.proc.pid) if b"runner.workers.main" in cmdline(p)]


def children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        with contextlib.suppress(OSError):
            stat = Path(f"/proc/{entry}/stat").read_text()
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def descendants(pid: int) -> list[int]:
    out = []
    for child in children(pid):
        out += [child, *descendants(child)]
    return out


def cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def browser_of(worker: int) -> int:
    """The main browser process under a worker (not a renderer or a helper)."""
    for pid in descendants(worker):
        line = cmdline(pid)
        if b"--remote-debugging-pipe" in line and b"--type=" not in line:
            return pid
    raise AssertionError(f"worker {worker} has no browser")


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    base = tmp_path_factory.mktemp("watch")
    site = base / "site"
    site.mkdir()
    (site / "index.html").write_text(HTML, encoding="utf-8")
    with serve_directory(site) as url:
        daemon = Daemon(make_project(base / "proj", url))
        try:
            yield daemon
        finally:
            daemon.stop()


@pytest.fixture
def client(shared: Daemon) -> Iterator[Client]:
    found = read_discovery(shared.root)
    assert found.status == "running" and found.info is not None
    assert found.info["port"] == shared.port
    connection = Client(shared.port)
    first = connection.next()
    assert first["type"] == "snapshot"
    yield connection
    connection.close()


def reasons_of(started: Event) -> dict[str, list[Event]]:
    (entry,) = started["plan"]
    return dict(zip(entry["scenarios"], entry["reasons"].values(), strict=True))


def test_a_connection_starts_with_the_snapshot(shared: Daemon) -> None:
    connection = Client(shared.port)
    try:
        first = connection.next()
        assert first["type"] == "snapshot"
        state = first["state"]
        assert state["daemon"]["pid"] == shared.proc.pid
        assert state["daemon"]["protocolVersion"] == 1
        assert state["daemon"]["server"] == {"host": "127.0.0.1", "port": shared.port}
        assert set(state) >= {"daemon", "running", "lastBatch", "files", "totals"}
        assert isinstance(first["seq"], int) and isinstance(first["timestamp"], int)
    finally:
        connection.close()


def test_a_saved_helper_reruns_its_scenarios_with_their_chains(
    shared: Daemon, client: Client, protocol_validate: Callable[[str, object], None]
) -> None:
    shared.save(f"{H}/auth.js")
    started, between, finished = client.batch()
    root = shared.root.as_posix()
    assert started["trigger"] == "idle"
    assert started["changedFiles"] == [f"{root}/{H}/auth.js"]
    reasons = reasons_of(started)
    assert sorted(reasons) == ["login", "shop/cart"]
    assert reasons["login"][0]["chain"] == [f"{root}/{H}/auth.js", f"{root}/{E}/login.test.js"]
    cart = reasons["shop/cart"][0]
    assert cart["kind"] == "importer" and cart["depth"] == 2
    assert cart["chain"] == [
        f"{root}/{H}/auth.js",
        f"{root}/{H}/cart.js",
        f"{root}/{E}/shop/cart.test.js",
    ]
    runs = [e for e in between if e["type"] == "run.finished"]
    assert sorted(r["result"]["scenario"] for r in runs) == ["login", "shop/cart"]
    assert {r["result"]["status"] for r in runs} == {"passed"}
    assert finished["result"]["status"] == "passed"
    assert [e for e in between if e["type"] == "run.started"]
    seqs = [started["seq"], *(e["seq"] for e in between), finished["seq"]]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    for run in runs:
        result = run["result"]
        assert result["reasons"] == reasons[result["scenario"]]
        assert result["command"] == f"unotest e2e {result['scenario']}"
        run_dir = shared.root / result["runDir"]
        protocol_validate("RunManifest", json.loads((run_dir / "manifest.json").read_text()))
        assert '"run:finished"' in (run_dir / "steps.jsonl").read_text()


def test_stdout_json_carries_the_same_events_as_the_socket(shared: Daemon, client: Client) -> None:
    while not shared.stdout.empty():
        shared.stdout.get_nowait()
    shared.save(f"{E}/plain.test.js")
    started, between, finished = client.batch()
    on_socket = [started, *between, finished]
    on_stdout: list[Event] = []
    while not on_stdout or on_stdout[-1]["seq"] < finished["seq"]:
        event = shared.stdout.get(timeout=WAIT_S)
        assert event is not None
        if event["seq"] >= started["seq"]:
            on_stdout.append(event)
    assert on_stdout == on_socket
    assert reasons_of(started) == {
        "plain": [{"kind": "changed", "changedFile": f"{shared.root.as_posix()}/{E}/plain.test.js"}]
    }


def test_unmatched_saves_say_why(shared: Daemon, client: Client) -> None:
    shared.save(f"{H}/unused.js")
    shared.save(f"{E}/_collections/smoke.yaml")
    why: dict[str, str] = {}
    while len(why) < 2:  # one batch, or two if the saves fell into two windows
        started, _, finished = client.batch()
        assert started["plan"] == []
        assert finished["result"]["status"] == "skipped"
        why |= {m["file"].rsplit("/", 1)[-1]: m["reason"] for m in started["unmatched"]}
    assert why["unused.js"] == "a helper that no scenario calls"
    assert "collection file" in why["smoke.yaml"]


def test_a_config_change_selects_every_scenario(shared: Daemon, client: Client) -> None:
    shared.save("unotest.config.yaml")
    started, _, finished = client.batch()
    reasons = reasons_of(started)
    assert sorted(reasons) == ["login", "plain", "shop/cart", "slow"]
    assert {r[0]["kind"] for r in reasons.values()} == {"config"}
    assert finished["result"]["status"] == "passed"


def test_a_saved_env_file_selects_every_scenario(shared: Daemon, client: Client) -> None:
    """env() reads unotest/.env at each run: a save there changes what scenarios see,
    as a config save does (it went unnoticed until an unrelated save)."""
    shared.save("unotest/.env", "TITLE=Shop\n")
    started, _, finished = client.batch()
    reasons = reasons_of(started)
    assert sorted(reasons) == ["login", "plain", "shop/cart", "slow"]
    assert {r[0]["message"] for r in reasons.values()} == {
        "unotest/.env changed: every scenario is selected"
    }
    assert finished["result"]["status"] == "passed"


def test_a_helper_that_does_not_parse_is_reported_and_its_scenarios_found_by_name(
    shared: Daemon, client: Client
) -> None:
    auth = shared.root / H / "auth.js"
    original = auth.read_text()
    shared.save(f"{H}/auth.js", "function sign_in(user) {\n  log(user\n}\n")
    try:
        seen = client.until(lambda e: e["type"] == "batch.started")
        started = seen[-1]
        between, finished = client.rest_of(started)
    finally:
        auth.write_text(original)
    errors = [e for e in seen if e["type"] == "error"]
    assert errors and "does not parse" in errors[0]["message"]
    assert "sign_in" in errors[0]["degradedTo"]
    assert sorted(reasons_of(started)) == ["login", "shop/cart"]
    runs = [e["result"] for e in between if e["type"] == "run.finished"]
    assert {r["status"] for r in runs} == {"errored"}
    assert all("auth.js" in r["cases"][0]["failureMessage"] for r in runs)
    assert finished["result"]["status"] == "errored"
    started_again, _, finished_again = client.batch()  # the restored helper
    assert sorted(reasons_of(started_again)) == ["login", "shop/cart"]
    assert finished_again["result"]["status"] == "passed"


def test_a_newer_batch_cancels_the_running_one_and_keeps_the_browser(
    shared: Daemon, client: Client
) -> None:
    (worker,) = shared.workers()
    browser = browser_of(worker)
    shared.save(f"{E}/slow.test.js", scenario_source("slow", SLOW.format(ms=30000)))
    first = client.until(lambda e: e["type"] == "batch.started")[-1]
    client.until(lambda e: e["type"] == "run.started" and e["scenario"] == "slow")
    shared.save(f"{E}/plain.test.js")
    events = client.until(
        lambda e: e["type"] == "batch.finished" and e["batchId"] == first["batchId"]
    )
    (cancelled,) = [e["result"] for e in events if e["type"] == "run.finished"]
    assert cancelled["scenario"] == "slow" and cancelled["status"] == "cancelled"
    assert events[-1]["result"]["status"] == "cancelled"
    steps = (shared.root / cancelled["runDir"] / "steps.jsonl").read_text()
    assert '"outcome": "aborted"' in steps or '"outcome":"aborted"' in steps
    started, _, finished = client.batch()
    assert list(reasons_of(started)) == ["plain"]
    assert finished["result"]["status"] == "passed"
    assert shared.workers() == [worker] and browser_of(worker) == browser and alive(browser)
    shared.save(f"{E}/slow.test.js", scenario_source("slow", SLOW.format(ms=1)))
    client.batch()


@needs_proc
def test_a_killed_browser_is_relaunched_and_says_so(shared: Daemon, client: Client) -> None:
    (worker,) = shared.workers()
    browser = browser_of(worker)
    os.kill(browser, signal.SIGKILL)
    error = client.until(lambda e: e["type"] == "error")[-1]
    assert error["scope"] == "worker:0"
    assert "browser" in error["message"] and "new browser" in error["degradedTo"]
    assert browser_of(worker) != browser
    shared.save(f"{E}/plain.test.js")
    _, _, finished = client.batch()
    assert finished["result"]["status"] == "passed"


def test_a_second_daemon_says_so_and_exits_0_unless_asked_for_other_options(
    shared: Daemon,
) -> None:
    def watch(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "unotest", "watch", *args],
            cwd=shared.root,
            env=unotest_env(),
            capture_output=True,
            text=True,
            timeout=WAIT_S,
        )

    done = watch()
    assert done.returncode == 0
    assert f"already runs for this project (pid {shared.proc.pid}" in done.stderr
    # Asked for another scope: not given silently, and a script sees it was not.
    other = watch("--collection", "nightly", "--workers", "2")
    assert other.returncode == 1, other.stderr
    assert other.stderr.strip().endswith(
        "; it keeps the options it started with: to watch with --collection nightly "
        f"--workers 2, stop it first (Ctrl-C where it runs, or kill {shared.proc.pid})"
    ), other.stderr
    port = json.loads(watch("--status", "--json").stdout)["info"]["port"]
    for args, code in [(["--port", str(port)], 0), (["--workers", "0"], 2)]:
        again = watch(*args)
        # its own port is what was asked; a wrong number is a usage error, daemon or not
        assert again.returncode == code, (args, again.stderr)
    assert "--workers must be 1 or more, not 0" in again.stderr
    status = watch("--status", "--json")
    assert status.returncode == 0
    assert json.loads(status.stdout)["status"] == "running"


@needs_proc
def test_kill_9_leaves_a_stale_file_the_next_start_overwrites_keys_and_sigint_stop(
    tmp_path: Path,
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text(HTML, encoding="utf-8")
    with serve_directory(site) as url:
        root = make_project(tmp_path / "proj", url)
        first = Daemon(root)
        (worker,) = first.workers()
        first.stop(signal.SIGKILL)
        found = read_discovery(root)
        assert found.status == "stale" and found.info is not None
        assert found.info["pid"] == first.proc.pid
        status = subprocess.run(
            [sys.executable, "-m", "unotest", "watch", "--status"],
            cwd=root,
            env=unotest_env(),
            capture_output=True,
            text=True,
            timeout=WAIT_S,
        )
        assert status.returncode == 1 and status.stdout.startswith("stale")
        _wait_gone([worker, *descendants(worker)])  # a worker outlives no daemon
        second = Daemon(root, "--collection", "smoke", terminal=True)
        try:
            info = json.loads(discovery_path(root).read_text())
            assert info["pid"] == second.proc.pid and info["port"] == second.port
            (worker,) = second.workers()
            processes = [worker, *descendants(worker)]
            assert any(b"--remote-debugging-pipe" in cmdline(p) for p in processes)
            _keys_run_batches(second)
        finally:
            code = second.stop(signal.SIGINT)
        assert code == 0
        assert not discovery_path(root).exists()
        assert [p for p in processes if alive(p)] == []
        events = []
        while (event := second.stdout.get(timeout=WAIT_S)) is not None:
            events.append(event)
        assert events[-1]["type"] == "daemon.stopped"


def _keys_run_batches(daemon: Daemon) -> None:
    """On a terminal: ``a`` runs the collection's scenarios, ``f`` the failed ones (none
    here: it says so), Enter the last batch that ran something, again."""
    client = Client(daemon.port)
    try:
        assert client.next()["type"] == "snapshot"
        daemon.press("a")
        started, _, finished = client.batch()
        assert started["trigger"] == "manual" and started["changedFiles"] == []
        reasons = reasons_of(started)
        assert sorted(reasons) == ["login", "plain"]  # the collection's, not the project's
        assert {r[0]["kind"] for r in reasons.values()} == {"manual"}
        assert finished["result"]["status"] == "passed"
        daemon.press("f")
        # Nothing failed: said so, not an empty batch that reads as a skip.
        said = client.until(lambda e: e["type"] in ("error", "batch.started"))[-1]
        assert (said["type"], said["scope"]) == ("error", "keys"), said
        assert said["message"] == "nothing to run: no scenario failed in this daemon's runs"
        daemon.press("\n")
        started, _, _ = client.batch()
        assert sorted(reasons_of(started)) == ["login", "plain"]
    finally:
        client.close()


def _wait_gone(pids: list[int]) -> None:
    deadline = time.monotonic() + WAIT_S
    while [p for p in pids if alive(p)]:
        assert time.monotonic() < deadline, f"still running: {[p for p in pids if alive(p)]}"
        time.sleep(0.1)


def test_a_watched_collection_that_stops_loading_keeps_its_last_list(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """A slip in the watched collection's YAML said nothing, and then every save of a
    scenario it lists was "not in the collection" until the file was fixed."""
    base = tmp_path_factory.mktemp("watch-collection")
    site = base / "site"
    site.mkdir()
    (site / "index.html").write_text(HTML, encoding="utf-8")
    with serve_directory(site) as url:
        daemon = Daemon(make_project(base / "proj", url), "--collection", "smoke")
        try:
            client = Client(daemon.port)
            assert client.next()["type"] == "snapshot"
            daemon.save(f"{E}/_collections/smoke.yaml", "scenarios: [login, plain\n")
            seen = client.until(lambda e: e["type"] == "batch.finished")
            errors = [e for e in seen if e["type"] == "error"]
            assert [e["scope"] for e in errors] == [f"collection:{E}/_collections/smoke.yaml"]
            assert errors[0]["detail"].startswith(f"{E}/_collections/smoke.yaml:2:0: invalid YAML")
            assert errors[0]["degradedTo"] == "the last list of scenarios that loaded is kept"
            daemon.save(f"{E}/login.test.js")
            started, _, finished = client.batch()
            assert sorted(reasons_of(started)) == ["login"]  # still in the collection
            assert finished["result"]["status"] == "passed"
            client.close()
        finally:
            daemon.stop()


def test_a_watched_collection_s_context_keys_reach_its_scenarios(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """``--collection de``: its scenarios run with its ``locale`` over the config's, as
    in ``unotest collection de``."""
    base = tmp_path_factory.mktemp("watch-collection-use")
    site = base / "site"
    site.mkdir()
    (site / "index.html").write_text(HTML, encoding="utf-8")
    with serve_directory(site) as url:
        root = make_project(base / "proj", url)
        lang = '  goto("/index.html")\n  expect_equal(evaluate("navigator.language"), "de-DE")\n'
        (root / E / "lang.test.js").write_text(scenario_source("lang", lang), encoding="utf-8")
        (root / E / "_collections" / "de.yaml").write_text(
            "locale: de-DE\nscenarios:\n  - lang\n", encoding="utf-8"
        )
        daemon = Daemon(root, "--collection", "de")
        try:
            client = Client(daemon.port)
            assert client.next()["type"] == "snapshot"
            daemon.save(f"{E}/lang.test.js")
            started, _, finished = client.batch()
            assert sorted(reasons_of(started)) == ["lang"]
            assert finished["result"]["status"] == "passed", finished
            client.close()
        finally:
            daemon.stop()


def test_a_folder_moved_in_renamed_and_moved_out_is_seen(
    shared: Daemon, client: Client, tmp_path: Path
) -> None:
    """One event names the folder alone: it was dropped (not a .js file), so a folder
    moved or renamed into unotest/e2e/ ran nothing and 'a' left its scenarios out."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "moved.test.js").write_text(scenario_source("moved", PLAIN), encoding="utf-8")
    e2e = shared.root / E
    shutil.move(str(outside), str(e2e / "moved_in"))
    started, _, finished = client.batch()
    assert list(reasons_of(started)) == ["moved_in/moved"]
    assert finished["result"]["status"] == "passed"
    (e2e / "moved_in").rename(e2e / "renamed")
    started, _, finished = client.batch()
    assert list(reasons_of(started)) == ["renamed/moved"]
    assert finished["result"]["status"] == "passed"
    shutil.move(str(e2e / "renamed"), str(tmp_path / "gone"))
    gone = f"{shared.root.as_posix()}/{E}/renamed/moved.test.js"
    client.until(lambda e: e["type"] == "watch.change" and e["path"] == gone)


def test_a_port_asked_for_that_is_taken_is_one_sentence_and_exit_2(tmp_path: Path) -> None:
    """Without its socket the viewer finds no daemon and a second `unotest watch` would
    start another: a --port that cannot be had stops it before any browser starts."""
    root = write_project(
        tmp_path / "proj",
        config_yaml(None),
        {"alone": scenario_source("alone", '  log("x")\n')},
    )
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "unotest", "watch", "--port", str(port)],
            cwd=root,
            env=unotest_env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=WAIT_S,
        )
    assert done.returncode == 2, done
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(
        f"unotest: --port {port}: cannot listen on 127.0.0.1:{port} ("
    ), done.stderr
    assert "choose another port, or leave --port out" in lines[0]
    assert not discovery_path(root).exists()


def test_a_second_watch_while_the_first_still_starts_says_so_and_exits_0(
    tmp_path: Path,
) -> None:
    """Two `unotest watch` a second apart: the first holds the project's claim from
    before its start-up (its discovery file comes only once its socket listens), so the
    second starts no daemon of its own. Here a process holding the claim stands for the
    first daemon, caught between the two."""
    root = write_project(
        tmp_path / "proj",
        config_yaml(None),
        {"alone": scenario_source("alone", '  log("x")\n')},
    )
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from pathlib import Path\n"
            "from runner.watch.discovery import claim_project\n"
            "assert claim_project(Path(sys.argv[1])) is not None\n"
            "print('held', flush=True)\n"
            "time.sleep(60)\n",
            str(root),
        ],
        stdout=subprocess.PIPE,
        text=True,
        env=unotest_env(),
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        done = subprocess.run(
            [sys.executable, "-m", "unotest", "watch"],
            cwd=root,
            env=unotest_env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=WAIT_S,
        )
        assert done.returncode == 0, done
        assert f"a watch daemon is starting for this project (pid {holder.pid})" in done.stderr
        assert not discovery_path(root).exists()
    finally:
        holder.kill()
        holder.wait()
    # The claim goes with its process (kill -9 included): the next daemon may start.
    from runner.watch.discovery import claim_project

    fd = claim_project(root)
    assert fd is not None
    os.close(fd)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_a_web_server_that_exited_is_started_again_before_the_next_batch(
    tmp_path: Path,
) -> None:
    """Every run reached a dead site, with nothing saying why: the daemon now notices the
    server it started has exited, says so, and starts it again before the batch."""
    port = _free_port()
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text(HTML)
    server = (
        "webServer:\n"
        f"  command: {sys.executable} -m http.server {port} --bind 127.0.0.1 --directory {site}\n"
        f"  url: http://127.0.0.1:{port}/index.html\n"
    )
    root = write_project(
        tmp_path / "proj",
        config_yaml(f"http://127.0.0.1:{port}", chromium=chromium(), extra=server),
        {"plain": scenario_source("plain", PLAIN)},
    )
    daemon = Daemon(root)
    try:
        client = Client(daemon.port)
        client.until(lambda e: e["type"] == "snapshot")
        served = [p for p in descendants(daemon.proc.pid) if b"http.server" in cmdline(p)]
        assert served, "the daemon started no webServer"
        for pid in served:
            os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + WAIT_S
        while any(
            Path(f"/proc/{pid}").exists() and b"http.server" in cmdline(pid) for pid in served
        ):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        daemon.save(f"{E}/plain.test.js")
        started = client.until(lambda e: e["type"] == "batch.started")
        said = [e for e in started if e["type"] == "error" and e["scope"] == "webServer"]
        assert said and said[0]["message"].startswith("the webServer exited (code "), started
        assert said[0]["degradedTo"] == "started again"
        _, finished = client.rest_of(started[-1])
        assert finished["result"]["status"] == "passed", finished
        client.close()
    finally:
        assert daemon.stop() == 0
