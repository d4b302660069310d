"""The page as an image (real Chromium, ``unotest e2e`` as a subprocess): at a pause (with
its aria snapshot), after an ``eval`` there, after each step that touched the page
(``pageImages.steps``), none after a step that did not; ``pick`` at a pause answers the
target for the element at a point or named in the aria snapshot.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cli_runs import Run, launch
from events import answer_to, append_command, is_kind, read_events, wait_for_event
from net import serve_directory
from sites import config_yaml, write_project

__all__ = ["launch"]

PAGE = """<!doctype html><html><head><title>Images</title>
<style>body { margin: 0; font: 16px sans-serif } button { position: absolute; left: 40px;
top: 40px; width: 120px; height: 40px }</style></head>
<body><button onclick="document.querySelector('#out').textContent = 'pressed'">Press</button>
<p id="out" style="position:absolute; top: 120px; left: 40px">idle</p>
<label style="position:absolute; top: 200px; left: 40px">Email <input id="email"></label>
<span data-testid="badge" style="position:absolute; top: 260px; left: 40px">New</span>
</body></html>
"""

SCENARIO = """\
// id-images
// Page images
// #2563eb
function test_images() {
  goto("/index.html")
  let n = 1
  click("Press")
  expect_text(css("#out"), "pressed")
}
"""
# line 5 goto, 6 let n, 7 click, 8 expect_text


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("images-site")
    (folder / "index.html").write_text(PAGE)
    with serve_directory(folder, "images-site") as url:
        yield url


def _project(root: Path, site: str, steps: str) -> Path:
    config = config_yaml(site) + f"pageImages:\n  steps: {steps}\n  width: 400\n"
    return write_project(root, config, {"images": SCENARIO})


def _images(run: Run) -> list[dict[str, object]]:
    return [e for e in read_events(run.run_dir) if e["kind"] == "page:image"]


def _check_keys(image: dict[str, object]) -> None:
    """Our additive kind has no schema of 0.5.0: its keys, checked here."""
    required = {"kind", "t", "path", "after", "file", "line", "col", "viewport"}
    assert required <= set(image) <= required | {"step", "aria"}, image
    assert image["after"] in ("step", "pause", "eval")
    assert ("step" in image) == (image["after"] == "step"), image


def _jpeg(project: Path, path: object) -> bytes:
    data = (project / str(path)).read_bytes()
    assert data[:3] == b"\xff\xd8\xff", path  # a JPEG
    return data


def test_every_step_that_touched_the_page_leaves_an_image(
    tmp_path: Path, site: str, launch: Callable[..., Run]
) -> None:
    project = _project(tmp_path / "on", site, "on")
    run = launch(project, "e2e", "images")
    assert run.wait() == 0, run.stderr
    images = _images(run)
    for image in images:
        _check_keys(image)
    # goto, click and expect_text touched the page; `let n = 1` did not.
    assert [(i["after"], i["line"]) for i in images] == [("step", 5), ("step", 7), ("step", 8)]
    assert all(i["viewport"] == {"width": 1280, "height": 720} for i in images), images
    first = _jpeg(project, images[0]["path"])
    assert str(images[0]["path"]).endswith("/pages/step-0.jpeg")
    assert first != _jpeg(project, images[1]["path"])


def test_images_off_leaves_none(tmp_path: Path, site: str, launch: Callable[..., Run]) -> None:
    project = _project(tmp_path / "off", site, "off")
    run = launch(project, "e2e", "images")
    assert run.wait() == 0, run.stderr
    assert _images(run) == []
    assert not (run.run_dir / "pages").exists()


def test_a_pause_and_an_eval_leave_the_page_with_its_aria_snapshot_and_pick_answers_targets(
    tmp_path: Path, site: str, launch: Callable[..., Run]
) -> None:
    project = _project(tmp_path / "debug", site, "on-debug")
    run = launch(project, "e2e", "images", "--debug", "--break", "7:2")
    wait_for_event(run, is_kind("paused"))
    _, image = wait_for_event(run, is_kind("page:image", after="pause"))
    _check_keys(image)
    assert (image["line"], image["col"]) == (7, 2)
    assert image["viewport"] == {"width": 1280, "height": 720}
    aria = (project / str(image["aria"])).read_text()
    assert 'button "Press"' in aria
    _jpeg(project, image["path"])
    # on-debug: the steps before the pause left their images too.
    assert [i["line"] for i in _images(run) if i["after"] == "step"] == [5]

    def answer(cmd: str, **fields: object) -> dict[str, object]:
        ident = append_command(run.run_dir, cmd, **fields)
        _, event = wait_for_event(run, answer_to(ident, "eval"))  # answered by a result
        return event

    evaluated = answer("eval", expr='click("Press")')
    assert evaluated["ok"] is True, evaluated
    _, after_eval = wait_for_event(run, is_kind("page:image", after="eval"))
    assert after_eval["path"] != image["path"]

    def picked(**fields: object) -> str:
        event = answer("pick", **fields)
        assert event["kind"] == "command:result" and event["ok"] is True, (
            fields,
            event.get("error"),
        )
        return json.loads(str(event["value"]))["target"]

    assert picked(x=100, y=60) == 'role("button", "Press")'
    assert picked(x=60, y=145) == 'text("pressed")'
    assert picked(x=150, y=210) == 'label("Email")'
    assert picked(x=50, y=268) == 'testid("badge")'
    assert picked(name="Press", role="button") == 'role("button", "Press")'
    missed = answer("pick", x=1000, y=600)
    assert missed["ok"] is False and "no element" in str(missed["error"]), missed
    append_command(run.run_dir, "continue")
    assert run.wait() == 0, run.stderr
