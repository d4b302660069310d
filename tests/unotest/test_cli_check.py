"""``unotest check`` as a user runs it: a subprocess in a project built in tmp_path.

Every test also asserts that no Python traceback reaches stderr (runner.md §8).
"""

import json
import re
from pathlib import Path

import pytest
from cli_helpers import run, write
from sites import scenario_source

# --- helpers -------------------------------------------------------------------


def scenario(slug: str, body: str = '  goto("/")\n', fn: str = "test_it") -> str:
    return scenario_source(slug, body, fn=fn)


E2E = "unotest/e2e"

CLEAN = {
    f"{E2E}/smoke.test.js": scenario("smoke", '  goto("/")\n  sign_in("ann", "pw")\n'),
    f"{E2E}/auth/login.test.js": scenario("auth-login", '  expect_visible(text("Hi"))\n'),
    f"{E2E}/_helpers/auth.js": (
        'function sign_in(user, password) {\n  fill("User", user)\n  fill("Pass", password)\n}\n'
    ),
    f"{E2E}/_collections/nightly.yaml": "description: every night\nscenarios:\n  - smoke\n",
}

# `path:line:col: message`
LOCATION = re.compile(r"^(?P<path>\S.*?):(?P<line>\d+):(?P<col>\d+): (?P<msg>.+)$")


def problems(out: str) -> list[tuple[str, int, int, str]]:
    """Every ``path:line:col: message`` line of ``check`` output."""
    found = []
    for line in out.splitlines():
        m = LOCATION.match(line)
        if m:
            found.append((m["path"], int(m["line"]), int(m["col"]), m["msg"]))
    return found


def caret_follows(out: str, head: str) -> None:
    """The line after ``head`` shows source, the next one a caret."""
    lines = out.splitlines()
    i = next(i for i, line in enumerate(lines) if line.startswith(head))
    assert lines[i + 1].startswith("    "), lines[i : i + 3]
    assert lines[i + 2].strip() == "^", lines[i : i + 3]


# --- a clean project ---------------------------------------------------------------


def test_clean_project_exits_0_with_summary(tmp_path: Path) -> None:
    write(tmp_path, CLEAN)
    r = run(tmp_path, "check")
    assert r.code == 0, r
    assert r.out.strip() == "ok: 2 scenarios, 1 helper file, 1 collection, no problems"
    assert r.err == ""


def test_clean_project_json(tmp_path: Path) -> None:
    write(tmp_path, CLEAN)
    r = run(tmp_path, "check", "--json")
    assert r.code == 0
    data = json.loads(r.out)
    assert data == {"ok": True, "errors": [], "warnings": []}


def test_check_from_a_subfolder_finds_the_root(tmp_path: Path) -> None:
    write(tmp_path, CLEAN)
    r = run(tmp_path / E2E / "auth", "check")
    assert r.code == 0, r
    assert "2 scenarios" in r.out


# --- every error, each placed -------------------------------------------------------


BROKEN = {
    f"{E2E}/a.test.js": scenario(
        "a",
        '  clik(css("#go"))\n  click()\n  sign_in("only-one")\n  expect_visble(text("x"))\n',
    ),
    f"{E2E}/deep/b.test.js": scenario("b", '  goto("/", {}, 3)\n  nope()\n'),
    f"{E2E}/c.test.js": scenario("c", '  goto("/"\n'),
    f"{E2E}/d.test.js": "// id-d\n// no colour line follows\nfunction test_d() {}\n",
    f"{E2E}/_helpers/auth.js": "function sign_in(user, password) {\n  fill(user)\n}\n",
}


def test_broken_folder_reports_every_error(tmp_path: Path) -> None:
    write(tmp_path, BROKEN)
    r = run(tmp_path, "check")
    assert r.code == 1, r
    found = problems(r.out)
    by_file: dict[str, list[tuple[int, int, str]]] = {}
    for path, line, col, msg in found:
        by_file.setdefault(path, []).append((line, col, msg))
    assert set(by_file) == {
        f"{E2E}/a.test.js",
        f"{E2E}/deep/b.test.js",
        f"{E2E}/c.test.js",
        f"{E2E}/d.test.js",
        f"{E2E}/_helpers/auth.js",
    }
    assert [(line, col) for line, col, _ in by_file[f"{E2E}/a.test.js"]] == [
        (5, 2),
        (6, 2),
        (7, 2),
        (8, 2),
    ]
    assert len(by_file[f"{E2E}/deep/b.test.js"]) == 2
    assert by_file[f"{E2E}/d.test.js"][0][:2] == (3, 0)
    assert "#RRGGBB" in by_file[f"{E2E}/d.test.js"][0][2]
    assert "fill() takes 2 to 3 arguments but got 1" in by_file[f"{E2E}/_helpers/auth.js"][0][2]
    # the summary counts them all
    assert f"{len(found)} problems in 5 files" in r.out
    # every problem that has a source line shows it with a caret
    caret_follows(r.out, f"{E2E}/a.test.js:5:2:")
    caret_follows(r.out, f"{E2E}/c.test.js:")
    caret_follows(r.out, f"{E2E}/_helpers/auth.js:2:2:")


