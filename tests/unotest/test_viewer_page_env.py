"""The Env page in real Chromium on a real ``unotest view`` (issue 32, defect 4): it says
plainly when ``unotest/.env`` does not exist, adds variables (their names checked, their
values masked) and creates the file by saving them, follows the file as it is created,
changed and removed on disk, and never drops unsaved edits for what changed on disk:
it says so and offers Reload from disk or Overwrite, as the source editor does.

Every test finds elements by role and accessible name and fails on any page error or
console error (``guard``).
"""

from __future__ import annotations

import stat

from playwright.sync_api import Locator, Page, expect
from viewer_page import PageGuard, Viewer, browser_type_launch_args, guard_fixture, viewer_fixture

from runner.files import atomic_write

__all__ = ["browser_type_launch_args"]  # the fixture, imported for pytest to find here

WAIT_MS = 20_000

guard = guard_fixture()
bare = viewer_fixture(site=False)  # a project without unotest/.env
greeting = viewer_fixture(site=False, env="# greetings\nGREETING=hello\n")


def _env_page(page: Page, viewer: Viewer) -> Locator:
    page.goto(viewer.url + "#open=env&active=env")
    editor = page.get_by_role("region", name="Env")
    expect(editor.get_by_role("button", name="Add variable")).to_be_visible()
    return editor


def _write(viewer: Viewer, text: str) -> None:
    """``unotest/.env`` replaced on disk, as an editor saves it."""
    atomic_write(viewer.root / "unotest" / ".env", text.encode())


def test_a_missing_env_file_is_said_so_and_adding_variables_creates_it(
    page: Page, bare: Viewer, guard: PageGuard
) -> None:
    editor = _env_page(page, bare)
    expect(editor).to_contain_text(
        "There is no unotest/.env yet. Add a variable and save: saving creates the file"
    )
    expect(editor).not_to_contain_text("no variables")
    save = editor.get_by_role("button", name="Save")
    expect(save).to_be_disabled()

    editor.get_by_role("button", name="Add variable").click()
    name = editor.get_by_role("textbox", name="Name of new variable 1")
    value = editor.get_by_label("Value of new variable 1")
    expect(value).to_have_attribute("type", "password")  # masked until revealed
    name.fill("1ST-TOKEN")
    expect(name).to_have_accessible_description(
        "A name is letters, digits and _, not starting with a digit."
    )
    expect(save).to_be_disabled()
    name.fill("API_TOKEN")
    value.fill("tok-secret-42")
    editor.get_by_role("button", name="Add variable").click()
    editor.get_by_role("textbox", name="Name of new variable 2").fill("API_TOKEN")
    expect(
        editor.get_by_role("textbox", name="Name of new variable 2")
    ).to_have_accessible_description("API_TOKEN is added twice.")
    expect(save).to_be_disabled()
    editor.get_by_role("textbox", name="Name of new variable 2").fill("GREETING")
    editor.get_by_label("Value of new variable 2").fill("hello world")
    save.click()
    expect(editor.get_by_role("status")).to_have_text("Saved.")

    env = bare.root / "unotest" / ".env"
    assert env.read_text(encoding="utf-8") == "API_TOKEN=tok-secret-42\nGREETING=hello world\n"
    assert stat.S_IMODE(env.stat().st_mode) == 0o600  # it holds secrets
    secret = editor.get_by_label("API_TOKEN", exact=True)
    expect(secret).to_have_attribute("type", "password")  # a secret's name: masked
    expect(editor.get_by_label("GREETING", exact=True)).to_have_value("hello world")
    expect(editor.get_by_role("textbox", name="Name of new variable 1")).to_have_count(0)
    expect(editor).not_to_contain_text("There is no unotest/.env")

    # Followed on disk with no edits here: changed, removed, created again.
    _write(bare, "API_TOKEN=tok-secret-42\nGREETING=changed on disk\n")
    expect(editor.get_by_label("GREETING", exact=True)).to_have_value("changed on disk")
    env.unlink()
    expect(editor).to_contain_text("There is no unotest/.env yet", timeout=WAIT_MS)
    expect(editor.get_by_label("GREETING", exact=True)).to_have_count(0)
    _write(bare, "VISITOR=friend\n")
    expect(editor.get_by_label("VISITOR", exact=True)).to_have_value("friend")
    expect(editor).not_to_contain_text("There is no unotest/.env")
    expect(editor.get_by_role("alert")).to_have_count(0)


