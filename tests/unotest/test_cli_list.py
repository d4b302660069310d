"""``unotest list`` as a user runs it: a subprocess in a project built in tmp_path.

The JSON is checked against the protocol's schemas (``protocol_validate``) and key
by key.
"""

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_helpers import run, write
from sites import scenario_source

# --- helpers -------------------------------------------------------------------


def scenario(slug: str, title: str, color: str = "#4f46e5", body: str = '  goto("/")\n') -> str:
    return scenario_source(slug, body, title=title, color=color)


E2E = "unotest/e2e"

PROJECT = {
    f"{E2E}/smoke-welcome.test.js": scenario("smoke-welcome", "Welcome page greets"),
    f"{E2E}/auth/signin-flow.test.js": scenario(
        "auth-signin-flow", "A user signs in", "#059669", '  sign_in("a", "b")\n'
    ),
    # the body is broken but the header is fine: still listed
    f"{E2E}/shop/broken-body.test.js": scenario(
        "shop-broken", "Body does not parse", "#dc2626", '  goto("/"\n'
    ),
    # no usable header: not listed, only an error
    f"{E2E}/no-header.test.js": 'function test_x() {\n  goto("/")\n}\n',
    f"{E2E}/_helpers/auth.js": "function sign_in(user, password) {\n}\n",
    f"{E2E}/_helpers/nested/util.js": "function pause_briefly() {\n  wait(10)\n}\n",
    f"{E2E}/_collections/nightly.yaml": (
        "description: Everything every night\nscenarios:\n  - smoke-welcome\n  - auth/signin-flow\n"
    ),
    f"{E2E}/_collections/bare.yaml": "scenarios: [smoke-welcome, ghost]\n",
}

SCENARIO_KEYS = {"id", "title", "color", "name", "path", "tags"}  # tags: ours, additive
HELPER_KEYS = {"name", "path"}
COLLECTION_KEYS = {"name", "path", "description", "scenarios"}
ERROR_KEYS = {"path", "line", "col", "message"}


def listing(tmp_path: Path) -> dict[str, object]:
    write(tmp_path, PROJECT)
    r = run(tmp_path, "list", "--json")
    assert r.code == 0, r
    data: dict[str, object] = json.loads(r.out)
    return data


# --- --json ------------------------------------------------------------------------


def test_list_json_top_level(tmp_path: Path) -> None:
    data = listing(tmp_path)
    assert set(data) == {"root", "scenarios", "helpers", "collections", "errors", "warnings"}
    assert Path(str(data["root"])) == tmp_path.resolve()


def test_list_json_scenarios(
    tmp_path: Path, protocol_validate: Callable[[str, object], None]
) -> None:
    data = listing(tmp_path)
    scenarios = data["scenarios"]
    assert isinstance(scenarios, list)
    for meta in scenarios:
        assert set(meta) == SCENARIO_KEYS
        assert all(isinstance(v, str) for k, v in meta.items() if k != "tags")
        assert meta["tags"] == []  # no @word in these titles
    by_name = {m["name"]: m for m in scenarios}
    assert set(by_name) == {"smoke-welcome", "auth/signin-flow", "shop/broken-body"}
    assert by_name["auth/signin-flow"] == {
        "id": "auth-signin-flow",
        "title": "A user signs in",
        "color": "#059669",
        "name": "auth/signin-flow",
        "path": f"{E2E}/auth/signin-flow.test.js",
        "tags": [],
    }
    assert by_name["shop/broken-body"]["id"] == "shop-broken"
    for meta in scenarios:
        protocol_validate("ScenarioMeta", meta)


def test_list_json_helpers(
    tmp_path: Path, protocol_validate: Callable[[str, object], None]
) -> None:
    data = listing(tmp_path)
    helpers = data["helpers"]
    assert helpers == [
        {"name": "auth", "path": f"{E2E}/_helpers/auth.js"},
        {"name": "nested/util", "path": f"{E2E}/_helpers/nested/util.js"},
    ]
    for meta in helpers:
        assert set(meta) == HELPER_KEYS
        protocol_validate("HelperMeta", meta)


