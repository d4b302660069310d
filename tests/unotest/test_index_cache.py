"""The project index cache (``runner.project.index_cache``, ``unotest/.cache/index.json``).

``list`` and ``check`` print the same bytes from the cache as without it; an edited file
is read again; a corrupt cache or one of another version is rebuilt without a word;
processes at once never see half a file; the cache is plain JSON.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from cli_helpers import run, write
from sites import scenario_source

from runner.project import index_cache
from runner.project.index import Project, ProjectIndex
from runner.project.index_cache import cache_path, load_summary

E2E = "unotest/e2e"
REPO = Path(__file__).resolve().parents[2]


def scenario(slug: str, body: str = '  goto("/")\n', title: str | None = None) -> str:
    return scenario_source(slug, body, title=title)


# A project with something of every kind `list` and `check` print: scenarios in folders,
# helpers, collections (one with an orphan entry, one badly named, one .yml), a syntax
# error, checker problems, a duplicate id, an ignored file, a non-UTF-8 file.
RICH: dict[str, str | bytes] = {
    f"{E2E}/smoke.test.js": scenario("smoke", '  goto("/")\n  sign_in("ann", "pw")\n'),
    f"{E2E}/auth/login.test.js": scenario("auth-login", '  expect_visible(text("Hi"))\n'),
    f"{E2E}/auth/broken.test.js": scenario("auth-broken", "  let x = (1 + \n"),
    f"{E2E}/shop/unknown.test.js": scenario("shop-unknown", "  nope(1)\n  sign_in(1)\n"),
    f"{E2E}/shop/again.test.js": scenario("smoke", '  goto("/again")\n', title="Again"),
    f"{E2E}/shop/notes.js": "// not a scenario\n",
    f"{E2E}/shop/latin1.test.js": b"// id-latin\n// caf\xe9\n",
    f"{E2E}/_helpers/auth.js": (
        'function sign_in(user, password) {\n  fill("User", user)\n  fill("Pass", password)\n}\n'
        'function sign_out() {\n  click("Out")\n}\n'
    ),
    f"{E2E}/_helpers/bad.js": "function oops( {\n}\n",
    f"{E2E}/_collections/nightly.yaml": (
        "description: every night\nscenarios:\n  - smoke\n  - gone\n  - smoke\n"
    ),
    f"{E2E}/_collections/Bad Name.yaml": "scenarios: []\n",
    f"{E2E}/_collections/old.yml": "scenarios: []\n",
    f"{E2E}/_collections/weird.yaml": "scenarios: 3\n",
}

COMMANDS = (
    ("list",),
    ("list", "--json"),
    ("check",),
    ("check", "--json"),
    ("check", f"{E2E}/shop"),
)


def outputs(root: Path) -> list[tuple[int, str, str]]:
    return [(r.code, r.out, r.err) for r in (run(root, *cmd) for cmd in COMMANDS)]


def no_parse(*args: object, **kwargs: object) -> ProjectIndex:
    raise AssertionError("the project was parsed although nothing changed")


# --- warm equals cold --------------------------------------------------------------


def test_warm_output_is_byte_for_byte_the_cold_output(tmp_path: Path) -> None:
    write(tmp_path, RICH)
    cold = []
    for cmd in COMMANDS:
        # each command cold: no cache before it
        cache = tmp_path / "unotest" / ".cache"
        if cache.exists():
            for f in cache.iterdir():
                f.unlink()
        r = run(tmp_path, *cmd)
        cold.append((r.code, r.out, r.err))
    assert cache_path(Project(tmp_path)).is_file()
    warm = outputs(tmp_path)
    assert warm == cold
    assert warm == outputs(tmp_path)
    # the rich project really shows problems of every kind
    assert "SyntaxError" in cold[2][1] and "already used" in cold[2][1]
    assert "nope" in cold[2][1] and "not UTF-8" in cold[2][1]


def test_warm_summary_equals_cold_and_needs_no_parser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, RICH)
    project = Project(tmp_path)
    cold = load_summary(project)
    monkeypatch.setattr(ProjectIndex, "load", no_parse)
    warm = load_summary(project)
    assert warm == cold
    monkeypatch.undo()
    index = ProjectIndex.load(project)
    assert warm.errors(check=True) == index.errors
    assert warm.errors(check=False) == ProjectIndex.load(project, check=False).errors
    assert warm.scenario_metas == index.scenario_metas
    assert warm.helper_metas() == index.helper_metas()
    assert [c for c in warm.collections] == [e.meta for e in index.collections.values()]
    assert warm.files == index.files
    assert warm.warnings == index.warnings
    assert warm.orphan_warnings == index.orphan_warnings()


def test_list_and_check_of_an_unchanged_project_parse_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from unotest.cli import main

    write(tmp_path, RICH)
    monkeypatch.chdir(tmp_path)
    assert main(["list"]) == 0
    cold = capsys.readouterr()
    monkeypatch.setattr(ProjectIndex, "load", no_parse)
    assert main(["list"]) == 0
    assert capsys.readouterr() == cold
    assert main(["check", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["errors"]


# --- what changes is read again ----------------------------------------------------------


def test_an_edited_scenario_is_read_again_and_its_new_problem_shown(tmp_path: Path) -> None:
    write(tmp_path, RICH)
    first = run(tmp_path, "check")
    assert "undefined_thing" not in first.out
    write(tmp_path, {f"{E2E}/auth/login.test.js": scenario("auth-login", "  undefined_thing()\n")})
    second = run(tmp_path, "check")
    assert f"{E2E}/auth/login.test.js:5:2: " in second.out
    assert "undefined_thing" in second.out
    write(tmp_path, {f"{E2E}/auth/login.test.js": scenario("auth-login", "  let = \n")})
    listed = json.loads(run(tmp_path, "list", "--json").out)
    assert any(
        e["path"] == f"{E2E}/auth/login.test.js" and "SyntaxError" in e["message"]
        for e in listed["errors"]
    )


def test_an_edited_helper_changes_every_scenarios_check(tmp_path: Path) -> None:
    write(tmp_path, RICH)
    assert "sign_in" not in run(tmp_path, "check", f"{E2E}/smoke.test.js").out
    write(tmp_path, {f"{E2E}/_helpers/auth.js": "function sign_in(user) {\n}\n"})
    out = run(tmp_path, "check", f"{E2E}/smoke.test.js").out
    assert "sign_in" in out


@pytest.mark.parametrize(
    "change",
    ["add", "remove", "rename", "collection"],
)
def test_added_removed_renamed_files_are_noticed(tmp_path: Path, change: str) -> None:
    write(tmp_path, RICH)
    project = Project(tmp_path)
    load_summary(project)
    e2e = tmp_path / E2E
    if change == "add":
        write(tmp_path, {f"{E2E}/new.test.js": scenario("new")})
    elif change == "remove":
        (e2e / "smoke.test.js").unlink()
    elif change == "rename":
        (e2e / "smoke.test.js").rename(e2e / "smoke2.test.js")
    else:
        write(tmp_path, {f"{E2E}/_collections/nightly.yaml": "scenarios:\n  - smoke\n"})
    assert load_summary(project) == index_cache.summarize(ProjectIndex.load(project, check=False))


def test_another_grammar_or_checker_version_is_a_miss(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, RICH)
    project = Project(tmp_path)
    load_summary(project)
    monkeypatch.setattr(index_cache, "_version_memo", ["another version"])
    calls: list[int] = []
    real = ProjectIndex.load

    def counting(project: Project, check: bool = True) -> ProjectIndex:
        calls.append(1)
        return real(project, check)

    monkeypatch.setattr(ProjectIndex, "load", counting)
    load_summary(project)
    assert calls == [1]
    load_summary(project)
    assert calls == [1]
    assert json.loads(cache_path(project).read_bytes())["version"] == "another version"


def test_the_version_hashes_the_grammar_and_the_parser() -> None:
    names = {p.name for p in (REPO / "dsl").iterdir()}
    assert {"grammar.lark", "parser.py", "checker.py", "builtins.py"} <= names
    source = (REPO / "runner" / "project" / "index_cache.py").read_text(encoding="utf-8")
    assert '".lark"' in source and '"runner/project/signatures.py"' in source


# --- corrupt or foreign caches -------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"\x80\x04\x95garbage",
        b"{not json",
        b"[]",
        b'{"format": "unotest-index-cache"}',
        b"null",
        "KEEP-HALF",
        "WRONG-TYPES",
        "OTHER-VERSION",
        "OTHER-FORMAT",
    ],
)
def test_a_corrupt_or_foreign_cache_is_rebuilt_silently(
    tmp_path: Path, content: bytes | str
) -> None:
    write(tmp_path, RICH)
    project = Project(tmp_path)
    path = cache_path(project)
    cold = outputs(tmp_path)
    good = path.read_bytes()
    if content == "KEEP-HALF":
        data = good[: len(good) // 2]
    elif content in ("WRONG-TYPES", "OTHER-VERSION", "OTHER-FORMAT"):
        doc = json.loads(good)
        if content == "WRONG-TYPES":
            doc["summary"]["parse_errors"][0][1] = "one"
        elif content == "OTHER-VERSION":
            doc["version"] = "0" * 64
        else:
            doc["format"] = "something-else"
        data = json.dumps(doc).encode()
    else:
        assert isinstance(content, bytes)
        data = content
    path.write_bytes(data)
    assert outputs(tmp_path) == cold
    assert path.read_bytes() != data
    assert json.loads(path.read_bytes())["format"] == "unotest-index-cache"


def test_a_cache_folder_that_cannot_be_written_is_only_slower(tmp_path: Path) -> None:
    write(tmp_path, RICH)
    # a file where the folder should be: the cache cannot be written, the command works
    (tmp_path / "unotest" / ".cache").write_text("in the way", encoding="utf-8")
    expected = index_cache.summarize(ProjectIndex.load(Project(tmp_path), check=False))
    assert load_summary(Project(tmp_path)) == expected
    r = run(tmp_path, "check", "--json")
    assert r.code == 1 and r.err == ""


def test_a_project_without_a_unotest_folder_gets_none(tmp_path: Path) -> None:
    write(tmp_path, {"unotest.config.yaml": "baseURL: http://127.0.0.1:9\n"})
    for _ in range(2):
        r = run(tmp_path, "check")
        assert r.code == 0, r
        assert "0 scenarios" in r.out
    assert not (tmp_path / "unotest").exists()


def test_a_cache_copied_to_another_project_root_is_not_used(tmp_path: Path) -> None:
    first = tmp_path / "a"
    second = tmp_path / "b"
    write(first, RICH)
    write(second, {**RICH, f"{E2E}/smoke.test.js": scenario("smoke", "  nothing_here()\n")})
    load_summary(Project(first))
    (second / "unotest" / ".cache").mkdir()
    cache_path(Project(second)).write_bytes(cache_path(Project(first)).read_bytes())
    assert "nothing_here" in run(second, "check").out


# --- several processes at once --------------------------------------------------------


def test_processes_at_once_all_print_the_same(tmp_path: Path) -> None:
    write(tmp_path, RICH)
    expected = run(tmp_path, "list", "--json").out
    for _ in range(2):
        for f in (tmp_path / "unotest" / ".cache").iterdir():
            f.unlink()
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "unotest", "list", "--json"],
                cwd=tmp_path,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(4)
        ]
        for proc in procs:
            out, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err
            assert out == expected
    leftovers = sorted(p.name for p in (tmp_path / "unotest" / ".cache").iterdir())
    assert leftovers == ["index.json"]  # no temp file left behind


def test_a_reader_never_sees_half_a_cache_file(tmp_path: Path) -> None:
    write(tmp_path, RICH)
    project = Project(tmp_path)
    summary = load_summary(project)
    path = cache_path(project)
    version = json.loads(path.read_bytes())["version"]
    big = index_cache.IndexSummary(
        **{**summary.__dict__, "warnings": [f"w{i}" * 50 for i in range(5000)]}
    )
    stop = threading.Event()
    seen: list[str] = []
    bad: list[bytes] = []

    def writer() -> None:
        i = 0
        while not stop.is_set():
            index_cache._write(path, version, f"key{i % 2}", big if i % 2 else summary)
            i += 1

    def reader() -> None:
        while not stop.is_set():
            data = path.read_bytes()
            try:
                seen.append(json.loads(data)["key"])
            except ValueError:
                bad.append(data[:80])

    threads = [threading.Thread(target=writer), threading.Thread(target=writer)]
    threads += [threading.Thread(target=reader), threading.Thread(target=reader)]
    for t in threads:
        t.start()
    stop.wait(1.5)
    stop.set()
    for t in threads:
        t.join(timeout=30)
    assert bad == []
    assert len(seen) > 10
    # and what a reader takes from it is either summary, whole
    for key, expected in (("key0", summary), ("key1", big)):
        index_cache._write(path, version, key, expected)
        assert index_cache._read(path, version, key) == expected


# --- plain data only ------------------------------------------------------------------


def test_the_cache_is_plain_json_never_an_executable_format(tmp_path: Path) -> None:
    write(tmp_path, RICH)
    run(tmp_path, "list")
    data = cache_path(Project(tmp_path)).read_bytes()
    assert data.startswith(b"{")
    assert not data.startswith(b"\x80")  # pickle's protocol marker
    doc = json.loads(data)
    assert set(doc) == {"format", "version", "key", "summary"}
    module = ast.parse((REPO / "runner" / "project" / "index_cache.py").read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(module):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module.split(".")[0])
    assert not imported & {"pickle", "marshal", "shelve", "dill", "cloudpickle", "yaml"}
    source = (REPO / "runner" / "project" / "index_cache.py").read_text(encoding="utf-8")
    assert "eval(" not in source


def test_the_cache_folder_is_gitignored(tmp_path: Path) -> None:
    assert "**/unotest/.cache/" in (REPO / ".gitignore").read_text(encoding="utf-8").splitlines()
    r = run(tmp_path, "init", "proj")
    assert r.code == 0, r
    lines = (tmp_path / "proj" / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert "unotest/.cache/" in lines
