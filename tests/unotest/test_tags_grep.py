"""Tags in a scenario's title and ``--grep``/``--grep-invert`` (issue 31, item 7).

A tag is a word of the description line that starts with ``@`` (``// Adds two items
@smoke @cart``), as Playwright reads tags from a test's title; it stays part of the
title. ``unotest list`` shows it (``--json`` adds ``tags``), and ``--grep REGEX`` /
``--grep-invert REGEX`` on ``list`` and ``collection`` keep the scenarios whose
``"<name> <title>"`` they match (Python's ``re.search``): ``--grep @smoke`` keeps the
tagged ones. A bad pattern is one sentence and exit 2; a grep that keeps nothing is one
sentence and exit 1 (Playwright's "No tests found"), and nothing runs. The workers a
collection starts before its project loads are counted on the kept scenarios.

The collection runs are real: ``unotest collection`` as CI runs it, in real Chromium,
against a page served on 127.0.0.1 that records which scenario visited it.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from cli_helpers import run
from events import read_events
from flaky_site import find_chromium, validate_envelopes
from net import serve_handler
from sites import collection_yaml, config_yaml, scenario_source, unotest_env, write_project

from dsl.scenario import parse_header, title_tags
from runner.collection.prelaunch import plan

RUN_TIMEOUT_S = 180
PAGE = b"<!doctype html><title>Tags</title><h1>Tagged home</h1>"
BODY = '  goto("/index.html?s={name}")\n  expect_text(css("h1"), "Tagged home")\n'

# name -> title: two tagged @smoke (one also @cart), one @smoke-slow, two untagged.
TITLES = {
    "shop/cart": "Adds two items @smoke @cart",
    "auth/login": "A user signs in @smoke",
    "shop/slow": "The big catalogue pages @smoke-slow",
    "shop/offers": "Offers from the API",
    "mail": "Sends to a@b.com",
}


def sources(titles: dict[str, str]) -> dict[str, str]:
    return {
        name: scenario_source(
            name.replace("/", "-"), BODY.format(name=name), title=title, fn="test_it"
        )
        for name, title in titles.items()
    }


@pytest.fixture
def tagged(tmp_path: Path) -> Path:
    """A project (no site needed: nothing runs) with the five scenarios and a collection."""
    return write_project(
        tmp_path / "proj",
        config_yaml("http://127.0.0.1:9"),
        sources(TITLES),
        collections={"all": collection_yaml([*TITLES, "ghost"])},
    )


def names_listed(out: str) -> list[str]:
    """The scenario names of ``unotest list``'s text, in order."""
    block = out.split("\nscenarios (", 1)[1].split("\n\n", 1)[0]
    return [line.split()[0] for line in block.splitlines()[1:]]


# --- tags in the title ------------------------------------------------------------------


def test_tags_are_the_at_words_of_the_title_and_stay_in_it() -> None:
    assert title_tags("Adds two items @smoke @cart") == ("@smoke", "@cart")
    assert title_tags("@smoke first, then @smoke again and @a-b:c") == ("@smoke", "@a-b:c")
    assert title_tags("Sends to a@b.com, costs @ 3") == ()  # glued to a word, or bare
    source = scenario_source("cart", "  log(1)\n", title="Adds two items @smoke @cart")
    header = parse_header(source, "cart.test.js")
    assert header.title == "Adds two items @smoke @cart"  # as written
    assert header.tags == ("@smoke", "@cart")


def test_list_shows_the_tags_and_its_json_carries_them(tagged: Path) -> None:
    text = run(tagged, "list")
    assert text.code == 0, text
    assert "shop/cart    Adds two items @smoke @cart  [id-shop-cart]" in text.out
    done = run(tagged, "list", "--json")
    assert done.code == 0, done
    tags = {m["name"]: m["tags"] for m in json.loads(done.out)["scenarios"]}
    assert tags == {
        "shop/cart": ["@smoke", "@cart"],
        "auth/login": ["@smoke"],
        "shop/slow": ["@smoke-slow"],
        "shop/offers": [],
        "mail": [],
    }
    # A warm list (from the index cache, parsing nothing) carries the same.
    assert run(tagged, "list", "--json").out == done.out


# --- --grep on list -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "kept"),
    [
        (["--grep", "@smoke"], ["auth/login", "shop/cart", "shop/slow"]),
        (["--grep", r"@smoke\b(?!-)"], ["auth/login", "shop/cart"]),
        (["--grep-invert", "@smoke"], ["mail", "shop/offers"]),
        (["--grep", "@smoke", "--grep-invert", "@cart"], ["auth/login", "shop/slow"]),
        (["--grep", "^shop/"], ["shop/cart", "shop/offers", "shop/slow"]),  # the name
        (["--grep", "^mail Sends"], ["mail"]),  # "<name> <title>"
        (["--grep", "(?i)OFFERS"], ["shop/offers"]),  # case-sensitive unless asked
        (["--grep", "OFFERS"], []),
    ],
)
def test_list_grep_and_grep_invert_keep_what_they_match(
    tagged: Path, args: list[str], kept: list[str]
) -> None:
    done = run(tagged, "list", *args)
    if not kept:
        assert done.code == 1, done
        return
    assert done.code == 0, done
    assert sorted(names_listed(done.out)) == kept
    assert f"scenarios ({len(kept)} of 5 matching --grep" in done.out
    listed = json.loads(run(tagged, "list", "--json", *args).out)["scenarios"]
    assert sorted(m["name"] for m in listed) == kept


