"""The viewer in a frame of another local page, as the app under test or any local dev
server could serve it (issue 32, defect 1), in real Chromium: the logged-in viewer
(its cookie is sent, since cookies ignore ports) must not render there.

The same Chromium opens the viewer first (so it holds the cookie), then a page served
from another 127.0.0.1 port that frames the viewer's address: the frame is refused
(``X-Frame-Options: DENY`` and CSP ``frame-ancestors 'none'``), and the page holds no
trace of the viewer, while the viewer opened at the top keeps working.
"""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Page, expect
from viewer_page import (
    Viewer,
    browser_type_launch_args,
    guard_page,
    scenarios_tree,
    served_site,
    viewer_fixture,
)

__all__ = ["browser_type_launch_args"]  # the fixture, imported for pytest to find here

WAIT_MS = 20_000

viewer = viewer_fixture()


def test_a_page_of_another_port_cannot_frame_the_logged_in_viewer(
    page: Page, viewer: Viewer, tmp_path: Path
) -> None:
    guard = guard_page(page)
    page.goto(viewer.url)  # logged in: the token becomes the page's cookie
    tree = scenarios_tree(page)
    expect(tree).to_be_visible(timeout=WAIT_MS)

    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "index.html").write_text(
        f"<!doctype html><title>Foreign</title><h1>Win a prize</h1>"
        f'<iframe title="bait" src="{viewer.base}/" width="800" height="600"></iframe>',
        encoding="utf-8",
    )
    with served_site(foreign) as foreign_url:
        framing = page.context.new_page()
        refused: list[str] = []
        framing.on("console", lambda message: refused.append(message.text))
        with framing.expect_event("framenavigated", lambda f: f.parent_frame is not None):
            framing.goto(f"{foreign_url}/index.html")
        expect(framing.get_by_role("heading", name="Win a prize")).to_be_visible()
        (frame,) = [f for f in framing.frames if f.parent_frame is not None]
        # Chromium shows its own error page in the frame, never the viewer's.
        expect(framing.frame_locator("iframe").get_by_role("tree", name="Scenarios")).to_have_count(
            0
        )
        assert frame.url.startswith("chrome-error://"), frame.url
        assert any("frame-ancestors" in text or "X-Frame-Options" in text for text in refused)
        framing.close()
    expect(tree).to_be_visible()  # the viewer at the top is untouched
    guard.check()
