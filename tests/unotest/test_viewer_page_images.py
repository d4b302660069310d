"""The viewer shows the page (real Chromium, found by role and name): the image at a pause,
Pick target on it, a target copied into Evaluate, the image full size, a new image after
an Evaluate, the page after an earlier step picked in Steps."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Page, expect
from viewer_page import browser_type_launch_args, guard_page, site_viewer, tree_item

__all__ = ["browser_type_launch_args"]

WAIT_MS = 60_000

SITE = """<!doctype html><html><head><title>Shop</title><style>body { margin: 0 }
button { position: absolute; left: 40px; top: 40px; width: 120px; height: 40px }
#out { position: absolute; left: 40px; top: 120px; margin: 0 }</style></head>
<body><button onclick="document.querySelector('#out').textContent = 'pressed'">Press</button>
<p id="out">idle</p></body></html>
"""
BODY = '  goto("/")\n  click("Press")\n  let n = 1\n  expect_text(css("#out"), "pressed")\n'
# Line 5 goto, 6 click, 7 let n, 8 expect_text (the header is lines 1-3).


def _click_at(page: Page, image_name: str, x: float, y: float) -> None:
    """Click the image where the page's CSS point (x, y) is (1280×720 viewport)."""
    image = page.get_by_role("img", name=image_name, exact=True)
    box = image.bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + x / 1280 * box["width"], box["y"] + y / 720 * box["height"])


def test_the_page_at_a_pause_pick_a_target_and_the_page_after_a_step(
    tmp_path: Path, page: Page
) -> None:
    guard = guard_page(page)
    with site_viewer(tmp_path, site={"index.html": SITE}, scenarios={"shop": BODY}) as viewer:
        at_7 = {"version": 1, "scenarios": {"shop": [{"line": 7, "col": 2}]}}
        viewer.api("PUT", "/api/breakpoints", at_7)
        page.set_viewport_size({"width": 1440, "height": 900})
        page.goto(viewer.url)
        tree_item(page, "shop").click()
        page.get_by_role("button", name="Debug").click()
        status = page.get_by_role("status", name="Run status")
        expect(status).to_contain_text("Paused at line 7:2", timeout=WAIT_MS)

        pane = page.get_by_role("region", name="Page")
        live = pane.get_by_role("img", name="Page at line 7:2", exact=True)
        expect(live).to_be_visible(timeout=WAIT_MS)
        expect(live).to_have_js_property("complete", True)
        assert live.evaluate("img => img.naturalWidth") == 1280
        # The page image is the largest thing on the paused run's screen.
        source = page.get_by_role("textbox", name="Source")
        image_box, source_box = live.bounding_box(), source.bounding_box()
        assert image_box is not None and source_box is not None
        assert image_box["width"] * image_box["height"] > 0.8 * (
            source_box["width"] * min(source_box["height"], 900)
        ), (image_box, source_box)

        # Folded away, the source has the room; shown again, the same image.
        hide = pane.get_by_role("button", name="Hide page")
        hide.click()
        expect(hide).to_have_attribute("aria-pressed", "true")
        expect(live).to_have_count(0)
        taller = source.bounding_box()
        assert taller is not None and taller["y"] < source_box["y"], (taller, source_box)
        hide.click()
        expect(live).to_be_visible()

        pick = pane.get_by_role("button", name="Pick target")
        pick.click()
        expect(pick).to_have_attribute("aria-pressed", "true")
        _click_at(page, "Page at line 7:2", 100, 60)
        picked = pane.get_by_role("textbox", name="Picked target")
        expect(picked).to_have_value('role("button", "Press")', timeout=WAIT_MS)
        _click_at(page, "Page at line 7:2", 60, 130)
        expect(picked).to_have_value('text("pressed")', timeout=WAIT_MS)
        pane.get_by_role("button", name="Copy to Evaluate").click()
        evaluate = page.get_by_role("textbox", name="Evaluate")
        expect(evaluate).to_have_value('text("pressed")')
        expect(evaluate).to_be_focused()

        # Full size on a click (not picking).
        pick.click()
        expect(pick).to_have_attribute("aria-pressed", "false")
        live.click()
        full = page.get_by_role("dialog", name="Page at line 7:2, full size")
        expect(full).to_be_visible()
        full.get_by_role("button", name="Close").click()
        expect(full).to_be_hidden()

        # An Evaluate that changes the page brings a new image of it.
        before = live.get_attribute("src")
        added = "<p style=position:absolute;left:40px;top:200px;margin:0>added</p>"
        evaluate.fill(f"evaluate(\"document.body.insertAdjacentHTML('beforeend', '{added}')\")")
        evaluate.press("Enter")
        expect(live).not_to_have_attribute("src", before or "", timeout=WAIT_MS)
        pick.click()
        _click_at(page, "Page at line 7:2", 60, 210)
        expect(picked).to_have_value('text("added")', timeout=WAIT_MS)

        # The page after an earlier step: its own image, no picking there.
        steps = page.get_by_role("region", name="Steps")
        steps.get_by_role("button", name='click("Press")').click()
        after = pane.get_by_role("img", name="Page after line 6:2", exact=True)
        expect(after).to_be_visible(timeout=WAIT_MS)
        expect(pane.get_by_role("button", name="Pick target")).to_be_disabled()

        page.get_by_role("button", name="Continue").click()
        expect(status).to_have_text("Run completed", timeout=WAIT_MS)
        expect(pane.get_by_role("img", name="Page after line 8:2", exact=True)).to_be_visible()
        guard.check()
