"""The browser built-ins of the language, bound to one Playwright page.

The name → built-in table and the actions, queries and waits (``table``), locators
and smart targets (``locators``), every call on the page (``page_calls``), the
retrying ``expect_*`` (``expectations``, ``expect_checks``), ``evaluate``
(``page_eval``) and downloads (``downloads``).

May import: the foundations, ``project`` and ``browser``.
"""