def test_unknown_function_did_you_mean(tmp_path: Path) -> None:
    write(tmp_path, {f"{E2E}/a.test.js": scenario("a", '  clik(css("#go"))\n')})
    r = run(tmp_path, "check")
    assert r.code == 1
    assert problems(r.out) == [
        (
            f"{E2E}/a.test.js",
            5,
            2,
            "ReferenceError: 'clik' is not a function, helper or built-in (did you mean 'click'?)",
        )
    ]
    assert '      clik(css("#go"))\n      ^' in r.out


def test_unknown_helper_did_you_mean(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            f"{E2E}/a.test.js": scenario("a", "  sign_on()\n"),
            f"{E2E}/_helpers/auth.js": "function sign_in() {\n}\n",
        },
    )
    r = run(tmp_path, "check")
    assert r.code == 1
    assert "did you mean 'sign_in'?" in r.out


def test_wrong_arity_of_builtin(tmp_path: Path) -> None:
    body = (
        "  click()\n  reload(1)\n"
        # an expectation's own {timeout} is one more argument, and no more than one
        '  expect_visible("Saved", {timeout: 5000})\n'
        '  expect_text("#a", "b", {timeout: 5000}, 1)\n'
    )
    write(tmp_path, {f"{E2E}/a.test.js": scenario("a", body)})
    r = run(tmp_path, "check")
    assert r.code == 1
    msgs = [p[3] for p in problems(r.out)]
    assert msgs == [
        "TypeError: click() takes 1 to 2 arguments but got 0",
        "TypeError: reload() takes 0 arguments but got 1",
        "TypeError: expect_text() takes 2 to 3 arguments but got 4",
    ]


def test_wrong_arity_of_helper(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            f"{E2E}/a.test.js": scenario("a", '  sign_in("ann")\n  sign_in("a", "b", "c")\n'),
            f"{E2E}/_helpers/auth.js": "function sign_in(user, password) {\n}\n",
        },
    )
    r = run(tmp_path, "check")
    assert r.code == 1
    assert [p[3] for p in problems(r.out)] == [
        "TypeError: sign_in() takes 2 arguments but got 1",
        "TypeError: sign_in() takes 2 arguments but got 3",
    ]


def test_duplicate_ids_name_both_files_and_both_are_still_checked(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            f"{E2E}/one.test.js": scenario("same"),
            f"{E2E}/sub/two.test.js": scenario("same", "  nope()\n"),
        },
    )
    r = run(tmp_path, "check")
    assert r.code == 1
    found = problems(r.out)
    dup = [p for p in found if "already used" in p[3]]
    assert len(dup) == 1
    path, line, _col, msg = dup[0]
    assert path == f"{E2E}/sub/two.test.js" and line == 1
    assert f"{E2E}/one.test.js" in msg and "id-same" in msg
    # the second file's body is checked too: no error hides behind another
    assert any(p[0] == f"{E2E}/sub/two.test.js" and "'nope'" in p[3] for p in found)


def test_helper_declared_in_two_files_names_both(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            f"{E2E}/_helpers/a.js": "function log_in() {\n}\n",
            f"{E2E}/_helpers/b.js": "\nfunction log_in() {\n}\n",
        },
    )
    r = run(tmp_path, "check")
    assert r.code == 1
    [(path, line, col, msg)] = problems(r.out)
    assert (path, line, col) == (f"{E2E}/_helpers/b.js", 2, 9)
    assert f"{E2E}/_helpers/a.js:1" in msg and f"{E2E}/_helpers/b.js:2" in msg
    assert "log_in" in msg


def test_helper_shadowing_a_builtin(tmp_path: Path) -> None:
    write(tmp_path, {f"{E2E}/_helpers/a.js": "function click(x) {\n}\n"})
    r = run(tmp_path, "check")
    assert r.code == 1
    assert "shadow the built-in click()" in r.out