def test_unsaved_edits_survive_a_change_on_disk_which_is_said_with_reload_and_overwrite(
    page: Page, greeting: Viewer, guard: PageGuard
) -> None:
    editor = _env_page(page, greeting)
    value = editor.get_by_label("GREETING", exact=True)
    expect(value).to_have_value("hello")
    value.fill("mine")
    _write(greeting, "# greetings\nGREETING=theirs\nADDED=1\n")
    offer = editor.get_by_role("alert")
    expect(offer).to_have_text(
        "unotest/.env changed on disk since you opened it: Reload from disk drops your "
        "edits, Overwrite saves them over it.Reload from diskOverwrite"
    )
    expect(value).to_have_value("mine")  # not clobbered
    editor.get_by_role("button", name="Overwrite").click()
    expect(editor.get_by_role("status")).to_have_text("Saved.")
    env = greeting.root / "unotest" / ".env"
    # The edit saved over the file as it is now: its other change stays.
    assert env.read_text(encoding="utf-8") == "# greetings\nGREETING=mine\nADDED=1\n"
    expect(offer).to_have_count(0)
    expect(editor.get_by_role("switch", name="ADDED")).to_have_attribute("aria-checked", "true")

    # A new variable being added counts as an edit too; Reload from disk drops it.
    editor.get_by_role("button", name="Add variable").click()
    editor.get_by_role("textbox", name="Name of new variable 1").fill("LATER")
    env.unlink()
    expect(offer).to_contain_text("unotest/.env was removed on disk since you opened it")
    editor.get_by_role("button", name="Reload from disk").click()
    expect(offer).to_have_count(0)
    expect(editor.get_by_role("status")).to_have_text("Reloaded from disk.")
    expect(editor).to_contain_text("There is no unotest/.env yet")
    expect(editor.get_by_role("textbox", name="Name of new variable 1")).to_have_count(0)


def test_env_saves_carry_the_version_they_were_made_on(greeting: Viewer) -> None:
    """``PUT /api/env`` with ``baseVersion``: the version read, or 409 with the one on
    disk now; ``added`` appends new keys and refuses a bad or taken name (400)."""
    read = greeting.api("GET", "/api/env")
    assert (read["exists"], len(read["fileVersion"])) == (True, 16)
    _write(greeting, "# greetings\nGREETING=hello\nOTHER=x\n")
    stale = {"version": 1, "values": {"GREETING": "hi"}, "baseVersion": read["fileVersion"]}
    refused = greeting.api("PUT", "/api/env", stale)
    now = greeting.api("GET", "/api/env")["fileVersion"]
    assert refused == {
        "error": "unotest/.env changed on disk since you opened it",
        "fileVersion": now,
    }
    fresh = {**stale, "baseVersion": now, "added": [{"key": "NEW_ONE", "value": "a b$c"}]}
    saved = greeting.api("PUT", "/api/env", fresh)
    assert saved["fileVersion"] != now and saved["exists"] is True
    env = greeting.root / "unotest" / ".env"
    assert env.read_text(encoding="utf-8") == (
        "# greetings\nGREETING=hi\nOTHER=x\nNEW_ONE='a b$c'\n"
    )
    for key, said in (("OTHER", "OTHER is already in unotest/.env"), ("A-B", "'A-B' cannot")):
        body = {"version": 1, "values": {}, "added": [{"key": key, "value": "1"}]}
        assert said in greeting.api("PUT", "/api/env", body)["error"]
