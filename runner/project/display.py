"""Whether a headed run can start on this machine: Linux needs a display (``DISPLAY`` or
``WAYLAND_DISPLAY``). Asked before a browser launches (``runner.browser.launch``), by
``unotest doctor``, and by a front end's launch before any run exists
(``runner.launch.start``), so a run that cannot show its browser is refused in one
sentence instead of recorded as failed with no step.
"""

from __future__ import annotations

import os
import sys

__all__ = ["headed_without_display"]


def _has_display() -> bool:
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


_HEADED_BY = {
    "config": ("'headless: false' in unotest.config.yaml", "set 'headless: true' there"),
    "UNOTEST_HEADED": ("UNOTEST_HEADED", "unset it"),
    "--headed": ("--headed", "leave it out"),
    "request": ("the run's 'headed' option", "start it without 'headed'"),
}


def headed_without_display(headed_by: str | None) -> str | None:
    """Why a headed run cannot start here (Linux without a display), naming what made
    it headed (:data:`runner.project.config.HeadedBy`) and how to run headless; None if it can."""
    if not sys.platform.startswith("linux") or _has_display():
        return None
    cause, undo = _HEADED_BY.get(headed_by or "", ("", ""))
    because = f" (headed because of {cause})" if cause else ""
    fix = f"{undo} to run headless" if undo else "run it headless"
    return (
        "a headed run needs a display and neither DISPLAY nor WAYLAND_DISPLAY is set"
        f"{because}: {fix}, or run under a virtual display (xvfb-run unotest ...)"
    )
