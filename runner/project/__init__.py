"""The project on disk: where it is, what it holds, how it is configured.

Its root and folders (``root``), the scenarios, helpers and collections parsed and
checked (``index``) and the cache that spares a parse (``index_cache``), the config
(``config``), ``unotest/.env`` and the secrets masked everywhere (``envfile``,
``secrets``), the files front ends edit (``editing``), ``.debugger.json``
(``breakpoints_file``) and source positions (``positions``).

May import: the foundations only (see tests/test_layering.py).
"""