def test_list_json_collections(
    tmp_path: Path, protocol_validate: Callable[[str, object], None]
) -> None:
    data = listing(tmp_path)
    collections = data["collections"]
    assert isinstance(collections, list)
    by_name = {c["name"]: c for c in collections}
    assert by_name == {
        "bare": {
            "name": "bare",
            "path": f"{E2E}/_collections/bare.yaml",
            "description": None,
            "scenarios": ["smoke-welcome", "ghost"],
        },
        "nightly": {
            "name": "nightly",
            "path": f"{E2E}/_collections/nightly.yaml",
            "description": "Everything every night",
            "scenarios": ["smoke-welcome", "auth/signin-flow"],
        },
    }
    for meta in collections:
        assert set(meta) == COLLECTION_KEYS
        protocol_validate("CollectionMeta", meta)


def test_list_json_parse_errors(tmp_path: Path) -> None:
    data = listing(tmp_path)
    errors = data["errors"]
    assert isinstance(errors, list)
    for error in errors:
        assert set(error) == ERROR_KEYS
        assert isinstance(error["line"], int) and isinstance(error["col"], int)
    by_path = {e["path"]: e for e in errors}
    assert set(by_path) == {f"{E2E}/shop/broken-body.test.js", f"{E2E}/no-header.test.js"}
    assert by_path[f"{E2E}/shop/broken-body.test.js"]["line"] == 6
    header = by_path[f"{E2E}/no-header.test.js"]
    assert (header["line"], header["col"]) == (1, 0)
    assert "id-" in header["message"]


def test_list_json_warnings(tmp_path: Path) -> None:
    data = listing(tmp_path)
    warnings = data["warnings"]
    assert isinstance(warnings, list)
    assert any("ghost" in w and "bare.yaml" in w for w in warnings)


def test_list_does_not_run_the_static_checker(tmp_path: Path) -> None:
    """``list`` reports parse errors; unknown functions are ``check``'s business."""
    write(tmp_path, {f"{E2E}/a.test.js": scenario("a", "A", body="  clik()\n")})
    r = run(tmp_path, "list", "--json")
    assert r.code == 0
    data = json.loads(r.out)
    assert [m["name"] for m in data["scenarios"]] == ["a"]
    assert data["errors"] == []


def test_list_duplicate_id_lists_the_first_only(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            f"{E2E}/a.test.js": scenario("same", "First"),
            f"{E2E}/b.test.js": scenario("same", "Second"),
        },
    )
    data = json.loads(run(tmp_path, "list", "--json").out)
    assert [m["title"] for m in data["scenarios"]] == ["First"]
    [error] = data["errors"]
    assert error["path"] == f"{E2E}/b.test.js"
    assert f"{E2E}/a.test.js" in error["message"]


def test_list_binary_scenario_is_an_error_not_a_crash(tmp_path: Path) -> None:
    write(tmp_path, {f"{E2E}/x.test.js": b"\x00\xff\xfe", f"{E2E}/y.test.js": b"\xff\xfe"})
    data = json.loads(run(tmp_path, "list", "--json").out)
    assert data["scenarios"] == []
    assert [e["path"] for e in data["errors"]] == [f"{E2E}/x.test.js", f"{E2E}/y.test.js"]


def test_list_empty_project(tmp_path: Path) -> None:
    (tmp_path / "unotest").mkdir()
    r = run(tmp_path, "list", "--json")
    assert r.code == 0
    data = json.loads(r.out)
    assert data["scenarios"] == data["helpers"] == data["collections"] == data["errors"] == []


def test_list_json_unicode_is_kept(tmp_path: Path) -> None:
    write(tmp_path, {f"{E2E}/u.test.js": scenario("u", "Café ☕ über")})
    r = run(tmp_path, "list", "--json")
    assert '"Café ☕ über"' in r.out


