"""What a big project costs: generated projects, absolute times, the machine's load.

One subcommand per part (issue 34); each generates what it measures in a temporary
folder (or ``--dir``, kept and reused when it already holds that many), prints absolute
times with ``os.getloadavg()`` before and after, and asserts nothing.

``runs``: ``--count`` run directories (default 100,000) of 50 scenarios, fake but valid
(``manifest.json``, ``steps.jsonl`` from ``run:started`` to ``run:finished``, heartbeat,
``commands.jsonl``; one in 20 failed, one in 1,000 killed: no ``run:finished`` and a
dead pid) and their lines in the run index ``unotest/.cache/runs.jsonl`` as their
runners would have appended them (``--no-index``: none, the first listings rebuild it).
Times, medians of ``--repeat``:

- ``unotest --version`` (the reference: the interpreter and the CLI's imports) and
  ``unotest runs --limit 20`` as subprocesses: on a folder unchanged since the last
  listing (the newest names kept in ``unotest/.cache/runs-listing.json`` are read), and
  just after a change (the folder's modification time set to now: listed again);
- ``runs_page(limit=100)`` in this process with a fresh lister and index (what one CLI
  command does), both ways, and ``list_runs`` (every run) once; ``--reference`` also
  times the way before the index (every directory's ``run_meta``);
- against a real ``unotest view``: ``GET /api/runs?limit=100`` (the first request, then
  the median), its next page (``before=``), ``status=failed``, ``scenario=``, and
  ``latest=1`` (each scenario's newest run, the tree's badges).

    .venv/bin/python bench/scale.py runs [--count 100000] [--repeat 5] [--dir DIR]
                                         [--no-index] [--reference]

``scenarios``: ``--count`` scenarios (default 10,000) and a real ``unotest view`` on
them: ``/api/scenarios`` first and warm, the viewer's RSS over 200 requests, and in
Chromium page open → first tree item and a filter → the tree updated (the part lives in
``bench/scale_scenarios.py``; its docstring says what each figure is).

    .venv/bin/python bench/scale.py scenarios [--count 10000] [--requests 20] [--dir DIR]

``watch``: ``unotest watch`` on such a project: a save of one scenario, and of the
helper every scenario calls, → ``batch.started`` (``bench/scale_watch.py``).

    .venv/bin/python bench/scale.py watch [--count 10000] [--saves 5] [--dir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import scale_scenarios  # noqa: E402  (bench/, this script's folder)
import scale_watch  # noqa: E402
from bench_common import kept_or_temporary  # noqa: E402
from scale_scenarios import child_env, load, ms  # noqa: E402

from runner import protocol  # noqa: E402
from runner.store.run_index import RunIndex, index_path  # noqa: E402
from runner.store.run_list import RunLister, RunQuery, list_runs  # noqa: E402
from runner.store.runs import run_meta  # noqa: E402

SCENARIOS = [f"area{n % 5}/flow{n}" for n in range(50)]
DEAD_PID = 4_194_000
"""A pid above any this machine hands out (pid_max is 4,194,304 at most)."""


# ---------------------------------------------------------------------------
# the project
# ---------------------------------------------------------------------------


def _line(record: dict[str, object]) -> bytes:
    return json.dumps(record, separators=(",", ":")).encode() + b"\n"


def _write(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def make_runs(root: Path, count: int, with_index: bool) -> None:
    """``count`` run directories, one a second up to a minute ago, and their index lines
    (each written when its run started or finished, as a runner writes them)."""
    runs = root / "unotest" / ".runs"
    runs.mkdir(parents=True, exist_ok=True)
    (root / "unotest" / "e2e").mkdir(parents=True, exist_ok=True)
    (root / "unotest.config.yaml").write_text("baseURL: http://127.0.0.1:9\n")
    for ref in SCENARIOS:
        path = root / "unotest" / "e2e" / f"{ref}.test.js"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"// id-{ref.replace('/', '-')}\n// {ref}\n// #336699\ntest() {{\n}}\n")
    lines: list[bytes] = []
    start = time.time_ns() // 1_000_000 - count * 1000 - 60_000
    host = socket.gethostname()
    for n in range(count):
        ref = SCENARIOS[n % len(SCENARIOS)]
        started = start + n * 1000
        run_id = protocol.make_run_id(ref, now_ms=started)
        run_dir = runs / run_id
        run_dir.mkdir()
        killed = n % 1000 == 999
        outcome = "failed" if n % 20 == 7 else "completed"
        manifest = {
            "schemaVersion": 1,
            "kind": "scenario",
            "ref": ref,
            "adapter": protocol.ADAPTER_NAME,
            "startedAt": started,
            "pid": DEAD_PID,
            "pidStartTime": 1,
            "hostname": host,
        }
        _write(run_dir / protocol.RUN_MANIFEST_FILE, json.dumps(manifest, indent=2).encode())
        steps = [
            {"kind": "run:started", "runId": run_id, "scenario": ref, "t": started + 3},
            {"kind": "step:started", "line": 5, "col": 2, "text": 'goto("/")', "t": started + 4},
            {"kind": "step:ok", "line": 5, "col": 2, "durationMs": 80, "t": started + 84},
        ]
        if not killed:
            steps.append({"kind": "run:finished", "outcome": outcome, "t": started + 90})
        _write(run_dir / protocol.STEPS_FILE, b"".join(_line(s) for s in steps))
        _write(run_dir / protocol.HEARTBEAT_FILE, b"")
        _write(run_dir / protocol.COMMANDS_FILE, b"")
        if with_index:
            record = {"run": run_id, "at": started + 3, "e": "started", "kind": "scenario"}
            lines.append(_line({**record, "ref": ref, "startedAt": started + 3}))
            if not killed:
                end = {"run": run_id, "at": started + 90, "e": "finished"}
                lines.append(_line({**end, "finishedAt": started + 90, "outcome": outcome}))
    index = index_path(runs)
    index.parent.mkdir(parents=True, exist_ok=True)
    index.unlink(missing_ok=True)
    if with_index:
        index.write_bytes(b"".join(lines))


@contextmanager
def project(args: argparse.Namespace) -> Iterator[Path]:
    """The project of ``--count`` runs: ``--dir`` kept (and reused when it holds that
    many), else a temporary one; without its index under ``--no-index``."""
    with kept_or_temporary(
        args.dir, lambda root: _held(root) == args.count, lambda root: _generate(root, args)
    ) as root:
        if args.no_index:  # a reused project's too (a generated one was made without)
            index_path(root / "unotest" / ".runs").unlink(missing_ok=True)
        yield root


def _held(root: Path) -> int:
    runs = root / "unotest" / ".runs"
    return len(os.listdir(runs)) if runs.is_dir() else 0


def _generate(root: Path, args: argparse.Namespace) -> None:
    began = time.perf_counter()
    make_runs(root, args.count, not args.no_index)
    print(f"generated {args.count:,} run directories in {time.perf_counter() - began:.1f} s")


# ---------------------------------------------------------------------------
# measuring
# ---------------------------------------------------------------------------


def _unotest() -> list[str]:
    return [sys.executable, "-m", "unotest"]


def timed(fn: Callable[[], object]) -> float:
    began = time.perf_counter()
    fn()
    return time.perf_counter() - began


def median_of(repeat: int, fn: Callable[[], object]) -> float:
    return statistics.median(timed(fn) for _ in range(repeat))


def cli(root: Path, *args: str) -> Callable[[], object]:
    def run() -> object:
        done = subprocess.run(
            [*_unotest(), *args], cwd=root, env=child_env(), capture_output=True, check=False
        )
        if done.returncode != 0:
            raise SystemExit(f"unotest {' '.join(args)} failed: {done.stderr.decode()}")
        return done

    return run


def settle(runs_dir: Path, lister: Callable[[], object]) -> None:
    """Wait until the folder's last change is old enough (``run_list``'s settled rule,
    2.1 s), then list it once with ``lister``: from then on its newest names are kept
    for the next process."""
    age = time.time() - runs_dir.stat().st_mtime
    time.sleep(max(0.0, 2.3 - age))
    lister()


def median_after(repeat: int, prepare: Callable[[], object], fn: Callable[[], object]) -> float:
    """The median time of ``fn`` with ``prepare`` run (untimed) before each."""
    times = []
    for _ in range(repeat):
        prepare()
        times.append(timed(fn))
    return statistics.median(times)


def measure_cli(root: Path, repeat: int) -> None:
    runs_dir = root / "unotest" / ".runs"
    settle(runs_dir, cli(root, "runs", "--limit", "20"))
    version = median_of(repeat, cli(root, "--version"))
    limited = median_of(repeat, cli(root, "runs", "--limit", "20"))
    relisted = median_after(repeat, lambda: os.utime(runs_dir), cli(root, "runs", "--limit", "20"))
    print(f"  unotest --version               {ms(version)}  (the reference)")
    print(f"  unotest runs --limit 20         {ms(limited)}  ({limited - version:+.3f} s over it)")
    print(
        f"    just after a run was added    {ms(relisted)}  ({relisted - version:+.3f} s over it;"
        " the folder listed)"
    )


def measure_in_process(root: Path, repeat: int, reference: bool) -> None:
    runs_dir = root / "unotest" / ".runs"

    def fresh_page() -> object:
        lister = RunLister(runs_dir, RunIndex(index_path(runs_dir)))
        return lister.page(RunQuery(limit=100))

    relisted = median_after(repeat, lambda: os.utime(runs_dir), fresh_page)
    settle(runs_dir, fresh_page)  # and the viewer, measured next, starts so too
    page = median_of(repeat, fresh_page)
    print(f"  runs_page(limit=100), fresh     {ms(page)}  (the listing kept by the last one)")
    print(f"    just after a run was added    {ms(relisted)}  (the folder listed)")
    began = time.perf_counter()
    every = list_runs(runs_dir)
    print(f"  list_runs (all {len(every):,})          {ms(time.perf_counter() - began)}")
    if reference:
        began = time.perf_counter()
        now = time.time_ns() // 1_000_000
        metas = [run_meta(runs_dir / name, now) for name in os.listdir(runs_dir)]
        took = time.perf_counter() - began
        print(f"  every run_meta (before the index) {ms(took)}  ({len(metas):,} read)")


@contextmanager
def viewer(root: Path) -> Iterator[tuple[str, str]]:
    """A real ``unotest view`` on ``root``: its base URL and token; how long it took to
    listen (launch to its URL: the runs already there taken, the file watch in place)."""
    with scale_scenarios.running_viewer(root) as (_proc, url, started):
        print(f"  unotest view: launch to its URL  {ms(started)}")
        base, _, token = url.partition("/?token=")
        yield base, token


def measure_viewer(root: Path, repeat: int) -> None:
    with viewer(root) as (base, token):
        headers = {"Authorization": f"Bearer {token}"}
        # A connection per request, as curl makes: on a kept-alive connection every answer
        # of this server waits about 40 ms (Nagle's algorithm against the client's delayed
        # ACK), whatever the route; that floor is the server's, not the listing's.
        fresh = httpx.Limits(max_keepalive_connections=0)
        with httpx.Client(base_url=base, headers=headers, timeout=120, limits=fresh) as client:

            def get(path: str) -> httpx.Response:
                answer = client.get(path)
                answer.raise_for_status()
                return answer

            first = timed(lambda: get("/api/runs?limit=100"))
            answer = get("/api/runs?limit=100")
            size = len(answer.content)
            link = answer.headers.get("link", "")
            following = link[link.index("<") + 1 : link.index(">")] if link else None
            print(f"  GET /api/runs?limit=100, first {ms(first)}  ({size:,} bytes)")
            asks = [
                ("GET /api/watch (a reference)", "/api/watch"),
                ("GET /api/runs?limit=100", "/api/runs?limit=100"),
                ("  its next page (before=)", following),
                ("GET …&status=failed", "/api/runs?limit=100&status=failed"),
                ("GET …&scenario=area3/flow8", "/api/runs?limit=100&scenario=area3%2Fflow8"),
                ("GET /api/runs?latest=1", "/api/runs?latest=1"),
            ]
            for label, path in asks:
                if path is None:
                    continue
                took = [timed(partial(get, path)) for _ in range(repeat + 1)]
                print(
                    f"  {label:<31} {ms(statistics.median(took[1:]))}  "
                    f"(first {ms(took[0]).strip()})"
                )


def runs_part(args: argparse.Namespace) -> None:
    print(f"bench/scale.py runs: {args.count:,} run directories; {load()}")
    with project(args) as root:
        print(f"project: {root}")
        print("CLI (subprocesses):")
        measure_cli(root, args.repeat)
        print("in process:")
        measure_in_process(root, args.repeat, args.reference)
        print("a real unotest view:")
        measure_viewer(root, args.repeat)
    print(f"done; {load()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parts = parser.add_subparsers(dest="part", required=True)
    runs = parts.add_parser("runs", help="100,000 run directories: runs --limit, /api/runs")
    runs.add_argument("--count", type=int, default=100_000, help="run directories")
    runs.add_argument("--repeat", type=int, default=5, help="medians of this many")
    runs.add_argument("--dir", help="generate here (kept, reused when it holds --count runs)")
    runs.add_argument("--no-index", action="store_true", help="no index: listings rebuild it")
    runs.add_argument("--reference", action="store_true", help="also read every run_meta")
    runs.set_defaults(run=runs_part)
    scale_scenarios.add_parser(parts)
    scale_watch.add_parser(parts)
    args = parser.parse_args()
    args.run(args)


if __name__ == "__main__":
    main()
