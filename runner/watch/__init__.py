"""``unotest watch``: saves in, batches of affected scenarios on warm workers, events out.

May import: the foundations, ``project``, ``store``, ``webserver``, ``run`` and
``workers``.
"""