def test_a_grep_that_keeps_nothing_is_one_sentence_and_exit_1(tagged: Path) -> None:
    for args in (["list"], ["list", "--json"], ["collection", "all"]):
        done = run(tagged, *args, "--grep", "@nightly")
        assert done.code == 1, done
        assert done.out == ""
        (line,) = done.err.strip().splitlines()
        assert line.startswith("unotest: no scenario matches --grep '@nightly'"), line
    collection = run(tagged, "collection", "all", "--grep-invert", ".")
    assert collection.err.strip() == (
        "unotest: no scenario matches --grep-invert '.' in collection 'all' (6 listed): "
        "nothing runs"
    )
    assert not (tagged / "unotest" / ".runs").exists()  # no run was started


@pytest.mark.parametrize("command", [["list"], ["collection", "all", "--workers", "2"]])
def test_a_bad_regex_is_one_sentence_and_exit_2(tagged: Path, command: list[str]) -> None:
    for flag in ("--grep", "--grep-invert"):
        done = run(tagged, *command, flag, "@smoke(")
        assert done.code == 2, done
        (line,) = done.err.strip().splitlines()
        assert line.startswith(f"unotest: {flag} '@smoke(' is not a regular expression ("), line
        assert "missing ), unterminated subpattern at position 6" in line
    assert not (tagged / "unotest" / ".runs").exists()


# --- the workers started before the project loads ------------------------------------------


def test_prelaunch_counts_the_workers_of_what_the_grep_keeps(tagged: Path) -> None:
    assert plan(["all", "--workers", "4"], tagged) == (tagged, 4, False, 2)  # as before
    # With a grep, every title is read: 'ghost' has no file, so the reading cannot tell.
    assert plan(["all", "--workers", "4", "--grep", "@smoke"], tagged) is None
    (tagged / "unotest/e2e/_collections/five.yaml").write_text(collection_yaml(TITLES))
    assert plan(["five", "--workers", "4"], tagged) == (tagged, 4, False, 2)
    assert plan(["five", "--workers", "4", "--grep", "@smoke"], tagged) == (tagged, 3, False, 2)
    assert plan(["five", "--workers", "9", "--grep-invert", "@smoke"], tagged) == (
        tagged,
        2,
        False,
        2,
    )
    assert plan(["five", "--grep", "@smoke", "--grep-invert", "@cart"], tagged) == (
        tagged,
        1,
        False,
        2,
    )
    wanted = ["five", "--workers", "4", "--grep", "@smoke", "--shard", "2/2"]
    assert plan(wanted, tagged) == (tagged, 1, False, 2)  # the grep first, then the shard
    assert plan(["five", "--grep=^mail Sends", "--workers", "3"], tagged) == (tagged, 1, False, 2)
    for unusual in (["--grep", "@nightly"], ["--grep", "("], ["--grep-invert", "("]):
        assert plan(["five", "--workers", "2", *unusual], tagged) is None  # start nothing


def test_prelaunch_starts_nothing_for_a_header_it_cannot_read(tagged: Path) -> None:
    (tagged / "unotest/e2e/_collections/odd.yaml").write_text(collection_yaml(["odd", "mail"]))
    odd = tagged / "unotest/e2e/odd.test.js"
    odd.write_text("// id-odd\n//   \n// #123456\nfunction test_it() {\n}\n")  # no title
    assert plan(["odd", "--grep", "a"], tagged) is None
    odd.write_text("// id-odd\n// " + "x" * 5000 + "\n// #123456\n")  # a very long line
    assert plan(["odd", "--grep", "a"], tagged) is None
    odd.write_bytes(b"// id-odd\n// \xff\n// #123456\n")  # not UTF-8
    assert plan(["odd", "--grep", "a"], tagged) is None
    odd.write_text("\ufeff// id-odd\r\n// Odd one @smoke\r\n// #123456\r\n")
    assert plan(["odd", "--grep", "@smoke", "--workers", "2"], tagged) == (tagged, 1, False, 2)


# --- a real collection ------------------------------------------------------------------


@dataclass
class Site:
    """The page on 127.0.0.1: which scenarios visited it (``?s=<name>``)."""

    url: str = ""
    visits: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


@pytest.fixture
def site() -> Iterator[Site]:
    seen = Site()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            query = parse_qs(urlsplit(self.path).query)
            with seen.lock:
                seen.visits.extend(query.get("s", []))
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(PAGE)))
            self.end_headers()
            self.wfile.write(PAGE)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    with serve_handler(Handler, "tags-site") as url:
        seen.url = url
        yield seen


