"""Project root discovery and CLI usage errors, run as a user runs them.

The root is the nearest ancestor of the working directory holding ``unotest/`` or
``unotest.config.yaml`` (language.md §1); ``--root DIR`` overrides. A ``unotest/``
that is a Python package (this repository) is not a project.
"""

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from cli_helpers import write
from sites import scenario_source

REPO = Path(__file__).resolve().parents[2]

# --- helpers -------------------------------------------------------------------


@dataclass
class Result:
    code: int
    out: str
    err: str


def run(cwd: Path, *args: str, command: list[str] | None = None) -> Result:
    proc = subprocess.run(
        [*(command or [sys.executable, "-m", "unotest"]), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        timeout=60,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stdout, proc.stdout
    assert "internal error" not in proc.stderr, proc.stderr
    return Result(proc.returncode, proc.stdout, proc.stderr)


def scenario(slug: str) -> str:
    return scenario_source(slug, '  goto("/")\n', title=slug, color="#000000")


def root_of(cwd: Path, *args: str) -> Path:
    r = run(cwd, "list", "--json", *args)
    assert r.code == 0, r
    return Path(json.loads(r.out)["root"])


def one_sentence(err: str) -> str:
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert err.startswith("unotest: "), err
    return err.strip()


# --- discovery ----------------------------------------------------------------------


def test_root_is_the_folder_with_unotest_dir(tmp_path: Path) -> None:
    write(tmp_path, {"unotest/e2e/a.test.js": scenario("a")})
    deep = tmp_path / "src" / "deep" / "er"
    deep.mkdir(parents=True)
    assert root_of(tmp_path) == tmp_path.resolve()
    assert root_of(deep) == tmp_path.resolve()
    assert root_of(tmp_path / "unotest" / "e2e") == tmp_path.resolve()


def test_root_is_the_folder_with_config_file(tmp_path: Path) -> None:
    write(tmp_path, {"unotest.config.yaml": "browser: chromium\n", "sub/x.txt": ""})
    assert root_of(tmp_path / "sub") == tmp_path.resolve()


def test_nearest_ancestor_wins(tmp_path: Path) -> None:
    write(tmp_path, {"unotest/e2e/outer.test.js": scenario("outer")})
    inner = write(tmp_path / "packages" / "web", {"unotest/e2e/inner.test.js": scenario("inner")})
    r = run(inner / "unotest", "list", "--json")
    data = json.loads(r.out)
    assert Path(data["root"]) == inner.resolve()
    assert [m["name"] for m in data["scenarios"]] == ["inner"]


def test_root_override(tmp_path: Path) -> None:
    write(tmp_path / "a", {"unotest/e2e/a.test.js": scenario("a")})
    write(tmp_path / "b", {"unotest/e2e/b.test.js": scenario("b")})
    assert root_of(tmp_path / "a", "--root", str(tmp_path / "b")) == (tmp_path / "b").resolve()
    assert root_of(tmp_path / "a", "--root", "../b") == (tmp_path / "b").resolve()
    r = run(tmp_path / "a", "check", "--root", "../b")
    assert r.code == 0
    assert "1 scenario," in r.out


def test_root_override_to_a_missing_dir(tmp_path: Path) -> None:
    write(tmp_path, {"unotest/e2e/a.test.js": scenario("a")})
    for command in ("list", "check"):
        r = run(tmp_path, command, "--root", "nowhere")
        assert r.code == 2
        assert r.out == ""
        assert one_sentence(r.err) == "unotest: --root nowhere: no such directory"


def test_root_override_to_a_file(tmp_path: Path) -> None:
    write(tmp_path, {"unotest/e2e/a.test.js": scenario("a"), "file.txt": ""})
    r = run(tmp_path, "list", "--root", "file.txt")
    assert r.code == 2
    assert "no such directory" in one_sentence(r.err)


# `python -m` puts the working directory first on sys.path, where a `unotest/` package
# would shadow the real one; -P (3.11+) leaves it out, as the console script does.
ISOLATED = [sys.executable, "-P", "-m", "unotest"]


def test_python_package_named_unotest_is_not_a_project(tmp_path: Path) -> None:
    write(tmp_path, {"unotest/__init__.py": "", "unotest/e2e/x.test.js": scenario("x")})
    r = run(tmp_path, "list", command=ISOLATED)
    assert r.code == 2
    assert "no unotest project found" in one_sentence(r.err)


def test_python_package_inside_a_project_is_skipped_for_the_real_one(tmp_path: Path) -> None:
    write(tmp_path, {"unotest.config.yaml": "", "unotest/e2e/a.test.js": scenario("a")})
    write(tmp_path / "tools", {"unotest/__init__.py": ""})
    r = run(tmp_path / "tools", "list", "--json", command=ISOLATED)
    assert Path(json.loads(r.out)["root"]) == tmp_path.resolve()


def test_this_repository_is_not_a_project(tmp_path: Path) -> None:
    """The checkout holds the ``unotest`` package: running here must not treat it as a project."""
    # copy just the marker layout so an enclosing real project cannot interfere
    write(tmp_path / "repo", {"unotest/__init__.py": "", "pyproject.toml": ""})
    r = run(tmp_path / "repo", "check", command=ISOLATED)
    assert r.code == 2
    assert "unotest init" in one_sentence(r.err)
    assert (REPO / "unotest" / "__init__.py").is_file()


def test_a_file_named_unotest_is_not_a_project(tmp_path: Path) -> None:
    write(tmp_path, {"unotest": "not a folder"})
    r = run(tmp_path, "list")
    assert r.code == 2


def test_no_project_message(tmp_path: Path) -> None:
    r = run(tmp_path, "list")
    assert r.code == 2
    message = one_sentence(r.err)
    assert "no unotest project found" in message
    assert "--root" in message
    assert "'unotest init'" in message


# --- usage errors, version, entry points ------------------------------------------------


def test_unknown_command(tmp_path: Path) -> None:
    r = run(tmp_path, "frobnicate")
    assert r.code == 2
    assert r.out == ""
    message = one_sentence(r.err)
    assert "unknown command 'frobnicate'" in message
    assert "check" in message and "list" in message


def test_unknown_command_did_you_mean(tmp_path: Path) -> None:
    r = run(tmp_path, "chek")
    assert r.code == 2
    assert "did you mean 'check'?" in one_sentence(r.err)


def test_unknown_global_option(tmp_path: Path) -> None:
    r = run(tmp_path, "--frobnicate")
    assert r.code == 2
    assert r.out == ""
    assert one_sentence(r.err) == (
        "unotest: unrecognized arguments: --frobnicate (see 'unotest --help')"
    )


def test_messages_are_not_prefixed_twice(tmp_path: Path) -> None:
    for args in (["bogus"], ["--bogus"], ["check", "--bogus"], ["list", "--root"]):
        r = run(tmp_path, *args)
        assert r.code == 2
        assert "unotest: unotest" not in r.err, r.err


def test_no_command(tmp_path: Path) -> None:
    r = run(tmp_path)
    assert r.code == 2
    assert r.out == ""
    assert r.err.rstrip().endswith("unotest: no command given (see 'unotest --help')")


def test_version(tmp_path: Path) -> None:
    r = run(tmp_path, "--version")
    assert r.code == 0
    assert re.fullmatch(r"unotest \d+\.\d+\.\d+\S*\n", r.out), r.out
    assert r.err == ""


def test_help(tmp_path: Path) -> None:
    r = run(tmp_path, "--help")
    assert r.code == 0
    assert "check" in r.out and "list" in r.out
    r = run(tmp_path, "check", "--help")
    assert r.code == 0
    assert "--json" in r.out and "--root" in r.out


def test_dbg_help_names_every_debugger_command(tmp_path: Path) -> None:
    """The vocabulary is the debugger's (runner.debug.commands): reload and restart were
    missing from this list though ``dbg`` takes them."""
    from runner.debug.commands import COMMANDS

    r = run(tmp_path, "dbg", "--help")
    assert r.code == 0
    listed = r.out.split("COMMAND is one of:", 1)[1]
    words = {item.split()[0] for item in listed.replace("\n", " ").split(",") if item.strip()}
    expected = {{"set-bp": "break", "clear-bp": "clear"}.get(s.name, s.name) for s in COMMANDS}
    assert words == expected


def _console_script() -> str | None:
    beside = Path(sys.executable).parent / ("unotest.exe" if os.name == "nt" else "unotest")
    if beside.is_file():
        return str(beside)
    return shutil.which("unotest")


@pytest.mark.parametrize(
    "args",
    [
        ["--version"],
        ["check"],
        ["check", "--json"],
        ["list", "--json"],
        ["bogus"],
        ["check", "missing.js"],
    ],
)
def test_python_m_matches_console_script(tmp_path: Path, args: list[str]) -> None:
    script = _console_script()
    if script is None:
        pytest.skip("the unotest console script is not installed")
    write(
        tmp_path,
        {
            "unotest/e2e/a.test.js": scenario("a"),
            "unotest/e2e/b.test.js": scenario("b").replace('goto("/")', "click()"),
        },
    )
    by_module = run(tmp_path, *args)
    by_script = run(tmp_path, *args, command=[script])
    assert by_module == by_script


def test_a_file_gone_since_it_was_listed_says_so(tmp_path: Path) -> None:
    """A reload of a scenario deleted meanwhile said "not a regular file"."""
    from runner.project.index import read_source

    text, problem = read_source(tmp_path / "gone.test.js", "unotest/e2e/gone.test.js", "scenario")
    assert text is None and problem is not None
    assert (problem.file, problem.line, problem.col, problem.message) == (
        "unotest/e2e/gone.test.js",
        1,
        0,
        "the file is gone",
    )
    fifo = tmp_path / "fifo.test.js"
    os.mkfifo(fifo)
    _, problem = read_source(fifo, "unotest/e2e/fifo.test.js", "scenario")
    assert problem is not None and problem.message == "not a regular file, so not a scenario"


def test_a_scenario_linked_from_outside_is_named_where_the_link_is(tmp_path: Path) -> None:
    """Its problems named the link by its absolute path (the viewer's /api/problems
    too), where every other path is project-relative. Such a link is read no more (the
    viewer and MCP refuse to open it): the warning names it where the link is."""
    from runner.project.index import ProjectIndex
    from runner.project.root import Project

    outside = tmp_path / "elsewhere.js"
    outside.write_text("not a scenario\n")
    root = tmp_path / "p"
    (root / "unotest" / "e2e").mkdir(parents=True)
    (root / "unotest" / "e2e" / "linked.test.js").symlink_to(outside)
    index = ProjectIndex.load(Project(root))
    assert index.errors == [] and index.scenarios == {}
    assert index.warnings == [
        "unotest/e2e/linked.test.js: ignored: a symbolic link that leads out of unotest/e2e/ "
        "(copy the file here instead)"
    ]
