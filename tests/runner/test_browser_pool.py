"""The browser pool without a browser: ``wsEndpoint`` as a list in the config (each
problem one sentence at its place), and :mod:`runner.workers.pool`'s rules (spread by
free capacity, an endpoint down said once and tried again after a back-off, the pool
exhausted when every endpoint is down). The real servers are in
``test_browser_pool_e2e.py``."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.errors import ConfigError
from runner.project.config import BrowserEndpoint, Config, load_config
from runner.workers.pool import (
    BACKOFF_FIRST_S,
    ENDPOINT_ENV,
    BrowserPool,
    capacities,
    endpoint_label,
    spread,
    worker_endpoint,
)


def load(root: Path, text: str) -> Config:
    (root / "unotest.config.yaml").write_text(text, encoding="utf-8")
    return load_config(root, {})


def test_a_list_of_urls_and_mappings(tmp_path: Path) -> None:
    config = load(
        tmp_path,
        "wsEndpoint:\n"
        "  - ws://host-a:3000/\n"
        "  - url: wss://user:secret@host-b/pw?token=abc#x\n"
        "    capacity: 4\n"
        "    headers: {Authorization: Bearer abc, X-Count: 2}\n",
    )
    first, second = config.endpoints
    assert config.ws_endpoint == "ws://host-a:3000/"  # what a run of its own uses
    assert first == BrowserEndpoint("ws://host-a:3000/")
    assert second.capacity == 4
    assert second.headers == (("Authorization", "Bearer abc"), ("X-Count", "2"))
    # What manifests, reports and the console show: no user, password, query, fragment.
    assert [e.shown for e in config.endpoints] == ["ws://host-a:3000/", "wss://host-b/pw"]
    assert endpoint_label(first.shown) == "host-a:3000"
    assert endpoint_label(second.shown) == "host-b/pw"


def test_a_plain_url_is_a_pool_of_one(tmp_path: Path) -> None:
    config = load(tmp_path, "wsEndpoint: ws://127.0.0.1:9222/abc\n")
    assert config.ws_pool == ()
    assert config.endpoints == (BrowserEndpoint("ws://127.0.0.1:9222/abc"),)
    assert load(tmp_path, "headless: true\n").endpoints == ()


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("wsEndpoint: []\n", "1:12: 'wsEndpoint' is an empty list"),
        ("wsEndpoint: 42\n", "1:12: 'wsEndpoint' must be a ws:// or wss:// URL, or a list"),
        (
            "wsEndpoint:\n  - ws://a/\n  - http://b/\n",
            "3:4: 'wsEndpoint[1]' must be a ws:// or wss:// URL such as",
        ),
        (
            "wsEndpoint:\n  - ws://a/\n  - capacity: 2\n",
            "3:4: 'wsEndpoint[1].url' is missing: each endpoint needs its ws:// URL",
        ),
        (
            "wsEndpoint:\n  - url: ws://a/\n    capacity: 0\n",
            "3:14: 'wsEndpoint[0].capacity' must be a whole number of browsers from 1 to 64",
        ),
        (
            "wsEndpoint: [ws://a/, ws://a/]\n",
            "'wsEndpoint[1]' repeats wsEndpoint[0] (ws://a/): list each server once",
        ),
        (
            "wsEndpoint:\n  - url: ws://a/\n    headers: {x-playwright-launch-options: '{}'}\n",
            "'wsEndpoint[0].headers.x-playwright-launch-options' cannot be set",
        ),
        (
            'wsEndpoint:\n  - url: ws://a/\n    headers: {Authorization: "tok\\nen"}\n',
            "'wsEndpoint[0].headers.Authorization' must be one line of text",
        ),
    ],
)
def test_each_problem_is_one_sentence_at_its_place(tmp_path: Path, text: str, says: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, text)
    message = str(caught.value)
    assert message.startswith("unotest.config.yaml:"), message
    assert says in message, message
    assert "\n" not in message
    assert "tok" not in message  # a header's value is never shown


def test_an_unknown_key_of_an_endpoint_is_a_warning(tmp_path: Path) -> None:
    config = load(tmp_path, "wsEndpoint:\n  - url: ws://a/\n    capcity: 2\n")
    assert config.endpoints == (BrowserEndpoint("ws://a/"),)
    assert any("3: unknown key 'wsEndpoint[0].capcity'" in w for w in config.warnings)
    assert any("did you mean 'capacity'" in w for w in config.warnings)


def test_workers_are_spread_by_free_capacity() -> None:
    assert spread([4, 4, 4], 6) == [0, 1, 2, 0, 1, 2]
    assert spread([1, 3], 4) == [1, 0, 1, 1]  # each by the share of it that is free
    assert spread([2, 4], 3) == [1, 0, 1]  # on a tie, where more places are free
    assert spread([1, 1], 3) == [0, 1, 0]  # past the whole capacity: the least loaded
    endpoints = [BrowserEndpoint("ws://a/"), BrowserEndpoint("ws://b/", capacity=1)]
    assert capacities(endpoints, 3) == [3, 1]  # the default: the worker count
    # A worker started before anyone could tell it takes its place by the same rule.
    places = [
        worker_endpoint(endpoints, {"UNOTEST_WORKER_INDEX": str(i), "UNOTEST_WORKER_COUNT": "3"})
        for i in range(3)
    ]
    assert places == spread([3, 1], 3) == [0, 1, 0]
    assert worker_endpoint(endpoints, {ENDPOINT_ENV: "1", "UNOTEST_WORKER_INDEX": "0"}) == 1
    assert worker_endpoint((), {ENDPOINT_ENV: "1"}) is None


def test_an_endpoint_down_is_said_once_and_tried_again_after_its_backoff() -> None:
    now = [100.0]
    endpoints = [BrowserEndpoint("ws://a/"), BrowserEndpoint("ws://b/", capacity=1)]
    pool = BrowserPool(endpoints, 2, clock=lambda: now[0])
    assert pool.remote and pool.size == 3
    for worker in range(2):
        chosen = pool.choose()
        assert chosen is not None
        pool.attach(worker, chosen)
    assert [pool.endpoint_of(w) for w in range(2)] == [0, 1]

    assert pool.went_down(1, "connect ECONNREFUSED") == BACKOFF_FIRST_S  # said
    pool.detach(1)
    assert pool.choose() == 0  # the other one, while it has room
    pool.attach(1, 0)
    assert pool.choose() is None  # full, and the down one rests
    assert pool.wait_s() == BACKOFF_FIRST_S
    now[0] += BACKOFF_FIRST_S
    pool.detach(1)
    pool.attach(2, 0)  # the other one full again
    assert pool.choose() == 1  # its back-off is over: one worker tries it
    pool.attach(1, 1)
    assert pool.choose() is None  # nobody else tries it meanwhile
    assert pool.went_down(1, "again") is None  # failed again: not said again
    pool.detach(1)
    assert pool.wait_s() == 2 * BACKOFF_FIRST_S  # the back-off doubles
    assert not pool.exhausted
    assert pool.down_list() == "ws://b/: connect ECONNREFUSED"

    assert pool.went_down(0, "gone") is not None
    assert pool.exhausted  # none is left
    assert pool.came_up(1) is True  # a worker connected to it again
    assert not pool.exhausted


def test_workers_losing_one_endpoint_in_one_outage_count_one_failure() -> None:
    now = [0.0]
    pool = BrowserPool(
        [BrowserEndpoint("ws://a/"), BrowserEndpoint("ws://b/")], 4, clock=lambda: now[0]
    )
    assert pool.went_down(0, "gone") == BACKOFF_FIRST_S
    for _ in range(3):  # the other workers of that endpoint report the same outage
        assert pool.went_down(0, "gone") is None
    assert pool.wait_s() == BACKOFF_FIRST_S  # not doubled three times over


def test_no_endpoints_is_no_pool() -> None:
    pool = BrowserPool((), 3)
    assert not pool.remote and not pool.exhausted and pool.choose() is None
