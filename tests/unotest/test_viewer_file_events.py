"""unotest/viewer/file_events.py on real files: what changes become which WsMessage, and what
is ignored (heartbeats, bundles, editors' swap files, anything outside unotest/)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from sites import write_project

from runner.files import atomic_write
from runner.processes import process_start_time
from runner.project.secrets import MASK
from runner.ws_messages import WsMessage
from unotest.viewer import file_events
from unotest.viewer.file_events import FileEventBatch, FileEvents, Target, classify
from unotest.viewer.hub import Closed, Hub, Subscription

WAIT_S = 10


def test_classify_names_what_counts_and_ignores_the_rest(tmp_path: Path) -> None:
    u = tmp_path / "unotest"
    (u / "e2e").mkdir(parents=True)
    (u / "e2e" / "notes.md").write_text("notes\n")  # there: a file (gone, maybe a folder)
    cases = {
        "e2e/smoke.test.js": Target("scenarios"),
        "e2e/auth/signin.test.js": Target("scenarios"),
        "e2e/auth": Target("scenarios"),
        "e2e/_helpers/login.js": Target("helpers"),
        "e2e/shop/_hooks.js": Target("helpers"),  # a folder's hooks, listed with them
        "e2e/_hooks.js": Target("helpers"),
        "e2e/_collections/nightly.yaml": Target("collections"),
        ".debugger.json": Target("bp"),
        ".runs/r1": Target("run", "r1"),
        ".runs/r1/steps.jsonl": Target("run", "r1"),
        ".runs/r1/manifest.json": Target("run", "r1"),
        ".runs/r1/heartbeat": None,
        ".runs/r1/bundle/screenshot.png": None,
        ".debugger.json.tmp1234": None,
        "e2e/.smoke.test.js.swp": None,
        "e2e/smoke.test.js~": None,
        "e2e/notes.md": None,
        "e2e/node_modules/x/index.js": None,
        ".env": Target("env"),
        "..env.1234.5678.tmp": None,  # a save's temporary file
        ".runs/r1/stdout.log": Target("run", "r1"),
        ".runs/r1/stderr.log": Target("run", "r1"),
    }
    assert {rel: classify(u, str(u / rel)) for rel in cases} == cases
    assert classify(u, str(tmp_path / ".git" / "HEAD")) is None


async def _until(sub: Subscription, wanted: Callable[[WsMessage], bool]) -> list[WsMessage]:
    """Messages up to and including the first ``wanted`` one."""
    seen: list[WsMessage] = []

    async def collect() -> None:
        while True:
            message = await sub.next()
            assert not isinstance(message, Closed), message
            seen.append(message)
            if wanted(message):
                return

    try:
        await asyncio.wait_for(collect(), WAIT_S)
    except TimeoutError:
        raise AssertionError(f"never came; got {seen}") from None
    return seen


def kind_is(kind: str, **fields: object) -> Callable[[WsMessage], bool]:
    def check(message: WsMessage) -> bool:
        values = dict(message)
        return values["kind"] == kind and all(values.get(k) == v for k, v in fields.items())

    return check


def _with_watcher(root: Path, body: Callable[[Subscription], Awaitable[None]]) -> None:
    async def scenario() -> None:
        hub = Hub()
        sub = hub.subscribe()
        watcher = FileEvents(root, hub)
        watcher.start()
        try:
            await asyncio.wait_for(watcher.ready.wait(), WAIT_S)
            await body(sub)
        finally:
            await watcher.stop()

    asyncio.run(scenario())


def test_files_saved_become_their_messages(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "p", None, {"smoke": "x\n"}, helpers={"login": "function login() {}\n"}
    )
    e2e = root / "unotest" / "e2e"

    async def body(sub: Subscription) -> None:
        (e2e / "_helpers" / "login.js").write_text("function login() { }\n")
        assert (await _until(sub, kind_is("fs:helpers-changed")))[-1] == {
            "kind": "fs:helpers-changed"
        }
        atomic_write(root / "unotest" / ".debugger.json", b'{"breakpoints": []}\n')
        await _until(sub, kind_is("fs:bp-changed"))
        (e2e / "smoke.test.js").write_text("y\n")
        await _until(sub, kind_is("fs:scenarios-changed"))
        (e2e / "_collections").mkdir()
        (e2e / "_collections" / "all.yaml").write_text("scenarios: [smoke]\n")
        seen = await _until(sub, kind_is("fs:collections-changed"))
        assert "fs:helpers-changed" not in [m["kind"] for m in seen]
        env = root / "unotest" / ".env"
        atomic_write(env, b"GREETING=hello\n")  # created
        await _until(sub, kind_is("fs:env-changed"))
        env.unlink()  # removed
        await _until(sub, kind_is("fs:env-changed"))

    _with_watcher(root, body)


def _manifest(run_dir: Path, pid: int) -> bytes:
    manifest = {
        "schemaVersion": 1,
        "kind": "scenario",
        "ref": "smoke",
        "adapter": "@unotest/web",
        "startedAt": 1,
        "pid": pid,
    }
    start = process_start_time(pid)
    if start is not None:
        manifest["pidStartTime"] = start
    return json.dumps(manifest).encode()


def _append(path: Path, data: bytes) -> None:
    with open(path, "ab") as handle:
        handle.write(data)


def test_a_new_run_its_lines_and_its_end(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", None, {"smoke": "x\n"})
    runs = root / "unotest" / ".runs"
    # a runner that lives until we let it go
    runner = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE
    )

    async def body(sub: Subscription) -> None:
        run_dir = runs / "r1"
        run_dir.mkdir(parents=True)
        atomic_write(run_dir / "manifest.json", _manifest(run_dir, runner.pid))
        steps = run_dir / "steps.jsonl"
        _append(steps, b'{"kind":"run:started","runId":"r1","scenario":"smoke","t":1}\n')
        seen = await _until(sub, kind_is("fs:run-step"))
        assert seen[0] == {"kind": "fs:run-started", "runId": "r1", "scenario": "smoke"}
        _append(steps, b'{"kind":"step:started","line":5,"col":2,"text":"go')
        _append(steps, b'to()","t":2}\n')  # one line in two writes: one message
        seen = await _until(sub, kind_is("fs:run-step"))
        assert seen == [
            {
                "kind": "fs:run-step",
                "runId": "r1",
                "event": {"kind": "step:started", "line": 5, "col": 2, "text": "goto()", "t": 2},
                "lineIndex": 1,
            }
        ]
        (run_dir / "heartbeat").touch()
        _append(steps, b'{"kind":"run:finished","outcome":"completed","t":3}\n')
        seen = await _until(sub, kind_is("fs:run-finished"))
        assert [m["kind"] for m in seen] == ["fs:run-step", "fs:run-finished"]
        assert seen[-1] == {"kind": "fs:run-finished", "runId": "r1", "outcome": "completed"}

        # a second run whose runner dies without run:finished
        run_dir = runs / "r2"
        run_dir.mkdir()
        atomic_write(run_dir / "manifest.json", _manifest(run_dir, runner.pid))
        await _until(sub, kind_is("fs:run-started", runId="r2"))
        runner.communicate(b"", timeout=WAIT_S)
        seen = await _until(sub, kind_is("fs:run-finished", runId="r2"))
        assert seen[-1] == {"kind": "fs:run-finished", "runId": "r2", "outcome": "interrupted"}

    try:
        _with_watcher(root, body)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
    assert os.path.isdir(runs)


def test_a_file_event_and_the_ticker_at_once_publish_a_run_s_lines_in_order(
    tmp_path: Path,
) -> None:
    """Both drain the same run and each yields the loop every few hundred messages:
    the lines must still reach the hub in the file's order, or a page that takes each
    line's number as its next one drops the earlier lines that come after it."""
    root = write_project(tmp_path / "p", None, {"smoke": "x\n"})
    run_dir = root / "unotest" / ".runs" / "r1"
    run_dir.mkdir(parents=True)
    atomic_write(run_dir / "manifest.json", _manifest(run_dir, os.getpid()))
    line = b'{"kind":"step:ok","line":3,"col":0,"t":5,"pad":"' + b"x" * 60 + b'"}\n'
    _append(run_dir / "steps.jsonl", line * 3000)

    async def scenario() -> list[int]:
        hub = Hub(queue_size=10_000)
        sub = hub.subscribe()
        watcher = FileEvents(root, hub)
        await watcher.tick()  # the run is found and read to its end
        _append(run_dir / "steps.jsonl", line * 3000)
        await asyncio.gather(watcher.changed(FileEventBatch(runs={"r1"})), watcher.tick())
        numbers = []
        while not sub.queue.empty():
            message = sub.queue.get_nowait()
            assert not isinstance(message, Closed)
            if message["kind"] == "fs:run-step":
                numbers.append(int(message["lineIndex"]))
        return numbers

    assert asyncio.run(scenario()) == list(range(6000))


