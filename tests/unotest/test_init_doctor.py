"""``unotest init`` scaffolds a project that passes at once; ``doctor`` tells the truth."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

UNOTEST = str(Path(sys.executable).with_name("unotest"))


def _run(
    *args: str, cwd: Path, timeout: float = 120, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [UNOTEST, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=env,
    )


def _env(drop: tuple[str, ...] = (), **extra: str) -> dict[str, str]:
    """This process's environment without ``drop`` (and the variables that change what
    doctor reports), with ``extra``."""
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in drop and name not in ("UNOTEST_HEADED", "UNOTEST_BASE_URL")
    }
    return {**env, **extra}


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


def test_init_ignores_everything_runs_write_and_says_it_updated_a_gitignore(
    tmp_path: Path,
) -> None:
    """The generated .gitignore lacked unotest/.history/ (written by every run), and an
    existing .gitignore that init appended to was reported as "created"."""
    (tmp_path / ".gitignore").write_text("node_modules/\n")
    done = _run("init", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "  updated  .gitignore" in done.stdout
    assert "created  .gitignore" not in done.stdout
    lines = (tmp_path / ".gitignore").read_text().splitlines()
    assert lines[0] == "node_modules/"
    for written_by_runs in (
        "unotest/.runs/",
        "unotest/.history/",
        "unotest/.cache/",
        ".unotest/",
        "unotest/.viewer.lock",
        "unotest/.viewer.log",
        "unotest/.daemon.json",
        "unotest/.daemon.lock",
        "unotest/.env",
        "unotest/.auth/",
    ):
        assert written_by_runs in lines, written_by_runs
    fresh = _run("init", "fresh", cwd=tmp_path)
    assert "  created  .gitignore" in fresh.stdout
    assert "unotest/.history/" in (tmp_path / "fresh" / ".gitignore").read_text()


def test_init_keeping_a_config_says_what_the_sample_needs(tmp_path: Path) -> None:
    """It said "next: unotest e2e welcome", which fails against the kept config."""
    (tmp_path / "unotest.config.yaml").write_text("baseURL: http://127.0.0.1:9/\n")
    done = _run("init", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "kept     unotest.config.yaml" in done.stdout
    assert "next:" not in done.stdout
    assert "the existing unotest.config.yaml was kept" in done.stdout
    assert "--directory site" in done.stdout and "then: unotest e2e welcome" in done.stdout
    assert (tmp_path / "unotest.config.yaml").read_text() == "baseURL: http://127.0.0.1:9/\n"


def test_doctor_warns_of_a_misnamed_config_and_does_not_say_all_good(tmp_path: Path) -> None:
    """A unotest.config.yml was ignored: doctor said "config: defaults", "all good"."""
    (tmp_path / "unotest").mkdir()
    (tmp_path / "unotest.config.yml").write_text("baseURL: http://localhost:3000\n")
    doctor = _run("doctor", cwd=tmp_path, env=_env())
    assert (
        "  !    unotest.config.yml is ignored: the configuration file is unotest.config.yaml "
        "(rename it)"
    ) in doctor.stdout
    assert "all good" not in doctor.stdout
    assert "no problems, 1 warning (see above)" in doctor.stdout


def test_doctor_shows_the_env_file_warnings_a_run_would(tmp_path: Path) -> None:
    (tmp_path / "unotest").mkdir()
    (tmp_path / "unotest" / ".env").write_text("GOOD=1\nNO_VALUE\nnot a line at all = x\n")
    doctor = _run("doctor", cwd=tmp_path, env=_env())
    assert "  !    unotest/.env:2: 'NO_VALUE' has no '=value'; ignored" in doctor.stdout
    assert "  !    unotest/.env:3: not a NAME=value line; ignored" in doctor.stdout
    assert "all good" not in doctor.stdout


@pytest.mark.parametrize(
    ("config", "env", "says"),
    [
        ("headless: false\n", {}, "'headless: false' in unotest.config.yaml"),
        ("", {"UNOTEST_HEADED": "1"}, "UNOTEST_HEADED"),
    ],
)
def test_doctor_fails_a_headed_config_without_a_display(
    tmp_path: Path, config: str, env: dict[str, str], says: str
) -> None:
    (tmp_path / "unotest").mkdir()
    if config:
        (tmp_path / "unotest.config.yaml").write_text(config)
    doctor = _run("doctor", cwd=tmp_path, env={**_env(("DISPLAY", "WAYLAND_DISPLAY")), **env})
    assert doctor.returncode == 1, doctor.stdout
    assert (
        "ERR  browser: a headed run needs a display and neither DISPLAY nor WAYLAND_DISPLAY "
        f"is set (headed because of {says})"
    ) in doctor.stdout
    assert "all good" not in doctor.stdout
    with_display = _run("doctor", cwd=tmp_path, env={**_env(DISPLAY=":99"), **env})
    assert "needs a display" not in with_display.stdout


def test_doctor_fails_a_ws_endpoint_where_nothing_answers(tmp_path: Path) -> None:
    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    (tmp_path / "unotest").mkdir()
    (tmp_path / "unotest.config.yaml").write_text(f"wsEndpoint: ws://127.0.0.1:{port}/pw\n")
    doctor = _run("doctor", cwd=tmp_path, env=_env())
    assert doctor.returncode == 1, doctor.stdout
    line = next(line for line in doctor.stdout.splitlines() if "wsEndpoint" in line)
    assert line.startswith("  ERR  browser: chromium from the Playwright server at ws://127"), line
    assert f"nothing answers at 127.0.0.1:{port}" in line and "run-server" in line, line


def test_doctor_fails_a_web_server_command_that_is_not_there(tmp_path: Path) -> None:
    (tmp_path / "unotest").mkdir()
    (tmp_path / "unotest.config.yaml").write_text(
        "webServer:\n  command: no-such-server-xyz --port 1\n  url: http://127.0.0.1:9/\n"
    )
    doctor = _run("doctor", cwd=tmp_path, env=_env())
    assert doctor.returncode == 1, doctor.stdout
    assert (
        "  ERR  webServer: 'no-such-server-xyz' (the start of its command) is not found on "
        "PATH: install what it runs, or fix webServer.command (or cwd) in unotest.config.yaml"
    ) in doctor.stdout
    (tmp_path / "unotest.config.yaml").write_text(
        "webServer:\n  command: cd . && no-such-server-xyz\n  url: http://127.0.0.1:9/\n"
    )
    shell = _run("doctor", cwd=tmp_path, env=_env())
    assert "webServer: cd . && no-such-server-xyz" in shell.stdout
    assert "not found on PATH" not in shell.stdout
