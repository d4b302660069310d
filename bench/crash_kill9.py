"""Crash consistency at scale: ``kill -9`` of ``unotest e2e`` at seeded random moments.

The same engine as ``tests/runner/test_reliability_crash.py`` (100 kills in CI, more
with ``CRASH_KILL9_KILLS``), for larger campaigns: each cycle starts ``unotest e2e
crash`` against a page served by this script on 127.0.0.1, waits for a seeded anchor
(spawn, ``run:started``, the k-th ``step:started``, ``step:fail``,
``failure-bundle:written``) plus a seeded delay,
sends SIGKILL, then checks what the run left: every whole line of ``steps.jsonl``,
``manifest.json``, ``runtime.json`` (against the protocol's JSON Schemas of
``tests/protocol/``), ``unotest runs --json`` saying ``interrupted`` at once, and no
Playwright driver or Chromium process surviving (35 s at most).

Printed: kills and where they landed, invalid lines and files, runs not reported
interrupted, leftover processes and profile directories, orphaned webServers (its
watchdog should have stopped each within 10 s), failure-bundle files torn by a kill
(not promised either: only a bundle announced by ``failure-bundle:written`` is whole),
temp files left next to the atomically replaced ones, CPU seconds per kill by phase,
and the wall time. Exit status 1 when a promised property broke.

    .venv/bin/python bench/crash_kill9.py [--kills 1000] [--seed N] [--parallel 6] [--mix even|ci]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE.parent / "tests"), str(HERE.parent / "tests" / "runner")]

import test_reliability_crash as crash  # noqa: E402  (the shared engine)
from bench_common import serve  # noqa: E402
from protocol_schemas import validate  # noqa: E402

from runner.browser.launch import playwright_browser_path, resolve_executable  # noqa: E402


def _chromium() -> str:
    resolved = resolve_executable("chromium", None, headless=True)
    path = resolved or playwright_browser_path("chromium", headless=True)
    if not path:
        sys.exit("no Chromium found: run 'bash .ci/setup'")
    return path


def _torn_bundle_files(root: Path) -> int:
    """JSON files of failure bundles that do not parse (a kill while writing them)."""
    torn = 0
    for path in root.glob("**/.unotest/failures/*/*.json"):
        try:
            json.loads(path.read_bytes())
        except (OSError, ValueError):
            torn += 1
    return torn


def _temp_files(root: Path) -> int:
    """``.<name>.<pid>.<tid>.tmp`` left by a kill between writing and ``os.replace``."""
    return sum(1 for _ in root.glob("**/unotest/.runs/*/.*.tmp"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=1000, help="SIGKILLs to send")
    parser.add_argument("--seed", type=int, default=crash.SEED, help="campaign seed")
    parser.add_argument("--parallel", type=int, default=6, help="cycles at a time")
    parser.add_argument(
        "--web-server-share",
        type=float,
        default=crash.WEB_SERVER_SHARE,
        help="share of the run:started cycles whose project has a webServer",
    )
    parser.add_argument(
        "--mix",
        choices=("even", "ci"),
        default="even",
        help="where kills land: 'even' spends more on the late phases, 'ci' is the test's",
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args()
    if args.kills < 1 or args.parallel < 1:
        parser.error("--kills and --parallel must be at least 1")

    tmp = tempfile.mkdtemp(prefix="unotest-kill9-")
    base = Path(tmp)
    try:
        site = base / "site"
        crash.write_site(site)
        server, url = serve(site)
        campaign = crash.Campaign(
            base / "crash",
            url,
            site,
            _chromium(),
            seed=args.seed,
            parallel=args.parallel,
            validate=validate,
            web_server_share=args.web_server_share,
            anchors=crash.EVEN_ANCHORS if args.mix == "even" else crash.ANCHORS,
        )
        print(
            f"kill -9 campaign: seed {args.seed}, {args.kills} kills, {args.parallel} at a time, "
            f"{args.mix} mix",
            flush=True,
        )
        report = campaign.run(args.kills)
        server.shutdown()
        print(report.summary())
        print(f"failure-bundle files torn by a kill (not promised): {_torn_bundle_files(base)}")
        print(f"temp files left beside replaced files (ignored by readers): {_temp_files(base)}")
        kills = len(report.kills)
        print(f"throughput: {kills / report.seconds:.2f} kills/s")
        failures = report.failures()
        for line in failures[:50]:
            print(f"FAIL {line}")
        if failures:
            print(f"{len(failures)} broken guarantees (seed {args.seed})")
            sys.exit(1)
    finally:
        if args.keep:
            print(f"kept {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