def test_a_live_run_s_output_comes_as_log_lines_once_masked_whoever_started_it(
    tmp_path: Path,
) -> None:
    """The logs of every run followed become ``log:line`` (issue 32, defect 2: a viewer
    restarted while a run goes on follows its output again): a run live when the watch
    starts from its logs' current ends (the page read the rest over REST), a run found
    later from their starts; each line once however many events and ticks read the run;
    secrets of ``unotest/.env`` masked."""
    root = write_project(tmp_path / "p", None, {"smoke": "x\n"})
    (root / "unotest" / ".env").write_text("API_TOKEN=s3cret-value\n", encoding="utf-8")
    runs = root / "unotest" / ".runs"
    before = runs / "r0"
    before.mkdir(parents=True)
    atomic_write(before / "manifest.json", _manifest(before, os.getpid()))
    _append(before / "stdout.log", b"written before the viewer started\n")

    async def scenario() -> list[tuple[str, str, str]]:
        hub = Hub(queue_size=10_000)
        sub = hub.subscribe()
        watcher = FileEvents(root, hub)
        watcher.prime()
        _append(before / "stdout.log", b"the token is s3cret-value\n")
        later = runs / "r1"
        later.mkdir()
        atomic_write(later / "manifest.json", _manifest(later, os.getpid()))
        _append(later / "stdout.log", b"first\nsecond")
        _append(later / "stderr.log", b"oops\n")
        await watcher.changed(FileEventBatch(runs={"r0", "r1"}))
        await watcher.tick()
        _append(later / "stdout.log", b" half\n")
        await asyncio.gather(watcher.changed(FileEventBatch(runs={"r1"})), watcher.tick())
        await watcher.tick()
        return _log_lines_sent(sub)

    assert asyncio.run(scenario()) == [
        ("r0", "stdout", f"the token is {MASK}"),
        ("r1", "stdout", "first"),
        ("r1", "stderr", "oops"),
        ("r1", "stdout", "second half"),
    ]