def test_binary_and_non_utf8_files(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            f"{E2E}/ok.test.js": scenario("ok"),
            f"{E2E}/image.test.js": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
            f"{E2E}/latin.test.js": "// id-latin\n// café\n// #000000\n".encode("latin-1"),
            f"{E2E}/_helpers/blob.js": b"\x00\x01\x02",
        },
    )
    r = run(tmp_path, "check")
    assert r.code == 1
    found = {p[0]: p for p in problems(r.out)}
    assert set(found) == {
        f"{E2E}/image.test.js",
        f"{E2E}/latin.test.js",
        f"{E2E}/_helpers/blob.js",
    }
    assert "binary file" in found[f"{E2E}/image.test.js"][3]
    assert "binary file" in found[f"{E2E}/_helpers/blob.js"][3]
    latin = found[f"{E2E}/latin.test.js"]
    assert latin[1:3] == (2, 6)
    assert "not UTF-8" in latin[3]
    # one sentence each: no raw bytes of the binary file on the terminal
    assert "\x00" not in r.out and "IHDR" not in r.out


def test_control_characters_in_source_are_not_echoed(tmp_path: Path) -> None:
    write(tmp_path, {f"{E2E}/a.test.js": scenario("a", '  nope("\x1b[31mred")\n')})
    r = run(tmp_path, "check")
    assert r.code == 1
    assert "\x1b" not in r.out


def test_a_very_long_line_is_shown_around_the_column(tmp_path: Path) -> None:
    body = "  let x = " + " + ".join(["1"] * 400) + " + nope()\n"
    write(tmp_path, {f"{E2E}/a.test.js": scenario("a", body)})
    r = run(tmp_path, "check")
    assert r.code == 1
    shown, caret = r.out.splitlines()[1:3]
    assert len(shown) < 200
    assert "nope" in shown
    assert shown[len(caret) - 1 : len(caret) + 3] == "nope"


def test_stray_js_file_in_e2e_is_a_warning(tmp_path: Path) -> None:
    write(tmp_path, {**CLEAN, f"{E2E}/login.js": "function x() {}\n"})
    r = run(tmp_path, "check")
    assert r.code == 0
    assert f"warning: {E2E}/login.js: ignored" in r.err


# --- check PATH ---------------------------------------------------------------------


def test_check_path_limited_to_one_file(tmp_path: Path) -> None:
    write(tmp_path, BROKEN)
    r = run(tmp_path, "check", f"{E2E}/deep/b.test.js")
    assert r.code == 1
    assert {p[0] for p in problems(r.out)} == {f"{E2E}/deep/b.test.js"}
    assert "2 problems in 1 file" in r.out


def test_check_path_relative_to_a_subfolder(tmp_path: Path) -> None:
    write(tmp_path, BROKEN)
    r = run(tmp_path / E2E / "deep", "check", "b.test.js")
    assert r.code == 1
    assert {p[0] for p in problems(r.out)} == {f"{E2E}/deep/b.test.js"}


def test_check_clean_path_in_a_broken_project(tmp_path: Path) -> None:
    write(tmp_path, {**BROKEN, f"{E2E}/fine.test.js": scenario("fine")})
    r = run(tmp_path, "check", f"{E2E}/fine.test.js")
    assert r.code == 0, r
    assert r.out.strip() == "ok: 1 file checked, no problems"


def test_check_a_folder_path(tmp_path: Path) -> None:
    write(tmp_path, BROKEN)
    r = run(tmp_path, "check", f"{E2E}/deep")
    assert r.code == 1
    assert {p[0] for p in problems(r.out)} == {f"{E2E}/deep/b.test.js"}


def test_check_several_paths_and_option_between_them(tmp_path: Path) -> None:
    write(tmp_path, BROKEN)
    r = run(tmp_path, "check", f"{E2E}/c.test.js", "--json", f"{E2E}/d.test.js")
    assert r.code == 1
    data = json.loads(r.out)
    assert {e["path"] for e in data["errors"]} == {f"{E2E}/c.test.js", f"{E2E}/d.test.js"}


def test_check_a_file_that_is_not_a_scenario(tmp_path: Path) -> None:
    write(tmp_path, {**CLEAN, "README.md": "# hi\n"})
    r = run(tmp_path, "check", "README.md")
    assert r.code == 0
    assert "README.md: not a scenario, helper or collection" in r.err


