"""The one name for a JSON object whose shape is not pinned by a protocol type.

What the runner reads back from disk or a pipe (``steps.jsonl`` lines, ``manifest.json``,
``runtime.json``, a worker's orders and reports) is only ever checked to be an object;
its values are narrowed with ``isinstance`` where they are read. Shapes the runner
writes itself have TypedDicts of their own (:mod:`runner.protocol`,
:mod:`runner.events`, :mod:`runner.worker_messages`).
"""

from __future__ import annotations

from typing import TypeAlias

__all__ = ["JSONObject"]

JSONObject: TypeAlias = dict[str, object]
"""A parsed (or to-be-written) JSON object: string keys, values of any JSON type."""