def test_a_folder_counts_by_what_it_is_not_by_a_dot_in_its_name(tmp_path: Path) -> None:
    """A folder moved or removed is reported alone (its files went with it): ``v1.2``
    counts as a folder, there or gone; a gone name that ends as no project file does may
    have been one; a file there is classified by its name alone."""
    u = tmp_path / "unotest"
    e2e = u / "e2e"
    for folder in ("v1.2", "_helpers/lib.v2", "_collections/2024.q1", "legacy.js"):
        (e2e / folder).mkdir(parents=True)
    (e2e / "README").write_text("notes\n")
    (e2e / "_helpers" / "CHANGES").write_text("notes\n")
    cases = {
        "e2e/v1.2": Target("scenarios"),  # there, a folder
        "e2e/v1.3": Target("scenarios"),  # gone: maybe a folder
        "e2e/legacy.js": Target("scenarios"),  # a folder, whatever its name says
        "e2e/_helpers/lib.v2": Target("helpers"),
        "e2e/_helpers/lib.v1": Target("helpers"),
        "e2e/_collections/2024.q1": Target("collections"),
        "e2e/_collections/2023.q4": Target("collections"),
        "e2e/README": None,  # there, a file of no kind
        "e2e/_helpers/CHANGES": None,
        "e2e/gone.test.js": Target("scenarios"),  # gone, named as a scenario
        "e2e/gone.js": None,  # gone, named as a file, of no scenario's kind
        "e2e/_helpers/gone.yaml": None,
        "e2e/_collections/gone.js": None,
        "e2e/v1.2/.smoke.test.js.swp": None,  # editors' files stay ignored, gone or not
        "e2e/v1.2~": None,
        "e2e/#smoke.test.js#": None,
    }
    assert {rel: classify(u, str(u / rel)) for rel in cases} == cases

    (e2e / "v1.2").rename(e2e / "v1.5")  # a move: the old name gone, the new one there
    moved = FileEventBatch.of(u, [str(e2e / "v1.2"), str(e2e / "v1.5")])
    assert moved.kinds == {"scenarios"} and not moved.runs
    assert [m["kind"] for m in moved.file_messages()] == ["fs:scenarios-changed"]
    (e2e / "_collections" / "2024.q1").rmdir()
    removed = FileEventBatch.of(u, [str(e2e / "_collections" / "2024.q1"), str(e2e / "README")])
    assert removed.kinds == {"collections"}


