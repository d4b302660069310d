"""``unotest e2e PATH``: a scenario named by the path of its file, from anywhere.

Each scenario here has a syntax error, so that ``e2e`` stops (exit 2) once it has found
the project and the scenario, before any browser: what is asserted is which project and
which scenario it found, or the sentence that says why it could not.
"""

from pathlib import Path

from cli_helpers import run, write

BROKEN = '// id-broken\n// Broken\n// #4f46e5\nfunction test_it() {\n  goto("/"\n}\n'


def project(root: Path) -> Path:
    write(root, {"unotest/e2e/shop/broken.test.js": BROKEN})
    return root


def found_the_scenario(err: str) -> bool:
    """The scenario was found and loaded: ``e2e`` shows its problem and stops."""
    return (
        "unotest/e2e/shop/broken.test.js:" in err
        and "scenario 'shop/broken' cannot run" in err
        and "no unotest project found" not in err
    )


def test_an_absolute_path_finds_its_project_from_another_folder(tmp_path: Path) -> None:
    """It said "no unotest project found in <cwd>", while ``check`` of the same path
    found the project from the path."""
    root = project(tmp_path / "p")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    path = root / "unotest" / "e2e" / "shop" / "broken.test.js"
    r = run(elsewhere, "e2e", str(path))
    assert r.code == 2, r
    assert found_the_scenario(r.err), r.err


def test_a_relative_path_finds_its_project_from_above_it(tmp_path: Path) -> None:
    project(tmp_path / "p")
    r = run(tmp_path, "e2e", "p/unotest/e2e/shop/broken.test.js")
    assert r.code == 2, r
    assert found_the_scenario(r.err), r.err


def test_the_files_project_wins_over_the_working_directorys(tmp_path: Path) -> None:
    project(tmp_path / "p")
    write(tmp_path / "other", {"unotest/e2e/x.test.js": BROKEN.replace("broken", "x")})
    r = run(tmp_path / "other", "e2e", str(tmp_path / "p/unotest/e2e/shop/broken.test.js"))
    assert found_the_scenario(r.err), r.err


def test_a_relative_path_that_is_not_there_says_it_is_relative_to_the_cwd(
    tmp_path: Path,
) -> None:
    """It said "'unotest/e2e/...' is not a scenario file under unotest/e2e/" of a path
    that is one, written relative to the project instead of the working directory."""
    project(tmp_path / "p")
    r = run(tmp_path, "e2e", "unotest/e2e/shop/broken.test.js", "--root", "p")
    assert r.code == 2, r
    assert r.err == (
        f"unotest: no such file 'unotest/e2e/shop/broken.test.js' in {tmp_path} (a path is "
        "relative to the current directory); the project's scenario at that path is named "
        "'shop/broken'\n"
    )
    missing = run(tmp_path, "e2e", "nowhere/x.test.js", "--root", "p")
    assert missing.err == (
        f"unotest: no such file 'nowhere/x.test.js' in {tmp_path} (a path is relative to the "
        "current directory)\n"
    )


def test_a_file_outside_any_project_still_says_where_scenarios_are(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    loose = write(tmp_path, {"loose/a.test.js": BROKEN})
    inside = run(root, "e2e", str(loose / "loose" / "a.test.js"))
    assert inside.code == 2
    assert inside.err.endswith("is not a scenario file under unotest/e2e/\n"), inside.err
    outside = run(tmp_path / "loose", "e2e", "a.test.js")
    assert outside.code == 2
    assert outside.err.startswith(
        f"unotest: no unotest project found above 'a.test.js' nor in {tmp_path / 'loose'}"
    ), outside.err
