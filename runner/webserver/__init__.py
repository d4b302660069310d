"""The site under test: ``webServer`` started before runs, shared, stopped after.

May import: the foundations, ``project``, ``store`` and ``browser``.
"""