def _inotify_watches() -> int:
    """The inotify watches this process holds now (Linux: each inotify descriptor's
    ``fdinfo`` has a line per watch)."""
    count = 0
    for fd in os.listdir("/proc/self/fdinfo"):
        try:
            text = Path(f"/proc/self/fdinfo/{fd}").read_text()
        except OSError:
            continue
        count += sum(1 for line in text.splitlines() if line.startswith("inotify wd:"))
    return count


@pytest.mark.skipif(not Path("/proc/self/fdinfo").is_dir(), reason="Linux /proc")
def test_run_directories_cost_no_watch_each_and_a_new_run_still_comes_live(
    tmp_path: Path,
) -> None:
    """A project with many runs: the watch holds the project's folders, ``unotest/``
    and ``.runs/``, not a watch per run directory (100,000 of them took seconds to
    watch, and many systems allow fewer); a run that starts later still reaches a
    client step by step, read while it runs."""
    root = write_project(tmp_path / "p", None, {"smoke": "x\n", "shop/cart": "x\n"})
    runs = root / "unotest" / ".runs"
    for n in range(300):
        (runs / f"old-{n:03d}").mkdir(parents=True)

    async def body(sub: Subscription) -> None:
        assert _inotify_watches() < 20  # e2e/, shop/, unotest/, .runs/, a few more
        run_dir = runs / "r-live"
        run_dir.mkdir()
        atomic_write(run_dir / "manifest.json", _manifest(run_dir, os.getpid()))
        _append(run_dir / "steps.jsonl", b'{"kind":"run:started","runId":"r-live","t":1}\n')
        await _until(sub, kind_is("fs:run-started", runId="r-live"))
        _append(run_dir / "steps.jsonl", b'{"kind":"step:ok","durationMs":3,"t":2}\n')
        ok = {"kind": "step:ok", "durationMs": 3, "t": 2}
        await _until(sub, kind_is("fs:run-step", runId="r-live", event=ok))

    _with_watcher(root, body)


def test_a_run_found_already_ended_still_sends_its_output(tmp_path: Path) -> None:
    """A short run may start and end between two looks of the viewer (no watch per run
    directory): found ended, its output still comes as ``log:line``, once."""
    root = write_project(tmp_path / "p", None, {"smoke": "x\n"})
    runs = root / "unotest" / ".runs"
    runs.mkdir(parents=True)

    async def scenario() -> list[tuple[str, str, str]]:
        hub = Hub(queue_size=10_000)
        sub = hub.subscribe()
        watcher = FileEvents(root, hub)
        watcher.prime()
        run_dir = runs / "quick"
        run_dir.mkdir()
        atomic_write(run_dir / "manifest.json", _manifest(run_dir, os.getpid()))
        _append(run_dir / "stdout.log", b"said before it ended\n")
        _append(run_dir / "steps.jsonl", b'{"kind":"run:finished","outcome":"completed","t":2}\n')
        for _ in range(2):
            await watcher.tick()
        return _log_lines_sent(sub)

    assert asyncio.run(scenario()) == [("quick", "stdout", "said before it ended")]


def test_a_run_made_with_the_runs_folder_is_found_without_waiting_for_the_tick(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fresh project has no ``.runs/`` when the viewer starts: the folder and the first
    run come together, before ``.runs/`` is watched; the run is found when the watch
    takes the folder in, not at the next tick (turned off here)."""
    monkeypatch.setattr(file_events, "TICK_S", 3600.0)
    root = write_project(tmp_path / "p", None, {"smoke": "x\n"})
    runs = root / "unotest" / ".runs"
    assert not runs.exists()

    async def body(sub: Subscription) -> None:
        run_dir = runs / "first"
        run_dir.mkdir(parents=True)
        atomic_write(run_dir / "manifest.json", _manifest(run_dir, os.getpid()))
        _append(run_dir / "steps.jsonl", b'{"kind":"run:started","runId":"first","t":1}\n')
        await _until(sub, kind_is("fs:run-started", runId="first"))

    _with_watcher(root, body)


def _log_lines_sent(sub: Subscription) -> list[tuple[str, str, str]]:
    """The ``log:line`` messages the hub holds for ``sub``: (run, stream, line)."""
    lines = []
    while not sub.queue.empty():
        message = sub.queue.get_nowait()
        assert not isinstance(message, Closed)
        if message["kind"] == "log:line":
            lines.append((message["runId"], message["stream"], message["line"]))
    return lines
