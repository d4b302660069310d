"""The one table of what a front end may ask a run for: how many workers, how many
retries. The viewer and the MCP server check against it (through
:class:`runner.launch.request.LaunchRequest`), and the runner adapter builds no argv
outside it.
"""

from __future__ import annotations

from runner.errors import UsageError
from runner.project.config import MAX_RETRIES

__all__ = ["LIMITS", "check_limit"]

LIMITS: dict[str, tuple[int, int]] = {
    "workers": (1, 64),
    "retries": (0, MAX_RETRIES),
}
"""The smallest and largest value of each number a front end may ask for: more workers
than 64 is a typo, not a plan; more retries than the config allows is refused as the
config refuses it."""


def check_limit(name: str, value: object) -> int:
    """``value`` as a whole number within ``LIMITS[name]``; else one sentence."""
    low, high = LIMITS[name]
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise UsageError(f"{name} must be a whole number from {low} to {high}")
    return value
