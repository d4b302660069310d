"""runner.launch.adapter: a RunRequest → argv and environment, pure."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pytest

from runner import protocol
from runner.errors import RunnerAdapterNotFoundError, UnsupportedRunKindError, UsageError
from runner.launch.adapter import RunnerAdapter

ADAPTER = RunnerAdapter()


def test_identity() -> None:
    assert ADAPTER.name == "@unotest/web"
    assert ADAPTER.supported_kinds == ("scenario", "collection")


def test_a_plain_scenario_run() -> None:
    assert ADAPTER.build_args({"kind": "scenario", "scenario": "smoke"}) == ["e2e", "smoke"]


def test_a_debug_scenario_run_with_breakpoints_headed() -> None:
    request: protocol.ScenarioRunRequest = {
        "kind": "scenario",
        "scenario": "auth/login",
        "debug": True,
        "headed": True,
        "breakpoints": ["10:4", "12:1"],
    }
    assert ADAPTER.build_args(request) == [
        "e2e",
        "auth/login",
        "--debug",
        "--break",
        "10:4",
        "--break",
        "12:1",
        "--headed",
    ]


def test_breakpoints_are_ignored_without_debug() -> None:
    request: protocol.ScenarioRunRequest = {
        "kind": "scenario",
        "scenario": "smoke",
        "breakpoints": ["3:1"],
    }
    assert ADAPTER.build_args(request) == ["e2e", "smoke"]


def test_a_collection_run() -> None:
    assert ADAPTER.build_args({"kind": "collection", "collection": "nightly"}) == [
        "collection",
        "nightly",
        "--workers",
        "1",
    ]
    request: protocol.CollectionRunRequest = {
        "kind": "collection",
        "collection": "nightly",
        "workers": 3,
        "bail": True,
        "headed": True,
    }
    assert ADAPTER.build_args(request) == [
        "collection",
        "nightly",
        "--workers",
        "3",
        "--bail",
        "--headed",
    ]


def test_an_unsupported_kind_names_the_kind_and_the_adapter() -> None:
    request = cast(protocol.RunRequest, {"kind": "device", "scenario": "x"})
    with pytest.raises(UnsupportedRunKindError) as caught:
        ADAPTER.build_args(request)
    assert "'device'" in str(caught.value)
    assert "@unotest/web" in str(caught.value)
    assert (caught.value.kind, caught.value.adapter_name) == ("device", "@unotest/web")
    with pytest.raises(UnsupportedRunKindError):
        ADAPTER.build_env(request)


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        ({"scenario": "smoke"}, "a run request needs its kind: 'scenario' or 'collection'"),
        ({"kind": "scenario"}, "needs a scenario name"),
        ({"kind": "scenario", "scenario": ""}, "needs a scenario name"),
        ({"kind": "scenario", "scenario": "--root=/"}, "starts with '-'"),
        ({"kind": "scenario", "scenario": "s", "debug": "yes"}, "debug must be true or false"),
        (
            {"kind": "scenario", "scenario": "s", "debug": True, "breakpoints": "3:1"},
            "breakpoints must be a list",
        ),
        (
            {"kind": "scenario", "scenario": "s", "debug": True, "breakpoints": ["--step"]},
            "is not a breakpoint",
        ),
        ({"kind": "collection", "collection": "c", "workers": 0}, "workers must be"),
        ({"kind": "collection", "collection": "c", "workers": True}, "workers must be"),
        ({"kind": "collection", "collection": "c", "workers": "2"}, "workers must be"),
    ],
)
def test_malformed_requests_are_refused_in_one_sentence(
    request_: dict[str, object], message: str
) -> None:
    with pytest.raises(UsageError, match=message):
        ADAPTER.build_args(cast(protocol.RunRequest, request_))


def test_the_environment_sends_output_to_the_run_directory_and_drops_an_owner() -> None:
    env = ADAPTER.build_env({"kind": "scenario", "scenario": "smoke"})
    assert env == {
        "UNOTEST_OUTPUT_TO_RUN_DIR": "1",
        "PYTHONSAFEPATH": "1",
        "UNOTEST_OWNER_PID": None,
    }


def test_the_command_runs_this_python_s_unotest() -> None:
    command = ADAPTER.resolve_bin()
    assert Path(command[0]).name == "unotest" or command[1:] == ["-m", "unotest"]
    assert Path(command[0]).is_absolute()


def test_without_a_unotest_to_run_the_adapter_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.executable", str(tmp_path / "python3"))
    assert ADAPTER.resolve_bin() == [str(tmp_path / "python3"), "-m", "unotest"]
    monkeypatch.setattr("importlib.util.find_spec", lambda name: None)
    with pytest.raises(RunnerAdapterNotFoundError, match="the runner unotest cannot be found"):
        ADAPTER.resolve_bin()