def test_check_nonexistent_path_exits_2(tmp_path: Path) -> None:
    write(tmp_path, CLEAN)
    r = run(tmp_path, "check", "missing.test.js")
    assert r.code == 2
    assert r.out == ""
    assert r.err.strip() == "unotest: missing.test.js: no such file or folder"


# --- loose files, no project ----------------------------------------------------------


def test_check_loose_folder_outside_any_project(tmp_path: Path) -> None:
    loose = write(
        tmp_path / "loose",
        {
            "a.test.js": scenario("a", '  clik("x")\n  sign_in("x")\n'),
            "b.test.js": scenario("b", '  goto("/"\n'),
            "bin.test.js": b"\x00\x01binary",
            "helpers.js": "function sign_in(user, password) {\n}\n",
        },
    )
    r = run(loose, "check", ".")
    assert r.code == 1, r
    found = problems(r.out)
    assert {p[0] for p in found} == {"a.test.js", "b.test.js", "bin.test.js"}
    msgs = " | ".join(p[3] for p in found)
    assert "did you mean 'click'?" in msgs
    # helpers among the loose files count
    assert "sign_in() takes 2 arguments but got 1" in msgs
    assert "binary file" in msgs


def test_check_loose_file_by_path_from_elsewhere(tmp_path: Path) -> None:
    write(tmp_path / "loose", {"a.test.js": scenario("a", "  click()\n")})
    r = run(tmp_path, "check", "loose/a.test.js")
    assert r.code == 1
    assert problems(r.out) == [
        ("loose/a.test.js", 5, 2, "TypeError: click() takes 1 to 2 arguments but got 0")
    ]


def test_check_loose_clean_file(tmp_path: Path) -> None:
    write(tmp_path, {"a.test.js": scenario("a")})
    r = run(tmp_path, "check", "a.test.js")
    assert r.code == 0
    assert r.out.strip() == "ok: no problems"


def test_check_loose_non_js_file(tmp_path: Path) -> None:
    write(tmp_path, {"notes.txt": "hello\n"})
    r = run(tmp_path, "check", "notes.txt")
    assert r.code == 1
    assert "notes.txt:1:0: not a scenario" in r.out


def test_check_outside_any_project_without_args(tmp_path: Path) -> None:
    r = run(tmp_path, "check")
    assert r.code == 2
    assert r.out == ""
    assert r.err.count("\n") == 1
    assert "no unotest project found" in r.err
    assert "unotest init" in r.err


# --- --json ----------------------------------------------------------------------------


def test_json_output_shape(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            **BROKEN,
            f"{E2E}/_collections/n.yaml": "scenarios: [a, ghost]\nextra: 1\n",
        },
    )
    r = run(tmp_path, "check", "--json")
    assert r.code == 1
    data = json.loads(r.out)
    assert set(data) == {"ok", "errors", "warnings"}
    assert data["ok"] is False
    assert data["errors"]
    for error in data["errors"]:
        assert set(error) == {"path", "line", "col", "message"}
        assert isinstance(error["path"], str)
        assert isinstance(error["line"], int) and error["line"] >= 1
        assert isinstance(error["col"], int) and error["col"] >= 0
        assert isinstance(error["message"], str) and "\n" not in error["message"]
    assert all(isinstance(w, str) for w in data["warnings"])
    assert any("ghost" in w for w in data["warnings"])
    assert any("extra" in w for w in data["warnings"])
    # JSON mode keeps stderr quiet
    assert r.err == ""
    assert len(data["errors"]) == len(problems(run(tmp_path, "check").out))


# --- collections ----------------------------------------------------------------------


def test_orphan_scenario_in_collection_is_a_warning(tmp_path: Path) -> None:
    write(tmp_path, {**CLEAN, f"{E2E}/_collections/n.yaml": "scenarios: [smoke, smok]\n"})
    r = run(tmp_path, "check")
    assert r.code == 0, r
    assert "no problems" in r.out
    assert (
        f"warning: {E2E}/_collections/n.yaml: scenario 'smok' does not exist and will be "
        "skipped (did you mean 'smoke'?)"
    ) in r.err


