"""A browser and its pages for one run.

Which browser and launching or connecting to it (``launch``), Playwright's driver
started early and its compile cache (``early_driver``, ``node_cache``), where a
scenario runs and what it leaves when it fails (``lifecycle``, ``bundle``), contexts
opened ahead (``contexts_ahead``), the page's dialogs (``dialogs``), the crossing from
the interpreter's thread to the browser's loop (``bridge``) and pytest-playwright's
sync page (``sync_adapter``).

May import: the foundations, ``project`` and ``store``.
"""
