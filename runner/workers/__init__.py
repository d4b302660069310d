"""Worker processes: one browser each, scenario after scenario in fresh contexts.

The process's entry and its loop (``main``, ``worker``), its orders and reports
(``orders``, ``messages``), and the one host that spawns, feeds and reaps workers
for collections and ``unotest watch`` (``host``).

May import: the foundations, ``project``, ``store``, ``browser`` and ``run``.
"""
