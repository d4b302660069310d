"""``unotest init`` scaffolds a project that passes at once; ``doctor`` tells the truth."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

UNOTEST = str(Path(sys.executable).with_name("unotest"))


def _run(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [UNOTEST, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )


def test_init_scaffolds_a_project_whose_sample_passes_in_a_real_browser(tmp_path: Path) -> None:
    done = _run("init", "proj", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    project = tmp_path / "proj"
    for relative in (
        "unotest.config.yaml",
        "unotest/e2e/welcome.test.js",
        "unotest/e2e/_helpers/greeting.js",
        "unotest/e2e/_collections/smoke.yaml",
        "site/index.html",
    ):
        assert (project / relative).is_file(), relative
    assert "unotest/.runs/" in (project / ".gitignore").read_text()

    check = _run("check", cwd=project)
    assert check.returncode == 0, check.stdout + check.stderr

    run = _run("e2e", "welcome", cwd=project)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "passed  welcome" in run.stdout
    assert "Traceback" not in run.stderr


def test_init_never_overwrites_and_doctor_reports_the_project(tmp_path: Path) -> None:
    scenario = tmp_path / "unotest" / "e2e" / "welcome.test.js"
    scenario.parent.mkdir(parents=True)
    scenario.write_text("// mine\n")
    done = _run("init", cwd=tmp_path)
    assert done.returncode == 0
    assert "kept     unotest/e2e/welcome.test.js" in done.stdout
    assert scenario.read_text() == "// mine\n"

    (tmp_path / "unotest" / "e2e" / "welcome.test.js").write_text(
        '// id-welcome\n// Mine\n// #123456\nfunction test_welcome() {\n  goto("/")\n}\n'
    )
    doctor = _run("doctor", cwd=tmp_path)
    assert doctor.returncode == 0, doctor.stdout
    assert f"project: {tmp_path}" in doctor.stdout
    assert "browser:" in doctor.stdout
    assert "all good" in doctor.stdout


def test_doctor_reports_a_broken_config_as_a_problem(tmp_path: Path) -> None:
    (tmp_path / "unotest").mkdir()
    (tmp_path / "unotest.config.yaml").write_text("timeout:\n  action: fast\n")
    doctor = _run("doctor", cwd=tmp_path)
    assert doctor.returncode == 1
    assert "ERR  config:" in doctor.stdout
    assert "timeout.action" in doctor.stdout
    assert "Traceback" not in doctor.stderr


def test_doctor_with_a_root_that_is_not_there_is_a_problem(tmp_path: Path) -> None:
    """Asked about a project that does not exist, it said "all good" (exit 0); outside
    any project without --root, "none here" is still no problem."""
    doctor = _run("doctor", "--root", str(tmp_path / "nowhere"), cwd=tmp_path)
    assert doctor.returncode == 1, doctor.stdout
    assert "ERR  project: --root" in doctor.stdout and "no such directory" in doctor.stdout
    assert "all good" not in doctor.stdout
    outside = _run("doctor", cwd=tmp_path)
    assert "--   project: none here" in outside.stdout


def test_init_where_nothing_can_be_created_is_one_sentence(tmp_path: Path) -> None:
    """/proc refuses new folders: it was an internal error (FileNotFoundError)."""
    done = _run("init", "/proc/unotest-nope", cwd=tmp_path)
    assert done.returncode == 2, done
    assert done.stderr == (
        "unotest: cannot create the project in /proc/unotest-nope: No such file or directory "
        "(/proc/unotest-nope)\n"
    )