# --- text -----------------------------------------------------------------------------


def test_list_text(tmp_path: Path) -> None:
    write(tmp_path, PROJECT)
    r = run(tmp_path, "list")
    assert r.code == 0
    assert r.out.startswith(f"project {tmp_path.resolve()}\n")
    assert "scenarios (3)" in r.out
    assert "auth/signin-flow" in r.out and "[id-auth-signin-flow]" in r.out
    assert "helpers (2)" in r.out and "auth: sign_in" in r.out
    assert "collections (2)" in r.out
    assert "nightly (2 scenarios)  Everything every night" in r.out
    assert "errors (2)" in r.out
    assert f"{E2E}/no-header.test.js:1:0:" in r.out
    assert "ghost" in r.err


def test_list_text_counts_a_collection_s_setup_scenarios(tmp_path: Path) -> None:
    write(tmp_path, PROJECT)
    collection = (
        "description: Signed in\nsetup:\n  - auth/signin-flow\nscenarios:\n  - smoke-welcome\n"
    )
    write(tmp_path, {f"{E2E}/_collections/signed.yaml": collection})
    r = run(tmp_path, "list")
    assert "signed (1 scenario after 1 setup scenario)  Signed in" in r.out, r.out


# --- errors ------------------------------------------------------------------------------


def test_list_outside_a_project(tmp_path: Path) -> None:
    r = run(tmp_path, "list")
    assert r.code == 2
    assert r.out == ""
    assert r.err.count("\n") == 1
    assert "unotest init" in r.err


def test_list_with_root(tmp_path: Path) -> None:
    write(tmp_path / "proj", PROJECT)
    (tmp_path / "elsewhere").mkdir()
    r = run(tmp_path / "elsewhere", "list", "--json", "--root", "../proj")
    assert r.code == 0
    assert Path(json.loads(r.out)["root"]) == (tmp_path / "proj").resolve()


@pytest.mark.parametrize("args", [["list", "extra"], ["list", "--bogus"]])
def test_list_usage_errors(tmp_path: Path, args: list[str]) -> None:
    write(tmp_path, PROJECT)
    r = run(tmp_path, *args)
    assert r.code == 2
    assert r.out == ""
    assert r.err.count("\n") == 1
    assert "unotest list --help" in r.err


def test_hidden_files_and_links_out_of_e2e_are_no_project_files(tmp_path: Path) -> None:
    """Issue 32, defect 8: they were listed with a problem and offered Run, though the
    viewer and MCP refuse to open them, and the index parsed a link's target from outside
    the project."""
    project = tmp_path / "proj"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "far.test.js").write_text(scenario("far", "From elsewhere"), encoding="utf-8")
    (outside / "far.js").write_text("function far_helper() {\n  log(1)\n}\n", encoding="utf-8")
    write(
        project,
        {
            f"{E2E}/smoke.test.js": scenario("smoke", "Smoke"),
            f"{E2E}/.hidden.test.js": scenario("hidden", "Hidden"),
            f"{E2E}/inside.test.js": scenario("inside", "Inside"),
        },
    )
    (project / E2E / "far.test.js").symlink_to(outside / "far.test.js")
    (project / E2E / "_helpers").mkdir()
    (project / E2E / "_helpers" / "far.js").symlink_to(outside / "far.js")
    r = run(project, "list", "--json")
    data = json.loads(r.out)
    names = sorted(s["name"] for s in data["scenarios"])
    assert "hidden" not in names and "far" not in names and names[-1] == "smoke", names
    assert data["helpers"] == [] and data["errors"] == [], data
    warned = " ".join(data["warnings"])
    for rel in (f"{E2E}/far.test.js", f"{E2E}/_helpers/far.js"):
        assert f"{rel}: ignored: a symbolic link that leads out of unotest/e2e/" in warned
    assert ".hidden" not in warned
    text = run(project, "list")
    assert f"warning: {E2E}/far.test.js: ignored: a symbolic link" in text.err