@pytest.fixture
def runnable(tmp_path: Path, site: Site) -> Path:
    timeout = {"action": 5000, "expect": 5000, "navigation": 30000, "scenario": 60000}
    return write_project(
        tmp_path / "proj",
        config_yaml(site.url, timeout=timeout, chromium=find_chromium()),
        sources(TITLES),
        collections={"all": collection_yaml(TITLES)},
    )


def _workers_of(pid: int) -> dict[int, float]:
    """The collection workers whose parent is ``pid`` now, with when each started (ms
    since the epoch, in 10 ms steps: its start in clock ticks since boot, against
    ``/proc/uptime``)."""
    found: dict[int, float] = {}
    with open("/proc/uptime", encoding="utf-8") as f:
        booted = time.time() - float(f.read().split()[0])
    for entry in os.listdir("/proc"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
            if int(fields[1]) == pid and b"runner.workers.main" in argv:
                found[int(entry)] = (booted + int(fields[19]) / os.sysconf("SC_CLK_TCK")) * 1000
    return found


def collection(root: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], dict[int, float]]:
    """``unotest collection ARGS`` in ``root``, and every worker it ever had (pid -> its
    start, ms)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "unotest", "collection", *args],
        cwd=root,
        env=unotest_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    workers: dict[int, float] = {}
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while proc.poll() is None and time.monotonic() < deadline:
        workers.update(_workers_of(proc.pid))
        time.sleep(0.01)
    try:
        out, err = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"unotest collection did not end\n{out}\n{err}")
    assert "Traceback" not in out + err, err
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), workers


def started_early(root: Path, out: str, workers: dict[int, float]) -> bool:
    """Every worker started well before the collection's run directory began: the ones
    ``cli.main`` started from the command line (hundreds of ms before; one the
    orchestrator spawns starts after, give or take the 10 ms clock ticks)."""
    run_dir = root / out.rsplit("collection run: ", 1)[1].split()[0]
    events = read_events(run_dir, finished=True)
    started = next(e["t"] for e in events if e["kind"] == "collection-run:started")
    return all(at < started - 50 for at in workers.values())


@pytest.mark.skipif(not Path("/proc/uptime").exists(), reason="needs /proc")
def test_a_collection_with_grep_smoke_runs_only_the_tagged_scenarios(
    runnable: Path, site: Site, tmp_path: Path
) -> None:
    junit, report = tmp_path / "junit.xml", tmp_path / "report.json"
    reporters = f"list,junit={junit},json={report}"
    done, workers = collection(
        runnable, "all", "--grep", r"@smoke\b(?!-)", "--workers", "2", "--reporter", reporters
    )
    assert done.returncode == 0, done
    assert sorted(site.visits) == ["auth/login", "shop/cart"]
    header = done.stdout.splitlines()[0]
    assert header == (
        "unotest collection all: 2 scenarios, 2 worker(s) in 1 process, "
        r"--grep '@smoke\b(?!-)'"
    )
    assert "2 passed" in done.stdout
    # The two workers are lanes of one process, started early, adopted: none replaced.
    assert len(workers) == 1, workers
    assert started_early(runnable, done.stdout, workers), workers

    cases = ET.parse(junit).getroot().findall("./testsuite/testcase")
    assert [(c.get("classname"), c.get("name")) for c in cases] == [
        ("shop/cart", "Adds two items @smoke @cart"),
        ("auth/login", "A user signs in @smoke"),
    ]
    events = json.loads(report.read_text(encoding="utf-8"))
    validate_envelopes(events)
    assert events[0]["data"]["scenarios"] == ["shop/cart", "auth/login"]
    for kind in ("test_start", "test_end"):
        titles = {e["data"]["name"]: e["data"]["title"] for e in events if e["type"] == kind}
        assert titles == {k: TITLES[k] for k in ("shop/cart", "auth/login")}

    history = run(runnable, "history", "--json")
    assert history.code == 0, history
    assert {r["scenario"]: r["title"] for r in json.loads(history.out)} == {
        "shop/cart": TITLES["shop/cart"],
        "auth/login": TITLES["auth/login"],
    }


@pytest.mark.skipif(not Path("/proc/uptime").exists(), reason="needs /proc")
def test_grep_invert_runs_the_others_on_as_many_workers_as_they_need(
    runnable: Path, site: Site
) -> None:
    """Two scenarios kept with ``--workers 3``: two workers (two lanes of one process,
    not two processes for three) are started before the project loads, and they are the
    ones that run."""
    done, workers = collection(runnable, "all", "--grep-invert", "@smoke", "--workers", "3")
    assert done.returncode == 0, done
    assert sorted(site.visits) == ["mail", "shop/offers"]
    header = "unotest collection all: 2 scenarios, 2 worker(s) in 1 process, --grep-invert '@smoke'"
    assert done.stdout.startswith(header + "\n"), done.stdout
    assert len(workers) == 1, workers
    assert started_early(runnable, done.stdout, workers), workers