@pytest.mark.parametrize(
    ("content", "key", "line"),
    [
        ("scenarios: 3\n", "scenarios", 1),
        ("description: ok\nscenarios: [1, 2]\n", "scenarios", 2),
        ("description: [x]\nscenarios: []\n", "description", 1),
        ("scenarios:\n  - smoke\n  - {a: 1}\n", "scenarios", 3),
        ("description: {a: b}\n", "description", 1),
    ],
)
def test_collection_wrong_types(tmp_path: Path, content: str, key: str, line: int) -> None:
    write(tmp_path, {**CLEAN, f"{E2E}/_collections/bad.yaml": content})
    r = run(tmp_path, "check")
    assert r.code == 1
    [(path, got_line, _col, msg)] = problems(r.out)
    assert path == f"{E2E}/_collections/bad.yaml"
    assert f"'{key}'" in msg
    assert got_line == line


def test_collection_not_a_mapping(tmp_path: Path) -> None:
    write(tmp_path, {**CLEAN, f"{E2E}/_collections/bad.yaml": "- smoke\n- other\n"})
    r = run(tmp_path, "check")
    assert r.code == 1
    assert f"{E2E}/_collections/bad.yaml:1:0: a collection is a mapping" in r.out


def test_empty_collection_is_fine(tmp_path: Path) -> None:
    write(tmp_path, {**CLEAN, f"{E2E}/_collections/empty.yaml": ""})
    r = run(tmp_path, "check")
    assert r.code == 0, r
    assert "2 collections" in r.out


def test_collection_invalid_yaml_has_a_line(tmp_path: Path) -> None:
    bad = "description: x\nscenarios: [a\nb: ]\n"
    write(tmp_path, {**CLEAN, f"{E2E}/_collections/bad.yaml": bad})
    r = run(tmp_path, "check")
    assert r.code == 1
    [(path, line, _col, msg)] = problems(r.out)
    assert path == f"{E2E}/_collections/bad.yaml"
    assert line == 3
    assert msg.startswith("invalid YAML: ")


def test_collection_unknown_key_is_a_warning(tmp_path: Path) -> None:
    write(
        tmp_path,
        {**CLEAN, f"{E2E}/_collections/n.yaml": "scenarios: [smoke]\nparallel: true\n"},
    )
    r = run(tmp_path, "check")
    assert r.code == 0
    assert f"warning: {E2E}/_collections/n.yaml:2: unknown key 'parallel' is ignored" in r.err


def test_collection_repeated_key_is_a_warning(tmp_path: Path) -> None:
    write(tmp_path, {**CLEAN, f"{E2E}/_collections/n.yaml": "scenarios: []\nscenarios: [smoke]\n"})
    r = run(tmp_path, "check")
    assert r.code == 0
    assert "key 'scenarios' is repeated" in r.err


BILLION_LAUGHS = """\
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
scenarios: *i
"""


def test_collection_yaml_bomb_is_refused_quickly(tmp_path: Path) -> None:
    write(tmp_path, {**CLEAN, f"{E2E}/_collections/bomb.yaml": BILLION_LAUGHS})
    r = run(tmp_path, "check", timeout=30)
    assert r.code == 1
    [(path, line, _col, msg)] = problems(r.out)
    assert path == f"{E2E}/_collections/bomb.yaml"
    assert line == 2
    assert "aliases" in msg
    # list survives it too, and leaves the collection out
    r = run(tmp_path, "list", "--json", timeout=30)
    assert r.code == 0
    assert [c["name"] for c in json.loads(r.out)["collections"]] == ["nightly"]


