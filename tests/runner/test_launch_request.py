"""runner.launch: a run as a front end asks for it, checked against the one table of
limits, and the argv it becomes (pure: nothing is started here)."""

from __future__ import annotations

import pytest

from runner.errors import UnsupportedRunKindError, UsageError
from runner.launch.limits import LIMITS, check_limit
from runner.launch.request import LaunchRequest


def test_a_scenario_request_becomes_its_e2e_argv_with_our_own_options() -> None:
    request = LaunchRequest.from_json(
        {
            "kind": "scenario",
            "scenario": "shop/cart",
            "debug": True,
            "breakpoints": ["10:4", "_helpers/auth:3"],
            "step": True,
            "retries": 2,
            "headed": True,
        }
    )
    assert request.args() == [
        "e2e",
        "shop/cart",
        "--debug",
        "--break",
        "10:4",
        "--break",
        "_helpers/auth:3",
        "--headed",
        "--step",
        "--retries",
        "2",
    ]


def test_a_collection_request_becomes_its_argv() -> None:
    request = LaunchRequest.from_json(
        {"kind": "collection", "collection": "nightly", "workers": 3, "bail": True}
    )
    assert request.args() == ["collection", "nightly", "--workers", "3", "--bail"]
    assert request.retries is None  # the project's config decides


def test_what_a_run_keeps_is_what_was_asked_and_nothing_else() -> None:
    asked = {"kind": "collection", "collection": "c", "workers": 2, "retries": 1}
    request = LaunchRequest.from_json({**asked, "unknown": "x", "debug": True})
    assert request.asked == asked


def test_breakpoints_are_read_only_with_debug_on() -> None:
    """As the runner adapter reads them: without debug a malformed value is ignored."""
    for value in (None, 5, "10:4"):
        request = LaunchRequest.from_json(
            {"kind": "scenario", "scenario": "a", "breakpoints": value}
        )
        assert request.breakpoints == ()
    request = LaunchRequest.from_json({"kind": "collection", "collection": "c", "breakpoints": 7})
    assert request.breakpoints == ()
    with pytest.raises(UsageError, match="breakpoints must be a list"):
        LaunchRequest.from_json(
            {"kind": "scenario", "scenario": "a", "debug": True, "breakpoints": None}
        )


@pytest.mark.parametrize(
    ("request_", "says"),
    [
        ({"kind": "scenario", "scenario": "a", "retries": None}, "retries must be a whole"),
        ({"kind": "scenario", "scenario": "a", "retries": 11}, "from 0 to 10"),
        ({"kind": "scenario", "scenario": "a", "retries": True}, "retries must be a whole"),
        ({"kind": "scenario", "scenario": "a", "step": "yes"}, "step must be true or false"),
        ({"kind": "collection", "collection": "c", "workers": 65}, "from 1 to 64"),
        ({"kind": "collection", "collection": "c", "workers": 0}, "from 1 to 64"),
        ({"kind": "scenario"}, "needs a scenario name"),
        ({"kind": "scenario", "scenario": "--root"}, "starts with '-'"),
    ],
)
def test_a_bad_request_is_one_sentence(request_: dict[str, object], says: str) -> None:
    with pytest.raises(UsageError, match=says):
        LaunchRequest.from_json(request_)


def test_a_kind_the_adapter_does_not_run_is_refused() -> None:
    with pytest.raises(UnsupportedRunKindError):
        LaunchRequest.from_json({"kind": "suite", "suite": "x"})


def test_a_collection_ignores_a_scenario_s_options() -> None:
    request = LaunchRequest.from_json({"kind": "collection", "collection": "c", "step": "x"})
    assert request.step is False and "--step" not in request.args()


def test_the_one_table_of_limits() -> None:
    assert LIMITS == {"workers": (1, 64), "retries": (0, 10)}
    assert check_limit("workers", 64) == 64
    for bad in (65, 0, 1.5, "2", None, False):
        with pytest.raises(UsageError, match="workers must be a whole number from 1 to 64"):
            check_limit("workers", bad)
