"""An ordinary pytest-playwright test beside the unotest scenarios.

``pytest --unotest`` runs both: the scenarios of ``unotest/e2e/`` as items named
after them, and this file as usual. With the plugin on (``unotest = true`` in
``pytest.ini`` here), ``base_url`` is the project's ``baseURL`` unless
``--base-url`` is given, and the site is up, started by the project's ``webServer``.
"""

from playwright.sync_api import Page, expect


def test_catalog_lists_the_teapot(page: Page) -> None:
    page.goto("/catalog.html")
    expect(page.get_by_role("heading", name="Catalog")).to_be_visible()
    expect(page.get_by_role("button", name="Add Teapot")).to_be_visible()