def test_collection_python_tag_is_never_executed(tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    write(
        tmp_path,
        {
            **CLEAN,
            f"{E2E}/_collections/evil.yaml": (
                f'scenarios: !!python/object/apply:os.system ["touch {marker}"]\n'
            ),
        },
    )
    r = run(tmp_path, "check")
    assert r.code == 1
    assert not marker.exists()
    [(path, line, _col, msg)] = problems(r.out)
    assert path == f"{E2E}/_collections/evil.yaml" and line == 1
    assert "'!!python/object/apply:os.system' is not allowed" in msg


@pytest.mark.parametrize(
    ("filename", "reason"),
    [
        (".hidden.yaml", "must not start with '.'"),
        ("a:b.yaml", "must not contain"),
        ("star*.yaml", "must not contain"),
    ],
)
def test_invalid_collection_name(tmp_path: Path, filename: str, reason: str) -> None:
    write(tmp_path, {**CLEAN, f"{E2E}/_collections/{filename}": "scenarios: [smoke]\n"})
    r = run(tmp_path, "check")
    assert r.code == 1
    [(path, _line, _col, msg)] = problems(r.out)
    assert path == f"{E2E}/_collections/{filename}"
    assert msg.startswith(f"collection name '{filename[: -len('.yaml')]}' {reason}")


def test_yml_collection_is_a_warning(tmp_path: Path) -> None:
    write(tmp_path, {**CLEAN, f"{E2E}/_collections/weekly.yml": "scenarios: [smoke]\n"})
    r = run(tmp_path, "check")
    assert r.code == 0
    assert "weekly.yml: ignored" in r.err and "weekly.yaml" in r.err


def test_a_misnamed_config_is_a_warning(tmp_path: Path) -> None:
    """A unotest.config.yml was silently ignored; runs then failed on "no baseURL"."""
    write(tmp_path, {**CLEAN, "unotest.config.yml": "baseURL: http://localhost:3000\n"})
    r = run(tmp_path, "check")
    assert r.code == 0, r
    assert (
        "warning: unotest.config.yml is ignored: the configuration file is "
        "unotest.config.yaml (rename it)\n"
    ) in r.err


def test_a_config_folder_holding_only_a_yml_config_is_named(tmp_path: Path) -> None:
    """No unotest/ folder and only a .yml: "no unotest project found" says why."""
    write(tmp_path, {"unotest.config.yml": "baseURL: http://localhost:3000\n"})
    r = run(tmp_path, "check")
    assert r.code == 2
    assert (
        f"no unotest project found in {tmp_path.resolve()} or above it "
        f"({tmp_path.resolve()}/unotest.config.yml is there: rename it to unotest.config.yaml)"
    ) in r.err
    inner = run(tmp_path, "check", "--root", ".")
    assert "(no unotest/ folder nor unotest.config.yaml) (" in inner.err
    assert "unotest.config.yml is there: rename it to unotest.config.yaml" in inner.err


def test_env_file_problems_are_warnings_as_a_run_says_them(tmp_path: Path) -> None:
    """They were said only once a run started."""
    write(tmp_path, {**CLEAN, "unotest/.env": "USER=ann\nPASSWORD\nnot a line = 1\n"})
    r = run(tmp_path, "check")
    assert r.code == 0, r
    assert "warning: unotest/.env:2: 'PASSWORD' has no '=value'; ignored\n" in r.err
    assert "warning: unotest/.env:3: not a NAME=value line; ignored\n" in r.err
    as_json = json.loads(run(tmp_path, "check", "--json").out)
    assert "unotest/.env:2: 'PASSWORD' has no '=value'; ignored" in as_json["warnings"]
    named = run(tmp_path, "check", "unotest/.env")
    assert "unotest/.env:2: 'PASSWORD' has no '=value'" in named.err
    other = run(tmp_path, "check", f"{E2E}/smoke.test.js")
    assert ".env" not in other.err


def test_a_bad_unotest_base_url_is_one_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not a problem of unotest.config.yaml (no file:line for it): a usage error."""
    write(tmp_path, CLEAN)
    monkeypatch.setenv("UNOTEST_BASE_URL", "localhost:8080")
    r = run(tmp_path, "check")
    assert r.code == 2, r
    assert r.err == (
        "unotest: UNOTEST_BASE_URL must be an http:// or https:// URL such as "
        'http://localhost:3000, got "localhost:8080"\n'
    )


# --- usage errors -------------------------------------------------------------------------


def test_check_unknown_option(tmp_path: Path) -> None:
    write(tmp_path, CLEAN)
    r = run(tmp_path, "check", "--frobnicate")
    assert r.code == 2
    assert r.out == ""
    assert r.err.strip() == (
        "unotest: unrecognized arguments: --frobnicate (see 'unotest check --help')"
    )


def test_check_root_missing_value(tmp_path: Path) -> None:
    r = run(tmp_path, "check", "--root")
    assert r.code == 2
    assert r.err.count("\n") == 1
    assert "--root" in r.err


def test_diagnostic_lines_never_carry_c1_controls_or_line_separators() -> None:
    """A source line is shown one character for one (the caret stays in its column),
    but a CSI (U+009B), an ESC or a U+2028 from the file never reaches the terminal."""
    from dsl.checker import Diagnostic
    from unotest.console import format_diagnostic

    source = 'let x = "\x9b[31m\u2028\x1b"; y'
    shown = format_diagnostic(Diagnostic("a.test.js", 1, source.index("y"), "boom", source))
    assert not any(ch in shown for ch in "\x9b\u2028\x1b")
    head, line, caret = shown.splitlines()
    assert head == f"a.test.js:1:{source.index('y')}: boom"
    assert line.index("y") == caret.index("^")
